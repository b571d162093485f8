package slack_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// front is a server before the Slack stand-in: calls of the methods it
// intercepts reach the stand-in (which does what they ask) and then get
// no answer in time (late) or lose their connection (reset), as a slow
// Slack or a broken proxy does; every other call passes through.
type front struct {
	*httptest.Server
	mu        sync.Mutex
	intercept map[string]string // method → "late" | "reset"; consumed when once
	once      bool
}

func newFront(t *testing.T, h *harness) *front {
	t.Helper()
	f := &front{intercept: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		f.mu.Lock()
		how := f.intercept[method]
		if f.once {
			delete(f.intercept, method)
		}
		f.mu.Unlock()
		if how == "" {
			h.srv.Config.Handler.ServeHTTP(w, r)
			return
		}
		h.srv.Config.Handler.ServeHTTP(httptest.NewRecorder(), r) // Slack does it…
		switch how {
		case "late": // …and answers after the client gave up
			<-r.Context().Done()
		case "reset": // …and the connection breaks before the answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *front) set(method, how string, once bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intercept[method], f.once = how, once
}

func (f *front) pass() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.intercept)
}

func (f *front) config(c *slack.Config) {
	c.APIURL = f.URL + "/api/"
	c.Timeout = model.Duration(200 * time.Millisecond)
}

// A chat.postMessage whose outcome is unknown — sent, and answered too
// late or not at all — is not posted again within the webhook: Slack
// takes no idempotency key, and each retry that Slack had made too was one
// more parent message, never resolved (the audit saw four from one
// webhook). The notification fails retryable, so Alertmanager retries: at
// most one stray parent per Alertmanager attempt.
func TestAPostWithAnUnknownOutcomeIsNotPostedAgain(t *testing.T) {
	for _, how := range []string{"late", "reset"} {
		t.Run(map[string]string{"late": "answered after the timeout", "reset": "connection lost after the request"}[how], func(t *testing.T) {
			h := newHarness(t)
			f := newFront(t, h)
			f.set("chat.postMessage", how, false)
			n := h.notifier(t, f.config)
			no := opening("aaa")
			err := n.Notify(context.Background(), no)
			if calls, parents := h.srv.Calls("chat.postMessage"), len(h.srv.Parents()); calls != 1 || parents != 1 {
				t.Errorf("chat.postMessage called %d times, %d parents; want 1 and 1 (no retry within the webhook)", calls, parents)
			}
			if err == nil || !alert.Retryable(err) || !notify.IsOutcomeUnknown(err) {
				t.Fatalf("err = %v; want a retryable failure of unknown outcome (Alertmanager retries)", err)
			}
			if no.Ref != "" {
				t.Errorf("Ref %q handed back for a post whose answer never came", no.Ref)
			}
			// A Slack that hangs leaves every post so: one warning per
			// cause and interval, not one per post (a review: 783 a second).
			for _, fp := range []string{"bbb", "ccc", "ddd"} {
				if err := n.Notify(context.Background(), opening(fp)); !notify.IsOutcomeUnknown(err) {
					t.Fatalf("post of %s: %v, want an unknown outcome", fp, err)
				}
			}
			if got := strings.Count(h.logs.String(), `msg="Slack post with an unknown outcome`); got != 1 {
				t.Errorf("%d warnings for 4 posts of unknown outcome, want 1:\n%s", got, h.logs.String())
			}
			// Alertmanager's retry, Slack answering again: one more parent.
			// (Sent with a generous timeout: 200ms is the fault above, and
			// a loaded machine may take longer to answer a new connection.)
			f.pass()
			retry := opening("aaa")
			patient := h.notifier(t, func(c *slack.Config) { f.config(c); c.Timeout = model.Duration(30 * time.Second) })
			if err := patient.Notify(context.Background(), retry); err != nil {
				t.Fatal(err)
			}
			if parents := h.srv.Parents(); len(parents) != 5 || parentOf(retry.Ref) != ref(parents[4]) {
				t.Errorf("parents %d, Ref %q; want the four stray ones and the retry's, its Ref kept", len(parents), retry.Ref)
			}
		})
	}
}

// Failures known to have posted nothing are retried within the webhook
// as before: a connection refused (nothing was sent).
func TestAPostThatCouldNotConnectIsRetried(t *testing.T) {
	h := newHarness(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	n := h.notifier(t, func(c *slack.Config) { c.APIURL = url + "/api/" })
	err := n.Notify(context.Background(), opening("aaa"))
	if err == nil || !alert.Retryable(err) || notify.IsOutcomeUnknown(err) {
		t.Fatalf("err = %v; want a retryable failure known to have posted nothing", err)
	}
	if waits := h.waits.All(); len(waits) != 4 {
		t.Errorf("%d retries, want 4 (5 attempts)", len(waits))
	}
}

// chat.update is idempotent: an edit of the parent that times out is
// retried within the webhook, and the resolve's edit lands.
func TestAParentEditThatTimesOutIsRetried(t *testing.T) {
	h := newHarness(t)
	f := newFront(t, h)
	n := h.notifier(t, f.config)
	first := opening("aaa")
	if err := n.Notify(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	f.set("chat.update", "late", true)
	done := under(first.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	done.IncidentResolved = true
	if err := n.Notify(context.Background(), done); err != nil {
		t.Fatal(err)
	}
	if calls := h.srv.Calls("chat.update"); calls != 2 {
		t.Errorf("chat.update called %d times, want 2 (the late one, then its retry)", calls)
	}
	if ps := h.srv.Parents(); len(ps) != 1 || ps[0].Updates != 2 {
		t.Errorf("parents %+v; want one, edited (twice: the late edit was made too)", ps)
	}
}

// An HTML page answered 200 (a proxy's error page, a captive portal, a
// wrong api_url) was counted and told as no answer — "unreachable from the
// pod" — sending the operator after the network (an audit). It is a
// server error saying the answer was not Slack's, naming api_url and the
// proxy; the post is not made again within the webhook.
func TestAnHTMLAnswerIsSaidToBeNoSlackAnswer(t *testing.T) {
	for name, fault := range map[string]slacktest.Fault{
		"HTML": {HTML: true},
		// `{}` answered 200: slack-go reads no error, the post made
		// nothing, and the notification was answered 2xx (a review).
		"an empty object": {Body: "{}"},
	} {
		t.Run(name, func(t *testing.T) { noSlackAnswer(t, fault) })
	}
}

func noSlackAnswer(t *testing.T, fault slacktest.Fault) {
	h := newHarness(t)
	h.srv.Fail(fault)
	reg := prometheus.NewRegistry()
	cfg := slack.DefaultConfig()
	cfg.Token, cfg.Channel, cfg.APIURL = token, "#triage", h.srv.APIURL()
	n, err := slack.New(&cfg, "triage", notify.Deps{Metrics: notify.NewMetrics(reg), Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
		Retry: notify.RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: h.waits.Wait}})
	if err != nil {
		t.Fatal(err)
	}
	err = n.Notify(context.Background(), opening("aaa"))
	if err == nil || !alert.Retryable(err) || !notify.IsOutcomeUnknown(err) || !strings.Contains(err.Error(), "not Slack's JSON") || !strings.Contains(err.Error(), "api_url") {
		t.Fatalf("err = %v; want a retryable failure saying the answer was no Slack JSON", err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "alertrouter_notification_failures_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					reasons[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	if reasons["server_error"] != 1 || reasons["no_answer"] != 0 {
		t.Errorf("failures by reason %v, want one server_error and no no_answer", reasons)
	}
}
