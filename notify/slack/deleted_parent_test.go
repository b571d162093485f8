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
