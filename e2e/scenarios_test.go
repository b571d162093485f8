package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// The incidents of the scenario alerts, as `router explain` reports them.
const (
	pageIncident   = "slo/chat-ttft"
	ticketIncident = "llm-prompt-cache-storage/chat/COCC"
)

// scenarioAlerts are an LLM-serving TTFT burn-rate page, a prompt-cache
// capacity ticket and an info alert (decided none).
func scenarioAlerts() []alert {
	now := time.Now().UTC()
	return []alert{{
		Labels: map[string]string{"alertname": "VLLMTTFTBurnRateHigh", "service": "chat",
			"sector": "llm-inference-gpu", "kpi": "TTFT", "slo": "chat-ttft"},
		Annotations: map[string]string{"burn_rate_1h": "15.2", "burn_rate_5m": "16",
			"summary": "chat TTFT error budget burning 15x", "runbook_url": "https://runbooks.example/chat-ttft"},
		StartsAt: now, GeneratorURL: "http://prometheus.example/graph",
	}, {
		Labels:      map[string]string{"alertname": "KVCacheUsageHigh", "service": "chat", "sector": "llm-prompt-cache-storage"},
		Annotations: map[string]string{"utilization": "0.85", "summary": "KV cache store 85% full"},
		StartsAt:    now, GeneratorURL: "http://prometheus.example/graph",
	}, {
		Labels:   map[string]string{"alertname": "InfoOnly", "severity": "info"},
		StartsAt: now, GeneratorURL: "http://prometheus.example/graph",
	}}
}

// notified is a snapshot of everything the stand-ins accepted.
type notified struct {
	pdEvents int
	triggers int
	resolves int
	parents  []slacktest.Message
	messages []slacktest.Message
}

func (s *stack) notified() notified {
	key := pagerduty.DedupKey(pageIncident)
	return notified{pdEvents: len(s.pd.Events()), triggers: s.pd.Triggers(key), resolves: s.pd.Resolves(key),
		parents: s.slack.Parents(), messages: s.slack.Messages()}
}

// firingDelivered checks one trigger of the page's dedup_key, no other
// PagerDuty event, and two Slack parents: the page's mirror and the ticket.
func (s *stack) firingDelivered() error {
	n := s.notified()
	return errAll(
		wantCount("PagerDuty triggers of "+pageIncident, n.triggers, 1),
		wantCount("PagerDuty events", n.pdEvents, 1),
		wantCount("Slack parent messages", len(n.parents), 2),
		wantCount("Slack messages", len(n.messages), 2),
	)
}

// resolvedDelivered checks the firing state plus one PagerDuty resolve of
// the same dedup_key, one thread reply under each parent and each parent
// edited.
func (s *stack) resolvedDelivered() error {
	n := s.notified()
	errs := []error{
		wantCount("PagerDuty triggers of "+pageIncident, n.triggers, 1),
		wantCount("PagerDuty resolves of "+pageIncident, n.resolves, 1),
		wantCount("PagerDuty events", n.pdEvents, 2),
		wantCount("Slack parent messages", len(n.parents), 2),
		wantCount("Slack messages", len(n.messages), 4),
	}
	for _, p := range n.parents {
		errs = append(errs,
			wantCount("replies in the thread of "+p.TS, len(s.slack.Thread(p.TS)), 1),
			wantCount("edits of parent "+p.TS, p.Updates, 1))
	}
	return errAll(errs...)
}

// noInfoSent checks that the info alert reached the router (decided none)
// and was never sent anywhere.
func noInfoSent(s *stack, routers ...*proc) error {
	var none float64
	for _, r := range routers {
		v, err := r.metric("alertrouter_decisions_total", `action="none"`)
		if err != nil {
			return err
		}
		none += v
	}
	if none < 1 {
		return fmt.Errorf("no router decided the info alert yet")
	}
	for _, m := range s.slack.Messages() {
		if strings.Contains(m.Text, "InfoOnly") || strings.Contains(string(m.Blocks), "InfoOnly") {
			return fmt.Errorf("the info alert reached Slack: %q", m.Text)
		}
	}
	for _, e := range s.pd.Events() {
		if strings.Contains(string(e.Raw), "InfoOnly") {
			return fmt.Errorf("the info alert reached PagerDuty: %s", e.Raw)
		}
	}
	return nil
}

// quietWindow is how long the scenarios watch for duplicates after the
// expected notifications arrived: three of Alertmanager's group flushes.
const quietWindow = 3 * groupInterval

func TestOneAlertmanagerPagesOnceMirrorsToSlackAndResolves(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	router := s.startRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{})

	alerts := scenarioAlerts()
	postAlerts(t, alerts, am)
	eventually(t, 20*time.Second, "firing notifications", s.firingDelivered)
	eventually(t, 10*time.Second, "info alert decided none and not sent", func() error { return noInfoSent(s, router) })

	postAlerts(t, resolved(alerts), am)
	eventually(t, 20*time.Second, "resolve notifications", s.resolvedDelivered)
	consistently(t, quietWindow, "no duplicate after resolve", s.resolvedDelivered)
	if err := noInfoSent(s, router); err != nil {
		t.Fatal(err)
	}
}
