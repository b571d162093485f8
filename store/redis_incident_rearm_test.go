package store

import (
	"strconv"
	"testing"
	"time"
)

// A Join of an open incident re-arms both keys' time to live unless a Join
// did within min(ttl/100, 60 s) — the state hash's x, the time of that
// re-arm, which only a re-arm moves (docs/architecture.md: "at most once
// every min(notified_ttl/100, 60 s)"). Moved by every Join, an incident
// joined more often than that was never re-armed and expired with its
// alerts firing: their resolves found no incident, PagerDuty was never
// resolved. An x ahead of Redis' clock (the clock stepped back) is no
// such re-arm: counted from it, nothing re-armed the incident for as long
// as the clock went back. A window of 60 s for a ttl of an hour left it up
// to 60 s less than the 36 s promised.
func TestAJoinReArmsAnOpenIncidentOncePerInterval(t *testing.T) {
	r := startRedis(t)
	ctx := t.Context()
	const ttl = time.Hour // min(ttl/100, 60 s) = 36 s
	cases := []struct {
		name  string
		x     time.Duration // the last re-arm, from now
		rearm bool
	}{
		{"within the interval", -10 * time.Second, false},
		{"past ttl/100, within 60 s", -40 * time.Second, true},
		{"ahead of the clock", time.Hour, true},
	}
	for i, c := range cases {
		key := "rearm:inc:{" + strconv.Itoa(i) + "}"
		join := func(token string) {
			t.Helper()
			res, err := r.Incidents(ctx, []IncidentOp{{Key: key, Step: StepJoin, Token: token, Lease: time.Minute, TTL: ttl,
				Members: []Member{{Fingerprint: "A", StartsAt: "1000"}}}})
			if err != nil || (token != "t0" && res[0].Outcome != OutcomeOpen) {
				t.Fatalf("%s: join: %+v %v", c.name, res, err)
			}
		}
		join("t0")
		if _, err := r.Incidents(ctx, []IncidentOp{{Key: key, Step: StepOpened, Token: "t0", TTL: ttl}}); err != nil {
			t.Fatal(err)
		}
		x := strconv.FormatInt(time.Now().Add(c.x).UnixMilli(), 10)
		if err := r.client.HSet(ctx, key, "x", x).Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{key, membersKey(key)} {
			if err := r.client.PExpire(ctx, k, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
		join("t1")
		for _, k := range []string{key, membersKey(key)} {
			d, err := r.client.PTTL(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if rearmed := d > 59*time.Minute; rearmed != c.rearm {
				t.Errorf("%s: %s lives %s after the join, want re-armed %v", c.name, k, d, c.rearm)
			}
		}
		if got, err := r.client.HGet(ctx, key, "x").Result(); err != nil || (got == x) != !c.rearm {
			t.Errorf("%s: x = %s (%v) after the join, was %s: want it moved only by a re-arm", c.name, got, err, x)
		}
	}
}
