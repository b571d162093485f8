package dedup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// redisStore is a client of a real redis-server, and the server.
func redisStore(t *testing.T) (store.Store, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = []string{srv.Addr()}
	cfg.MaxRetries = -1
	cfg.DialTimeout = model.Duration(200 * time.Millisecond)
	st, err := store.NewRedis(cfg, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, srv
}

// answersOnClose is a store whose Set fails until the retrier's loop has
// ended (its done channel closed): only Close's last attempt can succeed.
type answersOnClose struct {
	store.Store
	done  <-chan struct{}
	tries atomic.Int32
}

func (s *answersOnClose) Set(ctx context.Context, e []store.Entry) error {
	s.tries.Add(1)
	select {
	case <-s.done:
		return s.Store.Set(ctx, e)
	default:
		return fmt.Errorf("dial tcp: connection refused: %w", store.ErrUnavailable)
	}
}

// queuedAfterAFailure is a Deferred holding a marker the retrier's loop
// failed to write, over a store that answers again once the loop has
// ended (answersOnClose), and the real store under it.
func queuedAfterAFailure(t *testing.T) (store.Store, *DeferredMetrics, *Deferred) {
	t.Helper()
	st, _ := redisStore(t)
	m := NewDeferredMetrics(nil)
	s := &answersOnClose{Store: st}
	d := NewDeferred(s, m, nil)
	s.done = d.done
	d.Set([]store.Entry{{Key: "n:marker", Value: "page|1|inc", TTL: time.Hour}})
	// The loop's own attempt fails first. A queue emptied without one
	// (the write given up as too old) goes on to fail below; the deadline
	// only guards against a wait that would hang the package's tests.
	deadline := time.Now().Add(10 * time.Second)
	for s.tries.Load() == 0 && d.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the retrier has not tried the queued write after 10s")
		}
		time.Sleep(time.Millisecond)
	}
	return st, m, d
}

// The store answers again between the retrier's last retry and the
// shutdown: Close applies what was queued instead of dropping it (before,
// it only logged it — the markers of a firing sent during the outage were
// lost, and its resolve sent nowhere).
func TestCloseAppliesTheWritesTheStoreTakesAgain(t *testing.T) {
	st, m, d := queuedAfterAFailure(t)
	d.Close()
	v, found, err := st.Get(t.Context(), []string{"n:marker"})
	if err != nil || !found[0] || v[0] != "page|1|inc" {
		t.Fatalf("after Close: %q found=%v err=%v; want the deferred marker written", v, found, err)
	}
	if got := testutil.ToFloat64(m.dropped); got != 0 {
		t.Errorf("dropped = %v, want 0", got)
	}
	if got := testutil.ToFloat64(m.pending); got != 0 {
		t.Errorf("pending gauge = %v, want 0", got)
	}
}

// A shutdown whose drain took its whole budget closes by its deadline
// (CloseBy): past it, the last attempt is not made and what was queued is
// given up and counted — the process exits within the termination grace
// period instead of being killed in its close (an audit: 7s past it with
// the store stalled).
func TestCloseByAPassedDeadlineGivesTheQueueUp(t *testing.T) {
	st, m, d := queuedAfterAFailure(t)
	d.CloseBy(time.Now().Add(-time.Millisecond))
	if _, found, err := st.Get(t.Context(), []string{"n:marker"}); err != nil || found[0] {
		t.Fatalf("after CloseBy a passed deadline: found=%v err=%v; want the write given up", found, err)
	}
	if got := testutil.ToFloat64(m.dropped); got != 1 {
		t.Errorf("dropped = %v, want 1", got)
	}
}

// stalledSets is a store whose Set waits for its context to end (a
// SIGSTOPped Redis) and says how each wait ended.
type stalledSets struct {
	store.Store
	entered chan struct{}
	ended   chan error
}

func (s *stalledSets) Set(ctx context.Context, _ []store.Entry) error {
	s.entered <- struct{}{}
	<-ctx.Done()
	s.ended <- ctx.Err()
	return ctx.Err()
}

// Closing ends the retrier's attempt in flight: over a stalled store the
// close waited out that write's own 2s, past a shutdown's deadline (a
// review: CloseBy(now+100ms) took 1.9s, the process killed mid-close by
// the grace period). The write it cut short is Close's to try.
func TestCloseEndsTheRetriersAttemptInFlight(t *testing.T) {
	s := &stalledSets{Store: store.NewMemory(), entered: make(chan struct{}, 2), ended: make(chan error, 2)}
	d := NewDeferred(s, nil, nil)
	d.Set([]store.Entry{{Key: "n:a", Value: "page|1|inc", TTL: time.Hour}}) // wakes the retrier
	<-s.entered
	d.CloseBy(time.Now().Add(-time.Millisecond)) // no last attempt: only the loop's is waited for
	if err := <-s.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the retrier's write ended with %v, want it cancelled by the close", err)
	}
}

// The store is still down at shutdown: what Close gives up is counted in
// alertrouter_dedup_deferred_dropped_total (before, only logged), and the
// pending gauge no longer counts it. A write queued after Close is given
// up and counted too.
func TestCloseCountsTheWritesItGivesUp(t *testing.T) {
	st, srv := redisStore(t)
	srv.Kill()
	m := NewDeferredMetrics(nil)
	d := NewDeferred(st, m, nil)
	d.Set([]store.Entry{{Key: "n:a", Value: "page|1|inc", TTL: time.Hour}})
	d.Incidents([]store.IncidentOp{{Key: "inc:x", Step: store.StepResolved, Token: "c:1"}})
	d.DeleteIfEqual([]store.Entry{{Key: "n:b", Value: "c:1"}})
	d.Close()
	if got := testutil.ToFloat64(m.dropped); got != 3 {
		t.Errorf("dropped = %v, want 3", got)
	}
	if got := testutil.ToFloat64(m.pending); got != 0 {
		t.Errorf("pending gauge = %v, want 0", got)
	}
	d.Set([]store.Entry{{Key: "n:late", Value: "page|1|inc"}})
	if got, n := testutil.ToFloat64(m.dropped), d.Len(); got != 4 || n != 0 {
		t.Errorf("after a write queued past Close: dropped = %v, queued = %d; want 4 and 0", got, n)
	}
	d.Close() // twice: nothing
}

// A write older than MaxAge is given up and counted, without a restart.
func TestAWriteOlderThanMaxAgeIsCountedDropped(t *testing.T) {
	st, srv := redisStore(t)
	srv.Kill()
	m := NewDeferredMetrics(nil)
	d := NewDeferred(st, m, nil)
	t.Cleanup(d.Close)
	d.mu.Lock()
	d.maxAge = time.Millisecond
	d.mu.Unlock()
	d.Set([]store.Entry{{Key: "n:a", Value: "page|1|inc"}})
	deadline := time.Now().Add(10 * time.Second)
	for d.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the old write is still queued after 10s")
		}
		time.Sleep(10 * time.Millisecond) // poll interval, not a timing assumption
	}
	if got := testutil.ToFloat64(m.dropped); got != 1 {
		t.Errorf("dropped = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.pending); got != 0 {
		t.Errorf("pending gauge = %v, want 0", got)
	}
}

// A reload that builds a new store client (a rotated Redis password: the
// old client's connections refused) handed the retrier's queue to Close,
// which tried the old client once and gave it up: the notifications sent
// during the outage were sent again. HandOver moves the queue, and the
// writes of the old generation's webhooks still in flight, to the new
// client's retrier, which applies them.
func TestHandOverAppliesTheQueueThroughTheNewClient(t *testing.T) {
	old, oldSrv := redisStore(t)
	oldSrv.Kill()
	st, _ := redisStore(t)
	m := NewDeferredMetrics(nil)
	d := NewDeferred(old, m, nil)
	next := NewDeferred(st, m, nil)
	defer next.Close()
	d.Set([]store.Entry{{Key: "n:queued", Value: "page|1|inc", TTL: time.Hour}})
	d.HandOver(next)
	d.Set([]store.Entry{{Key: "n:late", Value: "page|1|inc", TTL: time.Hour}})
	d.Close() // the old state retired: nothing left to give up
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, found, err := st.Get(t.Context(), []string{"n:queued", "n:late"})
		if err == nil && found[0] && found[1] && v[0] == "page|1|inc" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handed-over writes never reached the new client's store: %q %v %v", v, found, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := testutil.ToFloat64(m.dropped); got != 0 {
		t.Errorf("dropped = %v, want 0", got)
	}
	for next.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := testutil.ToFloat64(m.pending); got != 0 {
		t.Errorf("pending gauge = %v once applied, want 0", got)
	}
}

// The writes an outage queued are applied at recovery with one log line
// for them all (audit SENTINEL: 138 "deferred store write applied" lines
// within a millisecond per router), naming how many and the oldest's age.
func TestTheWritesAnOutageQueuedAreLoggedOnceWhenApplied(t *testing.T) {
	st, srv := redisStore(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	srv.Kill()
	d := NewDeferred(st, NewDeferredMetrics(nil), logger)
	t.Cleanup(d.Close)
	for i := range 20 {
		d.Set([]store.Entry{{Key: fmt.Sprintf("n:%d", i), Value: "page|1|inc", TTL: time.Hour}})
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, d)
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	lines, writes := 0, 0
	for line := range strings.Lines(out) {
		if !strings.Contains(line, "deferred store writes applied") {
			continue
		}
		lines++
		var n int
		if _, err := fmt.Sscanf(line[strings.Index(line, "writes=")+len("writes="):], "%d", &n); err != nil {
			t.Fatalf("no write count in %q", line)
		}
		writes += n
	}
	if writes != 20 || lines > 2 {
		t.Errorf("%d lines for %d writes applied, want the 20 writes in one or two lines:\n%s", lines, writes, out)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Pending answers, for keys the store did not, the values queued writes
// set — the newest when several set one key — until they are applied;
// after a hand-over, from the Deferred that took the queue.
func TestPendingAnswersWhatTheQueueWillSet(t *testing.T) {
	st, srv := redisStore(t)
	srv.Kill()
	d := NewDeferred(st, NewDeferredMetrics(nil), nil)
	t.Cleanup(d.Close)
	d.Set([]store.Entry{{Key: "n:a", Value: "old", TTL: time.Hour}, {Key: "n:b", Value: "b", TTL: time.Hour}})
	d.Set([]store.Entry{{Key: "n:a", Value: "new", TTL: time.Hour}})
	keys := []string{"n:a", "n:b", "n:c"}
	values, found := []string{"", "from the store", ""}, []bool{false, true, false}
	if !d.Pending(keys, values, found) || values[0] != "new" || !found[0] || values[1] != "from the store" || found[2] {
		t.Fatalf("Pending = %q %v; want n:a's newest queued value, n:b as the store said, n:c not found", values, found)
	}
	next := NewDeferred(st, NewDeferredMetrics(nil), nil)
	t.Cleanup(next.Close)
	d.HandOver(next)
	values, found = make([]string, 3), make([]bool, 3)
	if !d.Pending(keys, values, found) || values[0] != "new" || values[1] != "b" {
		t.Fatalf("after the hand-over: %q %v", values, found)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, next)
	values, found = make([]string, 3), make([]bool, 3)
	if d.Pending(keys, values, found) || found[0] || found[1] {
		t.Errorf("after the writes were applied: %q %v; want nothing pending", values, found)
	}
}

// waitApplied waits until d's queue is applied, at most 20s.
func waitApplied(t *testing.T, d *Deferred) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for d.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the queued writes are not applied after 20s")
		}
		time.Sleep(10 * time.Millisecond) // poll interval, not a timing assumption
	}
}

// Writes dropped over the queue's limit are logged with their count, not a
// line each (a review: 643 ERROR lines in a minute).
func TestWritesOverTheLimitAreLoggedWithTheirCount(t *testing.T) {
	st, srv := redisStore(t)
	srv.Kill()
	var logs bytes.Buffer
	var mu sync.Mutex
	d := NewDeferred(st, NewDeferredMetrics(nil), slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil)))
	t.Cleanup(d.Close)
	d.mu.Lock()
	d.maxLen = 5
	d.mu.Unlock()
	for i := range 50 {
		d.Set([]store.Entry{{Key: fmt.Sprintf("n:%d", i), Value: "v"}})
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if n := strings.Count(out, "over their limit"); n != 1 {
		t.Errorf("%d lines for 45 writes dropped over the limit, want 1:\n%s", n, out)
	}
	if d.Len() != 5 {
		t.Errorf("%d writes queued, want the limit, 5", d.Len())
	}
}
