package journal

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Kind says what an Entry records.
type Kind string

// The entry kinds.
const (
	// KindDecision is one alert of one webhook, decided.
	KindDecision Kind = "decision"
	// KindDeadLetter is one notification that failed permanently, with what
	// is needed to send it again.
	KindDeadLetter Kind = "dead_letter"
	// KindTriage is one action a Slack click (or the slash command's
	// silence) took on an incident: acknowledged, escalated, silenced,
	// unsilenced or resolved by hand. Readers that decide or count alerts
	// (the simulator, the slash command's look-ups, the console's
	// aggregates) read decisions only and skip it.
	KindTriage Kind = "triage"
	// KindReplay is the outcome of one dead letter sent again (the
	// console's button, `router dead-letters replay`): the incident's page
	// shows it beside the dead letter.
	KindReplay Kind = "replay"
)

// Delivery is the outcome of one notification to one integration of a
// receiver for the entry's alert.
type Delivery struct {
	Receiver string `json:"receiver"`
	// Integration names the integration, e.g. "pagerduty/0" or "slack/1".
	Integration string `json:"integration"`
	// Outcome is one of the Outcome* constants.
	Outcome string `json:"outcome"`
	// Attempts counts the sends, retries included.
	Attempts int `json:"attempts,omitempty"`
	// Latency is the time the delivery took, retries included.
	Latency time.Duration `json:"latency_ns,omitempty"`
	// Error is the last error ("" on success).
	Error string `json:"error,omitempty"`
	// Closed: the notification closed the incident at the integration;
	// Repaged: it paged PagerDuty again after a resolve by hand (the
	// console's marks are of the incident's current episode).
	Closed  bool `json:"closed,omitempty"`
	Repaged bool `json:"repaged,omitempty"`
}

// The delivery outcomes.
const (
	OutcomeSent         = "sent"
	OutcomeFailed       = "failed"      // retryable: Alertmanager will retry
	OutcomeDeadLetter   = "dead_letter" // permanent: kept as a dead letter
	OutcomeDeduplicated = "deduplicated"
)

// Entry is one record of the journal. Decision entries keep enough of the
// alert (labels, annotations, status, times, generator URL) for Simulate to
// decide it again under another configuration.
type Entry struct {
	// ID is assigned by the store when the entry is written; empty before.
	ID      string    `json:"id,omitempty"`
	Kind    Kind      `json:"kind"`
	Time    time.Time `json:"time"`
	Replica string    `json:"replica,omitempty"`

	// GroupKey and ReceivedAt identify the webhook the alert came in, so the
	// simulator decides the alerts of one webhook together, as the pipeline
	// did.
	GroupKey   string    `json:"group_key,omitempty"`
	ReceivedAt time.Time `json:"received_at,omitzero"`

	Fingerprint  string            `json:"fingerprint,omitempty"`
	Alertname    string            `json:"alertname,omitempty"`
	Status       string            `json:"status,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"starts_at,omitzero"`
	EndsAt       time.Time         `json:"ends_at,omitzero"`
	GeneratorURL string            `json:"generator_url,omitempty"`

	Sector        string   `json:"sector,omitempty"`
	SectorName    string   `json:"sector_name,omitempty"`
	KPIs          []string `json:"kpis,omitempty"`
	IncidentClass string   `json:"incident_class,omitempty"`
	Confidence    float64  `json:"confidence,omitempty"`
	// Decision is the action, policy, tier and reasons.
	Decision alert.Decision `json:"decision"`
	// Hints are the ids of the hints attached.
	Hints     []string `json:"hints,omitempty"`
	Incident  string   `json:"incident,omitempty"`
	Receivers []string `json:"receivers,omitempty"`

	Deliveries   []Delivery `json:"deliveries,omitempty"`
	SuppressedBy string     `json:"suppressed_by,omitempty"`
	Suppressed   bool       `json:"suppressed,omitempty"`
	Deduplicated bool       `json:"deduplicated,omitempty"`
	Muted        bool       `json:"muted,omitempty"`
	// MutedBy says which time interval muted the alert.
	MutedBy string `json:"muted_by,omitempty"`
	// MutedReceivers are the receivers of the routes that muted the alert
	// (alert.Result.MutedReceivers): whose alert it was. Receivers stays
	// empty for a muted alert — nothing was sent — so readers that ask
	// where an alert was routed read Receivers alone; the console's
	// receiver filter matches either.
	MutedReceivers []string `json:"muted_receivers,omitempty"`
	// LiveSLO is the one-line live SLO context read from Prometheus.
	LiveSLO string `json:"live_slo,omitempty"`
	// Flapping is the flap damping's reason, when the alert was flapping.
	Flapping string `json:"flapping,omitempty"`

	// DeadLetter is set on KindDeadLetter entries only.
	DeadLetter *DeadLetter `json:"dead_letter,omitempty"`
	// Triage is set on KindTriage entries only.
	Triage *Triage `json:"triage,omitempty"`
	// Replay is set on KindReplay entries only; its outcome is the entry's
	// one delivery.
	Replay *Replay `json:"replay,omitempty"`
}

// The triage actions of a KindTriage entry (Slack's buttons).
const (
	TriageAck       = "ack"
	TriageEscalate  = "escalate"
	TriageSilence   = "silence"
	TriageUnsilence = "unsilence"
	TriageResolve   = "resolve"
)

// Triage is what a click on an incident's Slack message did, as the
// incident's page and the overview show it.
type Triage struct {
	// Action is one of the Triage* constants.
	Action string `json:"action"`
	// UserID and UserName are the Slack user's id and name (the name as
	// Slack sent it, possibly empty).
	UserID   string `json:"user_id,omitempty"`
	UserName string `json:"user_name,omitempty"`
	// Receiver and Integration are the Slack integration whose message
	// was clicked (empty for the slash command).
	Receiver    string `json:"receiver,omitempty"`
	Integration string `json:"integration,omitempty"`
	// Silence holds the silence ids made (silence) or expired (unsilence),
	// comma-separated; Until is when a silence made ends.
	Silence string    `json:"silence,omitempty"`
	Until   time.Time `json:"until,omitzero"`
	// EscalatedTo is the receiver an escalation paged.
	EscalatedTo string `json:"escalated_to,omitempty"`
	// Unconfirmed says PagerDuty did not confirm an escalation in time: it
	// may have paged (recorded as taken, as the Slack message says).
	Unconfirmed bool `json:"unconfirmed,omitempty"`
	// Command says the slash command took it, not a button.
	Command bool `json:"command,omitempty"`
}

// By is who took the action: the user's name, else their id.
func (t *Triage) By() string {
	if t.UserName != "" {
		return t.UserName
	}
	return t.UserID
}

// Replay is a dead letter sent again.
type Replay struct {
	// DeadLetter is the id of the dead letter sent.
	DeadLetter string `json:"dead_letter"`
	// Via says what sent it: "console" (its Replay button) or "cli"
	// (router dead-letters replay); empty when unknown.
	Via string `json:"via,omitempty"`
	// Kind and Action are the notification's (firing, resolved; page,
	// ticket).
	Kind   alert.Kind   `json:"kind,omitempty"`
	Action alert.Action `json:"action,omitempty"`
}

// FromResult returns the decision entry of one decided alert of msg. The
// caller adds Deliveries and the Deduplicated and Muted flags; Time is
// msg.ReceivedAt and Replica is left to the Writer. The entry shares only
// the alert's labels and annotations with r, which are read-only once
// decoded (alert.Alert), so the writer may encode it after the webhook is
// answered.
func FromResult(msg *alert.Message, r *alert.Result) Entry {
	a := r.Alert
	d := r.Decision
	d.Reasons = slices.Clone(d.Reasons)
	e := Entry{
		Kind:          KindDecision,
		Time:          msg.ReceivedAt,
		GroupKey:      msg.GroupKey,
		ReceivedAt:    msg.ReceivedAt,
		Fingerprint:   a.Fingerprint,
		Alertname:     a.Labels["alertname"],
		Status:        a.Status,
		Labels:        a.Labels,
		Annotations:   a.Annotations,
		StartsAt:      a.StartsAt,
		EndsAt:        a.EndsAt,
		GeneratorURL:  a.GeneratorURL,
		Sector:        r.Classification.Sector,
		SectorName:    r.Classification.SectorName,
		IncidentClass: r.Classification.IncidentClass,
		Confidence:    r.Classification.Confidence,
		Decision:      d,
		Incident:      cmp.Or(r.NotifiedIn, r.Incident),
		Receivers:     slices.Clone(r.Receivers),
		SuppressedBy:  r.SuppressedBy,
		Suppressed:    r.SuppressedBy != "",
		Muted:         r.MutedBy != "",
		MutedBy:       r.MutedBy,
	}
	if r.MutedBy != "" {
		e.MutedReceivers = slices.Clone(r.MutedReceivers)
	}
	if r.Live != nil {
		e.LiveSLO = r.Live.Summary
	}
	if r.Flap != nil {
		e.Flapping = r.Flap.Reason
	}
	if n := len(r.Classification.KPIs); n > 0 {
		e.KPIs = make([]string, n)
		for i, k := range r.Classification.KPIs {
			e.KPIs[i] = k.ID
		}
	}
	if n := len(r.Classification.Hints); n > 0 {
		e.Hints = make([]string, n)
		for i, h := range r.Classification.Hints {
			e.Hints[i] = h.ID
		}
	}
	return e
}

// Alert rebuilds the alert the entry was made from, as the decoder would
// have produced it.
func (e *Entry) Alert() alert.Alert {
	return alert.Alert{Alert: template.Alert{
		Status:       e.Status,
		Labels:       template.KV(e.Labels),
		Annotations:  template.KV(e.Annotations),
		StartsAt:     e.StartsAt,
		EndsAt:       e.EndsAt,
		GeneratorURL: e.GeneratorURL,
		Fingerprint:  e.Fingerprint,
	}}
}

// DeadLetter is a notification that failed permanently (a 4xx other than a
// rate limit, or retries exhausted), with what is needed to send it again
// through the current configuration.
type DeadLetter struct {
	// ID is the journal entry's id, set when read back.
	ID          string       `json:"id,omitempty"`
	Receiver    string       `json:"receiver"`
	Integration string       `json:"integration"`
	Incident    string       `json:"incident"`
	Kind        alert.Kind   `json:"kind"`
	Action      alert.Action `json:"action"`
	// Opening, IncidentResolved and Ref are the notification's fields of the
	// same names.
	Opening          bool   `json:"opening,omitempty"`
	IncidentResolved bool   `json:"incident_resolved,omitempty"`
	Ref              string `json:"ref,omitempty"`
	// Error is the failure that made the notification a dead letter.
	Error    string `json:"error"`
	Attempts int    `json:"attempts,omitempty"`
	// Results are the notification's alerts ([]*alert.Result as JSON).
	Results json.RawMessage `json:"results"`
	// Data is the webhook's template data (group labels, external URL).
	Data json.RawMessage `json:"data,omitempty"`
	// ResolvedSince, set by a replay for its send, are the fingerprints of
	// the alerts it fires that resolved since it failed (not stored).
	ResolvedSince []string `json:"-"`
}

// letterAlert is what the replay reads of a dead letter's alert.
type letterAlert struct {
	Fingerprint string    `json:"fingerprint"`
	Status      string    `json:"status"`
	StartsAt    time.Time `json:"startsAt"`
}

// alerts returns the dead letter's alerts (none when its results do not
// decode).
func (d *DeadLetter) alerts() []letterAlert {
	var results []struct {
		Alert *letterAlert
	}
	if json.Unmarshal(d.Results, &results) != nil {
		return nil
	}
	out := make([]letterAlert, 0, len(results))
	for _, res := range results {
		if res.Alert != nil {
			out = append(out, *res.Alert)
		}
	}
	return out
}

// NewDeadLetter returns the dead-letter entry of notification n, which
// failed permanently on its integration with cause after attempts sends.
// Time is now; Replica is left to the Writer.
func NewDeadLetter(n *alert.Notification, cause error, attempts int, now time.Time) (Entry, error) {
	integration := n.Integration
	results, err := json.Marshal(n.Results)
	if err != nil {
		return Entry{}, fmt.Errorf("encode dead letter results: %w", err)
	}
	var data json.RawMessage
	if n.Data != nil {
		if data, err = json.Marshal(n.Data); err != nil {
			return Entry{}, fmt.Errorf("encode dead letter template data: %w", err)
		}
	}
	dl := &DeadLetter{
		Receiver: n.Receiver, Integration: integration, Incident: n.Incident,
		Kind: n.Kind, Action: n.Action, Opening: n.Opening, IncidentResolved: n.IncidentResolved, Ref: n.Ref,
		Attempts: attempts, Results: results, Data: data,
	}
	if cause != nil {
		dl.Error = cause.Error()
	}
	e := Entry{
		Kind: KindDeadLetter, Time: now, Incident: n.Incident,
		Receivers: []string{n.Receiver}, Decision: alert.Decision{Action: n.Action},
		Deliveries: []Delivery{{Receiver: n.Receiver, Integration: integration, Outcome: OutcomeDeadLetter, Attempts: attempts, Error: dl.Error}},
		DeadLetter: dl,
	}
	if len(n.Results) > 0 && n.Results[0].Alert != nil {
		r := n.Results[0]
		e.Fingerprint, e.Alertname, e.Status = r.Alert.Fingerprint, r.Alert.Labels["alertname"], r.Alert.Status
		e.Sector, e.Decision = r.Classification.Sector, r.Decision
	}
	return e, nil
}

// Notification rebuilds the notification to send again.
func (d *DeadLetter) Notification() (*alert.Notification, error) {
	n := &alert.Notification{
		Receiver: d.Receiver, Integration: d.Integration, Incident: d.Incident, Kind: d.Kind,
		Action: d.Action, Opening: d.Opening, IncidentResolved: d.IncidentResolved, Ref: d.Ref,
	}
	if err := json.Unmarshal(d.Results, &n.Results); err != nil {
		return nil, fmt.Errorf("decode dead letter %s results: %w", d.ID, err)
	}
	if len(d.Data) > 0 {
		n.Data = new(template.Data)
		if err := json.Unmarshal(d.Data, n.Data); err != nil {
			return nil, fmt.Errorf("decode dead letter %s template data: %w", d.ID, err)
		}
	}
	return n, nil
}
