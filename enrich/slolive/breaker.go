package slolive

import (
	"sync"
	"time"
)

// Breaker settings: after breakerFailures consecutive failed lookups a
// Prometheus is not queried for breakerOpenFor.
const (
	breakerFailures = 3
	breakerOpenFor  = 30 * time.Second
)

// breaker is a circuit breaker for one Prometheus. Closed, it counts
// consecutive failures; the third opens it for breakerOpenFor. Then one
// lookup is let through (half-open): success closes it, failure opens it
// again for another breakerOpenFor.
type breaker struct {
	mu        sync.Mutex
	failures  int
	openUntil time.Time
	tripped   bool // opened and not yet closed by a success
	probing   bool // the one half-open lookup is under way
}

// allow reports whether a lookup may query Prometheus at now. Every lookup
// it allows must be followed by record.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Before(b.openUntil) {
		return false
	}
	if b.tripped {
		if b.probing {
			return false
		}
		b.probing = true
	}
	return true
}

// record notes the outcome of a lookup and reports whether the breaker
// changed between open and closed (opened, closed).
func (b *breaker) record(ok bool, now time.Time) (opened, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if ok {
		closed = b.tripped
		b.failures, b.tripped, b.openUntil = 0, false, time.Time{}
		return false, closed
	}
	b.failures++
	if b.tripped || b.failures >= breakerFailures {
		opened = !b.tripped
		b.tripped, b.failures = true, 0
		b.openUntil = now.Add(breakerOpenFor)
	}
	return opened, false
}
