package routing_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// A post whose outcome is unknown (sent, and no answer within the
// timeout: a Slack incoming webhook answering 200 after the router gave
// up) may have been made. Its claim was released, and every one of
// Alertmanager's retries posted it again — one ticket drawn 28 times in 87 s
// in an audit. The claim is kept until dedup.claim_ttl: the retries within
// it fail (5xx, in flight) without posting; the first after it posts again.
func TestAPostWithAnUnknownOutcomeIsNotPostedAgainBeforeTheClaimExpires(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	var attempts atomic.Int32
	e.slack.setFail(func(*alert.Notification) error {
		if attempts.Add(1) == 1 {
			return notify.OutcomeUnknown(errors.New("post to the incoming webhook: context deadline exceeded (sent, and Slack may have posted it)"))
		}
		return nil
	})
	ticket := tAlert("TTFTHigh", "firing", "ticket")
	if _, err := process(t, p, ticket); !alert.Retryable(err) {
		t.Fatalf("first attempt = %v, want retryable", err)
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
}
