package store

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// IncidentRef reads the Ref an incident keeps (what Slack's Acknowledge
// and Resolve send by: the PagerDuty key its trigger went to), on the
// memory store and on Redis alike; "" for an incident the store does not
// hold.
func TestIncidentRefReadsTheKeptRef(t *testing.T) {
	r := startRedis(t)
	for name, s := range map[string]interface {
		Incidents
		IncidentRefReader
	}{"memory": NewMemory(), "redis": r} {
		t.Run(name, func(t *testing.T) {
			key := IncidentKey("t:", "svc/chat/TTFT", "pd/pagerduty/0")
			if ref, err := s.IncidentRef(t.Context(), key); err != nil || ref != "" {
				t.Fatalf("an unknown incident's Ref: %q, %v; want none", ref, err)
			}
			op := IncidentOp{Key: key, Token: "tok", Members: []Member{{Fingerprint: "aaa", StartsAt: "1000"}}, Lease: time.Minute, TTL: time.Hour}
			for _, step := range []IncidentStep{StepJoin, StepOpened} {
				op.Step, op.Ref = step, "pd:0123456789abcdef"
				if _, err := s.Incidents(t.Context(), []IncidentOp{op}); err != nil {
					t.Fatal(err)
				}
			}
			if ref, err := s.IncidentRef(t.Context(), key); err != nil || ref != "pd:0123456789abcdef" {
				t.Fatalf("the opened incident's Ref: %q, %v", ref, err)
			}
		})
	}
}

// startRedis is a Redis store on a redis-server of its own, closed with t.
func startRedis(t *testing.T) *Redis {
	t.Helper()
	cfg := DefaultRedisConfig()
	cfg.Addrs = []string{redistest.Start(t).Addr()}
	r, err := NewRedis(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}
