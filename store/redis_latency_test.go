package store

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// SlowAnswer, given a read's timeout, asks Redis again with what is left
// of its context: a Redis that answers says how long the round trip took,
// a stalled one how long it waited in vain, and an error that is no read
// timeout asks nothing.
func TestSlowAnswerTellsASlowRedisFromAStalledOne(t *testing.T) {
	srv := redistest.Start(t)
	cfg := DefaultRedisConfig()
	cfg.Addrs = []string{redistest.Distant(t, srv.Addr(), 100*time.Millisecond)}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if d, answered := SlowAnswer(ctx, cfg, os.ErrDeadlineExceeded); !answered || d < 100*time.Millisecond {
		t.Errorf("a Redis 100ms away: answered %v in %s, want an answer of at least 100ms", answered, d)
	}
	if d, answered := SlowAnswer(ctx, cfg, errors.New("WRONGPASS invalid username-password pair")); answered || d != 0 {
		t.Errorf("an error that is no timeout: answered %v in %s, want nothing asked", answered, d)
	}
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Signal(syscall.SIGCONT) }()
	short, cancel2 := context.WithTimeout(t.Context(), time.Second)
	defer cancel2()
	if d, answered := SlowAnswer(short, cfg, os.ErrDeadlineExceeded); answered || d == 0 {
		t.Errorf("a stalled Redis: answered %v in %s, want no answer after a wait", answered, d)
	}
}
