package slolive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// standIn is a Prometheus HTTP API stand-in answering Sloth's queries with
// fixed values (error ratio 5 % over every window, budget 1 %, 40 % left),
// or failing while fail is set.
type standIn struct {
	*httptest.Server
	requests atomic.Int64
	fail     atomic.Bool
	// authorized counts the requests that carried an Authorization header.
	authorized atomic.Int64
	// risingSince, when set, makes the error ratio 3 % (instead of 5 %)
	// for queries evaluated more than 10 minutes before it.
	risingSince time.Time
}

func newStandIn(t *testing.T) *standIn {
	s := &standIn{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if r.Header.Get("Authorization") != "" {
			s.authorized.Add(1)
		}
		if s.fail.Load() {
			http.Error(w, `{"status":"error","errorType":"unavailable","error":"overloaded"}`, http.StatusServiceUnavailable)
			return
		}
		_ = r.ParseForm()
		q := r.Form.Get("query")
		var res []string
		// Prometheus answers the series of the sloth_id asked for.
		id := "svc"
		if m := queriedSlothID.FindStringSubmatch(q); m != nil {
			id = m[1]
		}
		sample := func(name string, v float64, extra string) string {
			return fmt.Sprintf(`{"metric":{"__name__":%q,"sloth_id":%q%s},"value":[%d,"%g"]}`, name, id, extra, time.Now().Unix(), v)
		}
		switch {
		case strings.Contains(q, slothSLIPrefix):
			ratio := 0.05
			if ts, err := strconv.ParseFloat(r.Form.Get("time"), 64); err == nil && !s.risingSince.IsZero() &&
				time.Unix(int64(ts), 0).Before(s.risingSince.Add(-10*time.Minute)) {
				ratio = 0.03
			}
			for _, w := range testWindows {
				res = append(res, sample(slothSLIPrefix+w, ratio, `,"sloth_window":"`+w+`"`))
			}
		case strings.Contains(q, slothErrorBudget):
			res = append(res, sample(slothErrorBudget, 0.01, ""), sample(slothBudgetRemaining, 0.4, ""))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(res, ","))
	}))
	t.Cleanup(s.Close)
	return s
}

// queriedSlothID finds the sloth_id a query selects.
var queriedSlothID = regexp.MustCompile(`sloth_id="([^"]*)"`)

func slothAlertID(id string) *alert.Alert {
	a := slothAlert()
	a.Labels["sloth_id"] = id
	return a
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestSlowPrometheusIsCancelledAtTheTimeout(t *testing.T) {
	cancelled := make(chan struct{}, 16)
	answered := make(chan struct{}, 16)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the request first: the server notices a client going away
		// (and cancels r.Context()) only once the body is consumed.
		_ = r.ParseForm()
		select {
		case <-time.After(2 * time.Second):
			answered <- struct{}{}
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
		case <-r.Context().Done():
			cancelled <- struct{}{}
		}
	}))
	defer slow.Close()
	cfg := DefaultConfig() // timeout 300ms
	cfg.URL = slow.URL
	reg := prometheus.NewRegistry()
	c := newClient(t, cfg, Options{Registerer: reg})

	_, err := c.Lookup(context.Background(), slothAlert())
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	// Every query of the set was cancelled by the lookup's deadline, none
	// was answered: Lookup did not wait for the 2 s answer.
	for range 3 {
		select {
		case <-cancelled:
		case <-answered:
			t.Fatal("the stand-in answered: the lookup waited for it")
		case <-time.After(10 * time.Second):
			t.Fatal("the stand-in never saw its request cancelled")
		}
	}
	if n := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultTimeout)); n != 1 {
		t.Errorf("lookups{result=timeout} = %g, want 1", n)
	}
}

func TestCallerDeadlineEndsTheWait(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	// The shared fetch goes on after the caller gives up (its own timeout
	// is an hour here) and its requests may be waiting in the handler:
	// release them before Close, which waits for every active request.
	defer func() {
		close(block)
		srv.Close()
	}()
	cfg := DefaultConfig()
	cfg.URL = srv.URL
	cfg.Timeout.Set("1h")
	c := newClient(t, cfg, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Lookup(ctx, slothAlert()); !errors.Is(err, ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want ErrTimeout and context.Canceled", err)
	}
}

func TestCircuitBreakerOpensAfterThreeFailuresAndCloses(t *testing.T) {
	s := newStandIn(t)
	clock := &fakeClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.URL = s.URL
	cfg.CacheTTL = 0
	reg := prometheus.NewRegistry()
	c := newClient(t, cfg, Options{Registerer: reg, Now: clock.Now})
	lookup := func() error { _, err := c.Lookup(context.Background(), slothAlert()); return err }

	s.fail.Store(true)
	for i := range 3 {
		if err := lookup(); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("failure %d: err %v, want ErrUnavailable", i+1, err)
		}
	}
	// Count the queries the client sent (each is counted when its Query
	// returns, before Lookup does), not the stand-in's requests: a query the
	// failing lookup cancelled may still reach the stand-in's handler after
	// Lookup returned, and would be taken for one the open breaker sent.
	queries := func() float64 {
		return testutil.ToFloat64(c.metrics.queries.WithLabelValues("failure")) + testutil.ToFloat64(c.metrics.queries.WithLabelValues("success"))
	}
	sent := queries()
	if sent == 0 {
		t.Fatal("no query counted for the three failed lookups")
	}
	if err := lookup(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("after 3 failures: err %v, want ErrBreakerOpen", err)
	}
	if queries() != sent {
		t.Error("an open breaker still queried Prometheus")
	}
	if g := testutil.ToFloat64(c.metrics.breakerOpen); g != 1 {
		t.Errorf("breakers_open = %g, want 1", g)
	}

	clock.Advance(29 * time.Second)
	if err := lookup(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("29s later: err %v, want ErrBreakerOpen", err)
	}
	clock.Advance(time.Second)
	// Half-open: one failure opens it again at once.
	if err := lookup(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("30s later (still failing): err %v, want ErrUnavailable", err)
	}
	if err := lookup(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("a failed probe must reopen the breaker: err %v", err)
	}
	clock.Advance(30 * time.Second)
	s.fail.Store(false)
	if err := lookup(); err != nil {
		t.Fatalf("Prometheus back: %v", err)
	}
	if g := testutil.ToFloat64(c.metrics.breakerOpen); g != 0 {
		t.Errorf("breakers_open = %g after recovery, want 0", g)
	}
	if err := lookup(); err != nil {
		t.Fatalf("closed breaker: %v", err)
	}
	if n := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultBreakerOpen)); n != 3 {
		t.Errorf("lookups{result=breaker_open} = %g, want 3", n)
	}
}

func TestCacheTTL(t *testing.T) {
	s := newStandIn(t)
	clock := &fakeClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.URL = s.URL
	c := newClient(t, cfg, Options{Now: clock.Now})
	for range 3 {
		if _, err := c.Lookup(context.Background(), slothAlert()); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.requests.Load(); n != 3 {
		t.Errorf("3 lookups within the TTL sent %d queries, want one set of 3", n)
	}
	clock.Advance(15 * time.Second)
	if _, err := c.Lookup(context.Background(), slothAlert()); err != nil {
		t.Fatal(err)
	}
	if n := s.requests.Load(); n != 6 {
		t.Errorf("after the TTL: %d queries, want 6", n)
	}
	// Another SLO is another query set.
	if _, err := c.Lookup(context.Background(), slothAlertID("other")); err != nil {
		t.Fatal(err)
	}
	if n := s.requests.Load(); n != 9 {
		t.Errorf("another SLO: %d queries, want 9", n)
	}
	// The SLO's ticket alert (Sloth's other tier) reads the same set: its
	// sloth_severity is the alert's, never its series'.
	ticket := slothAlert()
	ticket.Labels["sloth_severity"] = "ticket"
	ticket.Labels["alertname"] = "AvailabilityLowErrorRate"
	if _, err := c.Lookup(context.Background(), ticket); err != nil {
		t.Fatal(err)
	}
	if n := s.requests.Load(); n != 9 {
		t.Errorf("the SLO's ticket alert within the TTL: %d queries, want still 9", n)
	}
}

func TestGeneratorURLIsNotFollowedByDefault(t *testing.T) {
	configured, named := newStandIn(t), newStandIn(t)
	a := slothAlert()
	a.GeneratorURL = named.URL + "/graph?g0.expr=up&g0.tab=1"
	for _, follow := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.URL = configured.URL
		cfg.FromGeneratorURL = follow
		c := newClient(t, cfg, Options{})
		if _, err := c.Lookup(context.Background(), a); err != nil {
			t.Fatalf("from_generator_url %v: %v", follow, err)
		}
	}
	if configured.requests.Load() != 3 || named.requests.Load() != 3 {
		t.Errorf("configured got %d, generatorURL host got %d; want 3 each (the host only when allowed)",
			configured.requests.Load(), named.requests.Load())
	}
	// Not an http(s) URL: the configured one is used.
	a.GeneratorURL = "file:///etc/passwd"
	cfg := DefaultConfig()
	cfg.URL, cfg.FromGeneratorURL = configured.URL, true
	if _, err := newClient(t, cfg, Options{}).Lookup(context.Background(), a); err != nil || configured.requests.Load() != 6 {
		t.Errorf("file: generatorURL: err %v, configured requests %d", err, configured.requests.Load())
	}
	// vmalert's and Grafana's generatorURLs name a page, not Prometheus'
	// /graph: their paths were taken as the API's prefix
	// (/vmalert/alert/api/v1/query: 404, "unavailable"). prometheus.url is
	// asked.
	for _, g := range []string{"/vmalert/alert?group_id=1&alert_id=2", "/alerting/grafana/1afz29v7z/view?orgId=1"} {
		before := configured.requests.Load()
		a.GeneratorURL = named.URL + g
		if _, err := newClient(t, cfg, Options{}).Lookup(context.Background(), a); err != nil || configured.requests.Load() != before+3 {
			t.Errorf("generatorURL %s: err %v, configured requests %d, want 3 more", g, err, configured.requests.Load()-before)
		}
	}
}

// Credentials written in prometheus.url (user:password@, as
// alertmanager.url takes them) were dropped: a Prometheus behind basic auth
// answered every lookup 401. They are sent as basic auth.
func TestCredentialsInTheURLAreSent(t *testing.T) {
	prom := newStandIn(t)
	inner := prom.Config.Handler
	prom.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "pu" || p != "prom Pw" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
	u, err := url.Parse(prom.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User, u.Path = url.UserPassword("pu", "prom Pw"), "/prom/"
	c := newClient(t, config(u.String()), Options{})
	if _, err := c.Lookup(context.Background(), slothAlert()); err != nil {
		t.Fatalf("Lookup with credentials in the URL: %v", err)
	}
	if _, err := c.Probe(context.Background()); err != nil {
		t.Fatalf("Probe with credentials in the URL: %v", err)
	}
}

// With from_generator_url, anyone who can send the router an alert chooses
// the host it queries: prometheus.http_config's credentials went there
// too. They go to prometheus.url's origin only.
func TestCredentialsGoOnlyToTheConfiguredPrometheus(t *testing.T) {
	configured, named := newStandIn(t), newStandIn(t)
	cfg := DefaultConfig()
	cfg.URL, cfg.FromGeneratorURL = configured.URL, true
	cfg.HTTPConfig.Authorization = &commoncfg.Authorization{Type: "Bearer", Credentials: "SECRET-PROM-555"}
	c := newClient(t, cfg, Options{})
	a := slothAlert()
	a.GeneratorURL = named.URL + "/graph?g0.expr=up"
	if _, err := c.Lookup(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	b := slothAlert()
	b.Labels["sloth_id"] = "other"
	b.GeneratorURL = configured.URL + "/graph?g0.expr=up"
	if _, err := c.Lookup(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if named.requests.Load() == 0 || named.authorized.Load() != 0 {
		t.Errorf("the generatorURL's host got %d requests, %d with credentials; want some, none with credentials", named.requests.Load(), named.authorized.Load())
	}
	if configured.requests.Load() == 0 || configured.authorized.Load() != configured.requests.Load() {
		t.Errorf("prometheus.url got %d requests, %d with credentials; want all with them", configured.requests.Load(), configured.authorized.Load())
	}
}

func TestNotAnSLOAlert(t *testing.T) {
	s := newStandIn(t)
	cfg := DefaultConfig()
	cfg.URL = s.URL
	c := newClient(t, cfg, Options{})
	a := &alert.Alert{}
	a.Labels = map[string]string{"alertname": "HighCPU", "severity": "critical"}
	if _, err := c.Lookup(context.Background(), a); !errors.Is(err, ErrNotSLO) {
		t.Errorf("err %v, want ErrNotSLO", err)
	}
	// An slo label without long/short is hand-rolled: no templates, no lookup.
	a.Labels["slo"] = "api"
	if _, err := c.Lookup(context.Background(), a); !errors.Is(err, ErrNotSLO) {
		t.Errorf("hand-rolled without templates: err %v, want ErrNotSLO", err)
	}
	if s.requests.Load() != 0 {
		t.Error("queried Prometheus for an alert without an SLO")
	}
}

func TestNoRecordingRulesIsNoData(t *testing.T) {
	s := newStandIn(t)
	cfg := DefaultConfig()
	cfg.URL = s.URL
	c := newClient(t, cfg, Options{})
	// The stand-in knows nothing of Pyrra.
	if _, err := c.Lookup(context.Background(), pyrraAlert("api-errors")); !errors.Is(err, ErrNoData) {
		t.Errorf("err %v, want ErrNoData", err)
	}
	// No data is not a failure of Prometheus: the breaker stays closed.
	for range 5 {
		_, _ = c.Lookup(context.Background(), pyrraAlert("api-errors"))
	}
	if _, err := c.Lookup(context.Background(), slothAlert()); err != nil {
		t.Errorf("after 6 no-data lookups: %v", err)
	}
}

// countingProxy forwards to a real Prometheus and counts the queries by
// expression.
type countingProxy struct {
	*httptest.Server
	mu     sync.Mutex
	byExpr map[string]int
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{byExpr: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		expr := form.Get("query")
		if expr == "" {
			expr = r.URL.Query().Get("query")
		}
		p.mu.Lock()
		p.byExpr[expr]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *countingProxy) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.byExpr))
	for k, v := range p.byExpr {
		out[k] = v
	}
	return out
}

// storm sends n concurrent lookups of one SLO and checks that Prometheus
// saw at most 2 queries per expression.
func storm(t *testing.T, promURL string, n int, a func() *alert.Alert) {
	p := newCountingProxy(t, promURL)
	c := newClient(t, config(p.URL), Options{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if _, err := c.Lookup(context.Background(), a()); err != nil {
				errs <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("lookup in the storm: %v", err)
	}
	counts := p.counts()
	if len(counts) == 0 {
		t.Fatal("no query reached Prometheus")
	}
	for expr, sent := range counts {
		// burn and burn_before share an expression (now and 15m ago).
		if sent > 2 {
			t.Errorf("%d alerts of one SLO sent %q %d times, want at most 2", n, expr, sent)
		}
	}
	t.Logf("%d concurrent lookups: queries by expression %v", n, counts)
}

func TestSlothTrendAndDetails(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	s := newStandIn(t)
	s.risingSince = clock.Now()
	cfg := DefaultConfig()
	cfg.URL = s.URL
	c := newClient(t, cfg, Options{Now: clock.Now})
	lc, err := c.Lookup(context.Background(), slothAlert())
	if err != nil {
		t.Fatal(err)
	}
	if lc.Trend != TrendRising || lc.BurnBefore != 3 || lc.TrendWindow != time.Hour {
		t.Errorf("trend %q over %s, before %g; want rising over 1h from 3", lc.Trend, lc.TrendWindow, lc.BurnBefore)
	}
	want := map[string]string{
		"summary": "budget 40 % left · burn 1h 5.0× · 6h 5.0× · rising", "source": "sloth",
		"budget_remaining": "0.4", "trend": "rising", "burn_5m": "5", "burn_30m": "5", "burn_1h": "5",
		"burn_2h": "5", "burn_6h": "5", "burn_1d": "5", "burn_3d": "5",
	}
	got := lc.Details()
	if len(got) != len(want) {
		t.Errorf("Details() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Details()[%q] = %q, want %q", k, got[k], v)
		}
	}
}

// A Pyrra SLO grouped by route fires one alert per route; each reads the
// burn rates of its own route, not those of whichever route was looked up
// first within the cache's TTL (the cache was keyed by the SLO alone).
func TestGroupedPyrraAlertsReadTheirOwnSeries(t *testing.T) {
	ratios := map[string]float64{"/a": 0.3, "/b": 0}
	srv := vectorServer(t, func(q string, now int64) (res []string) {
		switch {
		case strings.Contains(q, pyrraBurnInfix):
			for route, v := range ratios {
				for _, win := range []string{"5m", "1h"} {
					res = append(res, fmt.Sprintf(`{"metric":{"__name__":"http_requests:burnrate%s","slo":"api","route":%q},"value":[%d,"%g"]}`, win, route, now, v))
				}
			}
		case strings.Contains(q, pyrraObjective):
			res = append(res, fmt.Sprintf(`{"metric":{"__name__":%q,"slo":"api"},"value":[%d,"0.99"]}`, pyrraObjective, now))
		}
		return res
	})
	c := newClient(t, config(srv.URL), Options{})
	worst := func(route string) float64 {
		return worstBurn(t, c, map[string]string{"alertname": "ErrorBudgetBurn", "slo": "api", "long": "1h", "short": "5m", "severity": "critical", "route": route})
	}
	if a, b := worst("/a"), worst("/b"); a < 29 || b != 0 {
		t.Fatalf("worst burn of route /a %g, of /b %g: want 30 and 0, each its own series", a, b)
	}
}

// vectorServer is a Prometheus stand-in answering every query with the
// instant vector result gives (the samples' JSON) for the query.
func vectorServer(t *testing.T, result func(q string, now int64) []string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		res := result(r.Form.Get("query"), time.Now().Unix())
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(res, ","))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// worstBurn looks up the live context of an alert with labels and returns
// its highest burn rate.
func worstBurn(t *testing.T, c *Client, labels map[string]string) float64 {
	t.Helper()
	a := &alert.Alert{}
	a.Labels = labels
	lc, err := c.Lookup(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	w := 0.0
	for _, b := range lc.Burns {
		w = max(w, b.Rate)
	}
	return w
}

// A Sloth SLO whose SLI is grouped by a label (one series per service, as
// autometrics' generated SLOs are) fires one alert per service; each reads
// its own service's burn rates, not those of whichever was looked up first
// (the cache and the query were the sloth_id's alone).
func TestPerServiceSlothAlertsReadTheirOwnSeries(t *testing.T) {
	ratios := map[string]float64{"checkout": 0.3, "search": 0}
	sloth := `"sloth_id":"api-success-rate","sloth_service":"api","sloth_slo":"success-rate"`
	srv := vectorServer(t, func(q string, now int64) (res []string) {
		switch {
		case strings.Contains(q, slothSLIPrefix):
			for svc, v := range ratios {
				for _, win := range []string{"5m", "1h"} {
					res = append(res, fmt.Sprintf(`{"metric":{"__name__":"%s%s",%s,"sloth_window":%q,"service_name":%q},"value":[%d,"%g"]}`, slothSLIPrefix, win, sloth, win, svc, now, v))
				}
			}
		case strings.Contains(q, slothErrorBudget):
			res = append(res, fmt.Sprintf(`{"metric":{"__name__":%q,%s},"value":[%d,"0.01"]}`, slothErrorBudget, sloth, now))
		}
		return res
	})
	c := newClient(t, config(srv.URL), Options{})
	worst := func(svc string) float64 {
		return worstBurn(t, c, map[string]string{"alertname": "HighErrorRate", "sloth_id": "api-success-rate", "sloth_service": "api",
			"sloth_slo": "success-rate", "sloth_severity": "page", "service_name": svc})
	}
	if a, b := worst("checkout"), worst("search"); a < 29 || b != 0 {
		t.Fatalf("worst burn of checkout %g, of search %g: want 30 and 0, each its own series", a, b)
	}
	// An alert whose service has no series (its traffic fell below the
	// rules' floor, a renamed function) reads none: before, it read the
	// SLO's worst, another service's burn shown on its page.
	payments := &alert.Alert{}
	payments.Labels = map[string]string{"alertname": "HighErrorRate", "sloth_id": "api-success-rate", "sloth_service": "api",
		"sloth_slo": "success-rate", "sloth_severity": "page", "service_name": "payments"}
	if lc, err := c.Lookup(context.Background(), payments); !errors.Is(err, ErrNoData) {
		t.Fatalf("a service without series: %+v, %v; want ErrNoData, not another service's burn", lc, err)
	}
	// An alert without the label the series are told apart by (the rule
	// aggregates it away) contradicts none: the SLO's worst.
	if w := worstBurn(t, c, map[string]string{"alertname": "HighErrorRate", "sloth_id": "api-success-rate", "sloth_service": "api",
		"sloth_slo": "success-rate", "sloth_severity": "page"}); w < 29 {
		t.Fatalf("an alert without service_name read worst burn %g, want the SLO's worst, 30", w)
	}
}

// A Prometheus (or the proxy in front of it) refusing the router's
// credentials: the reason said "Prometheus answered an error
// (client_error)", which does not tell the operator to fix
// prometheus.http_config. A 403 to the POST is asked again as a GET (the
// API client's fallback); the status of that last answer is the one said.
func TestRefusedCredentialsSayTheStatus(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			c, _ := answering(t, status)
			_, err := c.Lookup(context.Background(), slothAlert())
			var le *LookupError
			if !errors.As(err, &le) || !errors.Is(err, ErrUnavailable) {
				t.Fatalf("err %v, want an ErrUnavailable LookupError", err)
			}
			if want := fmt.Sprintf("Prometheus refused the credentials (%d)", status); le.Reason != want {
				t.Errorf("reason %q, want %q", le.Reason, want)
			}
		})
	}
	// A 404 — prometheus.url without its route prefix, or with /graph —
	// says to check the URL's path (it said "client_error"); other client
	// errors keep their reason.
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed} {
		c, url := answering(t, status)
		want := "Prometheus answered an error (client_error)"
		if status == http.StatusNotFound {
			want = "Prometheus answered 404 at " + url + ": " + ReasonNotFound // the URL asked is named
		}
		_, err := c.Lookup(context.Background(), slothAlert())
		var le *LookupError
		if !errors.As(err, &le) || le.Reason != want {
			t.Errorf("a %d: err %v, want the reason %q", status, err, want)
		}
		// check-config --probe says the same.
		if _, err := c.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the probe of a %d: %v, want it failed with %q", status, err, want)
		}
	}
}

// The probe of a Prometheus that answers, and of one that does not: it
// said the template did not render.
func TestProbeAsksForVector1(t *testing.T) {
	s := newStandIn(t)
	cfg := DefaultConfig()
	cfg.URL = s.URL
	if got, err := newClient(t, cfg, Options{}).Probe(context.Background()); err != nil || !strings.Contains(got, "answered") {
		t.Errorf("probe: %q, %v; want it answered", got, err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cfg.URL = down.URL
	if _, err := newClient(t, cfg, Options{}).Probe(context.Background()); err == nil || !strings.HasPrefix(err.Error(), ReasonUnreachable) {
		t.Errorf("probe of a closed port: %v, want %q", err, ReasonUnreachable)
	}
}

// answering returns a client of a Prometheus that answers every query
// status, and that Prometheus' URL.
func answering(t *testing.T, status int) (*Client, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", status)
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.URL = srv.URL
	return newClient(t, cfg, Options{}), srv.URL
}

// Prometheus 3 refuses a query over its limits (--enable-feature=query-cost)
// with 422 and errorType cost_limit, other Prometheus-compatible backends
// with their own types: the SLO's query is refused, Prometheus is well.
// Read as "Prometheus answered an error", three such lookups opened the
// circuit breaker and took the live burn away from every other SLO — a
// hand-rolled SLO paging on its live burn became a ticket for 30s.
func TestAQueryRefusedOverALimitDoesNotOpenTheBreaker(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprint(w, `{"status":"error","errorType":"cost_limit","error":"query processing would load too many series"}`)
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.URL, cfg.CacheTTL = srv.URL, 0
	c := newClient(t, cfg, Options{})
	for i := range 5 {
		_, err := c.Lookup(context.Background(), slothAlert())
		var le *LookupError
		if !errors.As(err, &le) || errors.Is(err, ErrBreakerOpen) {
			t.Fatalf("lookup %d: %v, want the query's refusal, not an open breaker", i, err)
		}
		if want := "Prometheus refused the query (cost_limit)"; le.Reason != want || le.PrometheusUnwell() {
			t.Errorf("lookup %d: reason %q (Prometheus unwell %v), want %q", i, le.Reason, le.PrometheusUnwell(), want)
		}
	}
	// Counted apart from Prometheus' failures, which
	// AlertrouterLiveSLOUnavailable reads.
	if got := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultRefused)); got != 5 {
		t.Errorf("lookups{result=refused} = %v, want 5", got)
	}
	if got := testutil.ToFloat64(c.metrics.lookups.WithLabelValues(resultError)); got != 0 {
		t.Errorf("lookups{result=error} = %v, want 0", got)
	}
	// A proxy in front refusing every query with a plain 400 (not
	// Prometheus' JSON error) is no one query's fault: the breaker opens.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the namespace parameter must be provided", http.StatusBadRequest)
	}))
	t.Cleanup(proxy.Close)
	cfg.URL = proxy.URL
	c = newClient(t, cfg, Options{})
	var err error
	for range 4 {
		_, err = c.Lookup(context.Background(), slothAlert())
	}
	if !errors.Is(err, ErrBreakerOpen) {
		t.Errorf("after 4 plain 400s: %v, want the breaker open", err)
	}
}

// An answer of tens of megabytes (a selector matching 300,000 series) was
// read whole: the router grew from 41 MB to 498 MB decoding one. Answers
// are read up to maxAnswer; past it the lookup fails with its own reason,
// as the query's fault (the breaker stays closed).
func TestAnOversizedAnswerIsNotRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[`)
		series := `{"metric":{"__name__":"slo:sli_error:ratio_rate5m","sloth_id":"api-availability","pod":"p-000000000"},"value":[1,"0.01"]},`
		for written := 0; written <= maxAnswer; written += len(series) {
			fmt.Fprint(w, series)
		}
		fmt.Fprint(w, `{"metric":{},"value":[1,"0"]}]}}`)
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.URL, cfg.CacheTTL = srv.URL, 0
	cfg.Timeout = model.Duration(2 * time.Minute) // 8 MiB under -race on a busy machine took 16s
	c := newClient(t, cfg, Options{})
	for i := range 4 {
		_, err := c.Lookup(context.Background(), slothAlert())
		var le *LookupError
		if !errors.As(err, &le) || errors.Is(err, ErrBreakerOpen) || !strings.Contains(le.Reason, "MiB") || le.PrometheusUnwell() {
			t.Fatalf("lookup %d: %v, want the answer's size named, the breaker closed", i, err)
		}
	}
}

// An answer of the wrong type (a scalar, a matrix, a string, where an
// instant query answers a vector) is Prometheus answering wrong, named and
// counted as a failure: it read as no series, "no recording rules", which
// sent on-call looking for rules that were there (an audit).
func TestAnAnswerThatIsNoVectorIsABadResponse(t *testing.T) {
	for _, data := range []string{
		`{"resultType":"scalar","result":[1,"0.5"]}`,
		`{"resultType":"matrix","result":[]}`,
		`{"resultType":"string","result":[1,"x"]}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"status":"success","data":`+data+`}`)
		}))
		t.Cleanup(srv.Close)
		cfg := DefaultConfig()
		cfg.URL, cfg.CacheTTL = srv.URL, 0
		c := newClient(t, cfg, Options{})
		_, err := c.Lookup(context.Background(), slothAlert())
		var le *LookupError
		if !errors.As(err, &le) || !strings.Contains(le.Reason, "bad_response") || strings.Contains(le.Reason, "no data") || !le.PrometheusUnwell() {
			t.Errorf("answer %s: %v, want a bad response, Prometheus unwell", data, err)
		}
	}
}

// redirecting answers every request with status, redirecting to the same
// path at target.
func redirecting(t *testing.T, status int, target string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.RequestURI(), status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// prometheus.url behind an http→https redirect (a load balancer's listener,
// nginx's `return 301`): Go follows a 301, 302 or 303 as a GET without the
// query's POSTed form, Prometheus answered "no expression found in input"
// (bad_data), and every SLO's lookup read as its query refused — the
// breaker never opened, AlertrouterLiveSLOUnavailable could not fire, the
// advice was to mend the query, and hand-rolled SLOs paging on their live
// burn became tickets. The redirect is named, as a fault of the URL; a 307
// or 308 keeps the POST and is followed; with follow_redirects: false no
// redirect is followed.
func TestARedirectInFrontOfPrometheusNamesTheURL(t *testing.T) {
	s := newStandIn(t)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
		cfg := DefaultConfig()
		cfg.URL, cfg.CacheTTL, cfg.Timeout = redirecting(t, status, s.URL).URL, 0, model.Duration(30*time.Second)
		c := newClient(t, cfg, Options{})
		_, err := c.Lookup(context.Background(), slothAlert())
		var le *LookupError
		if !errors.As(err, &le) || !errors.Is(err, ErrUnavailable) || !le.unwell {
			t.Fatalf("a %d: err %v, want an ErrUnavailable LookupError counted against Prometheus", status, err)
		}
		if want := "Prometheus answered a redirect to " + s.URL + "/api/v1/query"; !strings.HasPrefix(le.Reason, want) || !strings.Contains(le.Reason, "set prometheus.url") {
			t.Errorf("a %d: reason %q, want it to start %q and say to set prometheus.url", status, le.Reason, want)
		}
		if _, err := c.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("the probe behind a %d: %v, want it failed naming the redirect", status, err)
		}
	}
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		cfg := DefaultConfig()
		cfg.URL, cfg.CacheTTL, cfg.Timeout = redirecting(t, status, s.URL).URL, 0, model.Duration(30*time.Second)
		if _, err := newClient(t, cfg, Options{}).Lookup(context.Background(), slothAlert()); err != nil {
			t.Errorf("a %d keeps the POST: %v, want the lookup answered", status, err)
		}
		cfg.HTTPConfig.FollowRedirects = false
		_, err := newClient(t, cfg, Options{}).Lookup(context.Background(), slothAlert())
		if le := (*LookupError)(nil); !errors.As(err, &le) || !strings.Contains(le.Reason, "redirect") {
			t.Errorf("a %d with follow_redirects false: %v, want the redirect named", status, err)
		}
	}
}

// A self-signed Prometheus without its CA in http_config: the reason said
// "Prometheus unreachable", sending the on-call to the network.
func TestAnUntrustedCertificateSaysSo(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.URL, cfg.CacheTTL, cfg.Timeout = srv.URL, 0, model.Duration(30*time.Second) // a handshake under -race
	_, err := newClient(t, cfg, Options{}).Lookup(context.Background(), slothAlert())
	var le *LookupError
	if !errors.As(err, &le) || !le.unwell || !strings.HasPrefix(le.Reason, "Prometheus' TLS certificate is not trusted") || !strings.Contains(le.Reason, "ca_file") {
		t.Fatalf("err %v, want the untrusted certificate named, counted against Prometheus", err)
	}
}
