package slack

import (
	"context"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// Two replicas replacing one parent at once (its channel archived, each
// with an update of the incident): one wins the claim, the other reads it
// pending — never both (a review: one value for every replica let each win
// while a post was in flight: two new parents, one never resolved) — and,
// once the winner posted, the new parent to reply under.
func TestOneReplicaReplacesAParent(t *testing.T) {
	now := time.Now()
	st := store.NewMemory(store.WithClock(func() time.Time { return now }))
	tg := &triageTarget{n: &Notifier{cfg: DefaultConfig()}}
	link := func() *triageLink { return &triageLink{t: NewTriage(TriageOptions{Store: st}), tg: tg} }
	a, b := link(), link()
	old := parentRef{channel: "C0001", ts: "1700000000.000001"}
	ctx := context.Background()
	won, _, err := a.claimReplacement(ctx, "inc", old)
	if err != nil || !won {
		t.Fatalf("first claim: won %v, %v", won, err)
	}
	if won, next, err := b.claimReplacement(ctx, "inc", old); err != nil || won || next != "" {
		t.Fatalf("second claim while the first posts: won %v, next %q, %v; want lost, pending", won, next, err)
	}
	if won, _, _ := a.claimReplacement(ctx, "inc", old); won {
		t.Fatal("another attempt of the same replica won a claim in flight")
	}
	// A winner that died mid-post holds the claim twice the Slack
	// timeout (20s by default), not minutes: then another replica wins.
	now = now.Add(21 * time.Second)
	if won, _, err := b.claimReplacement(ctx, "inc", old); err != nil || !won {
		t.Fatalf("claim after the first one's lifetime: won %v, %v; want won", won, err)
	}
	next := parentRef{channel: "C0002", ts: "1700000000.000002"}
	a.replaced(ctx, "inc", old, next)
	if won, got, err := b.claimReplacement(ctx, "inc", old); err != nil || won || got != next.String() {
		t.Fatalf("after the post: won %v, next %q, %v; want lost, %q", won, got, err, next.String())
	}
}
