package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Someone deletes the incident's parent message: the resolve finds no
// thread (thread_not_found) and posts a parent of its own, drawn resolved,
// rather than failing the webhook or posting nothing.
func TestAResolveAfterTheParentWasDeletedPostsANewParent(t *testing.T) {
	h := newHarness(t)
	n, no := h.opened(t)
	p := h.srv.Parents()[0]
	h.srv.Delete(p.Channel, p.TS)
	resolved := under(no.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	resolved.IncidentResolved = true
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	parents := h.srv.Parents()
	if len(parents) != 1 || parents[0].TS == p.TS || !strings.Contains(string(parents[0].Blocks), "*resolved*") {
		t.Fatalf("parents %+v, want one new parent drawn resolved", parents)
	}
	if !strings.Contains(h.logs.String(), "parent message is gone") {
		t.Errorf("logs %s, want the deleted parent said", h.logs.String())
	}
}

// The store forgot the incident's parent (Redis restarted empty, or a
// Sentinel failover dropped the opening's writes): the resolve posts a
// message of its own and the first parent stays drawn firing. That was
// silent; it is logged now, so an operator can find the stale parent.
func TestAResolveWhoseParentTheStoreForgotIsLogged(t *testing.T) {
	h := newHarness(t)
	n, _ := h.opened(t)
	resolved := note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa")
	resolved.IncidentResolved = true // and no Ref: the store lost it
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if len(h.srv.Parents()) != 2 {
		t.Fatalf("%d parents, want the first and the resolve's own", len(h.srv.Parents()))
	}
	if !strings.Contains(h.logs.String(), "Slack parent is not known to the store") {
		t.Errorf("logs %s, want the forgotten parent said", h.logs.String())
	}
}

// The triage moved to another channel and the old one was archived: the
// open incident's update and its resolve post new parents in the channel
// configured now, the update's Ref naming it, instead of failing every
// Alertmanager retry against the archived channel (an audit: parents
// stranded "firing", 133 failed posts in 75 s). While the archived channel
// is still the configured one, the post fails as the reply did.
func TestAnIncidentWhoseChannelWasArchivedGoesOnInTheConfiguredChannel(t *testing.T) {
	h := &harness{srv: slacktest.NewServer(token, "triage", "triage-new"), waits: &notifytest.Waits{}, logs: &notifytest.SyncBuffer{}}
	t.Cleanup(h.srv.Close)
	_, opened := h.opened(t)
	h.srv.Archive("triage")

	old := h.notifier(t, nil)
	update := under(opened.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"))
	if err := old.Notify(context.Background(), update); err == nil || !strings.Contains(err.Error(), "is_archived") {
		t.Fatalf("Notify to the archived configured channel: %v, want is_archived", err)
	}

	moved := h.notifier(t, func(c *slack.Config) { c.Channel = "#triage-new" })
	update = under(opened.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"))
	if err := moved.Notify(context.Background(), update); err != nil {
		t.Fatalf("update: %v", err)
	}
	newID := h.srv.ChannelID("triage-new")
	if !strings.HasPrefix(update.Ref, newID+" ") {
		t.Fatalf("update's Ref %q, want a parent in %s", update.Ref, newID)
	}
	resolved := under(update.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa", "bbb"))
	resolved.IncidentResolved = true
	if err := moved.Notify(context.Background(), resolved); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	var inNew []slacktest.Message
	for _, m := range h.srv.Parents() {
		if m.Channel == newID {
			inNew = append(inNew, m)
		}
	}
	if len(inNew) != 1 || !strings.Contains(string(inNew[0].Blocks), "*resolved*") || len(h.srv.Thread(inNew[0].TS)) != 1 {
		t.Fatalf("parents in the new channel %+v, want the update's, redrawn resolved with the resolve in its thread", inNew)
	}
	if !strings.Contains(h.logs.String(), "no longer post to") {
		t.Errorf("logs %s, want the move said", h.logs.String())
	}
}
