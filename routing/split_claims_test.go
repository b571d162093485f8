package routing_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// stepStore runs a replica's claim round trip in two steps: the claims
// first (SET NX, as its pipeline's first commands), then — once proceed is
// closed — the whole ClaimJoin again (the claims it already holds are its
// own: won). claimed is closed between the two. after, when set, is closed
// once a ClaimJoin has returned.
type stepStore struct {
	store.Store
	claimed, proceed chan struct{}
	after            chan struct{}
	once             sync.Once
}

func (s *stepStore) ClaimJoin(ctx context.Context, claims, also []store.Entry, ops []store.ClaimedOp) store.ClaimJoinResult {
	if s.proceed != nil {
		if _, err := s.Store.SetNX(ctx, claims); err != nil {
			return store.ClaimJoinResult{ClaimErr: err, IncidentsErr: err, AlsoErr: err}
		}
		s.once.Do(func() { close(s.claimed) })
		<-s.proceed
	}
	res := store.ClaimJoin(ctx, s.Store, claims, also, ops)
	if s.after != nil {
		s.once.Do(func() { close(s.after) })
	}
	return res
}

// Two replicas split one incident's alerts between them — an HA pair's
// webhooks arriving together, their claims interleaved in the store: b
// claims y, a claims x (y lost) and opens the incident; b's join of y is
// busy until a's opening is confirmed. a waited for y's marker before
// sending, b for a's opening: neither moved until in_flight_wait, and
// both webhooks were answered 5xx though nothing was in doubt. a now sends
// first and waits for y after.
func TestReplicasSplittingAnIncidentDoNotWaitForEachOther(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testSplitClaims(t, newEnv(t)) })
	t.Run("redis", func(t *testing.T) { testSplitClaims(t, redisEnv(t, []string{redistest.Start(t).Addr()}, false)) })
}

func testSplitClaims(t *testing.T, e *env) {
	e.dedup.InFlightWait = 3 * time.Second // bounds the old deadlock, never reached now
	a, b := e.pipeline(), e.pipeline()
	sb := &stepStore{Store: e.store, claimed: make(chan struct{}), proceed: make(chan struct{})}
	b.Store = sb
	sa := &stepStore{Store: e.store, after: make(chan struct{})}
	a.Store = sa
	x, y := tAlert("TTFTHigh", "firing", "page", "instance", "x"), tAlert("TTFTHigh", "firing", "page", "instance", "y")

	bDone := make(chan error, 1)
	msgB := payload(t, y)
	go func() { _, err := b.Process(context.Background(), msgB); bDone <- err }()
	<-sb.claimed // b holds y's claim, its join not run yet

	aDone := make(chan error, 1)
	msgA := payload(t, x, y)
	go func() { _, err := a.Process(context.Background(), msgA); aDone <- err }()
	<-sa.after // a won x, lost y, and its join opened the incident
	close(sb.proceed)

	if err := <-aDone; err != nil {
		t.Errorf("replica a: %v; want 2xx: it opened the incident with x and b delivered y", err)
	}
	if err := <-bDone; err != nil {
		t.Errorf("replica b: %v; want 2xx: y joined the incident a opened", err)
	}
	triggers := 0
	for _, n := range e.pd.notifications() {
		if n.Opening {
			triggers++
		}
	}
	if triggers != 1 {
		t.Errorf("%d PagerDuty triggers, want 1 (the opening)", triggers)
	}
	// Alertmanager repeating the group to either replica sends nothing more.
	before := len(e.pd.notifications()) + len(e.slack.notifications())
	mustProcess(t, a, x, y)
	mustProcess(t, b, x, y)
	if after := len(e.pd.notifications()) + len(e.slack.notifications()); after != before {
		t.Errorf("the repeats sent %d more notifications, want none", after-before)
	}
}

// blockingNotifier is an integration that answers only when the webhook's
// deadline ends (a PagerDuty slower than webhook.timeout).
type blockingNotifier struct{}

func (blockingNotifier) Notify(ctx context.Context, _ *alert.Notification) error {
	<-ctx.Done()
	return ctx.Err()
}

// A webhook whose own sends took all its time (a slow PagerDuty) and that
// lost a claim to another replica has no time left to wait for that
// replica's delivery: it answers 5xx without reading the store. Before,
// the read ran with the webhook's context already done and was counted as
// a store outage (alertrouter_dedup_store_errors_total, "dedup store
// failed; continuing without it") during a PagerDuty slowdown.
func TestASlowSendIsNotCountedAsAStoreFailure(t *testing.T) {
	e := redisEnv(t, []string{redistest.Start(t).Addr()}, false)
	b := e.pipeline()
	sb := &stepStore{Store: e.store, claimed: make(chan struct{}), proceed: make(chan struct{})}
	b.Store = sb
	a := e.pipeline() // e.reg is a's
	a.Receivers["pagerduty"][0].Notifier = blockingNotifier{}
	x, y := tAlert("TTFTHigh", "firing", "page", "instance", "x"), tAlert("TTFTHigh", "firing", "page", "instance", "y")

	bDone := make(chan error, 1)
	msgB := payload(t, y)
	go func() { _, err := b.Process(context.Background(), msgB); bDone <- err }()
	<-sb.claimed // b holds y's claim

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := a.Process(ctx, payload(t, x, y)); err == nil {
		t.Error("a's webhook, whose send timed out, was answered 2xx")
	}
	if got := metric(t, e.reg, "alertrouter_dedup_store_errors_total", ""); got != 0 {
		t.Errorf("dedup store errors = %v after a slow send, want 0 (the store answered every call)", got)
	}
	close(sb.proceed)
	<-bDone
}
