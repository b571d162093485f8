package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/store"
)

// evictionCheckEvery spaces the reads of the store's memory policy: the
// readiness probe runs every few seconds, the policy changes by hand. A
// variable for the tests.
var evictionCheckEvery = time.Minute

// memoryPolicyReader is a store that says whether it deletes keys when full
// (store.Redis).
type memoryPolicyReader interface {
	MemoryPolicy(ctx context.Context) (store.MemoryPolicy, error)
}

// evictionCheck watches the store's maxmemory-policy. Every key the router
// writes has a time to live, so any policy but noeviction — the volatile-*
// ones that managed Redis services default to included — deletes dedup
// markers, claims and incident state once Redis is full, and the next
// repeat of an alert pages again: the operator is told (a warning, hourly
// while it lasts, and alertrouter_store_evicting), since nothing else would.
type evictionCheck struct {
	gauge prometheus.Gauge

	mu         sync.Mutex // guards last and unreadable
	last       time.Time
	unreadable bool
	logs       logthrottle.Throttle
}

func newEvictionCheck(reg prometheus.Registerer) *evictionCheck {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "alertrouter_store_evicting",
		Help: "1 when the store (Redis) deletes keys when full — maxmemory set with a maxmemory-policy other than noeviction: dedup markers go and pages repeat; 0 when it refuses writes instead or has no limit (read from INFO memory every minute).",
	})
	if reg != nil {
		reg.MustRegister(g)
	}
	return &evictionCheck{gauge: g, logs: logthrottle.Throttle{Every: time.Hour}}
}

// check reads st's memory policy, at most once per evictionCheckEvery,
// sets the gauge and warns when it evicts. A store that cannot say (the
// embedded memory store, INFO refused by an ACL) is left as it was.
func (e *evictionCheck) check(ctx context.Context, st store.Store, logger *slog.Logger) {
	r, ok := st.(memoryPolicyReader)
	if !ok {
		return
	}
	e.mu.Lock()
	if !e.last.IsZero() && time.Since(e.last) < evictionCheckEvery {
		e.mu.Unlock()
		return
	}
	e.last = time.Now()
	e.mu.Unlock()
	m, err := r.MemoryPolicy(ctx)
	if err != nil {
		e.mu.Lock()
		first := !e.unreadable
		e.unreadable = true
		e.mu.Unlock()
		if first && ctx.Err() == nil {
			logger.Info("cannot read Redis' maxmemory-policy (INFO memory): make sure it is noeviction — an evicting policy deletes dedup markers and pages repeat (deploy/README.md section 1)", "err", err)
		}
		return
	}
	e.mu.Lock()
	e.unreadable = false
	e.mu.Unlock()
	if !m.Evicts() {
		e.gauge.Set(0)
		return
	}
	e.gauge.Set(1)
	e.logs.Log(ctx, logger, slog.LevelWarn, m.Policy,
		"Redis deletes keys when full: maxmemory-policy is not noeviction, so once Redis fills, dedup markers, claims and incident state are evicted and alerts page again; set maxmemory-policy noeviction and size maxmemory for your alert volume (deploy/README.md section 1)",
		"maxmemory_policy", m.Policy, "maxmemory_bytes", m.MaxMemory, "node", m.Node)
}
