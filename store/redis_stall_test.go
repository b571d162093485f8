package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/store"
)

// notSent reports whether err is the stall breaker's: Redis unavailable,
// the command failed without being sent.
func notSent(err error) bool {
	return errors.Is(err, store.ErrUnavailable) && strings.Contains(err.Error(), "not sent: Redis has answered nothing")
}

// A stalled Redis (SIGSTOP: connections taken, nothing answered): the
// commands sent wait out their timeouts until Redis has answered nothing
// for two commands' whole waits (read_timeout × attempts) after the first
// timeout — a stall the build before rode out is waited out, as before — then
// the commands fail at once as unavailable without being sent (a review:
// each fail-open webhook waited 10–15 s, one timeout per round trip),
// counted once as a stall however long it lasts (a review: the breaker
// closed again every 1.3 s with Redis still stalled). Once Redis answers,
// the breaker's own PING closes it, no command needed. A command that
// timed out on its caller's own deadline counts for nothing.
func TestRedisStalledFailsCommandsAtOnceUntilItAnswers(t *testing.T) {
	srv := redistest.Start(t)
	cfg := fastConfig(srv.Addr()) // 200 ms timeouts
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
	stalls := func() float64 { return series(t, reg, "alertrouter_store_errors_total")["stalled"] }
	sentAndTimedOut := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrUnavailable) || notSent(err) {
			t.Fatalf("%s = %v; want it sent and timed out", what, err)
		}
	}

	// The caller's own deadline, shorter than the read timeout: no stall.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, _, err := s.Get(short, keys)
	cancel()
	sentAndTimedOut("Get with the caller's short deadline", err)
	// The first timeout: sent, it waits out its timeout, and trips nothing.
	_, _, err = s.Get(ctx, keys)
	sentAndTimedOut("the stall's first Get", err)
	if got := stalls(); got != 0 {
		t.Fatalf(`alertrouter_store_errors_total{operation="stalled"} = %v after the first timeout; want 0`, got)
	}
	// Sent, each waiting out its timeout, until Redis has answered nothing
	// for two commands' waits (400 ms) after the first: tripped.
	for i := 0; stalls() == 0; i++ {
		if i == 10 {
			t.Fatal("10 timeouts after the first, 2 s of stall, and not tripped")
		}
		_, _, err = s.Get(ctx, keys)
		sentAndTimedOut(fmt.Sprintf("Get %d of the stall before the trip", i), err)
	}
	// Then, however long it lasts (the breaker's PING tries every 250 ms
	// meanwhile), nothing is sent.
	for range 4 {
		for op, err := range everyOperation(ctx, s) {
			if !notSent(err) {
				t.Errorf("%s while Redis is stalled = %v; want it failed at once, not sent", op, err)
			}
		}
		if res := store.ClaimJoin(ctx, s, []store.Entry{{Key: "stall:c", Value: "t", TTL: time.Minute}}, nil, nil); !notSent(res.ClaimErr) {
			t.Errorf("ClaimJoin while Redis is stalled = %v; want it failed at once, not sent", res.ClaimErr)
		}
		time.Sleep(300 * time.Millisecond) // past a PING's turn
	}
	if got := stalls(); got != 1 {
		t.Errorf(`alertrouter_store_errors_total{operation="stalled"} = %v after 1.6 s of one stall; want 1`, got)
	}

	if err := srv.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The breaker's PING closes it: the first command after is sent.
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(300 * time.Millisecond) // a PING's turn, no command
		if _, _, err := s.Get(ctx, keys); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("Get 10 s after Redis answers again: %v", err)
		}
	}
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
// at once by itself: the breaker stays out of it however long it lasts,
// and every command is sent, so the first one after a restart succeeds.
func TestRedisDownIsNotAStall(t *testing.T) {
	srv := redistest.Start(t)
	s, reg := newRedis(t, fastConfig(srv.Addr()))
	ctx := context.Background()
	srv.Kill()
	// Longer than the breaker's trip (two commands' waits: 2 × 200 ms × 2
	// attempts) after the first refusal: still every command tried.
	for end := time.Now().Add(1200 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		for op, err := range everyOperation(ctx, s) {
			if !errors.Is(err, store.ErrUnavailable) || notSent(err) {
				t.Fatalf("%s with Redis down = %v; want it tried and unavailable", op, err)
			}
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

// A client closed while its breaker is tripped (a reload replaced it,
// Redis still stalled) says nothing of Redis: its PING failing as closed
// is no answer (it closed the breaker and logged Redis back).
func TestRedisClosedDuringAStallDoesNotSayRedisAnswers(t *testing.T) {
	srv := redistest.Start(t)
	cfg := fastConfig(srv.Addr())
	cfg.MaxRetries = -1
	var logs notifytest.SyncBuffer
	s, err := store.NewRedis(cfg, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Signal(syscall.SIGCONT) })
	for i := 0; !strings.Contains(logs.String(), "has answered nothing"); i++ {
		if i == 20 {
			t.Fatal("not tripped after 20 timeouts")
		}
		_, _, _ = s.Get(ctx, []string{"k"})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the breaker's PING turns (every 250 ms), on a closed client
	if got := logs.String(); strings.Contains(got, "answers again") {
		t.Errorf("a client closed during a stall logged Redis back:\n%s", got)
	}
}
