package routing

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/enrich/slolive"
	"github.com/alertrouter/alertrouter/policies"
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
// return within its own timeout, and as soon as ctx ends; any error means
// "decide from the alert's labels", and the lookup itself counts and logs
// it. An error that implements LiveUnavailable says why there is no live
// context, and the notification says so. Implementations must be safe for
// concurrent use and must not modify a.
type LiveLookup interface {
	LookupLive(ctx context.Context, a *alert.Alert) (*Live, error)
}

// LiveUnavailable is implemented by the errors of a LiveLookup that say why
// an alert has no live context (slolive.LookupError): LiveUnavailable
// returns a few words for the on-call ("Prometheus timed out", "no data:
// …"), or "" when the alert had nothing to look up (the lookup knows no
// recording rules for its kind of SLO), which the notification then does
// not mention. An error that does not implement it shows as "live lookup
// failed".
type LiveUnavailable interface {
	LiveUnavailable() string
}

// LiveUnwell is implemented by the errors of a LiveLookup that tell a
// failure of Prometheus itself (PrometheusUnwell true: timed out,
// unreachable …), which every other lookup of the moment would meet, from
// one of the alert's own lookup (false: its template lacks a label, no data
// for its series), which says nothing of the next alert's. An error that
// does not implement it, or a deadline, counts as Prometheus'.
type LiveUnwell interface {
	PrometheusUnwell() bool
}

// prometheusUnwell reports whether err, a lookup's, is Prometheus' failure
// (LiveUnwell): the SLO's other alerts are not looked up after it.
func prometheusUnwell(err error) bool {
	if err == nil {
		return false // no data for this alert
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var u LiveUnwell
	if errors.As(err, &u) {
		return u.PrometheusUnwell()
	}
	return true
}

// LiveLookupFunc adapts a function to LiveLookup.
type LiveLookupFunc func(ctx context.Context, a *alert.Alert) (*Live, error)

// LookupLive calls f(ctx, a).
func (f LiveLookupFunc) LookupLive(ctx context.Context, a *alert.Alert) (*Live, error) {
	return f(ctx, a)
}

// timedLive is a LiveLookup whose lookups' timeout is known (SLOLive's:
// prometheus.timeout): the live lookups of a payload then wait about that
// long all together (liveWait), however many SLOs it has.
type timedLive struct {
	LiveLookup
	timeout time.Duration
}

// defaultLiveTimeout stands for the timeout of a LiveLookup that does not
// say its own (not made by SLOLive).
const defaultLiveTimeout = 800 * time.Millisecond

// liveWait is how long, at most, a payload waits for all its live lookups
// together: one lookup's timeout and a quarter, so that a lookup that
// started at once and fails at its own timeout reports its own reason.
// Lookups not done by then are abandoned, their alerts decided from their
// labels. At most half of what is left of ctx's deadline (the webhook's):
// a prometheus.timeout as long as webhook.timeout held a page until the
// webhook was answered 503, nothing sent.
func (p *Pipeline) liveWait(ctx context.Context) time.Duration {
	t := defaultLiveTimeout
	if tl, ok := p.Live.(timedLive); ok && tl.timeout > 0 {
		t = tl.timeout
	}
	wait := t + t/4
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d)/2)
	}
	return wait
}

// LiveTier is the Tier of a decision taken from live burn rates: one name
// whatever tier the live numbers matched (the reasons say which), so that
// the transition's identity does not change as the numbers move.
const LiveTier = "live"

// ReasonLive is the reason a decision taken from live burn rates carries.
const ReasonLive = "burn rates live from Prometheus (the alert carried none)"

// maxLiveLookups bounds the SLOs looked up at once for one payload: a storm
// of many SLOs must not send Prometheus hundreds of query sets at once.
// Whatever is not looked up within the payload's wait (liveWait) is
// abandoned.
const maxLiveLookups = 16

// liveFound is what the lookup of one alert found: its live state, or why
// there is none ("" when there was nothing to look up).
type liveFound struct {
	live   *Live
	reason string
}

// Reasons of alerts whose live state is unavailable that the pipeline
// itself gives, not the lookup.
const (
	reasonLiveFailed   = "live lookup failed"
	reasonLivePanicked = "live lookup failed (a bug, logged)"
)

// applyLive looks up the live state of every firing alert with an SLO
// identity — one goroutine per SLO, at most maxLiveLookups at once, the
// alerts of one SLO in turn (the lookup answers them from its cache) — and
// re-decides with it. All the lookups of a payload share one deadline,
// liveWait (about one lookup's timeout), whatever the payload's size: a
// lookup not done by then is abandoned. It never fails: an alert whose
// lookup fails, times out or is abandoned keeps its label decision, and
// its notification says that its live context is unavailable, and why
// (liveUnavailable).
func (p *Pipeline) applyLive(ctx context.Context, results []*alert.Result) {
	if p.Live == nil {
		return
	}
	var bySLO map[string][]*alert.Result
	var slos []string // in payload order: the first SLOs are looked up first
	for _, r := range results {
		if r.Decision.SLO == "" || !r.Alert.Firing() {
			continue
		}
		if bySLO == nil {
			bySLO = make(map[string][]*alert.Result)
		}
		if _, ok := bySLO[r.Decision.SLO]; !ok {
			slos = append(slos, r.Decision.SLO)
		}
		bySLO[r.Decision.SLO] = append(bySLO[r.Decision.SLO], r)
	}
	if len(slos) == 0 {
		return
	}
	wait := p.liveWait(ctx)
	lctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var (
		mu     sync.Mutex
		found  = make(map[*alert.Result]liveFound)
		closed bool // past the deadline: late answers are dropped
	)
	record := func(rs []*alert.Result, f liveFound) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		for _, r := range rs {
			found[r] = f
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxLiveLookups)
	for _, slo := range slos {
		rs := bySLO[slo]
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-lctx.Done():
				return // abandoned before it started
			}
			defer func() { <-sem }()
			defer func() {
				// A lookup that panics (a bug, or a Prometheus answer
				// nobody foresaw) fails like any other: the label decision.
				if v := recover(); v != nil {
					p.Logger.Error("live SLO lookup panicked (a bug: please report it with this stack); the label decision stands",
						"slo", slo, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					if p.Metrics != nil {
						// AlertrouterPanicked reads it (an audit: no
						// alert saw this panic).
						p.Metrics.evaluatePanics.Add(float64(len(rs)))
					}
					record(rs, liveFound{reason: reasonLivePanicked})
				}
			}()
			for i, r := range rs {
				if lctx.Err() != nil {
					return // abandoned
				}
				l, err := p.Live.LookupLive(lctx, r.Alert)
				if err != nil || l == nil {
					if !prometheusUnwell(err) {
						// This alert's own failure (its template lacks
						// a label, no data for its series): the next
						// alert's lookup may succeed.
						record(rs[i:i+1], liveFound{reason: unavailableReason(err)})
						continue
					}
					// Prometheus' failure stands for the SLO: the others
					// would wait for the same unanswering Prometheus.
					record(rs[i:], liveFound{reason: unavailableReason(err)})
					return
				}
				record(rs[i:i+1], liveFound{live: l})
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-lctx.Done():
		// The lookups still running end at once (lctx); what they find
		// now is too late for this payload.
	}
	mu.Lock()
	closed = true
	mu.Unlock()
	if ctx.Err() != nil {
		return // the request ended: Process answers so, nothing is sent
	}
	now := p.decideNow()
	rerouted := false
	abandoned := 0
	for _, r := range results { // payload order: reasons are deterministic
		if r.Decision.SLO == "" || !r.Alert.Firing() {
			continue
		}
		f, ok := found[r]
		if !ok {
			abandoned++
			f.reason = fmt.Sprintf("Prometheus too slow for the %d SLOs of this webhook: not looked up within %s", len(slos), wait)
		}
		if f.live != nil {
			rerouted = p.useLive(r, f.live, now) || rerouted
		} else if f.reason != "" {
			liveUnavailable(r, f.reason)
		}
	}
	if abandoned > 0 {
		if p.Metrics != nil {
			p.Metrics.liveAbandoned.Add(float64(abandoned))
		}
		p.Logger.Warn("live SLO lookups abandoned at the webhook's deadline; those alerts are decided from their labels",
			"slos", len(slos), "alerts_abandoned", abandoned, "wait", wait)
	}
	if rerouted {
		suppressInPayload(results)
	}
}

// unavailableReason is what the notification says about the live state
// that err left out.
func unavailableReason(err error) string {
	var u LiveUnavailable
	switch {
	case errors.As(err, &u):
		return u.LiveUnavailable()
	case errors.Is(err, context.DeadlineExceeded):
		return "Prometheus timed out"
	case err == nil:
		return "no data" // a lookup that found nothing and said nothing
	}
	return reasonLiveFailed
}

// ReasonLiveUnavailable begins the reason of a decision taken without the
// live state its lookup could not read.
const ReasonLiveUnavailable = "live SLO context unavailable"

// liveUnavailable records on r that its live state could not be read, and
// why: the notification says so (Slack's "Live SLO:" line, PagerDuty's
// custom_details.live_slo.unavailable) and so do the decision's reasons.
func liveUnavailable(r *alert.Result, reason string) {
	r.Live = &alert.LiveSLO{
		Summary:     "unavailable (" + reason + ")",
		Details:     map[string]string{"unavailable": reason},
		Unavailable: reason,
	}
	r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), ReasonLiveUnavailable+" ("+reason+"): decided from the alert's labels")
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
// the routes muted now (r.MutedBy says why when every one is, and
// r.MutedReceivers whose they were), and returns the first matched route,
// whose grouping forms r's incident.
func (p *Pipeline) route(r *alert.Result) *Route {
	return p.RouteAt(r, p.decideNow())
}

// RouteAt routes r as decided, at now: nowhere when decided none; a
// resolve wherever its firing went (no time interval mutes it). It returns
// the first matched route (nil when decided none). The policy simulator
// routes the alerts it decides again with it.
func (p *Pipeline) RouteAt(r *alert.Result, now time.Time) *Route {
	r.Receivers, r.MutedBy, r.MutedReceivers = nil, "", nil
	if r.Decision.Action == alert.ActionNone {
		return nil
	}
	routes := p.Routes.MatchRoutes(r.Label)
	r.Receivers, r.MutedBy, r.MutedReceivers = Deliver(routes, now)
	if !r.Alert.Firing() {
		r.MutedBy, r.MutedReceivers = "", nil // a resolve goes wherever its firing went
	}
	if len(routes) == 0 {
		return nil
	}
	return routes[0]
}

// SLOLive is the LiveLookup of a slolive client: the live state of an
// alert's SLO, its burn rates for the policies, and whether they are below
// every one of tiers. A payload's lookups share one deadline of about the
// client's timeout (liveWait).
func SLOLive(c *slolive.Client, tiers []policies.Tier) LiveLookup {
	lookup := LiveLookupFunc(func(ctx context.Context, a *alert.Alert) (*Live, error) {
		lc, err := c.Lookup(ctx, a)
		if err != nil {
			return nil, err
		}
		l := &Live{SLO: alert.LiveSLO{Summary: lc.Summary(), Details: lc.Details()}}
		if cp, ok := lc.WithBurnRates(a); ok {
			l.WithBurnRates = cp
		}
		if below, note := lc.BelowEveryTier(tiers); below {
			l.BelowEveryTier = note
		}
		if h, ok := lc.ExemplarHint(); ok {
			l.Hint = &h
		}
		return l, nil
	})
	return timedLive{LiveLookup: lookup, timeout: c.Timeout()}
}
