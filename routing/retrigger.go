package routing

import (
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// retrigger turns b — new alerts joining an open incident, at an
// integration that sends nothing for updates (PagerDuty) — into a trigger
// of the incident when this replica has not triggered it for
// RetriggerInterval (or first saw it that long ago). PagerDuty folds the trigger into its incident while it
// is open, and opens a new one, paging, when the incident was resolved
// there without the router knowing (in PagerDuty's own UI, by its
// auto-resolve, or because Alertmanager sends no resolves to the router):
// otherwise a new alert of that incident would page no one until
// dedup.repeat_interval. Alertmanager's own PagerDuty integration triggers
// on every change of a group, at most every group_interval; the interval
// keeps a storm's thousands of joins to one event per incident per
// interval and replica. A trigger sent (an opening, this) restarts it.
func (p *Pipeline) retrigger(b *batch, now time.Time) {
	if p.RetriggerInterval <= 0 || b.err != nil || b.skip || b.kind != alert.KindFiring || !silentUpdate(b) {
		return
	}
	prev, due := p.retriggers.due(p.incidentKey(b), now, p.RetriggerInterval)
	if !due {
		return
	}
	b.n.Opening, b.retriggered, b.retriggeredAfter = true, true, prev
	p.Logger.Debug("new alerts joined an open incident not triggered for retrigger_interval: triggering it again",
		"receiver", b.receiver, "integration", b.integ.Name, "incident", b.incident)
}

// due reports whether key was triggered, or first seen by this replica,
// interval or longer before now, and then takes the trigger at now: the
// webhooks joining the incident at the same moment find it taken, so a
// storm of them sends one event. prev is the time it replaces (restore puts
// it back when the send fails). An incident first seen counts from now:
// another replica opened it, maybe a moment ago, and every replica
// triggering at once on its first update would be a burst of events in a
// storm.
func (r *retriggers) due(key string, now time.Time, interval time.Duration) (prev time.Time, due bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.longest = max(r.longest, interval)
	t, ok := r.last[key]
	if ok && now.Sub(t) < interval {
		return t, false
	}
	r.markLocked(key, now)
	return t, ok
}

// restore puts back key's trigger time prev after a failed send.
func (r *retriggers) restore(key string, prev time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[key] = prev
}

// retriggers remembers when this replica last sent each incident's trigger
// (by incident key), forgetting those older than the longest interval
// asked whenever it has doubled since it last did (at retriggersPrune
// entries first): amortised, a storm of new incidents costs no scan per
// trigger.
type retriggers struct {
	mu      sync.Mutex
	last    map[string]time.Time
	longest time.Duration
	prune   int
}

// retriggersPrune is the size at which retriggers first drops what it no
// longer needs.
const retriggersPrune = 4096

// mark records a trigger of key sent at now.
func (r *retriggers) mark(key string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.markLocked(key, now)
}

func (r *retriggers) markLocked(key string, now time.Time) {
	if r.last == nil {
		r.last = map[string]time.Time{}
	}
	if len(r.last) >= max(r.prune, retriggersPrune) {
		for k, t := range r.last {
			if now.Sub(t) >= r.longest {
				delete(r.last, k)
			}
		}
		r.prune = 2 * len(r.last)
	}
	r.last[key] = now
}
