package routing_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
	"github.com/redis/go-redis/v9"
)

// countingStore counts the round trips of a store by method.
type countingStore struct {
	store.Store
	mu    sync.Mutex
	calls map[string]int
	keys  int // keys read by Get since the last reset
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
	s.mu.Lock()
	s.keys += len(keys)
	s.mu.Unlock()
	return s.Store.Get(ctx, keys)
}

// SetNXAndSet is one round trip (on Redis, a store.ClaimWriter).
func (s *countingStore) SetNXAndSet(ctx context.Context, claims, also []store.Entry) ([]bool, error, error) {
	s.count("SetNX")
	return store.Claim(ctx, s.Store, claims, also)
}

// ClaimJoin is one round trip (on a single Redis node, a store.ClaimJoiner).
func (s *countingStore) ClaimJoin(ctx context.Context, claims, also []store.Entry, ops []store.ClaimedOp) store.ClaimJoinResult {
	s.count("ClaimJoin")
	return store.ClaimJoin(ctx, s.Store, claims, also, ops)
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

// reset returns the round trips by method since the last reset.
func (s *countingStore) reset() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls, s.keys = nil, 0
	return c
}

// keysRead returns the keys read by Get since the last reset.
func (s *countingStore) keysRead() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys
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
	// action is what the policies decide for it ("" is page).
	action string
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
		action := s.action
		if action == "" {
			action = "page"
		}
		a := tAlert("TTFTHigh", status, "page")
		a.Annotations["test_action"] = action
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
		if s.firing && s.want == "slack" && action == "page" {
			if r.Decision.Action != alert.ActionTicket || r.Flap == nil || !r.Flap.Downgraded ||
				!strings.Contains(strings.Join(r.Decision.Reasons, "; "), "flapping: ") {
				t.Fatalf("step %d: damped firing has decision %+v, flap %+v; want a ticket whose reasons say flapping", i, r.Decision, r.Flap)
			}
		}
		if s.firing && s.want == "pagerduty" && (r.Decision.Action != alert.ActionPage || (r.Flap != nil && r.Flap.Downgraded)) {
			t.Fatalf("step %d: page has decision %+v, flap %+v", i, r.Decision, r.Flap)
		}
	}
}

// The case: fires and resolves 5 times in 10 minutes → the first
// firing pages, every later one is a ticket (never none), every resolve is
// sent at once to where its firing went; stable for the window → pages
// again.
var flapSteps = []flapStep{
	{0, true, "pagerduty", ""}, {1, false, "pagerduty", ""},
	{2, true, "slack", ""}, {3, false, "slack", ""}, // re-fired 1m after its page resolved
	{4, true, "slack", ""}, {5, false, "slack", ""}, // 5 transitions in 1h
	{6, true, "slack", ""}, {7, false, "slack", ""},
	{8, true, "slack", ""}, {9, false, "slack", ""},
	{70, true, "pagerduty", ""}, // no transition for an hour: stable
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
			{0, true, "pagerduty", ""}, {1, false, "pagerduty", ""},
			{12, true, "pagerduty", ""}, {13, false, "pagerduty", ""},
		})
	})
	// An alert that flapped as a ticket and then reaches the page tier
	// has woken nobody: its first page is not damped (it was downgraded
	// to a ticket, and no page ever went out). The next page-tier firing
	// within the flap is.
	t.Run("the first page of an alert flapping as a ticket pages", func(t *testing.T) {
		runFlap(t, newEnv(t), []flapStep{
			{0, true, "slack", "ticket"}, {1, false, "slack", "ticket"},
			{2, true, "slack", "ticket"}, {3, false, "slack", "ticket"},
			{4, true, "slack", "ticket"}, {5, false, "slack", "ticket"},
			{6, true, "pagerduty", "page"}, {7, false, "pagerduty", "page"},
			{8, true, "slack", "page"}, {9, false, "slack", "page"},
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

// TestFlapDampingCostsNoRoundTripInTheSteadyState: a change of state reads
// its history with its markers and writes it with its claims, so damping
// costs no round trip; Alertmanager repeating an unchanged alert costs one
// key more in the read the first time this replica sees it repeated, and
// then nothing more than without damping.
func TestFlapDampingCostsNoRoundTripInTheSteadyState(t *testing.T) {
	type cost struct {
		trips map[string]int
		keys  int
	}
	run := func(damp bool) (first, repeat1, repeat2 cost) {
		e := newEnv(t)
		cs := &countingStore{Store: e.store}
		e.store = cs
		p := e.pipeline()
		if damp {
			cfg := flap.DefaultConfig()
			p.Flap = &cfg
		}
		measure := func() cost {
			k := cs.keysRead()
			return cost{cs.reset(), k}
		}
		mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
		first = measure()
		for _, repeat := range []*cost{&repeat1, &repeat2} {
			e.clock.Advance(time.Minute)
			if sum := mustProcess(t, p, tAlert("TTFTHigh", "firing", "page")); sum.Deduplicated != 1 {
				t.Fatalf("repeat: summary %+v, want a dedup hit", sum)
			}
			*repeat = measure()
		}
		return first, repeat1, repeat2
	}
	first0, repeat0, _ := run(false)
	first, repeat1, repeat2 := run(true)
	if !maps.Equal(first.trips, first0.trips) || first.keys != first0.keys+1 {
		t.Errorf("first firing: %v with damping, %v without; want the same round trips and one key (the history) more", first, first0)
	}
	if !maps.Equal(repeat1.trips, repeat0.trips) || repeat1.keys != repeat0.keys+1 {
		t.Errorf("first repeat: %v with damping, %v without; want the same round trips and one key more", repeat1, repeat0)
	}
	if !maps.Equal(repeat2.trips, repeat0.trips) || repeat2.keys != repeat0.keys || repeat0.trips["Get"] != 1 || len(repeat0.trips) != 1 {
		t.Errorf("second repeat: %v with damping, %v without; want one Get of the same keys and nothing more", repeat2, repeat0)
	}
}

// TestFlapDampingReadsWhatThePrefetchLeftOut: a reminder of an alert this
// replica last saw quiet (its history not read with the markers) reads the
// history in a second round trip and is sent; and a replica that has not
// seen the alert reads it with the markers.
func TestFlapDampingReadsWhatThePrefetchLeftOut(t *testing.T) {
	e := newEnv(t)
	cs := &countingStore{Store: e.store}
	e.store = cs
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
	e.clock.Advance(time.Minute)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page")) // a repeat: now quiet
	cs.reset()
	remind := func(p *routing.Pipeline, gets, pages int, what string) {
		t.Helper()
		e.clock.Advance(e.dedup.RepeatInterval)
		mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
		if got := cs.reset(); got["Get"] != gets {
			t.Errorf("%s: %v, want %d Get(s)", what, got, gets)
		}
		if n := len(e.pd.notifications()); n != pages {
			t.Fatalf("%s: pagerduty got %d notifications, want %d (the page and its reminders)", what, n, pages)
		}
	}
	remind(p, 2, 2, "reminder of a quiet alert (markers, then the history left out)")
	other := e.pipeline()
	other.Flap = &cfg
	remind(other, 1, 3, "reminder on a replica that never saw the alert (history read with the markers)")
}

// A page that reached no integration (PagerDuty failing throughout its
// firing) woke nobody: when the alert resolves and fires again within
// cool_down, it pages. Before, the firing's page mark, written when it was
// decided, damped the re-fire to a ticket, and PagerDuty never got a
// trigger. A page that was delivered still damps the re-fire.
//
// Both ways a page is routed: to PagerDuty alone, and — the production
// shape — to PagerDuty, which holds incidents, with Slack beside it, where
// the page's mirror was delivered: Slack's marker is no page.
func TestAnUndeliveredPageDoesNotDampTheRefire(t *testing.T) {
	for _, c := range []struct {
		delivered, mirrored bool
	}{{false, false}, {true, false}, {false, true}, {true, true}} {
		delivered := c.delivered
		e := newEnv(t)
		if c.mirrored {
			e.routes = pagesToBothRoutes
		}
		p := e.pipeline()
		if c.mirrored {
			p.Receivers["pagerduty"][0].Notifier = holdingSink{e.pd}
		}
		cfg := flap.DefaultConfig()
		p.Flap = &cfg
		if !delivered {
			e.pd.setFail(func(*alert.Notification) error { return errors.New("PagerDuty: 500") })
		}
		t0 := e.clock.Now()
		fire := func(start time.Time) {
			a := tAlert("TTFTHigh", "firing", "page")
			a.StartsAt = start.Format(time.RFC3339Nano)
			_, _ = process(t, p, a) // a failed page is answered 5xx: its error is expected
		}
		resolve := func(start, end time.Time) {
			a := tAlert("TTFTHigh", "resolved", "page")
			a.StartsAt, a.EndsAt = start.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano)
			_, _ = process(t, p, a)
		}
		fire(t0)
		e.clock.Advance(time.Minute)
		resolve(t0, e.clock.Now())
		e.pd.setFail(nil) // PagerDuty is back
		e.clock.Advance(time.Minute)
		refire := e.clock.Now()
		before := len(e.pd.notifications())
		fire(refire)
		var pages int
		for _, n := range e.pd.notifications()[before:] {
			if n.Kind == alert.KindFiring {
				pages++
			}
		}
		if delivered && pages != 0 {
			t.Errorf("%+v: the first page delivered: the re-fire within cool_down paged %d times, want 0 (damped to a ticket)", c, pages)
		}
		if !delivered && pages != 1 {
			t.Errorf("%+v: the first page never delivered: the re-fire within cool_down paged %d times, want 1", c, pages)
		}
	}
}

// holdingSink is a sink that holds incidents as PagerDuty does
// (alert.SilentUpdates).
type holdingSink struct{ *sink }

func (holdingSink) SilentUpdates() bool { return true }

// The resolve of a firing damping held as a ticket goes where that firing
// went, said as a ticket's: not to PagerDuty (before, it reached PagerDuty
// as the resolve of an incident never triggered by it), and not as a page
// in Slack (before, Slack's resolved message said "Decision: page").
func TestTheResolveOfADampedFiringIsATicketsResolve(t *testing.T) {
	e := newEnv(t)
	p := dampingPipeline(e)
	t0 := e.clock.Now()
	var start time.Time
	step := func(min float64, firing bool) {
		t.Helper()
		e.clock.Advance(t0.Add(time.Duration(min * float64(time.Minute))).Sub(e.clock.Now()))
		status := "resolved"
		if firing {
			status, start = "firing", e.clock.Now()
		}
		a := tAlert("TTFTHigh", status, "page")
		a.StartsAt = start.Format(time.RFC3339Nano)
		if !firing {
			a.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
		}
		mustProcess(t, p, a)
	}
	step(0, true)
	step(1, false)
	pdBefore := len(e.pd.notifications())
	step(2, true) // within cool_down of its page's resolve: a ticket
	step(3, false)
	if got := e.pd.notifications()[pdBefore:]; len(got) != 0 {
		t.Errorf("PagerDuty got %d notifications for the damped firing and its resolve (first %s), want none", len(got), got[0].Kind)
	}
	if r := slackTicketResolve(t, e); !strings.Contains(strings.Join(r.Decision.Reasons, "; "), "went out as a ticket") {
		t.Errorf("the resolve's reasons %q do not say its firing went out as a ticket", r.Decision.Reasons)
	}
}

// A firing that paged and lasted longer than the flap window (and than the
// history's own TTL, window + cool_down) still counts as the page its
// re-fire follows: re-fired within cool_down of its resolve, it is damped
// to a ticket, as a short firing's re-fire is. Before, its resolve found
// the history expired (a long firing writes nothing while Alertmanager
// repeats it) or trimmed the firing out of it, and the re-fire paged again:
// two wake-ups for one trouble. A re-fire after the cool-down still pages.
func TestALongFiringsRefireWithinCoolDownIsDamped(t *testing.T) {
	long := []flapStep{
		{0, true, "pagerduty", ""}, {180, false, "pagerduty", ""}, // 3h: past the window and the history's TTL
		{182, true, "slack", ""}, {183, false, "slack", ""}, // 2m after its page resolved: damped
	}
	later := []flapStep{
		{0, true, "pagerduty", ""}, {180, false, "pagerduty", ""},
		{195, true, "pagerduty", ""}, // 15m after: past the cool-down, a new page
	}
	t.Run("memory", func(t *testing.T) { runFlap(t, newEnv(t), long) })
	t.Run("memory, after the cool-down", func(t *testing.T) { runFlap(t, newEnv(t), later) })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		runFlap(t, redisEnv(t, []string{srv.Addr()}, false), long)
	})
}

// Two replicas whose clocks disagree by minutes (a broken NTP) damp a
// flapping alert as replicas in step do. Before, the replica behind took
// every alert time in its future for its own now: a re-fire it handled
// read as earlier than the resolve the other replica recorded (that
// resolve withdrawn as Alertmanager's own), so the re-fire paged again.
func TestFlapDampingHoldsAcrossReplicasWhoseClocksDisagree(t *testing.T) {
	for _, behind := range []time.Duration{2 * time.Minute, 10 * time.Minute} {
		t.Run(behind.String(), func(t *testing.T) {
			e := newEnv(t)
			cfg := flap.DefaultConfig()
			inStep, late := e.pipeline(), e.pipeline()
			inStep.Flap, late.Flap = &cfg, &cfg
			late.Now = func() time.Time { return e.clock.Now().Add(-behind) }
			start := e.clock.Now()
			send := func(p *routing.Pipeline, status string) {
				t.Helper()
				a := tAlert("TTFTHigh", status, "page")
				a.StartsAt = start.Format(time.RFC3339Nano)
				if status == "resolved" {
					a.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
				}
				mustProcess(t, p, a)
			}
			send(inStep, "firing") // pages
			e.clock.Advance(5 * time.Second)
			send(inStep, "resolved")
			e.clock.Advance(5 * time.Second)
			start = e.clock.Now()
			before := len(e.pd.notifications())
			send(late, "firing") // 5s after its page resolved: damped
			if got := e.pd.notifications()[before:]; len(got) != 0 {
				t.Fatalf("the re-fire on the replica %s behind sent PagerDuty %d notifications (%s), want none: damped to a ticket", behind, len(got), got[0].Kind)
			}
		})
	}
}

// Alertmanager resolves an alert whose resends from Prometheus stop (a
// Prometheus restart or outage longer than four resend delays: a long WAL
// replay), and Prometheus fires it again with a new start when it is back
// (its start is not kept across a restart, whatever
// --rules.alert.for-grace-period). The re-fire, within cool_down of the
// page's resolve, was held as a ticket for a whole window: the trouble went
// on with its page resolved in PagerDuty (an audit). A re-fire still firing
// cool_down after it started pages at the webhook after (Alertmanager's
// next repeat); before that, repeats stay the ticket they were.
func TestARefireStillFiringAfterTheCoolDownPages(t *testing.T) {
	for name, mk := range map[string]func(t *testing.T) *env{
		"memory": newEnv,
		"redis":  func(t *testing.T) *env { return redisEnv(t, []string{redistest.Start(t).Addr()}, false) },
	} {
		t.Run(name, func(t *testing.T) {
			e := mk(t)
			p := e.pipeline()
			cfg := flap.DefaultConfig()
			p.Flap = &cfg
			t0 := e.clock.Now()
			send := func(min float64, status string, startMin float64) (pd, slack []string) {
				t.Helper()
				e.clock.Advance(t0.Add(time.Duration(min * float64(time.Minute))).Sub(e.clock.Now()))
				a := tAlert("TTFTHigh", status, "page")
				a.StartsAt = t0.Add(time.Duration(startMin * float64(time.Minute))).Format(time.RFC3339Nano)
				if status == "resolved" {
					a.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
				}
				pdBefore, slackBefore := len(e.pd.notifications()), len(e.slack.notifications())
				mustProcess(t, p, a)
				for _, n := range e.pd.notifications()[pdBefore:] {
					pd = append(pd, string(n.Kind))
				}
				for _, n := range e.slack.notifications()[slackBefore:] {
					slack = append(slack, string(n.Kind)+" "+string(n.Action))
				}
				return pd, slack
			}
			if pd, _ := send(0, "firing", 0); len(pd) != 1 {
				t.Fatalf("the first firing sent PagerDuty %v, want its page", pd)
			}
			send(5, "resolved", 0) // Alertmanager timed it out: Prometheus is down
			pd, slack := send(7, "firing", 7)
			if len(pd) != 0 || len(slack) != 1 || slack[0] != "firing ticket" {
				t.Fatalf("the re-fire 2m after its page resolved sent PagerDuty %v, Slack %v; want a ticket (within cool_down)", pd, slack)
			}
			if pd, _ := send(12, "firing", 7); len(pd) != 0 {
				t.Fatalf("a repeat 5m into the re-fire sent PagerDuty %v, want nothing (still within cool_down)", pd)
			}
			pdBefore := len(e.pd.notifications())
			pd, _ = send(18, "firing", 7)
			if len(pd) != 1 || pd[0] != string(alert.KindFiring) {
				t.Fatalf("a repeat 11m into the re-fire sent PagerDuty %v, want its page: a trouble that goes on", pd)
			}
			if why := strings.Join(e.pd.notifications()[pdBefore].Results[0].Decision.Reasons, "; "); !strings.Contains(why, "fired again 2m0s after its page resolved, at ") || !strings.Contains(why, "has fired since, for 11m0s (past cool_down 10m0s): a trouble that goes on") || strings.Contains(why, "stable since") {
				t.Errorf("the late page's reasons %q do not say why it pages now", why)
			}
			if pd, _ := send(28, "firing", 7); len(pd) != 0 {
				t.Fatalf("the next repeat sent PagerDuty %v, want nothing more", pd)
			}
		})
	}
}

// A flap record a later build wrote, with a field this build does not
// know, is read for what this build knows: the re-fire of an alert whose
// page resolved a minute ago is damped as the history says. Before, the
// unknown field made the whole record unreadable — the history started
// afresh and the re-fire paged again, on every replica of the older build
// during a rolling upgrade or a rollback (an audit).
func TestAFlapRecordWithAFieldOfALaterBuildKeepsItsHistory(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	runFlap(t, e, []flapStep{{0, true, "pagerduty", ""}, {1, false, "pagerduty", ""}})

	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "test:flap:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("flap keys %v (%v), want one", keys, err)
	}
	rec, err := c.Get(ctx, keys[0]).Result()
	if err != nil || !strings.Contains(rec, ";p") {
		t.Fatalf("flap record %q (%v), want a page mark", rec, err)
	}
	if err := c.Set(ctx, keys[0], rec+";x17;qsome-text", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	runFlap(t, e, []flapStep{{1, true, "slack", ""}}) // 2m after the page's resolve: damped
}

// Sloth's page alert moves between its windows — `(5m and 1h) or
// ignoring(sloth_window) (30m and 6h)` keeps the label of the branch that
// matches, so as the burn rate crosses between the tiers Prometheus
// resolves the alert under sloth_window="5m" and fires it under "30m" in
// the same evaluation, and back. Damping judged the 5m alert's return a
// re-fire within cool_down and held it as a ticket: the 30m alert left the
// incident in the same webhook, PagerDuty's page was resolved while the
// SLO burned, and the outage went on as tickets for the cool-down (an
// audit, 10 minutes). A firing that takes over its incident's open page
// from an alert resolving in the same webhook keeps paging.
func TestAPageHandedOverBetweenWindowsStaysOpen(t *testing.T) {
	e, p, window := slothWindows(t)
	mustProcess(t, p, window("5m", "firing"))
	e.clock.Advance(20 * time.Second)
	mustProcess(t, p, window("5m", "resolved"), window("30m", "firing"))
	e.clock.Advance(20 * time.Second)
	mustProcess(t, p, window("30m", "resolved"), window("5m", "firing"))
	var triggers, resolves int
	for _, n := range e.pd.notifications() {
		switch {
		case n.Kind == alert.KindFiring && n.Opening:
			triggers++
		case n.IncidentResolved:
			resolves++
		}
	}
	if triggers != 1 || resolves != 0 {
		t.Fatalf("PagerDuty got %d triggers and %d incident resolves while the SLO's page alert fired throughout; want the one trigger, no resolve", triggers, resolves)
	}
	e.clock.Advance(20 * time.Second)
	mustProcess(t, p, window("5m", "resolved"))
	resolves = 0
	for _, n := range e.pd.notifications() {
		if n.IncidentResolved {
			resolves++
		}
	}
	if resolves != 1 {
		t.Errorf("PagerDuty got %d incident resolves once no window fires, want 1", resolves)
	}
}

// A resolve sent again (Alertmanager's retry, an HA pair's copy) hands
// nothing over: its page closed with the first copy, and a firing of the
// same incident within cool_down of its own paged resolve is damped as
// before. The hand-over took the repeated resolve for an open page and
// triggered PagerDuty again (a review).
func TestARepeatedResolveHandsNoPageOver(t *testing.T) {
	e, p, window := slothWindows(t)
	step := func(alerts ...webhooktest.Alert) {
		t.Helper()
		e.clock.Advance(2 * time.Second)
		mustProcess(t, p, alerts...)
	}
	step(window("30m", "firing"))
	step(window("30m", "resolved"))
	step(window("5m", "firing"))
	fiveResolved := window("5m", "resolved")
	step(fiveResolved)
	step(fiveResolved, window("30m", "firing")) // 30m within cool_down of its paged resolve; 5m's resolve again
	triggers := 0
	for _, n := range e.pd.notifications() {
		if n.Kind == alert.KindFiring && n.Opening {
			triggers++
		}
	}
	if triggers != 2 {
		t.Fatalf("PagerDuty got %d triggers; want 2 (30m's, then 5m's past 30m's resolve), the re-fire damped", triggers)
	}
}

// slothWindows is an env whose pipeline damps flapping (the default
// config), and Sloth's page alert of one SLO under sloth_window w, firing
// (started now) or resolved (ended now, started when it last fired).
func slothWindows(t *testing.T) (*env, *routing.Pipeline, func(w, status string) webhooktest.Alert) {
	e := newEnv(t)
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	starts := map[string]time.Time{}
	return e, p, func(w, status string) webhooktest.Alert {
		if status == "firing" {
			starts[w] = e.clock.Now()
		}
		a := tAlert("SLOBurn", status, "page", "slo", "checkout-availability", "sloth_window", w)
		a.StartsAt = starts[w].Format(time.RFC3339Nano)
		if status == "resolved" {
			a.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
		}
		return a
	}
}

// dampingPipeline is e's pipeline with flap damping on (its defaults) and
// a PagerDuty that holds incidents, as PagerDuty does (holdingSink).
func dampingPipeline(e *env) *routing.Pipeline {
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = holdingSink{e.pd}
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	return p
}

// slackTicketResolve is the result of the one resolve Slack got, which must
// be a ticket's.
func slackTicketResolve(t *testing.T, e *env) *alert.Result {
	t.Helper()
	var resolves []*alert.Notification
	for _, n := range e.slack.notifications() {
		if n.Kind == alert.KindResolved {
			resolves = append(resolves, n)
		}
	}
	if len(resolves) != 1 || resolves[0].Action != alert.ActionTicket {
		t.Fatalf("Slack resolves %v: want one, a ticket's", resolves)
	}
	return resolves[0].Results[0]
}
