package store

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A retrigger taken and never settled holds other senders' Joins until its
// end — but when the store's clock steps back after the take (NTP, a Redis
// restored or failed over to a host behind), that end lies further ahead
// than the take's lease: such a take is void, as past its end, and the next
// Join takes the retrigger (a review: Joins answered busy for the hour the
// clock went back). A step back within the take's lease still holds.
func TestAnUnsettledRetriggerIsVoidWhenTheClockSteppedBack(t *testing.T) {
	const lease = 30 * time.Second
	open := func(t *testing.T, s Store, key string) IncidentResult {
		t.Helper()
		run := func(op IncidentOp) IncidentResult {
			t.Helper()
			op.Key, op.TTL = key, time.Hour
			if op.Lease == 0 {
				op.Lease = lease
			}
			res, err := s.Incidents(t.Context(), []IncidentOp{op})
			if err != nil {
				t.Fatalf("%s: %v", op.Step, err)
			}
			return res[0]
		}
		run(IncidentOp{Step: StepJoin, Token: "t0", Members: []Member{{Fingerprint: "A", StartsAt: "1000"}}})
		run(IncidentOp{Step: StepOpened, Token: "t0"})
		b := run(IncidentOp{Step: StepJoin, Token: "tB", Members: []Member{{Fingerprint: "B", StartsAt: "1000"}}, Retrigger: time.Hour})
		if b.Retriggered == "" {
			t.Fatalf("B's join took no retrigger: %+v", b)
		}
		return b
	}
	joinC := func(t *testing.T, s Store, key string) IncidentResult {
		t.Helper()
		res, err := s.Incidents(t.Context(), []IncidentOp{{Key: key, Step: StepJoin, Token: "tC", Members: []Member{{Fingerprint: "C", StartsAt: "1000"}}, Retrigger: time.Hour, Lease: lease, TTL: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	for _, back := range []time.Duration{10 * time.Second, time.Hour} {
		holds := back < lease
		check := func(t *testing.T, c IncidentResult) {
			t.Helper()
			switch {
			case holds && c.Outcome != OutcomeBusy:
				t.Fatalf("clock %v back: C %+v, want busy (the take's end within twice its lease)", back, c)
			case !holds && (c.Outcome != OutcomeOpen || c.Retriggered == ""):
				t.Fatalf("clock %v back: C %+v, want the retrigger taken (the take void)", back, c)
			}
		}
		t.Run("memory "+back.String(), func(t *testing.T) {
			var shift atomic.Int64
			m := NewMemory(WithClock(func() time.Time { return time.Now().Add(-time.Duration(shift.Load())) }))
			open(t, m, "pc:inc:{m}")
			shift.Store(int64(back))
			check(t, joinC(t, m, "pc:inc:{m}"))
		})
		t.Run("redis "+back.String(), func(t *testing.T) {
			r := startRedis(t)
			key := "pc:inc:{r}"
			open(t, r, key)
			// Redis' clock cannot be moved: the take's times are moved
			// ahead by as much, which is what the script then reads.
			p, err := r.client.HGet(t.Context(), key, "p").Result()
			if err != nil {
				t.Fatal(err)
			}
			f := strings.SplitN(p, ";", 4)
			later := func(ms string) string {
				v, _ := strconv.ParseInt(ms, 10, 64)
				return strconv.FormatInt(v+back.Milliseconds(), 10)
			}
			f[1], f[2] = later(f[1]), later(f[2])
			if err := r.client.HSet(t.Context(), key, "p", strings.Join(f, ";"), "g", f[2]).Err(); err != nil {
				t.Fatal(err)
			}
			check(t, joinC(t, r, key))
		})
	}
}
