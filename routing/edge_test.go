package routing_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// fakeRuntime serves one pipeline with fixed options.
type fakeRuntime struct {
	p        *routing.Pipeline
	opts     webhook.EdgeOptions
	ready    error
	reload   error
	reloaded atomic.Int32
}

func (r *fakeRuntime) Current() webhook.Generation {
	return webhook.Generation{Processor: r.p, Options: r.opts}
}
func (r *fakeRuntime) Ready(ctx context.Context) error { return r.ready }
func (r *fakeRuntime) Reload() error                   { r.reloaded.Add(1); return r.reload }

func newEdge(t *testing.T, opts webhook.EdgeOptions) (*httptest.Server, *fakeRuntime, *env) {
	t.Helper()
	e := newEnv(t)
	p := e.pipeline()
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	rt := &fakeRuntime{p: p, opts: opts}
	srv := httptest.NewServer(webhook.NewServer(rt, e.reg, webhook.NewMetrics(e.reg), slog.New(slog.NewTextHandler(io.Discard, nil)), webhook.WithLifecycle(func() {})))
	t.Cleanup(srv.Close)
	return srv, rt, e
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(a.body, v); err != nil {
		t.Fatalf("answer %d %q is not JSON: %v", a.status, a.body, err)
	}
}

func do(t *testing.T, method, url, contentType string, body []byte, auth func(*http.Request)) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != nil {
		auth(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

func post(t *testing.T, srv *httptest.Server, body []byte) answer {
	return do(t, http.MethodPost, srv.URL+"/webhook", "application/json", body, nil)
}

func TestWebhookRejectsUnreadablePayloadsWithAJSONError(t *testing.T) {
	srv, _, _ := newEdge(t, webhook.EdgeOptions{MaxBodyBytes: 64 << 10})
	tests := []struct {
		name        string
		contentType string
		body        []byte
		wantStatus  int
		wantField   string
		wantError   string
	}{
		{"a non-JSON content type is 415", "text/plain", webhooktest.ReadFixture(t, "firing.json"), 415, "", "unsupported Content-Type"},
		{"a body over max_body_bytes is 413", "application/json", webhooktest.ReadFixture(t, "hundred.json"), 413, "", "larger than the limit of 65536 bytes"},
		{"malformed JSON is 400", "application/json", webhooktest.ReadFixture(t, "malformed.bad.json"), 400, "", "malformed JSON"},
		{"wrong JSON types are 400 naming the field", "application/json", webhooktest.ReadFixture(t, "wrong-types.bad.json"), 400, "alerts", "expected JSON array"},
		{"an unknown version is 400 naming the field", "application/json; charset=utf-8", webhooktest.ReadFixture(t, "version-3.bad.json"), 400, "version", "unsupported version"},
		{"no alerts is 400 naming the field", "application/json", webhooktest.ReadFixture(t, "no-alerts.bad.json"), 400, "alerts", "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := do(t, http.MethodPost, srv.URL+"/webhook", tt.contentType, tt.body, nil)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", a.status, a.body, tt.wantStatus)
			}
			var eb struct{ Error, Field string }
			a.json(t, &eb)
			if eb.Field != tt.wantField || !strings.Contains(eb.Error, tt.wantError) {
				t.Errorf("body %s; want field %q and error containing %q", a.body, tt.wantField, tt.wantError)
			}
		})
	}
}

// The body is read whole whether or not the request declares its length:
// a chunked body (no Content-Length) is decoded, or 413 over the limit;
// a body shorter than its declared length is a 400 naming the read.
func TestWebhookReadsBodiesWithOrWithoutALength(t *testing.T) {
	srv, _, _ := newEdge(t, webhook.EdgeOptions{MaxBodyBytes: 64 << 10})
	chunked := func(body []byte) func(*http.Request) {
		return func(r *http.Request) {
			r.ContentLength = -1
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
	}
	firing, hundred := webhooktest.ReadFixture(t, "firing.json"), webhooktest.ReadFixture(t, "hundred.json")
	if a := do(t, http.MethodPost, srv.URL+"/webhook", "application/json", firing, chunked(firing)); a.status != 200 {
		t.Errorf("chunked payload: status %d %s, want 200", a.status, a.body)
	}
	a := do(t, http.MethodPost, srv.URL+"/webhook", "application/json", hundred, chunked(hundred))
	if a.status != 413 || !strings.Contains(string(a.body), "larger than the limit") {
		t.Errorf("chunked payload over the limit: status %d %s, want 413", a.status, a.body)
	}

	short := firing[:len(firing)/2]
	// The sender went away mid-body: not bad input, so 503 (Alertmanager
	// retries 5xx, never 4xx).
	if status, b := shortBody(t, srv, len(firing), short); status != 503 || !strings.Contains(b, "retry") {
		t.Errorf("a body shorter than its Content-Length: status %d %s, want 503 asking for a retry", status, b)
	}
	// A declared length above what is sized up front (and within the limit)
	// is read as it comes.
	big, _, _ := newEdge(t, webhook.EdgeOptions{MaxBodyBytes: 8 << 20})
	if status, b := shortBody(t, big, 4<<20, short); status != 503 || !strings.Contains(b, "retry") {
		t.Errorf("a 4 MiB Content-Length with a short body: status %d %s, want 503 asking for a retry", status, b)
	}
}

// shortBody sends a webhook declaring a Content-Length of declared bytes
// but only body, then closes its side, and returns the answer.
func shortBody(t *testing.T, srv *httptest.Server, declared int, body []byte) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", declared, body)
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestWebhookAuthenticates(t *testing.T) {
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }
	tests := []struct {
		name          string
		auth          webhook.Auth
		cred          func(*http.Request)
		wantStatus    int
		wantChallenge string
	}{
		{"a missing bearer token is 401 with a Bearer challenge", webhook.Auth{BearerToken: "s3cret"}, nil, 401, "Bearer"},
		{"a wrong bearer token is 401", webhook.Auth{BearerToken: "s3cret"}, bearer("guess"), 401, "Bearer"},
		{"the right bearer token is accepted", webhook.Auth{BearerToken: "s3cret"}, bearer("s3cret"), 200, ""},
		{"missing basic auth is 401 with a Basic challenge", webhook.Auth{Username: "am", Password: "pw"}, nil, 401, "Basic"},
		{"a wrong basic password is 401", webhook.Auth{Username: "am", Password: "pw"}, basic("am", "nope"), 401, "Basic"},
		{"the right basic credentials are accepted", webhook.Auth{Username: "am", Password: "pw"}, basic("am", "pw"), 200, ""},
		{"with both set, basic alone suffices", webhook.Auth{BearerToken: "s3cret", Username: "am", Password: "pw"}, basic("am", "pw"), 200, ""},
		{"a bearer token is not a basic password", webhook.Auth{Username: "am", Password: "pw"}, bearer("pw"), 401, "Basic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, _ := newEdge(t, webhook.EdgeOptions{Auth: tt.auth})
			a := do(t, http.MethodPost, srv.URL+"/webhook", "application/json", webhooktest.ReadFixture(t, "firing.json"), tt.cred)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", a.status, a.body, tt.wantStatus)
			}
			if got := a.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, tt.wantChallenge) || (tt.wantChallenge == "") != (got == "") {
				t.Errorf("WWW-Authenticate = %q, want prefix %q", got, tt.wantChallenge)
			}
		})
	}
}

func TestWebhookAnswersTheSummary(t *testing.T) {
	srv, _, e := newEdge(t, webhook.EdgeOptions{})
	body, err := json.Marshal(webhooktest.Msg("firing",
		tAlert("TTFTHigh", "firing", "page"),
		tAlert("ITLHigh", "firing", "ticket", "kpi", "ITL"),
		tAlert("Info", "firing", "none")))
	if err != nil {
		t.Fatal(err)
	}
	a := post(t, srv, body)
	if a.status != 200 {
		t.Fatalf("status %d %s, want 200", a.status, a.body)
	}
	var sum alert.Summary
	a.json(t, &sum)
	if sum.Alerts != 3 || sum.Notified != 2 || sum.NoAction != 1 {
		t.Errorf("summary %+v, want 3 alerts, 2 notified, 1 no_action", sum)
	}
	if len(e.pd.notifications()) != 1 || len(e.slack.notifications()) != 1 {
		t.Errorf("pagerduty %d, slack %d; want 1 each", len(e.pd.notifications()), len(e.slack.notifications()))
	}
	a = post(t, srv, body)
	a.json(t, &sum)
	if a.status != 200 || sum.Deduplicated != 2 {
		t.Errorf("repeat: status %d summary %+v; want 200 with 2 deduplicated", a.status, sum)
	}
}

func TestWebhookProcessesTheRestWhenOneAlertIsRejected(t *testing.T) {
	srv, _, _ := newEdge(t, webhook.EdgeOptions{})
	a := post(t, srv, webhooktest.ReadFixture(t, "no-labels.json"))
	if a.status != 200 {
		t.Fatalf("status %d %s, want 200", a.status, a.body)
	}
	var sum alert.Summary
	a.json(t, &sum)
	if sum.Alerts != 3 || len(sum.Rejected) != 1 || sum.Rejected[0].Index != 1 {
		t.Errorf("summary %+v, want 3 alerts with alerts[1] rejected", sum)
	}
}

func TestWebhookAnswers5xxWhenDeliveryFails(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
	}{
		{"a retryable failure is 503 so Alertmanager retries", errors.New("pagerduty: 500"), 503},
		{"a permanent failure is 502", alert.Permanent(errors.New("pagerduty: invalid routing key")), 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, e := newEdge(t, webhook.EdgeOptions{})
			e.pd.setFail(func(*alert.Notification) error { return tt.err })
			body, _ := json.Marshal(webhooktest.Msg("firing", tAlert("TTFTHigh", "firing", "page")))
			a := post(t, srv, body)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", a.status, a.body, tt.wantStatus)
			}
			var sum alert.Summary
			a.json(t, &sum)
			if sum.Failed != 1 || len(sum.Errors) != 1 || !strings.Contains(sum.Errors[0], "pagerduty") {
				t.Errorf("summary %+v, want the failure named", sum)
			}
		})
	}
}

func TestOperationalEndpoints(t *testing.T) {
	srv, rt, _ := newEdge(t, webhook.EdgeOptions{})
	if a := do(t, http.MethodGet, srv.URL+"/-/healthy", "", nil, nil); a.status != 200 {
		t.Errorf("/-/healthy = %d", a.status)
	}
	if a := do(t, http.MethodGet, srv.URL+"/-/ready", "", nil, nil); a.status != 200 {
		t.Errorf("/-/ready = %d while ready", a.status)
	}
	for _, path := range []string{"/-/healthy", "/-/ready"} {
		if a := do(t, http.MethodHead, srv.URL+path, "", nil, nil); a.status != 200 {
			t.Errorf("HEAD %s = %d, want 200 (load balancers' health checks)", path, a.status)
		}
	}
	rt.ready = errors.New("redis: connection refused")
	if a := do(t, http.MethodHead, srv.URL+"/-/ready", "", nil, nil); a.status != 503 {
		t.Errorf("HEAD /-/ready while not ready = %d, want 503", a.status)
	}
	a := do(t, http.MethodGet, srv.URL+"/-/ready", "", nil, nil)
	if a.status != 503 || !strings.Contains(string(a.body), "connection refused") {
		t.Errorf("/-/ready = %d %s, want 503 naming the cause", a.status, a.body)
	}
	if a := do(t, http.MethodPost, srv.URL+"/-/reload", "", nil, nil); a.status != 200 || rt.reloaded.Load() != 1 {
		t.Errorf("/-/reload = %d (reloads %d), want 200 after one reload", a.status, rt.reloaded.Load())
	}
	rt.reload = errors.New("route.receiver: undefined receiver \"x\"")
	a = do(t, http.MethodPost, srv.URL+"/-/reload", "", nil, nil)
	if a.status != 500 || !strings.Contains(string(a.body), "previous config still serving") {
		t.Errorf("failed /-/reload = %d %s, want 500 saying the old config serves", a.status, a.body)
	}
	if a := do(t, http.MethodGet, srv.URL+"/-/reload", "", nil, nil); a.status != 405 {
		t.Errorf("GET /-/reload = %d, want 405", a.status)
	}
	// Another site's page (a form posted by the on-call engineer's browser)
	// cannot reload or stop the router; the browser says where it came from.
	before := rt.reloaded.Load()
	for _, h := range []func(*http.Request){
		func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") },
		func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") },
	} {
		for _, path := range []string{"/-/reload", "/-/quit"} {
			if a := do(t, http.MethodPost, srv.URL+path, "application/x-www-form-urlencoded", []byte("x=1"), h); a.status != 403 || !strings.Contains(string(a.body), "cross-site") {
				t.Errorf("cross-site POST %s = %d %s, want 403", path, a.status, a.body)
			}
		}
	}
	if rt.reloaded.Load() != before {
		t.Errorf("a cross-site request reloaded the router")
	}
	post(t, srv, webhooktest.ReadFixture(t, "malformed.bad.json"))
	a = do(t, http.MethodGet, srv.URL+"/metrics", "", nil, nil)
	if a.status != 200 || !strings.Contains(string(a.body), `alertrouter_webhooks_total{code="400",outcome="bad_input"} 1`) {
		t.Errorf("/metrics = %d, want the rejected webhook counted", a.status)
	}
}

// blockingProcessor holds every webhook until release is closed.
type blockingProcessor struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingProcessor) Process(ctx context.Context, msg *alert.Message) (*alert.Summary, error) {
	b.entered <- struct{}{}
	<-b.release
	return &alert.Summary{}, nil
}

// Beyond webhook.max_concurrent a webhook is answered 503 with
// Retry-After and counted; the ones in flight finish normally.
func TestWebhooksBeyondTheCapAreRefusedWithRetryAfter(t *testing.T) {
	reg := prometheus.NewRegistry()
	bp := &blockingProcessor{entered: make(chan struct{}, 1), release: make(chan struct{})}
	rt := &processorRuntime{p: bp, opts: webhook.EdgeOptions{MaxBodyBytes: 1 << 20, Timeout: 5 * time.Second, MaxConcurrent: 1}}
	srv := httptest.NewServer(webhook.NewServer(rt, reg, webhook.NewMetrics(reg), slog.New(slog.DiscardHandler)))
	defer srv.Close()
	body := webhooktest.ReadFixture(t, "firing.json")
	first := make(chan answer, 1)
	go func() { first <- post(t, srv, body) }()
	<-bp.entered
	a := post(t, srv, body)
	if a.status != 503 || a.header.Get("Retry-After") != webhook.RetryAfter || !strings.Contains(string(a.body), "max_concurrent") {
		t.Errorf("webhook beyond the cap: %d Retry-After=%q %s; want 503 with Retry-After", a.status, a.header.Get("Retry-After"), a.body)
	}
	close(bp.release)
	if a := <-first; a.status != 200 {
		t.Errorf("webhook in flight: %d, want 200", a.status)
	}
	m := do(t, http.MethodGet, srv.URL+"/metrics", "", nil, nil)
	if !strings.Contains(string(m.body), `alertrouter_webhooks_total{code="503",outcome="overloaded"} 1`) {
		t.Errorf("the refused webhook is not counted")
	}
}

type processorRuntime struct {
	p    webhook.Processor
	opts webhook.EdgeOptions
}

func (r *processorRuntime) Current() webhook.Generation {
	return webhook.Generation{Processor: r.p, Options: r.opts}
}
func (r *processorRuntime) Ready(ctx context.Context) error { return nil }
func (r *processorRuntime) Reload() error                   { return nil }

// heldTickets is the env's pipeline behind the edge, holding the webhooks
// that page nothing in Process until released: ticket webhooks whose Slack
// posts wait out Slack's rate limit.
type heldTickets struct {
	*routing.Pipeline
	entered chan struct{}
	release chan struct{}
}

func (h *heldTickets) Process(ctx context.Context, msg *alert.Message) (*alert.Summary, error) {
	if !h.Pages(msg) {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.Pipeline.Process(ctx, msg)
}

// Ticket webhooks holding every webhook.max_concurrent slot (their Slack
// posts waiting out Slack's rate limit) refused the pages behind them 503:
// pages reached PagerDuty a minute late, after Alertmanager's retries (an
// audit). A webhook carrying a page is let in beyond the cap, up to twice
// it; one that pages nothing is still refused.
func TestAPageIsLetInWhileTicketsHoldEveryWebhookSlot(t *testing.T) {
	e := newEnv(t)
	reg := prometheus.NewRegistry()
	h := &heldTickets{Pipeline: e.pipeline(), entered: make(chan struct{}, 1), release: make(chan struct{})}
	rt := &processorRuntime{p: h, opts: webhook.EdgeOptions{MaxBodyBytes: 64 << 10, Timeout: 5 * time.Second, MaxConcurrent: 1}}
	srv := httptest.NewServer(webhook.NewServer(rt, reg, webhook.NewMetrics(reg), slog.New(slog.DiscardHandler)))
	defer srv.Close()
	body := func(a webhooktest.Alert) []byte {
		b, err := json.Marshal(webhooktest.Msg("firing", a))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := make(chan answer, 1)
	go func() { first <- post(t, srv, body(tAlert("QueueBacklog", "firing", "ticket"))) }()
	<-h.entered
	if a := post(t, srv, body(tAlert("CacheMiss", "firing", "ticket", "service", "embed"))); a.status != 503 {
		t.Errorf("a ticket webhook beyond the cap: %d %s, want 503", a.status, a.body)
	}
	if a := post(t, srv, body(tAlert("TTFTHigh", "firing", "page", "service", "search"))); a.status != 200 {
		t.Errorf("a page webhook beyond the cap: %d %s, want it let in and answered 200", a.status, a.body)
	}
	if n := len(e.pd.notifications()); n != 1 {
		t.Errorf("PagerDuty got %d notifications while the ticket held the slot, want the page", n)
	}
	// Beyond the bodies the cap is sized for (max_concurrent × max_body_bytes).
	big := tAlert("TTFTHigh", "firing", "page", "service", "rerank")
	big.Annotations["description"] = ""
	for len(body(big)) < 63<<10 { // under max_body_bytes, over it with the held ticket's body
		big.Annotations["description"] += strings.Repeat("x", 512)
	}
	if a := post(t, srv, body(big)); a.status != 503 {
		t.Errorf("a page webhook beyond the cap whose body would pass the cap's memory: %d %.200s, want 503", a.status, a.body)
	}
	close(h.release)
	if a := <-first; a.status != 200 {
		t.Errorf("the held ticket webhook: %d, want 200", a.status)
	}
}

// A firing SLO ticket that live burn rates may raise to a page counts as a
// page at the webhook cap when live lookups are on (an audit: such a page
// was refused 503 while tickets held every slot); without them it does not.
func TestAnSLOTicketLiveDataMayRaiseCountsAsAPage(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	msg := payload(t, tAlert("CheckoutAvailability", "firing", "ticket", "slo", "checkout-availability"))
	if p.Pages(msg) {
		t.Fatal("an SLO ticket counts as a page without live lookups")
	}
	p.Live = &fakeLive{}
	if !p.Pages(msg) {
		t.Fatal("an SLO ticket live lookups may raise does not count as a page")
	}
	if p.Pages(payload(t, tAlert("QueueBacklog", "firing", "ticket"))) {
		t.Fatal("a ticket with no SLO counts as a page")
	}
}
