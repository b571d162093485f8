package pagerduty_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// An incident's events go to the routing key its trigger went to (its Ref,
// kept by the dispatch core) after the key changed; a Ref this process
// never knew is sent to the configured key and said so.
func TestAnIncidentsEventsGoToTheKeyItWasTriggeredWith(t *testing.T) {
	const otherKey = "fedcba9876543210fedcba9876543210"
	old := newHarness(t, nil)
	open := opening("aaa")
	if err := old.n.Notify(context.Background(), open); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(open.Ref, "pd:") || strings.Contains(open.Ref, pdtest.RoutingKey) {
		t.Fatalf("the trigger's Ref is %q, want a digest of the endpoint, not the key", open.Ref)
	}
	// The configuration now has another key for the same integration.
	h := newHarness(t, func(c *pagerduty.Config) { c.RoutingKey = otherKey; c.URL = old.srv.EnqueueURL() })
	if !pagerduty.RoutingKeyChanged(old.n, h.n) {
		t.Fatal("RoutingKeyChanged is false for two keys")
	}
	res := resolved(true, "aaa")
	res.Ref = open.Ref
	if err := h.n.Notify(context.Background(), res); err != nil {
		t.Fatal(err)
	}
	ev := old.srv.Events()
	if len(ev) != 2 || ev[1].EventAction != "resolve" || ev[1].RoutingKey != pdtest.RoutingKey {
		t.Fatalf("events %+v, want the resolve at the key the trigger went to", ev)
	}

	// A new incident goes to the new key and keeps its Ref.
	fresh := opening("bbb")
	fresh.Incident = "llm-inference-gpu/embed/TTFT"
	if err := h.n.Notify(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	if ev := old.srv.Events(); ev[2].RoutingKey != otherKey || fresh.Ref == open.Ref {
		t.Fatalf("a new incident went to %q with Ref %q", ev[2].RoutingKey, fresh.Ref)
	}

	// A Ref no notifier of this process had: the configured key, and a warning.
	lost := resolved(true, "ccc")
	lost.Ref = "pd:0000000000000000"
	if err := h.n.Notify(context.Background(), lost); err != nil {
		t.Fatal(err)
	}
	if ev := old.srv.Events(); ev[3].RoutingKey != otherKey || !strings.Contains(h.logs.String(), "routing key or events URL this router does not hold") {
		t.Fatalf("an unknown Ref's resolve went to %q; log:\n%s", ev[3].RoutingKey, h.logs.String())
	}
}
