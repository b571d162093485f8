package routing

import (
	"sync"
	"sync/atomic"
	"time"
)

// integrationHealth remembers, per receiver and integration, the failed
// deliveries since the last one that went through, so the log says when
// an integration delivers again. An audit: the store logged its recovery,
// PagerDuty and Slack nothing — and with their failures logged once per
// 30 s, a quiet log proved nothing.
type integrationHealth struct {
	// any is set while some integration is failing: a delivery reads only
	// it when none is.
	any     atomic.Bool
	mu      sync.Mutex
	failing map[string]*failRun
}

// failRun is an integration's run of failed deliveries.
type failRun struct {
	since time.Time
	n     int
	last  string
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
	r.last = err.Error()
}

// delivered ends the run of failures of receiver's integration, returning
// it (ok false when it was not failing). While none fails it reads one
// atomic: it runs on every delivery.
func (h *integrationHealth) delivered(receiver, integration string) (failRun, bool) {
	if !h.any.Load() {
		return failRun{}, false
	}
	key := receiver + "/" + integration
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.failing[key]
	if r == nil {
		return failRun{}, false
	}
	delete(h.failing, key)
	h.any.Store(len(h.failing) > 0)
	return *r, true
}
