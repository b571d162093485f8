package routing_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// coalesceCase opens an incident, holds the next update of it at the
// notifier while `waiting` other webhooks each bring a new member of the
// same incident, then lets it go. It returns the members' alerts and the
// outcome of each waiting webhook.
func coalesceCase(t *testing.T, e *env, p *routing.Pipeline, waiting int, second func(*alert.Notification) error) ([]webhooktest.Alert, []error) {
	t.Helper()
	mustProcess(t, p, tAlert("Open", "firing", "ticket"))
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	calls := 0
	var mu sync.Mutex
	e.slack.setFail(func(n *alert.Notification) error {
		mu.Lock()
		calls++
		call := calls
		mu.Unlock()
		switch call {
		case 1:
			once.Do(func() { close(entered) })
			<-release
			return nil
		case 2:
			return second(n)
		}
		return nil
	})
	first := tAlert("First", "firing", "ticket", "instance", "gpu-node-100:8000")
	firstErr := make(chan error, 1)
	go func() {
		_, err := process(t, p, first)
		firstErr <- err
	}()
	<-entered

	members := make([]webhooktest.Alert, waiting)
	errs := make([]error, waiting)
	var wg sync.WaitGroup
	for i := range members {
		members[i] = tAlert(fmt.Sprintf("Member%d", i), "firing", "ticket", "instance", fmt.Sprintf("gpu-node-%03d:8000", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = process(t, p, members[i])
		}()
	}
	eventually(t, "every member's update queued behind the send in flight", func() bool {
		return routing.QueuedUpdates(p) == waiting
	})
	close(release)
	wg.Wait()
	if err := <-firstErr; err != nil {
		t.Fatalf("the update in flight: %v", err)
	}
	e.slack.setFail(nil)
	return members, errs
}

func fingerprints(alerts []webhooktest.Alert) []string {
	var out []string
	for _, a := range alerts {
		out = append(out, a.Fingerprint)
	}
	sort.Strings(out)
	return out
}

// checkSharedUpdate checks that shared, one send carrying the updates of
// several webhooks (one member each), is an update of the incident with
// exactly members' alerts, that every webhook but the carrier's counts as
// coalesced, and that each webhook's claims were confirmed: Alertmanager's
// repeat of it is a dedup hit.
func checkSharedUpdate(t *testing.T, e *env, p *routing.Pipeline, shared *alert.Notification, members []webhooktest.Alert) {
	t.Helper()
	var got []string
	for _, r := range shared.Results {
		got = append(got, r.Alert.Fingerprint)
	}
	sort.Strings(got)
	if want := fingerprints(members); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shared update carries %v, want the %d members %v", got, len(members), want)
	}
	if shared.Opening || shared.IncidentResolved || shared.Incident != "llm-inference-gpu/chat/TTFT" || len(shared.Data.Alerts) != len(members) {
		t.Errorf("shared update: opening %v, resolved %v, incident %q, %d template alerts; want an update of the incident with %d alerts",
			shared.Opening, shared.IncidentResolved, shared.Incident, len(shared.Data.Alerts), len(members))
	}
	if shared.Data.CommonLabels["service"] != "chat" || shared.Data.CommonLabels["alertname"] != "" {
		t.Errorf("shared update's common labels %v: want those all its alerts share, and no alertname", shared.Data.CommonLabels)
	}
	if got, want := metric(t, e.reg, "alertrouter_notifications_coalesced_total", "slack"), float64(len(members)-1); got != want {
		t.Errorf("alertrouter_notifications_coalesced_total = %v, want %v (%d webhooks, one send)", got, want, len(members))
	}
	for i, m := range members {
		if sum := mustProcess(t, p, m); sum.Deduplicated != 1 || sum.Notified != 0 {
			t.Errorf("repeat of member %d: %+v, want a dedup hit", i, sum)
		}
	}
}

// checkDeliveredInOneUpdate checks that every member's webhook was answered
// 2xx, that slack got want messages (why says which), the last one the
// update shared by members (checkSharedUpdate), and still want after the
// members' repeats.
func checkDeliveredInOneUpdate(t *testing.T, e *env, p *routing.Pipeline, members []webhooktest.Alert, errs []error, want int, why string) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("webhook of member %d: %v (its alert went out in the shared send)", i, err)
		}
	}
	sent := e.slack.notifications()
	if len(sent) != want {
		t.Fatalf("slack got %d messages, want %d: %s", len(sent), want, why)
	}
	checkSharedUpdate(t, e, p, sent[want-1], members)
	if n := len(e.slack.notifications()); n != want {
		t.Errorf("slack got %d messages after the repeats, want still %d", n, want)
	}
}

func checkCoalescedUpdates(t *testing.T, e *env) {
	p := e.pipeline()
	members, errs := coalesceCase(t, e, p, 5, func(*alert.Notification) error { return nil })
	checkDeliveredInOneUpdate(t, e, p, members, errs, 3, "the opening, the update in flight, one update for the 5 webhooks that waited")
}

// Updates of one open incident that arrive while an update of it is being
// sent go out as one message once that send completes, and each webhook is
// answered 2xx only then, confirmed.
func TestConcurrentUpdatesOfAnIncidentGoOutAsOneMessage(t *testing.T) {
	checkCoalescedUpdates(t, newEnv(t))
}

func TestConcurrentUpdatesOfAnIncidentGoOutAsOneMessageOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	checkCoalescedUpdates(t, redisEnv(t, []string{srv.Addr()}, false))
}

// A failed shared send — of updates queued behind a send in flight, or
// gathered in the update window — fails every webhook whose alerts it
// carried, with a retryable error, and releases their claims: each retry
// delivers its alert, once.
func TestAFailedSharedUpdateFailsEveryWebhookItCarried(t *testing.T) {
	fail := errors.New("slack: 503")
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, e *env) (*routing.Pipeline, []webhooktest.Alert, []error)
	}{
		{"queued behind a send", func(t *testing.T, e *env) (*routing.Pipeline, []webhooktest.Alert, []error) {
			p := e.pipeline()
			members, errs := coalesceCase(t, e, p, 4, func(*alert.Notification) error { return fail })
			return p, members, errs
		}},
		{"gathered in the window", func(t *testing.T, e *env) (*routing.Pipeline, []webhooktest.Alert, []error) {
			return windowCase(t, e, 3, fail)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			p, members, errs := tt.run(t, e)
			for i, err := range errs {
				if !isRetryable(err) {
					t.Errorf("webhook of member %d: %v, want a retryable error", i, err)
				}
			}
			for i, m := range members {
				if sum := mustProcess(t, p, m); sum.Notified != 1 {
					t.Errorf("retry of member %d: %+v, want it notified", i, sum)
				}
			}
			tr := e.slack.transitions()
			for _, m := range members {
				if n := tr[m.Fingerprint+" firing firing"]; n != 1 {
					t.Errorf("member %s delivered %d times, want once", m.Fingerprint, n)
				}
			}
		})
	}
}

// Updates and openings of another incident never wait for an update of
// this one in flight.
func TestOtherIncidentsDoNotWaitForAnUpdateInFlight(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	mustProcess(t, p, tAlert("Open", "firing", "ticket"))
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.slack.setFail(func(n *alert.Notification) error {
		if n.Incident == "llm-inference-gpu/chat/TTFT" && !n.Opening {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := process(t, p, tAlert("First", "firing", "ticket", "instance", "gpu-node-100:8000"))
		done <- err
	}()
	<-entered
	// Another incident (KPI changes) opens and updates while the first
	// incident's update is held: neither waits for it.
	other := tAlert("Other", "firing", "ticket", "kpi", "TPOT")
	mustProcess(t, p, other)
	mustProcess(t, p, tAlert("Other2", "firing", "ticket", "kpi", "TPOT", "instance", "gpu-node-002:8000"))
	if q := routing.QueuedUpdates(p); q != 0 {
		t.Errorf("%d updates queued, want none: only updates of the same incident wait", q)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(e.slack.notifications()); n != 4 {
		t.Errorf("slack got %d messages, want 4", n)
	}
}

// A first page costs three store round trips on one Redis node: the
// pending read, the claims with the incident lease (store.ClaimJoin), and
// the settle, where confirmations, incident steps and SLO page sets go in
// one store.Write.
func TestSettleIsOneStoreWrite(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	cs := &countingStore{Store: e.store}
	e.store = cs
	p := e.pipeline()
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page"))
	got := cs.reset()
	want := map[string]int{"ClaimJoin": 1, "Get": 1, "Write": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("store calls of a first page %v, want %v (the pending read, claims with the incident lease, then one write to settle)", got, want)
	}
	if sum := mustProcess(t, p, tAlert("TTFTHigh", "resolved", "page")); sum.Notified != 1 {
		t.Fatalf("resolve: %+v", sum)
	}
	if got := cs.reset(); got["Write"] != 1 || got["Set"]+got["DeleteIfEqual"]+got["AddMembers"] != 0 {
		t.Errorf("store calls of the resolve %v, want one Write to settle", got)
	}
}

// windowCase opens an incident, then sends `others`+1 webhooks each with a
// new member of it while no update of it is being sent: the first waits in
// the update window (held until every other webhook's update has queued),
// then sends. sendErr decides that send. It returns the members and each
// webhook's outcome (the first one's first).
func windowCase(t *testing.T, e *env, others int, sendErr error) (*routing.Pipeline, []webhooktest.Alert, []error) {
	t.Helper()
	p := e.pipeline()
	p.UpdateWindow = time.Hour // the wait below ends it
	entered, release := make(chan struct{}), make(chan struct{})
	var waits atomic.Int32
	routing.SetUpdateWindowWait(p, func(_ context.Context, d time.Duration) {
		if d != time.Hour {
			t.Errorf("window %s, want the pipeline's UpdateWindow", d)
		}
		if waits.Add(1) == 1 {
			close(entered)
			<-release
		}
	})
	mustProcess(t, p, tAlert("Open", "firing", "ticket"))
	if n := waits.Load(); n != 0 {
		t.Fatalf("the opening waited in the update window %d times; openings never wait", n)
	}
	e.slack.setFail(func(n *alert.Notification) error {
		if n.Opening || n.IncidentResolved {
			return nil
		}
		return sendErr
	})
	members := make([]webhooktest.Alert, others+1)
	errs := make([]error, others+1)
	var wg sync.WaitGroup
	for i := range members {
		members[i] = tAlert(fmt.Sprintf("Member%d", i), "firing", "ticket", "instance", fmt.Sprintf("gpu-node-%03d:8000", i))
		if i == 0 {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[0] = process(t, p, members[0]) }()
			select {
			case <-entered:
			case <-time.After(10 * time.Second): // a bound on a hang, not a timing assumption
				t.Fatal("the first member's update never waited in the update window")
			}
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = process(t, p, members[i]) }()
	}
	eventually(t, "every other member's update queued behind the one in its window", func() bool {
		return routing.QueuedUpdates(p) == others
	})
	close(release)
	wg.Wait()
	e.slack.setFail(nil)
	if n := waits.Load(); n != 1 {
		t.Errorf("%d updates waited in the window, want 1 (the others queued behind it)", n)
	}
	return p, members, errs
}

// Updates of an open incident that arrive while one of them waits in the
// update window, with nothing being sent, go out with it as one message;
// each webhook is answered 2xx only after that send, confirmed. Without the
// window each would be its own message (the test fails with the window
// ignored).
func TestUpdatesWithinTheWindowGoOutAsOneMessage(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{"memory", newEnv},
		{"redis", func(t *testing.T) *env { return redisEnv(t, []string{redistest.Start(t).Addr()}, false) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.env(t)
			p, members, errs := windowCase(t, e, 4, nil)
			checkDeliveredInOneUpdate(t, e, p, members, errs, 2, "the opening and one update carrying the 5 members")
		})
	}
}

// Openings and resolutions never wait in the update window: only updates
// (here a member resolving while another still fires) do.
func TestOnlyUpdatesWaitInTheUpdateWindow(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.UpdateWindow = time.Hour
	var waits atomic.Int32
	routing.SetUpdateWindowWait(p, func(context.Context, time.Duration) { waits.Add(1) })
	first, second := tAlert("First", "firing", "ticket"), tAlert("Second", "firing", "ticket", "instance", "gpu-node-200:8000")
	mustProcess(t, p, first, second)
	if n := waits.Load(); n != 0 {
		t.Errorf("an opening waited in the window %d times, want 0", n)
	}
	first.Status, second.Status = "resolved", "resolved"
	mustProcess(t, p, first)
	if n := waits.Load(); n != 1 {
		t.Errorf("a member resolving while another fires waited %d times, want 1", n)
	}
	before := waits.Load()
	mustProcess(t, p, second)
	if n := waits.Load() - before; n != 0 {
		t.Errorf("the resolution waited in the window %d times, want it sent at once", n)
	}
	var kinds []string
	for _, n := range e.slack.notifications() {
		kinds = append(kinds, fmt.Sprintf("%s opening=%v resolved=%v", n.Kind, n.Opening, n.IncidentResolved))
	}
	want := []string{"firing opening=true resolved=false", "resolved opening=false resolved=false", "resolved opening=false resolved=true"}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("slack got %v, want %v", kinds, want)
	}
}

// unsentSink is a sink that also hears of the resolves not sent
// (alert.UnsentResolves), as Slack's notifier does.
type unsentSink struct {
	*sink
	mu     sync.Mutex
	unsent []*alert.Notification
	fail   error
}

func (u *unsentSink) ResolvedUnsent(_ context.Context, n *alert.Notification) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.unsent = append(u.unsent, n)
	return u.fail
}

// An integration that sends no resolves (send_resolved: false) still hears
// of its incident's resolve when its notifier has work of its own then
// (Slack: the PagerDuty page an Escalate click opened); a failure of that
// work fails the webhook, for Alertmanager to retry.
func TestAnUnsentResolveReachesANotifierThatWantsIt(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	u := &unsentSink{sink: e.slack, fail: errors.New("pagerduty: 503")}
	p.Receivers["slack"][0].Notifier, p.Receivers["slack"][0].SendResolved = u, false
	mustProcess(t, p, tAlert("LagHigh", "firing", "ticket"))
	resolved := tAlert("LagHigh", "resolved", "ticket")
	if _, err := process(t, p, resolved); err == nil || !alert.Retryable(err) {
		t.Fatalf("a failed unsent-resolve hook: err = %v, want a retryable failure", err)
	}
	u.mu.Lock()
	u.fail = nil
	u.mu.Unlock()
	sum := mustProcess(t, p, resolved) // Alertmanager's retry
	if sum.Suppressed != 1 {
		t.Errorf("the retried resolve: %+v, want it suppressed (send_resolved: false)", sum)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.unsent) != 2 || !u.unsent[1].IncidentResolved {
		t.Fatalf("the hook heard %d unsent resolves, want the failed one and its retry", len(u.unsent))
	}
	for _, n := range e.slack.notifications() {
		if n.Kind == alert.KindResolved {
			t.Errorf("the resolve was sent to an integration with send_resolved: false")
		}
	}
}

// silentSink is a sink whose notifier sends nothing for updates, as
// PagerDuty's (alert.SilentUpdates).
type silentSink struct{ *sink }

func (silentSink) SilentUpdates() bool { return true }

// Updates to an integration that sends nothing for them (PagerDuty) never
// wait in the update window; the same updates to Slack do.
func TestSilentUpdatesDoNotWaitInTheUpdateWindow(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	p.UpdateWindow = time.Hour
	var waits atomic.Int32
	routing.SetUpdateWindowWait(p, func(context.Context, time.Duration) { waits.Add(1) })
	mustProcess(t, p, tAlert("First", "firing", "page"))
	mustProcess(t, p, tAlert("Second", "firing", "page", "instance", "gpu-node-200:8000"))
	if n := waits.Load(); n != 0 {
		t.Errorf("a page's update to a silent integration waited %d times, want 0", n)
	}
	if n := len(e.pd.notifications()); n != 2 {
		t.Fatalf("pagerduty got %d notifications, want the opening and the update", n)
	}
	mustProcess(t, p, tAlert("Third", "firing", "ticket"), tAlert("Fourth", "firing", "ticket", "instance", "gpu-node-300:8000"))
	mustProcess(t, p, tAlert("Fifth", "firing", "ticket", "instance", "gpu-node-400:8000"))
	if n := waits.Load(); n != 1 {
		t.Errorf("a ticket's update to slack waited %d times, want 1", n)
	}
}

// The same service's page in another cluster (or namespace) is an incident
// of its own, and pages PagerDuty: in one incident it was an update, which
// PagerDuty is sent nothing for. Alerts without those labels keep the
// incident keys they had.
func TestAPageInAnotherClusterIsAnIncidentOfItsOwn(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	eu := mustProcess(t, p, tAlert("RedisDown", "firing", "page", "cluster", "prod-eu1", "instance", "redis-cache-0"))
	us := mustProcess(t, p, tAlert("RedisDown", "firing", "page", "cluster", "prod-us1", "instance", "redis-session-3"))
	ns := mustProcess(t, p, tAlert("RedisDown", "firing", "page", "cluster", "prod-us1", "namespace", "payments", "instance", "redis-session-4"))
	plain := mustProcess(t, p, tAlert("RedisDown", "firing", "page", "instance", "redis-cache-9"))
	for _, sum := range []*alert.Summary{eu, us, ns, plain} {
		if sum.Notified != 1 {
			t.Errorf("a page: %+v, want it notified (not folded as an update)", sum)
		}
	}
	incidents := openings(t, e)
	want := []string{
		"llm-inference-gpu/chat/TTFT/cluster=prod-eu1",
		"llm-inference-gpu/chat/TTFT/cluster=prod-us1",
		"llm-inference-gpu/chat/TTFT/cluster=prod-us1/namespace=payments",
		"llm-inference-gpu/chat/TTFT",
	}
	if !slices.Equal(incidents, want) {
		t.Errorf("incidents %q, want %q", incidents, want)
	}
}

// openings returns the incidents of PagerDuty's notifications, each of
// which must be an opening (a page folded as an update is an error).
func openings(t *testing.T, e *env) []string {
	t.Helper()
	var incidents []string
	for _, n := range e.pd.notifications() {
		if !n.Opening {
			t.Errorf("PagerDuty got %s for %s as an update, want an opening", n.Kind, n.Incident)
		}
		incidents = append(incidents, n.Incident)
	}
	return incidents
}

// OpenTelemetry's label names (Prometheus 3 rules written `sum by
// ("service.name")`): an alert without a service label is grouped by its
// service.name, and kept apart by k8s.cluster.name and k8s.namespace.name.
// Before, the pages of two services fell into one incident (the second a
// thread reply, no PagerDuty trigger of its own), as did two clusters'.
func TestOpenTelemetryServicesAndClustersAreIncidentsOfTheirOwn(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	otel := func(svc, cluster string) webhooktest.Alert {
		return tAlert("HighErrorRate", "firing", "page", "service", "", "job", "", "service.name", svc, "k8s.cluster.name", cluster, "k8s.namespace.name", "shop")
	}
	for _, a := range []webhooktest.Alert{otel("checkout", "prod-eu"), otel("payments", "prod-eu"), otel("checkout", "prod-us")} {
		if sum := mustProcess(t, p, a); sum.Notified != 1 {
			t.Errorf("%s in %s: %+v, want it notified (not folded as an update)", a.Labels["service.name"], a.Labels["k8s.cluster.name"], sum)
		}
	}
	incidents := openings(t, e)
	want := []string{
		"llm-inference-gpu/checkout/TTFT/k8s.cluster.name=prod-eu/k8s.namespace.name=shop",
		"llm-inference-gpu/payments/TTFT/k8s.cluster.name=prod-eu/k8s.namespace.name=shop",
		"llm-inference-gpu/checkout/TTFT/k8s.cluster.name=prod-us/k8s.namespace.name=shop",
	}
	if !slices.Equal(incidents, want) {
		t.Errorf("incidents %q, want %q", incidents, want)
	}
}

// Pods scraped by one job (Prometheus' example kubernetes-pods, or a
// collector) are told apart by the application their labels name: two
// services' pages sharing that job are incidents of their own, each a
// PagerDuty trigger. Before, the second joined the first as an update
// (a thread reply, nothing sent to PagerDuty).
func TestServicesSharingAScrapeJobAreIncidentsOfTheirOwn(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	pod := func(name, value string) webhooktest.Alert {
		return tAlert("HighErrorRate", "firing", "page", "service", "", "job", "kubernetes-pods", name, value, "namespace", "prod")
	}
	// Grafana's DatasourceNoData of two rules: one alertname, no service
	// or job, the rule in rulename.
	noData := func(rule string) webhooktest.Alert {
		return tAlert("DatasourceNoData", "firing", "page", "service", "", "job", "", "sector", "", "kpi", "", "rulename", rule)
	}
	// A job of its own names the service: its pods' app values (a
	// canary beside the stable pods) neither split it nor merge two
	// releases of one chart.
	own := func(job, name, value string) webhooktest.Alert {
		return tAlert("HighErrorRate", "firing", "page", "service", "", "job", job, name, value, "namespace", "prod")
	}
	alerts := []webhooktest.Alert{
		pod("app", "orders"), pod("app", "billing"),
		pod("app_kubernetes_io_name", "cart"), pod("service_name", "search"),
		noData("High memory usage"), noData("Disk full"),
		own("payments", "app", "payments"), own("a-postgresql", "app_kubernetes_io_name", "postgresql"), own("b-postgresql", "app_kubernetes_io_name", "postgresql"),
		// One service in two regions (two Alertmanagers feeding the
		// router): two incidents, as for two clusters.
		own("search", "region", "us"), own("search", "region", "eu"),
		// Two sites (Wikimedia's per-site Prometheus' external label),
		// two Kubernetes namespaces as Prometheus' example scrape
		// configs name them: two incidents each.
		own("probes", "site", "eqiad"), own("probes", "site", "codfw"),
		own("airflow", "kubernetes_namespace", "airflow-main"), own("airflow", "kubernetes_namespace", "airflow-analytics"),
		// Knative's autoscaler names the revision's namespace
		// namespace_name (its own is knative-serving): two tenants'
		// scale-from-zero pages were one incident (an audit).
		own("autoscaler", "namespace_name", "team-a"), own("autoscaler", "namespace_name", "team-b"),
		// Wikimedia's catch-all pod job.
		own("k8s-pods", "app", "jaeger"), own("k8s-pods", "app", "thanos"),
	}
	for _, a := range alerts {
		if sum := mustProcess(t, p, a); sum.Notified != 1 {
			t.Errorf("%v: %+v, want it notified (not folded as an update)", a.Labels, sum)
		}
	}
	want := []string{
		"llm-inference-gpu/orders/TTFT/namespace=prod",
		"llm-inference-gpu/billing/TTFT/namespace=prod",
		"llm-inference-gpu/cart/TTFT/namespace=prod",
		"llm-inference-gpu/search/TTFT/namespace=prod",
		"DatasourceNoData/unknown///rulename=High_memory_usage",
		"DatasourceNoData/unknown///rulename=Disk_full",
		"llm-inference-gpu/payments/TTFT/namespace=prod",
		"llm-inference-gpu/a-postgresql/TTFT/namespace=prod",
		"llm-inference-gpu/b-postgresql/TTFT/namespace=prod",
		"llm-inference-gpu/search/TTFT/namespace=prod/region=us",
		"llm-inference-gpu/search/TTFT/namespace=prod/region=eu",
		"llm-inference-gpu/probes/TTFT/namespace=prod/site=eqiad",
		"llm-inference-gpu/probes/TTFT/namespace=prod/site=codfw",
		"llm-inference-gpu/airflow/TTFT/namespace=prod/kubernetes_namespace=airflow-main",
		"llm-inference-gpu/airflow/TTFT/namespace=prod/kubernetes_namespace=airflow-analytics",
		"llm-inference-gpu/autoscaler/TTFT/namespace=prod/namespace_name=team-a",
		"llm-inference-gpu/autoscaler/TTFT/namespace=prod/namespace_name=team-b",
		"llm-inference-gpu/jaeger/TTFT/namespace=prod",
		"llm-inference-gpu/thanos/TTFT/namespace=prod",
	}
	if incidents := openings(t, e); !slices.Equal(incidents, want) {
		t.Errorf("incidents %q, want %q", incidents, want)
	}
	// The canary of payments joins its incident: an update, no opening.
	mustProcess(t, p, own("payments", "app", "payments-canary"))
	if ns := e.pd.notifications(); len(ns) != len(want)+1 || ns[len(ns)-1].Incident != "llm-inference-gpu/payments/TTFT/namespace=prod" || ns[len(ns)-1].Opening {
		t.Errorf("the canary of a job's service: %+v, want an update of the service's incident", ns[len(ns)-1])
	}
}

// Aggregated rules (`sum by (model)`, `max by (gpu, Hostname)`) keep no
// service or job: two unrelated pages of one sector — a Triton model
// failing, a GPU's XID error, GitLab's burn-rate pages of two services
// (one KPI) — are incidents of their own, each a PagerDuty trigger. Before, both were keyed "<sector>//" and the second joined the
// first as an update (a thread reply without its runbook, nothing sent to
// PagerDuty). Another firing of the same rule still joins its incident.
func TestUnrelatedPagesOfASectorWithoutAServiceAreIncidentsOfTheirOwn(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	aggregated := func(name string, kv ...string) webhooktest.Alert {
		return tAlert(name, "firing", "page", append([]string{"service", "", "job", "", "instance", "", "kpi", ""}, kv...)...)
	}
	// GitLab's generated burn-rate pages of two services: no service or
	// job, one KPI, EBR; the service is GitLab's `type` label.
	burn := func(name, service string) webhooktest.Alert {
		return tAlert(name, "firing", "page", "service", "", "job", "", "instance", "", "sector", "slo-monitoring", "kpi", "EBR", "type", service, "tier", "sv", "env", "gprd")
	}
	// Ceph's mixin writes type="ceph_default" on every rule (no tier): no
	// service, each aggregated alert its own incident.
	ceph := func(name string) webhooktest.Alert {
		return tAlert(name, "firing", "page", "service", "", "job", "", "instance", "", "sector", "hpc-big-data", "kpi", "", "type", "ceph_default")
	}
	for _, a := range []webhooktest.Alert{
		aggregated("TritonInferenceFailures", "model", "bert-large"),
		aggregated("GPUXidErrorInference", "gpu", "3", "Hostname", "gpu-node-7"),
		burn("CamoproxyServiceLoadbalancerErrorSLOViolation", "camoproxy"),
		burn("WebServiceLoadbalancerErrorSLOViolation", "web"),
		ceph("CephMonQuorumAtRisk"), ceph("CephFilesystemDamaged"),
	} {
		if sum := mustProcess(t, p, a); sum.Notified != 1 {
			t.Errorf("%s: %+v, want it notified (not folded as an update)", a.Labels["alertname"], sum)
		}
	}
	want := []string{"TritonInferenceFailures/llm-inference-gpu//", "GPUXidErrorInference/llm-inference-gpu//",
		"slo-monitoring/camoproxy/EBR/env=gprd", "slo-monitoring/web/EBR/env=gprd",
		"CephMonQuorumAtRisk/hpc-big-data//", "CephFilesystemDamaged/hpc-big-data//"}
	if incidents := openings(t, e); !slices.Equal(incidents, want) {
		t.Errorf("incidents %q, want %q", incidents, want)
	}
	mustProcess(t, p, aggregated("TritonInferenceFailures", "model", "llama-3-70b"))
	if ns := e.pd.notifications(); len(ns) != len(want)+1 || ns[len(ns)-1].Incident != want[0] || ns[len(ns)-1].Opening {
		t.Errorf("another model's failures: %+v, want an update of the rule's incident", ns[len(ns)-1])
	}
}

// Real rules that name their service in Istio's destination labels, run
// under a collector's job, or name which cluster of a system is failing
// (Wikimedia's operations-alerts): two models' error rates (LiftWing's
// rule sums by destination_canonical_service and keeps no job), two
// routers' different BGP failures under job="gnmi", two Kafka clusters'
// under-replicated partitions were each one incident, the second page an
// update PagerDuty was sent nothing for. Each is its own incident now;
// another router's firing of one rule still joins its incident, as
// Alertmanager's grouping by alertname would.
func TestIstioServicesCollectorJobsAndSystemClustersAreIncidentsOfTheirOwn(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	model := func(svc string) webhooktest.Alert {
		return tAlert("LiftWingServiceErrorRate", "firing", "page", "service", "", "job", "", "sector", "llm-inference-api", "kpi", "ERR",
			"destination_canonical_service", svc, "kubernetes_namespace", "istio-system", "site", "eqiad")
	}
	bgp := func(name, router string) webhooktest.Alert {
		return tAlert(name, "firing", "page", "service", "", "job", "gnmi", "instance", router, "sector", "llm-inference-network", "kpi", "", "site", "eqiad")
	}
	// kube-prometheus writes the exporter's Kubernetes Service as
	// `service`: GPU Operator's DCGM exporter is no service either.
	gpu := func(name, node string) webhooktest.Alert {
		return tAlert(name, "firing", "page", "service", "nvidia-dcgm-exporter", "job", "nvidia-dcgm-exporter", "Hostname", node, "sector", "llm-inference-gpu", "kpi", "")
	}
	egress := func(name, host string) webhooktest.Alert {
		return tAlert(name, "firing", "page", "service", "", "job", "", "sector", "slo-monitoring", "kpi", "EBR",
			"destination_canonical_service", "unknown", "destination_service_name", host)
	}
	probe := func(job string) webhooktest.Alert {
		return tAlert("SnmpTargetDown", "firing", "page", "service", "", "job", job, "sector", "llm-inference-network", "kpi", "")
	}
	catchAll := func(name string) webhooktest.Alert {
		return tAlert(name, "firing", "page", "service", "", "job", "kubernetes-service-endpoints", "app", "nvidia-dcgm-exporter", "sector", "llm-inference-gpu", "kpi", "")
	}
	nodeJob := func(name string) webhooktest.Alert {
		return tAlert(name, "firing", "page", "service", "", "job", "node", "instance", "host-7:9100", "sector", "llm-inference-network", "kpi", "LOSS")
	}
	targetDown := func(job string) webhooktest.Alert {
		return tAlert("TargetDown", "firing", "page", "service", job, "job", job, "sector", "slo-monitoring", "kpi", "UP", "namespace", "monitoring")
	}
	kafka := func(cluster string) webhooktest.Alert {
		return tAlert("KafkaUnderReplicatedPartitions", "firing", "page", "service", "", "job", "", "sector", "hpc-big-data", "kpi", "", "kafka_cluster", cluster, "site", "eqiad")
	}
	for _, a := range []webhooktest.Alert{
		model("revertrisk-language-agnostic-predictor-default"), model("aya-llm-predictor-default"),
		bgp("TransitBGPDown", "cr1-eqiad"), bgp("CoreBGPDown", "cr2-eqiad"),
		gpu("GPUXidErrors", "gpu-node-3"), gpu("GPUFellOffTheBus", "gpu-node-9"),
		// An alert on the scrape itself is about the exporter: two
		// exporters' TargetDown stay apart, keyed by their jobs.
		targetDown("node-exporter"), targetDown("nvidia-dcgm-exporter"),
		// Review R11a: Istio's "unknown" is no service (two egress
		// destinations' burns stay apart by alertname and host); two
		// collector jobs of one kind stay apart by their exporter; an
		// exporter under a catch-all job is no service either.
		egress("ErrorBudgetBurn", "api.stripe.com"), egress("EgressErrorBudgetBurn", "BlackHoleCluster"),
		probe("snmp_if_mib"), probe("snmp_apcups"),
		catchAll("GPUUncorrectableRemappedRows"), catchAll("GPURowRemapFailure"),
		// Prometheus' node exporter guide's job is plain `node`.
		nodeJob("HostNetworkReceiveErrors"), nodeJob("HostNetworkTransmitErrors"),
		kafka("main-eqiad"), kafka("jumbo-eqiad"),
	} {
		if sum := mustProcess(t, p, a); sum.Notified != 1 {
			t.Errorf("%v: %+v, want it notified (not folded as an update)", a.Labels, sum)
		}
	}
	want := []string{
		"llm-inference-api/revertrisk-language-agnostic-predictor-default/ERR/kubernetes_namespace=istio-system/site=eqiad",
		"llm-inference-api/aya-llm-predictor-default/ERR/kubernetes_namespace=istio-system/site=eqiad",
		"TransitBGPDown/llm-inference-network///exporter=gnmi/site=eqiad",
		"CoreBGPDown/llm-inference-network///exporter=gnmi/site=eqiad",
		"GPUXidErrors/llm-inference-gpu///exporter=nvidia-dcgm-exporter",
		"GPUFellOffTheBus/llm-inference-gpu///exporter=nvidia-dcgm-exporter",
		"slo-monitoring/node-exporter/UP/namespace=monitoring",
		"slo-monitoring/nvidia-dcgm-exporter/UP/namespace=monitoring",
		"slo-monitoring/api.stripe.com/EBR",
		"EgressErrorBudgetBurn/slo-monitoring//EBR", // BlackHoleCluster is a placeholder too
		"SnmpTargetDown/llm-inference-network///exporter=snmp_if_mib",
		"SnmpTargetDown/llm-inference-network///exporter=snmp_apcups",
		"GPUUncorrectableRemappedRows/llm-inference-gpu///exporter=nvidia-dcgm-exporter",
		"GPURowRemapFailure/llm-inference-gpu///exporter=nvidia-dcgm-exporter",
		"HostNetworkReceiveErrors/llm-inference-network//LOSS/exporter=node",
		"HostNetworkTransmitErrors/llm-inference-network//LOSS/exporter=node",
		"KafkaUnderReplicatedPartitions/hpc-big-data///kafka_cluster=main-eqiad/site=eqiad",
		"KafkaUnderReplicatedPartitions/hpc-big-data///kafka_cluster=jumbo-eqiad/site=eqiad",
	}
	if incidents := openings(t, e); !slices.Equal(incidents, want) {
		t.Errorf("incidents %q, want %q", incidents, want)
	}
	mustProcess(t, p, bgp("TransitBGPDown", "cr2-codfw-but-same-site"))
	if ns := e.pd.notifications(); len(ns) != len(want)+1 || ns[len(ns)-1].Incident != want[2] || ns[len(ns)-1].Opening {
		t.Errorf("another router's transit session down: %+v, want an update of the rule's incident", ns[len(ns)-1])
	}
}

// Grafana-managed alerts: a rule's title is its alertname, free text two
// teams reuse ("Latency SLO breached" in two folders), and no service or
// job is written. Their pages are incidents of their own, kept apart by
// the rule's UID where the alertname leads the key; the second team's page
// was an update of the first's incident, nothing sent to PagerDuty. Alerts
// naming their service still group by sector, service and KPI whatever
// rule fired them. A datasource that fails raises a DatasourceError per
// rule querying it: one incident per datasource, not a page per rule.
func TestGrafanaRulesAreIncidentsOfTheirOwnAndADatasourceOutageOne(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	grafana := func(title, uid, folder string, kv ...string) webhooktest.Alert {
		a := tAlert(title, "firing", "page", append([]string{"service", "", "job", "", "instance", "", "sector", "", "kpi", "",
			"__alert_rule_uid__", uid, "__alert_rule_namespace_uid__", folder + "-uid", "grafana_folder", folder}, kv...)...)
		a.GeneratorURL = "https://grafana.example.com/alerting/grafana/" + uid + "/view?orgId=1"
		return a
	}
	dsError := func(rule, uid, datasource string) webhooktest.Alert {
		return grafana("DatasourceError", uid, "Team Ranking", "rulename", rule, "datasource_uid", datasource, "ref_id", "A")
	}
	contactPoint := func(title, uid, folder string) webhooktest.Alert {
		a := grafana(title, uid, folder)
		delete(a.Labels, "__alert_rule_uid__")
		delete(a.Labels, "__alert_rule_namespace_uid__")
		return a
	}
	// Another Grafana (kube-prometheus-stack's of another cluster) calls
	// its Prometheus by the same UID: its outage is another incident.
	otherGrafana := dsError("Checkout 5xx", "checkout-5xx", "prom-main")
	otherGrafana.GeneratorURL = "https://grafana.cluster-b.example.com/alerting/grafana/checkout-5xx/view?orgId=1"
	// Through an Alertmanager Grafana writes the organisation as the
	// __orgId__ annotation, not in the URL.
	otherOrg := dsError("Search latency", "search-latency", "prom-main")
	otherOrg.GeneratorURL = "https://grafana.example.com/alerting/grafana/search-latency/view"
	otherOrg.Annotations["__orgId__"] = "2"
	// Grafana's default root_url (localhost) tells no Grafana apart:
	// its DatasourceErrors stay keyed by rule, none hidden.
	defaultRoot := func(rule, uid, root string) webhooktest.Alert {
		a := dsError(rule, uid, "prometheus")
		a.GeneratorURL = root + "/alerting/grafana/" + uid + "/view"
		return a
	}
	// Two Grafanas served from sub-paths of one host are two.
	subPath := func(uid, path string) webhooktest.Alert {
		a := dsError("Latency", uid, "prometheus")
		a.GeneratorURL = "https://obs.example.com" + path + "/alerting/grafana/" + uid + "/view"
		return a
	}
	for _, a := range []webhooktest.Alert{
		grafana("Latency SLO breached", "ranking-latency", "Team Ranking"),
		grafana("Latency SLO breached", "embeddings-latency", "Team Embeddings"),
		dsError("Latency SLO breached", "ranking-latency", "prom-main"),
		dsError("Disk full", "ranking-disk", "prom-infra"),
		otherGrafana,
		otherOrg,
		defaultRoot("Checkout 5xx", "cluster-a-5xx", "http://localhost:3000"), defaultRoot("Checkout 5xx", "cluster-b-5xx", "http://grafana.monitoring.svc:3000"),
		// kube-prometheus-stack's in-cluster <service>.<namespace>, the
		// same in every cluster.
		defaultRoot("Checkout 5xx", "cluster-c-5xx", "http://kube-prometheus-stack-grafana.monitoring"), defaultRoot("Checkout 5xx", "cluster-d-5xx", "http://grafana.service.consul:3000"),
		subPath("eu-latency", "/grafana-eu"), subPath("us-latency", "/grafana-us"),
		// A rule that names its service: grouped as any such alert.
		grafana("TTFT p95 high", "chat-ttft-p95", "Team Chat", "service", "chat", "sector", "llm-inference-gpu", "kpi", "TTFT"),
		// Two teams' rules of one title on one service, the sector
		// unknown: one incident, the service's (the UID does not split
		// alerts that name their service).
		grafana("High error rate", "search-errors-a", "Team Search", "service", "search"),
		// Grafana's webhook contact point drops the __labels__: the
		// rule's UID is read from its page's URL.
		contactPoint("Latency SLO breached", "ads-latency", "Team Ads"),
	} {
		if sum := mustProcess(t, p, a); sum.Notified != 1 {
			t.Errorf("%s %s: %+v, want it notified (not folded as an update)", a.Labels["alertname"], a.Labels["__alert_rule_uid__"], sum)
		}
	}
	want := []string{
		"Latency_SLO_breached/unknown///__alert_rule_uid__=ranking-latency",
		"Latency_SLO_breached/unknown///__alert_rule_uid__=embeddings-latency",
		"DatasourceError/unknown///datasource_uid=prom-main@grafana.example.com/1",
		"DatasourceError/unknown///datasource_uid=prom-infra@grafana.example.com/1",
		"DatasourceError/unknown///datasource_uid=prom-main@grafana.cluster-b.example.com/1",
		"DatasourceError/unknown///datasource_uid=prom-main@grafana.example.com/2",
		"DatasourceError/unknown///rulename=Checkout_5xx/__alert_rule_uid__=cluster-a-5xx",
		"DatasourceError/unknown///rulename=Checkout_5xx/__alert_rule_uid__=cluster-b-5xx",
		"DatasourceError/unknown///rulename=Checkout_5xx/__alert_rule_uid__=cluster-c-5xx",
		"DatasourceError/unknown///rulename=Checkout_5xx/__alert_rule_uid__=cluster-d-5xx",
		"DatasourceError/unknown///datasource_uid=prometheus@obs.example.com/grafana-eu/1",
		"DatasourceError/unknown///datasource_uid=prometheus@obs.example.com/grafana-us/1",
		"llm-inference-gpu/chat/TTFT",
		"High_error_rate/unknown/search/",
		"Latency_SLO_breached/unknown///__alert_rule_uid__=ads-latency",
	}
	if incidents := openings(t, e); !slices.Equal(incidents, want) {
		t.Errorf("incidents %q, want %q", incidents, want)
	}
	// The same datasource failing another rule, another rule of the same
	// service and KPI, another series of a rule: updates, no opening.
	for i, a := range []webhooktest.Alert{
		dsError("Error budget burn", "ranking-burn", "prom-main"),
		grafana("TTFT p99 high", "chat-ttft-p99", "Team Chat", "service", "chat", "sector", "llm-inference-gpu", "kpi", "TTFT"),
		grafana("Latency SLO breached", "embeddings-latency", "Team Embeddings", "pod", "embed-1"),
		grafana("High error rate", "search-errors-b", "Team Search Infra", "service", "search"),
	} {
		mustProcess(t, p, a)
		ns := e.pd.notifications()
		if last, of := ns[len(ns)-1], want[[]int{2, 12, 1, 13}[i]]; len(ns) != len(want)+i+1 || last.Opening || last.Incident != of {
			t.Errorf("%s %s: %+v, want an update of %s", a.Labels["alertname"], a.Labels["__alert_rule_uid__"], last, of)
		}
	}
}

// A page's Slack copy names a PagerDuty incident only when the page went
// to PagerDuty too (Notification.Paged): a route that sends pages to Slack
// alone must not say "PagerDuty: paged" (nor offer its Ack and Resolve).
func TestAPageIsPagedOnlyWhenRoutedToPagerDuty(t *testing.T) {
	for _, tc := range []struct {
		name, routes string
		paged        bool
	}{
		{"to Slack alone", "receiver: slack\n", false},
		{"to PagerDuty and Slack", pageToBothRoutes, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.routes = tc.routes
			p := e.pipeline()
			p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
			mustProcess(t, p, tAlert("First", "firing", "page"))
			sent := e.slack.notifications()
			if len(sent) != 1 {
				t.Fatalf("slack got %d notifications, want 1", len(sent))
			}
			if sent[0].Paged != tc.paged {
				t.Errorf("the Slack copy's Paged = %v, want %v", sent[0].Paged, tc.paged)
			}
		})
	}
}

// An update PagerDuty folds into its open incident sends nothing: the
// alert's delivery and the webhook's answer say suppressed, not sent (the
// journal, the console's delivery health and the answer's notified count
// said PagerDuty received what it never did).
func TestASilentUpdateIsRecordedSuppressedNotSent(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	rec := &recorder{}
	p.Recorder = rec
	if sum := mustProcess(t, p, tAlert("First", "firing", "page")); sum.Notified != 1 {
		t.Fatalf("the opening: %+v, want notified 1", sum)
	}
	second := tAlert("Second", "firing", "page", "instance", "gpu-node-200:8000")
	sum, err := process(t, p, second)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Notified != 0 || sum.Suppressed != 1 {
		t.Errorf("the update: notified %d, suppressed %d; want 0 and 1", sum.Notified, sum.Suppressed)
	}
	if got, want := rec.outcomes(), map[string]string{"pagerduty/pagerduty/0": alert.DeliverySuppressed}; !maps.Equal(got, want) {
		t.Errorf("deliveries %q, want %q", got, want)
	}
	// Still confirmed: Alertmanager's repeat of the update is a dedup hit.
	if sum := mustProcess(t, p, second); sum.Notified != 0 || sum.Suppressed != 0 {
		t.Errorf("the update repeated: %+v, want a dedup hit", sum)
	}
}

// An incident resolved by hand at PagerDuty (the Resolve button in Slack)
// while its alerts still fire pages again when a new alert joins it: that
// update, which PagerDuty would otherwise never hear of, goes out as a
// trigger, once; the updates after it are silent again.
func TestAnIncidentResolvedByHandPagesAgainWhenAlertsJoin(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	cfg := flap.DefaultConfig() // as the router runs: it tracks quiet firings
	p.Flap = &cfg
	mustProcess(t, p, tAlert("First", "firing", "page"))
	sent := e.pd.notifications()
	if len(sent) != 1 || !sent[0].Opening {
		t.Fatalf("pagerduty got %d notifications, want the opening", len(sent))
	}
	key := dedup.HandResolvedKey(e.dedup.KeyPrefix, sent[0].Incident)
	if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: "jdoe (U123) via Slack", TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, p, tAlert("First", "firing", "page")) // Alertmanager's repeat: nothing new; First is quiet from now on
	reads := &getLog{Store: e.store}
	p.Store = reads
	mustProcess(t, p, tAlert("First", "firing", "page"))
	if reads.asked("handresolved") {
		t.Fatal("a repeat of a quiet alert read the hand-resolve mark: the steady path pays for nothing it can use")
	}
	mustProcess(t, p, tAlert("Second", "firing", "page", "instance", "gpu-node-200:8000"))
	mustProcess(t, p, tAlert("Third", "firing", "page", "instance", "gpu-node-300:8000"))
	sent = e.pd.notifications()
	if len(sent) != 3 || !sent[1].Opening || sent[2].Opening || sent[1].Incident != sent[0].Incident {
		opening := make([]bool, len(sent))
		for i, n := range sent {
			opening[i] = n.Opening
		}
		t.Fatalf("pagerduty got %d notifications (opening %v), want the opening, the joining alert as a new trigger, then a silent update", len(sent), opening)
	}
	if _, found, _ := e.store.Get(context.Background(), []string{key}); found[0] {
		t.Fatal("the hand-resolve mark is still there after the trigger was delivered")
	}
}

// A new alert joining while the Resolve clicked in Slack is on its way to
// PagerDuty (its mark says "resolving") would be folded into the page the
// resolve closes and never paged (an audit: Resolve at one replica, the
// alert at the other a moment later). Its webhook fails, nothing is sent
// to PagerDuty, and Alertmanager's retry — the resolve done — triggers
// PagerDuty again, once.
func TestAnAlertJoiningWhileAResolveIsOnItsWayPagesOnceItIsDone(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	mustProcess(t, p, tAlert("First", "firing", "page"))
	sent := e.pd.notifications()
	if len(sent) != 1 || !sent[0].Opening {
		t.Fatalf("pagerduty got %d notifications, want the opening", len(sent))
	}
	key := dedup.HandResolvedAtKey(e.dedup.KeyPrefix, sent[0].Incident, "pagerduty/pagerduty/0")
	set := func(v string) {
		t.Helper()
		if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: v, TTL: time.Hour}}); err != nil {
			t.Fatal(err)
		}
	}
	set(dedup.HandResolving("jdoe (U123) via Slack", receivedAt)) // the pipeline's clock
	second := tAlert("Second", "firing", "page", "instance", "gpu-node-200:8000")
	if sum, err := process(t, p, second); err == nil || !alert.Retryable(err) {
		t.Fatalf("an alert joining while the resolve is on its way: %+v, %v; want a retryable error", sum, err)
	}
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("pagerduty got %d notifications while the resolve was on its way, want only the opening", n)
	}
	set(dedup.HandResolved("jdoe (U123) via Slack", receivedAt)) // PagerDuty took the resolve
	mustProcess(t, p, second)                                    // Alertmanager's retry
	sent = e.pd.notifications()
	if len(sent) != 2 || !sent[1].Opening || sent[1].Incident != sent[0].Incident {
		t.Fatalf("pagerduty got %d notifications, want the opening and the joining alert's new trigger", len(sent))
	}
	// A "resolving" mark past its grace (the replica that clicked was
	// killed during the resolve) is read as resolved: the next alert
	// joining pages, where the mark lapsing left it unpaged (a review).
	set(dedup.HandResolving("jdoe (U123) via Slack", receivedAt.Add(-dedup.HandResolvingGrace-time.Second)))
	mustProcess(t, p, tAlert("Third", "firing", "page", "instance", "gpu-node-300:8000"))
	if sent = e.pd.notifications(); len(sent) != 3 || !sent[2].Opening {
		t.Fatalf("pagerduty got %d notifications, want a third, the alert joining after a stale resolving mark as a new trigger", len(sent))
	}
}

// getLog is a store that remembers the keys read with Get.
type getLog struct {
	store.Store
	mu   sync.Mutex
	keys []string
}

func (g *getLog) Get(ctx context.Context, keys []string) ([]string, []bool, error) {
	g.mu.Lock()
	g.keys = append(g.keys, keys...)
	g.mu.Unlock()
	return g.Store.Get(ctx, keys)
}

// asked reports whether a key containing part was read.
func (g *getLog) asked(part string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.ContainsFunc(g.keys, func(k string) bool { return strings.Contains(k, part) })
}

// gateKey marks a webhook's context with a channel its store read waits
// for (gatedStore).
type gateKey struct{}

// gatedStore holds the store read of a webhook whose context carries a
// gate until the gate opens: the webhook is in flight, counted, and not yet
// at its send. When claims is not nil, that webhook's claims (SetNX, after
// its read) also wait for claims to close.
type gatedStore struct {
	store.Store
	claims chan struct{}
	// entered, when not nil, is told each time a gated read starts waiting.
	entered chan struct{}
	// stolen, when not nil, has another replica win the gated webhook's
	// claims (taken just before its own) and is then set; the gated
	// webhook's reads after that (waiting for the other replica's
	// confirmation) wait for awaits to close.
	stolen *atomic.Bool
	awaits chan struct{}
}

func (s gatedStore) Get(ctx context.Context, keys []string) ([]string, []bool, error) {
	if gate, ok := ctx.Value(gateKey{}).(chan struct{}); ok {
		if s.stolen != nil && s.stolen.Load() {
			<-s.awaits
			return s.Store.Get(ctx, keys)
		}
		if s.entered != nil {
			s.entered <- struct{}{}
		}
		<-gate
	}
	return s.Store.Get(ctx, keys)
}

func (s gatedStore) SetNX(ctx context.Context, entries []store.Entry) ([]bool, error) {
	if _, gated := ctx.Value(gateKey{}).(chan struct{}); gated {
		if s.claims != nil {
			<-s.claims
		}
		if s.stolen != nil {
			other := make([]store.Entry, len(entries))
			for i, e := range entries {
				other[i] = store.Entry{Key: e.Key, Value: "another-replica", TTL: e.TTL}
			}
			if _, err := s.Store.SetNX(ctx, other); err != nil {
				return nil, err
			}
			s.stolen.Store(true)
		}
	}
	return s.Store.SetNX(ctx, entries)
}

// gatedPipeline is e's pipeline on a gatedStore (holding the gated
// webhook's claims for claims, when not nil), with an update window the
// test's wait ends, and its incident opened (alert "Open").
func gatedPipeline(t *testing.T, e *env, claims chan struct{}) *routing.Pipeline {
	t.Helper()
	e.store = gatedStore{Store: e.store, claims: claims}
	p := e.pipeline()
	p.UpdateWindow = time.Hour
	mustProcess(t, p, tAlert("Open", "firing", "ticket"))
	return p
}

// gatherSetup is a case of gatherCase.
type gatherSetup struct {
	late       []webhooktest.Alert
	window     func(gathered chan struct{})
	leadFirst  bool
	holdClaims chan struct{}
	want       int
}

// gatherCase opens an incident, then sends an update of it (lead) while a
// second webhook of the same incident (late: its alerts) is held at its
// store read, and lets the late one go once the lead waits in its window.
// c.window is what the lead's wait does with the channel closed when every
// webhook counted in the incident has arrived; with c.leadFirst the lead is
// let finish before the late one goes; c.holdClaims holds the late one's
// claims. Both webhooks must succeed, Slack get c.want messages (the opening
// included), and nothing be left counted.
func gatherCase(t *testing.T, e *env, c gatherSetup) {
	t.Helper()
	late, window, leadFirst, want := c.late, c.window, c.leadFirst, c.want
	p := gatedPipeline(t, e, c.holdClaims)

	waiting := make(chan chan struct{}, 1)
	routing.SetUpdateWindowGather(p, func(_ context.Context, _ time.Duration, gathered chan struct{}) {
		waiting <- gathered
		window(gathered)
	})
	gate := make(chan struct{})
	lateErr, leadErr := lateThenLead(t, p, gate, late...)
	var gathered chan struct{}
	select {
	case gathered = <-waiting:
	case <-time.After(10 * time.Second): // a bound on a hang, not a timing assumption
		t.Fatal("the lead update never waited in its window")
	}
	if gathered == nil {
		t.Fatal("the lead update waits its whole window while another webhook of its incident is in flight")
	}
	var lead error
	if leadFirst {
		lead = <-leadErr // with the late webhook still held
	}
	close(gate)
	if !leadFirst {
		lead = <-leadErr
	}
	if err := <-lateErr; lead != nil || err != nil {
		t.Fatalf("lead: %v, late: %v", lead, err)
	}
	if n := len(e.slack.notifications()); n != want {
		t.Errorf("slack got %d messages, want %d", n, want)
	}
	nothingCounted(t, p)
}

// lateThenLead starts a webhook of late held at its store read by gate,
// and once it is counted, the lead's update of the incident; it returns
// their answers.
func lateThenLead(t *testing.T, p *routing.Pipeline, gate chan struct{}, late ...webhooktest.Alert) (lateErr, leadErr chan error) {
	lateErr = processAsync(t, p, gate, late...)
	eventually(t, "the late webhook counted", func() bool { return routing.CountedInbound(p) > 0 })
	return lateErr, processAsync(t, p, nil, lead())
}

// lead is the alert of the update that waits in the gathering tests.
func lead() webhooktest.Alert {
	return tAlert("Lead", "firing", "ticket", "instance", "gpu-node-100:8000")
}

// processAsync processes a webhook of alerts in a goroutine, held at its
// store read by gate when gate is not nil (gatedStore), and returns its
// answer.
func processAsync(t *testing.T, p *routing.Pipeline, gate chan struct{}, alerts ...webhooktest.Alert) chan error {
	ctx := t.Context()
	if gate != nil {
		ctx = context.WithValue(ctx, gateKey{}, gate)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := p.Process(ctx, payload(t, alerts...))
		errc <- err
	}()
	return errc
}

// updateSizes returns how many alerts each Slack message after the
// opening carried, as "[n m …]".
func updateSizes(e *env) string {
	var sizes []int
	for _, n := range e.slack.notifications()[1:] {
		sizes = append(sizes, len(n.Results))
	}
	return fmt.Sprint(sizes)
}

// nothingCounted fails t when p's coalescer still counts a webhook in an
// incident once every webhook has ended.
func nothingCounted(t *testing.T, p *routing.Pipeline) {
	t.Helper()
	if n := routing.CountedInbound(p); n != 0 {
		t.Errorf("%d incidents still counted after every webhook ended", n)
	}
}

// waitGathered waits for every counted webhook to arrive (bounded: a hang
// fails the test instead of the window ending it).
func waitGathered(t *testing.T) func(chan struct{}) {
	return func(gathered chan struct{}) {
		select {
		case <-gathered:
		case <-time.After(10 * time.Second):
			t.Error("the window did not end when every counted webhook had arrived")
		}
	}
}

// An update that finds another webhook of its incident in flight waits for
// it, not for the whole window: the window ends the moment that webhook's
// update arrives, and both go out as one message. With the window ending
// only on its timer the lead would go out alone (the wait here returns at
// once when nothing is counted) and the test sees two messages.
func TestTheWindowEndsWhenEveryWebhookOfTheIncidentHasArrived(t *testing.T) {
	late := tAlert("Late", "firing", "ticket", "instance", "gpu-node-200:8000")
	// The opening, then one update carrying both webhooks' alerts.
	e := newEnv(t)
	gatherCase(t, e, gatherSetup{late: []webhooktest.Alert{late}, window: waitGathered(t), want: 2})
	if ns := e.slack.notifications(); len(ns) == 2 && len(ns[1].Results) != 2 {
		t.Errorf("the update carried %d alerts, want the lead's and the late one's", len(ns[1].Results))
	}
}

// A webhook counted in the incident that turns out to send it no update —
// Alertmanager repeating an alert already notified — leaves the count as
// soon as its store read says so, ending the wait of the lead's update,
// even while it goes on to claim and open another incident: its claims are
// held here until the lead's update has gone out. Were it counted until it
// knew its batches (or its end), the two would wait for each other and the
// lead's window would end only on the test's bound.
func TestAWebhookWithNothingToSendDoesNotHoldTheWindow(t *testing.T) {
	e := newEnv(t)
	leadSent := make(chan struct{})
	e.slack.setFail(func(n *alert.Notification) error {
		if n.Results[0].Alert.Labels["alertname"] == "Lead" {
			close(leadSent)
		}
		return nil
	})
	// "Open" is the incident's first member: repeating it sends nothing
	// there. The opening, then the lead's update and the other incident's
	// opening.
	elsewhere := tAlert("Elsewhere", "firing", "ticket", "service", "embeddings")
	gatherCase(t, e, gatherSetup{late: []webhooktest.Alert{tAlert("Open", "firing", "ticket"), elsewhere},
		window: waitGathered(t), holdClaims: leadSent, want: 3})
}

// A webhook counted in the incident whose claims another replica wins
// sends no update there: it leaves the count as soon as the claims answer,
// not once it has waited for that replica's confirmation, so the lead's
// window ends at once and its update goes out alone while the late webhook
// still waits. Were it counted until its delivery, the lead would wait for
// it (the wait here fails after its bound). The other replica never
// confirms here: the late webhook answers a retry, and nothing is left
// counted.
func TestAWebhookWhoseClaimsAnotherReplicaWonDoesNotHoldTheWindow(t *testing.T) {
	e := newEnv(t)
	stolen, awaits := new(atomic.Bool), make(chan struct{})
	e.store = gatedStore{Store: e.store, stolen: stolen, awaits: awaits}
	p := e.pipeline()
	p.UpdateWindow = time.Hour
	mustProcess(t, p, tAlert("Open", "firing", "ticket"))
	waiting := make(chan chan struct{}, 1)
	routing.SetUpdateWindowGather(p, func(_ context.Context, _ time.Duration, gathered chan struct{}) {
		waiting <- gathered
		waitGathered(t)(gathered)
	})
	gate := make(chan struct{})
	lateErr, leadErr := lateThenLead(t, p, gate, tAlert("Late", "firing", "ticket", "instance", "gpu-node-200:8000"))
	if g := <-waiting; g == nil {
		t.Fatal("the lead update waits its whole window while another webhook of its incident is in flight")
	}
	close(gate)
	select {
	case err := <-leadErr:
		if err != nil {
			t.Fatalf("lead: %v", err)
		}
	case <-time.After(30 * time.Second): // a bound on a hang; waitGathered reports first
		t.Fatal("the lead never answered")
	}
	if !stolen.Load() {
		t.Fatal("the late webhook's claims were never taken")
	}
	select {
	case err := <-lateErr:
		t.Fatalf("the late webhook ended (%v) before the other replica's confirmation was read", err)
	default:
	}
	close(awaits)
	err := <-lateErr
	var de *alert.DeliveryError
	if !errors.As(err, &de) || !de.Retryable {
		t.Errorf("late: %v, want a retryable delivery error (another replica's send unconfirmed)", err)
	}
	ns := e.slack.notifications()
	if len(ns) != 2 || len(ns[1].Results) != 1 || ns[1].Results[0].Alert.Labels["alertname"] != "Lead" {
		t.Errorf("slack got %d messages, want the opening and the lead's update alone", len(ns))
	}
	nothingCounted(t, p)
}

// When the window ends first (the late webhook is still held), the lead
// goes out alone, its webhook answered while the late one is still held,
// and nothing is left counted once both webhooks end.
func TestAWindowThatEndsFirstLeavesNothingBehind(t *testing.T) {
	late := tAlert("Late", "firing", "ticket", "instance", "gpu-node-200:8000")
	// The opening, then two updates.
	gatherCase(t, newEnv(t), gatherSetup{late: []webhooktest.Alert{late}, window: func(chan struct{}) {}, leadFirst: true, want: 3})
}

// An update waits only for the webhooks counted in its incident before it
// started waiting: one that comes in during the wait does not extend it
// (under a steady stream the window would otherwise never end early); it
// goes out in a later message.
func TestWebhooksCountedDuringTheWaitDoNotExtendIt(t *testing.T) {
	e := newEnv(t)
	p := gatedPipeline(t, e, nil)
	waits := make(chan chan struct{}, 4)
	routing.SetUpdateWindowGather(p, func(_ context.Context, _ time.Duration, gathered chan struct{}) {
		waits <- gathered
		if gathered != nil {
			waitGathered(t)(gathered)
		}
	})
	gate1, gate2 := make(chan struct{}), make(chan struct{})
	early := processAsync(t, p, gate1, tAlert("Early", "firing", "ticket", "instance", "gpu-node-200:8000"))
	eventually(t, "the early webhook counted", func() bool { return routing.CountedInbound(p) == 1 })
	leadErr := processAsync(t, p, nil, lead())
	if g := <-waits; g == nil {
		t.Fatal("the lead waits its whole window while the early webhook is in flight")
	}
	eventually(t, "the lead's cohort sealed", func() bool { return routing.CountedInbound(p) == 0 })
	late := processAsync(t, p, gate2, tAlert("Late", "firing", "ticket", "instance", "gpu-node-300:8000"))
	eventually(t, "the late webhook counted in a new cohort", func() bool { return routing.CountedInbound(p) == 1 })
	close(gate1)
	if err := <-leadErr; err != nil {
		t.Fatalf("lead: %v", err)
	}
	if err := <-early; err != nil {
		t.Fatalf("early: %v", err)
	}
	close(gate2)
	if err := <-late; err != nil {
		t.Fatalf("late: %v", err)
	}
	if sizes := updateSizes(e); sizes != "[2 1]" {
		t.Errorf("updates carried %v alerts, want [2 1]: the lead with the early webhook, then the late one", sizes)
	}
	nothingCounted(t, p)
}

// An update with no other webhook of its incident in flight waits the
// whole window, as before: others may be about to arrive.
func TestALoneUpdateWaitsTheWholeWindow(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.UpdateWindow = time.Hour
	mustProcess(t, p, tAlert("Open", "firing", "ticket"))
	var calls, counted atomic.Int32
	routing.SetUpdateWindowGather(p, func(_ context.Context, _ time.Duration, gathered chan struct{}) {
		calls.Add(1)
		if gathered != nil {
			counted.Add(1)
		}
	})
	mustProcess(t, p, tAlert("Second", "firing", "ticket", "instance", "gpu-node-200:8000"))
	if calls.Load() != 1 || counted.Load() != 0 {
		t.Errorf("a lone update waited %d times, %d of them for counted webhooks; want one wait of the whole window", calls.Load(), counted.Load())
	}
	nothingCounted(t, p)
}

// A round that queued behind a send waits, once that send completes, for
// the webhooks counted in its incident, as a waiting update does: the late
// one joins it and they go out as one message. Without that, the queued
// round goes out at once and the late webhook's update follows alone.
func TestAQueuedRoundWaitsForTheWebhooksCountedInItsIncident(t *testing.T) {
	e := newEnv(t)
	p := gatedPipeline(t, e, nil)
	waiting := make(chan struct{}, 1)
	routing.SetUpdateWindowGather(p, func(_ context.Context, _ time.Duration, gathered chan struct{}) {
		if gathered == nil {
			return // a lone update: its window ends at once here
		}
		waiting <- struct{}{}
		waitGathered(t)(gathered)
	})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.slack.setFail(func(n *alert.Notification) error {
		if n.Results[0].Alert.Labels["alertname"] == "InFlight" {
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	})
	inFlight := processAsync(t, p, nil, tAlert("InFlight", "firing", "ticket", "instance", "gpu-node-100:8000"))
	<-entered
	queued := processAsync(t, p, nil, tAlert("Queued", "firing", "ticket", "instance", "gpu-node-200:8000"))
	eventually(t, "the queued update behind the send", func() bool { return routing.QueuedUpdates(p) == 1 })
	gate := make(chan struct{})
	late := processAsync(t, p, gate, tAlert("Late", "firing", "ticket", "instance", "gpu-node-300:8000"))
	eventually(t, "the late webhook counted", func() bool { return routing.CountedInbound(p) == 1 })
	close(release)
	select {
	case <-waiting:
	case <-time.After(10 * time.Second): // a bound on a hang
		t.Fatal("the queued round went out without waiting for the late webhook counted in its incident")
	}
	close(gate)
	for name, errc := range map[string]chan error{"in flight": inFlight, "queued": queued, "late": late} {
		if err := <-errc; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if sizes := updateSizes(e); sizes != "[1 2]" {
		t.Errorf("updates carried %v alerts, want [1 2]: the one in flight, then the queued and the late one together", sizes)
	}
	nothingCounted(t, p)
}

// Alertmanager repeating a firing already notified everywhere (quiet when
// last seen) counts the webhook in no incident: the steady state costs the
// coalescer nothing and no update waits for it. A new alert of the same
// incident, held at the same point, is counted.
func TestRepeatsOfQuietFiringsAreNotCounted(t *testing.T) {
	e := newEnv(t)
	entered := make(chan struct{})
	e.store = gatedStore{Store: e.store, entered: entered}
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	p.UpdateWindow = time.Hour
	routing.SetUpdateWindowWait(p, func(context.Context, time.Duration) {}) // windows end at once
	open := tAlert("Open", "firing", "ticket")
	mustProcess(t, p, open)
	mustProcess(t, p, open) // seen notified everywhere: quiet from now on
	// countedWhileHeld holds a webhook of a at its store read (after the
	// point where it is counted) and returns how many incidents are counted.
	countedWhileHeld := func(a webhooktest.Alert) int {
		gate := make(chan struct{})
		errc := processAsync(t, p, gate, a)
		<-entered
		n := routing.CountedInbound(p)
		close(gate)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := countedWhileHeld(open); n != 0 {
		t.Errorf("%d incidents counted while a repeat of a quiet firing is in flight, want 0", n)
	}
	if n := countedWhileHeld(tAlert("New", "firing", "ticket", "instance", "gpu-node-200:8000")); n != 1 {
		t.Errorf("%d incidents counted while a new alert of the incident is in flight, want 1", n)
	}
}

// A shared send whose notifier panics fails every webhook it carried, as a
// permanent failure naming the panic, and the router goes on: the send
// queued behind it is not stranded and the next update goes out.
func TestASharedUpdateWhoseNotifierPanicsFailsItsWebhooksNotTheRouter(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	members, errs := coalesceCase(t, e, p, 3, func(*alert.Notification) error { panic("block kit bug") })
	for i, err := range errs {
		if err == nil || isRetryable(err) || !strings.Contains(err.Error(), "notifier panicked: block kit bug") {
			t.Errorf("webhook of member %d: %v, want a permanent failure naming the panic", i, err)
		}
	}
	if got := metric(t, e.reg, "alertrouter_notifier_panics_total", "slack"); got != 1 {
		t.Fatalf("alertrouter_notifier_panics_total{integration=slack} = %v, want 1 (one shared send)", got)
	}
	if sum := mustProcess(t, p, members[0]); sum.Notified != 1 {
		t.Fatalf("retry of member 0: %+v, want it notified", sum)
	}
}

// An incident resolved by hand at PagerDuty while its alert still fires
// gets no reminder at PagerDuty — a reminder is its trigger again, which
// opened a new PagerDuty incident and paged on-call within repeat_interval
// of the Resolve, while Slack said resolved (an audit) —; Slack's thread
// still gets it. Once the alert resolves, the incident's next episode
// opens PagerDuty as any page does, the old mark spent: its reminders
// reach PagerDuty again.
func TestAnIncidentResolvedByHandGetsNoPagerDutyReminder(t *testing.T) {
	e := newEnv(t)
	e.routes = "receiver: pagerduty\nroutes:\n  - receiver: pagerduty\n    continue: true\n  - receiver: slack\n"
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	mustProcess(t, p, tAlert("First", "firing", "page"))
	sent := e.pd.notifications()
	if len(sent) != 1 || !sent[0].Opening || len(e.slack.notifications()) != 1 {
		t.Fatalf("pagerduty got %d notifications, slack %d; want the opening at each", len(sent), len(e.slack.notifications()))
	}
	key := dedup.HandResolvedAtKey(e.dedup.KeyPrefix, sent[0].Incident, "pagerduty/"+p.Receivers["pagerduty"][0].Name)
	if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: "jdoe (U123) via Slack", TTL: 24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(e.dedup.RepeatInterval + time.Minute)
	mustProcess(t, p, tAlert("First", "firing", "page")) // Alertmanager's repeat past repeat_interval
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("pagerduty got %d notifications after the hand resolve, want no reminder", n)
	}
	if sl := e.slack.notifications(); len(sl) != 2 || sl[1].Kind != alert.KindReminder {
		t.Fatalf("slack got %d notifications, want its reminder", len(sl))
	}
	// Firing on past notified_ttl, Alertmanager repeating it: the marker
	// the held-back reminders keep alive says it was notified (an audit:
	// it expired, and the next repeat paged again with no new alert); so
	// is the mark, past its own time to live (a review: it lapsed after a
	// week, and PagerDuty paged again).
	for range 3 {
		e.clock.Advance(e.dedup.NotifiedTTL / 2)
		mustProcess(t, p, tAlert("First", "firing", "page"))
	}
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("pagerduty got %d notifications while the alert fired on past notified_ttl, want none after the hand resolve", n)
	}

	resolved := tAlert("First", "resolved", "page")
	resolved.EndsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, resolved)
	e.clock.Advance(time.Hour)
	again := tAlert("First", "firing", "page")
	again.StartsAt = e.clock.Now().Format(time.RFC3339Nano)
	mustProcess(t, p, again)
	if got := e.pd.notifications(); !got[len(got)-1].Opening {
		t.Fatalf("the next episode did not open PagerDuty")
	}
	if _, found, _ := e.store.Get(context.Background(), []string{key}); found[0] {
		t.Fatal("the earlier episode's hand-resolve mark is still there after the next episode's trigger")
	}
	before := len(e.pd.notifications())
	e.clock.Advance(e.dedup.RepeatInterval + time.Minute)
	mustProcess(t, p, again)
	if got := e.pd.notifications(); len(got) != before+1 || got[len(got)-1].Kind != alert.KindReminder {
		t.Fatalf("the next episode's reminder did not reach PagerDuty (%d notifications, %d before)", len(got), before)
	}
}

// markingStore writes mark (once) just before the claims and Join of the
// webhook after the one it is armed for: a Resolve clicked in Slack whose
// "resolving" mark lands between that webhook's read of the marks and its
// Join.
type markingStore struct {
	store.Store
	mu   sync.Mutex
	mark *store.Entry
}

func (s *markingStore) ClaimJoin(ctx context.Context, claims, also []store.Entry, ops []store.ClaimedOp) store.ClaimJoinResult {
	s.mu.Lock()
	m := s.mark
	s.mark = nil
	s.mu.Unlock()
	if m != nil {
		if err := s.Store.Set(ctx, []store.Entry{*m}); err != nil {
			panic(err)
		}
	}
	return store.ClaimJoin(ctx, s.Store, claims, also, ops)
}

// A Resolve clicked in Slack whose "resolving" mark is written after a
// joining alert's webhook read the marks, but before its Join: the alert
// was folded into the page the resolve then closed, never paged (a review
// measured it 0–10 ms after the click). The marks are read again with the
// Join: the webhook fails, retryable, and Alertmanager's retry pages once
// the resolve is done — on Redis (the read rides the Join's pipeline) as on
// the memory store.
func TestAResolveMarkWrittenJustBeforeAJoinHoldsTheJoin(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testMarkBeforeJoin(t, newEnv(t)) })
	t.Run("redis", func(t *testing.T) { testMarkBeforeJoin(t, redisEnv(t, []string{redistest.Start(t).Addr()}, false)) })
}

func testMarkBeforeJoin(t *testing.T, e *env) {
	p := e.pipeline()
	p.Receivers["pagerduty"][0].Notifier = silentSink{e.pd}
	ms := &markingStore{Store: e.store}
	p.Store = ms
	mustProcess(t, p, tAlert("First", "firing", "page"))
	sent := e.pd.notifications()
	if len(sent) != 1 || !sent[0].Opening {
		t.Fatalf("pagerduty got %d notifications, want the opening", len(sent))
	}
	key := dedup.HandResolvedAtKey(e.dedup.KeyPrefix, sent[0].Incident, "pagerduty/pagerduty/0")
	ms.mu.Lock()
	ms.mark = &store.Entry{Key: key, Value: dedup.HandResolving("jdoe (U123) via Slack", receivedAt), TTL: time.Hour}
	ms.mu.Unlock()
	second := tAlert("Second", "firing", "page", "instance", "gpu-node-200:8000")
	if sum, err := process(t, p, second); err == nil || !alert.Retryable(err) {
		t.Fatalf("an alert joining just after the resolve's mark: %+v, %v; want a retryable error", sum, err)
	}
	if n := len(e.pd.notifications()); n != 1 {
		t.Fatalf("pagerduty got %d notifications while the resolve was on its way, want only the opening", n)
	}
	if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: dedup.HandResolved("jdoe (U123) via Slack", receivedAt), TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, p, second) // Alertmanager's retry, the resolve done
	if sent = e.pd.notifications(); len(sent) != 2 || !sent[1].Opening || sent[1].Incident != sent[0].Incident {
		t.Fatalf("pagerduty got %d notifications, want the opening and the joining alert's new trigger", len(sent))
	}
}
