package store_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// Redis restored from an older snapshot brings an incident back with
// members whose alerts resolved while the lost writes were made; their
// resolves will never come again, and the page stayed open for good (an
// audit: 60 such members, PagerDuty never resolved). A Leave of an incident
// a later run holds (its Life differs from the incident's) whose only
// Alertmanager group is the Leave's closes it whatever members remain; one
// of the incident's own run, or of an incident other groups joined, does
// not.
func TestALeaveOfARestoredIncidentClosesItWithTheMembersItsGroupLost(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	ctx := t.Context()
	step := func(key string, st store.IncidentStep, life int64, group string, fps ...string) store.IncidentResult {
		t.Helper()
		op := store.IncidentOp{Key: key, Step: st, Token: "tok-" + string(st), Lease: time.Minute, TTL: time.Hour, Life: life, Group: group}
		for _, fp := range fps {
			op.Members = append(op.Members, store.Member{Fingerprint: fp, StartsAt: "1700000000000"})
		}
		res, err := s.Incidents(ctx, []store.IncidentOp{op})
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
		name         string
		groups       []string // the Joins' groups, one member each
		joinLife     int64
		leaveLife    int64
		leaveGroup   string
		closes       bool
		wantDropped  int
		wantRemained int64
	}{
		{"a later run, the only group", []string{"g", "g", "g"}, 1, 2, "g", true, 2, 0},
		{"the same run (an HA peer's lagging webhook)", []string{"g", "g", "g"}, 1, 1, "g", false, 0, 2},
		{"a later run, another group joined", []string{"g", "g", "h"}, 1, 2, "g", false, 0, 2},
		{"a later run, no group known", []string{"g", "g", "g"}, 1, 2, "", false, 0, 2},
		{"no run known", []string{"g", "g", "g"}, 1, 0, "g", false, 0, 2},
		{"a replica that has not noticed the new run", []string{"g", "g", "g"}, 2, 1, "g", false, 0, 2},
		{"an incident an earlier build wrote (no run recorded)", []string{"g", "g", "g"}, 0, 2, "g", false, 0, 2},
	}
	for i, c := range cases {
		key := store.IncidentKey("t:", "restored-"+string(rune('a'+i)), "pd/pd/0")
		for j, g := range c.groups {
			step(key, store.StepJoin, c.joinLife, g, string(rune('a'+j)))
		}
		r := step(key, store.StepLeave, c.leaveLife, c.leaveGroup, "a")
		if got := r.Outcome == store.OutcomeClosing; got != c.closes || r.Dropped != c.wantDropped || r.Remaining != c.wantRemained {
			t.Errorf("%s: Leave = %s, dropped %d, remaining %d; want closing %t, dropped %d, remaining %d",
				c.name, r.Outcome, r.Dropped, r.Remaining, c.closes, c.wantDropped, c.wantRemained)
		}
		if c.closes && len(r.Removed) != 3 {
			t.Errorf("%s: Removed %v, want all three members (an Abort puts them back)", c.name, r.Removed)
		}
	}
}
