package routing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// ghostStore executes a claim round trip and then reports it failed, as a
// Redis stalled mid-round trip does: the router gave up on the reply (its
// read timeout), and Redis ran the commands once it woke.
type ghostStore struct {
	store.Store
	ghosts int // round trips still to answer with an error
}

func (s *ghostStore) ClaimJoin(ctx context.Context, claims, also []store.Entry, ops []store.ClaimedOp) store.ClaimJoinResult {
	res := store.ClaimJoin(ctx, s.Store, claims, also, ops)
	if s.ghosts > 0 {
		s.ghosts--
		err := errors.New("i/o timeout")
		return store.ClaimJoinResult{ClaimErr: err, IncidentsErr: err, AlsoErr: err}
	}
	return res
}

// With fail_closed, a claim the store executed after the router gave up
// on it held its transition until claim_ttl: every retry was answered 503
// "being sent by another replica" while nothing was sent. The replica
// releases what it claimed (its own token only) once the store answers,
// and Alertmanager's next retry delivers.
func TestAFailClosedClaimTheRouterGaveUpOnIsReleased(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testGhostClaim(t, newEnv(t)) })
	t.Run("redis", func(t *testing.T) { testGhostClaim(t, redisEnv(t, []string{redistest.Start(t).Addr()}, false)) })
}

func testGhostClaim(t *testing.T, e *env) {
	e.dedup.FailClosed = true
	p := e.pipeline()
	g := &ghostStore{Store: e.store, ghosts: 1}
	p.Store = g
	p.Deferred = dedup.NewDeferred(g, nil, nil)
	t.Cleanup(p.Deferred.Close)
	a := tAlert("TTFTHigh", "firing", "page")
	if _, err := process(t, p, a); err == nil {
		t.Fatal("the claim round trip failed with fail_closed: want a 5xx")
	}
	if n := len(e.pd.notifications()); n != 0 {
		t.Fatalf("%d notifications sent with the claims unanswered and fail_closed", n)
	}
	eventually(t, "the release reaches the store", func() bool { return p.Deferred.Len() == 0 })
	if sum, err := process(t, p, a); err != nil {
		t.Fatalf("Alertmanager's retry: %v (summary %+v); want it delivered", err, sum)
	}
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("%d notifications after the retry, want 1", n)
	}
}
