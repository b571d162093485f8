// Package lognotify is the embedded `log` receiver: it writes each
// notification it is given as one JSON object on one line, so an operator
// can see what alertrouter would send without PagerDuty or Slack.
package lognotify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Integration is the integration label of the metrics.
const Integration = "log"

// Notifier writes notifications as JSON lines to a writer. Safe for
// concurrent use: lines never interleave.
type Notifier struct {
	mu      sync.Mutex // guards w and byReceiver
	w       io.Writer
	metrics *notify.Metrics
	// byReceiver are the metrics handles of each receiver seen: one
	// Notifier serves every receiver with log_configs.
	byReceiver map[string]*notify.IntegrationMetrics
}

var _ alert.Notifier = (*Notifier)(nil)

// Option configures a Notifier.
type Option func(*Notifier)

// WithMetrics counts the notifications on m under integration "log" and
// the notification's receiver.
func WithMetrics(m *notify.Metrics) Option {
	return func(l *Notifier) { l.metrics = m }
}

// metricsOf returns the metrics handle of receiver; l.mu must be held.
func (l *Notifier) metricsOf(receiver string) *notify.IntegrationMetrics {
	im, ok := l.byReceiver[receiver]
	if !ok {
		if l.byReceiver == nil {
			l.byReceiver = map[string]*notify.IntegrationMetrics{}
		}
		im = l.metrics.Integration(receiver, Integration)
		l.byReceiver[receiver] = im
	}
	return im
}

// New returns a Notifier writing to w (stdout in the router).
func New(w io.Writer, opts ...Option) *Notifier {
	l := &Notifier{w: w}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Line is the JSON object written per notification.
type Line struct {
	Receiver         string  `json:"receiver"`
	Incident         string  `json:"incident"`
	Kind             string  `json:"kind"`
	Action           string  `json:"action"`
	IncidentResolved bool    `json:"incident_resolved"`
	Alerts           []Alert `json:"alerts"`
}

// Alert is one alert of a Line.
type Alert struct {
	Fingerprint string         `json:"fingerprint"`
	Alertname   string         `json:"alertname"`
	Status      string         `json:"status"`
	Sector      string         `json:"sector"`
	KPIs        []string       `json:"kpis"`
	Decision    alert.Decision `json:"decision"`
	Hints       []Hint         `json:"hints"`
}

// Hint is one hint of an Alert.
type Hint struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Notify writes n as one line. It fails (retryably) only when the writer
// does.
func (l *Notifier) Notify(_ context.Context, n *alert.Notification) error {
	line := Line{
		Receiver:         n.Receiver,
		Incident:         n.Incident,
		Kind:             string(n.Kind),
		Action:           string(n.Action),
		IncidentResolved: n.IncidentResolved,
		Alerts:           make([]Alert, 0, len(n.Results)),
	}
	for _, r := range n.Results {
		a := Alert{
			Sector:   r.Classification.Sector,
			KPIs:     make([]string, 0, len(r.Classification.KPIs)),
			Decision: r.Decision,
			Hints:    make([]Hint, 0, len(r.Classification.Hints)),
		}
		if r.Alert != nil {
			a.Fingerprint, a.Alertname, a.Status = r.Alert.Fingerprint, r.Alert.Labels["alertname"], r.Alert.Status
		}
		for _, k := range r.Classification.KPIs {
			a.KPIs = append(a.KPIs, k.ID)
		}
		for _, h := range r.Classification.Hints {
			a.Hints = append(a.Hints, Hint{ID: h.ID, Text: h.Text})
		}
		if a.Decision.Reasons == nil {
			a.Decision.Reasons = []string{}
		}
		line.Alerts = append(line.Alerts, a)
	}
	b, err := json.Marshal(line)
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.metricsOf(n.Receiver)
	if err != nil {
		m.Outcome(notify.OutcomeFailure)
		return fmt.Errorf("encode notification of incident %q: %w", n.Incident, err)
	}
	b = append(b, '\n')
	m.Attempt()
	if _, err = l.w.Write(b); err != nil {
		m.Outcome(notify.OutcomeFailure)
		return fmt.Errorf("write notification of incident %q: %w", n.Incident, err)
	}
	m.Outcome(notify.OutcomeSuccess)
	return nil
}
