package redistest_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

func TestServerAnswersUntilKilledAndAgainAfterRestart(t *testing.T) {
	s := redistest.Start(t)
	if _, err := redistest.Do(s.Addr(), "SET", "k", "v"); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := redistest.Do(s.Addr(), "GET", "k"); err != nil || got != "v" {
		t.Fatalf("GET = %q, %v; want v", got, err)
	}
	s.Kill()
	if _, err := redistest.Do(s.Addr(), "PING"); err == nil {
		t.Fatal("PING succeeded on a killed server")
	}
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if got, err := redistest.Do(s.Addr(), "PING"); err != nil || got != "PONG" {
		t.Fatalf("PING after restart = %q, %v", got, err)
	}
	if got, _ := redistest.Do(s.Addr(), "GET", "k"); got != "" {
		t.Fatalf("GET after restart = %q; want nothing, persistence is off", got)
	}
}

func TestServerAcceptsExtraArguments(t *testing.T) {
	s := redistest.Start(t, "--requirepass", "pw")
	if _, err := redistest.Do(s.Addr(), "GET", "k"); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Fatalf("GET without AUTH: err = %v; want NOAUTH", err)
	}
}

func TestClusterServesAllSlotsOnEveryNode(t *testing.T) {
	c := redistest.StartCluster(t)
	if len(c.Addrs()) != 3 {
		t.Fatalf("Addrs() = %v; want 3 masters", c.Addrs())
	}
	for _, addr := range c.Addrs() {
		info, err := redistest.Do(addr, "CLUSTER", "INFO")
		if err != nil {
			t.Fatalf("CLUSTER INFO on %s: %v", addr, err)
		}
		if !strings.Contains(info, "cluster_slots_assigned:16384") {
			t.Errorf("node %s: not all slots assigned:\n%s", addr, info)
		}
	}
}
