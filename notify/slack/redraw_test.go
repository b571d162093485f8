package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// chat.update is Tier 3 (about 50 a minute): in a storm of resolves Slack
// answers 429 with a Retry-After longer than the webhook has left, and the
// parent kept saying firing for good, its alerts resolved (an audit: 30 of
// 80). The resolve is answered (its reply is in the thread), and the
// parent is drawn resolved after the Retry-After — once, however many
// times Slack refused it meanwhile.
func TestAParentRedrawRateLimitedPastTheWebhookIsDrawnLater(t *testing.T) {
	h := newHarness(t)
	n, no := h.opened(t)
	parent := h.srv.Parents()[0]
	resolved := under(no.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	resolved.IncidentResolved = true

	limited := slacktest.Fault{Method: "chat.update", Status: 429, RetryAfter: "6"}
	h.srv.Fail(limited, limited, limited, limited, limited)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := n.Notify(ctx, resolved); err != nil {
		t.Fatalf("the resolve: %v", err)
	}
	if len(h.srv.Thread(parent.TS)) != 1 {
		t.Fatalf("thread %+v, want the resolve's reply", h.srv.Thread(parent.TS))
	}
	drawnResolved := func() bool {
		for _, m := range h.srv.Parents() {
			if m.TS == parent.TS {
				return strings.Contains(string(m.Blocks), "*resolved*")
			}
		}
		return false
	}
	if drawnResolved() {
		t.Fatal("the parent was drawn resolved through Slack's rate limit")
	}
	for deadline := time.Now().Add(20 * time.Second); !drawnResolved(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the parent was never drawn resolved after the Retry-After; log:\n%s", h.logs.String())
		}
	}
	for _, m := range h.srv.Parents() {
		if m.TS == parent.TS && m.Updates != 1 {
			t.Errorf("the parent was updated %d times, want once", m.Updates)
		}
	}
	if !strings.Contains(h.logs.String(), "drawn again after Slack's Retry-After") {
		t.Errorf("log %s, want the later redraw said", h.logs.String())
	}
}

// The incident fires again while its resolved drawing waits for Slack's
// Retry-After: the firing drawing, which Slack took, stays — the later
// redraw is cancelled, never painting a firing incident resolved.
func TestALaterRedrawNeverPaintsOverANewerDrawing(t *testing.T) {
	h := newHarness(t)
	n, no := h.opened(t)
	parent := h.srv.Parents()[0]
	resolved := under(no.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	resolved.IncidentResolved = true
	limited := slacktest.Fault{Method: "chat.update", Status: 429, RetryAfter: "6"}
	h.srv.Fail(limited, limited, limited, limited, limited)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := n.Notify(ctx, resolved); err != nil {
		t.Fatalf("the resolve: %v", err)
	}
	again := under(no.Ref, opening("bbb"))
	if err := n.Notify(context.Background(), again); err != nil {
		t.Fatalf("the re-fire: %v", err)
	}
	drawn := func() string {
		for _, m := range h.srv.Parents() {
			if m.TS == parent.TS {
				return string(m.Blocks)
			}
		}
		return ""
	}
	if strings.Contains(drawn(), "*resolved*") {
		t.Fatalf("the re-fire left the parent drawn resolved: %s", drawn())
	}
	time.Sleep(8 * time.Second) // past the Retry-After
	if strings.Contains(drawn(), "*resolved*") {
		t.Fatalf("the later redraw painted the firing incident resolved; log:\n%s", h.logs.String())
	}
}
