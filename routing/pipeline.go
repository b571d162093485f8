package routing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"

	"github.com/prometheus/alertmanager/template"
)

// DedupOptions tune exactly-once delivery.
type DedupOptions struct {
	// ClaimTTL bounds how long a claim blocks other replicas when its owner
	// dies between claim and confirm; after it the transition can be sent
	// again (a crash never loses the page).
	ClaimTTL time.Duration
	// NotifiedTTL is how long a notified transition is remembered; it must
	// outlive Alertmanager's repeat_interval.
	NotifiedTTL time.Duration
	// RepeatInterval is how often a still-firing alert is reminded; 0 never.
	RepeatInterval time.Duration
	// InFlightWait is how long to wait for another replica that is sending
	// the same transition before answering 5xx so Alertmanager retries.
	InFlightWait time.Duration
	// FailClosed answers 5xx when the store is unavailable instead of
	// delivering without dedup (fail open, the default).
	FailClosed bool
	// KeyPrefix prefixes every store key.
	KeyPrefix string
}

// Pipeline is the router's whole processing of a webhook. It is immutable
// once built (a config reload builds a new one) and safe for concurrent use.
type Pipeline struct {
	Classifier alert.Classifier
	Decider    alert.Decider
	Routes     *Route
	// Notifiers maps receiver names to their notifier.
	Notifiers map[string]alert.Notifier
	Store     store.Store
	Dedup     DedupOptions
	// GroupBy are the incident labels (DefaultGroupBy when empty).
	GroupBy []string
	Metrics *Metrics
	Logger  *slog.Logger
	// Now returns the current time (time.Now when nil).
	Now func() time.Time
}

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Evaluate runs the pure stages on every alert of msg — classify, decide,
// route, incident — and suppresses ticket-tier alerts of SLOs that page in
// the same payload. It touches no store and sends nothing: it is what
// `router explain` prints.
func (p *Pipeline) Evaluate(msg *alert.Message) []*alert.Result {
	now := p.now()
	groupBy := p.GroupBy
	if len(groupBy) == 0 {
		groupBy = DefaultGroupBy
	}
	results := make([]*alert.Result, len(msg.Items))
	backing := make([]alert.Result, len(msg.Items))
	pages := map[string]*alert.Result{}
	for i := range msg.Items {
		r := &backing[i]
		r.Alert = &msg.Items[i]
		r.Classification = p.Classifier.Classify(r.Alert)
		r.Decision = p.Decider.Decide(r.Alert, &r.Classification, now)
		get := r.Label
		r.Incident = IncidentKey(r, groupBy, get)
		if r.Decision.Action != alert.ActionNone {
			r.Receivers = p.Routes.Match(get)
		}
		if r.Decision.SLO != "" && r.Decision.Action == alert.ActionPage && r.Alert.Firing() {
			pages[r.Decision.SLO] = r
		}
		results[i] = r
	}
	for _, r := range results {
		if r.Decision.Action != alert.ActionTicket || r.Decision.SLO == "" || !r.Alert.Firing() {
			continue
		}
		if pg, ok := pages[r.Decision.SLO]; ok {
			r.SuppressedBy = suppressedBy(pg.Alert.Labels["alertname"], pg.Alert.Fingerprint, r.Decision.SLO)
		}
	}
	return results
}

func suppressedBy(alertname, fingerprint, slo string) string {
	return "page " + alertname + " (" + fingerprint + ") of SLO " + slo
}

// transition is one alert's change for one receiver that may need sending.
type transition struct {
	res      *alert.Result
	receiver string
	incident string // the incident notified: the firing's, for a resolve
	tier     string // tierOf the alert's decision, part of its identity
	kind     alert.Kind
	marker   string // key remembering what was notified
	claim    string // key claimed while sending
	token    string // value of our claim; release deletes only our own
	won      bool
}

// Process runs the whole pipeline on one decoded webhook and returns its
// summary. A non-nil error is a *DeliveryError: something retryable remains
// and Alertmanager must be answered 5xx. Process never returns an input
// error: those are caught by Decode.
func (p *Pipeline) Process(ctx context.Context, msg *alert.Message) (*alert.Summary, error) {
	sum := &alert.Summary{Alerts: len(msg.Items) + len(msg.Rejected), Rejected: msg.Rejected, Truncated: msg.TruncatedAlerts}
	// 1–4. classify → decide → route → incident (pure).
	results := p.Evaluate(msg)
	p.observe(msg, results, sum)
	// 5. one problem, one notification: suppress tickets of paging SLOs.
	p.suppressAcrossPayloads(ctx, results, sum)
	// 6. dedup: which transitions has no replica notified yet?
	trs, err := p.pending(ctx, results, sum)
	if err != nil {
		return sum, err
	}
	// 7. claim them, 8. notify what this replica won, 9. confirm or
	// release. Transitions another replica holds fail the webhook (so
	// Alertmanager retries them) but never hold back the ones won here.
	claimErr := p.claim(ctx, trs, sum)
	return sum, joinDeliveryErrors(claimErr, p.deliver(ctx, msg, trs, sum))
}

// joinDeliveryErrors merges the *DeliveryErrors of the claim and deliver
// steps; the result is retryable when either is.
func joinDeliveryErrors(errs ...error) error {
	var out *alert.DeliveryError
	for _, err := range errs {
		var de *alert.DeliveryError
		if !errors.As(err, &de) {
			continue
		}
		if out == nil {
			out = &alert.DeliveryError{}
		}
		out.Retryable = out.Retryable || de.Retryable
		out.Errs = append(out.Errs, de.Errs...)
	}
	if out == nil {
		return nil
	}
	return out
}

func (p *Pipeline) observe(msg *alert.Message, results []*alert.Result, sum *alert.Summary) {
	m := p.Metrics
	if m == nil {
		return
	}
	m.rejected.Add(float64(len(msg.Rejected)))
	if msg.TruncatedAlerts > 0 {
		m.truncated.Add(float64(msg.TruncatedAlerts))
	}
	for _, r := range results {
		m.alerts.WithLabelValues(r.Alert.Status).Inc()
		m.decisions.WithLabelValues(r.Classification.Sector, string(r.Decision.Action), r.Decision.Policy).Inc()
		for _, f := range r.Alert.Flags {
			m.flagged.WithLabelValues(f).Inc()
		}
		if len(r.Alert.Flags) > 0 {
			sum.Flagged++
		}
	}
}

// suppressAcrossPayloads suppresses ticket-tier alerts of SLOs for which
// another payload's page-tier alert fires (recorded when that page was
// notified, see recordSLOPages). It reads the store only for SLOs with a
// firing ticket not already suppressed in-payload. A store failure never
// suppresses: a duplicate beats a lost ticket.
func (p *Pipeline) suppressAcrossPayloads(ctx context.Context, results []*alert.Result, sum *alert.Summary) {
	var tickets []*alert.Result
	for _, r := range results {
		if r.Decision.SLO != "" && r.Decision.Action == alert.ActionTicket && r.Alert.Firing() && r.SuppressedBy == "" {
			tickets = append(tickets, r)
		}
	}
	seen := map[string][]string{}
	for _, r := range tickets {
		slo := r.Decision.SLO
		members, ok := seen[slo]
		if !ok {
			var err error
			members, err = p.Store.Members(ctx, store.Key(p.Dedup.KeyPrefix, "slo", slo, "pages"))
			if err != nil {
				p.storeError("read SLO pages", err)
			}
			seen[slo] = members
		}
		if len(members) > 0 {
			r.SuppressedBy = "page " + members[0] + " of SLO " + slo
		}
	}
	for _, r := range results {
		if r.SuppressedBy != "" {
			sum.Suppressed++
			if p.Metrics != nil {
				p.Metrics.suppressed.Inc()
			}
		}
	}
}

func (p *Pipeline) storeError(op string, err error) {
	if p.Metrics != nil {
		p.Metrics.storeErrors.Inc()
	}
	p.Logger.Warn("dedup store failed; continuing without it (fail open): a duplicate notification is possible", "op", op, "err", err)
}

// marker values: "<tier>|<unix ms>|<incident>" for a notified firing,
// "resolved|<ms>|<incident>" for a notified resolve. The incident is kept so
// that a resolve reaches the incident its firing opened even if the
// resolved alert would now be grouped elsewhere.
func markerValue(tier string, at time.Time, incident string) string {
	return tier + "|" + strconv.FormatInt(at.UnixMilli(), 10) + "|" + incident
}

func parseMarker(v string) (tier string, at time.Time, incident string) {
	parts := strings.SplitN(v, "|", 3)
	if len(parts) < 2 {
		return v, time.Time{}, ""
	}
	ms, _ := strconv.ParseInt(parts[1], 10, 64)
	if len(parts) == 3 {
		incident = parts[2]
	}
	return parts[0], time.UnixMilli(ms), incident
}

// tierOf names the decision tier that is part of a transition's identity.
func tierOf(d *alert.Decision) string { return string(d.Action) + ":" + d.Policy + ":" + d.Tier }

// pending reads, in one store round trip, what was already notified for every
// (alert, receiver) of the payload and returns the transitions still to send.
func (p *Pipeline) pending(ctx context.Context, results []*alert.Result, sum *alert.Summary) ([]*transition, error) {
	now := p.now()
	var trs []*transition
	var keys []string
	var everyReceiver []string // built once, for the resolves of this payload
	for _, r := range results {
		switch {
		case r.SuppressedBy != "":
			continue
		case r.Alert.Firing() && r.Decision.Action == alert.ActionNone:
			sum.NoAction++
			continue
		}
		receivers := r.Receivers
		if !r.Alert.Firing() {
			// A resolve goes wherever its firing went, whatever the
			// (possibly different) decision on the resolved alert.
			if everyReceiver == nil {
				everyReceiver = p.allReceivers()
			}
			receivers = everyReceiver
		}
		tier := tierOf(&r.Decision)
		for _, recv := range receivers {
			id := recv + ":" + strconv.FormatInt(r.Alert.StartsAt.UnixMilli(), 10)
			// Keyed by fingerprint (its hash tag), not by incident: what was
			// notified for an alert is found whatever it is grouped into now.
			t := &transition{res: r, receiver: recv, incident: r.Incident, tier: tier, marker: store.Key(p.Dedup.KeyPrefix, "n", r.Alert.Fingerprint, id)}
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
		if p.Dedup.FailClosed {
			return nil, p.failClosed("read notified transitions", err, sum)
		}
		p.storeError("read notified transitions", err)
		found = make([]bool, len(keys))
		values = make([]string, len(keys))
	}
	out := trs[:0]
	notified := map[*alert.Result]bool{}
	claims := make(map[string]bool, len(trs))
	var routed map[*alert.Result][]string // fail open: where each resolve would go
	for i, t := range trs {
		tier, at, incident := "", time.Time{}, ""
		if found[i] {
			tier, at, incident = parseMarker(values[i])
		}
		firing := t.res.Alert.Firing()
		suffix := "" // tells re-fires and reminders apart from the first firing
		switch {
		case !firing && !found[i] && storeDown:
			// Fail open: whether the firing was notified is unknown, so
			// the resolve goes where the route tree sends the alert (a
			// resolve of an unknown incident is the duplicate we risk).
			if routed == nil {
				routed = map[*alert.Result][]string{}
			}
			recvs, ok := routed[t.res]
			if !ok {
				recvs = p.Routes.Match(t.res.Label)
				routed[t.res] = recvs
			}
			if !slices.Contains(recvs, t.receiver) {
				continue
			}
			t.kind = alert.KindResolved
		case !firing && !found[i]:
			// Never notified to this receiver: nothing to resolve there.
			continue
		case !firing && tier == "resolved":
			p.countDedup(dedupHit, sum)
			notified[t.res] = true
			continue
		case !firing:
			t.kind = alert.KindResolved
			if incident != "" {
				t.incident = incident
			}
		case !found[i] || tier == "resolved" || tier != t.tier:
			t.kind = alert.KindFiring
			if tier == "resolved" {
				// Alertmanager re-fired an alert it had resolved (same
				// startsAt, e.g. Prometheus missed its resends): a new
				// transition, whose claim must not collide with the
				// first firing's.
				suffix = ":a" + strconv.FormatInt(at.UnixMilli(), 10)
			}
		case p.Dedup.RepeatInterval > 0 && now.Sub(at) >= p.Dedup.RepeatInterval:
			t.kind = alert.KindReminder
			bucket := int64(now.Sub(t.res.Alert.StartsAt) / p.Dedup.RepeatInterval)
			suffix = ":r" + strconv.FormatInt(bucket, 10)
		default:
			p.countDedup(dedupHit, sum)
			continue
		}
		// Only transitions still to send get a claim key: a dedup hit (the
		// steady state) builds nothing more than its marker key.
		t.claim = t.marker + ":" + t.res.Alert.Status + ":" + t.tier + suffix
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

func (p *Pipeline) allReceivers() []string {
	out := make([]string, 0, len(p.Notifiers))
	for name := range p.Notifiers {
		out = append(out, name)
	}
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

func (p *Pipeline) failClosed(op string, err error, sum *alert.Summary) error {
	if p.Metrics != nil {
		p.Metrics.storeErrors.Inc()
	}
	p.Logger.Error("dedup store failed and fail_closed is set; answering 5xx so Alertmanager retries", "op", op, "err", err)
	sum.Errors = append(sum.Errors, op+": "+err.Error())
	return &alert.DeliveryError{Retryable: true, Errs: []error{fmt.Errorf("%s: %w", op, err)}}
}

func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "c:" + hex.EncodeToString(b[:])
}

const doneValue = "d"

// claim takes, in one round trip, the claims of every pending transition.
// Transitions claimed by another replica are waited for (bounded); when that
// replica has not confirmed in time they count as failures so Alertmanager
// retries — a claim is never taken as proof of delivery.
func (p *Pipeline) claim(ctx context.Context, trs []*transition, sum *alert.Summary) error {
	if len(trs) == 0 {
		return nil
	}
	token := newToken()
	entries := make([]store.Entry, len(trs))
	for i, t := range trs {
		t.token = token
		entries[i] = store.Entry{Key: t.claim, Value: token, TTL: p.Dedup.ClaimTTL}
	}
	won, err := p.Store.SetNX(ctx, entries)
	if err != nil {
		if p.Dedup.FailClosed {
			return p.failClosed("claim transitions", err, sum)
		}
		p.storeError("claim transitions", err)
		for _, t := range trs {
			t.won = true
			p.countDedup(dedupFailOpen, nil)
		}
		return nil
	}
	var lost []*transition
	for i, t := range trs {
		t.won = won[i]
		if !t.won {
			lost = append(lost, t)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return p.waitForOthers(ctx, lost, sum)
}

func (p *Pipeline) waitForOthers(ctx context.Context, lost []*transition, sum *alert.Summary) error {
	deadline := time.Now().Add(p.Dedup.InFlightWait)
	backoff := 20 * time.Millisecond
	for {
		keys := make([]string, len(lost))
		for i, t := range lost {
			keys[i] = t.claim
		}
		values, found, err := p.Store.Get(ctx, keys)
		if err != nil {
			p.storeError("read claims", err)
			break
		}
		still := lost[:0]
		for i, t := range lost {
			if found[i] && values[i] == doneValue {
				p.countDedup(dedupHit, sum)
				continue
			}
			still = append(still, t)
		}
		lost = still
		if len(lost) == 0 || time.Now().Add(backoff).After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
			backoff *= 2
			continue
		}
		break
	}
	if len(lost) == 0 {
		return nil
	}
	for range lost {
		p.countDedup(dedupInFlight, nil)
	}
	sum.Failed += len(lost)
	msg := fmt.Sprintf("%d notification(s) are being sent by another replica and not confirmed yet; retry", len(lost))
	sum.Errors = append(sum.Errors, msg)
	return &alert.DeliveryError{Retryable: true, Errs: []error{errors.New(msg)}}
}

type batchKey struct {
	receiver, incident string
	kind               alert.Kind
}

// deliver groups the won transitions into one notification per receiver,
// incident and kind, sends them concurrently, then confirms the delivered
// ones in one round trip and releases the failed ones in another.
func (p *Pipeline) deliver(ctx context.Context, msg *alert.Message, trs []*transition, sum *alert.Summary) error {
	batches := map[batchKey][]*transition{}
	var order []batchKey
	for _, t := range trs {
		if !t.won {
			continue
		}
		k := batchKey{t.receiver, t.incident, t.kind}
		if _, ok := batches[k]; !ok {
			order = append(order, k)
		}
		batches[k] = append(batches[k], t)
	}
	if len(order) == 0 {
		return nil
	}
	remaining := p.leaveIncidents(ctx, batches, order)
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, k := range order {
		n := p.notification(msg, k, batches[k], remaining)
		nf := p.Notifiers[k.receiver]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if nf == nil {
				errs[i] = alert.Permanent(fmt.Errorf("receiver %q has no notifier", k.receiver))
				return
			}
			if err := nf.Notify(ctx, n); err != nil {
				errs[i] = fmt.Errorf("notify %s (incident %s, %s): %w", k.receiver, k.incident, k.kind, err)
			}
		}()
	}
	wg.Wait()
	now := p.now()
	var confirm, release []store.Entry
	var failures []error
	retryable := false
	joined := map[batchKey][]string{} // receiver+incident → fingerprints
	for i, k := range order {
		for _, t := range batches[k] {
			if errs[i] != nil {
				if t.token != "" {
					release = append(release, store.Entry{Key: t.claim, Value: t.token})
				}
				continue
			}
			mv := markerValue(t.tier, now, t.incident)
			if t.kind == alert.KindResolved {
				mv = markerValue("resolved", now, t.incident)
			} else {
				jk := batchKey{receiver: k.receiver, incident: k.incident}
				joined[jk] = append(joined[jk], t.res.Alert.Fingerprint)
			}
			confirm = append(confirm,
				store.Entry{Key: t.claim, Value: doneValue, TTL: p.Dedup.ClaimTTL + time.Minute},
				store.Entry{Key: t.marker, Value: mv, TTL: p.Dedup.NotifiedTTL})
			p.countDedup(dedupMiss, nil)
		}
		if errs[i] != nil {
			failures = append(failures, errs[i])
			sum.Failed += len(batches[k])
			sum.Errors = append(sum.Errors, errs[i].Error())
			retryable = retryable || alert.Retryable(errs[i])
			p.Logger.Error("notification failed; claim released so Alertmanager's retry sends it", "receiver", k.receiver, "incident", k.incident, "kind", string(k.kind), "retryable", alert.Retryable(errs[i]), "err", errs[i])
		} else {
			sum.Notified += len(batches[k])
		}
	}
	if len(confirm) > 0 {
		if err := p.Store.Set(ctx, confirm); err != nil {
			p.storeError("confirm notified transitions", err)
		}
	}
	var adds []func()
	for jk, fps := range joined {
		adds = append(adds, func() {
			if err := p.Store.AddMembers(ctx, p.membersKey(jk.incident, jk.receiver), p.Dedup.NotifiedTTL, fps...); err != nil {
				p.storeError("record incident members", err)
			}
		})
	}
	adds = append(adds, p.recordSLOPages(ctx, batches, order, errs)...)
	parallel(adds)
	if len(failures) > 0 {
		if err := p.Store.DeleteIfEqual(ctx, release); err != nil {
			p.storeError("release claims", err)
		}
		p.rejoinIncidents(ctx, batches, order, errs)
		for range release {
			p.countDedup(dedupReleased, nil)
		}
	}
	if len(failures) > 0 {
		return &alert.DeliveryError{Retryable: retryable, Errs: failures}
	}
	return nil
}

// parallel runs fns concurrently, at most 16 at a time, and waits: the
// per-incident store writes of one webhook cost about one round trip, not
// one per incident.
func parallel(fns []func()) {
	if len(fns) == 1 {
		fns[0]()
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, fn := range fns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn()
		}()
	}
	wg.Wait()
}

// recordSLOPages returns the store writes that remember, per SLO, which
// page-tier alerts were notified firing (and forget those notified
// resolved), so that tickets of the same SLO in later payloads — at any
// replica — are suppressed while the page fires. Writing only for notified
// transitions keeps the steady state (all dedup hits) at one round trip.
func (p *Pipeline) recordSLOPages(ctx context.Context, batches map[batchKey][]*transition, order []batchKey, errs []error) []func() {
	add, del := map[string][]string{}, map[string][]string{}
	for i, k := range order {
		if errs[i] != nil {
			continue
		}
		for _, t := range batches[k] {
			d := &t.res.Decision
			if d.SLO == "" {
				continue
			}
			member := t.res.Alert.Labels["alertname"] + " (" + t.res.Alert.Fingerprint + ")"
			switch {
			case t.kind == alert.KindResolved:
				del[d.SLO] = append(del[d.SLO], member)
			case d.Action == alert.ActionPage:
				add[d.SLO] = append(add[d.SLO], member)
			}
		}
	}
	var fns []func()
	for slo, members := range add {
		fns = append(fns, func() {
			if err := p.Store.AddMembers(ctx, store.Key(p.Dedup.KeyPrefix, "slo", slo, "pages"), p.Dedup.NotifiedTTL, members...); err != nil {
				p.storeError("record SLO page", err)
			}
		})
	}
	for slo, members := range del {
		fns = append(fns, func() {
			if _, err := p.Store.RemoveMembers(ctx, store.Key(p.Dedup.KeyPrefix, "slo", slo, "pages"), members...); err != nil {
				p.storeError("clear SLO page", err)
			}
		})
	}
	return fns
}

// membersKey is the set of an incident's alerts notified firing to one
// receiver. Membership is per receiver: when pages go to PagerDuty and
// tickets to Slack, PagerDuty's incident resolves with its last page even
// while a ticket of the same incident still fires in Slack.
func (p *Pipeline) membersKey(incident, receiver string) string {
	return store.Key(p.Dedup.KeyPrefix, "m", incident, "firing:"+receiver)
}

// leaveIncidents removes the resolved alerts of each resolve batch from the
// incident's firing members at that receiver and returns how many remain
// per batch: zero means the incident resolves with this notification. An
// incident that also has firing transitions for the same receiver in this
// payload never resolves.
func (p *Pipeline) leaveIncidents(ctx context.Context, batches map[batchKey][]*transition, order []batchKey) map[batchKey]int64 {
	remaining := map[batchKey]int64{}
	for _, k := range order {
		if k.kind != alert.KindResolved {
			continue
		}
		fps := make([]string, 0, len(batches[k]))
		for _, t := range batches[k] {
			fps = append(fps, t.res.Alert.Fingerprint)
		}
		n, err := p.Store.RemoveMembers(ctx, p.membersKey(k.incident, k.receiver), fps...)
		if err != nil {
			p.storeError("update incident members", err)
			n = 1 // unknown: do not claim the incident resolved
		}
		for _, kind := range []alert.Kind{alert.KindFiring, alert.KindReminder} {
			if _, ok := batches[batchKey{k.receiver, k.incident, kind}]; ok {
				n++
			}
		}
		remaining[k] = n
	}
	return remaining
}

// rejoinIncidents puts back the members of resolves that failed, so the
// retried resolve still sees them.
func (p *Pipeline) rejoinIncidents(ctx context.Context, batches map[batchKey][]*transition, order []batchKey, errs []error) {
	for i, k := range order {
		if errs[i] == nil || k.kind != alert.KindResolved {
			continue
		}
		var fps []string
		for _, t := range batches[k] {
			fps = append(fps, t.res.Alert.Fingerprint)
		}
		if err := p.Store.AddMembers(ctx, p.membersKey(k.incident, k.receiver), p.Dedup.NotifiedTTL, fps...); err != nil {
			p.storeError("restore incident members", err)
		}
	}
}

func (p *Pipeline) notification(msg *alert.Message, k batchKey, trs []*transition, remaining map[batchKey]int64) *alert.Notification {
	n := &alert.Notification{Receiver: k.receiver, Incident: k.incident, Kind: k.kind, Action: alert.ActionNone}
	data := msg.Data
	data.Receiver = k.receiver
	data.Alerts = make(template.Alerts, 0, len(trs))
	firing := false
	for _, t := range trs {
		n.Results = append(n.Results, t.res)
		data.Alerts = append(data.Alerts, t.res.Alert.Alert)
		firing = firing || t.res.Alert.Firing()
		if alert.Rank(t.res.Decision.Action) > alert.Rank(n.Action) {
			n.Action = t.res.Decision.Action
		}
	}
	data.Status = "resolved"
	if firing {
		data.Status = "firing"
	}
	if k.kind == alert.KindResolved {
		n.IncidentResolved = remaining[k] == 0
	}
	n.Data = &data
	return n
}
