package routing

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/internal/recent"
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
	// ownMarker, when marker is the same firing's under the start it was
	// notified with (earlierFirings: Alertmanager moved the start earlier),
	// is the key of the alert's start now, given that marker's value so
	// later repeats find it at once.
	ownMarker string
	claim     string // key claimed while sending
	won       bool
	// held: this sender holds the claim in the store (false when it
	// delivers without one: fail open, or a duplicate of the payload).
	held bool
	// handResolved: who resolved the incident by hand at this PagerDuty
	// integration while it still fired ("" when nobody did); handMarks:
	// the marks that said so (dedup.HandResolvedAtKey, and the incident's
	// dedup.HandResolvedKey of an earlier build), cleared once the trigger
	// they cause is delivered.
	handResolved string
	handMarks    []store.Entry
	// handResolvedAt: when (zero: a mark of an earlier build, which
	// wrote who alone); handEpisode: the alert fired again with a later
	// start since (earlierFirings), a new episode reopening the page.
	handResolvedAt time.Time
	handEpisode    bool
	// handResolving: a hand resolve at this integration is on its way to
	// PagerDuty (dedup.IsHandResolving).
	handResolving bool
	// escalates: a firing now louder than what was notified of it.
	escalates bool
	// remindedMarker: for a reminder, the marker it was read with (the
	// one refreshed when another webhook reminds the incident first).
	remindedMarker string
	// notified: for a resolve, the tier its firing was notified with here
	// (its marker's; "" when none was read).
	notified string
}

// record notes the transition's outcome on its alert's result, with the
// notifier's attempts (0 when nothing was sent), and returns it.
func (t *transition) record(outcome string, err error, latency time.Duration, attempts int) *alert.Delivery {
	d := alert.Delivery{Receiver: t.receiver, Integration: t.integ.Name, Kind: t.kind, Outcome: outcome, Latency: latency, Attempts: attempts}
	if err != nil {
		d.Error, d.Retryable = err.Error(), alert.Retryable(err)
	}
	t.res.Deliveries = append(t.res.Deliveries, d)
	return &t.res.Deliveries[len(t.res.Deliveries)-1]
}

// target is one (receiver, integration) an alert may be notified to.
type target struct {
	receiver string
	integ    *Integration
}

// pending reads, in one store round trip, what was already notified for
// every (alert, receiver, integration) of the payload and returns the
// transitions still to send, as dedup.Transition decides. With flap damping
// on, the same read takes the transition histories of the alerts that may
// change something — every alert but a firing that all its integrations
// were already notified of when this replica last saw it (quietAlerts), so
// Alertmanager repeating unchanged alerts reads no history; a history the
// guess left out is read in a second round trip. An alert that damping
// downgrades is routed again and its new targets' markers read in a third
// (only flapping alerts cost it). The histories that changed are returned
// for the claims to write (writeHistories when nothing is claimed).
func (p *Pipeline) pending(ctx context.Context, results []*alert.Result, wasQuiet []bool, sum *alert.Summary) (_ []*transition, histories []store.Entry, _ error) {
	trs := p.candidates(results, sum)
	if len(trs) == 0 {
		return nil, nil, nil
	}
	keys := make([]string, len(trs), len(trs)+len(results))
	for i, t := range trs {
		keys[i] = t.marker
	}
	keys = append(keys, p.prefetchFlap(results, wasQuiet)...)
	flapEnd := len(keys)
	hand := handResolvedKeys(p.Dedup.KeyPrefix, trs, results, wasQuiet)
	keys = append(keys, hand...)
	values, found, err := p.Store.Get(ctx, keys)
	storeDown := err != nil
	if storeDown {
		if err := p.storeFailed(ctx, "read notified transitions", err, sum); err != nil {
			return nil, nil, err
		}
		values, found = make([]string, len(keys)), make([]bool, len(keys))
	}
	if p.Deferred != nil {
		// What this replica sent while the store could not take its
		// markers is notified (dedup.Deferred.Pending).
		p.Deferred.Pending(keys, values, found)
	}
	tagHandResolved(p.Dedup.KeyPrefix, trs, hand, values[flapEnd:], found[flapEnd:], p.now())
	prefetched := flapRead{keys: keys[len(trs):flapEnd], values: values[len(trs):flapEnd], found: found[len(trs):flapEnd]}
	values, found = values[:len(trs):len(trs)], found[:len(trs):len(trs)]
	if !storeDown {
		if err := p.earlierFirings(ctx, trs, values, found, prefetched); err != nil {
			p.countStoreError("read the markers of an earlier firing", err)
		}
	}
	now := p.now()
	steps := p.steps(trs, values, found, storeDown, now)
	var stale map[*alert.Result]bool
	if !storeDown {
		lagging := p.laggingCopies(trs, steps, found, prefetched, p.decideNow())
		stale = p.staleRefires(ctx, trs, steps, lagging)
		skipStale(trs, steps, stale, lagging)
	}
	if !storeDown && p.Flap != nil {
		quiet := notifiedFirings(trs, steps)
		p.quiet.note(results, wasQuiet, quiet)
		if states := p.flapStates(results, quiet); len(states) > 0 {
			var rerouted bool
			unpaged := unpagedResolves(trs, found)
			trs, values, found, rerouted, histories, err = p.dampPending(ctx, states, prefetched, trs, values, found, unpaged, sum)
			if err != nil {
				return nil, histories, err
			}
			if rerouted {
				steps = p.steps(trs, values, found, storeDown, now)
				skipStale(trs, steps, stale, p.laggingCopies(trs, steps, found, prefetched, now))
			}
		}
	}
	if !storeDown {
		if err := p.lostResolves(ctx, trs, steps, prefetched, now, sum); err != nil {
			return nil, histories, err
		}
		p.renewMarkers(ctx, trs, steps, values)
	}
	out := trs[:0]
	// notified: the resolves notified or already notified (only they are
	// asked about below); claims: the claims taken. Both are made on first
	// use: Alertmanager repeating firing alerts makes neither.
	var notified map[*alert.Result]bool
	var claims map[string]bool
	routed := map[*alert.Result][]string{} // fail open: where each resolve would go
	var unseen alertLine
	defer unseen.log(ctx, p, "unseen-resolves", "resolves of alerts no marker says were notified: sent to PagerDuty where routed, in case their firings were delivered without a marker (a resolve of an incident PagerDuty does not hold changes nothing)")
	for i, t := range trs {
		step := steps[i]
		switch step.Verdict {
		case dedup.Ignore:
			continue
		case dedup.Skip:
			notified = markResolve(notified, t.res)
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
		t.kind, t.escalates = step.Kind, step.Escalates
		if step.Incident != "" {
			t.incident = step.Incident
			if step.Incident != t.res.Incident {
				t.res.NotifiedIn = step.Incident
			}
		}
		t.claim = claimKey(t, step, found[i] && !dedup.IsClaim(values[i]))
		notified = markResolve(notified, t.res)
		if claims == nil {
			claims = make(map[string]bool, len(trs)-i)
		}
		if claims[t.claim] {
			// The same alert twice in one payload: one claim, one send.
			p.countDedup(dedupHit, sum)
			continue
		}
		claims[t.claim] = true
		if t.kind == alert.KindReminder {
			t.claim = p.reminderClaim(t)
			t.remindedMarker = values[i]
		}
		if step.Unseen {
			p.countDedup(dedupUnseenSent, nil)
			unseen.add(t.res.Alert.Fingerprint, t.receiver, t.integ.Name)
		}
		out = append(out, t)
	}
	for _, r := range results {
		if !r.Alert.Firing() && !notified[r] && r.SuppressedBy == "" {
			p.countDedup(dedupUnseen, nil)
			if sum != nil {
				// Nothing notified its firing: nothing to resolve. Counted
				// nowhere before, the answer's counts did not add up to
				// its alerts.
				sum.NoAction++
			}
		}
	}
	out = p.skipHandResolvedReminders(ctx, out)
	return out, histories, nil
}

// earlierFirings points a firing whose markers are all missing at the
// same firing notified under another start, when the alert's flap history
// says that firing is its last transition, with no resolve since:
// Alertmanager merges an alert's copies to the earliest start (an HA
// Prometheus pair whose copies started apart, a re-post) and sends the
// moved start at its next repeat; an Alertmanager restarted, or a peer,
// may hold a restarted Prometheus' later copy first. Either read as a new
// firing — a thread reply repeating the alert and a PagerDuty trigger (a
// later start reopened the incident: a page again where someone resolved
// it in PagerDuty). Like Alertmanager, whose notification log knows the
// alert by its fingerprint, the router takes it for the firing it
// notified. The found marker's value is written under the new start too
// (renewMarkers), so later repeats find it at once.
//
// earlierFirings also points each resolve whose marker is missing at the firing
// of the same alert that was notified, when the alert's flap history (read
// with the markers) says its last firing started earlier than the resolve's
// startsAt and before its endsAt: Alertmanager sends only an alert's last
// instance, so a firing that resolved, fired again and resolved within one
// group_interval reaches the router as one resolve carrying the later
// instance's startsAt — and the firing the router notified never got its
// resolve (Slack's parent stayed firing for good) while its page mark went
// as if it had paged nobody (flap damping then let every re-fire page).
// Their markers are read in one more round trip, only then. A marker found
// replaces the transition's: the resolve is that firing's.
func (p *Pipeline) earlierFirings(ctx context.Context, trs []*transition, values []string, found []bool, flap flapRead) error {
	if !slices.Contains(flap.found, true) {
		// No alert of the webhook has a flap record: none has fired
		// before (the fresh path: every alert new, no lookups).
		return nil
	}
	var idx []int
	var keys []string
	for from, j := range alertRuns(trs) {
		a := trs[from].res.Alert
		if a.Firing() && slices.Contains(found[from:j], true) || !a.Firing() && !slices.Contains(found[from:j], false) {
			continue
		}
		// One parse per alert, not per integration.
		start := p.lastFiringStart(flap, a.Fingerprint)
		switch {
		case start == 0 || start == a.IdentityStart().UnixMilli():
			continue
		case !a.Firing() && start >= resolvedAt(a, a.IdentityStart()).UnixMilli():
			continue
		case a.Firing() && start < a.IdentityStart().UnixMilli() && !slices.ContainsFunc(trs[from:j], handMarked) && p.firedBeforeStoreRun(flap, a.Fingerprint):
			p.Logger.Info("firing under a later start than the firing its flap history last records, which started before the store's current run: notified as a new firing (the store may have come back without its resolve)",
				"fingerprint", a.Fingerprint, "start", a.IdentityStart())
			continue
		}
		var newEpisode func(*transition) bool
		if a.Firing() && start < a.IdentityStart().UnixMilli() {
			newEpisode = handResolvedEpisode(trs[from:j], a.IdentityStart())
		}
		for k := from; k < j; k++ {
			t := trs[k]
			if found[k] {
				continue
			}
			if newEpisode != nil && newEpisode(t) {
				t.handEpisode = true
				continue
			}
			idx = append(idx, k)
			keys = append(keys, p.markerKey(a.Fingerprint, t.receiver, t.integ, strconv.FormatInt(start, 10)))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	vs, fs, err := p.Store.Get(ctx, keys)
	if err != nil {
		return err
	}
	for j, i := range idx {
		if fs[j] {
			if trs[i].res.Alert.Firing() {
				trs[i].ownMarker = trs[i].marker
			}
			trs[i].marker, values[i], found[i] = keys[j], vs[j], true
		}
	}
	return nil
}

// handMarked reports whether t read a hand-resolve mark (Slack's Resolve):
// handResolvedEpisode then decides a later start — the mark's time tells
// a copy of the resolved firing from a new episode, whatever the store
// lost before it (a review: taken as new by firedBeforeStoreRun, such a
// copy triggered PagerDuty's hand-resolved incident again, a real page,
// and a new episode lost Slack's "paged again").
func handMarked(t *transition) bool { return t.handResolved != "" }

// firedBeforeStoreRun reports whether the last firing fp's flap history
// (read in flap) records started before the store's current run began
// (StoreLife). Such a history proves nothing of what happened since: Redis
// back from an older snapshot, or failed over to a replica behind, lost
// the resolve that followed (and the flap record with it), and the alert's
// next firing, under a later start, was taken for that firing and sent
// nowhere, answered 200 (an audit). A later start is then a new firing:
// paged, as a marker lost with the store is (dedup.Epoch) — at worst the
// same firing told again, which PagerDuty folds while its incident is open
// or acknowledged. False when the store's run is unknown (no StoreLife, a
// Redis Cluster).
func (p *Pipeline) firedBeforeStoreRun(flap flapRead, fp string) bool {
	if p.StoreLife == nil {
		return false
	}
	life := p.StoreLife()
	if life.IsZero() {
		return false
	}
	rec, ok := p.flapRecordOf(flap, fp)
	return ok && rec.h[len(rec.h)-1].At.Before(life.Truncate(time.Second))
}

// handResolvedEpisode says, of the transitions of one firing alert whose
// start moved later (run), which are a new episode rather than the same
// firing (nil: none): its page was resolved by hand (Slack's Resolve)
// before that start, so its resolve was lost — an Alertmanager restarted
// without its data, the alert cleared while silenced — and it fired again.
// Taken for the same firing it paged nobody, as reminders skip a
// hand-resolved PagerDuty (an audit). The integrations resolved by hand
// open it again, and those that draw the incident (Slack) are told;
// another team's PagerDuty, not resolved by hand, keeps it as the same
// firing. A start before the hand resolve is a copy of the firing that
// was resolved (an HA Prometheus pair's, held by a restarted
// Alertmanager): the same firing (a review). A mark of an earlier build,
// without its time, takes any later start.
func handResolvedEpisode(run []*transition, start time.Time) func(*transition) bool {
	resolvedBefore := func(t *transition) bool {
		return t.handResolved != "" && (t.handResolvedAt.IsZero() || start.After(t.handResolvedAt))
	}
	if !slices.ContainsFunc(run, resolvedBefore) {
		return nil
	}
	return func(t *transition) bool { return resolvedBefore(t) || !t.integ.silentUpdates() }
}

// lastFiringStart is the exact start (Unix ms) of the last firing the flap
// history of fp (read in flap) records, when that is its newest
// transition; 0 otherwise (not read, or resolved since). A firing recorded
// without a start is one sent without a startsAt (its identity the zero
// time, which the record does not write), or one a build before the
// record's start wrote: the zero time's start, looked up as any earlier
// firing's. Taken for none, an alert sent without a startsAt and then with
// one paged twice (an audit).
func (p *Pipeline) lastFiringStart(flap flapRead, fp string) int64 {
	if rec, ok := p.flapRecordOf(flap, fp); ok && rec.h[len(rec.h)-1].Firing {
		if rec.start == 0 {
			return zeroStart
		}
		return rec.start
	}
	return 0
}

// zeroStart is the identity start (Unix ms) of an alert sent without a
// startsAt: the zero time's.
var zeroStart = time.Time{}.UnixMilli()

// flapRecordOf is fp's flap record as read in flap; false when it was not
// read, is missing, unreadable or holds no transition.
func (p *Pipeline) flapRecordOf(flap flapRead, fp string) (flapRecord, bool) {
	key := p.flapKey(fp)
	for i, k := range flap.keys {
		if k != key || !flap.found[i] {
			continue
		}
		rec, err := parseFlapRecord(flap.values[i])
		return rec, err == nil && len(rec.h) > 0
	}
	return flapRecord{}, false
}

// markerKey is the key of what was notified of the alert with fingerprint
// fp and identity start start (Unix ms) at a receiver's integration:
// keyed by fingerprint (its hash tag), not by incident, so it is found
// whatever the alert is grouped into now.
func (p *Pipeline) markerKey(fp, receiver string, integ *Integration, start string) string {
	return store.Key(p.Dedup.KeyPrefix, "n", fp, receiver+"/"+integ.Name+":"+start)
}

// lostResolves turns the Ignore steps — resolves of alerts no marker says
// were notified — of alerts that started before the store's epoch into
// SendIfRouted: the store began its state after they fired (restarted
// empty, failed over to a replica that had nothing), so their markers may
// have been lost with it, and a resolve not sent leaves the PagerDuty
// incident open for good. A resolve of something never notified is the
// duplicate risked, as when the store is down. The epoch is read only
// when a webhook holds such a resolve, one read per webhook; a failed read
// is a store failure (fail open: sent; fail_closed: 5xx).
//
// A marker may also be missing while the store kept its state: a firing
// delivered while the store was down (fail open) whose markers were held
// by dedup.Deferred in a replica that stopped, or that gave them up
// (MaxAge), before the store answered again. So the other Ignore steps at
// an integration that holds incidents (PagerDuty) are sent where routed
// too (dedup.Input.SendUnseen): there a resolve of an incident never
// triggered changes nothing, the incident step sends the incident's
// resolve only when no other member remains in it (an update, which
// PagerDuty folds, otherwise), and one that was triggered is not left
// open for good. Slack keeps ignoring them: a resolved message for
// something never posted would be noise.
//
// Not when the alert's flap history (read with the markers, flap) says it
// fired again after this resolve ended: the resolve is a late report of an
// earlier instance, whose leave could resolve PagerDuty while the alert
// fires where the live instance's join never reached the store. A resolve
// whose startsAt is only earlier than the firing notified (Alertmanager
// keeps the earliest start of the copies an HA Prometheus pair sends, and
// says nothing of the change until the resolve) ended after that firing
// began: it is sent.
func (p *Pipeline) lostResolves(ctx context.Context, trs []*transition, steps []dedup.Step, flap flapRead, now time.Time, sum *alert.Summary) error {
	if !slices.ContainsFunc(steps, func(s dedup.Step) bool { return s.Verdict == dedup.Ignore }) {
		return nil
	}
	epoch, err := dedup.Epoch(ctx, p.Store, p.Dedup.KeyPrefix, now)
	if err != nil {
		if err := p.storeFailed(ctx, "read the store's epoch", err, sum); err != nil {
			return err
		}
		epoch = now
	}
	var lost alertLine
	for i, t := range trs {
		// Only a firing that would have been notified can have lost its
		// marker: not one decided none or suppressed, nor one whose start
		// is unknown (Alertmanager sent none: no epoch to compare).
		if steps[i].Verdict != dedup.Ignore || t.res.Decision.Action == alert.ActionNone || t.res.SuppressedBy != "" {
			continue
		}
		if start := t.res.Alert.IdentityStart(); !start.IsZero() && start.Before(epoch) {
			steps[i] = dedup.Transition(dedup.Input{StoreLost: true, Firing: false, Tier: t.tier, Now: now})
			lost.add(t.res.Alert.Fingerprint, t.receiver, t.integ.Name)
		} else if t.integ.silentUpdates() && !p.firedSince(flap, t.res.Alert.Fingerprint, resolvedAt(t.res.Alert, start)) {
			// Logged and counted in pending once routed (dedupUnseenSent).
			steps[i] = dedup.Transition(dedup.Input{SendUnseen: true, Firing: false, Tier: t.tier, Now: now})
		}
	}
	if len(lost.seen) > 0 {
		lost.log(ctx, p, "lost-resolves", "resolves of alerts no marker says were notified, which started before the store's state began: sent where routed, in case their markers were lost", "epoch", epoch)
	}
	return nil
}

// resolvedAt is when resolved alert a ended: its endsAt, or start when
// Alertmanager sent none.
func resolvedAt(a *alert.Alert, start time.Time) time.Time {
	if a.EndsAt.IsZero() {
		return start
	}
	return a.EndsAt
}

// firedSince reports whether the flap history of fingerprint fp, as read in
// flap, ends with a firing that started after since: the alert fired again
// (another instance) after the one that ended then. False when the history
// was not read (flap damping off) or says nothing newer.
func (p *Pipeline) firedSince(flap flapRead, fp string, since time.Time) bool {
	rec, ok := p.flapRecordOf(flap, fp)
	if !ok {
		return false
	}
	last := rec.h[len(rec.h)-1]
	return last.Firing && last.At.After(since.Truncate(time.Second))
}

// mayReopen reports whether t could turn a hand-resolved incident's update
// into a trigger (reopenHandResolved): a firing to an integration that
// sends nothing for updates (PagerDuty).
func mayReopen(t *transition) bool {
	return t.res.Alert.Firing() && t.integ.silentUpdates()
}

// handResolvedKeys returns, each once, the hand-resolve marks the read
// asks for: those of the transitions that mayReopen, of alerts not quiet
// when this replica last saw them — a quiet firing brings no update, so
// Alertmanager repeating unchanged alerts reads no mark. Each such
// transition reads the mark of its own integration (dedup.HandResolvedAtKey)
// and its incident's mark of an earlier build (dedup.HandResolvedKey). trs
// are in results' order (candidates). Few per webhook, so a slice.
func handResolvedKeys(prefix string, trs []*transition, results []*alert.Result, wasQuiet []bool) []string {
	var out []string
	j := 0
	for _, t := range trs {
		for j < len(results) && results[j] != t.res {
			j++
		}
		if (wasQuiet != nil && j < len(wasQuiet) && wasQuiet[j]) || !mayReopen(t) {
			continue
		}
		for _, k := range handResolvedKeysOf(prefix, t) {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// skipHandResolvedReminders drops from trs the reminders to an integration
// that sends nothing for updates (PagerDuty) of incidents someone resolved
// there by hand (Slack's Resolve) while they fired: a reminder is
// PagerDuty's trigger again, which opened a new incident and paged on-call
// within repeat_interval of their Resolve, while Slack said resolved and
// offered nothing to act on it (an audit). The reminder still reaches the
// incident's other integrations (Slack's thread); a new alert joining the
// incident triggers PagerDuty again (reopenHandResolved). The reminder
// held back keeps the alert's marker and the incident alive, as a sent
// one would, and the mark (dedup.HandResolvedTTL). One read, only when
// such a reminder is due; a store that cannot be read reminds as before.
func (p *Pipeline) skipHandResolvedReminders(ctx context.Context, trs []*transition) []*transition {
	var keys []string
	for _, t := range trs {
		if t.kind == alert.KindReminder && t.integ.silentUpdates() {
			for _, k := range handResolvedKeysOf(p.Dedup.KeyPrefix, t) {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	if len(keys) == 0 {
		return trs
	}
	values, found, err := p.Store.Get(ctx, keys)
	if err != nil {
		return trs
	}
	out := make([]*transition, 0, len(trs))
	var kept []store.Entry
	var incidents []string
	markTTL := max(dedup.HandResolvedTTL, p.Dedup.NotifiedTTL)
	for _, t := range trs {
		if t.kind == alert.KindReminder && t.integ.silentUpdates() {
			marks := handResolvedKeysOf(p.Dedup.KeyPrefix, t)
			if slices.ContainsFunc(marks[:], func(k string) bool { return found[slices.Index(keys, k)] }) {
				p.Logger.Debug("reminder not sent to PagerDuty: the incident was resolved there by hand while it fired (a new alert joining it triggers it again)",
					"receiver", t.receiver, "integration", t.integ.Name, "incident", t.incident)
				// Kept alive as a sent reminder keeps them: the marker
				// expiring (dedup.notified_ttl) made the next repeat a new
				// firing, which paged again with no new alert (an audit).
				kept = append(kept, store.Entry{Key: t.marker, Value: t.remindedMarker, TTL: p.Dedup.NotifiedTTL})
				for _, k := range marks { // and the mark, while the alerts fire
					if i := slices.Index(keys, k); found[i] && !slices.ContainsFunc(kept, func(e store.Entry) bool { return e.Key == k }) {
						kept = append(kept, store.Entry{Key: k, Value: values[i], TTL: markTTL})
					}
				}
				if k := store.IncidentKey(p.Dedup.KeyPrefix, t.incident, t.receiver+"/"+t.integ.Name); !slices.Contains(incidents, k) {
					incidents = append(incidents, k)
				}
				continue
			}
		}
		out = append(out, t)
	}
	if len(kept) > 0 {
		if err := p.Store.ExpireIfEqual(ctx, kept); err != nil {
			p.countStoreError("refresh the markers of alerts whose reminder a hand resolve held back", err)
		}
		if err := p.Store.RenewIncidents(ctx, incidents, p.Dedup.NotifiedTTL); err != nil {
			p.countStoreError("renew the incidents whose reminder a hand resolve held back", err)
		}
	}
	return out
}

// handResolvedKeysOf are the marks that say t's integration was resolved
// by hand: its own, and its incident's of an earlier build.
func handResolvedKeysOf(prefix string, t *transition) [2]string {
	return [2]string{
		dedup.HandResolvedAtKey(prefix, t.incident, t.receiver+"/"+t.integ.Name),
		dedup.HandResolvedKey(prefix, t.incident),
	}
}

// tagHandResolved notes on the transitions that mayReopen the marks read
// for them (keys[i]'s in values[i]): who resolved their integration by
// hand, and the marks to clear once triggered. Another integration's mark
// is not theirs: another team resolving its page of the same incident
// does not page this one, nor consume this one's mark.
func tagHandResolved(prefix string, trs []*transition, keys, values []string, found []bool, now time.Time) {
	if !slices.Contains(found, true) {
		return
	}
	for _, t := range trs {
		if !mayReopen(t) {
			continue
		}
		for _, k := range handResolvedKeysOf(prefix, t) {
			if i := slices.Index(keys, k); i >= 0 && found[i] {
				v := values[i]
				if dedup.IsHandResolving(v) {
					resolving, resolved := dedup.ReadHandResolving(v, now)
					if resolving {
						t.handResolving = true
						continue
					}
					v = resolved
				}
				if t.handResolved == "" {
					t.handResolved, t.handResolvedAt = dedup.ParseHandResolved(v)
				}
				t.handMarks = append(t.handMarks, store.Entry{Key: k, Value: values[i]})
			}
		}
	}
}

// claimKey is the key t's claim is taken on, given its step and whether
// its marker holds a notified transition (notified). A transition never
// notified is claimed on its marker key itself — the claim (the sender's
// token, for claim_ttl) is overwritten by the marker once delivered, or
// deleted if the send fails — so a new alert costs the store one key, not
// two. A reader that finds a token there (another sender's send in flight)
// reads it as an unknown tier, so the transition, a firing or its resolve,
// is to be sent; its claim, on the same key, loses, and it waits for that
// sender's marker like any lost claim. A transition after a notified one
// (a resolve, another tier, a re-fire, a reminder) is claimed on a key of
// its own beside the marker, which stays readable meanwhile.
func claimKey(t *transition, step dedup.Step, notified bool) string {
	if !notified {
		return t.marker
	}
	return t.marker + ":" + t.res.Alert.Status + ":" + t.tier + step.ClaimSuffix
}

// reminderClaim is the key a reminder is claimed on: one per incident and
// integration, held for the repeat interval (claimAndLease), so an
// incident gets one reminder per interval however many Alertmanager groups
// its alerts arrive in — each group repeats on its own timer, and a claim
// per alert sent one PagerDuty trigger and one Slack reply per group. A
// reminder that finds it taken is left (claimed: a dedup hit, not a wait);
// the alerts of one webhook share it (the same token: won by each).
func (p *Pipeline) reminderClaim(t *transition) string {
	return store.Key(p.Dedup.KeyPrefix, "reminder", t.incident, t.receiver+":"+t.integ.Name)
}

// markResolve notes r in m (made if nil) when r is a resolve.
func markResolve(m map[*alert.Result]bool, r *alert.Result) map[*alert.Result]bool {
	if r.Alert.Firing() {
		return m
	}
	if m == nil {
		m = make(map[*alert.Result]bool)
	}
	m[r] = true
	return m
}

// renewMarkers renews the lifetime of the markers of the firings skipped
// whose markers have lived half of dedup.notified_ttl (dedup.Step.Renew),
// and of their incidents' state, at most once per quarter of it per marker
// and replica (renewals):
// only while the marker still holds the value read (a resolve notified
// meanwhile is left as it is); and writes a skipped firing's marker under
// its start now when it was found under the start it was notified with
// (transition.ownMarker). Best effort: a failure is counted, and the next
// repeat tries again.
func (p *Pipeline) renewMarkers(ctx context.Context, trs []*transition, steps []dedup.Step, values []string) {
	var renew, moved []store.Entry
	var incidents []string
	now := p.now()
	for i, t := range trs {
		switch {
		case steps[i].Verdict != dedup.Skip:
		case t.ownMarker != "":
			moved = append(moved, store.Entry{Key: t.ownMarker, Value: values[i], TTL: p.Dedup.NotifiedTTL})
		case steps[i].Renew && p.renewed.due(t.marker, now, p.Dedup.NotifiedTTL/4):
			renew = append(renew, store.Entry{Key: t.marker, Value: values[i], TTL: p.Dedup.NotifiedTTL})
			// The incident the firing was notified in lives as long: its
			// state expiring while the marker is renewed, the resolve of
			// another of its alerts, alone, found no member left and
			// closed it while this one still fired — never paged again.
			incident := dedup.ParseMarker(values[i]).Incident
			if incident == "" {
				incident = t.incident
			}
			if k := store.IncidentKey(p.Dedup.KeyPrefix, incident, t.receiver+"/"+t.integ.Name); !slices.Contains(incidents, k) {
				incidents = append(incidents, k)
			}
		}
	}
	if len(incidents) > 0 {
		if err := p.Store.RenewIncidents(ctx, incidents, p.Dedup.NotifiedTTL); err != nil {
			p.countStoreError("renew the incidents of long-firing alerts", err)
		}
	}
	if len(moved) > 0 {
		if err := p.Store.Set(ctx, moved); err != nil {
			p.countStoreError("write the markers of firings whose start moved earlier", err)
		}
	}
	if len(renew) > 0 {
		if err := p.Store.ExpireIfEqual(ctx, renew); err != nil {
			p.countStoreError("renew the markers of long-firing alerts", err)
		}
	}
}

// steps returns what dedup.Transition decides for each of trs given its
// marker's value.
func (p *Pipeline) steps(trs []*transition, values []string, found []bool, storeDown bool, now time.Time) []dedup.Step {
	out := make([]dedup.Step, len(trs))
	for i, t := range trs {
		in := p.input(t, values[i], found[i], storeDown, now)
		out[i] = dedup.Transition(in)
		if found[i] && !in.Firing {
			t.notified = in.Marker.Tier
		}
	}
	return out
}

// input is what dedup.Transition looks at for t, given the value of its
// marker (found: it exists).
func (p *Pipeline) input(t *transition, marker string, found, storeDown bool, now time.Time) dedup.Input {
	var m dedup.Marker
	if found {
		m = dedup.ParseMarker(marker)
	}
	return dedup.Input{Found: found, Marker: m, StoreDown: storeDown, Firing: t.res.Alert.Firing(),
		Tier: t.tier, StartsAt: t.res.Alert.IdentityStart(), Now: now, RepeatInterval: p.Dedup.RepeatInterval, NotifiedTTL: p.Dedup.NotifiedTTL}
}

// notifiedFirings returns the firing alerts every integration of which was
// already notified of this firing (all their transitions are dedup hits),
// or nil when there is none. Their flap history holds this firing already
// (it was appended when the firing was first notified) and damping cannot
// change what is sent for them — a verdict on an unchanged history only
// goes from flapping to stable as time passes, and a stable alert is
// decided as its policies say — so their histories need not be read.
func notifiedFirings(trs []*transition, steps []dedup.Step) map[*alert.Result]bool {
	var out map[*alert.Result]bool
	for i := 0; i < len(trs); {
		r := trs[i].res
		j, hit := i, r.Alert.Firing()
		for ; j < len(trs) && trs[j].res == r; j++ {
			if hit && steps[j].Verdict != dedup.Skip {
				hit = false
			}
		}
		if hit {
			if out == nil {
				out = make(map[*alert.Result]bool)
			}
			out[r] = true
		}
		i = j
	}
	return out
}

// flapRead is what a read of flap histories found, key by key.
type flapRead struct {
	keys   []string
	values []string
	found  []bool
}

// dampPending damps the alerts of states with their flap histories — those
// read with the markers (prefetched), the others read now in one round
// trip — and routes the downgraded ones again (their new targets replacing
// their old ones in trs, values and found; rerouted says so). It returns
// the history writes. A failed read damps nothing: the alerts are decided
// as their policies say.
func (p *Pipeline) dampPending(ctx context.Context, states []*flapState, prefetched flapRead, trs []*transition, values []string, found []bool, unpaged map[*alert.Result]bool, sum *alert.Summary) (_ []*transition, _ []string, _ []bool, rerouted bool, histories []store.Entry, _ error) {
	at := make(map[string]int, len(prefetched.keys))
	for i, k := range prefetched.keys {
		at[k] = i
	}
	hv, hf := make([]string, len(states)), make([]bool, len(states))
	var missing []string
	var missingAt []int
	for i, st := range states {
		if j, ok := at[st.key]; ok {
			hv[i], hf[i] = prefetched.values[j], prefetched.found[j]
			continue
		}
		missing, missingAt = append(missing, st.key), append(missingAt, i)
	}
	if len(missing) > 0 {
		v, f, err := p.Store.Get(ctx, missing)
		if err != nil {
			return trs, values, found, false, nil, p.storeFailed(ctx, "read flap histories", err, sum)
		}
		for k, i := range missingAt {
			hv[i], hf[i] = v[k], f[k]
		}
	}
	downgraded, histories := p.damp(states, hv, hf, unpaged)
	if len(downgraded) == 0 {
		return trs, values, found, false, histories, nil
	}
	trs, values, found, err := p.reroute(ctx, downgraded, trs, values, found, sum)
	return trs, values, found, true, histories, err
}

// unpagedResolves returns the resolved alerts whose firing reached none
// of the integrations it pages through: no marker (nor a claim in flight)
// at any integration of the alert's receivers that holds incidents
// (PagerDuty), or, when they reach none, at any integration of them.
// Their firing's page mark is not a page (damp): a send that failed
// releases its claim and leaves no marker, and an alert whose page never
// went out must page when it fires again, whatever cool_down says.
func unpagedResolves(trs []*transition, found []bool) map[*alert.Result]bool {
	var out map[*alert.Result]bool
	for i := 0; i < len(trs); {
		r := trs[i].res
		j := i
		for j < len(trs) && trs[j].res == r {
			j++
		}
		if !r.Alert.Firing() && r.Decision.Action == alert.ActionPage {
			var routed, notified, routedPD, pagedPD bool
			for k := i; k < j; k++ {
				if !slices.Contains(r.Receivers, trs[k].receiver) {
					continue
				}
				routed, notified = true, notified || found[k]
				if trs[k].integ.silentUpdates() {
					routedPD, pagedPD = true, pagedPD || found[k]
				}
			}
			if routedPD && !pagedPD || !routedPD && routed && !notified {
				if out == nil {
					out = make(map[*alert.Result]bool)
				}
				out[r] = true
			}
		}
		i = j
	}
	return out
}

// candidates returns a transition per (alert, receiver, integration) that
// may need sending, its marker key set, and counts the firing alerts
// decided none.
func (p *Pipeline) candidates(results []*alert.Result, sum *alert.Summary) []*transition {
	var trs []*transition
	var every []target // built once, for the resolves of this payload
	var buf []target   // a firing's targets, reused from alert to alert
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
			buf = p.appendTargets(buf[:0], r.Receivers)
			targets = buf
		} else {
			// A resolve goes wherever its firing went, whatever the
			// (possibly different) decision on the resolved alert.
			if every == nil {
				every = p.appendTargets(nil, p.receiverNames())
			}
			targets = every
		}
		start := strconv.FormatInt(r.Alert.IdentityStart().UnixMilli(), 10)
		tier := dedup.Tier(&r.Decision)
		backing := make([]transition, len(targets)) // one allocation per alert
		for i, tg := range targets {
			t := &backing[i]
			*t = transition{res: r, receiver: tg.receiver, integ: tg.integ, incident: r.Incident, tier: tier,
				marker: p.markerKey(r.Alert.Fingerprint, tg.receiver, tg.integ, start)}
			trs = append(trs, t)
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

// appendTargets appends the (receiver, integration) pairs of receivers to
// out.
func (p *Pipeline) appendTargets(out []target, receivers []string) []target {
	for _, name := range receivers {
		integs, defined := p.Receivers[name]
		switch {
		case defined && len(integs) == 0:
			// A blackhole (a receiver configured without integrations):
			// its routes mute what they match (Route.SetBlackholes); a
			// resolve or a fallback that reaches it has nowhere to go.
			continue
		case len(integs) == 0:
			// An unknown receiver still gets its transitions, so that the
			// failure is reported rather than silently dropped.
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

// renewals remembers when this replica last renewed a marker
// (renewMarkers), so Alertmanager's repeats of an alert firing for days
// renew it once per interval, not on every repeat.
type renewals struct {
	once sync.Once
	m    *recent.Map[string, time.Time]
}

// due reports whether key was not renewed within every before now, and
// notes now as its renewal when it was not.
func (r *renewals) due(key string, now time.Time, every time.Duration) bool {
	r.once.Do(func() { r.m = recent.New[string, time.Time](quietSize) })
	if last, ok := r.m.Get(key); ok && now.Sub(last) < every {
		return false
	}
	r.m.Put(key, now)
	return true
}
