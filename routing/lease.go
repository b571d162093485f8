package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// incidentLease is one incident at one integration as this webhook touches
// it: the batches whose alerts join it (firing, reminders) and those whose
// alerts leave it (resolves), and what its store steps answered.
type incidentLease struct {
	key            string
	joins, leaves  []*batch
	joined, left   bool // the step was applied in the store
	opening        bool // this sender holds the opening lease
	closing        bool // this sender holds the resolving lease
	added, members []store.Member
	ref            string // the reference the store kept at the join
	// trigger is the incident's trigger time the Join took for a
	// retrigger (store.IncidentResult.Retriggered; "" none), prevTrigger
	// the one it replaced: given back (StepUntrigger) when no trigger of
	// the incident was delivered.
	trigger, prevTrigger string
	// keepOpen says the webhook's resolves may not close the incident:
	// Alertmanager truncated it (max_alerts), so alerts of the incident the
	// router never saw may fire on (keepsOpen), or the webhook carries a
	// firing alert of it (heldOpen). Its
	// resolves leave with StepUnjoin, which takes no resolving lease.
	keepOpen bool
	// group names the webhook's Alertmanager group (alert.Message.GroupID),
	// which the incident's steps record (store.IncidentOp.Group).
	group string
	// restored are the members the Leave left that may have resolved while
	// Redis lost writes (store.IncidentResult.Restored: leaveRestored).
	restored []string
	// handKeys are the hand-resolve marks of the joins' transitions
	// (joinHandKeys), handRead what they held once the Join was applied
	// (nil: not read yet; handMarksAfterJoin).
	handKeys []string
	handRead *store.AfterRead
}

func (p *Pipeline) incidentKey(b *batch) string {
	return store.IncidentKey(p.Dedup.KeyPrefix, b.incident, b.receiver+"/"+b.integ.Name)
}

// members are the incident members of bs' alerts: fingerprint, start and,
// for a resolved alert whose endsAt Alertmanager sent, its end (a Leave
// keeps a member that started after it: store.Member).
func members(bs []*batch) []store.Member {
	var out []store.Member
	for _, b := range bs {
		for _, t := range b.trs {
			a := t.res.Alert
			m := store.Member{Fingerprint: a.Fingerprint, StartsAt: strconv.FormatInt(a.IdentityStart().UnixMilli(), 10)}
			if !a.Firing() && !a.EndsAt.IsZero() {
				m.EndsAt = strconv.FormatInt(a.EndsAt.UnixMilli(), 10)
			}
			out = append(out, m)
		}
	}
	return out
}

// leaseIncidents applies each touched incident's Join (before its Leave, so
// an incident gaining and losing members in one payload stays open) and
// tells each batch whether it opens the incident
// (Opening: PagerDuty triggers, Slack posts the parent) or closes it
// (IncidentResolved), with the reference the incident keeps. An incident
// another sender is opening or resolving is waited for (in_flight_wait),
// then its batches fail so Alertmanager retries them. Store down: fail open
// (firings open or update their incidents, partial resolves update them —
// their Leaves replayed into the store by Deferred once it answers —, a
// resolve that would close its incident fails, retryable:
// failOpenIncidents) or fail closed (every batch fails). leases are the batches' incidents
// (incidentLeases); first, when set, answers the first try: the steps
// claimAndLease sent with the claims; every later try is one round trip.
// results are the webhook's alerts (failOpenIncidents reads them).
func (p *Pipeline) leaseIncidents(ctx context.Context, batches []*batch, leases []*incidentLease, results []*alert.Result, token string, sum *alert.Summary, first *stepAnswers) []*incidentLease {
	if len(leases) == 0 {
		return nil
	}
	pending := slices.Clone(leases)
	done := func() bool {
		pending = slices.DeleteFunc(pending, func(l *incidentLease) bool { return len(l.pendingSteps()) == 0 })
		return len(pending) == 0
	}
	err := dedup.Poll(ctx, p.Dedup.InFlightWait, func(ctx context.Context) (bool, error) {
		if first != nil {
			// The first try's answers came with the claims.
			f := first
			first = nil
			if f.err != nil {
				return false, f.err
			}
			for _, l := range pending {
				f.apply(l)
			}
			return done(), nil
		}
		var ops []store.IncidentOp
		var owners []*incidentLease
		for _, l := range pending {
			for _, st := range l.pendingSteps() {
				ops = append(ops, p.stepOp(ctx, l, st, token))
				owners = append(owners, l)
			}
		}
		res, err := p.Store.Incidents(ctx, ops)
		if err != nil {
			return false, err
		}
		for i, r := range res {
			owners[i].apply(ops[i].Step, r)
		}
		return done(), nil
	})
	if err != nil {
		if ferr := p.storeFailed(ctx, "update incidents", err, sum); ferr != nil {
			for _, b := range batches {
				b.fail(ferr)
			}
			return leases
		}
		p.failOpenIncidents(pending, results, token, err)
		return leases
	}
	p.leaveRestored(ctx, leases, token)
	p.noteRefs(leases)
	for _, l := range pending {
		for _, b := range append(l.joins, l.leaves...) {
			b.fail(fmt.Errorf("incident %s is being opened, resolved or triggered again at %s/%s by a send not confirmed yet (this replica's or another's): %w", b.incident, b.receiver, b.integ.Name, errIncidentBusy))
		}
	}
	return leases
}

// errIncidentBusy marks a batch that waited in_flight_wait in vain for
// its incident's send in progress to be confirmed: not a delivery failure
// (nothing was sent), answered 5xx so Alertmanager retries it. An audit:
// logged as "notification failed … by another sender", these waits made
// most of a PagerDuty outage's error lines on a single replica, pointing
// on-call at a second replica instead of PagerDuty.
var errIncidentBusy = errors.New("retry once it is confirmed")

// leaseStep is one of an incident lease's steps: the batches whose alerts
// join the incident, or leave it.
type leaseStep struct {
	step    store.IncidentStep
	batches []*batch
}

// pendingSteps are l's steps not applied in the store yet, its Join before
// its Leave.
func (l *incidentLease) pendingSteps() []leaseStep {
	var out []leaseStep
	if len(l.joins) > 0 && !l.joined {
		out = append(out, leaseStep{store.StepJoin, l.joins})
	}
	if len(l.leaves) > 0 && !l.left {
		out = append(out, leaseStep{l.leaveStep(), l.leaves})
	}
	return out
}

// leaveStep is the step l's resolves leave the incident with: Leave, or
// Unjoin when they may not close it (keepOpen).
func (l *incidentLease) leaveStep() store.IncidentStep {
	if l.keepOpen {
		return store.StepUnjoin
	}
	return store.StepLeave
}

// keepsOpen reports whether msg's resolves may not close an incident:
// Alertmanager truncated it (max_alerts: the first alerts of its group in
// its label order). The alerts left out may fire and belong to the
// incidents this webhook's resolves would empty, and Alertmanager counts
// them as notified: it sends them again only when the group changes or at
// its repeat_interval. The webhook's status says nothing of them:
// Alertmanager computes it from the alerts it sends (notify/webhook
// truncates before it builds the template data), so a truncated webhook
// whose alerts all resolved says "resolved" while the alerts it left out
// fire. Such an incident stays open without members until an alert of it
// resolves in a webhook that says all it holds, or its state expires; its
// alerts joining meanwhile page no one again.
func keepsOpen(msg *alert.Message) bool {
	return msg.TruncatedAlerts > 0
}

// openBy says which incidents a webhook's resolves may not close (their
// leases take incidentLease.keepOpen).
type openBy struct {
	// truncated: none (keepsOpen).
	truncated bool
	// firing: the incident at the receiver a firing alert of the webhook
	// is routed to — delivered now or deduplicated.
	firing map[incidentAt]bool
}

// incidentAt is an incident at one receiver.
type incidentAt struct{ incident, receiver string }

// heldOpen returns what msg's resolves may not close: every incident when
// Alertmanager truncated it (keepsOpen), and an incident at a receiver to
// which the webhook routes a firing alert of that incident, whatever the
// store says of its members. The store's incident state can be lost while
// the markers survive — a Redis evicting keys when full (the markers, read
// by every repeat, stay recently used while the incident hashes are
// evicted), a restart from an older snapshot: the resolve of one alert then
// found no member left and closed the incident, and PagerDuty was resolved
// while another alert of it, in the same webhook, still fired (its repeats
// deduplicated, nobody paged until a reminder). Muted and suppressed
// alerts are left out: never delivered, they were never members.
func heldOpen(msg *alert.Message, results []*alert.Result) openBy {
	o := openBy{truncated: keepsOpen(msg)}
	if o.truncated || !slices.ContainsFunc(results, func(r *alert.Result) bool { return !r.Alert.Firing() }) {
		return o // nothing to close, or nothing closes
	}
	for _, r := range results {
		if !deliveredFiring(r) {
			continue
		}
		for _, recv := range r.Receivers {
			if o.firing == nil {
				o.firing = map[incidentAt]bool{}
			}
			o.firing[incidentAt{r.Incident, recv}] = true
		}
	}
	return o
}

// keeps reports whether b's resolves may not close its incident.
func (o openBy) keeps(b *batch) bool {
	return o.truncated || o.firing[incidentAt{b.incident, b.receiver}]
}

// stepOp is the store step that applies st to l's incident for token. A
// Join bringing new firing alerts to an integration that sends nothing for
// updates (PagerDuty) asks for a retrigger (retrigger.go).
func (p *Pipeline) stepOp(ctx context.Context, l *incidentLease, st leaseStep, token string) store.IncidentOp {
	op := store.IncidentOp{Key: l.key, Step: st.step, Members: members(st.batches), Token: token, Lease: p.leaseTTL(ctx), TTL: p.Dedup.NotifiedTTL, Group: l.group}
	if st.step == store.StepJoin && p.RetriggerInterval > 0 && slices.ContainsFunc(st.batches, mayRetrigger) {
		op.Retrigger = p.retriggerInterval()
	}
	return op
}

// retriggerInterval is RetriggerInterval less retriggerSlack, or less
// within it of the store's new run (StoreLife): the time since that run
// began, so that an incident last triggered before it — possibly resolved
// in PagerDuty since, its resolve lost with the store's newest writes — is
// due, and one triggered since is not.
func (p *Pipeline) retriggerInterval() time.Duration {
	interval := p.RetriggerInterval - retriggerSlack(p.RetriggerInterval)
	if p.StoreLife == nil {
		return interval
	}
	life := p.StoreLife()
	if life.IsZero() {
		return interval
	}
	if since := p.now().Sub(life); since < interval {
		return max(since, time.Millisecond)
	}
	return interval
}

// retriggerSlack is how much earlier than interval a retrigger is due: a
// twentieth of it, at most 30 s. Alertmanager sends a group's new alerts
// every group_interval, counted from its previous flush, so with
// retrigger_interval equal to it (both 5m by default) the next flush lands
// a few milliseconds short of the interval the router counts from its own,
// later, stamp of that trigger — not due, and the alert it brings went
// unpaged in an incident resolved in PagerDuty (an audit).
func retriggerSlack(interval time.Duration) time.Duration {
	return min(interval/20, 30*time.Second)
}

// stepKey names one incident step of a webhook: an incident at one
// integration joins or leaves once per webhook.
type stepKey struct {
	key  string
	step store.IncidentStep
}

// stepAnswers are incident steps already answered (with the claims,
// claimAndLease): the first try of leaseIncidents.
type stepAnswers struct {
	err     error
	results map[stepKey]store.IncidentResult
	// after holds what a Join's hand-resolve marks read once it was
	// applied (store.ClaimedOp.After), with the keys read.
	after map[stepKey]afterRead
}

// afterRead is what keys held once a Join was applied.
type afterRead struct {
	keys []string
	read store.AfterRead
}

// apply applies to l the answers of its steps; a step the answers lack, or
// left without members (a claim the store saw lost), stays pending.
func (a *stepAnswers) apply(l *incidentLease) {
	for _, st := range l.pendingSteps() {
		k := stepKey{l.key, st.step}
		if r, ok := a.results[k]; ok && r.Outcome != store.OutcomeSkipped {
			l.apply(st.step, r)
			// Only the marks of l's own transitions (claims lost since
			// the call leave fewer: read again, handMarksAfterJoin).
			if r, ok := a.after[k]; ok && st.step == store.StepJoin && l.joined && slices.Equal(r.keys, l.handKeys) {
				l.handRead = &r.read
			}
		}
	}
}

// leaseTTL is how long an opening or resolving lease lasts: the send's
// deadline plus the settle time, so a sender that dies mid-send blocks the
// incident no longer than it could have been sending.
func (p *Pipeline) leaseTTL(ctx context.Context) time.Duration {
	d := p.Dedup.ClaimTTL
	if dl, ok := ctx.Deadline(); ok {
		if r := time.Until(dl) + settleTimeout; r < d {
			d = r
		}
	}
	return max(d, settleTimeout)
}

// incidentLeases groups batches by incident. keepOpen: see
// incidentLease.keepOpen (keepsOpen).
func (p *Pipeline) incidentLeases(batches []*batch, open openBy, group string) []*incidentLease {
	index := map[string]*incidentLease{}
	var out []*incidentLease
	for _, b := range batches {
		if b.err != nil {
			continue
		}
		key := p.incidentKey(b)
		l := index[key]
		if l == nil {
			l = &incidentLease{key: key, keepOpen: open.keeps(b), group: group}
			index[key] = l
			out = append(out, l)
		}
		if b.kind == alert.KindResolved {
			l.leaves = append(l.leaves, b)
		} else {
			l.joins = append(l.joins, b)
		}
	}
	for _, l := range out {
		// The first firing batch announces an opening, else a reminder.
		slices.SortStableFunc(l.joins, func(a, b *batch) int {
			return kindOrder(a.kind) - kindOrder(b.kind)
		})
		l.handKeys = joinHandKeys(p.Dedup.KeyPrefix, l.joins)
	}
	return out
}

func kindOrder(k alert.Kind) int {
	if k == alert.KindFiring {
		return 0
	}
	return 1
}

// apply records a store step's answer on the lease and its batches.
func (l *incidentLease) apply(step store.IncidentStep, r store.IncidentResult) {
	switch {
	case r.Outcome == store.OutcomeBusy:
		return
	case step == store.StepJoin:
		l.joined, l.added, l.ref = true, r.Added, r.Ref
		l.opening = r.Outcome == store.OutcomeOpening
		l.trigger, l.prevTrigger = r.Retriggered, r.PrevTriggered
		reserved := r.Retriggered != ""
		for i, b := range l.joins {
			b.n.Ref = r.Ref
			b.n.Opening = l.opening && i == 0
			if reserved && mayRetrigger(b) {
				b.retrigger, reserved = true, false
			}
		}
	case step == store.StepLeave || step == store.StepUnjoin:
		// A failed closing puts back what the Leave removed, with the
		// starts the incident held.
		l.left, l.members, l.restored = true, r.Removed, r.Restored
		l.closing = r.Outcome == store.OutcomeClosing
		// A closing whose Leave removed no member of an incident the store
		// keeps no reference of: these resolves' alerts had left it before
		// — a webhook whose update failed after its Leave, retried by
		// Alertmanager once another webhook closed the incident (an audit:
		// 97 more "[RESOLVED]" messages in a channel, one per retry) — or
		// the incident's state was lost. At an integration that draws the
		// incident (alert.DrawsIncidents, Slack: no parent known, it posts
		// one of its own) one such resolve per incident is sent, the
		// others suppressed (unheldResolves). Others' resolves all go
		// (PagerDuty's, by dedup key, closes a page whose state was lost;
		// again, it changes nothing).
		unheld := l.closing && len(r.Removed) == 0 && r.Ref == ""
		for _, b := range l.leaves {
			b.n.Ref = r.Ref
			b.n.IncidentResolved = l.closing
			if unheld && drawsIncidents(b) {
				b.unheld = true
			}
			b.unthreaded = !l.closing && r.Ref == ""
		}
	}
}

// failOpenIncidents lets every batch of leases the store could not answer
// (cause) open its incident or update it, and queues the partial resolves'
// Leaves for the store. A resolve that would close its incident is not
// sent: its batches fail, retryable, and Alertmanager retries them until
// the store answers. The incident's members cannot be read, so a resolve
// of every alert of this payload may not be the incident's: an incident
// fed by several Alertmanager groups (or one whose state was lost) kept
// open by another group's alert was resolved at PagerDuty while that
// alert fired, and nothing paged again — Alertmanager's repeats of it
// were deduplicated (audit SENTINEL: a kill -9 failover). A delayed
// resolve costs an open incident for the outage's length; a firing still
// pages at once. At an integration that threads updates (Slack), an
// incident whose parent this replica saw lately is updated in its thread
// instead of opened again (failopen_refs.go).
func (p *Pipeline) failOpenIncidents(leases []*incidentLease, results []*alert.Result, token string, cause error) {
	var later []store.IncidentOp
	now := time.Now()
	for _, l := range leases {
		ref, known := "", false
		if b := l.first(); b != nil && b.integ.threadsUpdates() {
			var seen time.Time
			ref, seen, known = p.shared().refs.get(l.key, now)
			// Only an episode still going on: an alert of it in this
			// webhook has fired since before the parent was seen. A new
			// episode (another replica resolved the incident since) gets
			// a parent of its own, not a reply under the resolved one,
			// hidden (a review).
			oldest := oldestFiring(b, results)
			known = known && !oldest.IsZero() && !oldest.After(seen.Add(-startSkew))
		}
		for i, b := range l.joins {
			b.n.Opening = i == 0 && !l.joined && !known
			if known {
				b.n.Ref = ref
			}
		}
		if len(l.leaves) == 0 || l.left {
			continue
		}
		if len(l.joins) == 0 && !l.keepOpen {
			err := fmt.Errorf("incident %s: %w: the store cannot be read (%w), so whether these resolves close it is unknown", l.key, errResolveHeld, cause)
			for _, b := range l.leaves {
				b.fail(err)
			}
			continue
		}
		// An alert of this payload still fires in the incident (joins
		// it): a partial resolve, an update.
		for _, b := range l.leaves {
			b.n.IncidentResolved = false
			if known {
				b.n.Ref = ref
			}
		}
		later = append(later, store.IncidentOp{Key: l.key, Step: l.leaveStep(), Members: members(l.leaves), Token: token, Lease: settleTimeout, TTL: p.Dedup.NotifiedTTL})
	}
	if len(later) > 0 && p.Deferred != nil {
		p.Deferred.Incidents(later)
	}
}

// startSkew is the margin failOpenIncidents allows between the clocks of
// Prometheus (an alert's start) and this replica (when it saw a parent): a
// new episode's alert from a Prometheus a minute behind replied under the
// resolved parent (a review).
const startSkew = 2 * time.Minute

// oldestFiring is the earliest start of results' firing alerts of b's
// incident at its receiver, deduplicated ones included (an alert this
// replica sent during an outage is deduplicated there, and still says the
// episode goes on); the zero time when none.
func oldestFiring(b *batch, results []*alert.Result) time.Time {
	var oldest time.Time
	for _, r := range results {
		a := r.Alert
		if r.Incident != b.incident || !a.Firing() || a.StartsAt.IsZero() || !slices.Contains(r.Receivers, b.receiver) {
			continue
		}
		if oldest.IsZero() || a.StartsAt.Before(oldest) {
			oldest = a.StartsAt
		}
	}
	return oldest
}

// errResolveHeld marks the batches of a resolve failOpenIncidents holds.
var errResolveHeld = errors.New("resolve held until the store answers (Alertmanager retries it)")

// first returns the lease's first batch (nil: none).
func (l *incidentLease) first() *batch {
	if len(l.joins) > 0 {
		return l.joins[0]
	}
	if len(l.leaves) > 0 {
		return l.leaves[0]
	}
	return nil
}

// noteRefs remembers the parents the store answered for the leases'
// incidents at integrations that thread updates (failopen_refs.go).
func (p *Pipeline) noteRefs(leases []*incidentLease) {
	now := time.Now()
	for _, l := range leases {
		b := l.first()
		switch {
		case b == nil || !l.joined || !b.integ.threadsUpdates():
		case l.opening:
			// Closed when this Join came (another replica resolved it):
			// the parent remembered is of an episode over, which an
			// outage's new firing must not reply under, hidden.
			p.shared().refs.forget(l.key)
		case l.ref != "":
			p.shared().refs.note(l.key, l.ref, now)
		}
	}
}

// settledRefs remembers the parents the leases' delivered openings posted
// (fail-open ones included: the outage's later updates thread under them)
// and forgets the incidents their delivered resolves closed.
func (p *Pipeline) settledRefs(leases []*incidentLease) {
	now := time.Now()
	for _, l := range leases {
		b := l.first()
		if b == nil || !b.integ.threadsUpdates() {
			continue
		}
		for _, j := range l.joins {
			if j.err == nil && j.n.Opening && j.n.Ref != "" {
				p.shared().refs.note(l.key, j.n.Ref, now)
				break
			}
		}
		if l.closing && !anyFailed(l.leaves) {
			p.shared().refs.forget(l.key)
		}
	}
}

// incidentSettleOps returns the steps that end this webhook's leases:
// Opened/Resolved when the batches holding them were delivered, Abort when
// they failed, Unjoin for members whose update to an open incident failed.
func incidentSettleOps(l *incidentLease, token string, ttl time.Duration) []store.IncidentOp {
	var ops []store.IncidentOp
	joinFailed, leaveFailed := anyFailed(l.joins), anyFailed(l.leaves)
	switch {
	case l.opening && !joinFailed:
		ref := ""
		for _, b := range l.joins {
			if b.n.Ref != "" {
				ref = b.n.Ref
				break
			}
		}
		ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepOpened, Token: token, Ref: ref, TTL: ttl})
	case l.opening:
		ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepAbort, Token: token, Members: l.added, TTL: ttl})
	case l.joined && joinFailed && len(l.added) > 0:
		// Only the members whose own send failed: another batch of the
		// webhook delivered (and marked notified) the rest — a review saw a
		// failed reminder take a new alert its delivered update had joined
		// out of the incident, leaving it to close while that alert fired.
		if gone := failedMembers(l.joins, l.added); len(gone) > 0 {
			ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepUnjoin, Token: token, Members: gone, TTL: ttl})
		}
	case l.joined && !joinFailed:
		for _, b := range l.joins {
			if b.n.Ref != "" && b.n.Ref != l.ref {
				ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepRef, Token: token, Ref: b.n.Ref, TTL: ttl})
				break
			}
		}
	}
	switch {
	case l.trigger == "":
	case !slices.ContainsFunc(l.joins, func(b *batch) bool { return b.err == nil && (b.n.Opening || remindsTrigger(b)) }):
		// The retrigger the Join took went out as no trigger (nor did a
		// reminder of the incident): give it back, so the next new alert
		// is due.
		ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepUntrigger, Token: token, Triggered: l.trigger, PrevTriggered: l.prevTrigger})
	default:
		// Sent: the Joins of other webhooks that waited on it (busy) join
		// silently now — their alerts reached PagerDuty's incident by it
		// (an audit: a Join during a failing retrigger was answered 2xx
		// as an update of it, and the retrigger was given back).
		ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepTriggered, Token: token, Triggered: l.trigger})
	}
	switch {
	case l.closing && !leaveFailed:
		ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepResolved, Token: token, TTL: ttl})
	case l.closing:
		ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepAbort, Token: token, Members: l.members, TTL: ttl})
	}
	return ops
}

// failedMembers are the members of added that a failed batch of bs
// carries.
func failedMembers(bs []*batch, added []store.Member) []store.Member {
	failed := map[string]bool{}
	for _, b := range bs {
		if b.err != nil {
			for _, t := range b.trs {
				failed[t.res.Alert.Fingerprint] = true
			}
		}
	}
	var out []store.Member
	for _, m := range added {
		if failed[m.Fingerprint] {
			out = append(out, m)
		}
	}
	return out
}

func anyFailed(bs []*batch) bool {
	for _, b := range bs {
		if b.err != nil {
			return true
		}
	}
	return false
}

// notification builds the message of one batch, with template data
// computed from the batch's own alerts.
func notification(msg *alert.Message, b *batch) *alert.Notification {
	n := &alert.Notification{Receiver: b.receiver, Integration: b.integ.Name, Incident: b.incident, Kind: b.kind, Action: alert.ActionNone,
		AlertmanagerReceiver: msg.Receiver}
	alerts := make(template.Alerts, 0, len(b.trs))
	for _, t := range b.trs {
		n.Results = append(n.Results, t.res)
		alerts = append(alerts, t.res.Alert.Alert)
		n.Escalated = n.Escalated || t.escalates
		if alert.Rank(t.res.Decision.Action) > alert.Rank(n.Action) {
			n.Action = t.res.Decision.Action
		}
		if b.kind == alert.KindResolved {
			n.NotifiedTier = louderTier(n.NotifiedTier, t.notified)
		}
	}
	n.HeldOpen = b.kind == alert.KindResolved && keepsOpen(msg)
	n.Data = templateData(msg, b.receiver, alerts, n.Results)
	return n
}

// louderTier is tier when its action ranks above cur's, else cur: the
// loudest tier a resolve's alerts were notified with (a marker of an
// earlier build, or none read, holds no tier of that form: rank 0).
func louderTier(cur, tier string) string {
	if alert.Rank(alert.TierAction(tier)) > alert.Rank(alert.TierAction(cur)) {
		return tier
	}
	return cur
}

// resolveDrawnKey is the key that says b's incident's resolve was drawn
// at b's integration within unheldResolveTTL: by a closing (settle writes
// it) or by the first resolve unheldResolves let through.
func (p *Pipeline) resolveDrawnKey(b *batch) string {
	return store.Key(p.Dedup.KeyPrefix, "resolve-drawn", b.incident, b.receiver+"/"+b.integ.Name)
}

// drawsIncidents reports whether b's integration draws incidents
// (alert.DrawsIncidents: Slack).
func drawsIncidents(b *batch) bool {
	d, ok := b.integ.Notifier.(alert.DrawsIncidents)
	return ok && d.DrawsIncidents()
}

// leaveRestored removes from the incidents whose Leave named restored
// members (store.IncidentResult.Restored: joined before Redis' current run
// began, left in by this whole-group resolve) those Alertmanager no longer
// holds (HeldAlerts): alerts that resolved while Redis lost writes — a
// restart from an older snapshot — whose resolves will not come again; the
// page stayed open for good (an audit: 60 such members). The incident
// closes when none is left, and this webhook's resolves resolve it.
// Members Alertmanager holds (silenced, inhibited) stay: a review saw a
// silenced alert's page resolved, and not paged again when its silence
// ended. Without HeldAlerts, or when Alertmanager cannot be asked, nothing
// is removed.
func (p *Pipeline) leaveRestored(ctx context.Context, leases []*incidentLease, token string) {
	var asked []*incidentLease
	for _, l := range leases {
		if len(l.restored) > 0 && l.left && !l.closing {
			asked = append(asked, l)
		}
	}
	if len(asked) == 0 || p.HeldAlerts == nil {
		return
	}
	held, err := p.HeldAlerts(ctx)
	if err != nil {
		p.Logger.Warn("cannot ask Alertmanager whether an incident's members left since before Redis' run still fire: the incident stays open", "err", err)
		return
	}
	var ops []store.IncidentOp
	var owners []*incidentLease
	for _, l := range asked {
		var gone []store.Member
		for _, fp := range l.restored {
			if !held[fp] {
				gone = append(gone, store.Member{Fingerprint: fp})
			}
		}
		if len(gone) > 0 {
			ops = append(ops, store.IncidentOp{Key: l.key, Step: store.StepLeave, Members: gone, Token: token, Lease: p.leaseTTL(ctx), TTL: p.Dedup.NotifiedTTL, Group: l.group})
			owners = append(owners, l)
		}
	}
	if len(ops) == 0 {
		return
	}
	res, err := p.Store.Incidents(ctx, ops)
	if err != nil {
		return // the incident stays open; the next whole resolve asks again
	}
	for i, r := range res {
		l := owners[i]
		if r.Outcome != store.OutcomeClosing && r.Outcome != store.OutcomeStillOpen {
			continue
		}
		// Applied as the webhook's own Leave: a failed closing puts back
		// what both Leaves removed.
		removed := len(r.Removed)
		r.Removed = append(slices.Clip(l.members), r.Removed...)
		l.apply(store.StepLeave, r)
		p.Logger.Warn("resolve of an incident holding members from before Redis' current run (restarted from an older snapshot) that Alertmanager no longer holds: alerts that resolved while writes Redis lost were made, removed",
			"incident", l.leaves[0].incident, "receiver", l.leaves[0].receiver, "integration", l.leaves[0].integ.Name, "removed", removed, "closed", l.closing)
	}
}

// threadsUpdates reports whether the integration threads updates under
// the incident's parent (alert.ThreadsUpdates: Slack's Web API).
func (i *Integration) threadsUpdates() bool {
	t, ok := i.Notifier.(alert.ThreadsUpdates)
	return ok && t.ThreadsUpdates()
}

// unthreadedResolves suppresses the partial resolves (their incident stays
// open) of incidents the store keeps no reference of, at integrations that
// draw updates under it (Slack's thread): the incident's state was lost
// (Redis emptied or restored, its incident keys evicted) while its alerts
// fire on, or its opening is not confirmed yet. Each such resolve posted a
// message of its own — an audit counted 9 top-level "[PAGE] … 20 resolved"
// messages under one incident's stuck parent, one per webhook. The
// incident's last resolve is still drawn (once: unheldResolves), and its
// firing alerts' updates post as before. Logged once per receiver and
// integration every 30 s.
func (p *Pipeline) unthreadedResolves(ctx context.Context, batches []*batch) {
	for _, b := range batches {
		if !b.unthreaded || b.err != nil || b.skip || !b.integ.threadsUpdates() {
			continue
		}
		b.skip = true
		p.shared().deliveryLogs.Log(ctx, p.Logger, slog.LevelInfo, "unthreaded:"+b.receiver+"/"+b.integ.Name,
			"partial resolve of an incident whose message the store does not know (its state lost, or its opening not confirmed yet): not posted as a message of its own; the incident's resolve will be",
			"receiver", b.receiver, "integration", b.integ.Name, "incident", b.incident, "alerts", len(b.trs))
	}
}

// unheldResolveTTL is how long the first resolve of an incident the store
// no longer held keeps the others from being drawn (unheldResolves).
const unheldResolveTTL = time.Hour

// unheldResolves lets one resolve per incident and integration through of
// those whose Leave found nothing of the incident (incidentLease.apply:
// batch.unheld), across webhooks and replicas, by a claim kept an hour —
// none when the incident's own closing was drawn within it (settle writes
// the claim): a partial resolve retried after the close is not drawn
// again; the others are suppressed. After the store lost an incident's
// state each of its alerts' resolves closed it anew: Slack posted one "[RESOLVED]"
// message of its own per alert (200 for a ticket of 200 alerts), and
// nothing at all once they were suppressed (a review: a ticket left drawn
// firing, with no trace of its resolve). A store that cannot claim lets
// the resolve through.
func (p *Pipeline) unheldResolves(ctx context.Context, batches []*batch, token string) {
	var keys []string
	var of []*batch
	for _, b := range batches {
		if b.unheld && b.err == nil && !b.skip {
			keys = append(keys, p.resolveDrawnKey(b))
			of = append(of, b)
		}
	}
	if len(keys) == 0 {
		return
	}
	won, err := dedup.Leases{Store: p.Store, TTL: unheldResolveTTL}.Acquire(ctx, keys, token)
	if err != nil {
		return
	}
	for i, b := range of {
		if won[i] {
			p.Logger.Warn("resolve of an incident the store no longer holds (its state lost, or its alerts left it before): drawn once as a message of its own, the incident's earlier message left as it was",
				"receiver", b.receiver, "integration", b.integ.Name, "incident", b.incident)
			continue
		}
		b.skip = true
	}
}
