package routing_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
	"github.com/redis/go-redis/v9"
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
	srv, e, s, p, lifeOf := lifeEnv(t)

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
	*lifeOf = l

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

// An alert that resolved, whose resolve Redis lost (back from an older
// snapshot), and fired again: its flap history in the store still ends
// with the first firing, so the new firing's later start was taken for
// that firing under another start (earlierFirings) and sent nowhere,
// answered 200 (RESTORE audit F1). A history written before the store's
// current run began proves nothing of the firings since: the later start
// is a new episode, paged.
func TestAFiringAfterAResolveTheStoreLostPagesAgain(t *testing.T) {
	srv, e, s, p, lifeOf := lifeEnv(t)
	cfg := flap.DefaultConfig() // flap damping on, as by default: the history is kept
	p.Flap = &cfg

	first := tAlert("TTFTHigh", "firing", "page", "instance", "a")
	first.StartsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, first)
	// In the same run, a copy under a later start (an HA Prometheus pair's,
	// held first by a restarted Alertmanager) is the same firing.
	copied := first
	copied.StartsAt = e.clock.Now().Add(30 * time.Second).Format(time.RFC3339Nano)
	mustProcess(t, p, copied)
	if got := s.pd.Triggers(ttftIncident); got != 1 {
		t.Fatalf("PagerDuty triggers = %d after a later-start copy of the firing, want 1", got)
	}
	// The snapshot: every key as it was while the alert fired.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	keys, err := c.Keys(t.Context(), "test:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	dumps := map[string]string{}
	for _, k := range keys {
		d, err := c.Dump(t.Context(), k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		dumps[k] = d
	}
	if !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, "test:flap:") }) {
		t.Fatalf("snapshot keys %v; want the alert's flap history among them", keys)
	}
	e.clock.Advance(10 * time.Minute)
	resolved := first
	resolved.Status = "resolved"
	resolved.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Fatalf("PagerDuty resolves = %d, want the incident resolved", got)
	}
	// Redis comes back from the snapshot, in a new run.
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	for k, d := range dumps {
		if err := c.RestoreReplace(t.Context(), k, 0, d).Err(); err != nil {
			t.Fatalf("RESTORE %s: %v", k, err)
		}
	}
	e.clock.Advance(time.Minute)
	if *lifeOf, err = dedup.StoreLife(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now()); err != nil || lifeOf.IsZero() {
		t.Fatalf("StoreLife after Redis' restart = %v, %v", *lifeOf, err)
	}

	// The alert fires again: a new episode, its later start.
	e.clock.Advance(time.Minute)
	again := tAlert("TTFTHigh", "firing", "page", "instance", "a")
	again.StartsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, again)
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d after the alert fired again, want 2: its resolve was lost with the store's newest writes, and the new firing paged nobody", got)
	}
	// Alertmanager repeats it: the same firing, not paged again.
	mustProcess(t, p, again)
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d after Alertmanager repeated the new firing, want still 2", got)
	}
}

// lifeEnv is a Redis (AOF always: a restart keeps every write) whose state
// began a day ago, a replica p at the stand-ins s retriggering every
// 5 minutes, and Redis' run recorded an hour ago (dedup.StoreLife): p's
// StoreLife returns *lifeOf, which a test sets at a restart.
func lifeEnv(t *testing.T) (srv *redistest.Server, e *env, s *standIns, p *routing.Pipeline, lifeOf *time.Time) {
	t.Helper()
	srv = redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	e = redisEnv(t, []string{srv.Addr()}, false)
	if err := dedup.MarkEpoch(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now().Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	s = newStandIns(t)
	p = retriggering(e, s, 5*time.Minute)
	lifeOf = new(time.Time)
	p.StoreLife = func() time.Time { return *lifeOf }
	l, err := dedup.StoreLife(t.Context(), e.store, e.dedup.KeyPrefix, e.clock.Now().Add(-time.Hour))
	if err != nil || l.IsZero() {
		t.Fatalf("StoreLife = %v, %v; want the run's start recorded", l, err)
	}
	*lifeOf = l
	return srv, e, s, p, lifeOf
}
