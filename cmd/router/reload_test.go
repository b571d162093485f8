package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// countKeys counts the keys matching pattern on the Redis at addr.
func countKeys(t *testing.T, addr, pattern string) int {
	t.Helper()
	v, err := redistest.Do(addr, "EVAL", "return #redis.call('keys', ARGV[1])", "0", pattern)
	if err != nil {
		t.Fatalf("count keys on %s: %v", addr, err)
	}
	n, _ := strconv.Atoi(v)
	return n
}

// reloadHarness is one router runtime whose config file a test rewrites
// and reloads, as SIGHUP or /-/reload do.
type reloadHarness struct {
	t    *testing.T
	path string
	rt   *runtime
}

func (h *reloadHarness) write(addr, prefix string, failClosed bool) {
	h.t.Helper()
	cfg := fmt.Sprintf(`store:
  redis: {addrs: [%q], dial_timeout: 200ms, max_retries: -1}
  key_prefix: %q
  fail_closed: %t
dedup: {in_flight_wait: 50ms}
route: {receiver: log}
receivers: [{name: log, log_configs: [{}]}]
`, addr, prefix, failClosed)
	if err := os.WriteFile(h.path, []byte(cfg), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func newReloadHarness(t *testing.T, addr, prefix string) *reloadHarness {
	h := &reloadHarness{t: t, path: filepath.Join(t.TempDir(), "router.yml")}
	h.write(addr, prefix, false)
	h.rt = startRuntime(t, h.path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return h
}

// startRuntime builds the serving runtime of the config file at path, as
// serve does, for a test to reload.
func startRuntime(t *testing.T, path string, logger *slog.Logger) *runtime {
	t.Helper()
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, configFile: path, configFileSet: true, logger: logger}
	cfg, err := m.loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	d := newDeps(prometheus.NewRegistry(), logger, io.Discard)
	rt := &runtime{m: m, deps: d, reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ok"}), reloadTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "t"})}
	d.current = func() *built { return rt.current.Load() }
	st, err := d.openState(cfg.Store, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.build(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	rt.current.Store(b)
	t.Cleanup(func() { rt.current.Load().state.close() })
	return rt
}

func (h *reloadHarness) reload() {
	h.t.Helper()
	if err := h.rt.Reload(); err != nil {
		h.t.Fatalf("reload: %v", err)
	}
}

// process sends one firing page named name through the current generation.
func (h *reloadHarness) process(name string) error {
	h.t.Helper()
	body := fmt.Sprintf(`{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":%q,"severity":"critical"},"startsAt":"2026-12-01T10:00:00Z"}]}`, name)
	msg, err := webhook.Decode([]byte(body), time.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	_, err = h.rt.Current().Processor.Process(context.Background(), msg)
	return err
}

func TestReloadAppliesEveryStoreField(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	h := newReloadHarness(t, a.Addr(), "p1:")
	if err := h.process("First"); err != nil {
		t.Fatal(err)
	}
	if countKeys(t, a.Addr(), "p1:*") == 0 {
		t.Fatal("the first store holds no state after a delivery")
	}

	t.Run("addrs: a new client is used", func(t *testing.T) {
		h.write(b.Addr(), "p1:", false)
		h.reload()
		before := countKeys(t, a.Addr(), "*")
		if err := h.process("Second"); err != nil {
			t.Fatal(err)
		}
		if countKeys(t, b.Addr(), "p1:*") == 0 {
			t.Error("after the reload the state did not go to the new Redis")
		}
		if after := countKeys(t, a.Addr(), "*"); after != before {
			t.Errorf("the old Redis got %d new keys after the reload", after-before)
		}
	})
	t.Run("key_prefix: every key of the pipeline uses the new prefix", func(t *testing.T) {
		h.write(b.Addr(), "p2:", false)
		h.reload()
		old := countKeys(t, b.Addr(), "p1:*")
		if err := h.process("Third"); err != nil {
			t.Fatal(err)
		}
		if countKeys(t, b.Addr(), "p2:*") == 0 {
			t.Error("no key under the new prefix")
		}
		if n := countKeys(t, b.Addr(), "p1:*"); n != old {
			t.Errorf("%d keys written under the old prefix after the reload", n-old)
		}
	})
	t.Run("a store that does not answer: a fail-open router stays ready and delivers", func(t *testing.T) {
		dead := redistest.Start(t)
		addr := dead.Addr()
		dead.Kill()
		if err := h.rt.Ready(context.Background()); err != nil {
			t.Fatalf("ready before the reload: %v", err)
		}
		h.write(addr, "p2:", false)
		h.reload()
		// Every replica reloading the same typo would leave the Service
		// without an endpoint: Alertmanager could deliver nowhere.
		if err := h.rt.Ready(context.Background()); err != nil {
			t.Errorf("a fail-open router reloaded to a store that does not answer is unready: %v", err)
		}
		if err := h.process("FailOpenAfterReload"); err != nil {
			t.Errorf("webhook after the reload: %v; want it delivered fail-open", err)
		}
	})
	t.Run("fail_closed: webhooks answer 5xx and readiness follows", func(t *testing.T) {
		h.write(b.Addr(), "p2:", true)
		h.reload()
		if err := h.rt.Ready(context.Background()); err != nil {
			t.Fatalf("ready before the outage: %v", err)
		}
		b.Kill()
		var de *alert.DeliveryError
		if err := h.process("Fourth"); !errors.As(err, &de) || !de.Retryable {
			t.Errorf("webhook with the store down and fail_closed: %v, want a retryable 5xx", err)
		}
		var err error
		for range 3 {
			err = h.rt.Ready(context.Background())
		}
		if err == nil {
			t.Error("still ready after three failed probes with fail_closed")
		}
	})
	t.Run("a store that cannot be built is rejected and the old one keeps serving", func(t *testing.T) {
		if err := os.WriteFile(h.path, []byte("store: {redis: {addrs: []}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := h.rt.Reload(); err == nil {
			t.Fatal("reload of a store with no addrs succeeded")
		}
		if got := h.rt.current.Load().state.cfg.KeyPrefix; got != "p2:" {
			t.Errorf("after a rejected reload the key prefix is %q, want the old p2:", got)
		}
	})
}

func TestServedWebhooksReachTheJournalAndTheConsole(t *testing.T) {
	a := redistest.Start(t)
	h := newReloadHarness(t, a.Addr(), "j:")
	if err := h.process("JournaledPage"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec := httptest.NewRecorder()
		h.rt.Console().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/decisions?q=JournaledPage", nil))
		if rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), "JournaledPage") && strings.Contains(rec.Body.String(), "log/0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console never showed the webhook's decision and its delivery (status %d):\n%.2000s", rec.Code, rec.Body.String())
		}
		time.Sleep(20 * time.Millisecond) // the journal writer is asynchronous
	}
	if countKeys(t, a.Addr(), "j:journal") != 1 {
		t.Error("no journal stream in Redis under the store's key prefix")
	}
}

// A reload that removes or renames a receiver or an integration leaves the
// open incidents it notified with nothing more through it: said in the
// log, naming each; a reload that keeps them says nothing of the kind.
func TestReloadWarnsOfRemovedIntegrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "router.yml")
	write := func(y string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("route: {receiver: pager}\nreceivers:\n- {name: pager, log_configs: [{}, {}]}\n- {name: chat, log_configs: [{}]}\n")
	var logs syncBuffer
	rt := startRuntime(t, path, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := rt.Reload(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "removed or renamed") {
		t.Fatalf("a reload of the same receivers warns:\n%s", logs.String())
	}
	// chat renamed to team-chat, pager's second integration dropped.
	write("route: {receiver: pager}\nreceivers:\n- {name: pager, log_configs: [{}]}\n- {name: team-chat, log_configs: [{}]}\n")
	if err := rt.Reload(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "removed or renamed receivers or integrations") || !strings.Contains(logs.String(), `removed="chat/log/0, pager/log/1"`) {
		t.Errorf("the reload does not name what it removed:\n%s", logs.String())
	}
}

// Turning the console's replay on by a reload opened a new store: on the
// embedded memory store a new, empty one — the dead letters to replay, the
// open incidents and the journal gone, every firing alert paged again (an
// audit). The store is kept; only the console changes. A reload that
// changes store.key_prefix or incidents.group_by warns of what that does.
func TestReloadTurningReplayOnKeepsTheMemoryStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "router.yml")
	const receivers = "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"
	write := func(y string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(y+receivers), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	var logs syncBuffer
	rt := startRuntime(t, path, slog.New(slog.NewTextHandler(&logs, nil)))
	h := &reloadHarness{t: t, path: path, rt: rt}
	send := func() *alert.Summary {
		t.Helper()
		body := `{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"KeptPage","severity":"critical"},"startsAt":"2026-12-01T10:00:00Z"}]}`
		msg, err := webhook.Decode([]byte(body), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		sum, err := rt.Current().Processor.Process(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if sum := send(); sum.Notified != 1 {
		t.Fatalf("first webhook: %+v, want it notified", sum)
	}
	before := rt.current.Load().state.store
	write("console: {enable_replay: true, auth: {basic_auth: {username: ops, password: c0nsole-pass}}}\n")
	h.reload()
	if rt.current.Load().state.store != before {
		t.Error("turning replays on opened a new store")
	}
	if sum := send(); sum.Deduplicated != 1 || sum.Notified != 0 {
		t.Fatalf("the repeat after turning replays on: %+v, want it deduplicated (the store kept)", sum)
	}
	rec := httptest.NewRecorder()
	rt.Console().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/dead-letters/1-0/replay", nil))
	if strings.Contains(rec.Body.String(), "read-only") {
		t.Errorf("the console still refuses replays after they were turned on: %d %s", rec.Code, rec.Body.String())
	}
	if strings.Contains(logs.String(), "key_prefix") {
		t.Errorf("a reload keeping store.key_prefix warns of it:\n%s", logs.String())
	}
	write("store: {key_prefix: other}\nconsole: {enable_replay: true, auth: {basic_auth: {username: ops, password: c0nsole-pass}}}\n")
	h.reload()
	if !strings.Contains(logs.String(), "this reload changed store.key_prefix") || !strings.Contains(logs.String(), "key_prefix=other") {
		t.Errorf("a reload changing store.key_prefix does not warn, naming it:\n%s", logs.String())
	}
	// So does one changing incidents.group_by (an audit: the next alert of
	// an open incident opened a second PagerDuty incident, silently).
	if strings.Contains(logs.String(), "incidents.group_by") {
		t.Errorf("reloads keeping incidents.group_by warn of it:\n%s", logs.String())
	}
	write("store: {key_prefix: other}\nincidents: {group_by: [service, team]}\nconsole: {enable_replay: true, auth: {basic_auth: {username: ops, password: c0nsole-pass}}}\n")
	h.reload()
	if !strings.Contains(logs.String(), "this reload changed incidents.group_by") || !strings.Contains(logs.String(), "group_by=service,team") {
		t.Errorf("a reload changing incidents.group_by does not warn, naming it:\n%s", logs.String())
	}
}

// routesReloaded starts a runtime on the route tree route(from), reloads
// it unchanged and then with route(to), and returns the logs after each
// reload.
func routesReloaded(t *testing.T, route func(string) string, from, to string) (kept, changed string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "router.yml")
	write := func(arg string) {
		t.Helper()
		y := "route: " + route(arg) + "\nreceivers: [{name: log, log_configs: [{}]}]\n"
		if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(from)
	var logs syncBuffer
	rt := startRuntime(t, path, slog.New(slog.NewTextHandler(&logs, nil)))
	h := &reloadHarness{t: t, path: path, rt: rt}
	h.reload()
	kept = logs.String()
	write(to)
	h.reload()
	return kept, logs.String()
}

// A reload changing a route's group_by forms the incidents of the alerts
// it routes under other keys, as changing incidents.group_by does: it
// warns too, naming the route (a review found it silent).
func TestAReloadChangingARoutesGroupByWarns(t *testing.T) {
	kept, changed := routesReloaded(t, func(groupBy string) string {
		return "{receiver: log, group_by: [" + groupBy + "]}"
	}, "alertname", "alertname, team")
	if strings.Contains(kept, "group_by of routes") {
		t.Errorf("a reload keeping the routes' group_by warns of it:\n%s", kept)
	}
	if !strings.Contains(changed, "this reload changed the group_by of routes") || !strings.Contains(changed, "route.group_by=alertname,team") {
		t.Errorf("a reload changing a route's group_by does not warn, naming it:\n%s", changed)
	}
}

// A route with `group_by: []` names its one incident by its matchers: a
// reload changing them moves its incidents to a new key — the next alert
// a second page — and warns as a changed group_by does (a review found it
// silent).
func TestAReloadChangingTheMatchersOfARouteGroupingByNothingWarns(t *testing.T) {
	kept, changed := routesReloaded(t, func(matcher string) string {
		return "{receiver: log, routes: [{receiver: log, matchers: ['" + matcher + "'], group_by: []}]}"
	}, `team="db"`, `team=~"db|dba"`)
	if strings.Contains(kept, "group_by of routes") {
		t.Errorf("a reload keeping the route warns:\n%s", kept)
	}
	if !strings.Contains(changed, "this reload changed the group_by of routes") || !strings.Contains(changed, `team=~\"db|dba\"`) {
		t.Errorf("a reload changing the matchers of a group_by: [] route does not warn, naming its new incident:\n%s", changed)
	}
	// A route inserted before it moves no incident: no warning (a
	// review: it warned, the route's place having changed).
	_, inserted := routesReloaded(t, func(before string) string {
		return "{receiver: log, routes: [" + before + "{receiver: log, matchers: ['team=\"db\"'], group_by: []}]}"
	}, "", "{receiver: log, matchers: ['team=\"web\"']}, ")
	if strings.Contains(inserted, "group_by of routes") {
		t.Errorf("a route inserted before a group_by: [] route warns:\n%s", inserted)
	}
}

// connCounter serves h on a new loopback server and counts the
// connections clients opened to it and those closed since.
type connCounter struct {
	*httptest.Server
	opened, closed atomic.Int64
}

func countConns(t *testing.T, h http.Handler) *connCounter {
	c := &connCounter{Server: httptest.NewUnstartedServer(h)}
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			c.opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			c.closed.Add(1)
		}
	}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

// A reload replaces every notifier; the replaced ones kept their idle
// keep-alive connections to PagerDuty and Slack (two goroutines and their
// buffers each) until the transport's five-minute idle timeout: with 300
// receivers, 300 more connections to each service per reload (an audit:
// 1,646 → 2,549 over three reloads, RSS 65 → 400 MB). The reload closes
// them; the new notifiers dial their own.
func TestAReloadClosesTheReplacedNotifiersConnections(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	pdConns, slConns := countConns(t, pd.Config.Handler), countConns(t, sl.Config.Handler)
	path := writeFile(t, "router.yml", fmt.Sprintf(`route:
  receiver: triage
  routes: [{receiver: oncall, matchers: ['decision="page"'], continue: true}, {receiver: triage}]
receivers:
  - {name: oncall, pagerduty_configs: [{routing_key: %s, url: %s}]}
  - {name: triage, slack_configs: [{token: xoxb-router, api_url: %s, channel: '#triage'}]}
`, pdtest.RoutingKey, pdConns.URL+"/v2/enqueue", slConns.URL+"/api/"))
	rt := startRuntime(t, path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h := &reloadHarness{t: t, path: path, rt: rt}
	if err := h.process("GPUDown"); err != nil {
		t.Fatal(err)
	}
	if len(pd.Events()) != 1 || len(sl.Parents()) != 1 || pdConns.opened.Load() == 0 || slConns.opened.Load() == 0 {
		t.Fatalf("PagerDuty %d events over %d connections, Slack %d parents over %d; want the page at both",
			len(pd.Events()), pdConns.opened.Load(), len(sl.Parents()), slConns.opened.Load())
	}
	pdOpen, slOpen := pdConns.opened.Load()-pdConns.closed.Load(), slConns.opened.Load()-slConns.closed.Load()
	h.reload()
	waitUntil(t, "the replaced notifiers' connections closing", new(strings.Builder), func() bool {
		return pdConns.opened.Load()-pdConns.closed.Load() < pdOpen && slConns.opened.Load()-slConns.closed.Load() < slOpen
	})
	// The new generation delivers over connections of its own.
	if err := h.process("DiskFull"); err != nil {
		t.Fatal(err)
	}
	if len(pd.Events()) != 2 || len(sl.Parents()) != 2 {
		t.Fatalf("after the reload PagerDuty has %d events, Slack %d parents; want 2 each", len(pd.Events()), len(sl.Parents()))
	}
}

// seriesOf counts, by metric name, the series the runtime's registry
// exports whose labels include every label of match.
func seriesOf(t *testing.T, rt *runtime, match map[string]string) map[string]int {
	t.Helper()
	mfs, err := rt.deps.reg.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
	series:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range match {
				if labels[k] != v {
					continue series
				}
			}
			out[mf.GetName()]++
		}
	}
	return out
}

// A reload that removed receivers kept exporting their series (created at
// zero for every integration) until the router restarted: 26,000 series
// of 300 removed receivers (an audit). The reload deletes the series of
// the receivers, and of the kinds of integration of a receiver, that it
// removed; those it kept stay. The dispatch core's send histogram is per
// kind of integration, not per receiver (a third of all series with 302
// receivers): the notifier's histogram is per receiver.
func TestAReloadForgetsTheSeriesOfRemovedReceivers(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	const receivers = `
  - {name: oncall, pagerduty_configs: [{routing_key: %[1]s, url: %[2]s}]}
  - {name: triage, slack_configs: [{token: xoxb-router, api_url: %[3]s, channel: '#triage'}]}
  - name: mixed
    slack_configs: [{token: xoxb-router, api_url: %[3]s, channel: '#triage'}]
`
	full := fmt.Sprintf(`webhook: {timeout: 1s}
route:
  receiver: triage
  routes: [{receiver: oncall, matchers: ['decision="page"'], continue: true}, {receiver: mixed}]
receivers:`+receivers+`    pagerduty_configs: [{routing_key: %[1]s, url: %[2]s}]
`, pdtest.RoutingKey, pd.EnqueueURL(), sl.APIURL())
	path := writeFile(t, "router.yml", full)
	rt := startRuntime(t, path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h := &reloadHarness{t: t, path: path, rt: rt}
	if err := h.process("GPUDown"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]string{{"receiver": "oncall"}, {"receiver": "mixed", "integration": "pagerduty"}, {"receiver": "mixed", "integration": "slack"}} {
		if got := seriesOf(t, rt, m); got["alertrouter_notifications_total"] == 0 || got["alertrouter_notifier_panics_total"] == 0 || got["alertrouter_dead_letters_total"] == 0 {
			t.Fatalf("series of %v before the reload: %v; want them created", m, got)
		}
	}
	if got := seriesOf(t, rt, map[string]string{"integration": "pagerduty"})["alertrouter_notification_send_duration_seconds"]; got != 1 {
		t.Errorf("send duration series of pagerduty = %d, want one (per kind, not per receiver)", got)
	}
	if got := seriesOf(t, rt, map[string]string{"receiver": "oncall"})["alertrouter_notification_send_duration_seconds"]; got != 0 {
		t.Errorf("send duration has %d series of receiver oncall, want none", got)
	}
	// oncall removed, mixed loses its PagerDuty.
	if err := os.WriteFile(path, []byte(fmt.Sprintf(`webhook: {timeout: 1s}
route:
  receiver: triage
  routes: [{receiver: mixed}]
receivers:`+strings.Replace(receivers, "  - {name: oncall, pagerduty_configs: [{routing_key: %[1]s, url: %[2]s}]}\n", "", 1)+"# %[1]s %[2]s\n",
		pdtest.RoutingKey, pd.EnqueueURL(), sl.APIURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	h.reload()
	if got := seriesOf(t, rt, map[string]string{"receiver": "oncall"}); len(got) != 0 {
		t.Errorf("series of the removed receiver oncall after the reload: %v; want none", got)
	}
	if got := seriesOf(t, rt, map[string]string{"receiver": "mixed", "integration": "pagerduty"}); len(got) != 0 {
		t.Errorf("series of mixed's removed PagerDuty after the reload: %v; want none", got)
	}
	for _, m := range []map[string]string{{"receiver": "triage"}, {"receiver": "mixed", "integration": "slack"}} {
		if got := seriesOf(t, rt, m); got["alertrouter_notifications_total"] == 0 || got["alertrouter_notifier_panics_total"] == 0 || got["alertrouter_dead_letters_total"] == 0 {
			t.Errorf("series of %v after the reload: %v; want them kept", m, got)
		}
	}
	// Put back before the first reload's second look (webhook.timeout
	// + 5 s after it): that look judges against the configuration then in
	// force, which holds oncall again — its series stay, and count (a
	// review: deleted, they were never exported again).
	if err := os.WriteFile(path, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	h.reload()
	time.Sleep(time.Second + 5*time.Second + 500*time.Millisecond)
	if err := h.process("DiskFull"); err != nil {
		t.Fatal(err)
	}
	if got := seriesOf(t, rt, map[string]string{"receiver": "oncall", "integration": "pagerduty", "outcome": "success"}); got["alertrouter_notifications_total"] != 1 {
		t.Errorf("oncall's success series after it was put back: %v; want it exported", got)
	}
}
