package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// posts opens n new incidents at once through h's notifier, each webhook
// given timeout, and returns their errors.
func postAtOnce(t *testing.T, h *harness, n int, timeout time.Duration, prefix string) []error {
	t.Helper()
	no := h.notifier(t, nil)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			o := opening(fmt.Sprintf("%s%d", prefix, i))
			o.Incident = fmt.Sprintf("%s-incident-%d", prefix, i)
			errs[i] = no.Notify(ctx, o)
		})
	}
	wg.Wait()
	return errs
}

// Slack takes about one post a second per channel and answers 429 with
// Retry-After beyond it. Each post honoured its own Retry-After, so every
// post waiting on the channel retried in the same second: thousands of 429s
// in a storm, and every webhook's slot held meanwhile (an audit). Once Slack
// rate-limited a channel its posts are paced, one a second; a post whose
// turn is too far off is not sent and fails retryable (Alertmanager retries
// its webhook). Before any 429 nothing is paced.
func TestPostsToARateLimitedChannelArePaced(t *testing.T) {
	h := newHarness(t)
	for i, err := range postAtOnce(t, h, 10, 5*time.Second, "free") {
		if err != nil {
			t.Fatalf("post %d on a channel Slack never rate-limited: %v", i, err)
		}
	}
	if n := h.srv.Calls("chat.postMessage"); n != 10 {
		t.Fatalf("%d posts made for 10 parents, want 10", n)
	}

	h = newHarness(t)
	h.srv.Fail(slacktest.Fault{Status: 429, RetryAfter: "1"})
	if err := postAtOnce(t, h, 1, 5*time.Second, "first")[0]; err != nil {
		t.Fatalf("the post Slack rate-limited once: %v, want it posted after its Retry-After", err)
	}
	waited := len(h.waits.All())
	errs := postAtOnce(t, h, 10, 3*time.Second, "storm")
	var sent int
	for i, err := range errs {
		switch {
		case err == nil:
			sent++
		case !alert.Retryable(err) || !strings.Contains(err.Error(), "paced to one a second"):
			t.Errorf("post %d: %v; want sent, or not sent and retryable, saying the channel is paced", i, err)
		}
	}
	// A post refused its turn fails at once: no wait in the webhook for
	// a retry (its slot is for the webhooks behind it).
	if w := h.waits.All()[waited:]; len(w) != 0 {
		t.Errorf("the posts waited %v for retries within their webhooks, want none", w)
	}
	// The 429, the first post after it, and at most the turns that fit
	// within half of each 3s webhook (one a second after the first's).
	if n := h.srv.Calls("chat.postMessage"); n > 4 || n != 2+sent {
		t.Errorf("Slack got %d posts (%d of the 10 sent) after rate-limiting the channel, want at most 4: each made, none refused", n, sent)
	}
}

// A parent is posted to the channel's name, its thread replies to the id
// Slack answered: two pacers for one channel, each posting its own one a
// second (an audit). The id shares the name's pacer once a post by name
// has answered it.
func TestAChannelsNameAndIDShareOnePace(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t) // posted to #triage; Slack answered its id
	h.srv.Fail(slacktest.Fault{Status: 429, RetryAfter: "1"})
	second := opening("bbb")
	second.Incident = "another-incident"
	if err := n.Notify(context.Background(), second); err != nil {
		t.Fatalf("the post Slack rate-limited once: %v", err)
	}
	// A reply in the first parent's thread (to the id) is paced with the
	// name's posts: its turn, a second after the retried post, is beyond
	// half of its webhook's 1.5s.
	reply := under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "ccc"))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if err := n.Notify(ctx, reply); err == nil || !strings.Contains(err.Error(), "paced to one a second") {
		t.Fatalf("a reply by the channel's id right after a 429 on its name: %v; want it paced (not sent, retryable)", err)
	}
}

// A 429 whose Retry-After slack-go cannot read (a date, or garbage) was an
// unknown outcome: the claims held, the pace never engaged, posts went out
// in bursts (a review). It is a rate limit: the post is paced and sent
// again within its webhook.
func TestA429WithAnUnreadableRetryAfterIsARateLimit(t *testing.T) {
	for _, ra := range []string{"soon!", time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat)} {
		h := newHarness(t)
		h.srv.Fail(slacktest.Fault{Status: 429, RetryAfter: ra})
		if err := postAtOnce(t, h, 1, 5*time.Second, "first")[0]; err != nil {
			t.Fatalf("Retry-After %q: the post Slack rate-limited once: %v, want it posted after the pace's wait", ra, err)
		}
		if n := h.srv.Calls("chat.postMessage"); n != 2 {
			t.Errorf("Retry-After %q: %d posts, want the refused one and its retry", ra, n)
		}
	}
}
