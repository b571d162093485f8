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
// a page is never held on what a replica remembers. Another replica may
// have resolved the incident since this one saw it (a review: a new
// episode replied under the resolved parent, a ticket's hidden): the
// parent is reused only while the webhook carries an alert of the incident
// (deduplicated ones included) firing since before the parent was seen,
// less startSkew — the same episode. A Join that finds the incident closed
// forgets it.

// knownRefTTL is how long a parent seen is reused in an outage. The
// incident may have been resolved by another replica since: its parent is
// reused only for a webhook carrying an alert of it that has fired since
// before the parent was seen (failOpenIncidents, oldestFiring), so the
// episode is the same; a new episode posts a parent of its own.
const knownRefTTL = time.Hour

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

// get returns the parent of the incident at key, and when it was seen,
// when seen within knownRefTTL of now.
func (k *knownRefs) get(key string, now time.Time) (string, time.Time, bool) {
	k.init()
	r, ok := k.m.Get(key)
	if !ok || now.Sub(r.at) > knownRefTTL || r.at.After(now) {
		return "", time.Time{}, false
	}
	return r.ref, r.at, true
}
