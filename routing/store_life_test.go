package routing_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// Redis back older than the router last wrote — restored from an older
// snapshot, or failed over to a replica that had not received the last
// writes (asynchronous replication) — holds an incident open that was
// resolved since, PagerDuty's included: a new alert joining it was an
// update PagerDuty is told nothing of, unpaged until retrigger_interval
// after the incident's last trigger. The readiness probe notices Redis'
// new run (dedup.StoreLife); within retrigger_interval of it, the first
// new alert joining an incident triggered before it triggers PagerDuty
// again (folded while PagerDuty's incident is open), once.
func TestAStoreBackOlderRetriggersTheIncidentsItHoldsOpen(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	e := redisEnv(t, []string{srv.Addr()}, false)
	if err := dedup.MarkEpoch(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now().Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	s := newStandIns(t)
	var life time.Time
	p := retriggering(e, s, 5*time.Minute)
	p.StoreLife = func() time.Time { return life }
	if l, err := dedup.StoreLife(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now().Add(-time.Hour)); err != nil || l.IsZero() {
		t.Fatalf("StoreLife = %v, %v; want the run's start recorded", l, err)
	} else {
		life = l
	}

	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	state := store.IncidentKey("test:", ttftIncident, "pagerduty/pagerduty/0")
	dumps := map[string]string{}
	for _, k := range []string{state, state + ":m"} {
		d, err := redistest.Do(srv.Addr(), "DUMP", k)
		if err != nil || d == "" {
			t.Fatalf("DUMP %s = %q, %v", k, d, err)
		}
		dumps[k] = d
	}
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Fatalf("PagerDuty resolves = %d, want the incident resolved", got)
	}
	// Redis comes back with the incident as it was before the resolve,
	// in a new run.
	for k, d := range dumps {
		if _, err := redistest.Do(srv.Addr(), "RESTORE", k, "0", d, "REPLACE"); err != nil {
			t.Fatalf("RESTORE %s: %v", k, err)
		}
	}
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	l, err := dedup.StoreLife(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now())
	if err != nil || !l.Equal(e.clock.Now().Truncate(time.Millisecond)) {
		t.Fatalf("StoreLife after Redis' restart = %v, %v; want now (a new run)", l, err)
	}
	life = l

	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d after a new alert joined the incident Redis brought back open, want 2 (the opening, and this alert paging again)", got)
	}
	// A minute into the new run (the test's clock; Redis' own keeps the
	// trigger times): the incident was triggered in it.
	e.clock.Advance(time.Minute)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "c"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d after another new alert, want still 2: the incident was triggered in Redis' new run", got)
	}
}

// ReadStoreLife tells a lost record of the run (the life key deleted or
// evicted while Redis ran on: the same run_id) from a restart (a new one).
func TestStoreLifeTellsALostRecordFromARestart(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	first, err := dedup.ReadStoreLife(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now())
	if err != nil || first.Run == "" {
		t.Fatalf("ReadStoreLife = %+v, %v; want the run read", first, err)
	}
	if _, err := redistest.Do(srv.Addr(), "DEL", dedup.LifeKey(e.dedup.KeyPrefix)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	lost, err := dedup.ReadStoreLife(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now())
	if err != nil || lost.Run != first.Run || lost.Began.Equal(first.Began) {
		t.Fatalf("after the life key was deleted: %+v, %v; want a new beginning in the same run %q", lost, err, first.Run)
	}
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted, err := dedup.ReadStoreLife(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now())
	if err != nil || restarted.Run == "" || restarted.Run == first.Run {
		t.Fatalf("after Redis restarted: %+v, %v; want another run than %q", restarted, err, first.Run)
	}
}
