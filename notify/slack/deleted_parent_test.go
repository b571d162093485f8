package slack_test

import (
	"context"
	"strings"
	"testing"

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
