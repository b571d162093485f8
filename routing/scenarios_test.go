package routing_test

// The fault scenarios of the dispatch core: each lost or doubled a
// notification (with a 2xx answer) before the incident state machine,
// per-integration claims and detached settling. Every one must deliver
// exactly once, or answer 5xx until it can.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// eventually polls cond (bounded), for background work such as Deferred.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true after 10s", what)
		}
		time.Sleep(10 * time.Millisecond) // poll interval, not a timing assumption
	}
}

func isRetryable(err error) bool {
	var de *alert.DeliveryError
	return errors.As(err, &de) && de.Retryable
}

// Scenario 1: a send that succeeds after the webhook's deadline (or after
// Alertmanager hung up) is confirmed all the same, so the retry is a dedup
// hit and never "being sent by another replica".
func TestScenarioSlowSuccessIsConfirmedAndNotSentAgain(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"webhook timeout passes during the send", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 2*time.Second)
		}},
		{"Alertmanager hangs up during the send", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			e := redisEnv(t, []string{srv.Addr()}, false)
			e.dedup.ClaimTTL = 20 * time.Second
			p := e.pipeline()
			ctx, cancel := tc.ctx()
			defer cancel()
			// The integration finishes its delivery after the request ended
			// (hung up, or its deadline passed), as PagerDuty does once it
			// has the event.
			e.pd.setFail(func(*alert.Notification) error {
				if _, ok := ctx.Deadline(); !ok {
					cancel()
				}
				<-ctx.Done()
				time.Sleep(20 * time.Millisecond)
				return nil
			})
			x := tAlert("TTFTHigh", "firing", "page")
			if _, err := p.Process(ctx, payload(t, x)); err != nil {
				t.Fatalf("first delivery: %v", err)
			}
			e.pd.setFail(nil)
			sum := mustProcess(t, p, x) // Alertmanager's retry or next group_interval
			if sum.Deduplicated != 1 {
				t.Errorf("retry summary %+v: want a dedup hit, not a 503 for a claim no one will confirm", sum)
			}
			if got := len(e.pd.notifications()); got != 1 {
				t.Errorf("pagerduty got %d notifications, want 1", got)
			}
			if got := metric(t, e.reg, "alertrouter_dedup_settle_errors_total", "confirm notified transitions"); got != 0 {
				t.Errorf("confirm failures = %v, want 0", got)
			}
		})
	}
}

// Scenario 2: one receiver, two integrations: PagerDuty delivers, Slack
// fails; the retry sends Slack only.
func TestScenarioPartialFanOutResendsOnlyWhatFailed(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	rec := &recorder{}
	p.Recorder = rec
	p.Receivers["pagerduty"] = append(p.Receivers["pagerduty"], routing.Integration{Name: "slack/0", Notifier: e.slack, SendResolved: true})
	e.slack.setFail(func(*alert.Notification) error { return errors.New("slack: 500") })
	x := tAlert("TTFTHigh", "firing", "page")
	if _, err := process(t, p, x); !isRetryable(err) {
		t.Fatalf("Process = %v, want a retryable error for Slack", err)
	}
	got := rec.outcomes()
	if len(got) != 2 || got["pagerduty/pagerduty/0"] != alert.DeliverySent || got["pagerduty/slack/0"] != alert.DeliveryFailed {
		t.Errorf("recorded deliveries %v, want pagerduty sent and slack failed", got)
	}
	e.slack.setFail(nil)
	mustProcess(t, p, x)
	mustProcess(t, p, x)
	if pd, sl := len(e.pd.notifications()), len(e.slack.notifications()); pd != 1 || sl != 1 {
		t.Errorf("pagerduty %d, slack %d notifications; want each exactly once", pd, sl)
	}
	if ev := e.pd.events(); len(ev) != 1 || ev[0] != "trigger llm-inference-gpu/chat/TTFT" {
		t.Errorf("pagerduty events %v, want one trigger", ev)
	}
}

// A slow PagerDuty does not delay Slack: the integrations of a receiver run
// side by side. PagerDuty's send waits until Slack's has happened; run one
// after the other, it would wait in vain.
func TestScenarioSlowPagerDutyDoesNotDelaySlack(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"] = append(p.Receivers["pagerduty"], routing.Integration{Name: "slack/0", Notifier: e.slack, SendResolved: true})
	slackSent := make(chan struct{})
	e.slack.setFail(func(*alert.Notification) error { close(slackSent); return nil })
	e.pd.setFail(func(*alert.Notification) error {
		select {
		case <-slackSent:
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("slack was not sent while pagerduty was busy")
		}
	})
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
}

// Scenario 3: A fires, A resolves, and B of the same incident fires while
// A's resolve is still being sent. B must page (a new trigger after the
// resolve), on one replica or two.
func TestScenarioJoinWhileResolvingPagesAgain(t *testing.T) {
	for _, replicas := range []int{1, 2} {
		t.Run(map[int]string{1: "one replica", 2: "two replicas"}[replicas], func(t *testing.T) {
			e := newEnv(t)
			p1 := e.pipeline()
			p2 := p1
			if replicas == 2 {
				p2 = e.pipeline()
			}
			a, b := tAlert("TTFTHigh", "firing", "page", "instance", "a"), tAlert("TTFTLow", "firing", "page", "instance", "b")
			mustProcess(t, p1, a)

			entered, release := make(chan struct{}), make(chan struct{})
			e.pd.setFail(func(n *alert.Notification) error {
				if n.IncidentResolved {
					close(entered)
					<-release
				}
				return nil
			})
			done := make(chan error, 1)
			resolveA := payload(t, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
			go func() { _, err := p1.Process(context.Background(), resolveA); done <- err }()
			<-entered
			// B's group is a different Alertmanager group (other alertname),
			// so it arrives in its own webhook while A's resolve is in flight.
			if _, err := process(t, p2, b); !isRetryable(err) {
				t.Fatalf("B during A's resolve: %v, want a retryable 5xx (the incident is being resolved)", err)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("A's resolve: %v", err)
			}
			e.pd.setFail(nil)
			mustProcess(t, p2, b) // Alertmanager's retry of B
			mustProcess(t, p2, b)
			want := []string{"trigger llm-inference-gpu/chat/TTFT", "resolve llm-inference-gpu/chat/TTFT", "trigger llm-inference-gpu/chat/TTFT"}
			if got := e.pd.events(); !slices.Equal(got, want) {
				t.Errorf("pagerduty events %v, want %v", got, want)
			}
		})
	}
}

// The exact sequence, without overlap: B fires 0.1 s after A's
// resolve completed. B must open a new incident.
func TestScenarioJoinRightAfterAResolvePages(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
	mustProcess(t, p, tAlert("TTFTLow", "firing", "page", "instance", "b"))
	mustProcess(t, p, tAlert("TTFTLow", "firing", "page", "instance", "b"))
	want := []string{"trigger llm-inference-gpu/chat/TTFT", "resolve llm-inference-gpu/chat/TTFT", "trigger llm-inference-gpu/chat/TTFT"}
	if got := e.pd.events(); !slices.Equal(got, want) {
		t.Errorf("pagerduty events %v, want %v", got, want)
	}
}

// refiring is a firing of alert a with a new startsAt.
func refiring(t *testing.T) webhooktest.Alert {
	t.Helper()
	x := tAlert("TTFTHigh", "firing", "page", "instance", "a")
	x.StartsAt = webhooktest.Start.Add(3 * time.Hour).Format(time.RFC3339Nano)
	return x
}

// Scenario 4: Redis (with persistence, so the incident's state survives) is
// restarted while A's resolve is being sent, so the closing cannot be
// confirmed. A later firing of A must page.
func TestScenarioRedisRestartedDuringAResolveNeverSwallowsTheNextPage(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	e := redisEnv(t, []string{srv.Addr()}, false)
	p := e.pipeline()
	p.Deferred = dedup.NewDeferred(e.store, nil, nil)
	t.Cleanup(p.Deferred.Close)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	e.pd.setFail(func(n *alert.Notification) error {
		if n.IncidentResolved {
			srv.Kill() // the resolve is out; the store goes away before it is confirmed
		}
		return nil
	})
	if _, err := process(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a")); err != nil {
		t.Fatalf("resolve: %v (it was delivered: 2xx expected)", err)
	}
	e.pd.setFail(nil)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := processUntilDelivered(p, []webhooktest.Alert{refiring(t)}); err != nil {
		t.Fatal(err)
	}
	want := []string{"trigger llm-inference-gpu/chat/TTFT", "resolve llm-inference-gpu/chat/TTFT", "trigger llm-inference-gpu/chat/TTFT"}
	if got := e.pd.events(); !slices.Equal(got, want) {
		t.Errorf("pagerduty events %v, want %v", got, want)
	}
}

// outageEnv is a pipeline on a real Redis behind flaky (a network outage:
// the data kept), with the writes its outages leave to Deferred.
func outageEnv(t *testing.T) (*env, *routing.Pipeline, *flaky) {
	t.Helper()
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	p := e.pipeline()
	f := &flaky{Store: e.store}
	p.Store = f
	p.Deferred = dedup.NewDeferred(f, nil, nil)
	t.Cleanup(p.Deferred.Close)
	return e, p, f
}

// Scenario 5: Redis is down when A resolves (fail open): the resolve, which
// would close the incident, waits for the store (its members cannot be
// read: another Alertmanager group's alert may keep it open), answered
// retryable; Alertmanager's retry once Redis is back delivers it, and a
// later firing of another alert of the incident pages.
func TestScenarioRedisDownDuringAResolveHoldsItUntilTheStoreAnswers(t *testing.T) {
	e, p, f := outageEnv(t)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	f.setDown(true)
	sum, err := process(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
	if err == nil || sum.Notified != 0 || sum.Failed != 1 {
		t.Fatalf("resolve with the store down: %v, summary %+v; want it held, retryable", err, sum)
	}
	if got := e.pd.events(); len(got) != 1 {
		t.Fatalf("pagerduty events %v, want no resolve while the store is down", got)
	}
	f.setDown(false)
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
	mustProcess(t, p, tAlert("TTFTLow", "firing", "page", "instance", "b"))
	want := []string{"trigger llm-inference-gpu/chat/TTFT", "resolve llm-inference-gpu/chat/TTFT", "trigger llm-inference-gpu/chat/TTFT"}
	if got := e.pd.events(); !slices.Equal(got, want) {
		t.Errorf("pagerduty events %v, want %v", got, want)
	}
}

// Scenario 5b: two Alertmanager groups feed one incident; the store is
// unreachable (its data kept: a network outage, a failover to a replica)
// when one group's alert resolves. Its resolve is held, retryable, and once
// the store answers it is an update: the other group's alert keeps the
// page (audit SENTINEL: PagerDuty was resolved while it fired, and its
// repeats were deduplicated, so nothing paged again).
func TestScenarioOneGroupsResolveDuringAnOutageNeverClosesAnothersPage(t *testing.T) {
	e, p, f := outageEnv(t)
	in := func(group string, alerts ...webhooktest.Alert) (*alert.Summary, error) {
		msg := payload(t, alerts...)
		msg.GroupKey = group
		return p.Process(context.Background(), msg)
	}
	const groupA, groupB = `{}:{alertname="A"}`, `{}:{alertname="B"}`
	if _, err := in(groupA, tAlert("TTFTHigh", "firing", "page", "instance", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := in(groupB, tAlert("TTFTHigh", "firing", "page", "instance", "b")); err != nil {
		t.Fatal(err)
	}
	f.setDown(true)
	if _, err := in(groupB, tAlert("TTFTHigh", "resolved", "page", "instance", "b")); err == nil {
		t.Fatal("group B's resolve with the store down answered 2xx; want it held (retryable)")
	}
	f.setDown(false)
	if _, err := in(groupB, tAlert("TTFTHigh", "resolved", "page", "instance", "b")); err != nil {
		t.Fatalf("group B's resolve once the store answers: %v", err)
	}
	if got := e.pd.events(); !slices.Equal(got, []string{"trigger llm-inference-gpu/chat/TTFT"}) {
		t.Fatalf("pagerduty events %v, want the page left open while group A's alert fires", got)
	}
	if _, err := in(groupA, tAlert("TTFTHigh", "resolved", "page", "instance", "a")); err != nil {
		t.Fatal(err)
	}
	if got := e.pd.events(); !slices.Equal(got, []string{"trigger llm-inference-gpu/chat/TTFT", "resolve llm-inference-gpu/chat/TTFT"}) {
		t.Errorf("pagerduty events %v, want the last alert's resolve to close it", got)
	}
}

// Scenario 7: a client that hangs up is not a store outage: no fail-open
// path, no store error counted, nothing sent, and the retry delivers once.
func TestScenarioClientHangUpIsNotAStoreOutage(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	p := e.pipeline()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := tAlert("TTFTHigh", "firing", "page")
	if _, err := p.Process(ctx, payload(t, x)); !isRetryable(err) {
		t.Fatalf("Process on a cancelled request = %v, want a retryable error", err)
	}
	if got := metric(t, e.reg, "alertrouter_dedup_store_errors_total", ""); got != 0 {
		t.Errorf("store errors = %v, want 0 for a hang-up", got)
	}
	if got := metric(t, e.reg, "alertrouter_dedup_total", "fail_open"); got != 0 {
		t.Errorf("fail_open = %v, want 0 for a hang-up", got)
	}
	if got := len(e.pd.notifications()); got != 0 {
		t.Errorf("%d notifications sent for a request that was gone", got)
	}
	mustProcess(t, p, x)
	mustProcess(t, p, x)
	if got := len(e.pd.notifications()); got != 1 {
		t.Errorf("%d notifications after the retry, want 1", got)
	}
}

// Scenario 6: Alertmanager sends no startsAt: the fingerprint alone is the
// identity, so three resends (each at another receipt time) notify once and
// the resolve is matched.
func TestScenarioMissingStartsAtDeduplicatesAndResolves(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	send := func(status string, at time.Time) {
		t.Helper()
		x := tAlert("TTFTHigh", status, "page")
		x.StartsAt = ""
		b, err := json.Marshal(webhooktest.Msg(status, x))
		if err != nil {
			t.Fatal(err)
		}
		m, err := webhook.Decode(b, at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Process(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		send("firing", receivedAt.Add(time.Duration(i)*time.Minute))
	}
	send("resolved", receivedAt.Add(5*time.Minute))
	send("resolved", receivedAt.Add(6*time.Minute))
	want := []string{"trigger llm-inference-gpu/chat/TTFT", "resolve llm-inference-gpu/chat/TTFT"}
	if got := e.pd.events(); !slices.Equal(got, want) {
		t.Errorf("pagerduty events %v, want %v", got, want)
	}
	if got := len(e.pd.notifications()); got != 2 {
		t.Errorf("%d notifications, want one firing and one resolve", got)
	}
}

// A storm of alerts of one incident sent through many webhooks and two
// replicas opens the incident once: one PagerDuty trigger.
func TestScenarioStormOpensAnIncidentOnce(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	replicas := []*routing.Pipeline{e.pipeline(), e.pipeline()}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := tAlert("TTFTHigh", "firing", "page", "instance", "node-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
			errs <- processUntilDelivered(replicas[i%2], []webhooktest.Alert{x})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := e.pd.events(); len(got) != 1 {
		t.Errorf("pagerduty events %v, want exactly one trigger for the incident", got)
	}
	// Updates of the open incident may share a send (coalescing), so count
	// alerts, not notifications: each of the 40 exactly once.
	sent := e.pd.transitions()
	if len(sent) != 40 {
		t.Errorf("%d alerts notified, want 40", len(sent))
	}
	for tr, n := range sent {
		if n != 1 {
			t.Errorf("%s notified %d times, want once", tr, n)
		}
	}
}

var _ store.Store = (*flaky)(nil)

// recorder keeps the last recorded results.
type recorder struct {
	mu      sync.Mutex
	results []*alert.Result
}

func (r *recorder) Record(_ *alert.Message, results []*alert.Result) {
	r.mu.Lock()
	r.results = results
	r.mu.Unlock()
}

// outcomes maps "receiver/integration" to the outcome of the last results.
func (r *recorder) outcomes() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for _, res := range r.results {
		for _, d := range res.Deliveries {
			out[d.Receiver+"/"+d.Integration] = d.Outcome
		}
	}
	return out
}

// deadLetters counts the notifications kept as dead letters.
type deadLetters struct {
	mu sync.Mutex
	ns []*alert.Notification
}

func (d *deadLetters) DeadLetter(n *alert.Notification, _ error) {
	d.mu.Lock()
	d.ns = append(d.ns, n)
	d.mu.Unlock()
}

func TestPermanentFailuresBecomeDeadLettersAndRetryableOnesDoNot(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	dl := &deadLetters{}
	p.DeadLetters = dl
	e.pd.setFail(func(*alert.Notification) error { return errors.New("HTTP 503") })
	if _, err := process(t, p, tAlert("TTFTHigh", "firing", "page")); !isRetryable(err) {
		t.Fatalf("retryable failure: %v", err)
	}
	if len(dl.ns) != 0 {
		t.Fatalf("%d dead letters for a retryable failure, want 0", len(dl.ns))
	}
	e.pd.setFail(func(*alert.Notification) error { return alert.Permanent(errors.New("invalid routing key")) })
	if _, err := process(t, p, tAlert("TTFTHigh", "firing", "page")); err == nil || isRetryable(err) {
		t.Fatalf("permanent failure: %v, want a non-retryable error", err)
	}
	if len(dl.ns) != 1 || dl.ns[0].Receiver != "pagerduty" || dl.ns[0].Integration != "pagerduty/0" || len(dl.ns[0].Results) != 1 {
		t.Fatalf("dead letters %+v, want the one failed notification", dl.ns)
	}
}

// Two replicas receiving overlapping payloads of one incident at once split
// the claims of its alerts between them, and each joins the incident with
// the alerts it claimed only (on one Redis node the claims and the joins go
// in one round trip, store.ClaimJoin). Whatever the split, and with the
// first send of one alert of each incident failing (its sender undoes its
// join, Alertmanager retries): the incident opens once, every alert is
// notified once, it stays open while any alert fires, and it resolves
// once.
func TestScenarioOverlappingPayloadsOnTwoReplicasOpenAndResolveOnce(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	replicas := []*routing.Pipeline{e.pipeline(), e.pipeline()}
	const rounds, n = 8, 12
	span := func(r, from, to int, status string) []webhooktest.Alert {
		var out []webhooktest.Alert
		for i := from; i < to; i++ {
			out = append(out, tAlert("TTFTHigh", status, "page", "service", fmt.Sprintf("race-%d", r), "instance", fmt.Sprintf("gpu-%02d", i)))
		}
		return out
	}
	both := func(a, b []webhooktest.Alert) {
		t.Helper()
		errs := make(chan error, 2)
		start := make(chan struct{})
		for i, alerts := range [][]webhooktest.Alert{a, b} {
			go func() {
				<-start
				errs <- processUntilDelivered(replicas[i], alerts)
			}()
		}
		close(start)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	failed := map[string]bool{}
	e.pd.setFail(func(n *alert.Notification) error {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range n.Results {
			if r.Alert.Labels["instance"] == "gpu-05" && r.Alert.Firing() && !failed[n.Incident] {
				failed[n.Incident] = true
				return errors.New("pagerduty: 503 service unavailable")
			}
		}
		return nil
	})
	events := func() map[string]int {
		out := map[string]int{}
		for _, ev := range e.pd.events() {
			out[ev]++
		}
		return out
	}
	for r := range rounds {
		both(span(r, 0, 8, "firing"), span(r, 4, n, "firing"))
	}
	got := events()
	for r := range rounds {
		if ev := fmt.Sprintf("trigger llm-inference-gpu/race-%d/TTFT", r); got[ev] != 1 {
			t.Errorf("%s sent %d times, want once (events %v)", ev, got[ev], got)
		}
	}
	if len(failed) != rounds {
		t.Errorf("%d incidents saw their failed send, want %d: the scenario did not run", len(failed), rounds)
	}
	sent := e.pd.transitions()
	if len(sent) != rounds*n {
		t.Errorf("%d alerts notified, want %d", len(sent), rounds*n)
	}
	for tr, c := range sent {
		if c != 1 {
			t.Errorf("%s notified %d times, want once", tr, c)
		}
	}
	// All but the last alert of each incident resolve, again split.
	for r := range rounds {
		both(span(r, 0, 7, "resolved"), span(r, 3, n-1, "resolved"))
	}
	for ev, c := range events() {
		if strings.HasPrefix(ev, "resolve") {
			t.Errorf("%s sent %d times while an alert of it still fires", ev, c)
		}
	}
	for r := range rounds {
		if err := processUntilDelivered(replicas[r%2], span(r, n-1, n, "resolved")); err != nil {
			t.Fatal(err)
		}
	}
	got = events()
	for r := range rounds {
		if ev := fmt.Sprintf("resolve llm-inference-gpu/race-%d/TTFT", r); got[ev] != 1 {
			t.Errorf("%s sent %d times, want once (events %v)", ev, got[ev], got)
		}
	}
}

// A notifier that panics on one notification fails that notification alone:
// the webhook is answered with a permanent failure (5xx: Alertmanager
// retries), the failure is counted and dead-lettered, the other integration
// still delivers, and the router goes on — the next webhook, once the bug is
// gone, sends what the panic did not.
func TestANotifierPanicFailsItsNotificationNotTheRouter(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	dl := &deadLetters{}
	p.DeadLetters = dl
	e.pd.setFail(func(*alert.Notification) error { panic("index out of range in a template") })
	page, ticket := tAlert("TTFTHigh", "firing", "page"), tAlert("QueueDepthHigh", "firing", "ticket")
	_, err := process(t, p, page, ticket)
	if err == nil || isRetryable(err) || !strings.Contains(err.Error(), "notifier panicked: index out of range in a template") {
		t.Fatalf("Process = %v, want a permanent failure naming the panic", err)
	}
	if got := len(e.slack.notifications()); got != 1 {
		t.Fatalf("slack got %d notifications, want the ticket despite PagerDuty's panic", got)
	}
	if got := metric(t, e.reg, "alertrouter_notifier_panics_total", "pagerduty"); got != 1 {
		t.Fatalf("alertrouter_notifier_panics_total{integration=pagerduty} = %v, want 1", got)
	}
	if len(dl.ns) != 1 || dl.ns[0].Receiver != "pagerduty" {
		t.Fatalf("dead letters %+v, want the page", dl.ns)
	}
	e.pd.setFail(nil)
	sum := mustProcess(t, p, page, ticket)
	if sum.Notified != 1 || sum.Deduplicated != 1 || len(e.pd.notifications()) != 1 {
		t.Fatalf("after the fix: summary %+v, pagerduty %d; want the page sent and the ticket deduplicated", sum, len(e.pd.notifications()))
	}
}

// An alert whose classification panics costs its analysis, not its page:
// it pages on the fallback decision, saying why, and the payload's other
// alerts are evaluated and delivered as usual — where the panic would have
// answered the whole webhook 500 on every retry.
func TestAnAlertWhoseEvaluationPanicsStillPages(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Classifier = alert.ClassifierFunc(func(a *alert.Alert) alert.Classification {
		if a.Labels["alertname"] == "Poison" {
			panic("runtime error: index out of range [3] with length 3")
		}
		return fakeClassifier.Classify(a)
	})
	poison, ticket := tAlert("Poison", "firing", "ticket"), tAlert("QueueDepthHigh", "firing", "ticket")
	sum := mustProcess(t, p, poison, ticket)
	if sum.Notified != 2 {
		t.Fatalf("summary %+v, want both alerts notified", sum)
	}
	r := only(t, e.pd)
	if r.Alert.Labels["alertname"] != "Poison" || r.Decision.Action != alert.ActionPage || r.Decision.Policy != routing.PolicyEvaluationFailed ||
		len(r.Decision.Reasons) != 1 || !strings.Contains(r.Decision.Reasons[0], "index out of range") {
		t.Fatalf("pagerduty got %s with %+v, want Poison paged on the fallback decision naming the panic", r.Alert.Labels["alertname"], r.Decision)
	}
	if s := only(t, e.slack); s.Alert.Labels["alertname"] != "QueueDepthHigh" || s.Decision.Action != alert.ActionTicket {
		t.Fatalf("slack got %s %+v, want the other alert's ticket", s.Alert.Labels["alertname"], s.Decision)
	}
	if got := metric(t, e.reg, "alertrouter_evaluation_panics_total", ""); got != 1 {
		t.Fatalf("alertrouter_evaluation_panics_total = %v, want 1", got)
	}
	if again := mustProcess(t, p, poison, ticket); again.Deduplicated != 2 {
		t.Fatalf("repeat summary %+v, want both deduplicated (the fallback decision is stable)", again)
	}

	// A root route whose receiver is a blackhole: the fallback sends nowhere
	// either, but says so — muted and counted, not silently lost.
	hole := &routing.Route{Receiver: "null"}
	if err := hole.Compile(map[string]bool{"null": true}); err != nil {
		t.Fatal(err)
	}
	hole.SetBlackholes(map[string]bool{"null": true})
	p.Routes, p.Receivers = hole, map[string][]routing.Integration{"null": nil}
	p.Store = store.NewMemory()
	res := p.Evaluate(payload(t, tAlert("Poison", "firing", "ticket")))
	if r := res[0]; r.Decision.Policy != routing.PolicyEvaluationFailed || len(r.Receivers) != 0 || !strings.Contains(r.MutedBy, "blackhole") {
		t.Fatalf("a poisoned alert under a blackhole root: policy %s receivers %v muted_by %q; want the fallback, no receiver, muted", r.Decision.Policy, r.Receivers, r.MutedBy)
	}
	if sum := mustProcess(t, p, tAlert("Poison", "firing", "ticket")); sum.Suppressed != 1 || sum.Notified != 0 {
		t.Fatalf("summary %+v under a blackhole root, want the poisoned alert counted suppressed", sum)
	}
}

// Scenario 5c: with the store unreachable, a webhook brings a new firing X
// and the whole resolve of incident Y. Y's resolve waits for the store
// (503), so Alertmanager retries the whole webhook: each retry sent X again
// (a review: 25 PagerDuty triggers and 29 Slack parents for one alert in a
// 40-second outage), and the first retry after the store answered did too,
// before the queued markers reached it. X is sent once: what this replica
// delivered during the outage is known to it (dedup.Deferred.Pending).
func TestScenarioRetriesOfAHeldResolveSendTheirFiringsOnce(t *testing.T) {
	e, p, f := outageEnv(t)
	y := tAlert("TTFTHigh", "firing", "page", "instance", "y")
	mustProcess(t, p, y)
	f.setDown(true)
	x := tAlert("ITLHigh", "firing", "page", "instance", "x", "kpi", "ITL")
	yResolved := tAlert("TTFTHigh", "resolved", "page", "instance", "y")
	for i := range 5 {
		if _, err := process(t, p, x, yResolved); err == nil {
			t.Fatalf("retry %d with the store down answered 2xx; want Y's resolve held", i)
		}
	}
	f.setDown(false)
	mustProcess(t, p, x, yResolved) // before the queued markers are applied
	want := []string{"trigger llm-inference-gpu/chat/TTFT", "trigger llm-inference-gpu/chat/ITL", "resolve llm-inference-gpu/chat/TTFT"}
	if got := e.pd.events(); !slices.Equal(got, want) {
		t.Errorf("pagerduty events %v, want %v", got, want)
	}
}
