package pagerduty

import (
	"context"
	"errors"
	"fmt"
	"time"

	pd "github.com/PagerDuty/go-pagerduty"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Acknowledge sends an Events v2 acknowledge for incident (its dedup_key is
// DedupKey(incident)), with the notifier's retries.
func (n *Notifier) Acknowledge(ctx context.Context, incident string) error {
	return n.event(ctx, incident, &pd.V2Event{RoutingKey: n.routingKey, Action: "acknowledge", DedupKey: DedupKey(incident)})
}

// Resolve sends an Events v2 resolve for incident. PagerDuty closes its
// incident; the alerts keep firing in Alertmanager until their rule clears.
func (n *Notifier) Resolve(ctx context.Context, incident string) error {
	return n.event(ctx, incident, &pd.V2Event{RoutingKey: n.routingKey, Action: "resolve", DedupKey: DedupKey(incident)})
}

// AcknowledgeAt is Acknowledge for an incident whose Ref at this
// integration is ref (kept by the dispatch core with its state): sent to
// the routing key its trigger went to, which a reload may have changed
// since (target).
func (n *Notifier) AcknowledgeAt(ctx context.Context, incident, ref string) error {
	t := n.targetOf(incident, ref, "acknowledge")
	return t.event(ctx, incident, &pd.V2Event{RoutingKey: t.routingKey, Action: "acknowledge", DedupKey: DedupKey(incident)})
}

// ResolveAt is Resolve for an incident whose Ref at this integration is
// ref (AcknowledgeAt).
func (n *Notifier) ResolveAt(ctx context.Context, incident, ref string) error {
	t := n.targetOf(incident, ref, "resolve")
	return t.event(ctx, incident, &pd.V2Event{RoutingKey: t.routingKey, Action: "resolve", DedupKey: DedupKey(incident)})
}

// Escalate triggers e's incident in PagerDuty (a ticket escalated to a page
// by a person): its summary cut to PagerDuty's limit, details in
// custom_details, links in the event's links, and source, component, group
// and class as a routed page of the incident carries them.
func (n *Notifier) Escalate(ctx context.Context, e notify.Escalation) error {
	summary := e.Summary
	if summary == "" {
		summary = e.Incident
	}
	summary, _ = notify.TruncateInRunes(summary, maxSummary)
	source := e.Source
	if source == "" {
		source = "alertrouter"
	}
	source, _ = notify.TruncateInRunes(source, notify.MaxPageSource)
	ev := &pd.V2Event{
		RoutingKey: n.routingKey,
		Action:     "trigger",
		DedupKey:   DedupKey(e.Incident),
		Client:     n.escalationClient(e.Incident),
		Payload: &pd.V2Payload{
			Summary:   summary,
			Source:    source,
			Severity:  "critical",
			Component: e.Component,
			Group:     e.Group,
			Class:     e.Class,
			Details:   e.Details,
		},
	}
	for _, l := range e.Links {
		ev.Links = append(ev.Links, l)
	}
	return n.event(ctx, e.Incident, ev)
}

func (n *Notifier) event(ctx context.Context, incident string, ev *pd.V2Event) error {
	var kept time.Time
	err := notify.Retry(ctx, n.deps.Retry, func(ctx context.Context) error {
		err := n.send(ctx, ev, &kept, clickPaceWait)
		var bad *badRequestError
		if errors.As(err, &bad) {
			return alert.Permanent(err)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("pagerduty receiver %q, incident %q: %s: %w", n.name, incident, ev.Action, err)
	}
	return nil
}
