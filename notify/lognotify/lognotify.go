// Package lognotify is the embedded `log` integration: it writes each
// notification it is given as one JSON object per line, so the router is
// useful (and its decisions visible) before PagerDuty or Slack is set up.
package lognotify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/alertrouter/alertrouter/routing"
)

// Notifier writes notifications as JSON lines to an io.Writer. It is safe
// for concurrent use: lines never interleave.
type Notifier struct {
	mu sync.Mutex
	w  io.Writer
}

// New returns a Notifier writing to w (stdout in the router).
func New(w io.Writer) *Notifier { return &Notifier{w: w} }

// Line is one notification as written.
type Line struct {
	Receiver         string         `json:"receiver"`
	Incident         string         `json:"incident"`
	Kind             routing.Kind   `json:"kind"`
	Action           routing.Action `json:"action"`
	IncidentResolved bool           `json:"incident_resolved"`
	Alerts           []AlertLine    `json:"alerts"`
}

// AlertLine is one alert of a notification.
type AlertLine struct {
	Fingerprint   string           `json:"fingerprint"`
	Alertname     string           `json:"alertname"`
	Status        string           `json:"status"`
	Sector        string           `json:"sector"`
	KPIs          []routing.KPI    `json:"kpis"`
	IncidentClass string           `json:"incident_class"`
	Decision      routing.Decision `json:"decision"`
	Hints         []routing.Hint   `json:"hints"`
	Summary       string           `json:"summary,omitempty"`
}

// Notify writes n as one JSON line. A write error is retryable.
func (l *Notifier) Notify(_ context.Context, n *routing.Notification) error {
	line := Line{Receiver: n.Receiver, Incident: n.Incident, Kind: n.Kind, Action: n.Action, IncidentResolved: n.IncidentResolved,
		Alerts: make([]AlertLine, 0, len(n.Results))}
	for _, r := range n.Results {
		line.Alerts = append(line.Alerts, AlertLine{
			Fingerprint:   r.Alert.Fingerprint,
			Alertname:     r.Alert.Labels["alertname"],
			Status:        r.Alert.Status,
			Sector:        r.Classification.Sector,
			KPIs:          r.Classification.KPIs,
			IncidentClass: r.Classification.IncidentClass,
			Decision:      r.Decision,
			Hints:         r.Classification.Hints,
			Summary:       r.Alert.Annotations["summary"],
		})
	}
	b, err := json.Marshal(line)
	if err != nil {
		return routing.Permanent(fmt.Errorf("encode log notification: %w", err))
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("write log notification: %w", err)
	}
	return nil
}
