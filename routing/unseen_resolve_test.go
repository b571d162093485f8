package routing_test

// Resolves of alerts no marker says were notified, while the store kept
// its state: the firing went out during a store outage (fail open), and
// its markers, held by dedup.Deferred, were given up (the replica stopped
// before the store answered again, or the outage outlasted MaxAge). The
// resolve must still reach PagerDuty, or its incident stays open for good.

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	commoncfg "github.com/prometheus/common/config"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// stand-ins are the PagerDuty and Slack stand-ins behind the real
// notifiers of receiver "pagerduty" (integrations pagerduty/0, slack/0),
// as cmd/router builds them.
type standIns struct {
	pd    *pdtest.Server
	slack *slacktest.Server
	integ []routing.Integration
}

func newStandIns(t *testing.T) *standIns {
	t.Helper()
	s := &standIns{pd: pdtest.NewServer(), slack: slacktest.NewServer("xoxb-test-token", "alerts")}
	t.Cleanup(s.pd.Close)
	t.Cleanup(s.slack.Close)
	deps := notify.Deps{Logger: slog.New(slog.DiscardHandler),
		Retry: notify.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}}
	pcfg := pagerduty.DefaultConfig()
	pcfg.URL = s.pd.EnqueueURL()
	pcfg.RoutingKey = commoncfg.Secret(pdtest.RoutingKey)
	pn, err := pagerduty.New(&pcfg, "pagerduty", deps)
	if err != nil {
		t.Fatal(err)
	}
	scfg := slack.DefaultConfig()
	scfg.APIURL = s.slack.APIURL()
	scfg.Token = "xoxb-test-token"
	scfg.Channel = "#alerts"
	sn, err := slack.New(&scfg, "pagerduty", deps)
	if err != nil {
		t.Fatal(err)
	}
	s.integ = []routing.Integration{
		{Name: "pagerduty/0", Notifier: pn, SendResolved: true},
		{Name: "slack/0", Notifier: sn, SendResolved: true},
	}
	return s
}

// replica is a pipeline of e whose receiver "pagerduty" pages through the
// stand-ins.
func (s *standIns) replica(e *env) *routing.Pipeline {
	p := e.pipeline()
	p.Receivers["pagerduty"] = s.integ
	return p
}

const ttftIncident = "llm-inference-gpu/chat/TTFT"

// unseenEnv is a Redis env whose store has held its state since long
// before the test's alerts started (dedup.Epoch), as in any long-running
// deployment: a missing marker is not explained by a store restart.
func unseenEnv(t *testing.T) *env {
	t.Helper()
	e, _ := retriggerEnv(t)
	return e
}

// The audit's sequence: Redis unreachable with its data kept, a page fires
// (fail open: PagerDuty triggered, Slack parent posted, the markers held by
// Deferred), the replica stops before Redis answers (the markers given up,
// and counted), Redis answers again, and the resolve arrives. Before, it
// was answered 200 and sent nowhere (resolved_unseen): the PagerDuty
// incident stayed open for good. Now PagerDuty gets it, once; Slack, which
// never resolves what it did not post, is left alone.
func TestAResolveWhoseFiringsMarkersWereGivenUpReachesPagerDuty(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)

	p1 := s.replica(e)
	down := &flaky{Store: e.store}
	down.setDown(true)
	p1.Store = down
	deferredReg := prometheus.NewRegistry()
	p1.Deferred = dedup.NewDeferred(down, dedup.NewDeferredMetrics(deferredReg), nil)
	if sum := mustProcess(t, p1, tAlert("TTFTHigh", "firing", "page")); sum.Notified != 2 {
		t.Fatalf("firing with the store down: summary %+v, want PagerDuty and Slack notified (fail open)", sum)
	}
	if s.pd.Triggers(ttftIncident) != 1 || len(s.slack.Parents()) != 1 {
		t.Fatalf("PagerDuty triggers %d, Slack parents %d; want 1 and 1", s.pd.Triggers(ttftIncident), len(s.slack.Parents()))
	}
	held := p1.Deferred.Len()
	if held == 0 {
		t.Fatal("no store write deferred during the outage")
	}
	p1.Deferred.Close() // the replica stops during the outage
	if got := metric(t, deferredReg, "alertrouter_dedup_deferred_dropped_total", ""); got != float64(held) {
		t.Errorf("deferred writes dropped at Close = %v, want %d counted", got, held)
	}

	// Redis answers again, its state as it was; a replica gets the resolve.
	p2 := s.replica(e)
	resolve := tAlert("TTFTHigh", "resolved", "page")
	sum := mustProcess(t, p2, resolve)
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Fatalf("PagerDuty resolves = %d (summary %+v), want 1: the incident would stay open for good", got, sum)
	}
	if sum.Notified != 1 || sum.Failed != 0 {
		t.Errorf("summary %+v, want the PagerDuty resolve counted notified", sum)
	}
	if got := metric(t, e.reg, "alertrouter_dedup_total", "resolved_unseen_sent"); got != 1 {
		t.Errorf("resolved_unseen_sent = %v, want 1", got)
	}
	if got := metric(t, e.reg, "alertrouter_dedup_total", "resolved_unseen"); got != 0 {
		t.Errorf("resolved_unseen = %v, want 0: the resolve went somewhere", got)
	}
	if ms := s.slack.Messages(); len(ms) != 1 || ms[0].Updates != 0 {
		t.Errorf("Slack messages %+v: want the parent alone, untouched (Slack ignores resolves it has no marker of)", ms)
	}

	// Alertmanager repeats the resolve, at this replica and another: the
	// resolve was remembered once sent.
	mustProcess(t, p2, resolve)
	mustProcess(t, s.replica(e), resolve)
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves after Alertmanager's repeats = %d, want 1", got)
	}
}

// A resolve no marker explains, of an incident that another alert keeps
// open, leaves it open: the incident step makes it an update, which
// PagerDuty folds. The last member's resolve closes it.
func TestAnUnseenResolveDoesNotCloseAnIncidentOthersHoldOpen(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	// b's firing was delivered without a trace in the store.
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "b"), tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "b"))
	if got := s.pd.Resolves(ttftIncident); got != 0 {
		t.Fatalf("PagerDuty resolves = %d while alert a still fires, want 0", got)
	}
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves = %d once every member resolved, want 1", got)
	}
}

// Alertmanager's HA peers deliver the same unseen resolve to two replicas
// at once: PagerDuty gets it once.
func TestAnUnseenResolveIsSentOnceAcrossReplicas(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	replicas := []*routing.Pipeline{s.replica(e), s.replica(e)}
	resolve := tAlert("TTFTHigh", "resolved", "page")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = replicas[i%2].Process(context.Background(), payload(t, resolve)) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !isRetryable(err) {
			t.Fatalf("Process: %v", err)
		}
	}
	for _, p := range replicas {
		if err := processUntilDelivered(p, []webhooktest.Alert{resolve}); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves = %d, want exactly 1", got)
	}
	if n := len(s.slack.Messages()); n != 0 {
		t.Errorf("%d Slack messages for a resolve of something never posted, want none", n)
	}
}

// With fail_closed, a webhook the store stopped before anything was sent
// says so in its counts: failed is what it did not send (before, the 503
// said "failed":0).
func TestFailClosedCountsWhatWasNotSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		// down makes the store fail: every call, or only the claims.
		down func(f *flaky, c *claimsDown)
	}{
		{"the store is down", func(f *flaky, _ *claimsDown) { f.setDown(true) }},
		{"the claims fail", func(_ *flaky, c *claimsDown) { c.down = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			e := redisEnv(t, []string{srv.Addr()}, false)
			e.dedup.FailClosed = true
			c := &claimsDown{Store: e.store}
			f := &flaky{Store: c}
			p := e.pipeline()
			p.Store = f
			tc.down(f, c)
			// Two pages (to PagerDuty) and a ticket (to Slack).
			sum, err := process(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"),
				tAlert("TTFTHigh", "firing", "page", "instance", "b"), tAlert("QueueDeep", "firing", "ticket"))
			if !isRetryable(err) {
				t.Fatalf("Process = %v, want a retryable error (fail_closed)", err)
			}
			if n := len(e.pd.notifications()) + len(e.slack.notifications()); n != 0 {
				t.Fatalf("%d notifications sent with fail_closed", n)
			}
			if sum.Failed != 3 || sum.Notified != 0 {
				t.Errorf("summary %+v, want failed 3 (nothing was sent)", sum)
			}
		})
	}
}

// claimsDown is a store whose claims (SetNX) fail while down: the read
// before them works.
type claimsDown struct {
	store.Store
	down bool // set before use
}

func (c *claimsDown) SetNX(ctx context.Context, e []store.Entry) ([]bool, error) {
	if c.down {
		return nil, fmt.Errorf("claims refused: %w", store.ErrUnavailable)
	}
	return c.Store.SetNX(ctx, e)
}

// A resolve no marker explains, of an instance of an alert that has fired
// again since (another, earlier startsAt), is a late report of the earlier
// instance — a lagging Alertmanager peer, a retried old webhook. Sending
// it must not remove the live instance from its incident and resolve
// PagerDuty while the alert fires. With flap damping the alert's history
// says it fired again since, and the resolve is not sent; without it the
// incident keeps the member with the later start (store.Member).
func TestALateUnseenResolveOfAnEarlierInstanceLeavesTheLiveOneOpen(t *testing.T) {
	for _, withFlap := range []bool{true, false} {
		t.Run(fmt.Sprintf("flap damping %v", withFlap), func(t *testing.T) {
			e := unseenEnv(t)
			s := newStandIns(t)
			cfg := flap.DefaultConfig()
			replica := func() *routing.Pipeline {
				p := s.replica(e)
				if withFlap {
					p.Flap = &cfg
				}
				return p
			}

			// The first instance fires while the store is down; its markers
			// are given up with the replica.
			p1 := replica()
			down := &flaky{Store: e.store}
			down.setDown(true)
			p1.Store = down
			p1.Deferred = dedup.NewDeferred(down, dedup.NewDeferredMetrics(prometheus.NewRegistry()), nil)
			first := tAlert("TTFTHigh", "firing", "page")
			mustProcess(t, p1, first)
			p1.Deferred.Close()

			// It fires again, a new instance two hours later, with the store
			// up: the incident opens (a second trigger, folded by PagerDuty).
			p2 := replica()
			second := webhooktest.MkAlert("firing", first.Labels, first.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(2*time.Hour))
			mustProcess(t, p2, second)
			if got := s.pd.Triggers(ttftIncident); got != 2 {
				t.Fatalf("PagerDuty triggers = %d, want the outage's and the new instance's", got)
			}
			checkLateResolve(t, s, p2, tAlert("TTFTHigh", "resolved", "page"), second)
		})
	}
}

// checkLateResolve sends late, the resolve of an earlier instance of live's
// alert, then live's own resolve: PagerDuty is resolved by the second only.
func checkLateResolve(t *testing.T, s *standIns, p *routing.Pipeline, late, live webhooktest.Alert) {
	t.Helper()
	mustProcess(t, p, late)
	if got := s.pd.Resolves(ttftIncident); got != 0 {
		t.Fatalf("PagerDuty resolves = %d while the later instance fires, want 0", got)
	}
	resolved := live
	resolved.Status, resolved.EndsAt = "resolved", webhooktest.Start.Add(3*time.Hour).Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves = %d once the live instance resolved, want 1", got)
	}
}

// The same late resolve when its firing's marker was found: the first
// instance paged with the store up, Alertmanager lost its resolve (a
// restart without its data) and the alert fired again with a new start;
// then the first instance's resolve arrives (another peer, a retried old
// webhook). Its marker says it is to be sent, and it is — as an update of
// the incident the live instance keeps open, not its resolve.
func TestALateResolveOfANotifiedEarlierInstanceLeavesTheLiveOneOpen(t *testing.T) {
	e := unseenEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	first := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, p, first)
	second := webhooktest.MkAlert("firing", first.Labels, first.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(2*time.Hour))
	mustProcess(t, p, second)
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d, want the first instance's and the new one's", got)
	}
	checkLateResolve(t, s, p, tAlert("TTFTHigh", "resolved", "page"), second)
}

// An HA Prometheus pair sends two copies of one alert; the copy with the
// later startsAt reaches Alertmanager first and is notified, then the
// earlier copy arrives and Alertmanager keeps the earliest start — and
// says nothing of it until the resolve, the first webhook carrying that
// start. No marker explains the resolve (markers are keyed by startsAt),
// and the flap history's last firing started after the resolve's start —
// but before its end: it resolves the firing that paged, and PagerDuty
// must get it (before, it was answered 200 and sent nowhere).
func TestAResolveCarryingAnEarlierStartThanItsFiringReachesPagerDuty(t *testing.T) {
	for _, withFlap := range []bool{true, false} {
		t.Run(fmt.Sprintf("flap damping %v", withFlap), func(t *testing.T) {
			e := unseenEnv(t)
			s := newStandIns(t)
			p := s.replica(e)
			if withFlap {
				cfg := flap.DefaultConfig()
				p.Flap = &cfg
			}
			base := tAlert("TTFTHigh", "firing", "page")
			late := webhooktest.MkAlert("firing", base.Labels, base.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(time.Minute))
			mustProcess(t, p, late)
			if got := s.pd.Triggers(ttftIncident); got != 1 {
				t.Fatalf("PagerDuty triggers = %d, want 1", got)
			}
			resolve := tAlert("TTFTHigh", "resolved", "page") // startsAt a minute earlier, endsAt 17 minutes after it
			sum := mustProcess(t, p, resolve)
			if got := s.pd.Resolves(ttftIncident); got != 1 {
				t.Fatalf("PagerDuty resolves = %d (summary %+v), want 1: the incident would stay open for good", got, sum)
			}
		})
	}
}
