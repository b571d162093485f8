package store

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// An incident last triggered at a time ahead of the store's clock (the
// clock stepped back since: NTP, a Redis restored or failed over to a host
// behind) is due for a retrigger (dueTrigger): counted from that time, a
// new alert of the open incident paged no one for as long as the clock
// went back.
func TestATriggerTimeAheadOfTheClockIsDue(t *testing.T) {
	const back = time.Hour
	run := func(t *testing.T, s Store, key string, op IncidentOp) IncidentResult {
		t.Helper()
		op.Key, op.Lease, op.TTL = key, time.Minute, 24*time.Hour
		res, err := s.Incidents(t.Context(), []IncidentOp{op})
		if err != nil {
			t.Fatalf("%s: %v", op.Step, err)
		}
		return res[0]
	}
	open := func(t *testing.T, s Store, key string) {
		t.Helper()
		run(t, s, key, IncidentOp{Step: StepJoin, Token: "t0", Members: []Member{{Fingerprint: "A", StartsAt: "1000"}}, Retrigger: 5 * time.Minute}) // the opening's trigger time
		run(t, s, key, IncidentOp{Step: StepOpened, Token: "t0"})
	}
	check := func(t *testing.T, s Store, key string) {
		t.Helper()
		b := run(t, s, key, IncidentOp{Step: StepJoin, Token: "tB", Members: []Member{{Fingerprint: "B", StartsAt: "1000"}}, Retrigger: 5 * time.Minute})
		if b.Outcome != OutcomeOpen || b.Retriggered == "" {
			t.Fatalf("B's join with the last trigger %v ahead: %+v, want the retrigger taken", back, b)
		}
	}
	t.Run("memory", func(t *testing.T) {
		var shift atomic.Int64
		m := NewMemory(WithClock(func() time.Time { return time.Now().Add(-time.Duration(shift.Load())) }))
		open(t, m, "cb:inc:{m}")
		shift.Store(int64(back))
		check(t, m, "cb:inc:{m}")
	})
	t.Run("redis", func(t *testing.T) {
		r := startRedis(t)
		key := "cb:inc:{r}"
		open(t, r, key)
		// Redis' clock cannot be moved: the trigger time is moved ahead.
		g, err := r.client.HGet(t.Context(), key, "g").Int64()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.client.HSet(t.Context(), key, "g", strconv.FormatInt(g+back.Milliseconds(), 10)).Err(); err != nil {
			t.Fatal(err)
		}
		check(t, r, key)
	})
}
