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
// every (alert, receiver, integration) of the payload and returns the
// transitions still to send, as dedup.Transition decides.
func (p *Pipeline) pending(ctx context.Context, results []*alert.Result, sum *alert.Summary) ([]*transition, error) {
	var trs []*transition
	var keys []string
	var every []target // built once, for the resolves of this payload
	for _, r := range results {
		switch {
		case r.SuppressedBy != "":
			continue
		case r.Alert.Firing() && r.Decision.Action == alert.ActionNone:
			sum.NoAction++
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
			t := &transition{res: r, receiver: tg.receiver, integ: tg.integ, incident: r.Incident, tier: tier,
				marker: store.Key(p.Dedup.KeyPrefix, "n", r.Alert.Fingerprint, tg.receiver+"/"+tg.integ.Name+":"+start)}
			trs = append(trs, t)
			keys = append(keys, t.marker)
		}
	}
	if len(trs) == 0 {
		return nil, nil
	}
	values, found, err := p.Store.Get(ctx, keys)
	storeDown := err != nil
	if storeDown {
		if err := p.storeFailed(ctx, "read notified transitions", err, sum); err != nil {
			return nil, err
		}
		values, found = make([]string, len(keys)), make([]bool, len(keys))
	}
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
