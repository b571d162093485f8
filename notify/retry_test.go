package notify

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// recorder is a RetryPolicy.Wait that records the waits instead of sleeping.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) wait(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return ctx.Err()
}

func TestRetry(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name         string
		results      []error // returned by successive attempts; nil past the end
		maxAttempts  int
		wantAttempts int
		wantErr      error
		wantWaitMin  time.Duration // every wait at least this
	}{
		{name: "a first success is not retried", results: []error{nil}, wantAttempts: 1},
		{name: "retryable errors are retried until success", results: []error{errBoom, errBoom, errBoom, nil}, wantAttempts: 4},
		{name: "a permanent error stops at once", results: []error{alert.Permanent(errBoom)}, wantAttempts: 1, wantErr: errBoom},
		{name: "attempts run out with the last error", results: []error{errBoom, errBoom, errBoom}, maxAttempts: 3, wantAttempts: 3, wantErr: errBoom},
		{name: "retry-after is honoured when longer than the backoff", results: []error{RetryAfter(errBoom, 7*time.Second), nil}, wantAttempts: 2, wantWaitMin: 7 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			p := RetryPolicy{MaxAttempts: tt.maxAttempts, InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, Wait: rec.wait}
			n := 0
			err := Retry(context.Background(), p, func(context.Context) error {
				n++
				if n <= len(tt.results) {
					return tt.results[n-1]
				}
				return nil
			})
			if n != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", n, tt.wantAttempts)
			}
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if len(rec.waits) != tt.wantAttempts-1 {
				t.Errorf("waits = %v, want %d", rec.waits, tt.wantAttempts-1)
			}
			for _, w := range rec.waits {
				if w < tt.wantWaitMin {
					t.Errorf("wait %v < %v", w, tt.wantWaitMin)
				}
			}
		})
	}
}

func TestRetryDoesNotWaitPastTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	rec := &recorder{}
	n := 0
	err := Retry(ctx, RetryPolicy{Wait: rec.wait}, func(context.Context) error {
		n++
		return RetryAfter(errors.New("slow down"), 2*time.Hour)
	})
	if n != 1 || len(rec.waits) != 0 {
		t.Fatalf("attempts = %d, waits = %v; want 1 attempt and no wait", n, rec.waits)
	}
	if !alert.Retryable(err) {
		t.Fatalf("err = %v should stay retryable so Alertmanager retries", err)
	}
}

func TestRetryChecksTheContextFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := Retry(ctx, RetryPolicy{}, func(context.Context) error { called = true; return nil })
	if called || !errors.Is(err, context.Canceled) {
		t.Fatalf("called = %v, err = %v; want no attempt and context.Canceled", called, err)
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	p := RetryPolicy{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	for attempt, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 10: time.Second} {
		for range 50 {
			d := p.Backoff(attempt)
			if d < base/2 || d > base {
				t.Fatalf("Backoff(%d) = %v, want in [%v, %v]", attempt, d, base/2, base)
			}
		}
	}
}
