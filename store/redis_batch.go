package store

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Group commit of pipelines. Every webhook makes a few store round trips,
// and with many webhooks in flight most of those would cross each other on
// the wire. The batcher sends the pipelines that callers hand it while
// another is in flight as one pipeline once that one returns: one write and
// one read (per cluster node) for all of them, on the client and in Redis.
// A caller alone waits for nothing (its pipeline goes at once); a caller
// that arrives during a round trip waits for it, then goes with whatever
// else arrived. The commands of one caller stay together and in order, and
// each caller sees only its own commands' replies and errors, exactly as
// with its own pipeline.

// pipeReq is one caller's pipeline.
type pipeReq struct {
	ctx  context.Context
	fill func(redis.Pipeliner)
	cmds []redis.Cmder
	err  error
	// done is signalled once: the pipeline was sent (lead false) or this
	// caller is to send the next batch (lead true).
	done chan struct{}
	lead bool
}

// pipeBatcher merges the pipelines of concurrent callers.
type pipeBatcher struct {
	client redis.UniversalClient

	mu      sync.Mutex
	queue   []*pipeReq
	sending bool
}

// pipelined queues fill's commands and returns them with their replies,
// and the first error among them (redis.Nil included), as the client's
// Pipelined does.
func (b *pipeBatcher) pipelined(ctx context.Context, fill func(redis.Pipeliner)) ([]redis.Cmder, error) {
	req := &pipeReq{ctx: ctx, fill: fill, done: make(chan struct{}, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, req)
	if b.sending {
		b.mu.Unlock()
		<-req.done
		if !req.lead {
			return req.cmds, req.err
		}
		b.mu.Lock()
	}
	b.sending = true
	batch := b.queue
	b.queue = nil
	b.mu.Unlock()

	b.send(batch)

	b.mu.Lock()
	if len(b.queue) > 0 {
		next := b.queue[0]
		next.lead = true
		next.done <- struct{}{}
	} else {
		b.sending = false
	}
	b.mu.Unlock()
	for _, r := range batch {
		if r != req {
			r.done <- struct{}{}
		}
	}
	return req.cmds, req.err
}

// send sends the pipelines of batch as one, within the latest of their
// deadlines, and hands each its commands and first error.
func (b *pipeBatcher) send(batch []*pipeReq) {
	ctx, cancel := batchContext(batch)
	defer cancel()
	p := b.client.Pipeline()
	bounds := make([]int, len(batch)+1)
	for i, r := range batch {
		r.fill(p)
		bounds[i+1] = p.Len()
	}
	cmds, err := p.Exec(ctx)
	for i, r := range batch {
		r.cmds = cmds[bounds[i]:bounds[i+1]]
		r.err = nil
		for _, c := range r.cmds {
			if e := c.Err(); e != nil {
				r.err = e
				break
			}
		}
		if r.err == nil && err != nil && len(r.cmds) > 0 && unavailable(err) {
			r.err = err
		}
	}
}

// batchContext keeps the values of the first caller's context and the
// latest deadline of all (none if any caller has none): no caller's
// commands are cut shorter than its own deadline. Cancellation is not
// kept: the commands of a caller that went away still run, as they would
// once sent on its own pipeline.
func batchContext(batch []*pipeReq) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var latest time.Time
	for _, r := range batch {
		d, ok := r.ctx.Deadline()
		if !ok {
			return context.WithCancel(ctx)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(ctx, latest)
}
