package routing

import (
	"context"
	"log/slog"
	"strings"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// sloPagesKey is the set of an SLO's page-tier alerts notified firing.
func (p *Pipeline) sloPagesKey(slo string) string {
	return store.Key(p.Dedup.KeyPrefix, "slo", slo, "pages")
}

// suppressAcrossPayloads suppresses ticket-tier alerts of SLOs for which
// another payload's page-tier alert fires (recorded when that page was
// notified, see sloPageWrites). It reads the store only for SLOs with a
// firing ticket not already suppressed in-payload. A store failure never
// suppresses: a duplicate beats a lost ticket. It returns an error only
// when the request was cancelled.
func (p *Pipeline) suppressAcrossPayloads(ctx context.Context, results []*alert.Result, sum *alert.Summary) error {
	seen := map[string][]string{}
	for _, r := range results {
		if r.Decision.SLO == "" || r.Decision.Action != alert.ActionTicket || !r.Alert.Firing() || r.SuppressedBy != "" {
			continue
		}
		slo := r.Decision.SLO
		members, ok := seen[slo]
		if !ok {
			var err error
			members, err = p.Store.Members(ctx, p.sloPagesKey(slo))
			if err != nil {
				if ctx.Err() != nil {
					return p.cancelled(sum, ctx.Err())
				}
				p.countStoreError("read SLO pages", err)
			}
			seen[slo] = members
		}
		if len(members) > 0 {
			r.SuppressedBy = "page " + members[0] + " of SLO " + slo
		}
	}
	for _, r := range results {
		if r.SuppressedBy != "" || r.MutedBy != "" { // muted: deliberately not sent
			sum.Suppressed++
			if p.Metrics != nil {
				p.Metrics.suppressed.Inc()
			}
		}
	}
	return nil
}

// countStoreError counts and logs a store failure that costs nothing but a
// possible duplicate.
func (p *Pipeline) countStoreError(op string, err error) {
	if p.Metrics != nil {
		p.Metrics.storeErrors.Inc()
	}
	msg := "dedup store failed; continuing without it (fail open): a duplicate notification is possible"
	if p.Dedup.FailClosed {
		// fail_closed answers 5xx when a read or claim that decides a
		// delivery fails; this step's failure leaves the delivery as it is.
		msg = "dedup store failed on a step the webhook goes on without (fail_closed holds back deliveries, not this): a duplicate notification is possible"
	}
	p.shared().storeLogs.Log(context.Background(), p.Logger, slog.LevelWarn, "open:"+op+":"+logthrottle.ErrorClass(err), msg, "op", op, "err", err)
}

// sloPagesWritten is what the settles of one webhook have already written to
// the SLO page sets: each receiver's batches may settle separately, and the
// page of an alert delivered to PagerDuty and to Slack is one member, written
// once. Keys are pageWriteID's; nil until something is written.
type sloPagesWritten map[string]bool

// pagedAs returns the SLO a resolve's firing paged as, when it differs
// from the resolve's own: the one its marker's incident names ("slo/<id>").
// A resolve decided under another identity (an upgrade that changed it: a
// rule over Sloth's info series has none now) left the page in that SLO's
// set, suppressing its tickets for days. An identity the key wrote
// otherwise (a brace replaced, a long key hashed) is not recovered: "".
func pagedAs(t *transition) string {
	id, ok := strings.CutPrefix(t.incident, "slo/")
	if !ok || id == t.res.Decision.SLO || (t.res.Decision.SLO != "" && IncidentKey(t.res, nil, nil, nil) == t.incident) {
		return ""
	}
	return id
}

// pageWriteID names the addition ("+") or removal ("-") of member in the
// set at key.
func pageWriteID(op, key, member string) string { return op + key + "\x00" + member }

// sloPageWrites returns the set additions and removals that remember, per
// SLO, which page-tier alerts were notified firing (and forget those notified
// resolved), so that tickets of the same SLO in later payloads — at any
// replica — are suppressed while the page fires. Writing only for notified
// transitions keeps the steady state (all dedup hits) at one round trip;
// members that written says an earlier settle of the webhook wrote, or that
// repeat within batches (one alert, two integrations), are written once.
func (p *Pipeline) sloPageWrites(batches []*batch, written sloPagesWritten) (add, remove []store.Members) {
	adds, dels := map[string][]string{}, map[string][]string{}
	var order []string
	seen, keys := map[string]bool{}, map[string]string{}
	for _, b := range batches {
		if b.err != nil {
			continue
		}
		for _, t := range b.trs {
			d := &t.res.Decision
			to, op, also := adds, "+", ""
			switch {
			case t.kind == alert.KindResolved:
				to, op, also = dels, "-", pagedAs(t)
			case d.Action != alert.ActionPage:
				continue
			}
			if d.SLO == "" && also == "" {
				continue
			}
			member := t.res.Alert.Labels["alertname"] + " (" + t.res.Alert.Fingerprint + ")"
			write := func(slo string) {
				key, ok := keys[slo]
				if !ok {
					key = p.sloPagesKey(slo)
					keys[slo] = key
					order = append(order, slo)
				}
				if id := pageWriteID(op, key, member); !seen[id] && !written[id] {
					seen[id] = true
					to[slo] = append(to[slo], member)
				}
			}
			if d.SLO != "" {
				write(d.SLO)
			}
			if also != "" {
				write(also)
			}
		}
	}
	for _, slo := range order {
		if m := adds[slo]; len(m) > 0 {
			add = append(add, store.Members{Key: keys[slo], TTL: p.Dedup.NotifiedTTL, Members: m})
		}
		if m := dels[slo]; len(m) > 0 {
			remove = append(remove, store.Members{Key: keys[slo], Members: m})
		}
	}
	return add, remove
}

// note records the members of sets as written with op, unless err says
// they were not.
func (w *sloPagesWritten) note(op string, sets []store.Members, err error) {
	if err != nil {
		return
	}
	for _, s := range sets {
		for _, m := range s.Members {
			if *w == nil {
				*w = sloPagesWritten{}
			}
			(*w)[pageWriteID(op, s.Key, m)] = true
		}
	}
}
