package notify

import (
	"context"
	"math"
	"sync"
	"time"
)

// Pacer paces the requests to one rate-limited endpoint — a Slack channel,
// a PagerDuty routing key — once it has refused one (429): before any 429
// nothing is paced; after one, requests take turns one interval apart, none
// before the Retry-After, until pacedFor has passed without a 429. Each
// request honouring only its own Retry-After, every one waiting on the
// endpoint retried at once: hundreds of requests a second against an
// endpoint that takes one or two, a storm of 429s that (where refused
// requests count against the limit) never lets the throttle clear. Each
// replica paces alone, and two at the endpoint's rate are twice over it (a
// review: a key throttled for good with two replicas): a 429 while paced
// doubles the interval, at most once a quarter of pacedFor and up to
// maxSlowdown times the base; each quarter of pacedFor without one halves
// it back (a second review: doubling once an interval up to 16 times, and
// halving once a minute, sent a fifth of what PagerDuty allowed for four
// minutes after its throttle cleared). Pacing ends pacedFor after the last
// 429. Safe for concurrent use.
type Pacer struct {
	base, pacedFor time.Duration

	mu       sync.Mutex
	interval time.Duration // now: base, or doubled by 429s while paced
	next     time.Time     // the next request's turn
	limited  time.Time     // the endpoint's last 429
	eased    time.Time     // the last change of interval
}

// maxSlowdown bounds how far 429s while paced stretch the interval: four
// replicas at four times the base send the endpoint's rate.
const maxSlowdown = 4

// MaxRetryAfter bounds the wait a 429's Retry-After imposes: one of a day
// (a gateway's, a date read wrong) held every page to that routing key or
// channel for a day, until a restart (an audit). Past it the endpoint is
// tried again, and its next 429 says how long to wait anew: at most one
// request a minute while it keeps refusing. Slack's and PagerDuty's own
// waits are seconds.
const MaxRetryAfter = time.Minute

// Interval is the time between two paced requests now.
func (p *Pacer) Interval() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.interval
}

// ease halves the interval for each quarter of pacedFor without a 429
// since its last change, down to the base, and reports whether requests
// are still paced at now.
func (p *Pacer) ease(now time.Time) bool {
	if p.limited.IsZero() {
		return false
	}
	step := p.pacedFor / 4
	for p.interval > p.base && now.Sub(p.eased) > step && now.Sub(p.limited) > step {
		p.interval /= 2
		p.eased = p.eased.Add(step)
		if l := p.limited.Add(step); l.After(p.eased) {
			p.eased = l
		}
	}
	p.interval = max(p.interval, p.base)
	return now.Sub(p.limited) <= p.pacedFor
}

// Turn takes the next request's turn at now and returns how long to wait
// for it; ok is false, and nothing taken, when that is longer than max.
func (p *Pacer) Turn(now time.Time, max time.Duration) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ease(now) {
		return 0, true
	}
	at := p.next
	if at.Before(now) {
		at = now
	}
	if wait = at.Sub(now); wait > max {
		return wait, false
	}
	p.next = at.Add(p.interval)
	return wait, true
}

// TurnWithin is how long a request waits for its turn at p, and whether
// it may: kept, the turn a 429 of its own kept for its retry (Limit), when
// set, else the next turn (Turn) — at most reach away for the next, and
// either at most half of what is left of ctx. limit is the bound the wait
// was held to; nothing is taken when ok is false. A kept turn is bounded
// too: each concurrent 429 pushes the turns further, and waiting them out
// held Slack posts until their webhook's deadline (a review: 7 of 8 held
// 25 s, answered "context deadline exceeded").
func (p *Pacer) TurnWithin(ctx context.Context, kept time.Time, reach time.Duration) (wait, limit time.Duration, ok bool) {
	half := time.Duration(math.MaxInt64)
	if dl, has := ctx.Deadline(); has {
		half = time.Until(dl) / 2
	}
	if !kept.IsZero() {
		wait = time.Until(kept)
		return wait, half, wait <= half
	}
	limit = min(reach, half)
	wait, ok = p.Turn(time.Now(), limit)
	return wait, limit, ok
}

// Limit records the endpoint's 429 at now, asking to wait retryAfter (none
// given: one interval), and returns the turn of the request it refused:
// its retry keeps its place, the first after the wait.
func (p *Pacer) Limit(now time.Time, retryAfter time.Duration) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.ease(now):
		p.interval, p.eased = p.base, now
	case p.interval < maxSlowdown*p.base && now.Sub(p.eased) >= p.pacedFor/4:
		// At most once a quarter of pacedFor: the 429s of requests sent
		// before the pace took hold, and those of a window the endpoint
		// counts as full whatever is sent now, are one.
		p.interval, p.eased = 2*p.interval, now
	}
	p.limited = now
	if retryAfter <= 0 {
		retryAfter = p.interval
	}
	retryAfter = min(retryAfter, MaxRetryAfter)
	at := now.Add(retryAfter)
	if p.next.After(at) {
		at = p.next
	}
	p.next = at.Add(p.interval)
	return at
}

// Pacers holds one Pacer per endpoint key, all with the same interval and
// pacedFor, shared by every notifier of the process (across reloads: a
// reloaded notifier keeps its endpoint's pace). Keys are rendered — a
// Slack channel from a template ('#{{ .CommonLabels.namespace }}'), the
// ids Slack answers — and one pacer per value ever posted to was kept for
// the process's life (an audit: 100,000 channels, 28.6 MB). A pacer not
// pacing (no 429 within pacedFor) holds nothing a new one would not: once
// pacersSize keys are held, those are forgotten, and the next sweep waits
// until the map has doubled (a review: forgetting by recency alone dropped
// pacers still pacing, and split a channel's name from its id).
type Pacers struct {
	interval, pacedFor time.Duration

	mu      sync.Mutex
	m       map[string]*Pacer
	sweepAt int // the size at which the next sweep runs
}

// pacersSize is how many keys Pacers holds before it forgets those not
// pacing.
const pacersSize = 4096

// NewPacers returns pacers of requests interval apart, for pacedFor after
// an endpoint's last 429.
func NewPacers(interval, pacedFor time.Duration) *Pacers {
	return &Pacers{interval: interval, pacedFor: pacedFor, m: map[string]*Pacer{}, sweepAt: pacersSize}
}

// Of returns key's pacer.
func (ps *Pacers) Of(key string) *Pacer {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p, ok := ps.m[key]; ok {
		return p
	}
	ps.sweep(time.Now())
	p := &Pacer{base: ps.interval, interval: ps.interval, pacedFor: ps.pacedFor}
	ps.m[key] = p
	return p
}

// Alias makes p the pacer of key too, unless key has one already that is
// pacing (one that is not may have been made again for key after p's key
// was forgotten: the two are one endpoint, paced together).
func (ps *Pacers) Alias(key string, p *Pacer) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if old, ok := ps.m[key]; ok && (old == p || old.pacing(time.Now())) {
		return
	}
	ps.sweep(time.Now())
	ps.m[key] = p
}

// sweep forgets the pacers not pacing once the map holds sweepAt keys.
// Called with ps.mu held.
func (ps *Pacers) sweep(now time.Time) {
	if len(ps.m) < ps.sweepAt {
		return
	}
	for k, p := range ps.m {
		if !p.pacing(now) {
			delete(ps.m, k)
		}
	}
	ps.sweepAt = max(pacersSize, 2*len(ps.m))
}

// pacing reports whether requests are paced at now: a 429 within pacedFor.
func (p *Pacer) pacing(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.limited.IsZero() && now.Sub(p.limited) <= p.pacedFor
}
