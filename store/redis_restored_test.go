package store_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// Redis restarted from an older snapshot brings an incident back with
// members whose alerts resolved while the lost writes were made; their
// resolves will never come again, and the page stayed open for good (an
// audit: 60 such members, PagerDuty never resolved). A Leave of an incident
// whose only Alertmanager group is the Leave's, no Join of which ran since
// Redis' run began, names the members left (for the caller to ask
// Alertmanager: silenced alerts are left out of webhooks too) and changes
// nothing more. An incident a Join reached since (an HA peer's lagging
// webhook lacks the newest alert: a review saw it closed by a rule that
// did not ask), one another group joined, a Leave of no known group, and
// an incident of the current run name none.
func TestALeaveNamesTheMembersAnIncidentRestoredHolds(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	ctx := t.Context()
	step := func(key string, st store.IncidentStep, group, fp string) store.IncidentResult {
		t.Helper()
		op := store.IncidentOp{Key: key, Step: st, Token: "tok-" + string(st), Lease: time.Minute, TTL: time.Hour, Group: group,
			Members: []store.Member{{Fingerprint: fp, StartsAt: "1700000000000"}}}
		var res []store.IncidentResult
		var err error
		for range 50 { // the client reconnects after the restart
			if res, err = s.Incidents(ctx, []store.IncidentOp{op}); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		if st == store.StepJoin && res[0].Outcome == store.OutcomeOpening {
			if _, err := s.Incidents(ctx, []store.IncidentOp{{Key: key, Step: store.StepOpened, Token: op.Token, TTL: time.Hour}}); err != nil {
				t.Fatal(err)
			}
		}
		return res[0]
	}
	cases := []struct {
		name                  string
		groups                []string // joined before the restart as a, b, c
		joinAfter, leaveGroup string   // d joins after the restart in joinAfter, unless empty
		names                 bool     // the Leave names b and c restored
	}{
		{"one group, restored", []string{"g", "g", "g"}, "", "g", true},
		{"one group, a Join since", []string{"g", "g", "g"}, "g", "g", false},
		{"another group joined", []string{"g", "g", "h"}, "", "g", false},
		{"no group known", []string{"g", "g", "g"}, "", "", false},
	}
	key := func(i int) string { return store.IncidentKey("t:", "restored-"+strconv.Itoa(i), "pd/pd/0") }
	for i, c := range cases {
		for j, g := range c.groups {
			step(key(i), store.StepJoin, g, string(rune('a'+j)))
		}
	}
	time.Sleep(2100 * time.Millisecond) // the run's start is known to the second
	if _, err := redistest.Do(srv.Addr(), "SAVE"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if err := srv.Restart(); err != nil { // from the snapshot
		t.Fatal(err)
	}
	for i, c := range cases {
		if c.joinAfter != "" {
			step(key(i), store.StepJoin, c.joinAfter, "d")
		}
		r := step(key(i), store.StepLeave, c.leaveGroup, "a")
		var want []string
		if c.names {
			want = []string{"b", "c"}
		}
		slices.Sort(r.Restored)
		if r.Outcome != store.OutcomeStillOpen || len(r.Removed) != 1 || !slices.Equal(r.Restored, want) {
			t.Errorf("%s: Leave = %s, removed %v, restored %v; want still open, a removed, restored %v", c.name, r.Outcome, r.Removed, r.Restored, want)
		}
	}
	// An incident of the current run: nothing restored.
	for _, fp := range []string{"a", "b"} {
		step(key(9), store.StepJoin, "g", fp)
	}
	if r := step(key(9), store.StepLeave, "g", "a"); r.Outcome != store.OutcomeStillOpen || len(r.Restored) != 0 {
		t.Errorf("an incident of the current run: Leave = %s, restored %v; want still open, none", r.Outcome, r.Restored)
	}
}
