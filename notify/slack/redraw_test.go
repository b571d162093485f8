package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// drawnOf is the blocks message ts of e's Slack stand-in is drawn with now.
func (e *triageEnv) drawnOf(ts string) string {
	for _, m := range e.h.srv.Parents() {
		if m.TS == ts {
			return string(m.Blocks)
		}
	}
	return ""
}

// resolveRateLimited sends the env's resolve through n, every chat.update
// of its webhook answered 429 with a Retry-After past the webhook's time.
func (e *triageEnv) resolveRateLimited(t *testing.T, n interface {
	Notify(context.Context, *alert.Notification) error
}) {
	t.Helper()
	// The webhook's attempt and the first later try (one attempt each).
	limited := slacktest.Fault{Method: "chat.update", Status: 429, RetryAfter: "6"}
	e.h.srv.Fail(limited, limited)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := n.Notify(ctx, e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatalf("the resolve: %v", err)
	}
	if len(e.h.srv.Thread(e.parent.TS)) != 1 {
		t.Fatalf("thread %+v, want the resolve's reply", e.h.srv.Thread(e.parent.TS))
	}
	if strings.Contains(e.drawnOf(e.parent.TS), "*resolved*") {
		t.Fatal("the parent was drawn resolved through Slack's rate limit")
	}
}

// refiredElsewhere resolves the env's incident with its parent's redraw
// rate-limited past the webhook (a redraw waits), and returns another
// replica's notifier (the same Slack, named by another address, so its
// edits cannot cancel this process's waiting redraw; mutate changes its
// config further) with a re-fire of the incident under the same parent.
func (e *triageEnv) refiredElsewhere(t *testing.T, mutate func(*slack.Config)) (*slack.Notifier, *alert.Notification) {
	t.Helper()
	n := e.notifier(t, nil)
	e.triage(t, n, e.pager(t), nil, nil)
	e.resolveRateLimited(t, n)
	other := e.notifier(t, func(c *slack.Config) {
		c.APIURL = strings.Replace(c.APIURL, "127.0.0.1", "localhost", 1)
		if mutate != nil {
			mutate(c)
		}
	})
	e.triage(t, other, e.pager(t), nil, nil)
	again := under(e.parent.Channel+" "+e.parent.TS, opening("bbb"))
	again.Integration = "slack/0"
	return other, again
}

// chat.update is Tier 3 (about 50 a minute): in a storm of resolves Slack
// answers 429 with a Retry-After longer than the webhook has left, and the
// parent kept saying firing for good, its alerts resolved (an audit: 30 of
// 80). The resolve is answered (its reply is in the thread), and the
// parent is drawn resolved after the Retry-After, once.
func TestAParentRedrawRateLimitedPastTheWebhookIsDrawnLater(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, nil)
	e.triage(t, n, e.pager(t), nil, nil)
	e.resolveRateLimited(t, n)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(e.drawnOf(e.parent.TS), "*resolved*"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the parent was never drawn resolved after the Retry-After; log:\n%s", e.h.logs.String())
		}
	}
	for _, m := range e.h.srv.Parents() {
		if m.TS == e.parent.TS && m.Updates != 1 {
			t.Errorf("the parent was updated %d times, want once", m.Updates)
		}
	}
	if !strings.Contains(e.h.logs.String(), "drawn again later") {
		t.Errorf("log %s, want the later redraw said", e.h.logs.String())
	}
}

// The incident fires again on another replica while this one's resolved
// drawing waits for Slack's Retry-After: the other replica's firing
// drawing stays — the waiting redraw reads that the parent is no longer
// resolved and is not sent (a review: it painted a live incident's parent
// back to its waiting drawing).
func TestALaterRedrawNeverPaintsOverAnotherReplicasDrawing(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	other, again := e.refiredElsewhere(t, nil)
	if err := other.Notify(context.Background(), again); err != nil {
		t.Fatalf("the re-fire: %v", err)
	}
	if strings.Contains(e.drawnOf(e.parent.TS), "*resolved*") {
		t.Fatalf("the re-fire left the parent drawn resolved: %s", e.drawnOf(e.parent.TS))
	}
	time.Sleep(12 * time.Second) // past the Retry-After and its spread
	if strings.Contains(e.drawnOf(e.parent.TS), "*resolved*") {
		t.Fatalf("the later redraw painted the firing incident resolved; log:\n%s", e.h.logs.String())
	}
}

// A resolve whose parent's redraw Slack failed on every attempt of the
// webhook (500s, the connection cut) was answered — its reply is in the
// thread — and the parent said firing for good (an audit). It is drawn
// resolved later, also for an entry without triage buttons (the parent's
// resolved mark is kept all the same).
func TestAParentRedrawSlackFailedIsDrawnLaterWithoutButtons(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	n := e.notifier(t, func(c *slack.Config) { c.Actions = slack.TriageActions{} })
	e.triage(t, n, nil, nil, nil)
	failing := slacktest.Fault{Method: "chat.update", Status: 500}
	e.h.srv.Fail(failing, failing, failing, failing, failing, failing)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := n.Notify(ctx, e.resolvedNote(alert.ActionTicket)); err != nil {
		t.Fatalf("the resolve: %v", err)
	}
	if len(e.h.srv.Thread(e.parent.TS)) != 1 || strings.Contains(e.drawnOf(e.parent.TS), "*resolved*") {
		t.Fatalf("thread %+v, parent %s: want the resolve's reply, the parent not drawn yet", e.h.srv.Thread(e.parent.TS), e.drawnOf(e.parent.TS))
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(e.drawnOf(e.parent.TS), "*resolved*"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the parent was never drawn resolved after Slack failed its redraw; log:\n%s", e.h.logs.String())
		}
	}
}

// The incident fires again on another replica while this one's resolved
// drawing waits, and that replica's edit of the parent is slow (Slack
// hangs): the waiting redraw reads that the parent no longer is resolved —
// the mark is cleared before the edit, not after it (a review: the later
// redraw read the old mark during the edit and painted the firing incident
// resolved).
func TestALaterRedrawNeverPaintsOverASlowFiringEdit(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	other, again := e.refiredElsewhere(t, func(c *slack.Config) { c.Timeout = model.Duration(12 * time.Second) })
	e.h.srv.Fail(slacktest.Fault{Method: "chat.update", Hang: true})
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 14*time.Second)
		defer cancel()
		done <- other.Notify(ctx, again)
	}()
	time.Sleep(11 * time.Second) // past the waiting redraw's turn, the firing edit still hanging
	if strings.Contains(e.drawnOf(e.parent.TS), "*resolved*") {
		t.Fatalf("the later redraw painted the parent resolved while the incident fired again; log:\n%s", e.h.logs.String())
	}
	<-done
}
