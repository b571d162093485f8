package routing_test

import (
	"net/url"
	"testing"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies"
)

// An always-firing heartbeat (vector(1)) is decided none and sent nowhere,
// but its arrival is the proof that Alertmanager's webhooks reach the
// router: alertrouter_heartbeat_last_received_timestamp_seconds says when
// the last one came (AlertrouterHeartbeatMissing fires when they stop).
// Other alerts, and the heartbeat's resolve, do not move it.
func TestAHeartbeatIsRecordedNotSent(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	dec, err := policies.New(policies.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p.Decider = dec
	const gauge = "alertrouter_heartbeat_last_received_timestamp_seconds"
	if got := metric(t, e.reg, gauge, ""); got != 0 {
		t.Fatalf("%s = %v before any heartbeat, want 0", gauge, got)
	}
	other := tAlert("TTFTHigh", "firing", "", "severity", "critical")
	mustProcess(t, p, other)
	if got := metric(t, e.reg, gauge, ""); got != 0 {
		t.Errorf("%s = %v after an ordinary page, want 0", gauge, got)
	}
	hb := webhooktest.MkAlert("firing", map[string]string{"alertname": "DeadManSnitch", "severity": "critical", "namespace": "monitoring"},
		map[string]string{"summary": "always firing"}, "vector(1)", webhooktest.Start)
	if u, _ := url.Parse(hb.GeneratorURL); u.Query().Get("g0.expr") != "vector(1)" {
		t.Fatalf("generatorURL %q does not carry the expression", hb.GeneratorURL)
	}
	pages, tickets := len(e.pd.notifications()), len(e.slack.notifications())
	sum := mustProcess(t, p, hb)
	if got := metric(t, e.reg, gauge, ""); got != float64(receivedAt.Unix()) {
		t.Errorf("%s = %v after a heartbeat, want the webhook's time %d", gauge, got, receivedAt.Unix())
	}
	if len(e.pd.notifications()) != pages || len(e.slack.notifications()) != tickets || sum.Notified != 0 || sum.NoAction != 1 {
		t.Errorf("the heartbeat was sent (summary %+v): want it decided none, sent nowhere", sum)
	}
}
