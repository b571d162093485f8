package routing_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// A post whose outcome is unknown and most likely made (sent, and no
// answer within the timeout: a Slack incoming webhook answering 200 after
// the router gave up) released its claim, and every one of Alertmanager's
// retries posted it again — one ticket drawn 28 times in 87 s in an
// audit. The claim is kept until dedup.claim_ttl: the retries within it
// fail (5xx, in flight) without posting; the first after it posts again.
// A proxy's quick 503 (notify.OutcomeUnknown alone: most likely nothing
// forwarded) releases it as before — a review saw a ticket never posted
// when its alert resolved within claim_ttl.
func TestAPostWithAnUnknownOutcomeIsNotPostedAgainBeforeTheClaimExpires(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(error) error
		held bool
	}{
		{"no answer after the post was sent", notify.OutcomeUnknownHeld, true},
		{"a proxy's 503", notify.OutcomeUnknown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pipeline()
			var attempts atomic.Int32
			e.slack.setFail(func(*alert.Notification) error {
				if attempts.Add(1) == 1 {
					return tc.wrap(errors.New("post to the incoming webhook: it may have been made"))
				}
				return nil
			})
			ticket := tAlert("TTFTHigh", "firing", "ticket")
			if _, err := process(t, p, ticket); !alert.Retryable(err) {
				t.Fatalf("first attempt = %v, want retryable", err)
			}
			if !tc.held {
				mustProcess(t, p, ticket)
				if n, sent := attempts.Load(), len(e.slack.notifications()); n != 2 || sent != 1 {
					t.Fatalf("Alertmanager's retry: %d attempts, %d posted; want the post made again at once", n, sent)
				}
				return
			}
			for range 3 { // Alertmanager's retries within claim_ttl
				if _, err := process(t, p, ticket); !alert.Retryable(err) {
					t.Fatalf("a retry within claim_ttl = %v, want retryable (in flight)", err)
				}
			}
			if n := attempts.Load(); n != 1 {
				t.Fatalf("Slack was asked to post %d times within claim_ttl, want once", n)
			}
			e.clock.Advance(e.dedup.ClaimTTL + 1)
			mustProcess(t, p, ticket)
			if n, sent := attempts.Load(), len(e.slack.notifications()); n != 2 || sent != 1 {
				t.Fatalf("after claim_ttl: %d attempts, %d posted; want the post made again, once", n, sent)
			}
		})
	}
}
