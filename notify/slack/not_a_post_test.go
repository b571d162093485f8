package slack_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// fatal_error and internal_error "may have acted": a post they answer is
// not made again at once (TestAPostSlackMayHaveMadeIsNotPostedAgainAtOnce).
// A call that is no post is idempotent and retried as before: held like a
// post, the resolved parent's edit waited for a later redraw (5 s and
// more), and on-call read the card firing after the resolve was answered.
func TestAnEditSlackMayHaveMadeIsRetriedAtOnce(t *testing.T) {
	for _, code := range []string{"fatal_error", "internal_error"} {
		e := newTriageEnv(t, alert.ActionTicket, nil)
		n := e.notifier(t, nil)
		e.triage(t, n, nil, nil, nil)
		updates := e.h.srv.Calls("chat.update")
		e.h.srv.Fail(slacktest.Fault{Method: "chat.update", Error: code})
		if err := n.Notify(context.Background(), e.resolvedNote(alert.ActionTicket)); err != nil {
			t.Fatalf("%s: the resolve: %v", code, err)
		}
		resolved := strings.Contains(e.drawnOf(e.parent.TS), "*resolved*")
		if got := e.h.srv.Calls("chat.update") - updates; got != 2 || !resolved {
			t.Errorf("%s: %d edits, parent drawn resolved: %v; want the failed edit retried at once and the parent drawn resolved", code, got, resolved)
		}
	}
}

// The same for a call that returns its error: auth.test (readiness,
// check-config) failing on every attempt with a "may have acted" code
// was retried, and its error holds no claims.
func TestACheckSlackMayHaveMadeIsRetriedAndHoldsNoClaims(t *testing.T) {
	h := newHarness(t)
	h.srv.Fail(slices.Repeat([]slacktest.Fault{{Error: "internal_error"}}, 5)...)
	err := h.notifier(t, nil).Check(context.Background())
	if err == nil || !alert.Retryable(err) || notify.HoldsClaims(err) {
		t.Fatalf("Check = %v (holds claims: %v); want a retryable error holding no claims", err, notify.HoldsClaims(err))
	}
	if got := h.srv.Calls("auth.test"); got != 5 {
		t.Fatalf("%d calls of auth.test, want 5 (every attempt)", got)
	}
}

// Slack answers a rate-limited call 200 `ok:false, error:ratelimited` too
// (no Retry-After): that is a rate limit like a 429 — the channel's posts
// are paced from then on — not an outage retried at full speed, every
// webhook posting to the channel in bursts Slack refuses again.
func TestAnOKFalseRatelimitedPacesTheChannel(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	h.srv.Fail(slacktest.Fault{Error: "ratelimited"})
	second := opening("bbb")
	second.Incident = "another-incident"
	if err := n.Notify(context.Background(), second); err != nil {
		t.Fatalf("the post Slack rate-limited once: %v", err)
	}
	// A reply right after: its turn, a second after the retried post, is
	// beyond half of its webhook's 600ms, however slow the machine
	// between the two (up to 700ms).
	reply := under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "ccc"))
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if err := n.Notify(ctx, reply); err == nil || !strings.Contains(err.Error(), "paced to one a second") {
		t.Fatalf("a reply right after a ratelimited post: %v; want it paced (not sent, retryable)", err)
	}
}
