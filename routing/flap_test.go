package routing_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// countingStore counts the round trips of a store by method.
type countingStore struct {
	store.Store
	mu    sync.Mutex
	calls map[string]int
}

func (s *countingStore) count(m string) {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[m]++
	s.mu.Unlock()
}

func (s *countingStore) Get(ctx context.Context, keys []string) ([]string, []bool, error) {
	s.count("Get")
	return s.Store.Get(ctx, keys)
}

func (s *countingStore) Set(ctx context.Context, entries []store.Entry) error {
	s.count("Set")
	return s.Store.Set(ctx, entries)
}

func (s *countingStore) SetNX(ctx context.Context, entries []store.Entry) ([]bool, error) {
	s.count("SetNX")
	return s.Store.SetNX(ctx, entries)
}

func (s *countingStore) DeleteIfEqual(ctx context.Context, entries []store.Entry) error {
	s.count("DeleteIfEqual")
	return s.Store.DeleteIfEqual(ctx, entries)
}

func (s *countingStore) AddMembers(ctx context.Context, key string, ttl time.Duration, members ...string) error {
	s.count("AddMembers")
	return s.Store.AddMembers(ctx, key, ttl, members...)
}

func (s *countingStore) Incidents(ctx context.Context, ops []store.IncidentOp) ([]store.IncidentResult, error) {
	s.count("Incidents")
	return s.Store.Incidents(ctx, ops)
}

// Write is one round trip (on Redis, a store.Writer).
func (s *countingStore) Write(ctx context.Context, w store.Writes) store.WriteErrors {
	s.count("Write")
	return store.Write(ctx, s.Store, w)
}

func (s *countingStore) reset() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// flapStep is one webhook about the flapping alert, at minute min after
// the test's start: a firing (a new startsAt) or the resolve of the
// firing before it.
type flapStep struct {
	min    float64
	firing bool
	// want: the receiver its firing goes to ("pagerduty" for a page,
	// "slack" for a ticket); for a resolve, the receiver of its firing.
	want string
}

// runFlap drives one TTFT page-tier alert through steps on e's pipeline
// with the default flap damping, and checks where each transition went.
func runFlap(t *testing.T, e *env, steps []flapStep) {
	t.Helper()
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	t0 := e.clock.Now()
	var start time.Time
	for i, s := range steps {
		at := t0.Add(time.Duration(s.min * float64(time.Minute)))
		e.clock.Advance(at.Sub(e.clock.Now()))
		status := "resolved"
		if s.firing {
			status, start = "firing", at
		}
		a := tAlert("TTFTHigh", status, "page")
		a.StartsAt = start.Format(time.RFC3339Nano)
		if !s.firing {
			a.EndsAt = at.Format(time.RFC3339Nano)
		}
		pdBefore, slackBefore := len(e.pd.notifications()), len(e.slack.notifications())
		mustProcess(t, p, a)
		pd, sl := e.pd.notifications()[pdBefore:], e.slack.notifications()[slackBefore:]
		var got []string
		for _, n := range pd {
			got = append(got, "pagerduty "+string(n.Kind))
		}
		for _, n := range sl {
			got = append(got, "slack "+string(n.Kind))
		}
		kind := "resolved"
		if s.firing {
			kind = "firing"
		}
		if len(got) != 1 || got[0] != s.want+" "+kind {
			t.Fatalf("step %d (%v min, %s): sent %v, want [%s %s]", i, s.min, status, got, s.want, kind)
		}
		n := append(pd, sl...)[0]
		r := n.Results[0]
		if s.firing && s.want == "slack" {
			if r.Decision.Action != alert.ActionTicket || r.Flap == nil || !r.Flap.Downgraded ||
				!strings.Contains(strings.Join(r.Decision.Reasons, "; "), "flapping: ") {
				t.Fatalf("step %d: damped firing has decision %+v, flap %+v; want a ticket whose reasons say flapping", i, r.Decision, r.Flap)
			}
		}
		if s.firing && s.want == "pagerduty" && (r.Decision.Action != alert.ActionPage || r.Flap != nil) {
			t.Fatalf("step %d: page has decision %+v, flap %+v", i, r.Decision, r.Flap)
		}
	}
}

// The case: fires and resolves 5 times in 10 minutes → the first
// firing pages, every later one is a ticket (never none), every resolve is
// sent at once to where its firing went; stable for the window → pages
// again.
var flapSteps = []flapStep{
	{0, true, "pagerduty"}, {1, false, "pagerduty"},
	{2, true, "slack"}, {3, false, "slack"}, // re-fired 1m after its page resolved
	{4, true, "slack"}, {5, false, "slack"}, // 5 transitions in 1h
	{6, true, "slack"}, {7, false, "slack"},
	{8, true, "slack"}, {9, false, "slack"},
	{70, true, "pagerduty"}, // no transition for an hour: stable
}

func TestFlappingAlertPagesOnceThenTicketsUntilStable(t *testing.T) {
	runFlap(t, newEnv(t), flapSteps)
}

func TestFlappingAlertPagesOnceThenTicketsUntilStableOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	runFlap(t, redisEnv(t, []string{srv.Addr()}, false), flapSteps)
}

func TestFlapDampingSparesSlowRecurrencesAndTickets(t *testing.T) {
	t.Run("a re-fire after the cool-down pages again", func(t *testing.T) {
		runFlap(t, newEnv(t), []flapStep{
			{0, true, "pagerduty"}, {1, false, "pagerduty"},
			{12, true, "pagerduty"}, {13, false, "pagerduty"},
		})
	})
	t.Run("a repeated firing is no transition", func(t *testing.T) {
		e := newEnv(t)
		p := e.pipeline()
		cfg := flap.DefaultConfig()
		p.Flap = &cfg
		for range 6 {
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
			e.clock.Advance(time.Minute)
		}
		if n := len(e.pd.notifications()); n != 1 || len(e.slack.notifications()) != 0 {
			t.Fatalf("pagerduty got %d notifications, slack %d; want the one page", n, len(e.slack.notifications()))
		}
	})
}

// TestFlapDampingCostsNoRoundTripInTheSteadyState: the history is read
// only for alerts whose markers say something is sent, so Alertmanager
// repeating an unchanged alert costs no round trip (nor key) more than
// without damping; a change of state costs one small read and one write
// (the history).
func TestFlapDampingCostsNoRoundTripInTheSteadyState(t *testing.T) {
	run := func(damp bool) (first, repeat map[string]int) {
		e := newEnv(t)
		cs := &countingStore{Store: e.store}
		e.store = cs
		p := e.pipeline()
		if damp {
			cfg := flap.DefaultConfig()
			p.Flap = &cfg
		}
		mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
		first = cs.reset()
		e.clock.Advance(time.Minute)
		if sum := mustProcess(t, p, tAlert("TTFTHigh", "firing", "page")); sum.Deduplicated != 1 {
			t.Fatalf("repeat: summary %+v, want a dedup hit", sum)
		}
		return first, cs.reset()
	}
	first0, repeat0 := run(false)
	first, repeat := run(true)
	// A firing to notify reads its history in a second, small Get (only
	// the alerts whose markers say something is sent pay for it).
	if first["Get"] != first0["Get"]+1 || first["Set"] != first0["Set"]+1 {
		t.Errorf("first firing: %v round trips with damping, %v without; want one Get (the histories) and one Set more", first, first0)
	}
	if repeat["Get"] != repeat0["Get"] || repeat["Set"] != repeat0["Set"] || repeat["Get"] != 1 {
		t.Errorf("repeated firing: %v round trips with damping, %v without; want one Get and nothing more", repeat, repeat0)
	}
}
