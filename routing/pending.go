package routing

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// transition is one alert's change for one integration of one receiver
// that needs sending.
type transition struct {
	res      *alert.Result
	receiver string
	integ    *Integration
	incident string // the incident notified: the firing's, for a resolve
	tier     string // dedup.Tier of the alert's decision, part of its identity
	kind     alert.Kind
	marker   string // key remembering what was notified
	claim    string // key claimed while sending
	won      bool
	// held: this sender holds the claim in the store (false when it
	// delivers without one: fail open, or a duplicate of the payload).
	held bool
}

// record notes the transition's outcome on its alert's result.
func (t *transition) record(outcome string, err error, latency time.Duration) {
	d := alert.Delivery{Receiver: t.receiver, Integration: t.integ.Name, Kind: t.kind, Outcome: outcome, Latency: latency}
	if err != nil {
		d.Error, d.Retryable = err.Error(), alert.Retryable(err)
	}
	t.res.Deliveries = append(t.res.Deliveries, d)
}

// target is one (receiver, integration) an alert may be notified to.
type target struct {
	receiver string
	integ    *Integration
}

// pending reads, in one store round trip, what was already notified for
// every (alert, receiver, integration) of the payload — and, with flap
// damping on, the alerts' transition histories — and returns the
// transitions still to send, as dedup.Transition decides. An alert that
// flap damping downgrades is routed again and its new targets' markers
// read in a second round trip (only flapping alerts cost it).
func (p *Pipeline) pending(ctx context.Context, results []*alert.Result, sum *alert.Summary) ([]*transition, error) {
	trs := p.candidates(results, sum)
	if len(trs) == 0 {
		return nil, nil
	}
	states := p.flapStates(results)
	keys := make([]string, 0, len(trs)+len(states))
	for _, t := range trs {
		keys = append(keys, t.marker)
	}
	for _, st := range states {
		keys = append(keys, st.key)
	}
	values, found, err := p.Store.Get(ctx, keys)
	storeDown := err != nil
	if storeDown {
		if err := p.storeFailed(ctx, "read notified transitions", err, sum); err != nil {
			return nil, err
		}
		values, found = make([]string, len(keys)), make([]bool, len(keys))
	}
	n := len(trs)
	if !storeDown && len(states) > 0 {
		if rerouted := p.damp(ctx, states, values[n:], found[n:]); len(rerouted) > 0 {
			trs, values, found, err = p.reroute(ctx, rerouted, trs, values[:n], found[:n], sum)
			if err != nil {
				return nil, err
			}
		}
	}
	values, found = values[:len(trs)], found[:len(trs)]
	now := p.now()
	out := trs[:0]
	notified := map[*alert.Result]bool{}
	claims := make(map[string]bool, len(trs))
	routed := map[*alert.Result][]string{} // fail open: where each resolve would go
	for i, t := range trs {
		var m dedup.Marker
		if found[i] {
			m = dedup.ParseMarker(values[i])
		}
		step := dedup.Transition(dedup.Input{Found: found[i], Marker: m, StoreDown: storeDown, Firing: t.res.Alert.Firing(),
			Tier: t.tier, StartsAt: t.res.Alert.IdentityStart(), Now: now, RepeatInterval: p.Dedup.RepeatInterval})
		switch step.Verdict {
		case dedup.Ignore:
			continue
		case dedup.Skip:
			notified[t.res] = true
			p.countDedup(dedupHit, sum)
			continue
		case dedup.SendIfRouted:
			// Whether the firing was notified is unknown: the resolve goes
			// where the route tree sends the alert (a resolve of an unknown
			// incident is the duplicate we risk).
			recvs, ok := routed[t.res]
			if !ok {
				recvs = p.Routes.Match(t.res.Label)
				routed[t.res] = recvs
			}
			if !slices.Contains(recvs, t.receiver) {
				continue
			}
		}
		t.kind = step.Kind
		if step.Incident != "" {
			t.incident = step.Incident
		}
		t.claim = t.marker + ":" + t.res.Alert.Status + ":" + t.tier + step.ClaimSuffix
		notified[t.res] = true
		if claims[t.claim] {
			// The same alert twice in one payload: one claim, one send.
			p.countDedup(dedupHit, sum)
			continue
		}
		claims[t.claim] = true
		out = append(out, t)
	}
	for _, r := range results {
		if !r.Alert.Firing() && !notified[r] && r.SuppressedBy == "" {
			p.countDedup(dedupUnseen, nil)
		}
	}
	return out, nil
}

// candidates returns a transition per (alert, receiver, integration) that
// may need sending, its marker key set, and counts the firing alerts
// decided none.
func (p *Pipeline) candidates(results []*alert.Result, sum *alert.Summary) []*transition {
	var trs []*transition
	var every []target // built once, for the resolves of this payload
	for _, r := range results {
		switch {
		case r.SuppressedBy != "" || r.MutedBy != "":
			continue
		case r.Alert.Firing() && r.Decision.Action == alert.ActionNone:
			if sum != nil {
				sum.NoAction++
			}
			continue
		}
		var targets []target
		if r.Alert.Firing() {
			targets = p.targets(r.Receivers)
		} else {
			// A resolve goes wherever its firing went, whatever the
			// (possibly different) decision on the resolved alert.
			if every == nil {
				every = p.targets(p.receiverNames())
			}
			targets = every
		}
		start := strconv.FormatInt(r.Alert.IdentityStart().UnixMilli(), 10)
		tier := dedup.Tier(&r.Decision)
		for _, tg := range targets {
			// Keyed by fingerprint (its hash tag), not by incident: what was
			// notified for an alert is found whatever it is grouped into now.
			trs = append(trs, &transition{res: r, receiver: tg.receiver, integ: tg.integ, incident: r.Incident, tier: tier,
				marker: store.Key(p.Dedup.KeyPrefix, "n", r.Alert.Fingerprint, tg.receiver+"/"+tg.integ.Name+":"+start)})
		}
	}
	return trs
}

// reroute replaces the transitions of the re-decided alerts by those of
// their new routes, whose markers it reads in one round trip.
func (p *Pipeline) reroute(ctx context.Context, rerouted []*alert.Result, trs []*transition, values []string, found []bool, sum *alert.Summary) ([]*transition, []string, []bool, error) {
	gone := make(map[*alert.Result]bool, len(rerouted))
	for _, r := range rerouted {
		gone[r] = true
	}
	var keepT []*transition
	var keepV []string
	var keepF []bool
	for i, t := range trs {
		if !gone[t.res] {
			keepT, keepV, keepF = append(keepT, t), append(keepV, values[i]), append(keepF, found[i])
		}
	}
	more := p.candidates(rerouted, nil)
	if len(more) == 0 {
		return keepT, keepV, keepF, nil
	}
	keys := make([]string, len(more))
	for i, t := range more {
		keys[i] = t.marker
	}
	v, f, err := p.Store.Get(ctx, keys)
	if err != nil {
		if err := p.storeFailed(ctx, "read notified transitions", err, sum); err != nil {
			return nil, nil, nil, err
		}
		v, f = make([]string, len(keys)), make([]bool, len(keys))
	}
	return append(keepT, more...), append(keepV, v...), append(keepF, f...), nil
}

func (p *Pipeline) targets(receivers []string) []target {
	var out []target
	for _, name := range receivers {
		integs := p.Receivers[name]
		if len(integs) == 0 {
			// A receiver with no integration still gets its transitions, so
			// that the failure is reported rather than silently dropped.
			out = append(out, target{receiver: name, integ: &Integration{Name: "none"}})
			continue
		}
		for i := range integs {
			out = append(out, target{receiver: name, integ: &integs[i]})
		}
	}
	return out
}

func (p *Pipeline) receiverNames() []string {
	out := make([]string, 0, len(p.Receivers))
	for name := range p.Receivers {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func (p *Pipeline) countDedup(result string, sum *alert.Summary) {
	if p.Metrics != nil {
		p.Metrics.dedup.WithLabelValues(result).Inc()
	}
	if sum != nil && result == dedupHit {
		sum.Deduplicated++
	}
}
