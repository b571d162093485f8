package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// DedupOptions tune exactly-once delivery.
type DedupOptions struct {
	// ClaimTTL bounds how long a claim blocks other replicas when its owner
	// dies between claim and confirm; after it the transition can be sent
	// again (a crash never loses the page).
	ClaimTTL time.Duration
	// NotifiedTTL is how long a notified transition (and an incident's
	// state) is remembered; it must outlive Alertmanager's repeat_interval.
	NotifiedTTL time.Duration
	// RepeatInterval is how often a still-firing alert is reminded; 0 never.
	RepeatInterval time.Duration
	// InFlightWait is how long to wait for another replica that is sending
	// the same transition (or opening/resolving the same incident) before
	// answering 5xx so Alertmanager retries.
	InFlightWait time.Duration
	// FailClosed answers 5xx when the store is unavailable instead of
	// delivering without dedup (fail open, the default).
	FailClosed bool
	// KeyPrefix prefixes every store key.
	KeyPrefix string
}

// Integration is one notifier of a receiver (a pagerduty_configs or
// slack_configs entry). Exactly-once holds per integration.
type Integration struct {
	// Name is unique within the receiver, e.g. "pagerduty/0".
	Name     string
	Notifier alert.Notifier
	// SendResolved: resolves are sent (Alertmanager's send_resolved). When
	// false they still close the incident's state but send nothing.
	SendResolved bool
}

// Pipeline is the router's whole processing of a webhook. It is immutable
// once built (a config reload builds a new one) and safe for concurrent use.
type Pipeline struct {
	Classifier alert.Classifier
	Decider    alert.Decider
	Routes     *Route
	// Receivers maps receiver names to their integrations (none: a
	// blackhole, see Route.SetBlackholes).
	Receivers map[string][]Integration
	Store     store.Store
	Dedup     DedupOptions
	// GroupBy are the incident labels (DefaultGroupBy when empty).
	GroupBy []string
	Metrics *Metrics
	Logger  *slog.Logger
	// Shared is what the pipeline remembers beyond a webhook, kept across
	// a process's pipelines — a reload builds a new one (nil: the
	// pipeline's own).
	Shared *Shared
	// Deferred retries store writes that failed after a send (nil: none).
	Deferred *dedup.Deferred
	// Recorder receives the results of every webhook once processed (nil:
	// none), e.g. the decision journal.
	Recorder Recorder
	// DeadLetters keeps notifications that failed permanently (nil: none).
	DeadLetters DeadLetterSink
	// ConsoleURL returns the link to an incident's page in the console, put
	// in every notification (nil: no link).
	ConsoleURL func(incident string) string
	// Now returns the current time (time.Now when nil): the clock the
	// state replicas share is stamped and compared with (markers, flap
	// histories, hand resolves).
	Now func() time.Time
	// DecideNow is the clock of decisions — time intervals, live SLO
	// windows, flap damping (whose histories hold alert times) —, as
	// Alertmanager and `router explain` keep them on the host's clock (Now
	// when nil).
	DecideNow func() time.Time
	// Live reads the live state of SLO alerts at decision time (nil: the
	// decisions are the labels' alone).
	Live LiveLookup
	// Flap damps alerts that keep firing and resolving (nil: off).
	Flap *flap.Config
	// FiringAlerts returns the fingerprints of the alerts named alertname
	// that Alertmanager holds now, resolved ones left out (alertmanager.url:
	// GET /api/v2/alerts); nil: not asked. A firing that arrives after its
	// notified resolve with the same startsAt is sent only when
	// Alertmanager still holds it (staleRefires).
	FiringAlerts func(ctx context.Context, alertname string) (map[string]bool, error)
	// CompleteTruncated adds to a webhook Alertmanager truncated
	// (max_alerts) the firing alerts of its group it left out, read from
	// Alertmanager (alertmanager.url: GET /api/v2/alerts/groups,
	// webhook.Complete), and returns how many it added; the message then
	// says it is whole. nil, or when it fails or the listing is not of the
	// webhook's group: the alerts left out wait for Alertmanager's
	// repeat_interval and the webhook's resolves close no incident
	// (keepsOpen).
	CompleteTruncated func(ctx context.Context, msg *alert.Message) (int, error)
	// UpdateWindow is how long, at most, an update of an open incident
	// that finds none of that incident's updates being sent waits for
	// others to share its send (coalesce.go: the wait ends once the
	// webhooks counted in the incident have arrived); 0 sends it at once.
	// Openings and resolutions never wait.
	UpdateWindow time.Duration
	// RetriggerInterval is how often, at most, new alerts joining an open
	// incident at an integration that sends nothing for updates
	// (PagerDuty) send its trigger again, per incident across replicas (the
	// last trigger's time is kept with the incident's state: retrigger.go),
	// less retriggerSlack; 0 never.
	RetriggerInterval time.Duration
	// HeldAlerts returns the fingerprints of every alert Alertmanager holds
	// now (active, silenced, inhibited or unprocessed; nil: it cannot be
	// asked): an incident's members left since before Redis' run that it no
	// longer holds are removed (leaveRestored).
	HeldAlerts func(ctx context.Context) (map[string]bool, error)
	// ForgetsUnsent says a delivered webhook's group leaves the set of
	// groups whose webhook was answered 5xx (dedup.UnsentKey;
	// webhook.Orphans keeps them), in the settle's writes: Alertmanager
	// counted it notified and sends its resolves itself (a review: a group
	// kept past its 2xx had its live page resolved when Alertmanager
	// restarted).
	ForgetsUnsent bool
	// StoreLife returns when the store's current run began
	// (dedup.StoreLife; the zero time or nil: unknown). Within
	// RetriggerInterval of it, a Join retriggers every incident last
	// triggered before it: the store may have come back older than it was
	// (a snapshot, a failover), holding open an incident PagerDuty resolved.
	// A firing under a later start than one that started before it is a
	// new firing (firedBeforeStoreRun): its resolve may have been lost.
	StoreLife func() time.Time

	// updates coalesces concurrent updates of one open incident.
	updates coalescer
	// quiet remembers the alerts found already notified (flap.go).
	quiet quietAlerts
	// renewed remembers the markers this replica renewed (renewMarkers).
	renewed renewals
	// own is what the pipeline remembers when Shared is nil.
	own Shared
	// settleGrace overrides settleGrace (deliver.go) when positive (tests).
	settleGrace time.Duration
}

// Shared is what a process's pipelines remember beyond a webhook, kept
// across reloads: each reload builds a new pipeline, and a reload during a
// store outage forgot the incidents' Slack parents (a second parent for
// every open incident), an integration's failures (its recovery never
// logged) and the log throttles (each failure's cause logged again at
// every reload). Its zero value is ready.
type Shared struct {
	// refs remembers incidents' Slack parents for a store outage
	// (failopen_refs.go).
	refs knownRefs
	// health is the integrations' runs of failures (recovery.go).
	health integrationHealth
	// completeLogs throttles the failures of CompleteTruncated.
	completeLogs logthrottle.Throttle
	// storeLogs throttles the store-failure lines every webhook logs
	// during an outage (the metrics count each).
	storeLogs logthrottle.Throttle
	// deliveryLogs throttles the failure lines of each integration and
	// cause: during a PagerDuty outage every notification failed (an
	// audit: 520 lines a second at 50 webhooks/s); the journal, the
	// console and the metrics keep each.
	deliveryLogs logthrottle.Throttle
	// alertLogs throttles the lines that name a webhook's alerts of one
	// kind (alertLine): Alertmanager's retries repeat them.
	alertLogs logthrottle.Throttle
}

// shared is what p remembers: Shared, else its own.
func (p *Pipeline) shared() *Shared {
	if p.Shared != nil {
		return p.Shared
	}
	return &p.own
}

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// decideNow is DecideNow's time.
func (p *Pipeline) decideNow() time.Time {
	if p.DecideNow != nil {
		return p.DecideNow()
	}
	return p.now()
}

// Recorder receives, once a webhook is processed, its alerts' results with
// their per-integration Deliveries. It must not block or fail the webhook
// (a journal buffers and drops, counting).
type Recorder interface {
	Record(msg *alert.Message, results []*alert.Result)
}

// DeadLetterSink keeps a notification that failed permanently, for replay
// once the configuration is fixed. It must not block.
type DeadLetterSink interface {
	DeadLetter(n *alert.Notification, cause error)
}

// Process runs the whole pipeline on one decoded webhook and returns its
// summary. A non-nil error is an *alert.DeliveryError: something retryable
// remains and Alertmanager must be answered 5xx. Process never returns an
// input error: those are caught by decoding.
//
// It reads top to bottom as the data flows:
//
//  1. classify → decide → route → incident (Evaluate: pure), then the
//     live SLO state from Prometheus (bounded by its timeout; a failure
//     leaves the label decision);
//  2. suppress tickets of SLOs whose page fires (in this or another payload);
//  3. find the transitions no replica has notified yet, and the flap
//     histories of the alerts that may change (one store read), and damp
//     flapping alerts (a second read only for histories the first left
//     out, a third only for re-routed alerts);
//  4. claim them, write the histories that changed and take the leases of
//     the incidents their won alerts join or leave: who opens, who resolves
//     (one round trip on a single Redis node or Sentinel, two on a
//     Cluster: store.ClaimJoin);
//  5. wait briefly for incidents another replica is opening or resolving;
//  6. send every notification, each integration on its own, and settle
//     each as it completes: confirm what was sent, release what failed
//     (detached writes);
//  7. wait briefly for the transitions another replica claimed (after the
//     sends: that replica may be waiting for this webhook's opening).
//
// A client that hangs up before step 4 stops the work cleanly (its retry
// will redo it); from step 4 on the work runs to the end detached from the
// request's cancellation, within its deadline, so a send is never cut in
// half and what was sent is always confirmed.
func (p *Pipeline) Process(ctx context.Context, msg *alert.Message) (*alert.Summary, error) {
	truncated := msg.TruncatedAlerts
	completed := p.completeTruncated(ctx, msg)
	sum := &alert.Summary{Alerts: len(msg.Items) + len(msg.Rejected), Rejected: msg.Rejected, Truncated: truncated, Completed: completed}
	if len(sum.Rejected) > alert.ListedRejections {
		sum.Rejected, sum.RejectedMore = sum.Rejected[:alert.ListedRejections], len(sum.Rejected)-alert.ListedRejections
	}
	results := p.Evaluate(msg)
	p.applyLive(ctx, results)
	p.observe(msg, results, sum)
	if p.Recorder != nil {
		defer p.Recorder.Record(msg, results)
	}
	if err := p.suppressAcrossPayloads(ctx, results, sum); err != nil {
		return sum, err
	}
	wasQuiet := p.quietNow(results)
	in := p.expectUpdates(results, wasQuiet)
	defer in.done()
	trs, histories, err := p.pending(ctx, results, wasQuiet, sum)
	if err != nil {
		// The store failed closed (or the request ended) before anything
		// was claimed: the answer counts what was not sent.
		sum.Failed += p.unsent(results)
	}
	if err != nil || len(trs) == 0 {
		p.writeHistories(ctx, histories)
		return sum, err
	}
	in.keep(func(k incidentKey) bool { return slices.ContainsFunc(trs, k.of) })
	if err := ctx.Err(); err != nil {
		p.writeHistories(context.WithoutCancel(ctx), histories)
		return sum, p.cancelled(sum, err)
	}
	dctx, cancel := detach(ctx)
	defer cancel()
	token := dedup.NewToken()
	group := msg.GroupID()
	batches, leases, lost, claimErr := p.claimAndLease(dctx, msg, results, group, trs, histories, token, in, sum)
	groups(msg, results, batches)
	p.unheldResolves(dctx, batches, token)
	p.unthreadedResolves(dctx, batches)
	deliverErr := p.deliver(dctx, batches, leases, token, in, sum, group)
	return sum, joinDeliveryErrors(claimErr, deliverErr, p.awaitLost(dctx, lost, sum))
}

// deliveredFiring reports whether r is a firing alert routed to be
// delivered in an incident: not decided none, not suppressed by an SLO
// page, not muted by a time interval.
func deliveredFiring(r *alert.Result) bool {
	return r.Alert.Firing() && r.Incident != "" && r.MutedBy == "" && r.SuppressedBy == "" && r.Decision.Action != alert.ActionNone
}

// expectUpdates counts the webhook in the incidents its alerts may send an
// update to (coalesce.go): those of its firing alerts that are to be
// notified, at each integration of their receivers that sends updates —
// but not the firings quiet when last seen (wasQuiet, by index; nil when
// unknown): Alertmanager repeating them sends nothing, so the webhooks of
// the steady state count nowhere. It returns nil (nothing counted) when
// updates do not wait (no window).
func (p *Pipeline) expectUpdates(results []*alert.Result, wasQuiet []bool) *inbound {
	if p.UpdateWindow <= 0 {
		return nil
	}
	var keys []incidentKey
	for i, r := range results {
		if !deliveredFiring(r) ||
			(wasQuiet != nil && wasQuiet[i]) {
			continue
		}
		for _, recv := range r.Receivers {
			for j := range p.Receivers[recv] {
				integ := &p.Receivers[recv][j]
				if integ.Notifier == nil || integ.silentUpdates() {
					continue
				}
				if k := (incidentKey{recv, integ.Name, r.Incident}); !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	return p.updates.expect(keys)
}

// unsent counts the notifications of results that a webhook stopped
// before its claims leaves unsent: those the store being down would have
// had sent (fail open) — each integration a firing alert to notify is
// routed to, and each a resolve is routed to now.
func (p *Pipeline) unsent(results []*alert.Result) int {
	n := 0
	var last *alert.Result
	var routed []string
	for _, t := range p.candidates(results, nil) {
		if t.res.Alert.Firing() {
			n++
			continue
		}
		if t.res != last {
			last, routed = t.res, nil
			if p.Routes != nil {
				routed = p.Routes.Match(t.res.Label)
			}
		}
		if slices.Contains(routed, t.receiver) {
			n++
		}
	}
	return n
}

// detach returns a context that keeps ctx's values and deadline but not its
// cancellation.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(d, dl)
	}
	return context.WithCancel(d)
}

// cancelled answers a webhook whose client went away before anything was
// claimed: nothing was sent, nothing is held, the retry redoes it all.
func (p *Pipeline) cancelled(sum *alert.Summary, err error) error {
	msg := "request ended before delivery (" + err.Error() + "); nothing was sent, a retry sends it"
	sum.Errors = append(sum.Errors, msg)
	return &alert.DeliveryError{Retryable: true, Errs: []error{errors.New(msg)}}
}

// Evaluate runs the pure stages on every alert of msg — classify, decide,
// route, incident — and suppresses ticket-tier alerts of SLOs that page in
// the same payload. It touches no store and sends nothing: it is what
// `router explain` prints.
func (p *Pipeline) Evaluate(msg *alert.Message) []*alert.Result {
	now := p.decideNow()
	groupBy, scope := p.GroupBy, []string(nil)
	if len(groupBy) == 0 {
		groupBy, scope = DefaultGroupBy, DefaultScope
	}
	results := make([]*alert.Result, len(msg.Items))
	backing := make([]alert.Result, len(msg.Items))
	for i := range msg.Items {
		r := &backing[i]
		r.Alert = &msg.Items[i]
		p.evaluate(r, groupBy, scope, now)
		results[i] = r
	}
	suppressInPayload(results)
	return results
}

// Pages reports whether msg carries an alert decided page (firing or
// resolved), evaluated as Process would without the live SLO lookups — or,
// with them (Live), a firing SLO ticket they may raise to a page: the
// webhook edge lets such a webhook past webhook.max_concurrent.
func (p *Pipeline) Pages(msg *alert.Message) bool {
	for _, r := range p.Evaluate(msg) {
		switch {
		case r.Decision.Action == alert.ActionPage,
			p.Live != nil && r.Decision.Action == alert.ActionTicket && r.Decision.SLO != "" && r.Alert.Firing():
			return true
		}
	}
	return false
}

// PolicyEvaluationFailed is the policy (and tier) of the decision an alert
// gets when classifying, deciding or routing it panicked.
const PolicyEvaluationFailed = "evaluation-failed"

// evaluate classifies, decides and routes one alert and gives it its
// incident. A panic there (a bug some alert triggers) costs that alert its
// analysis, not its notification: it pages on PolicyEvaluationFailed,
// through the route tree (the root route's receiver should routing itself
// fail), and its reason says why; the payload's other alerts are evaluated
// as usual. Unhandled, the panic would answer the whole webhook 500, and
// every retry of it would meet the same panic: none of its alerts would ever
// go out.
func (p *Pipeline) evaluate(r *alert.Result, groupBy, scope []string, now time.Time) {
	defer p.evaluateRecover(r, groupBy, scope)
	r.Classification = p.Classifier.Classify(r.Alert)
	r.Decision = p.Decider.Decide(r.Alert, &r.Classification, now)
	get := r.Label
	switch rt := p.route(r); {
	case rt == nil || rt.GroupBy == nil:
		// incidents.group_by
	case rt.GroupsAll():
		// `group_by: []`: the route's alerts are one incident, named by
		// the route (an alert of an unknown sector still by its
		// alertname, an SLO's by its SLO), as Alertmanager v0.31 and
		// later group them.
		groupBy, scope, r.GroupedBy = routeGroupBy, nil, groupedByNothing
		get = func(name string) string {
			if name == routeGroupLabel {
				return rt.GroupKey()
			}
			return r.Label(name)
		}
	default:
		// A route's own group_by is the incident as written.
		groupBy, scope = expandGroupBy(rt.GroupBy, r.Alert.Labels), nil
		r.GroupedBy = groupBy
	}
	r.Incident = IncidentKey(r, groupBy, scope, get)
}

// routeGroupLabel is the name IncidentKey reads the key of a route that
// groups by nothing (Route.GroupsAll) under; no label has it.
const routeGroupLabel = "\x00route"

var (
	// routeGroupBy is the grouping of a route that groups by nothing.
	routeGroupBy = []string{routeGroupLabel}
	// groupedByNothing is Result.GroupedBy under such a route: templates'
	// .GroupLabels are empty there, as in Alertmanager.
	groupedByNothing = []string{}
)

// evaluateRecover, deferred by evaluate, turns a panic of r's evaluation
// into the fallback decision.
func (p *Pipeline) evaluateRecover(r *alert.Result, groupBy, scope []string) {
	v := recover()
	if v == nil {
		return
	}
	if p.Logger != nil {
		p.Logger.Error("evaluating an alert panicked (a bug: please report it with this stack); it pages on the fallback decision",
			"alertname", r.Alert.Labels["alertname"], "fingerprint", r.Alert.Fingerprint, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	}
	if p.Metrics != nil {
		p.Metrics.evaluatePanics.Inc()
	}
	p.evaluateFallback(r, groupBy, scope, fmt.Sprint(v))
}

// evaluateFallback gives r the decision of an alert whose evaluation
// panicked: a page, routed by the route tree or else to the root route's
// receiver, in an incident of the default grouping or else of its own.
func (p *Pipeline) evaluateFallback(r *alert.Result, groupBy, scope []string, cause string) {
	r.Classification = alert.Classification{}
	r.Decision = alert.Decision{Action: alert.ActionPage, Policy: PolicyEvaluationFailed, Tier: PolicyEvaluationFailed,
		Reasons: []string{"the router failed to evaluate this alert (" + cause + "; a bug, logged with its stack): it pages so that it is not lost"}}
	if (!succeeds(func() { p.route(r) }) || len(r.Receivers) == 0) && p.Routes != nil {
		r.Receivers, r.MutedBy = []string{p.Routes.Receiver}, ""
		if p.Routes.Blackhole() {
			// The configuration sends everything unrouted nowhere: the
			// alert is recorded as muted (counted), not silently lost.
			r.Receivers, r.MutedBy = nil, p.Routes.mutedBy(p.decideNow())
		}
	}
	if !succeeds(func() { r.Incident = IncidentKey(r, groupBy, scope, r.Label) }) {
		r.Incident = PolicyEvaluationFailed + "/" + r.Alert.Fingerprint
	}
}

// succeeds runs f and reports whether it returned without panicking.
func succeeds(f func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// suppressInPayload suppresses ticket-tier alerts of SLOs whose page-tier
// alert fires in the same payload (and lifts the suppression of those whose
// page is gone after a re-decision).
func suppressInPayload(results []*alert.Result) {
	pages := map[string]*alert.Result{}
	for _, r := range results {
		if r.Decision.SLO != "" && r.Decision.Action == alert.ActionPage && r.Alert.Firing() {
			pages[r.Decision.SLO] = r
		}
	}
	for _, r := range results {
		r.SuppressedBy = ""
		if r.Decision.Action != alert.ActionTicket || r.Decision.SLO == "" || !r.Alert.Firing() {
			continue
		}
		if pg, ok := pages[r.Decision.SLO]; ok {
			r.SuppressedBy = suppressedBy(pg.Alert.Labels["alertname"], pg.Alert.Fingerprint, r.Decision.SLO)
		}
	}
}

func suppressedBy(alertname, fingerprint, slo string) string {
	return "page " + alertname + " (" + fingerprint + ") of SLO " + slo
}

func (p *Pipeline) observe(msg *alert.Message, results []*alert.Result, sum *alert.Summary) {
	m := p.Metrics
	for _, r := range results {
		if len(r.Alert.Flags) > 0 {
			sum.Flagged++
		}
	}
	if m == nil {
		return
	}
	m.rejected.Add(float64(len(msg.Rejected)))
	if sum.Truncated > 0 {
		m.truncated.Add(float64(sum.Truncated))
	}
	for _, r := range results {
		m.alerts.WithLabelValues(r.Alert.Status).Inc()
		m.decisions.WithLabelValues(r.Classification.Sector, string(r.Decision.Action), r.Decision.Policy).Inc()
		if r.Decision.Policy == policies.PolicyHeartbeat && r.Alert.Firing() {
			m.heartbeat.Set(float64(msg.ReceivedAt.UnixNano()) / 1e9)
		}
		for _, f := range r.Alert.Flags {
			m.flagged.WithLabelValues(f).Inc()
		}
	}
}

// storeFailed handles a store error of a step before any send. A cancelled
// or timed-out request is not a store outage: it stops the work with no
// fail-open path and no store-error metric. Otherwise it returns nil to
// fail open (counted and logged) or a 5xx error with fail_closed.
func (p *Pipeline) storeFailed(ctx context.Context, op string, err error, sum *alert.Summary) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return p.cancelled(sum, ctxErr)
	}
	if p.Metrics != nil {
		p.Metrics.storeErrors.Inc()
	}
	if errors.Is(err, store.ErrMisconfigured) {
		// Not an outage to ride through: every alert would be sent without
		// deduplication for as long as the configuration stands.
		p.shared().storeLogs.Log(ctx, p.Logger, slog.LevelError, "misconfigured:"+op, "dedup store misconfigured; answering 5xx so Alertmanager retries (failing open would send every alert without deduplication) — fix store.redis", "op", op, "err", err)
		sum.Errors = append(sum.Errors, op+": "+err.Error())
		return &alert.DeliveryError{Retryable: true, Errs: []error{fmt.Errorf("%s: %w", op, err)}}
	}
	if p.Dedup.FailClosed {
		p.shared().storeLogs.Log(ctx, p.Logger, slog.LevelError, "closed:"+op+":"+logthrottle.ErrorClass(err), "dedup store failed and fail_closed is set; answering 5xx so Alertmanager retries", "op", op, "err", err)
		sum.Errors = append(sum.Errors, op+": "+err.Error())
		return &alert.DeliveryError{Retryable: true, Errs: []error{fmt.Errorf("%s: %w", op, err)}}
	}
	p.shared().storeLogs.Log(ctx, p.Logger, slog.LevelWarn, "open:"+op+":"+logthrottle.ErrorClass(err), "dedup store failed; continuing without it (fail open): a duplicate notification is possible", "op", op, "err", err)
	return nil
}

// joinDeliveryErrors merges the *DeliveryErrors of the steps; the result
// is retryable when any is.
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

// completeTimeout bounds the read of a truncated webhook's group from
// Alertmanager, and so does a quarter of the webhook's time left: past it
// the webhook is processed as it came, with time left to deliver (a
// review: a slow Alertmanager and a webhook.timeout of 3 s paged nothing,
// not even the alerts the webhook carried).
const completeTimeout = 5 * time.Second

// completeTruncated completes msg when Alertmanager truncated it and
// CompleteTruncated is set, and returns how many alerts it added. A
// failure is logged (throttled) and msg stays as it came.
func (p *Pipeline) completeTruncated(ctx context.Context, msg *alert.Message) int {
	if msg.TruncatedAlerts == 0 || p.CompleteTruncated == nil {
		return 0
	}
	left := msg.TruncatedAlerts
	limit := completeTimeout
	if d, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(d)/4)
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	n, err := p.CompleteTruncated(cctx, msg)
	switch {
	case err != nil:
		p.shared().completeLogs.Log(ctx, p.Logger, slog.LevelWarn, "complete:"+logthrottle.ErrorClass(err),
			"reading the rest of a truncated webhook's group from Alertmanager failed: the alerts max_alerts left out wait for its repeat_interval, and this webhook's resolves close no incident",
			"group_key", msg.GroupKey, "truncated", left, "err", err)
	case msg.TruncatedAlerts > 0:
		p.shared().completeLogs.Log(ctx, p.Logger, slog.LevelWarn, "complete:mismatch",
			"the group Alertmanager lists at alertmanager.url does not hold this truncated webhook's firing alerts (alertmanager.url another Alertmanager than the one sending, an alert resolved since, or a group key not Alertmanager's): processed as it came, its resolves close no incident",
			"group_key", msg.GroupKey, "truncated", left)
	default:
		p.Logger.Info("truncated webhook completed from Alertmanager: the firing alerts max_alerts left out are processed with it",
			"group_key", msg.GroupKey, "truncated", left, "added", n)
	}
	return n
}
