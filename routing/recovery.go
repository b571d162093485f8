package routing

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// integrationHealth remembers, per receiver and integration, the failed
// deliveries of a run of failures, so the log says when an integration
// delivers again. An audit: the store logged its recovery, PagerDuty and
// Slack nothing — and with their failures logged once per 30 s, a quiet
// log proved nothing. A run ends at a delivery quietFor after its last
// failure: a review found every delivery beside a failing incident's
// (PagerDuty refusing one event, an archived channel of a templated one)
// logged as a recovery. Its zero value is ready; it is kept
// across reloads (Shared), so a reload that fixes an integration (a
// rotated token) still logs its recovery.
type integrationHealth struct {
	// any is set while some integration is failing: a delivery reads only
	// it when none is.
	any     atomic.Bool
	mu      sync.Mutex
	failing map[string]*failRun
	// checkAfter replaces quietFor for a check's wait when positive
	// (tests).
	checkAfter time.Duration
}

// quietFor is how long after its last failure a delivery ends an
// integration's run of failures.
const quietFor = 30 * time.Second

// failRun is an integration's run of failed deliveries.
type failRun struct {
	since, lastAt time.Time
	n             int
	last          string
	// checking: a delivery within quietFor of the last failure set a
	// check for when quietFor has passed (deliveredSoon).
	checking bool
}

// failed counts a failed delivery of receiver's integration at now.
func (h *integrationHealth) failed(receiver, integration string, now time.Time, err error) {
	key := receiver + "/" + integration
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.failing[key]
	if r == nil {
		if h.failing == nil {
			h.failing = map[string]*failRun{}
		}
		r = &failRun{since: now}
		h.failing[key] = r
		h.any.Store(true)
	}
	r.n++
	r.lastAt, r.last = now, err.Error()
}

// delivered ends the run of failures of receiver's integration when its
// last failure is quietFor before now, reporting it. A delivery sooner
// sets a check for when quietFor has passed: a PagerDuty outage's end is
// its open incidents triggered at once, then updates PagerDuty folds —
// sending nothing, they prove nothing —, so no delivery came late enough
// and the recovery went unlogged (an audit re-run). The check reports
// the run if no failure came meanwhile. While none fails delivered reads
// one atomic: it runs on every delivery.
func (h *integrationHealth) delivered(receiver, integration string, now time.Time, logger *slog.Logger) {
	if !h.any.Load() {
		return
	}
	key := receiver + "/" + integration
	report := func(r failRun) {
		logger.Info("integration delivers again", "receiver", receiver, "integration", integration,
			"failed_notifications", r.n, "failing_since", r.since, "last_failure", r.lastAt, "last_err", r.last)
	}
	h.mu.Lock()
	r := h.failing[key]
	switch {
	case r == nil:
		h.mu.Unlock()
	case now.Sub(r.lastAt) >= quietFor:
		h.end(key)
		h.mu.Unlock()
		report(*r)
	case !r.checking:
		r.checking = true
		n, wait := r.n, r.lastAt.Add(h.quiet()).Sub(now)
		h.mu.Unlock()
		time.AfterFunc(wait, func() { h.check(key, n, report) })
	default:
		h.mu.Unlock()
	}
}

// check reports the run of key unless a failure came after the delivery
// that set it (its n then grew; the next delivery sets another check).
func (h *integrationHealth) check(key string, n int, report func(failRun)) {
	h.mu.Lock()
	r := h.failing[key]
	if r == nil || r.n != n {
		if r != nil {
			r.checking = false
		}
		h.mu.Unlock()
		return
	}
	h.end(key)
	h.mu.Unlock()
	report(*r)
}

// end forgets the run of key (h.mu held).
func (h *integrationHealth) end(key string) {
	delete(h.failing, key)
	h.any.Store(len(h.failing) > 0)
}

// quiet is quietFor, or the tests' shorter wait for a check.
func (h *integrationHealth) quiet() time.Duration {
	if h.checkAfter > 0 {
		return h.checkAfter
	}
	return quietFor
}
