package notify

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// An attempt whose outcome is unknown (a post sent and never answered) is
// not tried again: a second attempt could do it twice. Its error stays
// retryable for the caller, so Alertmanager retries later.
func TestRetryStopsAtAnUnknownOutcome(t *testing.T) {
	errSent := errors.New("timed out after the request was sent")
	rec := &recorder{}
	p := RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: rec.wait}
	n := 0
	err := Retry(context.Background(), p, func(context.Context) error {
		n++
		return OutcomeUnknown(fmt.Errorf("post: %w", errSent))
	})
	if n != 1 || len(rec.waits) != 0 {
		t.Errorf("attempts = %d, waits = %v; want one attempt, no wait", n, rec.waits)
	}
	if !errors.Is(err, errSent) || !alert.Retryable(err) || !IsOutcomeUnknown(err) {
		t.Errorf("err = %v (retryable %v, unknown %v); want the attempt's error, retryable, unknown outcome", err, alert.Retryable(err), IsOutcomeUnknown(err))
	}
	if OutcomeUnknown(nil) != nil || IsOutcomeUnknown(errSent) {
		t.Error("OutcomeUnknown(nil) must stay nil, and a plain error is no unknown outcome")
	}
}
