package store_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// Redis restarted from an older snapshot brings an incident back with
// members whose alerts resolved while the lost writes were made; their
// resolves will never come again, and the page stayed open for good (an
// audit: 60 such members, PagerDuty never resolved). A Leave — its group
// holds no firing alert of the incident — names the members left that came
// in its group and last joined before Redis' run began (for the caller to
// ask Alertmanager: silenced alerts are left out of webhooks too) and
// changes nothing more. A member a Join reached since (an HA peer's
// lagging webhook lacks the newest alert: a review saw it closed by a rule
// that did not ask), one of another group (its alerts may fire on), a
// Leave of no known group, a member an earlier build wrote (its start
// alone) and an incident of the current run name none. The last session
// left open incidents several groups joined, or whose new episode re-joined
// them: named now, each member by its own group and join.
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
		joinAfter, leaveGroup string   // joinAfter's member joins after the restart in group leaveGroup, unless empty
		want                  []string // the members the Leave of a names restored
	}{
		{"one group, restored", []string{"g", "g", "g"}, "", "g", []string{"b", "c"}},
		{"one group, a new member joined since", []string{"g", "g", "g"}, "d", "g", []string{"b", "c"}},
		{"one group, a member joined again since", []string{"g", "g", "g"}, "b", "g", []string{"c"}},
		{"another group joined", []string{"g", "g", "h"}, "", "g", []string{"b"}},
		{"another group's Leave", []string{"g", "h", "h"}, "", "h", []string{"b", "c"}},
		{"no group known", []string{"g", "g", "g"}, "", "", nil},
		{"joined in no known group", []string{"", "", ""}, "", "g", nil},
	}
	key := func(i int) string { return store.IncidentKey("t:", "restored-"+strconv.Itoa(i), "pd/pd/0") }
	for i, c := range cases {
		for j, g := range c.groups {
			step(key(i), store.StepJoin, g, string(rune('a'+j)))
		}
	}
	step(key(10), store.StepJoin, "g", "a")
	// A member an earlier build wrote: its start alone.
	step(key(8), store.StepJoin, "g", "a")
	if _, err := redistest.Do(srv.Addr(), "HSET", key(8)+":m", "b", "1700000000000"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3100 * time.Millisecond) // past the 2 s slack and the second Redis counts its start to
	if _, err := redistest.Do(srv.Addr(), "SAVE"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if err := srv.Restart(); err != nil { // from the snapshot
		t.Fatal(err)
	}
	for i, c := range cases {
		if c.joinAfter != "" {
			step(key(i), store.StepJoin, c.leaveGroup, c.joinAfter)
		}
		r := step(key(i), store.StepLeave, c.leaveGroup, "a")
		slices.Sort(r.Restored)
		if r.Outcome != store.OutcomeStillOpen || len(r.Removed) != 1 || !slices.Equal(r.Restored, c.want) {
			t.Errorf("%s: Leave = %s, removed %v, restored %v; want still open, a removed, restored %v", c.name, r.Outcome, r.Removed, r.Restored, c.want)
		}
	}
	if r := step(key(8), store.StepLeave, "g", "a"); r.Outcome != store.OutcomeStillOpen || len(r.Restored) != 0 {
		t.Errorf("a member an earlier build wrote: Leave = %s, restored %v; want still open, none", r.Outcome, r.Restored)
	}
	// A failed closing puts its member back as it was: joined before the
	// run, in g.
	r := step(key(10), store.StepLeave, "g", "a")
	if r.Outcome != store.OutcomeClosing {
		t.Fatalf("the Leave of its only member: %s, want closing", r.Outcome)
	}
	if res, err := s.Incidents(ctx, []store.IncidentOp{{Key: key(10), Step: store.StepAbort, Token: "tok-leave", Members: r.Removed, TTL: time.Hour}}); err != nil || res[0].Outcome != store.OutcomeOK {
		t.Fatalf("abort of the closing: %v %v", res, err)
	}
	if r := step(key(10), store.StepLeave, "g", "x"); !slices.Equal(r.Restored, []string{"a"}) {
		t.Errorf("a member put back by an abort: restored %v, want [a]", r.Restored)
	}
	// An incident of the current run: nothing restored.
	for _, fp := range []string{"a", "b"} {
		step(key(9), store.StepJoin, "g", fp)
	}
	if r := step(key(9), store.StepLeave, "g", "a"); r.Outcome != store.OutcomeStillOpen || len(r.Restored) != 0 {
		t.Errorf("an incident of the current run: Leave = %s, restored %v; want still open, none", r.Outcome, r.Restored)
	}
}

// Every build reads an incident's members hash as fingerprint → start: a
// review ran the build before this one on a members hash whose values
// carried the join and group ("start;joined;group"), where its late-resolve
// guard read no start — the late resolve of an earlier episode resolved
// a live page. The join and the group live in the state hash (m:<fp>).
// A group's whole-group Leave reads the members' joins once after Redis'
// run began, and no more once none of its members joined before the run.
func TestAnIncidentsMembersKeepTheirStartAloneAndAGroupIsReadOnce(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	ctx := t.Context()
	key := store.IncidentKey("t:", "members", "pd/pd/0")
	step := func(st store.IncidentStep, group, fp string) store.IncidentResult {
		t.Helper()
		var res []store.IncidentResult
		var err error
		for range 50 { // the client reconnects after the restart
			res, err = s.Incidents(ctx, []store.IncidentOp{{Key: key, Step: st, Token: "tok", Lease: time.Minute, TTL: time.Hour, Group: group,
				Members: []store.Member{{Fingerprint: fp, StartsAt: "1700000000000"}}}})
			if err == nil {
				return res[0]
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatal(err)
		return store.IncidentResult{}
	}
	step(store.StepJoin, "g", "a")
	step(store.StepJoin, "h", "b")
	step(store.StepJoin, "g", "x")
	if v, err := redistest.Do(srv.Addr(), "HGET", key+":m", "a"); err != nil || v != "1700000000000" {
		t.Fatalf("members hash holds %q (%v) for a, want its start alone", v, err)
	}
	// The build before reads when a Join last ran (j): a review saw it
	// take members the new build had joined again for members of before
	// the run, and close an incident whose alert fired.
	if v, err := redistest.Do(srv.Addr(), "HGET", key, "j"); err != nil || v == "" {
		t.Fatalf("state hash holds j = %q (%v), want the last Join's time", v, err)
	}
	// Past the script's reading of when the run began: its 2 s slack, and
	// up to 1 s more (Redis counts its uptime from a start time in whole
	// seconds). With 2.1 s, a restart late in its second read these Joins
	// as of the new run, and nothing was read (CI, once).
	time.Sleep(3100 * time.Millisecond)
	if _, err := redistest.Do(srv.Addr(), "SAVE"); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// x joined g again through the build before, with a new start: its m:
	// field still says the start of before the run, and is not trusted.
	if _, err := redistest.Do(srv.Addr(), "HSET", key+":m", "x", "1700000099000"); err != nil {
		t.Fatal(err)
	}
	if r := step(store.StepLeave, "g", "a"); len(r.Restored) != 0 { // b of h stays: g's members read, none left
		t.Errorf("Leave of g named %v, want none: x's start is not the one its m: field wrote", r.Restored)
	}
	step(store.StepJoin, "g", "c")
	step(store.StepLeave, "g", "c")
	step(store.StepLeave, "never-joined", "y") // a group no Join recorded: nothing read
	if v, err := redistest.Do(srv.Addr(), "HEXISTS", key, "k:never-joined"); err != nil || v != "0" {
		t.Errorf("a Leave of a group that never joined wrote its k: field (%q, %v)", v, err)
	}
	stats, err := redistest.Do(srv.Addr(), "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stats, "cmdstat_hgetall:calls=1,") {
		t.Errorf("the state hash was read whole other than once: %s", grep(stats, "hgetall"))
	}
}

// grep returns the lines of s that hold sub.
func grep(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}
