package alert

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/alertmanager/template"
)

// Alert is one alert of a webhook as the pipeline sees it: Alertmanager's
// template.Alert plus the defects found while decoding it. Its Labels and
// Annotations are read-only once decoded: notifications, incidents and
// journal entries share them, and enrichment that adds to them works on a
// copy.
type Alert struct {
	template.Alert

	// Flags lists the defects found in this alert and how each was mended,
	// e.g. "invalid_utf8" or "startsAt_missing". Empty for a clean alert.
	Flags []string `json:"flags,omitempty"`
}

// SiteLabels name where an alert fires, beyond its cluster and namespace,
// when several Prometheus/Alertmanager pairs feed one router: an
// environment, a region, a datacenter (datacenter, site — Wikimedia's
// per-site Prometheus' external label —, dc), a Mimir tenant (not tenant:
// as often a customer on a per-customer SLI, where one outage would page
// once per customer; not zone: a zone is a part of one site, whose outage
// pages once). They keep incidents (routing.DefaultScope) and plain slo
// identities (policies.SLOIdentity) apart.
var SiteLabels = []string{"env", "environment", "region", "datacenter", "site", "dc", "__tenant_id__"}

// Firing reports whether the alert's status is "firing".
func (a *Alert) Firing() bool { return a.Status == "firing" }

// HasFlag reports whether decoding flagged the alert with flag.
func (a *Alert) HasFlag(flag string) bool { return slices.Contains(a.Flags, flag) }

// IdentityStart is the startsAt that identifies this firing: the zero time
// when Alertmanager sent none (or an unreadable one), so that the
// fingerprint alone identifies the alert and every resend of it — the
// receipt time that replaced it differs per resend and per replica.
func (a *Alert) IdentityStart() time.Time {
	if a.HasFlag(FlagStartsAtMissing) || a.HasFlag(FlagStartsAtInvalid) {
		return time.Time{}
	}
	return a.StartsAt
}

// Message is an Alertmanager webhook (version 4) after decoding.
type Message struct {
	template.Data
	Version         string
	GroupKey        string
	TruncatedAlerts uint64
	// Items holds the decoded alerts; Data.Alerts is left empty to avoid
	// holding each alert twice.
	Items []Alert
	// Rejected lists the alerts dropped at decode time (no labels at all),
	// with the reason, so the response can name them.
	Rejected []Rejection
	// ReceivedAt is when the router read the payload; it replaces missing or
	// unparsable timestamps.
	ReceivedAt time.Time
}

// GroupID names m's Alertmanager group in the store: a short hash of its
// receiver and groupKey ("" when it has no groupKey).
func (m *Message) GroupID() string {
	if m.GroupKey == "" {
		return ""
	}
	h := fnv.New64a()
	h.Write([]byte(m.Receiver))
	h.Write([]byte{0})
	h.Write([]byte(m.GroupKey))
	return strconv.FormatUint(h.Sum64(), 36)
}

// Rejection names an alert that could not be processed and why.
type Rejection struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

// KPI is one key performance indicator of a sector.
type KPI struct {
	// ID is the acronym of the seed, e.g. "TTFT".
	ID string `json:"id"`
	// Name is its expansion, e.g. "time to first token".
	Name string `json:"name"`
}

// Signal is one piece of evidence the classifier used.
type Signal struct {
	// Kind is one of "sector_label", "kpi_label", "rule", "metric", "token".
	Kind string `json:"kind"`
	// Value is what was seen, e.g. "vllm:time_to_first_token_seconds_bucket".
	Value string `json:"value"`
	// Sector is the sector the signal points at ("" when it points at none).
	Sector string `json:"sector,omitempty"`
	// KPI is the KPI the signal points at, if any.
	KPI string `json:"kpi,omitempty"`
	// Weight is the signal's strength in [0,1].
	Weight float64 `json:"weight"`
}

// Hint is one shared-analytic hint attached to an alert.
type Hint struct {
	// ID is stable: queue-time, prefill-decode, kv-cache, moe-router,
	// cpu-ready, microburst, optical-health, spill-lag, burn-exemplars,
	// percentiles-not-averages.
	ID string `json:"id"`
	// Text explains the hint; it quotes the alert's numbers when it has them.
	Text string `json:"text"`
	// Specific is true when Text was computed from the alert's own numbers.
	Specific bool `json:"specific"`
}

// Unknown is the sector (and incident class) of an alert nothing identifies.
const Unknown = "unknown"

// Classification is what the classifier concluded about one alert.
type Classification struct {
	// Sector is a catalog id such as "llm-inference-gpu", or Unknown.
	Sector string `json:"sector"`
	// SectorName is the sector's name in the seed ("" when unknown).
	SectorName string `json:"sector_name,omitempty"`
	// KPIs are the KPIs the alert is about (the first is the primary one).
	KPIs []KPI `json:"kpis"`
	// AlertStyle is the sector's default alert style from the seed.
	AlertStyle string `json:"alert_style,omitempty"`
	// Sensitivity is the sector's regression sensitivity: high, medium or low.
	Sensitivity string `json:"sensitivity,omitempty"`
	// IncidentClass is one of the small documented set (latency, errors, …).
	IncidentClass string `json:"incident_class"`
	// Confidence is in [0,1]; 0 for unknown.
	Confidence float64 `json:"confidence"`
	// Signals are the evidence, strongest first.
	Signals []Signal `json:"signals"`
	// Candidates lists the sectors still possible when the signals did not
	// settle on one (an ambiguous KPI such as OWD); empty otherwise.
	Candidates []string `json:"candidates,omitempty"`
	// Hints are the shared-analytic hints relevant to the alert.
	Hints []Hint `json:"hints"`
}

// PrimaryKPI returns the acronym of the first KPI, or "".
func (c *Classification) PrimaryKPI() string {
	if len(c.KPIs) == 0 {
		return ""
	}
	return c.KPIs[0].ID
}

// Action is what an alert deserves.
type Action string

// The actions, from loudest to quietest.
const (
	ActionPage   Action = "page"
	ActionTicket Action = "ticket"
	ActionNone   Action = "none"
)

// Decision is the outcome of the page-or-ticket policies for one alert.
type Decision struct {
	Action Action `json:"action"`
	// Policy is the policy that decided: sloth, pyrra, burn-rate, capacity,
	// regression, severity or none.
	Policy string `json:"policy"`
	// Tier names the tier that matched, e.g. "1h/5m>14.4", "critical", "warn".
	Tier string `json:"tier"`
	// Reasons are human-readable and quote the numbers compared.
	Reasons []string `json:"reasons"`
	// SLO is the SLO identity of the alert (sloth_id; Pyrra slo + labels; an
	// slo label), "" when it has none. Ticket-tier alerts of an SLO are
	// suppressed while a page-tier alert of the same SLO fires.
	SLO string `json:"slo,omitempty"`
	// Budget carries the error-budget facts the alert had ("" when none).
	Budget string `json:"budget,omitempty"`
}

// Classifier classifies one alert. Implementations must be safe for
// concurrent use and must not retain a.
type Classifier interface {
	Classify(a *Alert) Classification
}

// ClassifierFunc adapts a function to Classifier.
type ClassifierFunc func(a *Alert) Classification

// Classify calls f(a).
func (f ClassifierFunc) Classify(a *Alert) Classification { return f(a) }

// Decider applies the page-or-ticket policies to one classified alert. It is
// a pure function of its inputs; now is injected for testability.
// Implementations must be safe for concurrent use.
type Decider interface {
	Decide(a *Alert, c *Classification, now time.Time) Decision
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(a *Alert, c *Classification, now time.Time) Decision

// Decide calls f(a, c, now).
func (f DeciderFunc) Decide(a *Alert, c *Classification, now time.Time) Decision {
	return f(a, c, now)
}

// Result is everything the pipeline knows about one alert; it is what
// `router explain` prints and what notifiers render.
type Result struct {
	Alert          *Alert
	Classification Classification
	Decision       Decision
	// Incident is the key of the incident the alert belongs to.
	Incident string
	// NotifiedIn, when set, is the incident this webhook notified the
	// alert in, where it differs from Incident: a reminder or resolve goes
	// to the incident its firing was notified in (its marker names it),
	// whose key an upgrade or a changed incidents.group_by may have
	// changed since. The journal files the alert there.
	NotifiedIn string `json:"notified_in,omitempty"`
	// GroupedBy is the group_by of the route that formed the alert's
	// incident ("..." expanded to the alert's labels; empty, not nil, under
	// a route's `group_by: []`); nil under incidents.group_by. Templates' .GroupLabels are those of them the
	// notification's alerts share, as Alertmanager's are its route's
	// group_by. Not journaled.
	GroupedBy []string `json:"-"`
	// Receivers are the receivers the route tree selected.
	Receivers []string
	// SuppressedBy names the SLO page that suppresses this ticket ("" if none).
	SuppressedBy string
	// Stale marks a firing after its notified resolve that Alertmanager no
	// longer holds — a lagging peer's copy of a firing that resolved
	// (routing's staleRefires): sent nowhere, and listed as firing in no
	// redrawn parent (WithStillFiring). Not journaled.
	Stale bool `json:"-"`
	// MutedBy says why a firing alert is recorded but not sent: every route
	// it matched is muted by its mute or active time intervals ("" if not).
	MutedBy string `json:"muted_by,omitempty"`
	// MutedReceivers are the receivers of the routes that muted the alert
	// (set with MutedBy only), so that the journal and the console can say
	// whose alert it was. They are never delivered to: delivery reads
	// Receivers, which stays empty for a muted alert.
	MutedReceivers []string `json:"muted_receivers,omitempty"`
	// Deliveries are what happened to the alert at each integration in this
	// webhook (empty for explain and for alerts with nothing to send).
	Deliveries []Delivery `json:"deliveries,omitempty"`
	// Live is the live state of the alert's SLO read from Prometheus when it
	// was decided; nil when none was read (no SLO, no prometheus section,
	// Prometheus slow or down: the decision is then the labels' alone).
	Live *LiveSLO `json:"live,omitempty"`
	// Flap is the alert's flap damping; nil when it is not flapping (or
	// damping is off).
	Flap *Flap `json:"flap,omitempty"`
}

// Delivery outcomes.
const (
	DeliverySent         = "sent"
	DeliveryDeduplicated = "deduplicated"
	DeliveryInFlight     = "in_flight" // another replica is sending it
	DeliveryFailed       = "failed"
	DeliverySuppressed   = "suppressed" // deliberately not sent (send_resolved: false; an update PagerDuty's open incident holds)
)

// Delivery is the outcome of one alert transition at one integration.
type Delivery struct {
	Receiver    string        `json:"receiver"`
	Integration string        `json:"integration"`
	Kind        Kind          `json:"kind"`
	Outcome     string        `json:"outcome"`
	Retryable   bool          `json:"retryable,omitempty"`
	Error       string        `json:"error,omitempty"`
	Latency     time.Duration `json:"latency,omitempty"`
	// Attempts counts the notifier's sends, retries included (0: none
	// counted, e.g. deduplicated).
	Attempts int `json:"attempts,omitempty"`
	// Closed: the notification closed the incident at the integration
	// (Notification.IncidentResolved); Repaged: it paged PagerDuty again
	// after a resolve by hand (Notification.Repaged). The console tells
	// the incident's current episode by them.
	Closed  bool `json:"closed,omitempty"`
	Repaged bool `json:"repaged,omitempty"`
}

// LiveSLO is the live state of an alert's SLO, as notifications show it.
type LiveSLO struct {
	// Summary is one line, e.g. "budget 37 % left · burn 1h 15.2× · 6h 7.1×
	// · rising".
	Summary string `json:"summary"`
	// Details are flat fields (summary, budget_remaining, burn_<window>,
	// trend, source) for PagerDuty custom_details and the journal.
	Details map[string]string `json:"details,omitempty"`
	// Decided is true when the live burn rates decided (the alert carried
	// no burn_rate_* values of its own).
	Decided bool `json:"decided,omitempty"`
	// Note says how the live state disagrees with a page decided from the
	// alert's labels, which is sent all the same ("" when it agrees).
	Note string `json:"note,omitempty"`
	// Unavailable, when not empty, says why the live state could not be
	// read ("Prometheus timed out", "no data: …"): the alert was decided
	// from its labels alone. Summary is then "unavailable (<reason>)" and
	// Details {"unavailable": <reason>}.
	Unavailable string `json:"unavailable,omitempty"`
}

// Flap is the flap damping of an alert that changed state too often.
type Flap struct {
	// Transitions counts the alert's state changes within the window, the
	// current one included.
	Transitions int `json:"transitions"`
	// Reason explains it, e.g. "flapping: 5 transitions in 1h: page
	// downgraded to ticket".
	Reason string `json:"reason"`
	// Downgraded is true when a page was downgraded to a ticket.
	Downgraded bool `json:"downgraded"`
	// StableAt is when the alert pages again if it changes state no more.
	StableAt time.Time `json:"stable_at"`
}

// LiveSLO returns the live SLO state a notification shows: lead's (the
// result it is about), else that of the first result that has one; nil when
// none was read.
func (n *Notification) LiveSLO(lead *Result) *LiveSLO {
	if lead != nil && lead.Live != nil {
		return lead.Live
	}
	for _, r := range n.Results {
		if r.Live != nil {
			return r.Live
		}
	}
	return nil
}

// Kind says what a notification tells its receiver.
type Kind string

// The notification kinds.
const (
	// KindFiring announces alerts that started firing (or were newly routed).
	KindFiring Kind = "firing"
	// KindReminder repeats alerts still firing past the repeat interval.
	KindReminder Kind = "reminder"
	// KindResolved announces alerts that resolved after being notified.
	KindResolved Kind = "resolved"
)

// IntegrationType is the type of a receiver's integration named name
// ("pagerduty" for "pagerduty/0"): the `integration` label of every metric,
// as Alertmanager's own notification metrics label it, so the router's
// notification, send, panic and dead-letter series join on it.
func IntegrationType(name string) string {
	t, _, _ := strings.Cut(name, "/")
	return t
}

// IntegrationSeries are the labels every per-receiver metric series of
// receiver's integrations of type kind ("": every type) carries, for
// deleting them (prometheus' DeletePartialMatch) when a reload removes
// them.
func IntegrationSeries(receiver, kind string) map[string]string {
	if kind == "" {
		return map[string]string{"receiver": receiver}
	}
	return map[string]string{"receiver": receiver, "integration": kind}
}

// ShownAction is the decision n's card says: for a resolve, the louder of
// its own and the tier its firings were notified with (NotifiedTier: the
// marker keeps the latest, a page re-decided ticket while it fired keeps
// ticket). A page's resolve read ticket from its last annotations and its
// card lost the page (a review); taken as the resolve's Action, Slack
// dropped the resolves of pages it never mirrored (a second review).
func (n *Notification) ShownAction() Action {
	if a := TierAction(n.NotifiedTier); Rank(a) > Rank(n.Action) {
		return a
	}
	return n.Action
}

// TierAction is the action of a notified tier ("page:capacity:critical",
// routing/dedup's Tier); what no tier of that form holds ranks 0 (Rank).
func TierAction(tier string) Action {
	a, _, _ := strings.Cut(tier, ":")
	return Action(a)
}

// Notification is one message to one integration of one receiver about
// one incident: the alert transitions of that incident that this webhook
// brought and that no replica has notified to that integration yet.
type Notification struct {
	// Receiver is the receiver's name from the config.
	Receiver string
	// Integration names the receiver's integration ("pagerduty/0",
	// "slack/1"): exactly-once holds per integration, so a failure of one
	// never resends what another delivered.
	Integration string
	// Incident is the incident's stable key; PagerDuty uses it as dedup_key,
	// Slack to thread the incident's messages.
	Incident string
	Kind     Kind
	// Action is the loudest decision among Results.
	Action Action
	// NotifiedTier is, for a resolve, the loudest tier
	// ("action:policy:tier", dedup.Tier) its alerts' firings were notified
	// with at this integration, when their markers were read; "" when
	// unknown. A resolve is decided again from its own labels and
	// annotations — a capacity page resolving at a lower utilization reads
	// ticket —: Slack's card of the incident draws it as notified
	// (ShownAction), while what is sent where follows Action and the
	// markers as for any resolve.
	NotifiedTier string
	// Results are the alerts of this notification.
	Results []*Result
	// Opening is true when this notification opens the incident at this
	// integration (no open incident is known there): PagerDuty triggers,
	// Slack posts the incident's parent message. Exactly one sender gets it
	// per opening; later members of an open incident arrive with Opening
	// false (PagerDuty sends nothing, Slack replies in the thread).
	Opening bool
	// IncidentResolved is true when, after this notification, no notified
	// alert of the incident is still firing at this integration: PagerDuty
	// resolves, Slack edits the parent.
	IncidentResolved bool
	// Paged is true for a page whose alerts were routed to an integration
	// that holds incidents (alert.SilentUpdates: PagerDuty): Slack's copy
	// names the PagerDuty incident and offers its triage only then.
	Paged bool
	// PagedAt are, for a Paged notification, the "receiver/integration"
	// of each PagerDuty integration its page went to (the first of each
	// receiver its alerts were routed to): the notification's own
	// receiver's first, then in the alerts' routing order. Slack's
	// Acknowledge and Resolve act there — a channel shared by teams
	// mirrors pages sent to each team's own PagerDuty, and one alert may
	// page a team's and a platform's.
	PagedAt []string
	// Escalated is true when an alert of this notification is louder than
	// what was notified of it (a ticket that now pages): Slack redraws the
	// incident's parent, whose header said the quieter decision.
	Escalated bool
	// Repaged is true when, in the same webhook, the incident's update to
	// PagerDuty was sent as a new trigger because someone had resolved the
	// incident there by hand (the Resolve button in Slack) while its alerts
	// still fired: Slack says PagerDuty was paged again, and offers its
	// Acknowledge and Resolve once more. Set on the incident's other
	// notifications of the webhook only.
	Repaged bool
	// HeldOpen is true for resolves of a webhook Alertmanager truncated
	// (max_alerts): alerts it left out may still fire in the incident, so
	// these resolves close nothing and the incident stays open until a
	// webhook that holds all its group's alerts resolves it (or someone
	// does by hand). Slack's reply says so; PagerDuty is sent nothing.
	HeldOpen bool
	// Ref is the integration's reference kept with the incident (the Slack
	// parent message as "channel ts"); "" when none is known. A notifier
	// that creates a new one sets Ref, and the dispatch core keeps it.
	Ref string
	// ConsoleURL links to the incident's page in the router's console (""
	// when console.external_url is not set).
	ConsoleURL string
	// AlertmanagerReceiver is the receiver of Alertmanager that sent the
	// webhook (its receiver field: the webhook to the router), where
	// Alertmanager's UI lists the incident's alerts; "" when unknown (a
	// replayed dead letter). Data.Receiver is the router's receiver, which
	// users' templates expect there.
	AlertmanagerReceiver string
	// Data is the template data (Alertmanager's) computed from this
	// notification's own alerts: Alerts, CommonLabels, CommonAnnotations and
	// GroupLabels are the incident's, not the whole webhook's.
	Data *template.Data
	// Webhook are the evaluated alerts of the whole webhook this
	// notification came from, shared by its notifications (nil when
	// unknown: a replayed dead letter): see WithStillFiring.
	Webhook []*Result
}

// Loudest returns the result that carries the notification's action (the
// first such), or the first result: the alert a notification's page is
// about (PagerDuty's source, component, group and class).
func (no *Notification) Loudest() *Result {
	for _, r := range no.Results {
		if r.Decision.Action == no.Action {
			return r
		}
	}
	if len(no.Results) > 0 {
		return no.Results[0]
	}
	return &Result{}
}

// Fingerprints is the set of the fingerprints of the alerts of results
// (a set: an incident of thousands of alerts made a scan of a list per
// alert quadratic).
func Fingerprints(results ...[]*Result) map[string]bool {
	n := 0
	for _, rs := range results {
		n += len(rs)
	}
	set := make(map[string]bool, n)
	for _, rs := range results {
		for _, r := range rs {
			set[r.Alert.Fingerprint] = true
		}
	}
	return set
}

// WithStillFiring is no with, after its own alerts, the webhook's firing
// alerts of no's incident routed to no's receiver that no does not carry —
// the incident's earlier alerts that Alertmanager sent again with this
// update (notified before, or by another sender now; one of the same
// fingerprint as an alert of no's is no's) — in its Results and
// its template data (whose common labels and annotations are computed
// again); no itself when there are none. Slack draws it when it redraws
// the incident's parent for an update: the parent listed some of them, and
// the redraw replaces it.
func (no *Notification) WithStillFiring() *Notification {
	var more []*Result
	var own map[string]bool // no's fingerprints, once one is asked
	for _, r := range no.Webhook {
		if r.Alert.Firing() && !r.Stale && (r.Incident == no.Incident || r.NotifiedIn == no.Incident) && r.MutedBy == "" && r.SuppressedBy == "" &&
			r.Decision.Action != ActionNone && slices.Contains(r.Receivers, no.Receiver) {
			if own == nil {
				own = Fingerprints(no.Results)
			}
			if !own[r.Alert.Fingerprint] {
				more = append(more, r)
			}
		}
	}
	if len(more) == 0 {
		return no
	}
	with := *no
	with.Results = append(slices.Clip(no.Results), more...)
	if no.Data != nil {
		d := *no.Data
		for _, r := range more {
			d.Alerts = append(slices.Clip(d.Alerts), r.Alert.Alert)
		}
		SetCommon(&d)
		with.Data = &d
	}
	return &with
}

// Counts returns how many of the notification's alerts fire and how many
// are resolved.
func (n *Notification) Counts() (firing, resolved int) {
	for _, r := range n.Results {
		switch {
		case r.Alert == nil:
		case r.Alert.Firing():
			firing++
		default:
			resolved++
		}
	}
	return firing, resolved
}

// Notifier delivers one notification. It returns nil on success. A failed
// delivery returns an error; Retryable(err) tells whether sending the same
// notification again may succeed (Alertmanager is then answered 5xx so that
// it retries). Implementations must be safe for concurrent use.
type Notifier interface {
	Notify(ctx context.Context, n *Notification) error
}

// SilentUpdates is implemented by a Notifier that sends nothing for an
// update of an open incident (a notification neither Opening nor
// IncidentResolved, nor a reminder), as PagerDuty's does: the dispatch core
// then sends its updates at once instead of holding them in the update
// window. Reminders are not updates: they go out as for any integration.
type SilentUpdates interface {
	SilentUpdates() bool
}

// DrawsIncidents is implemented by a Notifier that draws an incident in a
// message it keeps and hands back its reference (Notification.Ref: Slack's
// parent): a resolve of an incident whose reference the store does not
// hold would post a message of its own.
type DrawsIncidents interface {
	DrawsIncidents() bool
}

// ThreadsUpdates is implemented by a Notifier that draws an update of an
// open incident under the reference the store keeps (Slack's Web API: a
// reply in the parent's thread); without the reference, the update would
// be a message of its own (Slack's incoming webhook posts every
// notification so, reference or not).
type ThreadsUpdates interface {
	ThreadsUpdates() bool
}

// UnsentResolves is implemented by notifiers with work of their own when an
// incident resolves at them although its resolve is not sent
// (send_resolved: false): Slack resolves in PagerDuty an incident escalated
// from its message. An error fails the notification as a send's would.
type UnsentResolves interface {
	ResolvedUnsent(ctx context.Context, n *Notification) error
}

// NotifierFunc adapts a function to Notifier.
type NotifierFunc func(ctx context.Context, n *Notification) error

// Notify calls f(ctx, n).
func (f NotifierFunc) Notify(ctx context.Context, n *Notification) error { return f(ctx, n) }

// PermanentError marks a delivery failure that retrying cannot fix (a bad
// routing key, a revoked token). Wrap errors with Permanent.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so that Retryable reports false.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// Retryable reports whether a delivery error may succeed when retried. Every
// error is retryable unless it was wrapped by Permanent: when in doubt, have
// Alertmanager try again rather than lose a page.
func Retryable(err error) bool {
	var p *PermanentError
	return err != nil && !errors.As(err, &p)
}

const (
	FlagInvalidUTF8     = "invalid_utf8"
	FlagStartsAtMissing = "startsAt_missing"
	FlagStartsAtInvalid = "startsAt_invalid"
	FlagEndsAtInvalid   = "endsAt_invalid"
	FlagStatusInvalid   = "status_invalid"
	// FlagAnnotationsInvalid and FlagGeneratorURLInvalid: the field was of
	// the wrong JSON type, dropped (the alert kept).
	FlagAnnotationsInvalid  = "annotations_invalid"
	FlagGeneratorURLInvalid = "generatorURL_invalid"
	FlagFingerprint         = "fingerprint_computed"
)

// ListedRejections bounds the rejected alerts a Summary lists.
const ListedRejections = 100

// Summary is the webhook's answer: what happened to its alerts.
type Summary struct {
	Alerts   int         `json:"alerts"`
	Rejected []Rejection `json:"rejected,omitempty"`
	// RejectedMore counts the rejected alerts beyond the first
	// ListedRejections, which alone are listed (a payload of 200,000
	// unreadable alerts was answered 19 MB).
	RejectedMore int    `json:"rejected_more,omitempty"`
	Flagged      int    `json:"flagged,omitempty"`
	Truncated    uint64 `json:"truncated,omitempty"`
	// Completed counts the alerts of a truncated webhook's group read from
	// Alertmanager (routing.Pipeline.CompleteTruncated), counted in Alerts.
	Completed    int `json:"completed,omitempty"`
	Notified     int `json:"notified"`
	Deduplicated int `json:"deduplicated"`
	Suppressed   int `json:"suppressed"`
	NoAction     int `json:"no_action"`
	Failed       int `json:"failed"`
	// Errors describe the failures that make the answer a 5xx.
	Errors []string `json:"errors,omitempty"`
}

// DeliveryError is returned by Process when a notification could not be
// delivered or the store failed closed; the edge answers 5xx so that
// Alertmanager retries. Every claim of the failed notifications has been
// released, so the retry sends exactly what is missing.
type DeliveryError struct {
	// Retryable is false when every failure was permanent (a bad routing key):
	// the edge still answers 5xx so the failure stays visible in
	// Alertmanager, but the log says retrying will not help.
	Retryable bool
	Errs      []error
}

func (e *DeliveryError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// Label returns the value of a label as routes see it: the derived labels
// sector, kpi, incident_class and decision, else the alert's own label.
func (r *Result) Label(name string) string {
	switch name {
	case "sector":
		return r.Classification.Sector
	case "kpi":
		return r.Classification.PrimaryKPI()
	case "incident_class":
		return r.Classification.IncidentClass
	case "decision":
		return string(r.Decision.Action)
	}
	return r.Alert.Labels[name]
}

// Rank orders actions from quietest (0) to loudest: none < ticket < page.
func Rank(a Action) int {
	switch a {
	case ActionPage:
		return 2
	case ActionTicket:
		return 1
	}
	return 0
}

// SetCommon sets d's CommonLabels and CommonAnnotations to the pairs all
// of d.Alerts hold alike, as Alertmanager computes them for the alerts of
// one notification.
func SetCommon(d *template.Data) {
	d.CommonLabels = commonKV(d.Alerts, func(a template.Alert) template.KV { return a.Labels })
	d.CommonAnnotations = commonKV(d.Alerts, func(a template.Alert) template.KV { return a.Annotations })
}

// commonKV returns the pairs of kv that every alert holds alike.
func commonKV(alerts template.Alerts, kv func(template.Alert) template.KV) template.KV {
	switch len(alerts) {
	case 0:
		return template.KV{}
	case 1:
		return kv(alerts[0])
	}
	out := template.KV{}
	for k, v := range kv(alerts[0]) {
		shared := true
		for _, a := range alerts[1:] {
			if kv(a)[k] != v {
				shared = false
				break
			}
		}
		if shared {
			out[k] = v
		}
	}
	return out
}
