package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errWrongType mirrors Redis' WRONGTYPE: a string operation on a set or the
// reverse.
var errWrongType = errors.New("WRONGTYPE operation against a key holding the wrong kind of value")

// Memory is an in-process Store: a map under a mutex with lazy TTL
// expiry on reads and an expiry heap swept on writes (memory_expiry.go). It
// is right for a single replica only, and loses its state on
// restart. It is safe for concurrent use. After Close every method returns
// an error wrapping ErrUnavailable.
type Memory struct {
	now func() time.Time

	mu    sync.Mutex
	items map[string]*item
	// incidents holds incident state (memory_incident.go).
	incidents map[string]*incidentState
	// expiring files every key that has a TTL by when it expires.
	expiring expiryHeap
	closed   bool
}

// item is a string value or, when set is non-nil, a set.
type item struct {
	value   string
	set     map[string]struct{}
	expires time.Time // zero: never
	indexed int64     // the time of its entry in Memory.expiring; 0: none
}

// MemoryOption configures a Memory store.
type MemoryOption func(*Memory)

// WithClock makes the store read the time from now, so tests can drive
// expiry. The default is time.Now.
func WithClock(now func() time.Time) MemoryOption {
	return func(m *Memory) { m.now = now }
}

// NewMemory returns an empty memory store.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{now: time.Now, items: make(map[string]*item)}
	for _, o := range opts {
		o(m)
	}
	return m
}

var _ Store = (*Memory)(nil)

// begin checks ctx and the closed flag, and locks the store; the caller
// unlocks it.
func (m *Memory) begin(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory %s: %w", op, err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return fmt.Errorf("memory %s: %w: store is closed", op, ErrUnavailable)
	}
	return nil
}

// lookup returns the live item at key, deleting it if it has expired.
// m.mu must be held.
func (m *Memory) lookup(key string, now time.Time) *item {
	it, ok := m.items[key]
	if !ok {
		return nil
	}
	if expired(it.expires, now) {
		delete(m.items, key)
		return nil
	}
	return it
}

// setValue sets key to value with its expiry, as Redis SET: whatever the
// key held is replaced. An existing item is reused, so a key set again and
// again keeps its one entry in the expiry heap. m.mu must be held.
func (m *Memory) setValue(key, value string, expires, now time.Time) {
	it := m.items[key]
	if it == nil {
		it = &item{}
		m.items[key] = it
	}
	it.value, it.set, it.expires = value, nil, expires
	m.wrote(key, it, now)
}

// wrote files the expiry of the item just written at key and expires what
// has come due (memory_expiry.go). m.mu must be held.
func (m *Memory) wrote(key string, it *item, now time.Time) {
	m.schedule(key, false, it.expires, &it.indexed)
	m.sweep(now)
}

// expiry returns when an entry with ttl set at now expires; zero (never)
// when ttl is not positive, as Redis SET without PX.
func expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}

// SetNX sets each entry whose key does not exist and reports which it set.
// A key repeated in entries is set by its first entry only.
func (m *Memory) SetNX(ctx context.Context, entries []Entry) ([]bool, error) {
	if err := m.begin(ctx, "set nx"); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	now := m.now()
	set := make([]bool, len(entries))
	for i, e := range entries {
		if it := m.lookup(e.Key, now); it != nil {
			set[i] = it.set == nil && it.value == e.Value // the caller's own claim
			continue
		}
		m.setValue(e.Key, e.Value, expiry(now, e.TTL), now)
		set[i] = true
	}
	return set, nil
}

// Set sets each entry unconditionally, replacing its value and TTL.
func (m *Memory) Set(ctx context.Context, entries []Entry) error {
	if err := m.begin(ctx, "set"); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := m.now()
	for _, e := range entries {
		m.setValue(e.Key, e.Value, expiry(now, e.TTL), now)
	}
	return nil
}

// Get returns the value of each key and whether it exists.
func (m *Memory) Get(ctx context.Context, keys []string) ([]string, []bool, error) {
	if err := m.begin(ctx, "get"); err != nil {
		return nil, nil, err
	}
	defer m.mu.Unlock()
	now := m.now()
	values := make([]string, len(keys))
	found := make([]bool, len(keys))
	for i, k := range keys {
		it := m.lookup(k, now)
		if it == nil {
			continue
		}
		if it.set != nil {
			return nil, nil, fmt.Errorf("memory get %q: %w", k, errWrongType)
		}
		values[i], found[i] = it.value, true
	}
	return values, found, nil
}

// DeleteIfEqual deletes each entry's key only if it holds the entry's value.
func (m *Memory) DeleteIfEqual(ctx context.Context, entries []Entry) error {
	return m.ifEqual(ctx, "delete if equal", entries, func(e Entry, now time.Time) { delete(m.items, e.Key) })
}

// ExpireIfEqual sets the TTL of each entry's key only if it holds the
// entry's value.
func (m *Memory) ExpireIfEqual(ctx context.Context, entries []Entry) error {
	return m.ifEqual(ctx, "expire if equal", entries, func(e Entry, now time.Time) {
		m.setValue(e.Key, e.Value, expiry(now, e.TTL), now)
	})
}

// ifEqual runs do, under the lock, for each entry whose key holds the
// entry's value.
func (m *Memory) ifEqual(ctx context.Context, op string, entries []Entry, do func(e Entry, now time.Time)) error {
	if err := m.begin(ctx, op); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := m.now()
	for _, e := range entries {
		if it := m.lookup(e.Key, now); it != nil && it.set == nil && it.value == e.Value {
			do(e, now)
		}
	}
	return nil
}

// AddMembers adds members to the set at key and sets its TTL; a ttl that is
// not positive leaves the TTL as it was. With no members it does nothing.
func (m *Memory) AddMembers(ctx context.Context, key string, ttl time.Duration, members ...string) error {
	if len(members) == 0 {
		return nil
	}
	if err := m.begin(ctx, "add members"); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := m.now()
	it := m.lookup(key, now)
	if it == nil {
		it = &item{set: make(map[string]struct{}, len(members))}
		m.items[key] = it
	} else if it.set == nil {
		return fmt.Errorf("memory add members %q: %w", key, errWrongType)
	}
	for _, mb := range members {
		it.set[mb] = struct{}{}
	}
	if ttl > 0 {
		it.expires = now.Add(ttl)
	}
	m.wrote(key, it, now)
	return nil
}

// RemoveMembers removes members from the set at key and returns how many
// remain; an emptied set no longer exists, as in Redis.
func (m *Memory) RemoveMembers(ctx context.Context, key string, members ...string) (int64, error) {
	if err := m.begin(ctx, "remove members"); err != nil {
		return 0, err
	}
	defer m.mu.Unlock()
	it := m.lookup(key, m.now())
	if it == nil {
		return 0, nil
	}
	if it.set == nil {
		return 0, fmt.Errorf("memory remove members %q: %w", key, errWrongType)
	}
	for _, mb := range members {
		delete(it.set, mb)
	}
	if len(it.set) == 0 {
		delete(m.items, key)
	}
	return int64(len(it.set)), nil
}

// Members returns the members of the set at key, in no particular order.
func (m *Memory) Members(ctx context.Context, key string) ([]string, error) {
	if err := m.begin(ctx, "members"); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	it := m.lookup(key, m.now())
	if it == nil {
		return []string{}, nil
	}
	if it.set == nil {
		return nil, fmt.Errorf("memory members %q: %w", key, errWrongType)
	}
	out := make([]string, 0, len(it.set))
	for mb := range it.set {
		out = append(out, mb)
	}
	return out, nil
}

// Ping reports whether the store is open.
func (m *Memory) Ping(ctx context.Context) error {
	if err := m.begin(ctx, "ping"); err != nil {
		return err
	}
	m.mu.Unlock()
	return nil
}

// Close drops the store's state; later calls fail with
// ErrUnavailable.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.items = nil
	m.incidents = nil
	m.expiring = nil
	return nil
}

// Len returns how many keys the store holds, counting expired keys not yet
// swept.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}
