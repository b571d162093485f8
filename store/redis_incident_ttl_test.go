package store

import (
	"fmt"
	"testing"
	"time"
)

// A Join of an open incident sets no time to live when a Join set both
// keys' within min(ttl/100, 60 s) (the incident script's x field), but a
// members hash made anew — after an Unjoin, a Leave or an Abort emptied
// it, or a build that keeps no x — always gets one, and a Join after that
// interval sets both again.
func TestAJoinSetsTheIncidentsTimeToLiveOnlyWhenDue(t *testing.T) {
	r := startRedis(t)
	raw := r.client // the keys as Redis holds them
	ctx := t.Context()
	run := func(op IncidentOp) IncidentResult {
		t.Helper()
		res, err := r.Incidents(ctx, []IncidentOp{op})
		if err != nil {
			t.Fatalf("%s: %v", op.Step, err)
		}
		return res[0]
	}
	pttl := func(key string) time.Duration {
		t.Helper()
		d, err := raw.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	const ttl = time.Hour // min(ttl/100, 60 s) = 36 s: every step below runs within it
	key := "ttl:inc:{a}"
	join := func(token string, fps ...string) IncidentResult {
		t.Helper()
		ms := make([]Member, len(fps))
		for i, fp := range fps {
			ms[i] = Member{Fingerprint: fp, StartsAt: "1000"}
		}
		return run(IncidentOp{Key: key, Step: StepJoin, Token: token, Lease: time.Minute, TTL: ttl, Members: ms})
	}
	if res := join("t1", "a"); res.Outcome != OutcomeOpening {
		t.Fatalf("first join: %+v, want opening", res)
	}
	run(IncidentOp{Key: key, Step: StepOpened, Token: "t1", Ref: "ref", TTL: ttl})
	join("t2", "b") // sets x: the incident is open
	// Shorten both keys' lives by hand: a Join within the interval leaves
	// them as they are.
	for _, k := range []string{key, membersKey(key)} {
		if err := raw.PExpire(ctx, k, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if res := join("t3", "c"); res.Outcome != OutcomeOpen || len(res.Added) != 1 {
		t.Fatalf("join of c: %+v, want open with c added", res)
	}
	for _, k := range []string{key, membersKey(key)} {
		if d := pttl(k); d > time.Minute {
			t.Fatalf("%s lives %s after a join within the interval, want its minute left as it was", k, d)
		}
	}
	// An Unjoin of every member empties the members hash (Redis deletes
	// it); the next Join makes it anew, with a time to live.
	run(IncidentOp{Key: key, Step: StepUnjoin, Token: "t4", TTL: ttl, Members: []Member{{Fingerprint: "a", EndsAt: "2000"}, {Fingerprint: "b", EndsAt: "2000"}, {Fingerprint: "c", EndsAt: "2000"}}})
	if n, err := raw.Exists(ctx, membersKey(key)).Result(); err != nil || n != 0 {
		t.Fatalf("members hash after the unjoin of all: exists=%d err=%v, want gone", n, err)
	}
	if res := join("t5", "d"); res.Outcome != OutcomeOpen {
		t.Fatalf("join after the unjoin: %+v, want open", res)
	}
	for _, k := range []string{key, membersKey(key)} {
		if d := pttl(k); d <= 59*time.Minute {
			t.Fatalf("%s lives %s after a join that made the members hash anew, want about %s", k, d, ttl)
		}
	}
	// A members hash emptied by a build that leaves x as it was (deleted
	// here by hand) is made anew by the next Join, with a time to live.
	join("t5b", "d2")
	if err := raw.Del(ctx, membersKey(key)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := raw.PExpire(ctx, key, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if res := join("t5c", "d3", "d4"); res.Outcome != OutcomeOpen || len(res.Added) != 2 {
		t.Fatalf("join into the emptied members hash: %+v, want open with d3 and d4 added", res)
	}
	for _, k := range []string{key, membersKey(key)} {
		if d := pttl(k); d <= 59*time.Minute {
			t.Fatalf("%s lives %s after a join that made the members hash anew behind x, want about %s", k, d, ttl)
		}
	}
	// The same with a step of two chunks (more than a thousand members)
	// naming one member in both: the second chunk reads what the first
	// wrote, which is not a member the hash held before.
	if err := raw.Del(ctx, membersKey(key)).Err(); err != nil {
		t.Fatal(err)
	}
	many := make([]string, 1001)
	for i := range 1000 {
		many[i] = fmt.Sprint("m", i)
	}
	many[1000] = many[0]
	if res := join("t5d", many...); res.Outcome != OutcomeOpen || len(res.Added) != 1000 {
		t.Fatalf("join of 1001 members, one twice, into the emptied members hash: outcome %s, %d added; want open, 1000", res.Outcome, len(res.Added))
	}
	for _, k := range []string{key, membersKey(key)} {
		if d := pttl(k); d <= 59*time.Minute {
			t.Fatalf("%s lives %s after a two-chunk join that made the members hash anew behind x, want about %s", k, d, ttl)
		}
	}
	// A Join once the interval has passed sets both keys' lives again.
	if err := raw.HSet(ctx, key, "x", time.Now().Add(-2*time.Minute).UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{key, membersKey(key)} {
		if err := raw.PExpire(ctx, k, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	join("t6", "e")
	for _, k := range []string{key, membersKey(key)} {
		if d := pttl(k); d <= 59*time.Minute {
			t.Fatalf("%s lives %s after a join past the interval, want about %s", k, d, ttl)
		}
	}
}
