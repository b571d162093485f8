package store_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
	"github.com/alertrouter/alertrouter/store/storetest"
)

func TestMemoryConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := store.NewMemory()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestMemoryExpiresOnTheInjectedClock(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := store.NewMemory(store.WithClock(func() time.Time { return now }))
	ctx := t.Context()
	if _, err := s.SetNX(ctx, []store.Entry{{Key: "k", Value: "v", TTL: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddMembers(ctx, "set", time.Minute, "m"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		advance time.Duration
		found   bool
	}{
		{"a key is there just before its TTL", time.Minute - time.Nanosecond, true},
		{"a key is gone at its TTL", time.Nanosecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = now.Add(tc.advance)
			_, found, err := s.Get(ctx, []string{"k"})
			if err != nil || found[0] != tc.found {
				t.Errorf("Get: found = %v, err = %v; want found = %v", found, err, tc.found)
			}
			members, err := s.Members(ctx, "set")
			if err != nil || (len(members) == 1) != tc.found {
				t.Errorf("Members = %v, %v; want present = %v", members, err, tc.found)
			}
		})
	}
}

func TestMemorySweepsExpiredKeysOnWrite(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := store.NewMemory(store.WithClock(func() time.Time { return now }))
	ctx := t.Context()
	entries := make([]store.Entry, 5000)
	for i := range entries {
		entries[i] = store.Entry{Key: string(rune('a'+i%26)) + time.Duration(i).String(), Value: "v", TTL: time.Second}
	}
	if err := s.Set(ctx, entries); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	// Keys never read again are dropped by the periodic sweep on write.
	if err := s.Set(ctx, entries[:2000]); err != nil {
		t.Fatal(err)
	}
	if n := s.Len(); n > 2000 {
		t.Errorf("Len() = %d after expiry and 2000 fresh writes; want expired keys swept (≤ 2000)", n)
	}
}
