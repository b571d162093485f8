package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// holdFirstPipeline is a go-redis hook that counts the pipelines sent
// (not go-redis's own connection handshakes) and holds the first one until
// release is closed.
type holdFirstPipeline struct {
	sent    atomic.Int64
	held    chan struct{} // closed when the first pipeline is held
	release chan struct{}
}

func (h *holdFirstPipeline) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *holdFirstPipeline) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h *holdFirstPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		switch cmds[0].Name() {
		case "hello", "client", "auth", "select", "ping":
			return next(ctx, cmds)
		}
		if h.sent.Add(1) == 1 {
			close(h.held)
			<-h.release
		}
		return next(ctx, cmds)
	}
}

// TestBatcherMergesConcurrentPipelinesAndKeepsEachCallersReplies: callers
// arriving while a pipeline is in flight go out together in the next one,
// and each sees only its own replies and errors — a miss (redis.Nil), a
// command error (WRONGTYPE) — as with a pipeline of its own.
func TestBatcherMergesConcurrentPipelinesAndKeepsEachCallersReplies(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	ctx := context.Background()
	if err := client.Set(ctx, "present", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.SAdd(ctx, "a-set", "m").Err(); err != nil {
		t.Fatal(err)
	}
	hook := &holdFirstPipeline{held: make(chan struct{}), release: make(chan struct{})}
	client.AddHook(hook)
	b := &pipeBatcher{client: client}

	first := make(chan error, 1)
	go func() {
		_, err := b.pipelined(ctx, func(p redis.Pipeliner) { p.Set(ctx, "first", "1", time.Minute) })
		first <- err
	}()
	<-hook.held // the first pipeline is in flight

	const callers = 30
	type result struct {
		cmds []redis.Cmder
		err  error
	}
	results := make([]result, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			var fill func(redis.Pipeliner)
			switch i % 3 {
			case 0: // its own key, then a read of it
				fill = func(p redis.Pipeliner) {
					p.Set(ctx, fmt.Sprint("k", i), i, time.Minute)
					p.Get(ctx, fmt.Sprint("k", i))
				}
			case 1: // a miss after a hit: the first error is redis.Nil
				fill = func(p redis.Pipeliner) { p.Get(ctx, "present"); p.Get(ctx, "absent") }
			case 2: // a command error
				fill = func(p redis.Pipeliner) { p.Get(ctx, "a-set") }
			}
			results[i].cmds, results[i].err = b.pipelined(ctx, fill)
		})
	}
	// Every caller has queued behind the pipeline in flight.
	for {
		b.mu.Lock()
		n := len(b.queue)
		b.mu.Unlock()
		if n == callers {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(hook.release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("first pipeline: %v", err)
	}
	if n := hook.sent.Load(); n != 2 {
		t.Errorf("%d pipelines sent for 1 + %d callers, want 2 (the one in flight, then all the others together)", n, callers)
	}
	for i, r := range results {
		switch i % 3 {
		case 0:
			if r.err != nil || len(r.cmds) != 2 || r.cmds[1].(*redis.StringCmd).Val() != fmt.Sprint(i) {
				t.Errorf("caller %d: %v %v, want its own SET then GET of %d", i, r.cmds, r.err, i)
			}
		case 1:
			if !errors.Is(r.err, redis.Nil) || len(r.cmds) != 2 || r.cmds[0].(*redis.StringCmd).Val() != "v" {
				t.Errorf("caller %d: %v %v, want the hit then redis.Nil", i, r.cmds, r.err)
			}
		case 2:
			if r.err == nil || errors.Is(r.err, redis.Nil) || len(r.cmds) != 1 {
				t.Errorf("caller %d: %v %v, want its WRONGTYPE error", i, r.cmds, r.err)
			}
		}
	}
}

// TestBatcherReportsAnUnreachableRedisToEveryCaller: a failed round trip
// fails every caller in it with an error that says Redis is unavailable.
func TestBatcherReportsAnUnreachableRedisToEveryCaller(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = client.Close() })
	srv.Kill()
	b := &pipeBatcher{client: client}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if _, err := b.pipelined(ctx, func(p redis.Pipeliner) { p.Get(ctx, "x") }); err == nil || !unavailable(err) {
				t.Errorf("pipelined against a dead Redis: %v, want an unavailable error", err)
			}
		})
	}
	wg.Wait()
}
