package notify_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify"
)

// Each replica paces an endpoint alone: two at its rate are twice over it,
// and where refused requests count against the limit the throttle never
// cleared (a review). A 429 while paced doubles the interval — at most once
// a quarter of pacedFor (the 429s of requests sent together, or of a window
// the endpoint counts full, are one), up to four times the base —, each
// quarter of pacedFor without one halves it back (a second review: halving
// once a minute from sixteen times kept a fifth of the rate for four
// minutes), and pacing ends pacedFor after the last 429.
func TestAPacerSlowsDownWhileRefusedAndBackWhenNot(t *testing.T) {
	const base, pacedFor = 500 * time.Millisecond, time.Minute
	p := notify.NewPacers(base, pacedFor).Of("key")
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for range 5 { // a burst sent before any 429, refused together
		p.Limit(t0, 0)
	}
	p.Limit(at(5*time.Second), 0) // the same full window
	if got := p.Interval(); got != base {
		t.Fatalf("after one window's 429s: interval %v, want %v", got, base)
	}
	for d := 10 * time.Second; d <= 64*time.Second; d += 5 * time.Second { // refused on: another replica takes the rest
		p.Limit(at(d), 0)
	}
	if got := p.Interval(); got != 4*base {
		t.Fatalf("refused for a minute: interval %v, want %v (at most four times)", got, 4*base)
	}
	// Quiet from 60s: halved every quarter minute, back to the base in
	// half a minute.
	if _, ok := p.Turn(at(76*time.Second), time.Hour); !ok || p.Interval() != 2*base {
		t.Fatalf("16s quiet: paced %t, interval %v; want paced at %v", ok, p.Interval(), 2*base)
	}
	if _, ok := p.Turn(at(91*time.Second), time.Hour); !ok || p.Interval() != base {
		t.Fatalf("32s quiet: paced %t, interval %v; want paced at the base", ok, p.Interval())
	}
	// Pacing ends a minute after the last 429.
	for range 3 {
		if wait, ok := p.Turn(at(121*time.Second), 0); !ok || wait != 0 {
			t.Fatalf("61s quiet: wait %v, %t; want no pace", wait, ok)
		}
	}
}

// A request's turn is within reach and half of what is left of its time,
// a kept turn (a 429's retry) within half of that time too: each
// concurrent 429 pushes the turns further, and waiting them out held Slack
// posts until their webhook's deadline (a review), as it would PagerDuty
// events. Nothing is taken for a turn out of reach.
func TestATurnIsWithinReachAndHalfTheTimeLeft(t *testing.T) {
	p := notify.NewPacers(time.Second, time.Minute).Of("endpoint")
	now := time.Now()
	kept := p.Limit(now, 3*time.Second) // the 429's retry, 3 s on
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if _, _, ok := p.TurnWithin(ctx, kept, time.Hour); ok {
		t.Error("a kept turn 3 s away with 4 s left: ok, want refused (past half the time left)")
	}
	long, cancelLong := context.WithTimeout(context.Background(), time.Minute)
	defer cancelLong()
	if wait, _, ok := p.TurnWithin(long, kept, 0); !ok || wait <= 0 {
		t.Errorf("a kept turn 3 s away with a minute left: wait %s ok %v, want it waited for", wait, ok)
	}
	// The next turn comes after the kept one: beyond a 2 s reach.
	if wait, limit, ok := p.TurnWithin(long, time.Time{}, 2*time.Second); ok || limit != 2*time.Second || wait < 3*time.Second {
		t.Errorf("the next turn: wait %s limit %s ok %v; want refused, held to 2s, at least 3s away", wait, limit, ok)
	}
	if wait, _, ok := p.TurnWithin(long, time.Time{}, 10*time.Second); !ok || wait < 3*time.Second {
		t.Errorf("the next turn within a 10 s reach: wait %s ok %v; want taken, at least 3s away", wait, ok)
	}
}

// A 429 asking to wait a day (a gateway's Retry-After, a date read wrong)
// held every page to that endpoint for the day, until a restart (an
// audit): the wait is at most MaxRetryAfter, then the endpoint is tried.
func TestARetryAfterOfADayWaitsAMinute(t *testing.T) {
	p := notify.NewPacers(500*time.Millisecond, time.Minute).Of("key")
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	if turn := p.Limit(t0, 24*time.Hour); turn.After(t0.Add(notify.MaxRetryAfter)) {
		t.Fatalf("the refused request's turn is %v after the 429, want at most %v", turn.Sub(t0), notify.MaxRetryAfter)
	}
	if wait, ok := p.Turn(t0.Add(notify.MaxRetryAfter+time.Second), time.Hour); !ok || wait > time.Second {
		t.Fatalf("a request a minute later: wait %v (ok %t), want its turn within the pace", wait, ok)
	}
}

// Pacers forgets the endpoints not paced, not every key ever paced:
// Slack's are rendered channels (a template of a label), and one pacer per
// value ever posted to was kept for the process's life (an audit: 100,000
// channels held 28.6 MB). An endpoint paced (a 429 within pacedFor) keeps
// its pacer however many others come and go — forgetting by recency
// dropped it (a review) —, concurrent first uses of a key share one pacer,
// and an alias (a Slack channel's id) joins its name's pacer again after
// the two were forgotten apart.
func TestPacersForgetOnlyEndpointsNotPaced(t *testing.T) {
	ps := notify.NewPacers(time.Second, time.Hour)
	busy := ps.Of("busy")
	busy.Limit(time.Now(), time.Second)
	for i := range 100_000 {
		ps.Of(fmt.Sprintf("#preview-%d", i))
	}
	if ps.Of("busy") != busy {
		t.Fatal("after 100,000 other keys the paced endpoint got a new pacer: its pace lost")
	}
	if n := notify.PacersLen(ps); n > 10_000 {
		t.Fatalf("Pacers holds %d endpoints after 100,000 distinct keys; want a bounded number", n)
	}
	var wg sync.WaitGroup
	got := make([]*notify.Pacer, 8)
	for i := range got {
		wg.Go(func() { got[i] = ps.Of("new") })
	}
	wg.Wait()
	for _, p := range got {
		if p != got[0] {
			t.Fatal("concurrent first uses of one key got different pacers")
		}
	}
	// A channel's id made a pacer of its own (a reply) while its name's
	// was forgotten: the name's next parent aliases the id to its pacer.
	byID := ps.Of("C123")
	byName := ps.Of("#alerts")
	ps.Alias("C123", byName)
	if ps.Of("C123") != byName || byID == byName {
		t.Error("Alias did not join an id's unpaced pacer to its name's")
	}
	// An id paced already keeps its pacer.
	paced := ps.Of("C456")
	paced.Limit(time.Now(), time.Second)
	ps.Alias("C456", ps.Of("#other"))
	if ps.Of("C456") != paced {
		t.Error("Alias replaced a pacer that is pacing")
	}
}
