package webhook_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// recorder is a Processor that keeps every message it is given.
type recorder struct {
	mu   sync.Mutex
	msgs []*alert.Message
}

func (r *recorder) Process(_ context.Context, msg *alert.Message) (*alert.Summary, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msg)
	return &alert.Summary{Alerts: len(msg.Items), NoAction: len(msg.Items)}, nil
}

func (r *recorder) processed() []*alert.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

type recorderRuntime struct {
	p    *recorder
	opts webhook.EdgeOptions
}

func (r recorderRuntime) Current() webhook.Generation {
	return webhook.Generation{Processor: r.p, Options: r.opts}
}
func (recorderRuntime) Ready(context.Context) error { return nil }
func (recorderRuntime) Reload() error               { return nil }

// edgeServer is the edge on a real listener, behind an http.Server with
// the read timeout cmd/router derives from webhook.timeout (zero: none).
type edgeServer struct {
	url  string
	addr string
	p    *recorder
}

func startEdge(t *testing.T, maxBody int64, readTimeout time.Duration) *edgeServer {
	t.Helper()
	return startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: maxBody}, slog.New(slog.DiscardHandler), readTimeout)
}

// startEdgeWith is startEdge with opts and logger.
func startEdgeWith(t *testing.T, opts webhook.EdgeOptions, logger *slog.Logger, readTimeout time.Duration) *edgeServer {
	t.Helper()
	p := &recorder{}
	reg := prometheus.NewRegistry()
	h := webhook.NewServer(recorderRuntime{p: p, opts: opts}, reg, webhook.NewMetrics(reg), logger)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadTimeout: readTimeout, WriteTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &edgeServer{url: "http://" + ln.Addr().String(), addr: ln.Addr().String(), p: p}
}

// metric returns the line of /metrics for the series, or "" without it.
func (s *edgeServer) metric(t *testing.T, series string) string {
	t.Helper()
	_, b := get(t, s.url+"/metrics")
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, series+" ") {
			return line
		}
	}
	return ""
}

// rawAnswer reads the answer on conn, waiting at most 30s for it.
func rawAnswer(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// postEncoded posts body with the Content-Encoding given ("": none).
func postEncoded(t *testing.T, url, encoding string, body []byte) answerOf {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
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
	return answerOf{resp.StatusCode, resp.Header, string(b)}
}

type answerOf struct {
	status int
	header http.Header
	body   string
}

// A body that does not arrive within the server's read timeout
// (webhook.timeout) — an honest client on a slow link — or whose
// connection breaks mid-body is no fault of the payload: 503, so
// Alertmanager retries (it never retries a 4xx), counted as
// outcome="body_incomplete" and not as bad input.
func TestABodyNotReceivedWholeIs503AndCountedApart(t *testing.T) {
	s := startEdge(t, 1<<20, time.Second)
	const incomplete = `alertrouter_webhooks_total{code="503",outcome="body_incomplete"}`
	const badInput = `alertrouter_webhooks_total{code="400",outcome="bad_input"}`
	if got := s.metric(t, incomplete); got != incomplete+" 0" {
		t.Errorf("before any webhook: %q, want the series at 0", got)
	}
	firing := webhooktest.ReadFixture(t, "firing.json")

	// trickle sends the headers and a first byte at once, then one byte
	// every 50ms: the whole body would take minutes, the server's read
	// deadline comes after a second.
	trickle := func(t *testing.T, encoding string, body []byte) (*http.Response, string) {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%c", encoding, len(body), body[0])
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for _, c := range body[1:] {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := conn.Write([]byte{c}); err != nil {
					return // the server closed the connection
				}
			}
		}()
		defer func() { close(stop); <-done }()
		return rawAnswer(t, conn)
	}
	t.Run("trickled", func(t *testing.T) {
		resp, b := trickle(t, "", firing)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(b, "request body not received within webhook.timeout; retry") {
			t.Fatalf("trickled body: %d %s, want 503 asking for a retry", resp.StatusCode, b)
		}
	})
	t.Run("trickled gzip", func(t *testing.T) {
		resp, b := trickle(t, "Content-Encoding: gzip\r\n", gzipped(t, firing))
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(b, "request body not received within webhook.timeout; retry") {
			t.Fatalf("trickled gzip body: %d %s, want 503 asking for a retry", resp.StatusCode, b)
		}
	})
	// The client's side closes after half the body (a sender or proxy
	// going away mid-body).
	t.Run("connection ends mid-body", func(t *testing.T) {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(firing), firing[:len(firing)/2])
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		resp, b := rawAnswer(t, conn)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(b, "retry") {
			t.Fatalf("body cut mid-way: %d %s, want 503 asking for a retry", resp.StatusCode, b)
		}
	})
	if got := s.metric(t, incomplete); got != incomplete+" 3" {
		t.Errorf("after three bodies not received: %q, want 3", got)
	}
	if got := s.metric(t, badInput); got != badInput+" 0" {
		t.Errorf("bodies not received counted as bad input: %q", got)
	}
	if n := len(s.p.processed()); n != 0 {
		t.Errorf("%d incomplete bodies processed", n)
	}
}

// A request whose Content-Length already exceeds max_body_bytes is
// answered 413 at once: the body is not waited for (the client here
// never sends it; with the read deadline of a second, waiting for it
// would answer something else after that second).
func TestADeclaredLengthOverTheLimitIs413WithoutTheBody(t *testing.T) {
	s := startEdge(t, 64<<10, time.Second)
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 100<<20)
	resp, b := rawAnswer(t, conn)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(b, "body larger than the limit of 65536 bytes (webhook.max_body_bytes)") {
		t.Fatalf("Content-Length of 100 MiB: %d %s, want 413 naming the limit", resp.StatusCode, b)
	}
	if !resp.Close {
		t.Errorf("the connection is kept after a body left unread: %v", resp.Header)
	}
	const tooLarge = `alertrouter_webhooks_total{code="413",outcome="bad_input"}`
	if got := s.metric(t, tooLarge); got != tooLarge+" 1" {
		t.Errorf("%q, want the 413 counted", got)
	}
}

// Alertmanager sends identity, but proxies and other senders gzip: a
// gzip body is decoded and processed as the plain one.
func TestAGzipBodyIsProcessedAsThePlainOne(t *testing.T) {
	s := startEdge(t, 1<<20, 0)
	firing := webhooktest.ReadFixture(t, "firing.json")
	plain := postEncoded(t, s.url, "", firing)
	if plain.status != http.StatusOK {
		t.Fatalf("plain body: %d %s", plain.status, plain.body)
	}
	for _, tc := range []struct {
		encoding string
		body     []byte
	}{
		{"identity", firing},
		{"gzip", gzipped(t, firing)},
		{"GZIP", gzipped(t, firing)},
		{"x-gzip", gzipped(t, firing)},
		{"identity, gzip", gzipped(t, firing)},
	} {
		a := postEncoded(t, s.url, tc.encoding, tc.body)
		if a.status != plain.status || a.body != plain.body {
			t.Errorf("Content-Encoding %q: %d %s, want the plain body's %d %s", tc.encoding, a.status, a.body, plain.status, plain.body)
		}
	}
	msgs := s.p.processed()
	if len(msgs) != 6 {
		t.Fatalf("%d webhooks processed, want 6", len(msgs))
	}
	for i, m := range msgs[1:] {
		if m.GroupKey != msgs[0].GroupKey || !reflect.DeepEqual(m.Items, msgs[0].Items) {
			t.Errorf("webhook %d decoded otherwise than the plain one: %+v", i+1, m)
		}
	}
}

// The limit of max_body_bytes holds for the decompressed body: a few KB
// of gzip that inflate beyond it (a gzip bomb) are 413, not read whole.
// Bad gzip data, sent whole, is the sender's fault: 400.
func TestAGzipBodyIsBoundedDecompressed(t *testing.T) {
	s := startEdge(t, 64<<10, 0)
	bomb := gzipped(t, append([]byte(`{"version":"4","alerts":[`), bytes.Repeat([]byte(" "), 4<<20)...))
	if len(bomb) >= 64<<10 {
		t.Fatalf("the bomb is %d bytes compressed, want it under the limit", len(bomb))
	}
	a := postEncoded(t, s.url, "gzip", bomb)
	if a.status != http.StatusRequestEntityTooLarge || !strings.Contains(a.body, "body larger than the limit of 65536 bytes") {
		t.Errorf("gzip bomb (%d bytes inflating to 4 MiB): %d %s, want 413", len(bomb), a.status, a.body)
	}
	firing := webhooktest.ReadFixture(t, "firing.json")
	z := gzipped(t, firing)
	for name, body := range map[string][]byte{
		"not gzip":         firing,
		"truncated stream": z[:len(z)/2],
	} {
		if a := postEncoded(t, s.url, "gzip", body); a.status != http.StatusBadRequest || !strings.Contains(a.body, "gzip") {
			t.Errorf("%s: %d %s, want 400 naming the gzip data", name, a.status, a.body)
		}
	}
	if n := len(s.p.processed()); n != 0 {
		t.Errorf("%d bad gzip bodies processed", n)
	}
}

// A coding other than identity and gzip is refused with 415 naming it
// (and Accept-Encoding saying what is taken), never read as if plain.
func TestAnUnsupportedContentEncodingIs415(t *testing.T) {
	s := startEdge(t, 1<<20, 0)
	firing := webhooktest.ReadFixture(t, "firing.json")
	for _, enc := range []string{"br", "deflate", "zstd", "gzip, br"} {
		a := postEncoded(t, s.url, enc, firing)
		want := `Content-Encoding \"` + enc + `\" not supported (send identity or gzip)`
		if a.status != http.StatusUnsupportedMediaType || !strings.Contains(a.body, want) || a.header.Get("Accept-Encoding") != "gzip" {
			t.Errorf("Content-Encoding %q: %d %v %s, want 415 with %s", enc, a.status, a.header, a.body, want)
		}
	}
	if n := len(s.p.processed()); n != 0 {
		t.Errorf("%d webhooks of an unsupported coding processed", n)
	}
}

// A webhook refused 4xx is a page Alertmanager will not retry: it is
// logged (at most once a second, so a sender's flood does not flood the
// log), not only counted. A POST to a mistyped webhook path is answered
// with JSON naming POST /webhook, not the console's HTML 404.
func TestARefusedWebhookIsLoggedAndAMistypedPathNamed(t *testing.T) {
	var logs notifytest.SyncBuffer
	url := startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: 1 << 20}, slog.New(slog.NewTextHandler(&logs, nil)), 0).url
	post := func(path, ct string) (int, string) {
		t.Helper()
		resp, err := http.Post(url+path, ct, strings.NewReader(`{"version":"4","alerts":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type") + " " + string(b)
	}
	for range 3 {
		if code, body := post("/webhook", "text/plain"); code != http.StatusUnsupportedMediaType {
			t.Fatalf("text/plain: %d %s, want 415", code, body)
		}
	}
	if n := strings.Count(logs.String(), "webhook refused"); n != 1 {
		t.Errorf("three refusals within a second logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "status=415") || !strings.Contains(logs.String(), `unsupported Content-Type \"text/plain\"`) {
		t.Errorf("the refusal's log line lacks its status or error:\n%s", logs.String())
	}
	for _, path := range []string{"/webhook/", "/Webhook", "/webhooks"} {
		code, body := post(path, "application/json")
		if code != http.StatusNotFound || !strings.HasPrefix(body, "application/json") || !strings.Contains(body, "POST /webhook (no trailing slash)") {
			t.Errorf("POST %s: %d %s, want a JSON 404 naming POST /webhook", path, code, body)
		}
	}
	// Prometheus, vmalert or Grafana pointed at the router as if it were
	// an Alertmanager: the console's HTML 404 before, logged nowhere.
	for _, path := range []string{"/api/v1/alerts", "/api/v2/alerts", "/api/v2/alerts/", "//api/v1/alerts"} {
		code, body := post(path, "application/json")
		if code != http.StatusNotFound || !strings.HasPrefix(body, "application/json") || !strings.Contains(body, "not an Alertmanager") || !strings.Contains(body, "POST /webhook") {
			t.Errorf("POST %s: %d %s, want a JSON 404 saying the router is no Alertmanager", path, code, body)
		}
	}
	if !strings.Contains(logs.String(), "points at the router as at an Alertmanager") || strings.Count(logs.String(), "Alertmanager does not retry") != 1 {
		t.Errorf("the alerts-API posts are logged as Alertmanager's refused webhooks:\n%s", logs.String())
	}
}
