package store

import (
	"container/heap"
	"time"
)

// Expiring the memory store's keys.
//
// Reads expire keys lazily (lookup), as Redis does. Keys written once and
// never read again — markers, claims, flap histories of alerts that are not
// seen again — must still go, or a long-running single replica grows
// without bound. The store used to walk every key every 1,024 writes to
// find them: a cost proportional to the keys held, paid a thousand times
// over while a load writes fresh alerts (measured: 45 % of the router's
// CPU after ten seconds of new alerts, and growing). Now a min-heap orders
// the keys by expiry and each write deletes what has come due, so the cost
// of expiring a key is O(log n), paid once.
//
// Each key has at most one live entry in the heap, recorded in its indexed
// field: the time of the entry that will visit it. When a key's expiry
// moves later (a Set over it, an incident touched by a step) the entry is
// left where it is and, when its time comes, the sweep finds the key still
// alive and files it again at its new expiry. Only an earlier expiry files
// a new entry at once. Entries whose key was deleted or replaced are
// recognised by their time no longer matching the key's indexed field, and
// dropped.

// sweepMax bounds the keys one write expires, so a crowd of keys expiring
// together is spread over the following writes instead of holding the
// store's lock for one long sweep. Each write files at most one entry and
// expires up to sweepMax, so the backlog always drains.
const sweepMax = 256

// expiryEntry files the key of an item (or, when incident is set, of an
// incident) to be visited at at, in Unix nanoseconds.
type expiryEntry struct {
	at       int64
	key      string
	incident bool
}

// expiryHeap is a min-heap of entries by at (container/heap).
type expiryHeap []expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryEntry)) }

func (h *expiryHeap) Pop() any {
	s := *h
	last := s[len(s)-1]
	s[len(s)-1] = expiryEntry{} // release the key string
	*h = s[:len(s)-1]
	return last
}

// schedule files key to be visited when expires comes, unless an entry
// already visits it no later; indexed is the key's record of its entry. A
// key that never expires is not filed. m.mu must be held.
func (m *Memory) schedule(key string, incident bool, expires time.Time, indexed *int64) {
	if expires.IsZero() {
		return
	}
	at := expires.UnixNano()
	if *indexed != 0 && *indexed <= at {
		return
	}
	*indexed = at
	heap.Push(&m.expiring, expiryEntry{at: at, key: key, incident: incident})
}

// sweep deletes up to sweepMax keys that have expired by now, filing again
// those whose expiry moved later. m.mu must be held.
func (m *Memory) sweep(now time.Time) {
	n := now.UnixNano()
	for range sweepMax {
		if len(m.expiring) == 0 || m.expiring[0].at > n {
			return
		}
		e := heap.Pop(&m.expiring).(expiryEntry)
		expires, indexed := m.filed(e)
		if indexed == nil || *indexed != e.at {
			continue // deleted or replaced since it was filed
		}
		*indexed = 0
		switch {
		case !expired(expires, now):
			m.schedule(e.key, e.incident, expires, indexed)
		case e.incident:
			delete(m.incidents, e.key)
		default:
			delete(m.items, e.key)
		}
	}
}

// filed returns the expiry and the indexed field of the item or incident
// e files, or a nil indexed when its key holds none. m.mu must be held.
func (m *Memory) filed(e expiryEntry) (time.Time, *int64) {
	if e.incident {
		if st := m.incidents[e.key]; st != nil {
			return st.expires, &st.indexed
		}
	} else if it := m.items[e.key]; it != nil {
		return it.expires, &it.indexed
	}
	return time.Time{}, nil
}

// expired reports whether something expiring at expires (zero: never) has
// expired by now.
func expired(expires, now time.Time) bool {
	return !expires.IsZero() && !now.Before(expires)
}
