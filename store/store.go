package store

import (
	"context"
	"errors"
	"time"
)

// ErrUnavailable wraps errors of a Store that could not be reached;
// the dedup stage fails open or closed on it as configured.
var ErrUnavailable = errors.New("state store unavailable")

// ErrMisconfigured wraps errors that say the store is not what its
// configuration names — a Redis Cluster node configured as a single node
// (MOVED, CROSSSLOT). No retry mends them, and failing open on them sends
// every alert without deduplication (an audit: 68 of 100 pages sent twice
// through two replicas): the dedup stage answers 5xx on them whatever
// fail_closed says, and the readiness probe fails.
var ErrMisconfigured = errors.New("state store misconfigured")

// Entry is one key with its value and time to live.
type Entry struct {
	Key   string
	Value string
	TTL   time.Duration
}

// Store is the state shared by every router replica: dedup claims, incident
// membership, notifier state (Slack thread ts, PagerDuty trigger marks).
//
// Every batch method costs one round trip per cluster node whatever the
// number of keys, so a 100-alert webhook costs about what a 1-alert one does.
// Keys built by Key share a hash tag per incident, so an incident's keys live
// in one Redis Cluster slot. Implementations must be safe for concurrent use.
// Errors from an unreachable backend wrap ErrUnavailable.
type Store interface {
	// SetNX sets each entry only if its key does not exist (SET NX PX) and
	// reports, per entry, whether this call set it — or found its key
	// already holding exactly the entry's value. Callers claim with values
	// unique to the claim (tokens), so such a key is the caller's own: set
	// by a first attempt whose reply was lost before a client's retry.
	SetNX(ctx context.Context, entries []Entry) ([]bool, error)
	// Set sets each entry unconditionally (SET PX).
	Set(ctx context.Context, entries []Entry) error
	// Get returns the value of each key and whether it exists.
	Get(ctx context.Context, keys []string) (values []string, found []bool, err error)
	// DeleteIfEqual deletes each entry's key only if its current value equals
	// entry.Value (so a replica releases only its own claim). TTL is ignored.
	DeleteIfEqual(ctx context.Context, entries []Entry) error
	// ExpireIfEqual sets the TTL of each entry's key to entry.TTL only if
	// the key holds entry.Value (a marker refreshed only while it still
	// says what its caller read).
	ExpireIfEqual(ctx context.Context, entries []Entry) error
	// AddMembers adds members to the set at key and sets its TTL.
	AddMembers(ctx context.Context, key string, ttl time.Duration, members ...string) error
	// RemoveMembers removes members from the set at key and returns, atomically
	// with the removal, how many members remain.
	RemoveMembers(ctx context.Context, key string, members ...string) (remaining int64, err error)
	// Members returns the members of the set at key (empty when absent).
	Members(ctx context.Context, key string) ([]string, error)
	// Incidents applies incident lifecycle steps (see IncidentStep).
	Incidents
	// RenewIncidents sets the time to live of each incident (keys as
	// IncidentOp.Key) that exists, its members included, to ttl: an
	// incident whose alert keeps firing with no step outlives its markers'
	// renewal (dedup.Step.Renew) no more.
	RenewIncidents(ctx context.Context, keys []string, ttl time.Duration) error
	// IncidentStates reads the state of each incident (keys as
	// IncidentOp.Key) without changing it: "" (closed, or unknown),
	// "opening" (its opening message is being sent), "open", "resolving";
	// a lease past its end reads "", as the steps read it.
	IncidentStates(ctx context.Context, keys []string) ([]string, error)
	// Ping checks that the store answers.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// Key builds a store key "<prefix><kind>:{<incident>}:<rest>". The braces are
// a Redis Cluster hash tag: all keys of one incident map to one slot, so
// multi-key work on an incident never fails with CROSSSLOT.
func Key(prefix, kind, incident, rest string) string {
	if rest == "" {
		return prefix + kind + ":{" + incident + "}"
	}
	return prefix + kind + ":{" + incident + "}:" + rest // one allocation
}
