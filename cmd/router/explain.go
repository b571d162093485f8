package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// explanation is the per-alert JSON of `router explain` (SPEC §8).
type explanation struct {
	Fingerprint    string             `json:"fingerprint"`
	Alertname      string             `json:"alertname"`
	Status         string             `json:"status"`
	Sector         string             `json:"sector"`
	KPIs           []alert.KPI        `json:"kpis"`
	AlertStyle     string             `json:"alert_style"`
	IncidentClass  string             `json:"incident_class"`
	Classification classificationJSON `json:"classification"`
	Decision       decisionJSON       `json:"decision"`
	Hints          []alert.Hint       `json:"hints"`
	Incident       string             `json:"incident"`
	Receivers      []string           `json:"receivers"`
	SuppressedBy   string             `json:"suppressed_by"`
	MutedBy        string             `json:"muted_by,omitempty"`
	MutedRoutes    []string           `json:"muted_routes,omitempty"`
	Flags          []string           `json:"flags,omitempty"`
}

type classificationJSON struct {
	Confidence float64        `json:"confidence"`
	Signals    []alert.Signal `json:"signals"`
	Candidates []string       `json:"candidates,omitempty"`
}

type decisionJSON struct {
	Action  alert.Action `json:"action"`
	Policy  string       `json:"policy"`
	Tier    string       `json:"tier"`
	Reasons []string     `json:"reasons"`
	SLO     string       `json:"slo,omitempty"`
	Budget  string       `json:"budget,omitempty"`
}

func explain(r *alert.Result) explanation {
	c := &r.Classification
	e := explanation{
		Fingerprint:   r.Alert.Fingerprint,
		Alertname:     r.Alert.Labels["alertname"],
		Status:        r.Alert.Status,
		Sector:        c.Sector,
		KPIs:          nonNil(c.KPIs),
		AlertStyle:    c.AlertStyle,
		IncidentClass: c.IncidentClass,
		Classification: classificationJSON{
			Confidence: c.Confidence, Signals: nonNil(c.Signals), Candidates: c.Candidates,
		},
		Decision: decisionJSON{
			Action: r.Decision.Action, Policy: r.Decision.Policy, Tier: r.Decision.Tier,
			Reasons: nonNil(r.Decision.Reasons), SLO: r.Decision.SLO, Budget: r.Decision.Budget,
		},
		Hints:        nonNil(c.Hints),
		Incident:     r.Incident,
		Receivers:    nonNil(r.Receivers),
		SuppressedBy: r.SuppressedBy,
		MutedBy:      r.MutedBy,
		Flags:        r.Alert.Flags,
	}
	return e
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// readUntilDone reads r to its end, or until ctx ends (Ctrl-C, SIGTERM):
// a payload forgotten on the command line left explain waiting on the
// terminal, and Ctrl-C did not stop it (an audit).
func readUntilDone(ctx context.Context, r io.Reader) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- read{b, err}
	}()
	select {
	case d := <-done:
		return d.b, d.err
	case <-ctx.Done():
		return nil, fmt.Errorf("standard input: %w", context.Cause(ctx))
	}
}

// readInput reads file, or standard input for "-" or "" (kingpin hands a
// lone "-" over as "") until ctx ends.
func (m *Main) readInput(ctx context.Context, file string) ([]byte, error) {
	if file == "-" || file == "" {
		return readUntilDone(ctx, m.Stdin)
	}
	return os.ReadFile(file)
}

// explain is `router explain FILE|-`: the pure stages of the pipeline on a
// payload, nothing stored, nothing sent. Exit 1 for an unreadable payload,
// or one serve would refuse (webhook.max_body_bytes).
func (m *Main) explain(ctx context.Context, file string) int {
	body, err := m.readInput(ctx, file)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router explain: read payload: %v\n", err)
		return 1
	}
	cfg, err := m.loadConfig()
	if err != nil {
		fmt.Fprintf(m.Stderr, "router explain: %v\n", err)
		return 1
	}
	if max := cfg.Webhook.MaxBodyBytes; int64(len(body)) > max {
		// serve answers such a body 413, which Alertmanager does not
		// retry: explain showed it decided and sent (an audit).
		fmt.Fprintf(m.Stderr, "router explain: payload rejected (HTTP 413 would be answered): body of %d bytes larger than the limit of %d bytes (webhook.max_body_bytes)\n", len(body), max)
		return 1
	}
	p, err := evaluator(cfg)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router explain: %v\n", err)
		return 1
	}
	msg, err := webhook.Decode(body, time.Now())
	if err != nil {
		var ie *webhook.InputError
		if errors.As(err, &ie) {
			fmt.Fprintf(m.Stderr, "router explain: payload rejected (HTTP %d would be answered): %v\n", ie.Status, ie)
		} else {
			fmt.Fprintf(m.Stderr, "router explain: %v\n", err)
		}
		return 1
	}
	for _, r := range msg.Rejected {
		fmt.Fprintf(m.Stderr, "router explain: alert %d rejected: %s\n", r.Index, r.Reason)
	}
	now := time.Now()
	p.Now = func() time.Time { return now }
	enc := json.NewEncoder(m.Stdout)
	for _, r := range p.Evaluate(msg) {
		e := explain(r)
		if len(r.Receivers) > 0 && r.Alert.Firing() {
			// A route muted beside one that delivers: say which receiver
			// this alert matched and does not reach now.
			e.MutedRoutes = routing.MutedRoutes(p.Routes.MatchRoutes(r.Label), now)
		}
		if err := enc.Encode(e); err != nil {
			fmt.Fprintf(m.Stderr, "router explain: %v\n", err)
			return 1
		}
	}
	return 0
}
