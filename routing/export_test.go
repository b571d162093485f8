package routing

import (
	"context"
	"time"
)

// QueuedUpdates returns how many batches wait in p's coalescer for the send
// in flight of their incident to complete (for tests that need to know the
// queue is full before they let that send finish).
func QueuedUpdates(p *Pipeline) int {
	p.updates.mu.Lock()
	defer p.updates.mu.Unlock()
	n := 0
	for _, r := range p.updates.next {
		if r != nil {
			n += len(r.batches)
		}
	}
	return n
}

// CountedInbound returns how many incidents p's coalescer has an open
// cohort of webhooks on their way to (zero once no webhook is in flight:
// nothing leaks).
func CountedInbound(p *Pipeline) int {
	p.updates.mu.Lock()
	defer p.updates.mu.Unlock()
	return len(p.updates.inbound)
}

// SetSettleGrace sets how long p's deliveries wait for each other before a
// settle (settleGrace), so that tests decide which sends share one.
func SetSettleGrace(p *Pipeline, d time.Duration) { p.settleGrace = d }

// SetUpdateWindowWait replaces how p's updates wait out the update window
// (coalesce.go), so that tests decide when the window ends.
func SetUpdateWindowWait(p *Pipeline, wait func(ctx context.Context, window time.Duration)) {
	p.updates.wait = func(ctx context.Context, window time.Duration, _ chan struct{}) { wait(ctx, window) }
}

// SetUpdateWindowGather is SetUpdateWindowWait for tests of the early end
// of the window: wait also gets the channel closed when every webhook
// counted in the incident has arrived (nil when none was counted).
func SetUpdateWindowGather(p *Pipeline, wait func(ctx context.Context, window time.Duration, gathered chan struct{})) {
	p.updates.wait = wait
}

// SetRecoveryCheck has p's check for an integration's recovery wait d
// instead of 30 s after a delivery that came sooner.
func SetRecoveryCheck(p *Pipeline, d time.Duration) { p.shared().health.checkAfter = d }
