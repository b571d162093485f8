package routing_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// The fakes below are driven by labels: sector and kpi classify, test_action
// (page|ticket|none) and test_tier decide, slo names the SLO identity.

var fakeClassifier = alert.ClassifierFunc(func(a *alert.Alert) alert.Classification {
	c := alert.Classification{Sector: alert.Unknown, IncidentClass: "latency"}
	if s := a.Labels["sector"]; s != "" {
		c.Sector, c.Confidence = s, 1
	}
	if k := a.Labels["kpi"]; k != "" {
		c.KPIs = []alert.KPI{{ID: k}}
	}
	return c
})

var fakeDecider = alert.DeciderFunc(func(a *alert.Alert, _ *alert.Classification, _ time.Time) alert.Decision {
	act := alert.Action(a.Labels["test_action"])
	if v := a.Annotations["test_action"]; v != "" {
		act = alert.Action(v) // the same alert, decided otherwise now
	}
	if act == "" {
		act = alert.ActionNone
	}
	tier := a.Labels["test_tier"]
	if v := a.Annotations["test_tier"]; v != "" {
		tier = v // the same alert in another tier now
	}
	if tier == "" {
		tier = string(act)
	}
	return alert.Decision{Action: act, Policy: "test", Tier: tier, SLO: a.Labels["slo"]}
})

// clock is an injectable time source shared by a pipeline and its store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// sink is a counting Notifier; fail, when set, decides each delivery.
type sink struct {
	mu   sync.Mutex
	sent []*alert.Notification
	fail func(n *alert.Notification) error
}

func (s *sink) Notify(_ context.Context, n *alert.Notification) error {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		if err := fail(n); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.sent = append(s.sent, n)
	s.mu.Unlock()
	return nil
}

func (s *sink) setFail(f func(n *alert.Notification) error) {
	s.mu.Lock()
	s.fail = f
	s.mu.Unlock()
}

func (s *sink) notifications() []*alert.Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*alert.Notification(nil), s.sent...)
}

// events returns what a PagerDuty-like integration would have sent: a
// trigger for each notification that opens its incident and a resolve for
// each that closes it, as "trigger <incident>" / "resolve <incident>".
func (s *sink) events() []string {
	var out []string
	for _, n := range s.notifications() {
		switch {
		case n.IncidentResolved:
			out = append(out, "resolve "+n.Incident)
		case n.Opening:
			out = append(out, "trigger "+n.Incident)
		}
	}
	return out
}

// transitions counts the alerts sent, by "fingerprint status kind".
func (s *sink) transitions() map[string]int {
	out := map[string]int{}
	for _, n := range s.notifications() {
		for _, r := range n.Results {
			out[r.Alert.Fingerprint+" "+r.Alert.Status+" "+string(n.Kind)]++
		}
	}
	return out
}

// env is one router deployment under test: receivers "pagerduty" (pages)
// and "slack" (everything else), a shared store and clock.
type env struct {
	t      *testing.T
	clock  *clock
	store  store.Store
	pd     *sink
	slack  *sink
	reg    *prometheus.Registry
	dedup  routing.DedupOptions
	routes string
}

const testRoutes = `
receiver: slack
routes:
  - receiver: pagerduty
    matchers: ['decision="page"']
`

// pagesToBothRoutes sends pages to PagerDuty and Slack, tickets to Slack.
const pagesToBothRoutes = "receiver: slack\nroutes:\n  - receiver: pagerduty\n    matchers: ['decision=\"page\"']\n    continue: true\n  - receiver: slack\n"

func newEnv(t *testing.T) *env {
	e := &env{t: t, clock: newClock(), pd: &sink{}, slack: &sink{}, routes: testRoutes,
		dedup: routing.DedupOptions{
			ClaimTTL: time.Minute, NotifiedTTL: 7 * 24 * time.Hour, RepeatInterval: 4 * time.Hour,
			InFlightWait: 50 * time.Millisecond, KeyPrefix: "test:",
		}}
	e.store = store.NewMemory(store.WithClock(e.clock.Now))
	return e
}

// pipeline builds one replica; every call returns a new Pipeline sharing
// the env's store, clock and notifiers, with its own metrics.
func (e *env) pipeline() *routing.Pipeline {
	e.t.Helper()
	var r routing.Route
	if err := yaml.UnmarshalStrict([]byte(e.routes), &r); err != nil {
		e.t.Fatal(err)
	}
	if err := r.Compile(map[string]bool{"pagerduty": true, "slack": true}); err != nil {
		e.t.Fatal(err)
	}
	e.reg = prometheus.NewRegistry()
	return &routing.Pipeline{
		Classifier: fakeClassifier,
		Decider:    fakeDecider,
		Routes:     &r,
		Receivers: map[string][]routing.Integration{
			"pagerduty": {{Name: "pagerduty/0", Notifier: e.pd, SendResolved: true}},
			"slack":     {{Name: "slack/0", Notifier: e.slack, SendResolved: true}},
		},
		Store:   e.store,
		Dedup:   e.dedup,
		Metrics: routing.NewMetrics(e.reg),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:     e.clock.Now,
	}
}

// alert is a firing or resolved alert of service "chat" in sector
// llm-inference-gpu (KPI TTFT): one incident unless labels say otherwise.
func tAlert(name, status, action string, kv ...string) webhooktest.Alert {
	labels := map[string]string{
		"alertname": name, "service": "chat", "job": "vllm", "instance": "gpu-node-001:8000",
		"sector": "llm-inference-gpu", "kpi": "TTFT", "test_action": action,
	}
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	return webhooktest.MkAlert(status, labels, map[string]string{"summary": name}, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start)
}

// payload decodes alerts as one Alertmanager webhook.
var receivedAt = time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)

func payload(t testing.TB, alerts ...webhooktest.Alert) *alert.Message {
	t.Helper()
	b, err := json.Marshal(webhooktest.Msg("firing", alerts...))
	if err != nil {
		t.Fatal(err)
	}
	m, err := webhook.Decode(b, receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func process(t *testing.T, p *routing.Pipeline, alerts ...webhooktest.Alert) (*alert.Summary, error) {
	t.Helper()
	return p.Process(context.Background(), payload(t, alerts...))
}

func mustProcess(t *testing.T, p *routing.Pipeline, alerts ...webhooktest.Alert) *alert.Summary {
	t.Helper()
	sum, err := process(t, p, alerts...)
	if err != nil {
		t.Fatalf("Process: %v (summary %+v)", err, sum)
	}
	return sum
}

// metric returns the value of a counter or gauge of reg ("" label value
// matches an unlabelled metric).
func metric(t *testing.T, reg *prometheus.Registry, name, labelValue string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelValue != "" && (len(m.GetLabel()) == 0 || m.GetLabel()[0].GetValue() != labelValue) {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s{%s} not found", name, labelValue)
	return 0
}

func TestPipelineNotifiesTheSamePayloadOnce(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	a := tAlert("TTFTHigh", "firing", "page")
	first := mustProcess(t, p, a)
	second := mustProcess(t, p, a)
	if got := len(e.pd.notifications()); got != 1 {
		t.Fatalf("pagerduty got %d notifications, want 1", got)
	}
	if n := e.pd.notifications()[0]; n.Kind != alert.KindFiring || n.Action != alert.ActionPage || n.Incident == "" || n.Data.Receiver != "pagerduty" {
		t.Errorf("notification = %+v", n)
	}
	if first.Notified != 1 || second.Notified != 0 || second.Deduplicated != 1 {
		t.Errorf("summaries %+v then %+v; want notified 1, then deduplicated 1", first, second)
	}
	if got := metric(t, e.reg, "alertrouter_dedup_total", "hit"); got != 1 {
		t.Errorf("dedup hits = %v, want 1", got)
	}
	if len(e.slack.notifications()) != 0 {
		t.Errorf("slack got %d notifications, want none (pages route to pagerduty)", len(e.slack.notifications()))
	}
}

func TestPipelineResolvesAnIncidentWhenItsLastNotifiedAlertResolves(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	a, b := tAlert("TTFTHigh", "firing", "page", "instance", "a"), tAlert("TTFTHigh", "firing", "page", "instance", "b")
	mustProcess(t, p, a, b)

	ra := tAlert("TTFTHigh", "resolved", "page", "instance", "a")
	mustProcess(t, p, ra, b)
	ns := e.pd.notifications()
	if len(ns) != 2 || ns[1].Kind != alert.KindResolved || len(ns[1].Results) != 1 {
		t.Fatalf("after a resolves: %d notifications, last %+v; want one resolve of one alert", len(ns), ns[len(ns)-1])
	}
	if ns[1].IncidentResolved {
		t.Error("IncidentResolved = true while b still fires")
	}

	rb := tAlert("TTFTHigh", "resolved", "page", "instance", "b")
	mustProcess(t, p, ra, rb)
	mustProcess(t, p, ra, rb) // Alertmanager repeats resolved alerts too.
	ns = e.pd.notifications()
	if len(ns) != 3 || ns[2].Kind != alert.KindResolved || !ns[2].IncidentResolved {
		t.Fatalf("after b resolves: %d notifications; want a third, resolving the incident", len(ns))
	}
	if ns[2].Results[0].Alert.Fingerprint != webhooktest.Fingerprint(rb.Labels) {
		t.Errorf("resolve carries %s, want b", ns[2].Results[0].Alert.Fingerprint)
	}
}

func TestPipelineResolvesEveryAlertOfAnIncidentInOneNotification(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"), tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"), tAlert("TTFTHigh", "resolved", "page", "instance", "b"))
	ns := e.pd.notifications()
	if len(ns) != 2 || len(ns[1].Results) != 2 || !ns[1].IncidentResolved || ns[1].Data.Status != "resolved" {
		t.Fatalf("got %d notifications; want the second to resolve both alerts and the incident", len(ns))
	}
}

func TestPipelineNeverSendsTheResolveOfAFiringItDidNotNotify(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	// The store has held its state since before the alert started: no
	// marker means no notification.
	if err := dedup.MarkEpoch(t.Context(), e.store, e.dedup.KeyPrefix, webhooktest.Start.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	sum := mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page"))
	if n := len(e.pd.notifications()) + len(e.slack.notifications()); n != 0 {
		t.Errorf("%d notifications sent for a resolve whose firing was never notified", n)
	}
	if sum.Notified != 0 {
		t.Errorf("summary %+v, want nothing notified", sum)
	}
	if got := metric(t, e.reg, "alertrouter_dedup_total", "resolved_unseen"); got != 1 {
		t.Errorf("resolved_unseen = %v, want 1", got)
	}
}

// The store restarts empty (Redis without persistence, a failover to a
// replica that had nothing) between a page and its resolve: the resolve
// finds no marker, but the alert started before the store's state began,
// so the marker may have been lost — the resolve goes where the alert is
// routed, and the PagerDuty incident does not stay open for good (before,
// it was answered 2xx and dropped). Once sent it is remembered, so
// Alertmanager's repeat of it sends nothing.
func TestPipelineSendsTheResolveWhoseMarkerTheStoreLost(t *testing.T) {
	e := newEnv(t)
	checkResolveAfterTheStoreLostItsState(t, e, func() {
		e.store = store.NewMemory(store.WithClock(e.clock.Now))
	})
}

// After the store lost its state, a resolve whose incident still has a
// firing alert in the same payload does not resolve the incident.
func TestPipelineAPartialResolveAfterTheStoreLostItsStateLeavesTheIncidentOpen(t *testing.T) {
	e := newEnv(t)
	a := tAlert("TTFTHigh", "firing", "page", "instance", "a")
	b := tAlert("TTFTHigh", "firing", "page", "instance", "b")
	mustProcess(t, e.pipeline(), a, b)
	e.clock.Advance(10 * time.Minute)
	e.store = store.NewMemory(store.WithClock(e.clock.Now)) // restarted empty
	mustProcess(t, e.pipeline(), tAlert("TTFTHigh", "resolved", "page", "instance", "a"), b)
	for _, n := range e.pd.notifications() {
		if n.IncidentResolved {
			t.Fatalf("the incident was resolved while alert b still fires in the same payload: %+v", n)
		}
	}
}

// checkResolveAfterTheStoreLostItsState pages, empties the store with
// restart, then resolves: the resolve goes out once.
func checkResolveAfterTheStoreLostItsState(t *testing.T, e *env, restart func()) {
	t.Helper()
	mustProcess(t, e.pipeline(), tAlert("TTFTHigh", "firing", "page"))
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("%d pages, want 1", n)
	}
	e.clock.Advance(10 * time.Minute)
	restart()
	p := e.pipeline()
	sum := mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page"))
	ns := e.pd.notifications()
	if len(ns) != 2 || ns[1].Kind != alert.KindResolved || !ns[1].IncidentResolved || sum.Notified == 0 {
		t.Fatalf("after the store lost its state: %d PagerDuty notifications (summary %+v), want the resolve sent", len(ns), sum)
	}
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page"))
	if n := len(e.pd.notifications()); n != 2 {
		t.Fatalf("Alertmanager's repeat of the resolve: %d PagerDuty notifications, want still 2", n)
	}
}

func TestPipelineKeepsAnIncidentOpenWhileAnAlertOfThisPayloadStartsFiring(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"), tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	for _, n := range e.pd.notifications() {
		if n.Kind == alert.KindResolved && n.IncidentResolved {
			t.Error("the resolve of a claims the incident resolved while b starts firing in the same payload")
		}
	}
	if got := e.pd.transitions()[webhooktest.Fingerprint(tAlert("TTFTHigh", "firing", "page", "instance", "b").Labels)+" firing firing"]; got != 1 {
		t.Errorf("b notified %d times, want 1", got)
	}
}

func TestPipelineResolvesAnIncidentPerReceiver(t *testing.T) {
	// A page (to pagerduty) and a ticket (to slack) of one incident: when
	// the page resolves, PagerDuty's incident resolves although the ticket
	// still fires in Slack.
	e := newEnv(t)
	p := e.pipeline()
	pg, tk := tAlert("TTFTHigh", "firing", "page", "instance", "a"), tAlert("TTFTHigh", "firing", "ticket", "instance", "b")
	mustProcess(t, p, pg, tk)
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"), tk)
	ns := e.pd.notifications()
	if len(ns) != 2 || ns[1].Kind != alert.KindResolved || !ns[1].IncidentResolved {
		t.Fatalf("pagerduty notifications %d; want the second to resolve its incident", len(ns))
	}
	if got := len(e.slack.notifications()); got != 1 {
		t.Errorf("slack got %d notifications, want only the ticket's firing", got)
	}
}

func TestPipelineNotifiesATierChange(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "test_tier", "warn"))
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "test_tier", "critical"))
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "test_tier", "critical"))
	if s, pd := len(e.slack.notifications()), len(e.pd.notifications()); s != 1 || pd != 1 {
		t.Fatalf("slack %d, pagerduty %d notifications; want the ticket once, then the page once", s, pd)
	}
	if n := e.pd.notifications()[0]; n.Kind != alert.KindFiring || n.Action != alert.ActionPage {
		t.Errorf("page notification %+v", n)
	}
}

func TestPipelineRemindsOnceAfterTheRepeatIntervalWhateverTheReplicas(t *testing.T) {
	e := newEnv(t)
	a, b := e.pipeline(), e.pipeline()
	x := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, a, x)

	e.clock.Advance(4*time.Hour - time.Second)
	mustProcess(t, a, x)
	mustProcess(t, b, x)
	if got := len(e.pd.notifications()); got != 1 {
		t.Fatalf("%d notifications before the repeat interval, want 1", got)
	}

	e.clock.Advance(time.Second)
	mustProcess(t, a, x)
	mustProcess(t, b, x)
	ns := e.pd.notifications()
	if len(ns) != 2 || ns[1].Kind != alert.KindReminder {
		t.Fatalf("%d notifications at the repeat interval; want one reminder", len(ns))
	}

	e.clock.Advance(time.Hour)
	mustProcess(t, b, x)
	if got := len(e.pd.notifications()); got != 2 {
		t.Errorf("%d notifications an hour after the reminder, want still 2", got)
	}
	e.clock.Advance(3 * time.Hour)
	mustProcess(t, b, x)
	if ns := e.pd.notifications(); len(ns) != 3 || ns[2].Kind != alert.KindReminder {
		t.Errorf("%d notifications after the second interval, want a second reminder", len(ns))
	}
}

// A ticket whose alert now pages reaches its integrations marked
// Escalated (Slack redraws the parent, whose header said the ticket); a
// first page is no escalation.
func TestPipelineMarksATicketThatNowPagesAsEscalated(t *testing.T) {
	e := newEnv(t)
	// Pages are mirrored to Slack, where the ticket was posted.
	e.routes = pagesToBothRoutes
	p := e.pipeline()
	x := tAlert("TTFTHigh", "firing", "page")
	x.Annotations["test_action"] = "ticket"
	mustProcess(t, p, x)
	x.Annotations["test_action"] = "page"
	mustProcess(t, p, x)
	ns := e.slack.notifications()
	if len(ns) != 2 || ns[0].Escalated || !ns[1].Escalated || ns[1].Action != alert.ActionPage {
		t.Fatalf("Slack notifications %d, want the ticket and then the page marked Escalated", len(ns))
	}
	if pd := e.pd.notifications(); len(pd) != 1 || pd[0].Escalated {
		t.Fatalf("PagerDuty notifications %d: want one page, not an escalation there (it never heard of the ticket)", len(pd))
	}
}

// A page joining a ticket's incident reaches Slack with the webhook's
// alerts: the incident's earlier ticket, which Alertmanager sent again with
// it, is what Slack's redrawn parent lists beside the page
// (alert.Notification.WithStillFiring; an audit: the parent listing it was
// redrawn, and it was shown nowhere).
func TestAnUpdateCarriesTheIncidentsEarlierAlertsStillFiring(t *testing.T) {
	e := newEnv(t)
	e.routes = pagesToBothRoutes
	p := e.pipeline()
	ticket := tAlert("TTFTHigh", "firing", "ticket")
	page := tAlert("TTFTHigh", "firing", "page", "instance", "gpu-node-002:8000")
	other := tAlert("TTFTHigh", "firing", "ticket", "service", "search")
	mustProcess(t, p, ticket)
	mustProcess(t, p, ticket, page, other)
	ns := e.slack.notifications()
	var update *alert.Notification
	for _, n := range ns {
		if !n.Opening && n.Action == alert.ActionPage {
			update = n
		}
	}
	if update == nil {
		t.Fatalf("Slack notifications %d: no update of the page joining the ticket's incident", len(ns))
	}
	drawn := update.WithStillFiring()
	var fps []string
	for _, r := range drawn.Results {
		fps = append(fps, r.Alert.Labels["instance"]+"/"+r.Alert.Labels["service"])
	}
	if want := []string{"gpu-node-002:8000/chat", "gpu-node-001:8000/chat"}; !slices.Equal(fps, want) {
		t.Fatalf("the update drawn with the incident's alerts still firing lists %v, want %v (not another incident's)", fps, want)
	}
	if len(drawn.Data.Alerts) != 2 || len(update.Data.Alerts) != 1 {
		t.Fatalf("template data: drawn %d alerts, update %d; want 2 and 1", len(drawn.Data.Alerts), len(update.Data.Alerts))
	}
}

// A lagging Alertmanager peer's copy of a ticket's alert that resolved,
// arriving with the page that joins the incident, is sent nowhere
// (staleRefires): the redrawn parent does not list it as firing either
// (REVIEWV: "3 firing", the resolved alert listed "firing · ticket").
func TestAnUpdateDrawsNoStaleCopyAsStillFiring(t *testing.T) {
	e := newEnv(t)
	e.routes = pagesToBothRoutes
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	t1 := tAlert("TTFTHigh", "firing", "ticket")
	t2 := tAlert("TTFTHigh", "firing", "ticket", "instance", "gpu-node-003:8000")
	page := tAlert("TTFTHigh", "firing", "page", "instance", "gpu-node-002:8000")
	held := map[string]bool{t1.Fingerprint: true, page.Fingerprint: true}
	p.FiringAlerts = func(context.Context, string) (map[string]bool, error) { return held, nil }
	mustProcess(t, p, t1, t2)
	e.clock.Advance(time.Minute)
	t2r := t2
	t2r.Status, t2r.EndsAt = "resolved", e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, t1, t2r)
	e.clock.Advance(time.Minute)
	mustProcess(t, p, t1, t2, page)
	var update *alert.Notification
	for _, n := range e.slack.notifications() {
		if !n.Opening && n.Action == alert.ActionPage {
			update = n
		}
	}
	if update == nil {
		t.Fatal("no Slack update of the page joining the ticket's incident")
	}
	var drawn []string
	for _, r := range update.WithStillFiring().Results {
		drawn = append(drawn, r.Alert.Labels["instance"])
	}
	if want := []string{"gpu-node-002:8000", "gpu-node-001:8000"}; !slices.Equal(drawn, want) {
		t.Fatalf("the redraw lists %v as firing, want %v (not the stale copy of gpu-node-003's resolved firing)", drawn, want)
	}
}

// A tier that flips back (ticket → page → ticket → page on the same
// labels) is sent each time, on one replica, without waiting on the claim
// the first flip left (before: 503 "another replica" for claim_ttl).
func TestPipelineATierFlippingBackIsSentAtOnce(t *testing.T) {
	e := newEnv(t)
	// Pages mirrored to Slack: both tiers go to one integration.
	e.routes = pagesToBothRoutes
	p := e.pipeline()
	x := tAlert("TTFTHigh", "firing", "page")
	for _, action := range []string{"ticket", "page", "ticket", "page"} {
		x.Annotations["test_action"] = action
		mustProcess(t, p, x)
		e.clock.Advance(time.Second)
	}
}

// The resolve of an alert decided none, or without a startsAt, is not
// taken for one whose marker the store lost: nothing is sent.
func TestPipelineSendsNoResolveForAnAlertDecidedNone(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	x := tAlert("InfoOnly", "firing", "none")
	mustProcess(t, p, x)
	e.clock.Advance(time.Minute)
	sum := mustProcess(t, p, tAlert("InfoOnly", "resolved", "none"))
	if n := len(e.pd.notifications()) + len(e.slack.notifications()); n != 0 || sum.Notified != 0 {
		t.Fatalf("%d notifications (summary %+v) for an alert decided none", n, sum)
	}
}

// An incident whose alerts arrive in several Alertmanager groups (each
// repeating on its own timer) gets one reminder per interval, not one per
// group: the reminder is claimed per incident and integration for the
// repeat interval, and a reminder that finds it taken is a dedup hit, not
// a wait. The next interval reminds again, once.
func TestPipelineRemindsEachIncidentOncePerInterval(t *testing.T) {
	e := newEnv(t)
	a, b := e.pipeline(), e.pipeline()
	var alerts []webhooktest.Alert
	for i := range 6 {
		alerts = append(alerts, tAlert("TTFTHigh", "firing", "page", "instance", fmt.Sprintf("gpu-%d", i)))
	}
	for _, x := range alerts {
		mustProcess(t, a, x) // six groups, one alert each
	}
	reminders := func() int {
		n := 0
		for _, no := range e.pd.notifications() {
			if no.Kind == alert.KindReminder {
				n++
			}
		}
		return n
	}
	e.clock.Advance(4 * time.Hour)
	for i, x := range alerts {
		p := a
		if i%2 == 1 {
			p = b
		}
		sum := mustProcess(t, p, x) // each group repeats, a few seconds apart
		if sum.Failed != 0 {
			t.Fatalf("group %d's repeat: %+v, want no failure", i, sum)
		}
		e.clock.Advance(3 * time.Second)
	}
	if n := reminders(); n != 1 {
		t.Fatalf("%d reminders for one incident in one interval, want 1", n)
	}
	e.clock.Advance(4 * time.Hour)
	for _, x := range alerts {
		mustProcess(t, b, x)
	}
	if n := reminders(); n != 2 {
		t.Fatalf("%d reminders after the second interval, want 2", n)
	}
}

// An alert whose incident key changed while it fired (an upgrade, a new
// grouping or classification) is reminded in, and resolves, the incident
// it was notified in: moved to the new key by its reminder, the old
// incident — open in PagerDuty — never got its resolve, and the reminder
// opened (paged) a second one.
func TestAReminderStaysInTheIncidentItsAlertWasNotifiedIn(t *testing.T) {
	e := newEnv(t)
	x := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, e.pipeline(), x)
	opened := e.pd.notifications()
	if len(opened) != 1 {
		t.Fatalf("%d PagerDuty notifications for the opening, want 1", len(opened))
	}
	old := opened[0].Incident
	p := e.pipeline()
	p.GroupBy = []string{"service"} // the alert's incident key is another now
	e.clock.Advance(5 * time.Hour)
	mustProcess(t, p, x)
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page"))
	var got []string
	for _, n := range e.pd.notifications()[1:] {
		got = append(got, string(n.Kind)+" "+n.Incident)
		if n.Opening {
			t.Errorf("%s of %s opened an incident: want the reminder and resolve of %s", n.Kind, n.Incident, old)
		}
	}
	if want := []string{"reminder " + old, "resolved " + old}; !slices.Equal(got, want) {
		t.Errorf("PagerDuty got %q, want %q", got, want)
	}
}

// An alert whose decision tier changes (a burn rate falling from the fast
// to the slow page window) after its incident key changed (a reload of
// incidents.group_by) is notified in the incident it was notified in, as
// its reminders and its resolve are: sent to the new key, the tier change
// opened (paged) a second incident, and the first — whose member never
// left it — was never resolved in PagerDuty.
func TestATierChangeStaysInTheIncidentItsAlertWasNotifiedIn(t *testing.T) {
	e := newEnv(t)
	x := tAlert("TTFTHigh", "firing", "page")
	x.Annotations["test_tier"] = "1h/5m"
	mustProcess(t, e.pipeline(), x)
	opened := e.pd.notifications()
	if len(opened) != 1 {
		t.Fatalf("%d PagerDuty notifications for the opening, want 1", len(opened))
	}
	old := opened[0].Incident
	p := e.pipeline()
	p.GroupBy = []string{"service", "instance"} // the alert's incident key is another now
	x.Annotations["test_tier"] = "6h/30m"
	mustProcess(t, p, x)
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page"))
	ns := e.pd.notifications()[1:]
	for _, n := range ns {
		if n.Incident != old || n.Opening {
			t.Errorf("%s of %s (opening %v): want it in %s, opening nothing", n.Kind, n.Incident, n.Opening, old)
		}
	}
	if len(ns) == 0 || !ns[len(ns)-1].IncidentResolved || ns[len(ns)-1].Incident != old {
		t.Errorf("PagerDuty got %d notifications after the opening; want the last to resolve %s", len(ns), old)
	}
}

// An alert whose group never reminds first (another group of its incident
// always does) keeps its marker past notified_ttl: the reminder it skips
// refreshes the marker a sent reminder would have rewritten, so the alert
// is not sent again as new once the marker's TTL runs out.
func TestPipelineASkippedReminderKeepsItsAlertsMarker(t *testing.T) {
	e := newEnv(t)
	e.dedup.NotifiedTTL = 10 * time.Hour // a few repeat intervals (4h)
	p := e.pipeline()
	first := tAlert("TTFTHigh", "firing", "page", "instance", "gpu-0")
	second := tAlert("TTFTHigh", "firing", "page", "instance", "gpu-1")
	mustProcess(t, p, first) // two groups, one alert each
	mustProcess(t, p, second)
	firings := func() int {
		n := 0
		for _, no := range append(e.pd.notifications(), e.slack.notifications()...) {
			if no.Kind == alert.KindFiring {
				n++
			}
		}
		return n
	}
	opened := firings()
	for round := range 5 { // 20h of repeats, twice notified_ttl
		e.clock.Advance(4 * time.Hour)
		mustProcess(t, p, first) // reminds the incident
		e.clock.Advance(3 * time.Second)
		if sum := mustProcess(t, p, second); sum.Notified != 0 {
			t.Fatalf("round %d: the second group's repeat notified %d, want a deduplicated reminder", round, sum.Notified)
		}
	}
	if n := firings(); n != opened {
		t.Errorf("%d firing notifications after 20h of repeats, want the %d of the opening: an alert was sent again as new", n, opened)
	}
}

func TestPipelineReleasesTheClaimOfAFailedNotificationSoTheRetrySendsIt(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	e.pd.setFail(func(*alert.Notification) error { return errors.New("pagerduty: 503 Service Unavailable") })
	x := tAlert("TTFTHigh", "firing", "page")
	sum, err := process(t, p, x)
	var de *alert.DeliveryError
	if !errors.As(err, &de) || !de.Retryable {
		t.Fatalf("Process error = %v, want a retryable *alert.DeliveryError", err)
	}
	if sum.Failed != 1 || len(sum.Errors) != 1 {
		t.Errorf("summary %+v, want one failure named", sum)
	}
	if got := metric(t, e.reg, "alertrouter_dedup_total", "released"); got != 1 {
		t.Errorf("released = %v, want 1", got)
	}

	e.pd.setFail(nil)
	mustProcess(t, p, x) // Alertmanager's retry.
	mustProcess(t, p, x)
	if got := len(e.pd.notifications()); got != 1 {
		t.Errorf("%d notifications after the retry, want exactly 1", got)
	}
}

func TestPipelineReportsPermanentFailuresAsNotRetryable(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	e.pd.setFail(func(*alert.Notification) error { return alert.Permanent(errors.New("invalid routing key")) })
	_, err := process(t, p, tAlert("TTFTHigh", "firing", "page"))
	var de *alert.DeliveryError
	if !errors.As(err, &de) || de.Retryable {
		t.Fatalf("Process error = %#v, want *alert.DeliveryError{Retryable: false}", err)
	}
}

func TestPipelineSuppressesTicketsOfAPagingSLO(t *testing.T) {
	page := tAlert("ErrorBudgetBurn", "firing", "page", "slo", "gateway-availability", "long", "1h")
	ticket := tAlert("ErrorBudgetBurn", "firing", "ticket", "slo", "gateway-availability", "long", "3d")
	otherTicket := tAlert("ErrorBudgetBurn", "firing", "ticket", "slo", "gateway-latency", "long", "3d")

	t.Run("within one payload", func(t *testing.T) {
		e := newEnv(t)
		sum := mustProcess(t, e.pipeline(), page, ticket, otherTicket)
		if sum.Suppressed != 1 || sum.Notified != 2 {
			t.Errorf("summary %+v, want 1 suppressed, 2 notified", sum)
		}
		if tr := e.slack.transitions(); tr[webhooktest.Fingerprint(ticket.Labels)+" firing firing"] != 0 || tr[webhooktest.Fingerprint(otherTicket.Labels)+" firing firing"] != 1 {
			t.Errorf("slack transitions %v: want the other SLO's ticket only", tr)
		}
	})
	t.Run("across payloads and replicas", func(t *testing.T) {
		e := newEnv(t)
		mustProcess(t, e.pipeline(), page)
		sum := mustProcess(t, e.pipeline(), ticket)
		if sum.Suppressed != 1 || len(e.slack.notifications()) != 0 {
			t.Errorf("summary %+v, slack %d; want the ticket suppressed", sum, len(e.slack.notifications()))
		}
		// Once the page resolves, the ticket is a problem of its own.
		mustProcess(t, e.pipeline(), tAlert("ErrorBudgetBurn", "resolved", "page", "slo", "gateway-availability", "long", "1h"))
		sum = mustProcess(t, e.pipeline(), ticket)
		if sum.Suppressed != 0 || len(e.slack.notifications()) != 1 {
			t.Errorf("after the page resolved: summary %+v, slack %d; want the ticket notified", sum, len(e.slack.notifications()))
		}
	})
}

// A page whose resolve is decided under another SLO identity than its
// firing (an upgrade that changed the identity: a rule over Sloth's info
// series has none now) is still forgotten by the SLO it paged as: its
// member stayed in that SLO's page set for days, suppressing every ticket
// of the SLO (answered 2xx, sent nothing). The marker's incident names it.
func TestAResolveUnderAnotherSLOIdentityClearsThePageItPagedAs(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	mustProcess(t, p, tAlert("ErrorBudgetBurn", "firing", "page", "slo", "gateway-availability", "long", "1h"))
	// The new build decides the same alert with no SLO identity.
	p.Decider = alert.DeciderFunc(func(a *alert.Alert, c *alert.Classification, now time.Time) alert.Decision {
		d := fakeDecider(a, c, now)
		if a.Labels["long"] == "1h" {
			d.SLO = ""
		}
		return d
	})
	mustProcess(t, p, tAlert("ErrorBudgetBurn", "resolved", "page", "slo", "gateway-availability", "long", "1h"))
	sum := mustProcess(t, p, tAlert("ErrorBudgetBurn", "firing", "ticket", "slo", "gateway-availability", "long", "3d"))
	if sum.Suppressed != 0 || sum.Notified == 0 {
		t.Errorf("the SLO's ticket after its page resolved: %+v, want it notified, not suppressed by the resolved page", sum)
	}
}

// recorded keeps the journal entries of each webhook processed.
type recorded struct {
	mu      sync.Mutex
	entries []journal.Entry
}

func (r *recorded) Record(msg *alert.Message, results []*alert.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, res := range results {
		r.entries = append(r.entries, journal.FromResult(msg, res))
	}
}

// A resolve goes to the incident its firing was notified in, whose key an
// upgrade or a changed incidents.group_by may have changed since: it was
// journaled under the key computed now, which PagerDuty never got, and the
// console showed the incident it resolved open for good (the resolved
// alert filed elsewhere).
func TestAResolveIsJournaledInTheIncidentItWasSentTo(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	rec := &recorded{}
	p.Recorder = rec
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
	p.GroupBy = []string{"sector", "kpi"} // the key computed now differs
	mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page"))
	var sent []string
	for _, n := range e.pd.notifications() {
		sent = append(sent, n.Incident)
	}
	if len(rec.entries) != 2 || len(sent) != 2 || sent[1] != sent[0] || rec.entries[1].Incident != sent[1] {
		t.Fatalf("PagerDuty got %q; journaled in %q; want the resolve sent to and journaled in the firing's incident", sent, []string{rec.entries[0].Incident, rec.entries[len(rec.entries)-1].Incident})
	}
}

// pageToBothRoutes sends pages to PagerDuty and to Slack.
const pageToBothRoutes = `
receiver: slack
routes:
  - receiver: pagerduty
    matchers: ['decision="page"']
    continue: true
  - receiver: slack
`

// pageSetStore records the members each store.Write adds to SLO page sets,
// and can fail the first write's additions (without writing them).
type pageSetStore struct {
	store.Store
	mu        sync.Mutex
	writes    int
	added     []string
	failFirst bool
	written   chan struct{} // closed after the first Write
}

func (s *pageSetStore) Write(ctx context.Context, w store.Writes) store.WriteErrors {
	s.mu.Lock()
	s.writes++
	first := s.writes == 1
	fail := first && s.failFirst
	if !fail {
		for _, m := range w.Add {
			s.added = append(s.added, m.Members...)
		}
	}
	s.mu.Unlock()
	add := w.Add
	if fail {
		w.Add = nil
	}
	errs := store.Write(ctx, s.Store, w)
	if fail && len(add) > 0 {
		errs.Add = errors.New("injected: SLO page set not written")
	}
	if first {
		close(s.written)
	}
	return errs
}

// The sends of one webhook settle together when they complete together
// (one store round trip); a send still running after the grace does not
// hold back the confirmation of those that completed. Either way a page's
// SLO page set member is written once — by a later settle only if an
// earlier one's write failed — and a later ticket of its SLO is suppressed.
func TestAWebhookSettlesItsSendsTogetherAndItsSLOPageOnce(t *testing.T) {
	page := tAlert("ErrorBudgetBurn", "firing", "page", "slo", "gateway-availability", "long", "1h")
	ticket := tAlert("ErrorBudgetBurn", "firing", "ticket", "slo", "gateway-availability", "long", "3d")
	member := "ErrorBudgetBurn (" + webhooktest.Fingerprint(page.Labels) + ")"
	for _, tc := range []struct {
		name      string
		together  bool // PagerDuty answers right after Slack; else once Slack's delivery is settled
		failFirst bool
		settles   int
	}{
		// Without the grace, Slack's delivery would be settled alone first.
		{name: "completing together", together: true, settles: 1},
		{name: "one still sending", settles: 2},
		{name: "one still sending, first write fails", failFirst: true, settles: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.routes = pageToBothRoutes
			ps := &pageSetStore{Store: e.store, failFirst: tc.failFirst, written: make(chan struct{})}
			e.store = ps
			p := e.pipeline()
			if tc.together {
				routing.SetSettleGrace(p, time.Hour) // only completion ends the wait
				slackSent := make(chan struct{})
				e.slack.setFail(func(*alert.Notification) error { close(slackSent); return nil })
				e.pd.setFail(func(*alert.Notification) error { <-slackSent; return nil })
			} else {
				e.pd.setFail(func(*alert.Notification) error { <-ps.written; return nil })
			}
			sum := mustProcess(t, p, page)
			if sum.Notified != 2 || len(e.pd.notifications()) != 1 || len(e.slack.notifications()) != 1 {
				t.Fatalf("summary %+v, pagerduty %d, slack %d: want the page sent to both", sum, len(e.pd.notifications()), len(e.slack.notifications()))
			}
			ps.mu.Lock()
			writes, added := ps.writes, slices.Clone(ps.added)
			ps.mu.Unlock()
			if writes != tc.settles {
				t.Fatalf("%d settles, want %d", writes, tc.settles)
			}
			if len(added) != 1 || added[0] != member {
				t.Errorf("SLO page set additions %q, want %q once", added, member)
			}
			if sum := mustProcess(t, e.pipeline(), ticket); sum.Suppressed != 1 {
				t.Errorf("ticket of the paging SLO: summary %+v, want it suppressed", sum)
			}
		})
	}
}

func TestPipelineSendsNothingForDecisionNone(t *testing.T) {
	e := newEnv(t)
	sum := mustProcess(t, e.pipeline(), tAlert("InfoOnly", "firing", "none"), tAlert("InfoOnly", "firing", "none", "instance", "b"))
	if sum.NoAction != 2 || sum.Notified != 0 {
		t.Errorf("summary %+v, want no_action 2", sum)
	}
	if n := len(e.pd.notifications()) + len(e.slack.notifications()); n != 0 {
		t.Errorf("%d notifications sent for decision none", n)
	}
}

func TestPipelineSendsADuplicatedAlertOfOnePayloadOnce(t *testing.T) {
	e := newEnv(t)
	x := tAlert("TTFTHigh", "firing", "page")
	mustProcess(t, e.pipeline(), x, x)
	if got := e.pd.transitions()[webhooktest.Fingerprint(x.Labels)+" firing firing"]; got != 1 {
		t.Errorf("alert sent %d times, want 1", got)
	}
}

func TestPipelineDeliversWhatItWonWhileAnotherReplicaSendsTheRest(t *testing.T) {
	e := newEnv(t)
	a, b := e.pipeline(), e.pipeline()
	x, y := tAlert("TTFTHigh", "firing", "page", "instance", "x"), tAlert("ITLHigh", "firing", "ticket", "kpi", "ITL")

	entered, release := make(chan struct{}), make(chan struct{})
	e.pd.setFail(func(*alert.Notification) error {
		close(entered)
		<-release
		return nil
	})
	done := make(chan error, 1)
	msgX := payload(t, x)
	go func() { _, err := a.Process(context.Background(), msgX); done <- err }()
	<-entered // replica a holds x's claim and is sending it.

	_, err := process(t, b, x, y)
	var de *alert.DeliveryError
	if !errors.As(err, &de) || !de.Retryable {
		t.Fatalf("replica b: %v, want a retryable *alert.DeliveryError for x in flight", err)
	}
	if got := len(e.slack.notifications()); got != 1 {
		t.Errorf("y reached slack %d times, want 1: a transition in flight elsewhere must not hold back the rest", got)
	}

	e.pd.setFail(nil)
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("replica a: %v", err)
	}
	mustProcess(t, b, x, y) // Alertmanager's retry to b.
	if pd, s := len(e.pd.notifications()), len(e.slack.notifications()); pd != 1 || s != 1 {
		t.Errorf("pagerduty %d, slack %d; want each once", pd, s)
	}
}

// lostClaims is a store that signals each SetNX that lost a claim: the
// caller is about to wait for the winner.
type lostClaims struct {
	store.Store
	lost chan struct{}
}

func (l *lostClaims) SetNX(ctx context.Context, e []store.Entry) ([]bool, error) {
	won, err := l.Store.SetNX(ctx, e)
	if err == nil && slices.Contains(won, false) {
		l.lost <- struct{}{}
	}
	return won, err
}

// A replica that loses a transition's claim waits for the winner, and what
// tells it the winner delivered is the winner's marker: for every kind of
// transition (a first firing, a resolve, a re-fire; a reminder is the
// incident's, TestPipelineRemindsEachIncidentOncePerInterval), the loser
// reports a dedup hit once the winner's send is confirmed, and an in-flight
// failure (5xx) when the winner's send fails — even where an older marker
// of the same alert already exists.
func TestAReplicaThatLostAClaimWaitsForTheWinnersMarker(t *testing.T) {
	x := tAlert("TTFTHigh", "firing", "page")
	xr := tAlert("TTFTHigh", "resolved", "page")
	cases := []struct {
		name   string
		before func(e *env, p *routing.Pipeline)
		now    webhooktest.Alert
		kind   alert.Kind
	}{
		{"first firing", func(*env, *routing.Pipeline) {}, x, alert.KindFiring},
		{"resolve", func(e *env, p *routing.Pipeline) { mustProcess(t, p, x) }, xr, alert.KindResolved},
		{"re-fire", func(e *env, p *routing.Pipeline) { mustProcess(t, p, x); mustProcess(t, p, xr) }, x, alert.KindFiring},
	}
	for _, c := range cases {
		for _, winnerFails := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/winner fails=%v", c.name, winnerFails), func(t *testing.T) {
				e := newEnv(t)
				// b waits this long for a: all of it when a fails, only until
				// a's marker is written when a succeeds.
				e.dedup.InFlightWait = 200 * time.Millisecond
				if !winnerFails {
					e.dedup.InFlightWait = 10 * time.Second
				}
				lc := &lostClaims{Store: e.store, lost: make(chan struct{}, 1)}
				e.store = lc
				a, b := e.pipeline(), e.pipeline()
				c.before(e, a)
				sentBefore := len(e.pd.notifications())

				entered, release := make(chan struct{}), make(chan error)
				e.pd.setFail(func(*alert.Notification) error {
					close(entered)
					return <-release
				})
				done := make(chan error, 1)
				msg := payload(t, c.now)
				go func() { _, err := a.Process(context.Background(), msg); done <- err }()
				<-entered // a holds the claim and is sending.

				type result struct {
					sum *alert.Summary
					err error
				}
				bDone := make(chan result, 1)
				msgB := payload(t, c.now)
				go func() { sum, err := b.Process(context.Background(), msgB); bDone <- result{sum, err} }()
				<-lc.lost // b lost the claim and waits for a.
				var rb result
				if winnerFails {
					rb = <-bDone // b's wait ends with nothing confirmed…
					release <- errors.New("pagerduty: 503 Service Unavailable")
					if err := <-done; err == nil {
						t.Fatal("replica a: no error for its failed send")
					}
				} else {
					release <- nil
					if err := <-done; err != nil {
						t.Fatalf("replica a: %v", err)
					}
					rb = <-bDone
				}
				ns := e.pd.notifications()[sentBefore:]
				var de *alert.DeliveryError
				switch {
				case winnerFails && (!errors.As(rb.err, &de) || !de.Retryable || rb.sum.Deduplicated != 0):
					t.Errorf("replica b: %v, summary %+v; want a retryable failure, no dedup hit: an older marker is no proof", rb.err, rb.sum)
				case !winnerFails && (rb.err != nil || rb.sum.Deduplicated != 1):
					t.Errorf("replica b: %v, summary %+v; want one dedup hit once a's marker is written", rb.err, rb.sum)
				case !winnerFails && (len(ns) != 1 || ns[0].Kind != c.kind):
					t.Errorf("pagerduty got %d notifications, want one %s", len(ns), c.kind)
				case winnerFails && len(ns) != 0:
					t.Errorf("pagerduty got %d notifications, want none (the send failed)", len(ns))
				}
			})
		}
	}
}

// hundredTransitions is a payload of n alerts of several incidents and both
// receivers.
func manyAlerts(n int) []webhooktest.Alert {
	out := make([]webhooktest.Alert, n)
	for i := range out {
		action := "ticket"
		if i%3 == 0 {
			action = "page"
		}
		out[i] = tAlert("TTFTHigh", "firing", action, "instance", fmt.Sprintf("gpu-node-%03d:8000", i), "service", fmt.Sprintf("svc-%d", i%4))
	}
	return out
}

// processUntilDelivered retries like Alertmanager: while the answer is a
// retryable failure, send the same payload again (bounded).
func processUntilDelivered(p *routing.Pipeline, alerts []webhooktest.Alert) error {
	var err error
	for range 50 {
		var m *alert.Message
		b, _ := json.Marshal(webhooktest.Msg("firing", alerts...))
		if m, err = webhook.Decode(b, receivedAt); err != nil {
			return err
		}
		if _, err = p.Process(context.Background(), m); err == nil {
			return nil
		}
		var de *alert.DeliveryError
		if !errors.As(err, &de) || !de.Retryable {
			return err
		}
	}
	return fmt.Errorf("still failing after 50 retries: %w", err)
}

// checkExactlyOnceUnderConcurrency has two replicas sharing st process the
// same payload from 8 goroutines each, all at once.
func checkExactlyOnceUnderConcurrency(t *testing.T, e *env) {
	alerts := manyAlerts(30)
	replicas := []*routing.Pipeline{e.pipeline(), e.pipeline()}
	start := make(chan struct{})
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for _, p := range replicas {
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- processUntilDelivered(p, alerts)
			}()
		}
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	tr := e.pd.transitions()
	for k, v := range e.slack.transitions() {
		tr[k] += v
	}
	if len(tr) != len(alerts) {
		t.Errorf("%d distinct transitions notified, want %d", len(tr), len(alerts))
	}
	for k, n := range tr {
		if n != 1 {
			t.Errorf("transition %s notified %d times, want once", k, n)
		}
	}
}

func TestPipelineNotifiesEachTransitionOnceAcrossConcurrentReplicas(t *testing.T) {
	checkExactlyOnceUnderConcurrency(t, newEnv(t))
}

// flaky is a Store that answers ErrStoreUnavailable while down is set.
type flaky struct {
	store.Store
	mu   sync.Mutex
	down bool
}

func (f *flaky) setDown(v bool) { f.mu.Lock(); f.down = v; f.mu.Unlock() }

func (f *flaky) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return fmt.Errorf("dial tcp 127.0.0.1:6379: connection refused: %w", store.ErrUnavailable)
	}
	return nil
}

func (f *flaky) SetNX(ctx context.Context, e []store.Entry) ([]bool, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.Store.SetNX(ctx, e)
}

func (f *flaky) Set(ctx context.Context, e []store.Entry) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Set(ctx, e)
}

func (f *flaky) Get(ctx context.Context, k []string) ([]string, []bool, error) {
	if err := f.err(); err != nil {
		return nil, nil, err
	}
	return f.Store.Get(ctx, k)
}

func (f *flaky) DeleteIfEqual(ctx context.Context, e []store.Entry) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.DeleteIfEqual(ctx, e)
}

func (f *flaky) AddMembers(ctx context.Context, k string, ttl time.Duration, m ...string) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.AddMembers(ctx, k, ttl, m...)
}

func (f *flaky) RemoveMembers(ctx context.Context, k string, m ...string) (int64, error) {
	if err := f.err(); err != nil {
		return 0, err
	}
	return f.Store.RemoveMembers(ctx, k, m...)
}

func (f *flaky) Incidents(ctx context.Context, ops []store.IncidentOp) ([]store.IncidentResult, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.Store.Incidents(ctx, ops)
}

func (f *flaky) Members(ctx context.Context, k string) ([]string, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.Store.Members(ctx, k)
}

// storeOutage is how a test takes the store down and brings it back.
type storeOutage struct {
	down, up func()
}

// checkStoreOutage: fail open delivers (counting store errors), fail closed
// answers a retryable DeliveryError, and dedup works again once the store is
// back.
func checkStoreOutage(t *testing.T, newEnvWithOutage func(t *testing.T) (*env, storeOutage)) {
	x := tAlert("TTFTHigh", "firing", "page")
	t.Run("fail open delivers and counts the store errors", func(t *testing.T) {
		e, o := newEnvWithOutage(t)
		p := e.pipeline()
		o.down()
		sum := mustProcess(t, p, x)
		if sum.Notified != 1 || len(e.pd.notifications()) != 1 {
			t.Fatalf("summary %+v, want the page delivered without the store", sum)
		}
		if got := metric(t, e.reg, "alertrouter_dedup_store_errors_total", ""); got == 0 {
			t.Error("no store error counted")
		}
		if got := metric(t, e.reg, "alertrouter_dedup_total", "fail_open"); got != 1 {
			t.Errorf("fail_open = %v, want 1", got)
		}
		o.up()
		mustProcess(t, p, x) // the risked duplicate: the store never heard of x
		mustProcess(t, p, x)
		mustProcess(t, e.pipeline(), x)
		if got := len(e.pd.notifications()); got != 2 {
			t.Errorf("%d notifications, want 2: one while down, one once back, then dedup", got)
		}
	})
	// A resolve that may close its incident waits for the store: the
	// incident's members cannot be read, and another Alertmanager group's
	// alert may keep it open (audit SENTINEL: PagerDuty resolved while it
	// fired, and nothing paged again). Alertmanager's retry delivers it
	// once the store answers.
	t.Run("fail open: a resolve that may close its incident waits for the store", func(t *testing.T) {
		e, o := newEnvWithOutage(t)
		p := e.pipeline()
		var logs lockedBuffer
		p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		mustProcess(t, p, x)
		o.down()
		sum, err := process(t, p, tAlert("TTFTHigh", "resolved", "page"))
		if err == nil || sum.Failed != 1 || !strings.Contains(err.Error(), "resolve held until the store answers") {
			t.Fatalf("a closing resolve with the store down: %v, summary %+v; want it failed, retryable", err, sum)
		}
		if ns := e.pd.notifications(); len(ns) != 1 {
			t.Fatalf("%d notifications, want the resolve held back while the store is down", len(ns))
		}
		if out := logs.String(); strings.Contains(out, "level=ERROR msg=\"notification failed") || !strings.Contains(out, "level=WARN msg=\"resolve held until the store answers") {
			t.Errorf("the held resolve is logged as a delivery failure, or not said held:\n%s", out)
		}
		o.up()
		mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page"))
		if ns := e.pd.notifications(); len(ns) != 2 || ns[1].Kind != alert.KindResolved || !ns[1].IncidentResolved {
			t.Errorf("%d notifications, want the resolve delivered, closing, once the store answers", len(ns))
		}
	})
	// One alert of an incident resolves while another of the same payload
	// still fires: with the store down the router cannot read the
	// incident's members, but the payload says the incident goes on, so
	// the resolve is an update, not the incident's resolve (before,
	// PagerDuty got a resolve while the other alert fired).
	t.Run("fail open: a partial resolve does not resolve the incident", func(t *testing.T) {
		e, o := newEnvWithOutage(t)
		p := e.pipeline()
		a := tAlert("TTFTHigh", "firing", "page", "instance", "a")
		b := tAlert("TTFTHigh", "firing", "page", "instance", "b")
		mustProcess(t, p, a, b)
		o.down()
		mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page", "instance", "a"), b)
		for _, n := range e.pd.notifications() {
			if n.IncidentResolved {
				t.Fatalf("the incident was resolved while alert b still fires in the same payload: %+v", n)
			}
		}
	})
	t.Run("fail closed answers a retryable error and sends nothing", func(t *testing.T) {
		e, o := newEnvWithOutage(t)
		e.dedup.FailClosed = true
		p := e.pipeline()
		o.down()
		_, err := process(t, p, x)
		var de *alert.DeliveryError
		if !errors.As(err, &de) || !de.Retryable || !errors.Is(de.Errs[0], store.ErrUnavailable) {
			t.Fatalf("Process error = %v, want a retryable *alert.DeliveryError wrapping store.ErrUnavailable", err)
		}
		if got := len(e.pd.notifications()); got != 0 {
			t.Errorf("%d notifications sent with the store down and fail_closed", got)
		}
		o.up()
		if err := processUntilDelivered(p, []webhooktest.Alert{x}); err != nil {
			t.Fatal(err)
		}
		mustProcess(t, e.pipeline(), x)
		if got := len(e.pd.notifications()); got != 1 {
			t.Errorf("%d notifications once the store is back, want 1", got)
		}
	})
}

func TestPipelineSurvivesAStoreOutage(t *testing.T) {
	checkStoreOutage(t, func(t *testing.T) (*env, storeOutage) {
		e := newEnv(t)
		f := &flaky{Store: e.store}
		e.store = f
		return e, storeOutage{down: func() { f.setDown(true) }, up: func() { f.setDown(false) }}
	})
}

func TestEvaluateExplainsWithoutTouchingTheStore(t *testing.T) {
	e := newEnv(t)
	f := &flaky{Store: e.store}
	f.setDown(true)
	e.store = f
	p := e.pipeline()
	rs := p.Evaluate(payload(t, tAlert("TTFTHigh", "firing", "page"), tAlert("ErrorBudgetBurn", "firing", "ticket", "slo", "s"), tAlert("ErrorBudgetBurn", "firing", "page", "slo", "s")))
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	if rs[0].Incident != "llm-inference-gpu/chat/TTFT" || len(rs[0].Receivers) != 1 || rs[0].Receivers[0] != "pagerduty" {
		t.Errorf("result 0: incident %q receivers %v", rs[0].Incident, rs[0].Receivers)
	}
	if rs[1].SuppressedBy == "" || rs[1].Incident != "slo/s" {
		t.Errorf("result 1: suppressed by %q, incident %q; want suppressed by the page of SLO s", rs[1].SuppressedBy, rs[1].Incident)
	}
}

func BenchmarkPipeline(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			var r routing.Route
			_ = yaml.UnmarshalStrict([]byte(testRoutes), &r)
			if err := r.Compile(map[string]bool{"pagerduty": true, "slack": true}); err != nil {
				b.Fatal(err)
			}
			nop := alert.NotifierFunc(func(context.Context, *alert.Notification) error { return nil })
			p := &routing.Pipeline{
				Classifier: fakeClassifier, Decider: fakeDecider, Routes: &r,
				Receivers: map[string][]routing.Integration{
					"pagerduty": {{Name: "pagerduty/0", Notifier: nop, SendResolved: true}},
					"slack":     {{Name: "slack/0", Notifier: nop, SendResolved: true}},
				},
				Store:   store.NewMemory(),
				Dedup:   routing.DedupOptions{ClaimTTL: time.Minute, NotifiedTTL: time.Hour, RepeatInterval: 4 * time.Hour, InFlightWait: time.Second},
				Metrics: routing.NewMetrics(nil),
				Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			body, err := json.Marshal(webhooktest.Msg("firing", manyAlerts(n)...))
			if err != nil {
				b.Fatal(err)
			}
			msg, err := webhook.Decode(body, receivedAt)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			// The first run notifies; every later one is the common case of
			// Alertmanager repeating a group: all dedup hits.
			for b.Loop() {
				if _, err := p.Process(context.Background(), msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestPipelineNotifiesAnAlertmanagerReFireAfterItsResolve(t *testing.T) {
	// Alertmanager resolves an alert whose resends stopped, then Prometheus
	// resends it with the same startsAt: a new firing transition, notified
	// however soon after the first one it comes.
	e := newEnv(t)
	p := e.pipeline()
	// The re-fire's resolve comes within claim_ttl of the first resolve: it
	// is sent at once (it found the first resolve's claim and waited on it
	// for claim_ttl, answering 5xx meanwhile).
	for _, status := range []string{"firing", "resolved", "firing", "firing", "resolved"} {
		mustProcess(t, p, tAlert("TTFTHigh", status, "page"))
		e.clock.Advance(time.Second)
	}
	var kinds []alert.Kind
	for _, n := range e.pd.notifications() {
		kinds = append(kinds, n.Kind)
	}
	if want := []alert.Kind{alert.KindFiring, alert.KindResolved, alert.KindFiring, alert.KindResolved}; !slices.Equal(kinds, want) {
		t.Errorf("notifications %v, want %v", kinds, want)
	}
}

// A resolve reaches the incident its firing opened, even when the resolved
// alert (same labels, other annotations) would now be grouped elsewhere.
func TestPipelineResolvesTheIncidentTheFiringOpenedEvenIfRegrouped(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Classifier = alert.ClassifierFunc(func(a *alert.Alert) alert.Classification {
		return alert.Classification{Sector: a.Annotations["test_sector"], KPIs: []alert.KPI{{ID: "TTFT"}}, IncidentClass: "latency"}
	})
	labels := map[string]string{"alertname": "TTFTHigh", "service": "chat", "test_action": "page"}
	firing := webhooktest.MkAlert("firing", labels, map[string]string{"test_sector": "llm-inference-gpu"}, `up`, webhooktest.Start)
	resolved := webhooktest.MkAlert("resolved", labels, map[string]string{"test_sector": "llm-inference-api"}, `up`, webhooktest.Start)
	mustProcess(t, p, firing)
	mustProcess(t, p, resolved)
	ns := e.pd.notifications()
	if len(ns) != 2 || ns[1].Kind != alert.KindResolved {
		t.Fatalf("%d notifications; want a firing then its resolve", len(ns))
	}
	if ns[1].Incident != ns[0].Incident || !ns[1].IncidentResolved {
		t.Fatalf("resolve went to incident %q (resolved=%v), want the firing's %q resolved", ns[1].Incident, ns[1].IncidentResolved, ns[0].Incident)
	}
}

func TestPipelineTemplateDataIsTheIncidentsOwn(t *testing.T) {
	// Two incidents in one webhook: each notification's common labels and
	// group labels come from its own alerts, so a Silence link built from
	// them matches that incident only.
	e := newEnv(t)
	a := tAlert("TTFTHigh", "firing", "page", "service", "chat", "instance", "a")
	b := tAlert("TTFTHigh", "firing", "page", "service", "embed", "instance", "b")
	mustProcess(t, e.pipeline(), a, b)
	ns := e.pd.notifications()
	if len(ns) != 2 {
		t.Fatalf("%d notifications, want one per incident", len(ns))
	}
	for _, n := range ns {
		svc := n.Results[0].Alert.Labels["service"]
		if got := n.Data.CommonLabels["service"]; got != svc {
			t.Errorf("incident %s: CommonLabels[service] = %q, want %q", n.Incident, got, svc)
		}
		if got := n.Data.CommonLabels["instance"]; got != n.Results[0].Alert.Labels["instance"] {
			t.Errorf("incident %s: CommonLabels[instance] = %q, want its own alert's", n.Incident, got)
		}
		if len(n.Data.Alerts) != 1 || n.Data.Receiver != "pagerduty" {
			t.Errorf("incident %s: %d alerts for receiver %q, want its one alert", n.Incident, len(n.Data.Alerts), n.Data.Receiver)
		}
		if got := n.Data.GroupLabels["alertname"]; got != "TTFTHigh" {
			t.Errorf("incident %s: GroupLabels = %v, want Alertmanager's alertname kept", n.Incident, n.Data.GroupLabels)
		}
	}
}

// Alertmanager's group labels are its route's group_by: a template reading
// .GroupLabels.team under a route grouping by team (a Slack channel
// '#{{ .GroupLabels.team }}-alerts', as in an imported Alertmanager
// config) renders the team even when Alertmanager's own route to the router
// groups by alertname only — and, as Alertmanager renders it, only what
// the route groups by. Without a route's group_by they stay Alertmanager's
// (incidents.group_by is not Alertmanager's: titles as it renders them).
func TestPipelineGroupLabelsAreTheRoutesGroupBy(t *testing.T) {
	e := newEnv(t)
	e.routes = `
receiver: slack
routes:
  - receiver: pagerduty
    matchers: ['decision="page"']
    group_by: [team]
`
	a := tAlert("TTFTHigh", "firing", "page", "team", "team-a", "instance", "a")
	b := tAlert("TTFTHigh", "firing", "page", "team", "team-b", "instance", "b")
	c := tAlert("TTFTHigh", "firing", "ticket", "team", "team-c", "instance", "c", "service", "embed")
	mustProcess(t, e.pipeline(), a, b, c)
	ns := e.pd.notifications()
	if len(ns) != 2 {
		t.Fatalf("%d notifications, want one per team", len(ns))
	}
	for _, n := range ns {
		team := n.Results[0].Alert.Labels["team"]
		if got := n.Data.GroupLabels; len(got) != 1 || got["team"] != team {
			t.Errorf("incident %s: GroupLabels = %v, want team=%s alone (the route's group_by)", n.Incident, got, team)
		}
	}
	sn := e.slack.notifications()
	if len(sn) != 1 {
		t.Fatalf("%d Slack notifications, want the ticket's", len(sn))
	}
	if got := sn[0].Data.GroupLabels; len(got) != 1 || got["alertname"] != "TTFTHigh" {
		t.Errorf("ticket's group labels %v, want Alertmanager's alertname alone", got)
	}
}

// A route's `group_by: []` makes every alert it routes one incident, as
// Alertmanager v0.31 and later make them one group (and one notification):
// alerts of two services and namespaces page once, the second an update of
// the first, and .GroupLabels are empty, as Alertmanager renders them. The
// router inherited the parent's grouping there, as older Alertmanagers did:
// two pages where the user asked for one group (an audit). Another route's
// alerts stay apart; an alert of an unknown sector still by its name.
func TestPipelineAnEmptyGroupByIsOneIncidentPerRoute(t *testing.T) {
	e := newEnv(t)
	e.routes = `
receiver: slack
group_by: [alertname, namespace]
routes:
  - receiver: pagerduty
    matchers: ['team="db"']
    group_by: []
  - receiver: pagerduty
    matchers: ['team="web"']
    group_by: []
`
	p := e.pipeline()
	a := tAlert("PostgresReplicationLag", "firing", "page", "team", "db", "namespace", "shop", "service", "pg-shop")
	b := tAlert("PostgresDown", "firing", "page", "team", "db", "namespace", "billing", "service", "pg-billing")
	c := tAlert("NginxDown", "firing", "page", "team", "web", "namespace", "shop", "service", "nginx")
	mustProcess(t, p, a, b, c)
	ns := e.pd.notifications()
	if got, want := e.pd.events(), []string{`trigger route/team="db"`, `trigger route/team="web"`}; !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("PagerDuty events %q, want one trigger per route, %q", got, want)
	}
	for _, n := range ns {
		want := map[string]int{`route/team="db"`: 2, `route/team="web"`: 1}[n.Incident]
		if len(n.Results) != want {
			t.Errorf("incident %q holds %d alerts, want %d", n.Incident, len(n.Results), want)
		}
		if len(n.Data.GroupLabels) != 0 {
			t.Errorf("incident %q: GroupLabels %v, want none (group_by: [])", n.Incident, n.Data.GroupLabels)
		}
	}
	// A later alert of the route joins the open incident: no second page.
	d := tAlert("PostgresDiskFull", "firing", "page", "team", "db", "namespace", "erp", "service", "pg-erp")
	mustProcess(t, p, d)
	if got := e.pd.events(); len(got) != 2 {
		t.Errorf("PagerDuty events %q after a third db alert, want it an update of the db incident, no trigger", got)
	}
	if ns := e.pd.notifications(); len(ns) != 3 || ns[2].Incident != `route/team="db"` {
		t.Errorf("%d notifications, the last to %q; want the third db alert's to the db incident", len(ns), ns[len(ns)-1].Incident)
	}
	// An unknown sector's alert stays apart by its alertname.
	u := webhooktest.MkAlert("firing", map[string]string{"alertname": "Mystery", "team": "db", "test_action": "page"}, nil, "up", webhooktest.Start)
	var r *alert.Result
	for _, x := range p.Evaluate(payload(t, u)) {
		r = x
	}
	if r == nil || r.Incident != `Mystery/route/team="db"` {
		t.Errorf("an unknown sector's alert under group_by: [] has incident %v, want Mystery/route/team=\"db\"", r)
	}
}

// The answer lists the first alert.ListedRejections rejected alerts and
// counts the rest: a payload of 200,000 unreadable alerts was answered 19 MB.
func TestPipelineAnswerListsAHundredRejections(t *testing.T) {
	e := newEnv(t)
	alerts := []webhooktest.Alert{tAlert("TTFTHigh", "firing", "ticket")}
	for range 150 {
		alerts = append(alerts, webhooktest.MkAlert("firing", map[string]string{}, nil, "", webhooktest.Start))
	}
	sum := mustProcess(t, e.pipeline(), alerts...)
	if len(sum.Rejected) != alert.ListedRejections || sum.RejectedMore != 150-alert.ListedRejections || sum.Alerts != 151 || sum.Notified != 1 {
		t.Errorf("answer lists %d rejections and %d more of %d alerts (%d notified); want %d listed, %d more, the readable one notified",
			len(sum.Rejected), sum.RejectedMore, sum.Alerts, sum.Notified, alert.ListedRejections, 150-alert.ListedRejections)
	}
}

// The answer accounts for every alert routed to one integration:
// notified, deduplicated, suppressed, no action or failed (the first three
// count once per integration reached). The resolve of an alert nothing notified (decided
// none when it fired) was counted nowhere: an answer of one alert and all
// zeros, a 200 that seemed to say nothing happened to it (a review).
func TestPipelineAnswerAccountsForEveryAlert(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	for _, step := range []struct {
		name  string
		alert webhooktest.Alert
	}{
		{"a firing decided none", tAlert("Quiet", "firing", "none")},
		{"its resolve", tAlert("Quiet", "resolved", "none")},
		{"a page", tAlert("Loud", "firing", "page")},
		{"its resolve", tAlert("Loud", "resolved", "page")},
		{"its resolve again", tAlert("Loud", "resolved", "page")},
	} {
		e.clock.Advance(time.Minute)
		sum := mustProcess(t, p, step.alert)
		if n := sum.Notified + sum.Deduplicated + sum.Suppressed + sum.NoAction + sum.Failed; n != sum.Alerts {
			t.Errorf("%s: answer %+v accounts for %d of its %d alerts", step.name, *sum, n, sum.Alerts)
		}
	}
}

// pagerDutyHeld processes alerts on p in the background with e's
// PagerDuty send held: it returns once that send has started, with the
// channel that ends it (the send's error) and the one Process's error comes
// on. Later sends are not held.
func pagerDutyHeld(t *testing.T, e *env, p *routing.Pipeline, alerts ...webhooktest.Alert) (chan<- error, <-chan error) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan error)
	var once sync.Once
	e.pd.setFail(func(*alert.Notification) error {
		held := false
		once.Do(func() { held = true; close(entered) })
		if !held {
			return nil
		}
		return <-release
	})
	done := make(chan error, 1)
	msg := payload(t, alerts...)
	go func() { _, err := p.Process(context.Background(), msg); done <- err }()
	<-entered
	return release, done
}

// claimRecorder is a store that records the keys of every claim taken
// (SetNX; the optional one-round-trip interfaces are hidden, so claims come
// through it).
type claimRecorder struct {
	store.Store
	mu   sync.Mutex
	keys []string
}

func (c *claimRecorder) SetNX(ctx context.Context, e []store.Entry) ([]bool, error) {
	c.mu.Lock()
	for _, en := range e {
		c.keys = append(c.keys, en.Key)
	}
	c.mu.Unlock()
	return c.Store.SetNX(ctx, e)
}

func (c *claimRecorder) claimed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.keys)
}

// A transition never notified is claimed on its marker key: while its send
// is in flight the key holds the sender's token, once delivered the marker
// (the same key: the claim is overwritten), and after a failed send
// nothing, so Alertmanager's retry claims it again.
func TestANewAlertIsClaimedOnItsMarkerKey(t *testing.T) {
	for _, delivered := range []bool{true, false} {
		t.Run(fmt.Sprintf("delivered=%v", delivered), func(t *testing.T) {
			e := newEnv(t)
			rec := &claimRecorder{Store: e.store}
			e.store = rec
			p := e.pipeline()
			release, done := pagerDutyHeld(t, e, p, tAlert("TTFTHigh", "firing", "page"))
			keys := rec.claimed()
			if len(keys) != 1 || !strings.Contains(keys[0], "pagerduty") {
				t.Fatalf("claims %q, want the PagerDuty transition's", keys)
			}
			values, found, err := e.store.Get(context.Background(), keys)
			if err != nil {
				t.Fatal(err)
			}
			if !found[0] || !dedup.IsClaim(values[0]) {
				t.Errorf("during the send %s holds %q (found %v), want the sender's token", keys[0], values[0], found[0])
			}
			var fail error
			if !delivered {
				fail = errors.New("pagerduty down")
			}
			release <- fail
			if err := <-done; (err != nil) == delivered {
				t.Fatalf("Process: %v", err)
			}
			values, found, err = e.store.Get(context.Background(), keys)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !delivered && found[0]:
				t.Errorf("after the failed send %s holds %q, want nothing (claim released)", keys[0], values[0])
			case delivered && (!found[0] || dedup.IsClaim(values[0]) || dedup.ParseMarker(values[0]).Tier == ""):
				t.Errorf("after the send %s holds %q (found %v), want its marker", keys[0], values[0], found[0])
			}
		})
	}
}

// A sender's token found at a transition's marker is a claim in flight,
// not a notified tier: the webhook sends nothing and asks for a retry while
// the claim holds (its own claim, on the same key, loses), and sends once
// the claim has expired unconfirmed. Taken for a notified marker, the token
// would have the transition claimed on a key of its own and sent at once.
func TestATokenAtAMarkerIsAClaimInFlight(t *testing.T) {
	e := newEnv(t)
	rec := &claimRecorder{Store: e.store}
	e.store = rec
	p := e.pipeline()
	x := tAlert("TTFTHigh", "firing", "page")
	e.pd.setFail(func(*alert.Notification) error { return errors.New("pagerduty down") })
	if _, err := process(t, p, x); err == nil {
		t.Fatal("first attempt: want the failed send's error")
	}
	e.pd.setFail(nil)
	// Another sender claims the transition (its claim on the marker).
	var theirs []store.Entry
	for _, k := range rec.claimed() {
		theirs = append(theirs, store.Entry{Key: k, Value: dedup.NewToken(), TTL: e.dedup.ClaimTTL})
	}
	if won, err := e.store.SetNX(context.Background(), theirs); err != nil || slices.Contains(won, false) {
		t.Fatalf("the other sender's claims: won %v, %v", won, err)
	}
	var logs lockedBuffer
	p.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	sum, err := process(t, p, x)
	if !isRetryable(err) {
		t.Fatalf("while the other sender's claim holds: %v (summary %+v), want a retryable in-flight error", err, sum)
	}
	if n := len(e.pd.notifications()); n != 0 {
		t.Fatalf("sent %d while another sender holds the claim; want none", n)
	}
	// The 5xx says why in the log (a replica killed mid-send holds its
	// claims until claim_ttl: nothing else said so).
	if !strings.Contains(logs.String(), "claimed by another sender are not confirmed") || !strings.Contains(logs.String(), "claim_ttl=1m0s") {
		t.Errorf("the in-flight 5xx logged nothing that says why:\n%s", logs.String())
	}
	e.clock.Advance(e.dedup.ClaimTTL + time.Second) // the other sender died: its claim expires
	mustProcess(t, p, x)
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("after the claim expired: sent %d, want once", n)
	}
}

// A resolve that arrives while another replica is still sending the
// alert's first firing is not dropped as the resolve of something never
// notified: its claim, on the marker key the firing's sender holds, loses,
// so it asks for a retry, and the retry — once the firing is confirmed —
// sends the resolve.
func TestAResolveDuringItsFiringsSendWaitsForIt(t *testing.T) {
	e := newEnv(t)
	a, b := e.pipeline(), e.pipeline()
	release, done := pagerDutyHeld(t, e, a, tAlert("TTFTHigh", "firing", "page")) // a holds the firing's claim and is sending it
	resolved := tAlert("TTFTHigh", "resolved", "page")
	sum, err := process(t, b, resolved)
	if !isRetryable(err) {
		t.Fatalf("resolve during the firing's send: %v (summary %+v), want a retryable in-flight error", err, sum)
	}
	release <- nil
	if err := <-done; err != nil {
		t.Fatalf("firing: %v", err)
	}
	mustProcess(t, b, resolved) // Alertmanager's retry
	got := e.pd.events()
	if len(got) != 2 || !strings.HasPrefix(got[0], "trigger ") || got[1] != "resolve "+strings.TrimPrefix(got[0], "trigger ") {
		t.Errorf("pagerduty events %q, want the firing's trigger then its resolve", got)
	}
}

// hangingNotifier answers nothing until the send's deadline: a Slack that
// hangs.
type hangingNotifier struct{}

func (hangingNotifier) Notify(ctx context.Context, _ *alert.Notification) error {
	<-ctx.Done()
	return ctx.Err()
}

// liveSender sends through n while the send's context is live, as a real
// notifier's HTTP request does.
type liveSender struct{ n alert.Notifier }

func (l liveSender) Notify(ctx context.Context, no *alert.Notification) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.n.Notify(ctx, no)
}

// A webhook of a hundred alerts — Alertmanager sorts a group's alerts by
// their labels, not their severity — whose page came last: its PagerDuty
// send waited for one of the webhook's 16 send slots behind the tickets'
// Slack posts, which a hanging Slack held until the webhook's deadline, so
// the page was never sent, on any retry (an audit). Sends of different
// integrations no longer wait for each other.
func TestAPageIsSentWhileTheWebhooksSlackPostsHang(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["slack"] = []routing.Integration{{Name: "slack/0", Notifier: hangingNotifier{}, SendResolved: true}}
	p.Receivers["pagerduty"] = []routing.Integration{{Name: "pagerduty/0", Notifier: liveSender{e.pd}, SendResolved: true}}
	var alerts []webhooktest.Alert
	for i := range 40 {
		alerts = append(alerts, tAlert("QueueBacklog", "firing", "ticket", "service", fmt.Sprintf("svc-%02d", i)))
		if i == 20 {
			alerts = append(alerts, tAlert("TTFTHigh", "firing", "page", "service", "svc-page"))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := p.Process(ctx, payload(t, alerts...)); err == nil {
		t.Fatal("the webhook succeeded while Slack hung")
	}
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("PagerDuty got %d notifications, want the page, whatever Slack does", n)
	}
}
