package routing

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Live is what a LiveLookup found about the SLO of one alert.
type Live struct {
	// SLO is what notifications show (summary and details).
	SLO alert.LiveSLO
	// WithBurnRates is a copy of the alert carrying the live burn rates as
	// burn_rate_<window> annotations, for the policies; nil when the alert
	// carries burn rates of its own (those decide) or none were read.
	WithBurnRates *alert.Alert
	// BelowEveryTier, when not empty, says with the numbers that the live
	// burn is at or below every burn-rate tier.
	BelowEveryTier string
	// Hint is the burn-exemplars hint (trace ids of bad requests); nil
	// without exemplars.
	Hint *alert.Hint
}

// LiveLookup reads the live state of an alert's SLO at decision time (the
// Prometheus client of enrich/slolive, adapted in cmd/router). It must
// return within its own timeout; any error means "decide from the alert's
// labels", and the lookup itself counts and logs it. Implementations must
// be safe for concurrent use and must not modify a.
type LiveLookup interface {
	LookupLive(ctx context.Context, a *alert.Alert) (*Live, error)
}

// LiveLookupFunc adapts a function to LiveLookup.
type LiveLookupFunc func(ctx context.Context, a *alert.Alert) (*Live, error)

// LookupLive calls f(ctx, a).
func (f LiveLookupFunc) LookupLive(ctx context.Context, a *alert.Alert) (*Live, error) {
	return f(ctx, a)
}

// LiveTier is the Tier of a decision taken from live burn rates: one name
// whatever tier the live numbers matched (the reasons say which), so that
// the transition's identity does not change as the numbers move.
const LiveTier = "live"

// ReasonLive is the reason a decision taken from live burn rates carries.
const ReasonLive = "burn rates live from Prometheus (the alert carried none)"

// maxLiveLookups bounds the SLOs looked up at once for one payload. A
// Prometheus too slow for the first ones opens the lookup's circuit
// breaker, and the others then fail at once: a payload of many SLOs still
// waits about one timeout, not one per SLO.
const maxLiveLookups = 16

// applyLive looks up the live state of every firing alert with an SLO
// identity — one goroutine per SLO, at most maxLiveLookups at once, the
// alerts of one SLO in turn (the lookup answers them from its cache), so a
// payload costs about one lookup's timeout whatever its size — and
// re-decides with it. It never
// delays a decision beyond the lookup's timeout and never fails: an alert
// whose lookup fails keeps its label decision.
func (p *Pipeline) applyLive(ctx context.Context, results []*alert.Result) {
	if p.Live == nil {
		return
	}
	bySLO := map[string][]*alert.Result{}
	for _, r := range results {
		if r.Decision.SLO != "" && r.Alert.Firing() {
			bySLO[r.Decision.SLO] = append(bySLO[r.Decision.SLO], r)
		}
	}
	if len(bySLO) == 0 {
		return
	}
	lives := make(map[*alert.Result]*Live)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxLiveLookups)
	for _, rs := range bySLO {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			defer func() {
				// A lookup that panics (a bug, or a Prometheus answer
				// nobody foresaw) fails like any other: the label decision.
				if v := recover(); v != nil {
					p.Logger.Error("live SLO lookup panicked (a bug: please report it with this stack); the label decision stands",
						"slo", rs[0].Decision.SLO, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				}
			}()
			for _, r := range rs {
				l, err := p.Live.LookupLive(ctx, r.Alert)
				if err != nil || l == nil {
					// One failure stands for the SLO: the others would
					// wait for the same unanswering Prometheus.
					return
				}
				mu.Lock()
				lives[r] = l
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	now := p.now()
	rerouted := false
	for _, r := range results { // payload order: reasons are deterministic
		if l := lives[r]; l != nil {
			rerouted = p.useLive(r, l, now) || rerouted
		}
	}
	if rerouted {
		suppressInPayload(results)
	}
}

// useLive puts l on r and re-decides r with the live burn rates when the
// alert has none of its own. Live data may raise a decision or confirm it,
// never lower it: a page decided from the labels whose live burn has fallen
// is still sent, and its reasons say so. It reports whether r's action
// changed (and r was routed again).
func (p *Pipeline) useLive(r *alert.Result, l *Live, now time.Time) bool {
	live := l.SLO
	if l.Hint != nil {
		r.Classification.Hints = append(slices.Clip(r.Classification.Hints), *l.Hint)
	}
	before := r.Decision.Action
	if l.WithBurnRates != nil {
		d := p.Decider.Decide(l.WithBurnRates, &r.Classification, now)
		liveDecided := d.Policy != r.Decision.Policy || d.Tier != r.Decision.Tier
		switch {
		case !liveDecided:
		case alert.Rank(d.Action) > alert.Rank(before):
			// The tier is part of the transition's identity: live numbers
			// move between webhooks, and a page must not be sent again
			// because the burn crossed from one page tier to another.
			d.Reasons = append(d.Reasons, ReasonLive+", tier "+d.Tier)
			d.Tier = LiveTier
			r.Decision = d
			live.Decided = true
		case alert.Rank(d.Action) == alert.Rank(before) && before != alert.ActionNone && len(d.Reasons) > 0:
			r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), "live from Prometheus, the same: "+d.Reasons[0])
		case alert.Rank(d.Action) < alert.Rank(before):
			live.Note = "live burn from Prometheus decides " + string(d.Action) + " (" + d.Policy + ", " + d.Tier +
				"); the " + string(before) + " decided from the alert's labels stands"
		}
	}
	if r.Decision.Action == alert.ActionPage && !live.Decided && l.BelowEveryTier != "" {
		live.Note = l.BelowEveryTier + "; the page decided from the alert's labels is sent all the same"
	}
	if live.Note != "" {
		r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), live.Note)
	}
	r.Live = &live
	if r.Decision.Action == before {
		return false
	}
	p.route(r)
	return true
}

// route selects r's receivers from its (possibly changed) decision, minus
// the routes muted now (r.MutedBy says why when every one is), and returns
// the group_by of the first matched route.
func (p *Pipeline) route(r *alert.Result) (groupBy []string) {
	r.Receivers, r.MutedBy = nil, ""
	if r.Decision.Action == alert.ActionNone {
		return nil
	}
	r.Receivers, groupBy, r.MutedBy = Deliver(p.Routes.MatchRoutes(r.Label), p.now())
	if !r.Alert.Firing() {
		r.MutedBy = "" // a resolve goes wherever its firing went
	}
	return groupBy
}
