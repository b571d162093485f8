package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// notSent reports whether err is the stall breaker's: Redis unavailable,
// the command failed without being sent.
func notSent(err error) bool {
	return errors.Is(err, store.ErrUnavailable) && strings.Contains(err.Error(), "not sent: Redis timed out")
}

// A stalled Redis (SIGSTOP: connections taken, nothing answered) costs
// one command its read timeout: the commands after it fail at once as
// unavailable without being sent (a review: each fail-open webhook waited
// 10–15 s, one timeout per round trip), counted once as a stall; once
// Redis answers, the first command let through closes the breaker and
// every command is sent again. A command that timed out on its caller's
// own deadline does not trip it.
func TestRedisStalledFailsCommandsAtOnceUntilItAnswers(t *testing.T) {
	srv := redistest.Start(t)
	cfg := fastConfig(srv.Addr())
	cfg.MaxRetries = -1
	s, reg := newRedis(t, cfg)
	ctx := context.Background()
	keys := []string{"stall:a"}
	if err := s.Set(ctx, []store.Entry{{Key: keys[0], Value: "v", TTL: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Signal(syscall.SIGCONT) })

	// The caller's own deadline, shorter than the read timeout: not a stall.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, _, err := s.Get(short, keys)
	cancel()
	if !errors.Is(err, store.ErrUnavailable) || notSent(err) {
		t.Fatalf("Get with the caller's short deadline = %v; want it sent and timed out", err)
	}
	stalls := func() float64 { return series(t, reg, "alertrouter_store_errors_total")["stalled"] }
	if got := stalls(); got != 0 {
		t.Fatalf(`alertrouter_store_errors_total{operation="stalled"} = %v after a timeout on the caller's deadline; want 0`, got)
	}
	if _, _, err = s.Get(ctx, keys); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Get, Redis stalled = %v; want unavailable", err)
	}
	if got := stalls(); got != 1 {
		t.Errorf(`alertrouter_store_errors_total{operation="stalled"} = %v after Redis timed out; want 1`, got)
	}
	for op, err := range everyOperation(ctx, s) {
		if !notSent(err) {
			t.Errorf("%s while Redis is stalled = %v; want it failed at once, not sent", op, err)
		}
	}
	if res := store.ClaimJoin(ctx, s, []store.Entry{{Key: "stall:c", Value: "t", TTL: time.Minute}}, nil, nil); !notSent(res.ClaimErr) {
		t.Errorf("ClaimJoin while Redis is stalled = %v; want it failed at once, not sent", res.ClaimErr)
	}
	// Once per stallRetry (250 ms) one command is let through. The stalled
	// connections were dropped, so it dials a new one and sends its
	// handshake inside it: it waits out the timeout, and the breaker stays
	// tripped (before: the handshake, refused as a second command, failed
	// the first at once, which closed the breaker, Redis still stalled).
	time.Sleep(300 * time.Millisecond)
	if _, _, err := s.Get(ctx, keys); !errors.Is(err, store.ErrUnavailable) || notSent(err) {
		t.Errorf("the command let through while Redis is stalled = %v; want it sent and timed out", err)
	}
	if _, _, err := s.Get(ctx, keys); !notSent(err) {
		t.Errorf("the command after the one let through = %v; want it failed at once, not sent (the breaker tripped again)", err)
	}

	if err := srv.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitUntilPing(t, s)
	for op, err := range everyOperation(ctx, s) {
		if err != nil {
			t.Errorf("%s once Redis answers: %v", op, err)
		}
	}
	if got := stalls(); got != 1 {
		t.Errorf(`alertrouter_store_errors_total{operation="stalled"} = %v; want 1 (one stall)`, got)
	}
}

// A Redis that refuses connections (down, not stalled) fails each command
// at once by itself: the breaker stays out of it, and every command is
// sent, so the first one after a restart succeeds.
func TestRedisDownIsNotAStall(t *testing.T) {
	srv := redistest.Start(t)
	s, reg := newRedis(t, fastConfig(srv.Addr()))
	ctx := context.Background()
	srv.Kill()
	for op, err := range everyOperation(ctx, s) {
		if !errors.Is(err, store.ErrUnavailable) || notSent(err) {
			t.Errorf("%s with Redis down = %v; want it tried and unavailable", op, err)
		}
	}
	if got := series(t, reg, "alertrouter_store_errors_total")["stalled"]; got != 0 {
		t.Errorf(`alertrouter_store_errors_total{operation="stalled"} = %v with Redis down; want 0`, got)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitUntilPing(t, s)
}

// On a Cluster each node has its own breaker: one stalled node costs a
// command of its slots one timeout, then its commands fail at once, not
// sent, while the other nodes' keys are read and written as before.
func TestRedisClusterStalledNodeFailsItsOwnCommandsAtOnce(t *testing.T) {
	cluster := redistest.StartCluster(t)
	cfg := fastConfig(cluster.Addrs()...)
	cfg.Cluster = true
	cfg.MaxRetries = -1
	s, reg := newRedis(t, cfg)
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// A key on the node to stall, and one on another node.
	stalled, err := cluster.MasterOf("{stall}a")
	if err != nil {
		t.Fatal(err)
	}
	other := ""
	for i := range 100 {
		k := fmt.Sprintf("{other-%d}a", i)
		if m, err := cluster.MasterOf(k); err == nil && m != stalled {
			other = k
			break
		}
	}
	if other == "" {
		t.Fatal("no key on another node")
	}
	if err := stalled.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stalled.Signal(syscall.SIGCONT) })
	stallKey := []store.Entry{{Key: "{stall}a", Value: "v", TTL: time.Minute}}
	// Sent, timed out (the Cluster client's retry of it finds the breaker
	// tripped).
	if err := s.Set(ctx, stallKey); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Set on the stalled node = %v; want it unavailable", err)
	}
	for range 3 {
		if err := s.Set(ctx, stallKey); !notSent(err) {
			t.Errorf("Set on the stalled node after its timeout = %v; want it failed at once, not sent", err)
		}
		if err := s.Set(ctx, []store.Entry{{Key: other, Value: "v", TTL: time.Minute}}); err != nil {
			t.Errorf("Set on another node while one is stalled = %v; want it written", err)
		}
	}
	if got := series(t, reg, "alertrouter_store_errors_total")["stalled"]; got != 1 {
		t.Errorf(`alertrouter_store_errors_total{operation="stalled"} = %v; want 1 (one node stalled once)`, got)
	}
	if err := stalled.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Set(ctx, stallKey) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the stalled node's keys still fail 10 s after it answers again")
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
}
