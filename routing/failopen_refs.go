package routing

import (
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/internal/recent"
)

// Slack parents during a store outage (fail open).
//
// With the store unreachable, an incident's state cannot be read: every
// webhook that brought a new alert of it posted a parent of its own (an
// audit's 2-second Sentinel failover at 40 webhooks/s: 122 parents for 30
// incidents, 92 of them left saying firing for good, as only the parent the
// store knows is redrawn at the resolve). A replica now remembers, for a
// while, the parent each incident it handled had at an integration that
// threads updates (Slack's Web API) — as the store answered it, or as this
// replica posted it during the outage — and a fail-open update of it goes
// in that parent's thread. PagerDuty is not concerned: a fail-open firing
// still triggers there (its dedup key folds it into an open incident), so
// a page is never held on what a replica remembers. What a replica cannot
// know: another replica resolved the incident and nothing of it reached
// this one since; an outage's new firing of it within knownRefTTL then
// replies under the resolved parent (a ticket's, since a page still
// triggers PagerDuty). A Join that finds the incident closed forgets it.

// knownRefTTL is how long a parent seen is reused in an outage: the
// incident may have been resolved by another replica since (its new
// firing would then reply under the resolved parent), so only a parent
// seen lately — any webhook of an incident that is alive refreshes it.
const knownRefTTL = 10 * time.Minute

// knownRefsSize bounds each generation of the memory of parents.
const knownRefsSize = 8192

// knownRefs remembers incidents' parents by incident lease key
// (Pipeline.incidentKey).
type knownRefs struct {
	once sync.Once
	m    *recent.Map[string, knownRef]
}

type knownRef struct {
	ref string
	at  time.Time
}

func (k *knownRefs) init() {
	k.once.Do(func() { k.m = recent.New[string, knownRef](knownRefsSize) })
}

// note remembers ref as the parent of the incident at key, seen at now.
func (k *knownRefs) note(key, ref string, now time.Time) {
	if ref == "" {
		return
	}
	k.init()
	k.m.Put(key, knownRef{ref: ref, at: now})
}

// forget drops the incident at key (it closed).
func (k *knownRefs) forget(key string) {
	k.init()
	k.m.Delete(key)
}

// get returns the parent of the incident at key when seen within
// knownRefTTL of now.
func (k *knownRefs) get(key string, now time.Time) (string, bool) {
	k.init()
	r, ok := k.m.Get(key)
	if !ok || now.Sub(r.at) > knownRefTTL || r.at.After(now) {
		return "", false
	}
	return r.ref, true
}
