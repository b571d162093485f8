package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/routing/webhook"
)

// guardedRuntime is a Runtime with a console and edge options, counting
// reloads.
type guardedRuntime struct {
	p       *recorder
	opts    webhook.EdgeOptions
	console http.Handler
	reloads *atomic.Int64
}

func (r guardedRuntime) Current() webhook.Generation {
	return webhook.Generation{Processor: r.p, Options: r.opts}
}
func (guardedRuntime) Ready(context.Context) error { return nil }
func (r guardedRuntime) Reload() error             { r.reloads.Add(1); return nil }
func (r guardedRuntime) Console() http.Handler     { return r.console }

// startGuarded serves the edge with opts (bearer webhook auth, console.auth,
// Slack handler …) on a real listener, with the lifecycle endpoints.
func startGuarded(t *testing.T, opts webhook.EdgeOptions, extra ...webhook.Option) (*httptest.Server, guardedRuntime) {
	t.Helper()
	rt := guardedRuntime{p: &recorder{}, opts: opts, reloads: &atomic.Int64{},
		console: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "console "+r.Method+" "+r.URL.Path)
		})}
	reg := prometheus.NewRegistry()
	srv := httptest.NewServer(webhook.NewServer(rt, reg, webhook.NewMetrics(reg), slog.New(slog.DiscardHandler),
		append([]webhook.Option{webhook.WithLifecycle(func() {})}, extra...)...))
	t.Cleanup(srv.Close)
	return srv, rt
}

// do sends one request and returns its status, body and WWW-Authenticate.
func do(t *testing.T, method, url string, header http.Header, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("WWW-Authenticate")
}

const webhookBody = `{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"A"},"startsAt":"2026-12-01T10:00:00Z"}]}`

// console.auth guards the console (pages, explain, the journal export, the
// dead letters and their replay, static files), Go's profiles and the
// lifecycle endpoints, with a Basic challenge browsers prompt for; at the
// same time Alertmanager's bearer token still reaches /webhook, Slack's
// requests reach their handler without any credentials, and /metrics and
// the probes stay open: all on one listener.
func TestConsoleAuthGuardsTheConsoleProfilesAndLifecycleOnly(t *testing.T) {
	var slackCalls atomic.Int64
	srv, rt := startGuarded(t, webhook.EdgeOptions{
		MaxBodyBytes: 1 << 20,
		Auth:         webhook.Auth{BearerToken: "am-bearer-token"},
		ConsoleAuth:  webhook.Auth{Username: "ops", Password: "console-pass"},
		Interactions: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			slackCalls.Add(1)
			_, _ = io.WriteString(w, "slack ok")
		}),
	})
	guarded := []struct{ method, path string }{
		{http.MethodGet, "/"},
		{http.MethodGet, "/decisions"},
		{http.MethodGet, "/explain"},
		{http.MethodPost, "/explain"},
		{http.MethodGet, "/journal.jsonl"},
		{http.MethodGet, "/dead-letters"},
		{http.MethodPost, "/dead-letters/1700000000000-0/replay"},
		{http.MethodGet, "/static/console.css"},
		{http.MethodGet, "/debug/pprof/"},
		{http.MethodGet, "/debug/pprof/cmdline"},
		{http.MethodGet, "/debug/pprof/goroutine?debug=2"},
		{http.MethodPost, "/-/reload"},
		{http.MethodPost, "/-/quit"},
	}
	wrong := http.Header{"Authorization": {"Basic b3BzOndyb25n"}} // ops:wrong
	bearer := http.Header{"Authorization": {"Bearer am-bearer-token"}}
	for _, g := range guarded {
		for name, h := range map[string]http.Header{"no credentials": nil, "a wrong password": wrong, "the webhook's bearer token": bearer} {
			code, body, challenge := do(t, g.method, srv.URL+g.path, h, "")
			if code != http.StatusUnauthorized || challenge != `Basic realm="alertrouter"` {
				t.Errorf("%s %s with %s = %d %q (WWW-Authenticate %q); want 401 with a Basic challenge", g.method, g.path, name, code, body, challenge)
			}
		}
	}
	if n := rt.reloads.Load(); n != 0 {
		t.Fatalf("an unauthenticated /-/reload reloaded (%d)", n)
	}
	ops := http.Header{"Authorization": {"Basic b3BzOmNvbnNvbGUtcGFzcw=="}} // ops:console-pass
	for _, g := range guarded[:8] {
		if code, body, _ := do(t, g.method, srv.URL+g.path, ops, ""); code != http.StatusOK || body != "console "+g.method+" "+strings.SplitN(g.path, "?", 2)[0] {
			t.Errorf("%s %s with console.auth's credentials = %d %q; want the console", g.method, g.path, code, body)
		}
	}
	if code, body, _ := do(t, http.MethodGet, srv.URL+"/debug/pprof/cmdline", ops, ""); code != http.StatusOK || body == "" {
		t.Errorf("GET /debug/pprof/cmdline with console.auth's credentials = %d %q", code, body)
	}
	if code, _, _ := do(t, http.MethodPost, srv.URL+"/-/reload", ops, ""); code != http.StatusOK || rt.reloads.Load() != 1 {
		t.Errorf("POST /-/reload with console.auth's credentials = %d, %d reloads; want 200 and one reload", code, rt.reloads.Load())
	}

	// Alertmanager's bearer token passes /webhook; console.auth's
	// credentials do not (each route has its own guard).
	json := http.Header{"Content-Type": {"application/json"}}
	if code, body, _ := do(t, http.MethodPost, srv.URL+"/webhook", http.Header{"Content-Type": json["Content-Type"], "Authorization": bearer["Authorization"]}, webhookBody); code != http.StatusOK {
		t.Errorf("bearer webhook = %d %s; want 200", code, body)
	}
	if code, _, _ := do(t, http.MethodPost, srv.URL+"/webhook", http.Header{"Content-Type": json["Content-Type"], "Authorization": ops["Authorization"]}, webhookBody); code != http.StatusUnauthorized {
		t.Errorf("webhook with console.auth's credentials = %d; want 401", code)
	}
	// Slack's requests carry no Authorization: they reach the handler,
	// which verifies their signature itself.
	for _, path := range []string{"/slack/interactions", "/slack/commands"} {
		if code, body, _ := do(t, http.MethodPost, srv.URL+path, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "payload=%7B%7D"); code != http.StatusOK || body != "slack ok" {
			t.Errorf("POST %s without credentials = %d %q; want Slack's handler", path, code, body)
		}
	}
	if slackCalls.Load() != 2 {
		t.Errorf("Slack's handler got %d requests, want 2", slackCalls.Load())
	}
	for _, path := range []string{"/metrics", "/-/healthy", "/-/ready"} {
		if code, body, _ := do(t, http.MethodGet, srv.URL+path, nil, ""); code != http.StatusOK {
			t.Errorf("GET %s without credentials = %d %q; want 200", path, code, body)
		}
	}
}

// Without console.auth the console, the profiles and the lifecycle
// endpoints stay open, as before (the web configuration may guard them).
func TestWithoutConsoleAuthTheConsoleIsOpen(t *testing.T) {
	srv, _ := startGuarded(t, webhook.EdgeOptions{MaxBodyBytes: 1 << 20})
	for _, path := range []string{"/", "/debug/pprof/"} {
		if code, _, _ := do(t, http.MethodGet, srv.URL+path, nil, ""); code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", path, code)
		}
	}
}

// DNS rebinding: a page of evil.example, whose name now resolves to the
// router, posts to the replay and lifecycle endpoints. The browser calls
// the request same-origin (it is: Host, Origin and the page all say
// evil.example), so the same-origin check passes; the Host, a name the
// router is not known by, is refused 403 naming the reason. A known Host
// (console.external_url's, an IP address, localhost, a listen address's
// host) goes through, and so does the side-effect-free POST /explain.
func TestStateChangingRequestsForAnUnknownHostAreRefused(t *testing.T) {
	srv, rt := startGuarded(t, webhook.EdgeOptions{MaxBodyBytes: 1 << 20, ConsoleHosts: []string{"alertrouter.example.com"}},
		webhook.WithKnownHosts("router.internal"))
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	rebound := func(host string) http.Header {
		return http.Header{"Host": {host}, "Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-origin"}}
	}
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, "/dead-letters/1700000000000-0/replay"},
		{http.MethodPost, "/-/reload"},
		{http.MethodPost, "/-/quit"},
		{http.MethodPut, "/-/quit"},
		{http.MethodDelete, "/incidents/x"},
	} {
		code, body, _ := do(t, tc.method, srv.URL+tc.path, rebound("evil.example:"+port), "")
		if code != http.StatusForbidden || !strings.Contains(body, `\"evil.example:`+port+`\"`) || !strings.Contains(body, "DNS rebinding") || !strings.Contains(body, "console.external_url") {
			t.Errorf("%s %s for Host evil.example = %d %s; want 403 naming the host and the reason", tc.method, tc.path, code, body)
		}
	}
	if n := rt.reloads.Load(); n != 0 {
		t.Fatalf("a rebound /-/reload reloaded (%d)", n)
	}
	for _, host := range []string{"alertrouter.example.com", "ALERTROUTER.example.com.:443", "router.internal:" + port, "127.0.0.1:" + port, "[::1]:" + port, "localhost:" + port} {
		if code, body, _ := do(t, http.MethodPost, srv.URL+"/dead-letters/1-0/replay", rebound(host), ""); code != http.StatusOK || body != "console POST /dead-letters/1-0/replay" {
			t.Errorf("replay for Host %s = %d %s; want it to reach the console", host, code, body)
		}
	}
	if code, _, _ := do(t, http.MethodPost, srv.URL+"/-/reload", rebound("127.0.0.1:"+port), ""); code != http.StatusOK || rt.reloads.Load() != 1 {
		t.Errorf("reload for Host 127.0.0.1 = %d; want 200", code)
	}
	// Reading and explaining change nothing: any Host.
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if code, body, _ := do(t, m, srv.URL+"/explain", rebound("evil.example:"+port), ""); code != http.StatusOK {
			t.Errorf("%s /explain for Host evil.example = %d %s; want the console", m, code, body)
		}
	}
	// The same-origin check still refuses another site's page.
	if code, _, _ := do(t, http.MethodPost, srv.URL+"/-/reload", http.Header{"Sec-Fetch-Site": {"cross-site"}}, ""); code != http.StatusForbidden {
		t.Errorf("cross-site reload = %d, want 403", code)
	}
}

func TestKnownHost(t *testing.T) {
	known := []string{"alertrouter.example.com"}
	for host, want := range map[string]bool{
		"":                                     true,
		"127.0.0.1":                            true,
		"10.1.2.3:9095":                        true,
		"[::1]:9095":                           true,
		"[fe80::1%25eth0]:9095":                true,
		"localhost:9095":                       true,
		"LocalHost.":                           true,
		"alertrouter.example.com":              true,
		"alertrouter.example.com:443":          true,
		"evil.example:9095":                    false,
		"alertrouter.example.com.evil.example": false,
		"localhost.evil.example":               false,
	} {
		if got := webhook.KnownHost(host, known); got != want {
			t.Errorf("KnownHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// A profile or trace runs for its seconds on the router's CPU, and a
// browser attaches cached console credentials to another site's
// <img src="…/debug/pprof/profile">: another site's request is refused
// (an audit found it answered 200 while reload and replay said 403), and
// so is its script's or auto-submitted form's navigation. Typed in the
// address bar (Sec-Fetch-Site: none), followed from the index
// (same-origin), a link on another site a person clicked (a runbook's), or
// fetched by a script or `go tool pprof` by any host name (a Service's:
// a review found those refused), the profiles are served.
func TestProfilesRefuseAnotherSitesRequest(t *testing.T) {
	srv, _ := startGuarded(t, webhook.EdgeOptions{MaxBodyBytes: 1 << 20})
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, h := range []http.Header{
		{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"no-cors"}, "Sec-Fetch-Dest": {"image"}},
		{"Sec-Fetch-Site": {"same-site"}},
		{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}}, // no user gesture
		{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"iframe"}, "Sec-Fetch-User": {"?1"}},
		{"Origin": {"http://evil.example"}},
	} {
		code, body, _ := do(t, http.MethodGet, srv.URL+"/debug/pprof/cmdline", h, "")
		if code != http.StatusForbidden || !strings.Contains(body, "cross-site profile request refused") {
			t.Errorf("GET /debug/pprof/cmdline with %v = %d %q, want 403 naming the refusal", h, code, body)
		}
	}
	for _, h := range []http.Header{nil, {"Sec-Fetch-Site": {"none"}}, {"Sec-Fetch-Site": {"same-origin"}},
		{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-User": {"?1"}},
		{"Host": {"alertrouter.monitoring.svc:" + port}},
	} {
		if code, body, _ := do(t, http.MethodGet, srv.URL+"/debug/pprof/cmdline", h, ""); code != http.StatusOK || body == "" {
			t.Errorf("GET /debug/pprof/cmdline with %v = %d %q, want the command line", h, code, body)
		}
	}
}
