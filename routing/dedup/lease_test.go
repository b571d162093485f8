package dedup

import (
	"context"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// Waiting for another sender lasts the wait configured (in_flight_wait):
// the last backoff is cut to the deadline and the marker read once more
// there. Before, the poll stopped when the next backoff would pass the
// deadline (20+40+80 ms of a 300 ms wait), and a confirmation written in
// the wait's last stretch was never seen: a 5xx for a delivered
// notification.
func TestAwaitWaitsTheWholeInFlightWait(t *testing.T) {
	st, _ := redisStore(t)
	ctx := context.Background()
	const wait = 300 * time.Millisecond
	l := Leases{Store: st, TTL: time.Minute, Wait: wait}
	if _, err := l.Acquire(ctx, []string{"n:x"}, NewToken()); err != nil { // another sender's claim
		t.Fatal(err)
	}
	t.Run("nothing confirms: the wait lasts in_flight_wait", func(t *testing.T) {
		start := time.Now()
		ok, err := l.Await(ctx, []string{"n:x"}, func(int, string) bool { return false })
		if err != nil || ok[0] {
			t.Fatalf("Await = %v, %v; want not done", ok, err)
		}
		if waited := time.Since(start); waited < wait {
			t.Errorf("Await gave up after %v, want the whole %v", waited, wait)
		}
	})
	t.Run("a confirmation in the last stretch is seen", func(t *testing.T) {
		start := time.Now()
		ok, err := l.Await(ctx, []string{"n:x"}, func(int, string) bool {
			// The other sender confirms 250 ms into the wait: after the
			// last backoff that fits (at 140 ms), before the deadline.
			return time.Since(start) >= wait-50*time.Millisecond
		})
		if err != nil || !ok[0] {
			t.Errorf("Await = %v, %v; want done: the confirmation came within in_flight_wait", ok, err)
		}
	})
}

// An incident leased by another sender is polled the same way.
func TestPollTriesAtTheDeadline(t *testing.T) {
	st, _ := redisStore(t)
	const wait = 100 * time.Millisecond
	start := time.Now()
	var last, ended time.Duration
	err := Poll(context.Background(), wait, func(ctx context.Context) (bool, error) {
		last = time.Since(start)
		_, err := st.Incidents(ctx, []store.IncidentOp{{Key: "inc:x", Step: store.StepLeave, Token: "c:1", Lease: time.Second}})
		ended = time.Since(start)
		return false, err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The last try starts at the deadline, unless the one before it ran
	// past it (a loaded machine: nothing is left to wait for).
	if last < wait && ended < wait {
		t.Errorf("last try %v into a %v wait, ended at %v: want one at its end", last, wait, ended)
	}
}
