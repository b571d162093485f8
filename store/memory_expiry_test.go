package store

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// clockedMemory is a memory store on a clock the test moves.
func clockedMemory() (*Memory, *time.Time) {
	now := time.Unix(1_700_000_000, 0)
	return NewMemory(WithClock(func() time.Time { return now })), &now
}

func set(t *testing.T, m *Memory, key string, ttl time.Duration) {
	t.Helper()
	if err := m.Set(t.Context(), []Entry{{Key: key, Value: "v", TTL: ttl}}); err != nil {
		t.Fatal(err)
	}
}

// held reports whether the store still holds key (expired or not): what
// the sweep, not a lazy read, has left.
func held(m *Memory, key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.items[key]
	return ok
}

func TestMemorySweepDeletesExpiredKeysAsTheirTimeComes(t *testing.T) {
	m, now := clockedMemory()
	set(t, m, "short", time.Second)
	set(t, m, "long", time.Hour)
	set(t, m, "forever", 0)
	*now = now.Add(2 * time.Second)
	set(t, m, "other", time.Hour) // any write sweeps
	if held(m, "short") {
		t.Error("a key 1s past its TTL is still held after a write")
	}
	for _, k := range []string{"long", "forever", "other"} {
		if !held(m, k) {
			t.Errorf("%s was swept before its time", k)
		}
	}
	*now = now.Add(2 * time.Hour)
	set(t, m, "other", time.Hour)
	if held(m, "long") {
		t.Error("a key past its TTL of an hour is still held")
	}
	if !held(m, "forever") {
		t.Error("a key without TTL was swept")
	}
}

func TestMemorySweepFollowsAKeyWhoseExpiryMoves(t *testing.T) {
	t.Run("later: the key lives to its new expiry", func(t *testing.T) {
		m, now := clockedMemory()
		set(t, m, "k", time.Second)
		set(t, m, "k", time.Hour)
		*now = now.Add(time.Minute)
		set(t, m, "w", time.Hour)
		if !held(m, "k") {
			t.Fatal("a key set again with a longer TTL was swept at its first expiry")
		}
		if _, found, _ := m.Get(t.Context(), []string{"k"}); !found[0] {
			t.Fatal("the key set again is not found")
		}
		*now = now.Add(time.Hour)
		set(t, m, "w", time.Hour)
		if held(m, "k") {
			t.Error("the key is held past its new expiry")
		}
	})
	t.Run("earlier: the key goes at its new expiry", func(t *testing.T) {
		m, now := clockedMemory()
		set(t, m, "k", time.Hour)
		set(t, m, "k", time.Second)
		*now = now.Add(time.Minute)
		set(t, m, "w", time.Hour)
		if held(m, "k") {
			t.Error("a key set again with a shorter TTL is held until its first expiry")
		}
	})
	t.Run("members: a set's TTL renewed by AddMembers", func(t *testing.T) {
		m, now := clockedMemory()
		ctx := t.Context()
		if err := m.AddMembers(ctx, "s", time.Second, "a"); err != nil {
			t.Fatal(err)
		}
		if err := m.AddMembers(ctx, "s", time.Hour, "b"); err != nil {
			t.Fatal(err)
		}
		*now = now.Add(time.Minute)
		set(t, m, "w", time.Hour)
		if got, _ := m.Members(ctx, "s"); len(got) != 2 {
			t.Errorf("Members = %v after its TTL was renewed; want a and b", got)
		}
	})
}

func TestMemoryKeySetManyTimesKeepsOneEntry(t *testing.T) {
	m, now := clockedMemory()
	for i := range 10_000 {
		*now = now.Add(time.Millisecond)
		set(t, m, "flap", time.Hour)
		set(t, m, "key-"+strconv.Itoa(i%10), time.Hour)
	}
	if n := len(m.expiring); n != 11 {
		t.Errorf("the expiry heap holds %d entries for 11 keys set 20,000 times; want 11", n)
	}
}

func TestMemorySweepIsBoundedPerWrite(t *testing.T) {
	m, now := clockedMemory()
	const keys = 10 * sweepMax
	entries := make([]Entry, keys)
	for i := range entries {
		entries[i] = Entry{Key: fmt.Sprint("k", i), Value: "v", TTL: time.Second}
	}
	if err := m.Set(t.Context(), entries); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Minute)
	set(t, m, "w", time.Hour)
	if got, want := m.Len(), keys+1-sweepMax; got != want {
		t.Fatalf("Len = %d after one write over %d expired keys; want %d (one write expires sweepMax)", got, keys, want)
	}
	for range 9 {
		set(t, m, "w", time.Hour)
	}
	if got := m.Len(); got != 1 {
		t.Errorf("Len = %d after ten writes; want 1: the backlog drains", got)
	}
}

func TestMemorySweepsExpiredIncidents(t *testing.T) {
	m, now := clockedMemory()
	ctx := t.Context()
	join := func(key string, ttl time.Duration) {
		t.Helper()
		_, err := m.Incidents(ctx, []IncidentOp{{Key: key, Step: StepJoin, Token: "t", Lease: time.Second, TTL: ttl,
			Members: []Member{{Fingerprint: "f", StartsAt: "s"}}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	join("short", time.Minute)
	join("renewed", time.Minute)
	*now = now.Add(50 * time.Second)
	join("renewed", time.Minute) // its state lives on from here
	*now = now.Add(20 * time.Second)
	set(t, m, "w", time.Hour)
	m.mu.Lock()
	_, short := m.incidents["short"]
	_, renewed := m.incidents["renewed"]
	m.mu.Unlock()
	if short {
		t.Error("an incident past its TTL is still held after a write")
	}
	if !renewed {
		t.Error("an incident whose TTL a later step renewed was swept at its first expiry")
	}
}

// BenchmarkMemorySetNX writes fresh keys into a store already holding n
// live ones: the cost per write must not grow with n (it used to walk every
// key every 1,024 writes).
func BenchmarkMemorySetNX(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprint("held=", n), func(b *testing.B) {
			m := NewMemory()
			entries := make([]Entry, n)
			for i := range entries {
				entries[i] = Entry{Key: fmt.Sprint("held-", i), Value: "v", TTL: time.Hour}
			}
			if err := m.Set(b.Context(), entries); err != nil {
				b.Fatal(err)
			}
			e := []Entry{{Value: "v", TTL: time.Minute}}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				e[0].Key = "fresh-" + strconv.Itoa(i)
				if _, err := m.SetNX(b.Context(), e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
