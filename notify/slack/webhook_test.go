package slack_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// webhookStandIn answers like a Slack incoming webhook: 200 "ok" for a
// valid message, 400 "invalid_payload" for a body that is not one, 404
// "no_service" for an unknown (revoked) webhook path.
type webhookStandIn struct {
	mu    sync.Mutex
	posts []map[string]any
	fail  int    // answer 500 this many times first
	path  string // the webhook's path (webhookPath when empty)
}

const webhookPath = "/services/T000/B000/s3cretW3bhookToken"

func (s *webhookStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if want := cmp.Or(s.path, webhookPath); r.URL.Path != want {
		http.Error(w, "no_service", http.StatusNotFound)
		return
	}
	if s.fail > 0 {
		s.fail--
		http.Error(w, "internal_error", http.StatusInternalServerError)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &m) != nil || (m["text"] == nil && m["blocks"] == nil) {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	s.posts = append(s.posts, m)
	_, _ = io.WriteString(w, "ok")
}

func newWebhookNotifier(t *testing.T, url string) *slack.Notifier {
	t.Helper()
	cfg := slack.DefaultConfig()
	cfg.APIURL = url
	cfg.Username = "alertrouter"
	n, err := slack.New(&cfg, "triage", notify.Deps{Retry: notify.RetryPolicy{MaxAttempts: 3, InitialBackoff: 1, MaxBackoff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIncomingWebhookModePostsOneMessagePerNotification(t *testing.T) {
	s := &webhookStandIn{fail: 1}
	srv := httptest.NewServer(s)
	defer srv.Close()
	n := newWebhookNotifier(t, srv.URL+webhookPath)
	no := opening("aaa")
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatalf("Notify: %v (a 500 is retried)", err)
	}
	if no.Ref != "" {
		t.Errorf("Ref = %q: an incoming webhook has no parent to thread under", no.Ref)
	}
	resolved := opening("aaa")
	resolved.Opening, resolved.IncidentResolved, resolved.Kind = false, true, alert.KindResolved
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatal(err)
	}
	if len(s.posts) != 2 {
		t.Fatalf("%d messages posted, want 2 (one per notification)", len(s.posts))
	}
	if s.posts[0]["username"] != "alertrouter" || s.posts[0]["blocks"] == nil {
		t.Errorf("first post %v: want the Block Kit message with the configured username", s.posts[0])
	}
}

func TestIncomingWebhookRevokedIsPermanentAndNeverLeaksTheURL(t *testing.T) {
	srv := httptest.NewServer(&webhookStandIn{})
	defer srv.Close()
	n := newWebhookNotifier(t, srv.URL+"/services/T000/B000/revokedS3cret")
	err := n.Notify(context.Background(), opening("aaa"))
	if err == nil || alert.Retryable(err) {
		t.Fatalf("Notify to a revoked webhook = %v, want a permanent error", err)
	}
	if strings.Contains(err.Error(), "revokedS3cret") {
		t.Errorf("error names the webhook's secret path: %v", err)
	}
	if !strings.Contains(err.Error(), "no_service") {
		t.Errorf("error %q does not carry Slack's answer (no_service: slack-go drops it)", err)
	}
	srv.Close()
	err = newWebhookNotifier(t, srv.URL+"/services/T000/B000/downS3cret").Notify(context.Background(), opening("aaa"))
	if err == nil || !alert.Retryable(err) || strings.Contains(err.Error(), "downS3cret") {
		t.Fatalf("Notify to an unreachable webhook = %v, want a retryable error without the URL", err)
	}
}

func TestIncomingWebhookConfigRefusesWebAPIFeatures(t *testing.T) {
	cfg := slack.DefaultConfig()
	cfg.APIURL = "https://hooks.slack.com/services/T000/B000/XXXX"
	cfg.Token = "xoxb-1"
	cfg.Actions = slack.TriageActions{Names: []string{"ack"}}
	err := cfg.Validate()
	for _, want := range []string{"token: an incoming webhook", "actions: the triage buttons need the Web API"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want %q", err, want)
		}
	}
	ok := slack.DefaultConfig()
	ok.APIURL = "https://hooks.slack.com/services/T000/B000/XXXX"
	if err := ok.Validate(); err != nil {
		t.Errorf("an Alertmanager incoming-webhook entry (api_url only) is refused: %v", err)
	}
	if !ok.WebhookMode() {
		t.Error("WebhookMode() = false for an incoming-webhook api_url")
	}
}

// A Slack-compatible incoming webhook (Mattermost's …/hooks/…, Rocket.Chat)
// in api_url or api_url_file, without a token, is incoming-webhook mode, as
// Alertmanager reads it; with a token, api_url stays the Web API base.
func TestASlackCompatibleIncomingWebhookIsWebhookMode(t *testing.T) {
	s := &webhookStandIn{path: "/hooks/x4pmq3s8d7"}
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := slack.DefaultConfig()
	cfg.APIURL = srv.URL + s.path
	if !cfg.WebhookMode() {
		t.Fatal("WebhookMode() = false for an api_url without a token")
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if err := newWebhookNotifier(t, cfg.APIURL).Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	file := filepath.Join(t.TempDir(), "url")
	if err := os.WriteFile(file, []byte(srv.URL+s.path+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile := slack.DefaultConfig()
	fromFile.APIURLFile = file
	n, err := slack.New(&fromFile, "triage", notify.Deps{Retry: notify.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatalf("New with api_url_file: %v", err)
	}
	if err := n.Notify(context.Background(), opening("bbb")); err != nil {
		t.Fatalf("Notify through api_url_file: %v", err)
	}
	if len(s.posts) != 2 {
		t.Fatalf("%d messages posted, want 2", len(s.posts))
	}
	webAPI := slack.DefaultConfig()
	webAPI.APIURL, webAPI.Token, webAPI.Channel = "https://slack.internal.example/api/", "xoxb-1", "#c"
	if webAPI.WebhookMode() {
		t.Error("an api_url with a token was taken for an incoming webhook")
	}
}

// A post to the incoming webhook that was sent and never answered in time
// may have been posted: it is not posted again within the webhook (each
// retry Slack had made too was one more message); the failure is retryable,
// so Alertmanager's retry posts it once more.
func TestIncomingWebhookPostWithAnUnknownOutcomeIsNotPostedAgain(t *testing.T) {
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		posts++
		mu.Unlock()
		<-r.Context().Done() // posted, and answered after the client gave up
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name             string
		attempt, webhook time.Duration
	}{
		{"the attempt's timeout", 100 * time.Millisecond, time.Minute},
		{"the webhook's deadline", 10 * time.Second, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			posts = 0
			mu.Unlock()
			cfg := slack.DefaultConfig()
			cfg.APIURL = srv.URL + webhookPath
			cfg.Timeout = model.Duration(tc.attempt)
			reg := prometheus.NewRegistry()
			n, err := slack.New(&cfg, "triage", notify.Deps{Metrics: notify.NewMetrics(reg), Retry: notify.RetryPolicy{MaxAttempts: 3, InitialBackoff: 1, MaxBackoff: 1}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.webhook)
			defer cancel()
			err = n.Notify(ctx, opening("aaa"))
			if err == nil || !alert.Retryable(err) || !strings.Contains(err.Error(), "timed out") {
				t.Fatalf("Notify = %v, want a retryable timeout (Alertmanager retries)", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if posts != 1 {
				t.Fatalf("%d posts reached the incoming webhook, want 1 (not posted again within the webhook)", posts)
			}
			if f := notifytest.Failures(t, reg, slack.Integration); f[notify.ReasonTimeout] != 1 || f[notify.ReasonServerError] != 0 {
				t.Errorf("failures by reason %v, want one timeout", f)
			}
		})
	}
}

// An incoming webhook posts every notification as a message of its own and
// keeps no parent: the dispatch core must not take its partial resolves
// for replies with no thread to go under (alert.ThreadsUpdates), as it does
// the Web API's, which replies in the parent's thread.
func TestOnlyTheWebAPIThreadsUpdates(t *testing.T) {
	srv := httptest.NewServer(&webhookStandIn{})
	defer srv.Close()
	if newWebhookNotifier(t, srv.URL+webhookPath).ThreadsUpdates() {
		t.Error("an incoming webhook says it threads updates")
	}
	if !newHarness(t).notifier(t, nil).ThreadsUpdates() {
		t.Error("the Web API says it does not thread updates")
	}
}

// A 2xx that is not Slack's "ok" — a proxy's or a firewall's page answered
// 200, an error in a JSON body — was counted delivered and answered 2xx
// (an audit: 200 "invalid_token" journaled sent). It fails, permanent, as
// Alertmanager's Slack integration reads it; "ok", and JSON with "ok":
// true, succeed.
func TestAnIncomingWebhookAnswerThatIsNotOKFails(t *testing.T) {
	for _, tc := range []struct {
		status            int
		contentType, body string
		want              string // in the error; "": delivered
	}{
		{200, "text/plain", "ok", ""},
		{200, "application/json; charset=utf-8", `{"ok":true}`, ""},
		{200, "text/plain", "invalid_token", "invalid_token"},
		{200, "text/plain", "ok\n", `"ok\n"`},
		{200, "text/html", "<html><body>Blocked by policy</body></html>", "Blocked by policy"},
		{200, "application/json", `{"ok":false,"error":"channel_not_found"}`, "channel_not_found"},
		{204, "text/plain", "", "answered 204"},
	} {
		var requests atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			w.Header().Set("Content-Type", tc.contentType)
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		}))
		err := newWebhookNotifier(t, srv.URL+webhookPath).Notify(context.Background(), opening("aaa"))
		srv.Close()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("answer %d %q: Notify = %v, want delivered", tc.status, tc.body, err)
		case tc.want == "":
		case err == nil || alert.Retryable(err):
			t.Errorf("answer %d %q: Notify = %v, want a permanent error", tc.status, tc.body, err)
		case !strings.Contains(err.Error(), tc.want):
			t.Errorf("answer %d %q: error %q does not quote it", tc.status, tc.body, err)
		case !notify.HoldsClaims(err):
			// A 2xx may have posted it: the claims are kept (not posted
			// again on Alertmanager's retry of the 502).
			t.Errorf("answer %d %q: error %q is not an unknown outcome", tc.status, tc.body, err)
		}
		if n := requests.Load(); n != 1 {
			t.Errorf("answer %d %q: %d requests, want 1 (a 2xx is not posted again)", tc.status, tc.body, n)
		}
	}
}

// After an incoming webhook answered 429, its posts are paced as a Web API
// channel's: one a second, a post whose turn is too far off failing
// retryable without being sent. Unpaced, an audit saw 80 posts a second
// against a webhook answering 429.
func TestAnIncomingWebhookIsPacedAfterA429(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		first := requests == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "rate_limited", http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	n := newWebhookNotifier(t, srv.URL+webhookPath)
	if err := n.Notify(context.Background(), opening("first")); err != nil {
		t.Fatalf("Notify after a 429: %v, want it posted on its retry", err)
	}
	const burst = 6
	errs := make(chan error, burst)
	for i := range burst {
		go func() { errs <- n.Notify(context.Background(), opening("b"+string(rune('a'+i)))) }()
	}
	paced := 0
	for range burst {
		if err := <-errs; err != nil {
			if !alert.Retryable(err) || !strings.Contains(err.Error(), "paced") {
				t.Errorf("Notify in the burst = %v, want posted or paced (retryable)", err)
			}
			paced++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if paced == 0 || requests != 2+burst-paced {
		t.Errorf("%d requests, %d of %d posts paced; want some paced, each other post sent once", requests, paced, burst)
	}
}

// Posts a 429 refused retry at the turn it kept for them, and each
// concurrent 429 pushes the turns further: waiting them out held webhooks
// until their deadline, failed with "context deadline exceeded" and no
// word of Slack (a review: 7 of 8 held 25 s). A retry due past half of the
// time left fails at once, saying Slack rate-limited the channel.
func TestAPostWhoseRetryIsDueTooLateAfterA429FailsSayingSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		http.Error(w, "rate_limited", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	n := newWebhookNotifier(t, srv.URL+webhookPath)
	const posts = 8
	errs := make(chan error, posts)
	for i := range posts {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
			defer cancel()
			errs <- n.Notify(ctx, opening("p"+string(rune('a'+i))))
		}()
	}
	for range posts {
		err := <-errs
		if err == nil || !alert.Retryable(err) || strings.Contains(err.Error(), "deadline exceeded") || !strings.Contains(err.Error(), "rate-limited") {
			t.Errorf("Notify = %v, want a retryable failure saying Slack rate-limited the channel, not a deadline", err)
		}
	}
}

// An error page may echo the request's URL ("Cannot POST
// /services/T0/B0/…"): its path, the incoming webhook's credential, was
// quoted in the error, and so in the log, the webhook's answer and the
// journal (an audit). It is hidden, on a 404 and on a 200 that is not
// Slack's "ok".
func TestAnAnswerEchoingTheWebhooksPathHidesIt(t *testing.T) {
	// As written, escaped for JSON or a query, or its token alone (a
	// review found each left whole).
	echoes := []func(path string) string{
		func(path string) string { return "<pre>Cannot POST " + path + "</pre>" },
		func(path string) string { return `{"error":"Cannot POST ` + strings.ReplaceAll(path, "/", `\/`) + `"}` },
		func(path string) string { return "Cannot POST " + url.QueryEscape(path) },
		func(path string) string {
			return "Cannot POST: invalid token " + path[strings.LastIndexByte(path, '/')+1:]
		},
	}
	for _, status := range []int{http.StatusNotFound, http.StatusOK} {
		for i, echo := range echoes {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				_, _ = w.Write([]byte(echo(r.URL.Path)))
			}))
			err := newWebhookNotifier(t, srv.URL+webhookPath).Notify(context.Background(), opening("aaa"))
			srv.Close()
			if err == nil || !strings.Contains(err.Error(), "Cannot POST") {
				t.Fatalf("HTTP %d, echo %d: Notify = %v; want the answer quoted", status, i, err)
			}
			if strings.Contains(err.Error(), "s3cretW3bhookToken") {
				t.Errorf("HTTP %d, echo %d: the error shows the webhook's path: %v", status, i, err)
			}
		}
	}
}
