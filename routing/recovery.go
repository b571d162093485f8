package routing

import (
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
}

// quietFor is how long after its last failure a delivery ends an
// integration's run of failures.
const quietFor = 30 * time.Second

// failRun is an integration's run of failed deliveries.
type failRun struct {
	since, lastAt time.Time
	n             int
	last          string
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
// last failure is quietFor before now, returning it (ok false otherwise).
// While none fails it reads one atomic: it runs on every delivery.
func (h *integrationHealth) delivered(receiver, integration string, now time.Time) (failRun, bool) {
	if !h.any.Load() {
		return failRun{}, false
	}
	key := receiver + "/" + integration
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.failing[key]
	if r == nil || now.Sub(r.lastAt) < quietFor {
		return failRun{}, false
	}
	delete(h.failing, key)
	h.any.Store(len(h.failing) > 0)
	return *r, true
}
