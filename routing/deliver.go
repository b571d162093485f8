package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// batch is one notification in the making: the won transitions of one
// receiver's integration, one incident and one kind.
type batch struct {
	receiver string
	integ    *Integration
	incident string
	kind     alert.Kind
	trs      []*transition
	n        *alert.Notification
	// unheld: a resolve whose Leave found nothing of the incident, at an
	// integration that draws it (unheldResolves).
	unheld bool
	// unthreaded: a partial resolve (its incident stays open) whose
	// incident the store keeps no reference of (unthreadedResolves).
	unthreaded bool
	// skip: deliberately not sent (send_resolved: false); settled as sent.
	skip bool
	// sent: send called the integration's notifier (a failure then is the
	// integration's, not the store's or a lease's).
	sent    bool
	err     error
	latency time.Duration
	// retries counts the notifier's retries of the batch's send
	// (alert.CountAttempts): it made 1 + retries attempts.
	retries atomic.Int64
	// in: the webhook's count in the incidents it may update (coalesce.go).
	in *inbound
	// reopen: the hand-resolve marks of this integration (the keys and the
	// values read there), cleared once this batch, an update turned into a
	// trigger, is delivered (reopenHandResolved).
	reopen []store.Entry
	// spent: the hand-resolve marks of an earlier episode of the incident,
	// cleared once this batch, its new trigger, is delivered.
	spent []store.Entry
	// group: the template data of the batch's incident as the webhook
	// held it, for a notifier that reads it (groups); nil otherwise.
	group *template.Data
	// retrigger: the incident's Join took its retrigger for this batch
	// (store.IncidentOp.Retrigger), so this update goes out as the
	// incident's trigger again (retrigger.go). A retrigger taken and not
	// delivered is given back in the settle (incidentSettleOps).
	retrigger bool
}

func (b *batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (p *Pipeline) leases() dedup.Leases {
	return dedup.Leases{Store: p.Store, TTL: p.Dedup.ClaimTTL, Wait: p.Dedup.InFlightWait}
}

// claimAndLease takes, in one round trip (store.ClaimJoin), the claims of
// every transition, the flap histories that changed and the incident steps
// of the transitions it wins: each step carries its members' claims, and
// the store leaves out a member whose claim another replica holds, so a
// member is never joined or removed for a claim this webhook lost (the
// winner's own step does it). The batches are those of the won transitions
// (the grouping the steps were built from, when every claim was won) and
// the steps' answers are applied to their incidents (leaseIncidents). The
// transitions claimed by another replica are returned for awaitLost, after
// the sends. The webhook leaves the update counts (in) of the incidents
// where it won no claim: what another replica sends is not this webhook's
// update. results are msg's alerts: the incidents the webhook's resolves
// may not close (heldOpen), and what a store outage reads of them
// (failOpenIncidents); group is msg's (alert.Message.GroupID).
func (p *Pipeline) claimAndLease(ctx context.Context, msg *alert.Message, results []*alert.Result, group string, trs []*transition, histories []store.Entry, token string, in *inbound, sum *alert.Summary) ([]*batch, []*incidentLease, *lostClaims, error) {
	open := heldOpen(msg, results)
	keys := make([]string, len(trs))
	index := make(map[*transition]int, len(trs))
	for i, t := range trs {
		keys[i] = t.claim
		index[t] = i
	}
	all := p.group(trs, false)
	leases := p.incidentLeases(all, open, group)
	var ops []store.ClaimedOp
	for _, l := range leases {
		for _, st := range l.pendingSteps() {
			op := store.ClaimedOp{Op: p.stepOp(ctx, l, st, token)}
			for _, b := range st.batches {
				for _, t := range b.trs {
					op.Claims = append(op.Claims, index[t])
				}
			}
			if st.step == store.StepJoin {
				op.After = l.handKeys
			}
			ops = append(ops, op)
		}
	}
	claims := p.leases().Claims(keys, token)
	for i, t := range trs {
		if t.kind == alert.KindReminder && p.Dedup.RepeatInterval > 0 {
			claims[i].TTL = p.Dedup.RepeatInterval // one reminder per incident per interval
		}
	}
	res := store.ClaimJoin(ctx, p.Store, claims, histories, ops)
	if res.AlsoErr != nil {
		p.countStoreError("write flap histories", res.AlsoErr)
	}
	lost, claimErr := p.claimed(ctx, trs, res.Won, res.ClaimErr, in, sum)
	if res.ClaimErr != nil && claimErr != nil {
		p.undoGivenUp(keys, ops, token)
	}
	first := &stepAnswers{err: res.IncidentsErr, results: make(map[stepKey]store.IncidentResult, len(ops))}
	for i, r := range res.Incidents {
		first.results[stepKey{ops[i].Op.Key, ops[i].Op.Step}] = r
	}
	if res.AfterErr != nil {
		p.countStoreError("read the hand-resolve marks after the joins", res.AfterErr)
	}
	for i, a := range res.After {
		if len(ops[i].After) > 0 {
			if first.after == nil {
				first.after = make(map[stepKey]afterRead)
			}
			first.after[stepKey{ops[i].Op.Key, ops[i].Op.Step}] = afterRead{keys: ops[i].After, read: a}
		}
	}
	batches := all
	if slices.ContainsFunc(trs, func(t *transition) bool { return !t.won }) {
		// Some claims were lost (or none taken: fail closed): the batches
		// and incidents of the won transitions only.
		batches = p.group(trs, true)
		leases = p.incidentLeases(batches, open, group)
	}
	p.notifications(msg, batches, results)
	return batches, p.leaseIncidents(ctx, batches, leases, results, token, sum, first), lost, claimErr
}

// undoGivenUp undoes, once the store answers, a claim round trip given
// up on with nothing sent (fail closed, or the request gone): the store may
// have run it all the same — Redis stalled mid-round trip runs it once it
// wakes —, holding the transitions until claim_ttl with nobody sending
// them. The claims are released (this token's only), and the joins'
// opening leases aborted (a no-op where the token holds none), so
// Alertmanager's retry sends and opens. A leave's resolving lease is left
// to expire (an abort would put members back with the resolve's starts): a
// resolve waits, nothing is lost. A retrigger a given-up Join took is not
// given back: other senders' Joins bringing new alerts to PagerDuty wait
// for it (answered 5xx, this webhook's own retry included) until the take's
// lease ends, when it is void, as if given back (store field p).
func (p *Pipeline) undoGivenUp(keys []string, ops []store.ClaimedOp, token string) {
	if p.Deferred == nil {
		return
	}
	p.Deferred.DeleteIfEqual(dedup.Releases(keys, token))
	var aborts []store.IncidentOp
	for _, op := range ops {
		if op.Op.Step == store.StepJoin {
			aborts = append(aborts, store.IncidentOp{Key: op.Op.Key, Step: store.StepAbort, Members: op.Op.Members, Token: token, TTL: op.Op.TTL})
		}
	}
	if len(aborts) > 0 {
		p.Deferred.Incidents(aborts)
	}
}

// attempts is how many attempts the batch's send made: 1 + its retries.
func (b *batch) attempts() int { return 1 + int(b.retries.Load()) }

// lostClaims are the transitions another sender claimed, with their
// marker keys: awaitLost waits for them once this webhook's own sends are
// done.
type lostClaims struct {
	trs     []*transition
	markers []string
}

// claimed records the claims' answer on trs: won (the store's answer) or,
// when the store failed (err), every transition taken as won (fail open) or
// none (fail closed). It returns the transitions claimed by another
// replica, for awaitLost.
func (p *Pipeline) claimed(ctx context.Context, trs []*transition, won []bool, err error, in *inbound, sum *alert.Summary) (*lostClaims, error) {
	if err != nil {
		if err := p.storeFailed(ctx, "claim transitions", err, sum); err != nil {
			sum.Failed += len(trs) // none is sent
			return nil, err
		}
		for _, t := range trs {
			t.won = true
			p.countDedup(dedupFailOpen, nil)
		}
		return nil, nil
	}
	var lost []*transition
	var markers []string
	var reminded []store.Entry
	for i, t := range trs {
		t.won, t.held = won[i], won[i]
		switch {
		case t.won:
		case t.kind == alert.KindReminder:
			// This incident was reminded within the interval (reminderClaim):
			// nothing to wait for. The alert's marker is kept alive as a
			// sent reminder would keep it: else, firing longer than
			// notified_ttl in a group that never reminds first, it would
			// expire and the alert be sent again as new.
			p.countDedup(dedupHit, sum)
			t.record(alert.DeliveryDeduplicated, nil, 0, 0)
			reminded = append(reminded, store.Entry{Key: t.marker, Value: t.remindedMarker, TTL: p.Dedup.NotifiedTTL})
		default:
			lost = append(lost, t)
			markers = append(markers, t.marker)
		}
	}
	if len(reminded) > 0 {
		if err := p.Store.ExpireIfEqual(ctx, reminded); err != nil {
			p.countStoreError("refresh the markers of alerts another webhook reminded", err)
		}
	}
	if len(lost) == 0 {
		return nil, nil
	}
	in.keep(func(k incidentKey) bool {
		return slices.ContainsFunc(trs, func(t *transition) bool { return t.won && k.of(t) })
	})
	return &lostClaims{trs: lost, markers: markers}, nil
}

// awaitLost waits (bounded: in_flight_wait) until the markers of the
// transitions another replica claimed say that replica delivered them;
// those it has not delivered in time count as failures so Alertmanager
// retries — a claim is never taken as proof of delivery. It runs after
// this webhook's own sends: two replicas that split one incident's alerts
// between them (an HA pair's webhooks arriving together) each wait for
// the other's transitions, and the other's may wait for this webhook's
// opening of the incident (a join answered busy) — waiting before sending
// held both until in_flight_wait and answered both 5xx.
func (p *Pipeline) awaitLost(ctx context.Context, l *lostClaims, sum *alert.Summary) error {
	if l == nil {
		return nil
	}
	lost := l.trs
	var done []bool
	if ctx.Err() == nil {
		var err error
		done, err = p.leases().Await(ctx, l.markers, func(i int, marker string) bool {
			return p.notified(lost[i], marker)
		})
		if err != nil && ctx.Err() == nil {
			p.countStoreError("read claims", err)
		}
	} else {
		// This webhook's own sends took its time (a slow PagerDuty): no
		// wait is left, and a read with a context already done would be
		// counted as a store outage. The lost transitions stay unconfirmed.
		done = make([]bool, len(lost))
	}
	failed := 0
	for i, t := range lost {
		if done[i] {
			p.countDedup(dedupHit, sum)
			t.record(alert.DeliveryDeduplicated, nil, 0, 0)
			continue
		}
		failed++
		p.countDedup(dedupInFlight, nil)
		t.record(alert.DeliveryInFlight, nil, 0, 0)
	}
	if failed == 0 {
		return nil
	}
	sum.Failed += failed
	msg := fmt.Sprintf("%d notification(s) are being sent by another replica and not confirmed yet (or held by a claim whose sender gave up on the store: released once the store answers that sender, else expiring after dedup.claim_ttl; or by a send whose outcome is unknown — it may have been made —, held until dedup.claim_ttl); retry", failed)
	sum.Errors = append(sum.Errors, msg)
	// A replica killed mid-send holds its claims until claim_ttl: every
	// retry of those alerts is answered 5xx meanwhile, and the next change
	// of their Alertmanager groups waits behind them. Said once per 30 s.
	p.shared().storeLogs.Log(ctx, p.Logger, slog.LevelWarn, "claimed-elsewhere",
		"answering 5xx: notifications claimed by another sender are not confirmed; if that replica died mid-send, or a send of them had an unknown outcome, they are held until dedup.claim_ttl, and Alertmanager's retries of them (and their groups' next changes) wait until then",
		"transitions", failed, "claim_ttl", p.Dedup.ClaimTTL.String(), "incident", lost[0].incident)
	return &alert.DeliveryError{Retryable: true, Errs: []error{errors.New(msg)}}
}

// notified reports whether marker, the value now at t's marker key, says
// that t was notified: the transition function finds nothing left to send.
func (p *Pipeline) notified(t *transition, marker string) bool {
	return dedup.Transition(p.input(t, marker, true, false, p.now())).Verdict == dedup.Skip
}

type batchKey struct {
	receiver, integ, incident string
	kind                      alert.Kind
}

// group groups transitions (only the won ones, or all) into batches, one
// per receiver, integration, incident and kind, in payload order, without
// their notifications.
func (p *Pipeline) group(trs []*transition, wonOnly bool) []*batch {
	index := map[batchKey]*batch{}
	var out []*batch
	for _, t := range trs {
		if wonOnly && !t.won {
			continue
		}
		k := batchKey{t.receiver, t.integ.Name, t.incident, t.kind}
		b := index[k]
		if b == nil {
			b = &batch{receiver: t.receiver, integ: t.integ, incident: t.incident, kind: t.kind}
			b.skip = t.kind == alert.KindResolved && !t.integ.SendResolved && t.integ.Notifier != nil
			index[k] = b
			out = append(out, b)
		}
		b.trs = append(b.trs, t)
	}
	return out
}

// notifications builds the notification of every batch; results are the
// webhook's alerts (alert.Notification.Webhook).
func (p *Pipeline) notifications(msg *alert.Message, batches []*batch, results []*alert.Result) {
	// The batches of each incident, indexed on the first resolve drawn as
	// a page: scanning every batch for each made a resolve of 11,000
	// incidents outlast the webhook's time (an audit).
	var byIncident map[string][]*batch
	for _, b := range batches {
		b.n = notification(msg, b)
		b.n.Webhook = results
		if p.ConsoleURL != nil {
			b.n.ConsoleURL = p.ConsoleURL(b.incident)
		}
		if b.n.ShownAction() == alert.ActionPage {
			b.n.PagedAt = p.pagedAt(b.receiver, b.n.Results)
			if b.kind == alert.KindResolved {
				// A resolve drawn as the page it was names the PagerDuty
				// its resolve goes to in this webhook: decided ticket
				// again, its own routes reach none (a review).
				if byIncident == nil {
					byIncident = make(map[string][]*batch)
					for _, o := range batches {
						byIncident[o.incident] = append(byIncident[o.incident], o)
					}
				}
				for _, o := range byIncident[b.incident] {
					if o.kind != b.kind || !o.integ.silentUpdates() {
						continue
					}
					if at := o.receiver + "/" + o.integ.Name; !slices.Contains(b.n.PagedAt, at) {
						b.n.PagedAt = append(b.n.PagedAt, at)
					}
				}
			}
			b.n.Paged = len(b.n.PagedAt) > 0
		}
	}
}

// pagedAt are the "receiver/integration" of the first integration holding
// incidents (PagerDuty) of each receiver results were routed to that has
// one, receiver's first (nil: none; alert.Notification.PagedAt).
func (p *Pipeline) pagedAt(receiver string, results []*alert.Result) []string {
	var out []string
	add := func(name string) {
		integs := p.Receivers[name]
		for i := range integs {
			if integs[i].silentUpdates() {
				if at := name + "/" + integs[i].Name; !slices.Contains(out, at) {
					out = append(out, at)
				}
				return
			}
		}
	}
	add(receiver) // the notification is receiver's: its alerts were routed there
	for _, r := range results {
		for _, name := range r.Receivers {
			add(name)
		}
	}
	return out
}

// settleGrace is how long deliver waits, after a send completes, for the
// webhook's other sends before settling what has completed: sends that end
// within it of each other share one store round trip, and a slow one delays
// the confirmation of the others by no more than this.
const settleGrace = 10 * time.Millisecond

// deliver sends every batch concurrently (at most 16 at a time per kind of
// integration) — each
// integration has its own time budget and retries, so a slow PagerDuty
// never delays Slack — and settles the batches as they complete: once
// every send has completed, or settleGrace after the first unsettled one
// did, whichever comes first; what completes while a settle is written
// goes into the next one. So a fast integration is confirmed while a slow
// one is still sending (a replica killed during the slow send never resends
// the fast one), and a webhook whose sends complete together costs one
// settle.
func (p *Pipeline) deliver(ctx context.Context, batches []*batch, leases []*incidentLease, token string, in *inbound, sum *alert.Summary, group string) error {
	p.handMarksAfterJoin(ctx, leases)
	for _, b := range batches {
		p.reopenHandResolved(b)
		p.retrigger(b)
	}
	foldReminders(batches)
	markRepaged(batches) // before any send: Slack's may run beside PagerDuty's
	// The incidents this webhook sends no update to need not wait for it.
	in.keep(func(k incidentKey) bool {
		return slices.ContainsFunc(batches, func(b *batch) bool { return incidentKeyOf(b) == k && waitsForUpdates(b) })
	})
	for _, b := range batches {
		b.in = in
	}
	leaseOf := map[*batch]*incidentLease{}
	open := map[*incidentLease]int{}
	for _, l := range leases {
		for _, b := range append(append([]*batch(nil), l.joins...), l.leaves...) {
			leaseOf[b] = l
			open[l]++
		}
	}
	done := make(chan *batch, len(batches))
	// One semaphore per kind of integration: a page's PagerDuty send
	// waited behind a hundred tickets' Slack posts of the same webhook,
	// which a hanging Slack held until the webhook's deadline — the page
	// never sent, on every retry (an audit).
	sems := map[string]chan struct{}{}
	var pages sloPagesWritten
	// spawn runs work for b in a goroutine, at most 16 at a time per kind
	// of integration, and hands b to the settles when it is done.
	spawn := func(b *batch, work func()) {
		kind, _, _ := strings.Cut(b.integ.Name, "/")
		sem := sems[kind]
		if sem == nil {
			sem = make(chan struct{}, 16)
			sems[kind] = sem
		}
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			work()
			done <- b
		}()
	}
	for _, b := range batches {
		switch u, ok := b.integ.Notifier.(alert.UnsentResolves); {
		case ok && b.err == nil && b.skip && b.n.IncidentResolved:
			// Not sent, but the notifier has its own work to do at the
			// incident's resolve (Slack: the escalation's PagerDuty).
			spawn(b, func() {
				if err := p.notifyWith(ctx, b, func(ctx context.Context) error { return u.ResolvedUnsent(ctx, b.n) }); err != nil {
					b.fail(fmt.Errorf("notify %s/%s (incident %s, unsent resolve): %w", b.receiver, b.integ.Name, b.incident, err))
				}
			})
		case b.err != nil || b.skip:
			done <- b
		case silentUpdate(b):
			// Its notifier sends nothing and returns at once: no goroutine.
			p.send(ctx, b)
			done <- b
		default:
			spawn(b, func() { p.send(ctx, b) })
		}
	}
	var errs []error
	wait := settleGrace
	if p.settleGrace > 0 {
		wait = p.settleGrace
	}
	var grace *time.Timer
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	for remaining := len(batches); remaining > 0; {
		ready := []*batch{<-done}
		remaining--
		if remaining > 0 {
			if grace == nil {
				grace = time.NewTimer(wait)
			} else {
				grace.Reset(wait)
			}
		}
	gather:
		for remaining > 0 {
			select {
			case b := <-done:
				ready = append(ready, b)
				remaining--
			case <-grace.C:
				break gather
			}
		}
		var settled []*incidentLease
		for _, b := range ready {
			if l := leaseOf[b]; l != nil {
				if open[l]--; open[l] == 0 {
					settled = append(settled, l)
				}
			}
		}
		if err := p.settle(ctx, ready, settled, token, &pages, sum, group); err != nil {
			errs = append(errs, err)
		}
	}
	return joinDeliveryErrors(errs...)
}

// reopenHandResolved turns b — new alerts joining an open incident, at an
// integration that sends nothing for updates (PagerDuty) — into an opening
// when someone resolved the incident by hand there (the Resolve button in
// Slack) while it still fired: PagerDuty's incident is closed, and the
// alerts joining it would otherwise never page. Only b's own integration's
// mark counts (tagHandResolved): another receiver's resolve of the same
// incident key is another team's page. Replicas that do this at once send
// the same trigger (one dedup_key): PagerDuty opens one incident.
func (p *Pipeline) reopenHandResolved(b *batch) {
	if b.err != nil || b.skip || b.kind != alert.KindFiring {
		return
	}
	if b.n != nil && b.n.Opening && b.integ.silentUpdates() {
		// A new episode's trigger: a mark of an earlier one is spent — left,
		// it would hold back this episode's reminders (pending's
		// skipHandResolvedReminders).
		for _, t := range b.trs {
			if t.handEpisode {
				// The page resolved by hand opens again (its alert
				// fired anew, pending's handResolvedEpisode): the
				// incident's other integrations say it was paged again
				// (markRepaged).
				b.reopen = append(b.reopen, t.handMarks...)
				continue
			}
			b.spent = append(b.spent, t.handMarks...)
		}
		return
	}
	if !silentUpdate(b) {
		return
	}
	for _, t := range b.trs {
		if t.handResolved != "" {
			b.n.Opening = true
			p.Logger.Info("new alerts joined an incident resolved by hand in PagerDuty while it fired: triggering it again",
				"receiver", b.receiver, "integration", b.integ.Name, "incident", b.incident, "resolved_by", t.handResolved)
			b.reopen = t.handMarks
			return
		}
	}
	for _, t := range b.trs {
		if t.handResolving {
			// The resolve clicked in Slack is on its way: folded into the
			// page it closes, these alerts would never page. Alertmanager's
			// retry finds the resolve done and triggers PagerDuty again.
			b.fail(fmt.Errorf("notify %s/%s (incident %s): the incident is being resolved by hand in PagerDuty from Slack; these new alerts page once the resolve is done (Alertmanager's retry)", b.receiver, b.integ.Name, b.incident))
			return
		}
	}
}

// joinHandKeys are the hand-resolve marks (handResolvedKeysOf) of the
// transitions of a Join's batches that mayReopen, each once: read again
// once the Join is applied (handMarksAfterJoin).
func joinHandKeys(prefix string, bs []*batch) []string {
	var out []string
	for _, b := range bs {
		for _, t := range b.trs {
			if !mayReopen(t) {
				continue
			}
			for _, k := range handResolvedKeysOf(prefix, t) {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// handMarksAfterJoin tags the transitions of the new alerts joining an
// open incident at an integration that sends nothing for updates
// (PagerDuty) with the hand-resolve marks as they were once their Join was
// applied, over those pending read before it: a Resolve clicked in Slack
// whose "resolving" mark was written between the two — the alerts read no
// mark, then joined the page the resolve closes — was never paged (a
// review, 0–10 ms after the click). The marks read after the Join see
// every click that wrote its mark before it; a click that writes its mark
// after the Join finds these alerts among the incident's members
// (Slack's Resolve checks). Read with the Join's own round trip
// (claimAndLease: store.ClaimedOp.After); a Join applied in a later try
// (another sender held the incident) reads them in one more. A read that
// fails keeps pending's tags.
func (p *Pipeline) handMarksAfterJoin(ctx context.Context, leases []*incidentLease) {
	var late []*incidentLease
	var keys []string
	for _, l := range leases {
		if l.joined && len(l.handKeys) > 0 && l.handRead == nil {
			late = append(late, l)
			keys = append(keys, l.handKeys...)
		}
	}
	if len(late) > 0 {
		values, found, err := p.Store.Get(ctx, keys)
		if err != nil {
			p.countStoreError("read the hand-resolve marks after the joins", err)
		} else {
			o := 0
			for _, l := range late {
				n := len(l.handKeys)
				l.handRead = &store.AfterRead{Values: values[o : o+n], Found: found[o : o+n]}
				o += n
			}
		}
	}
	now := p.now()
	for _, l := range leases {
		if l.handRead == nil {
			continue
		}
		for _, b := range l.joins {
			if b.err != nil || b.skip || b.kind != alert.KindFiring || !silentUpdate(b) {
				continue
			}
			for _, t := range b.trs {
				t.handResolved, t.handResolvedAt, t.handMarks, t.handResolving = "", time.Time{}, nil, false
			}
			tagHandResolved(p.Dedup.KeyPrefix, b.trs, l.handKeys, l.handRead.Values, l.handRead.Found, now)
		}
	}
}

// markRepaged flags (alert.Notification.Repaged) the firing notifications
// of every incident that reopenHandResolved turned into a new PagerDuty
// trigger in this webhook — the incident's other integrations, Slack's
// thread and parent among them, whose parent still says the incident was
// resolved in PagerDuty — that carry alerts routed to the receiver paged
// again: one incident key holds the alerts of several teams, and another
// team was not paged again. Only this webhook's batches are known here: an
// update of the incident that reaches Slack in another webhook (the
// incident's alerts split over several of Alertmanager's groups) is not
// flagged. The flag is set before the sends: should PagerDuty's trigger
// fail, Slack has said it was paged, and the webhook's 5xx has
// Alertmanager's retry send the trigger again.
func markRepaged(batches []*batch) {
	for _, r := range batches {
		if len(r.reopen) == 0 {
			continue
		}
		for _, b := range batches {
			if b.incident == r.incident && len(b.reopen) == 0 && b.kind == alert.KindFiring && b.n != nil && b.err == nil && !b.skip && routedTo(b, r.receiver) {
				b.n.Repaged = true
			}
		}
	}
}

// routedTo reports whether any of b's alerts was routed to receiver.
func routedTo(b *batch, receiver string) bool {
	for _, t := range b.trs {
		if slices.Contains(t.res.Receivers, receiver) {
			return true
		}
	}
	return false
}

// send delivers one batch to its integration; an update of an open
// incident may share its send with other webhooks' (coalesce.go).
func (p *Pipeline) send(ctx context.Context, b *batch) {
	if b.integ.Notifier == nil {
		b.fail(alert.Permanent(fmt.Errorf("receiver %q has no notifier", b.receiver)))
		return
	}
	b.sent = true
	start := time.Now()
	ctx = alert.CountAttempts(ctx, &b.retries)
	var err error
	if waitsForUpdates(b) {
		err = p.updates.send(ctx, b, p.UpdateWindow, func(ctx context.Context, n *alert.Notification) error { return p.notify(ctx, b, n) }, p.countCoalesced)
	} else {
		err = p.notify(notify.WithGroup(ctx, b.group), b, b.n)
	}
	if err != nil {
		b.fail(fmt.Errorf("notify %s/%s (incident %s, %s): %w", b.receiver, b.integ.Name, b.incident, b.kind, err))
	}
	b.latency = time.Since(start)
	if p.Metrics != nil {
		p.Metrics.sendDuration.WithLabelValues(alert.IntegrationType(b.integ.Name)).Observe(b.latency.Seconds())
	}
}

// notify sends n through b's integration, a panic turned into a permanent
// failure of n: logged with its stack, counted
// (alertrouter_notifier_panics_total), released and dead-lettered like any
// permanent failure, the webhook answered 5xx. A notifier bug that one
// payload triggers must not crash the router: every webhook in flight would
// fail with it, and Alertmanager, retrying the same payload, would crash
// every replica in turn — no page would go out at all.
func (p *Pipeline) notify(ctx context.Context, b *batch, n *alert.Notification) (err error) {
	return p.notifyWith(ctx, b, func(ctx context.Context) error { return b.integ.Notifier.Notify(ctx, n) })
}

// notifyWith runs send, a call into b's notifier, a panic turned into a
// permanent failure as notify says.
func (p *Pipeline) notifyWith(ctx context.Context, b *batch, send func(ctx context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			p.Logger.Error("notifier panicked: the notification failed (a bug: please report it with this stack)",
				"receiver", b.receiver, "integration", b.integ.Name, "incident", b.incident, "kind", string(b.kind),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			if p.Metrics != nil {
				p.Metrics.notifierPanics.WithLabelValues(b.receiver, alert.IntegrationType(b.integ.Name)).Inc()
			}
			err = alert.Permanent(fmt.Errorf("notifier panicked: %v", r))
		}
	}()
	return send(ctx)
}

// waitsForUpdates reports whether b goes out through the coalescer: an
// update its integration sends (a silent update has nothing to gather).
func waitsForUpdates(b *batch) bool {
	return b.err == nil && !b.skip && coalescible(b) && !silentUpdate(b)
}

// silentUpdate reports whether b is an update of an open incident that its
// integration sends nothing for (alert.SilentUpdates: PagerDuty; a reminder
// is sent).
func silentUpdate(b *batch) bool {
	return coalescible(b) && b.kind != alert.KindReminder && b.integ.silentUpdates()
}

// silentUpdates reports whether the integration sends nothing for updates
// of an open incident (alert.SilentUpdates: PagerDuty).
func (i *Integration) silentUpdates() bool {
	s, ok := i.Notifier.(alert.SilentUpdates)
	return ok && s.SilentUpdates()
}

// settleTimeout bounds the store writes after the sends; they run detached
// from the request, so a client hang-up or an expired webhook deadline
// never leaves a delivered notification unconfirmed.
const settleTimeout = 5 * time.Second

// settle confirms the delivered transitions of batches and the incident
// steps of leases, and releases the failed ones so Alertmanager's retry
// sends exactly what is missing. Its writes (confirmations, releases,
// incident steps, SLO page sets) go to the store together, one round trip
// (store.Write); a part that fails is handed to Deferred (retried in the
// background) and counted.
func (p *Pipeline) settle(ctx context.Context, batches []*batch, leases []*incidentLease, token string, pages *sloPagesWritten, sum *alert.Summary, group string) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	now := p.now()
	var markers, release []store.Entry
	var incOps []store.IncidentOp
	var failures []error
	retryable := false
	for _, b := range batches {
		if b.err != nil {
			// A post that most likely was made (notify.OutcomeUnknownHeld:
			// sent, no answer) keeps its claims until dedup.claim_ttl:
			// Alertmanager's retries within it wait and fail (in flight)
			// instead of posting again — a Slack webhook answering after the
			// router's timeout drew one ticket 28 times in 87 s in an audit,
			// a message per retry. Once the claims expire a retry posts it
			// again.
			unknown := notify.HoldsClaims(b.err)
			for _, t := range b.trs {
				t.record(alert.DeliveryFailed, b.err, b.latency, b.attempts())
				if t.held && !unknown {
					release = append(release, store.Entry{Key: t.claim, Value: token})
				}
			}
			failures = append(failures, b.err)
			if p.DeadLetters != nil && !alert.Retryable(b.err) {
				p.DeadLetters.DeadLetter(b.n, alert.WithAttempts(b.err, b.attempts()))
			}
			sum.Failed += len(b.trs)
			sum.Errors = append(sum.Errors, b.err.Error())
			retryable = retryable || alert.Retryable(b.err)
			msg, level := "notification failed; claim released so Alertmanager's retry sends it", slog.LevelError
			class := logthrottle.ErrorClass(b.err)
			switch {
			case errors.Is(b.err, errResolveHeld):
				// Not a delivery failure: nothing was sent (failOpenIncidents).
				msg, level = "resolve held until the store answers: whether it closes its incident cannot be read; answered 503 so Alertmanager retries it", slog.LevelWarn
			case errors.Is(b.err, errIncidentBusy):
				// Not a delivery failure either: a send of its incident
				// (this replica's or another's) is still unconfirmed.
				msg, level, class = "notification waits for its incident's send in progress (this replica's or another's), unconfirmed after dedup.in_flight_wait: not sent, claim released, answered 5xx so Alertmanager retries it", slog.LevelWarn, "incident busy"
			case unknown:
				msg = "notification failed with an unknown outcome (it may have been posted); claim kept until dedup.claim_ttl, so Alertmanager's retries within it do not post it again"
			case !alert.Retryable(b.err):
				msg = "notification failed for good (a retry cannot help: fix the integration, then replay the dead letter); claim released"
			}
			if level == slog.LevelError && b.sent {
				p.shared().health.failed(b.receiver, b.integ.Name, now, b.err)
			}
			p.shared().deliveryLogs.Log(ctx, p.Logger, level, fmt.Sprintf("deliver:%s/%s:%t:%s", b.receiver, b.integ.Name, alert.Retryable(b.err), class),
				msg, "receiver", b.receiver,
				"integration", b.integ.Name, "incident", b.incident, "kind", string(b.kind), "retryable", alert.Retryable(b.err), "err", b.err)
			continue
		}
		// A batch sent nothing when skipped (send_resolved: false) or an
		// update its integration folds into the open incident (PagerDuty):
		// suppressed, not sent — the journal, the console and the answer
		// say what reached the integration.
		folded := b.skip || silentUpdate(b)
		outcome := alert.DeliverySent
		if folded {
			outcome = alert.DeliverySuppressed
		} else {
			p.shared().health.delivered(b.receiver, b.integ.Name, now, p.Logger)
		}
		attempts := b.attempts()
		if folded {
			attempts = 0
		}
		if b.n.IncidentResolved && !folded && !b.unheld && drawsIncidents(b) {
			// The incident's resolve is drawn: resolves of it the store
			// no longer holds draw nothing more (unheldResolves).
			markers = append(markers, store.Entry{Key: p.resolveDrawnKey(b), Value: token, TTL: unheldResolveTTL})
		}
		for _, t := range b.trs {
			d := t.record(outcome, nil, b.latency, attempts)
			d.Closed, d.Repaged = b.n.IncidentResolved, (b.n.Repaged || t.handResolved != "") && !folded
			m := dedup.Marker{Tier: t.tier, At: now, Incident: t.incident, Resolved: t.kind == alert.KindResolved}
			markers = append(markers, store.Entry{Key: t.marker, Value: m.String(), TTL: p.Dedup.NotifiedTTL})
			p.countDedup(dedupMiss, nil)
		}
		if folded {
			sum.Suppressed += len(b.trs)
		} else {
			sum.Notified += len(b.trs)
		}
	}
	for _, l := range leases {
		incOps = append(incOps, incidentSettleOps(l, token, p.Dedup.NotifiedTTL)...)
	}
	p.settledRefs(leases)
	// A hand-resolved incident triggered again: clear its mark (failing,
	// the next update triggers once more; PagerDuty folds it in).
	clears := slices.Clip(release) // appending copies: release is counted below
	for _, b := range batches {
		if b.err == nil {
			clears = append(clears, b.reopen...)
			clears = append(clears, b.spent...)
		}
	}
	add, remove := p.sloPageWrites(batches, *pages)
	removals := remove
	if p.ForgetsUnsent && group != "" && len(failures) == 0 {
		// Delivered: the group's last webhook answered 5xx is Alertmanager's
		// to resolve again (Pipeline.ForgetsUnsent).
		removals = append(slices.Clip(remove), store.Members{Key: dedup.UnsentKey(p.Dedup.KeyPrefix), Members: []string{group}})
	}
	errs := store.Write(wctx, p.Store, store.Writes{Set: markers, Release: clears, Incidents: incOps, Add: add, Remove: removals})
	if errs.Set != nil {
		p.settleFailed("confirm notified transitions", errs.Set, len(markers),
			"a retry or a replica may send these notifications again", func(d *dedup.Deferred) { d.Set(markers) })
	}
	if errs.Release != nil {
		op, n, risk := "release failed claims", len(release), "Alertmanager's retry waits for the claims to expire (claim_ttl)"
		if n == 0 {
			op, n, risk = "clear hand-resolved marks", len(clears), "the incident's next update triggers PagerDuty once more (folded into the open incident)"
		}
		p.settleFailed(op, errs.Release, n, risk, func(d *dedup.Deferred) { d.DeleteIfEqual(clears) })
	}
	if errs.Incidents != nil {
		p.settleFailed("settle incident state", errs.Incidents, len(incOps), incidentSettleRisk(incOps),
			func(d *dedup.Deferred) { d.Incidents(incOps) })
	}
	pages.note("+", add, errs.Add)
	pages.note("-", remove, errs.Remove)
	if err := errors.Join(errs.Add, errs.Remove); err != nil {
		p.countStoreError("record SLO pages", err)
	}
	for range release {
		p.countDedup(dedupReleased, nil)
	}
	if len(failures) > 0 {
		return &alert.DeliveryError{Retryable: retryable, Errs: failures}
	}
	return nil
}

// incidentSettleRisk is what a failed write of the incident steps ops
// risks: an opening's or closing's lease expires, and its next firing
// opens it again; a retrigger's settle alone (Triggered, Untrigger: a
// review found the lease's words false for it) holds other webhooks' new
// alerts of the incident (5xx) until it lands or the take's lease ends,
// when the take counts as given back and one more trigger may follow.
func incidentSettleRisk(ops []store.IncidentOp) string {
	for _, op := range ops {
		if op.Step != store.StepTriggered && op.Step != store.StepUntrigger {
			return "the incident's lease expires and its next firing opens it again"
		}
	}
	return "other webhooks' new alerts of the incident are answered 5xx until it lands or the retrigger's lease ends; the retrigger then counts as given back, and one more PagerDuty trigger may follow"
}

// settleFailed reports a write after the sends that failed: what it risks,
// and hands it to Deferred to retry when the store answers again.
func (p *Pipeline) settleFailed(op string, err error, n int, risk string, retry func(*dedup.Deferred)) {
	if p.Metrics != nil {
		p.Metrics.settleErrors.WithLabelValues(op).Inc()
	}
	deferred := p.Deferred != nil
	if deferred {
		retry(p.Deferred)
	}
	p.shared().storeLogs.Log(context.Background(), p.Logger, slog.LevelError, "settle:"+op+":"+logthrottle.ErrorClass(err), "store write after delivery failed: "+risk, "op", op, "items", n, "retried_in_background", deferred, "err", err)
}
