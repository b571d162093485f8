package pagerduty_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// PagerDuty answers an event 202 with its JSON. A 2xx from something
// between — an egress proxy's or firewall's block page (F5 ASM answers
// 200), a login page reached through a redirect that turned the POST into
// a GET — was taken as delivered: the page was lost and Alertmanager was
// answered 2xx, its repeats then deduplicated. Such an answer is a
// retryable failure now; PagerDuty's own answers still deliver.
func TestAnAnswerThatIsNotPagerDutysIsNotADelivery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		handler   http.HandlerFunc
		delivered bool
	}{
		{"block page 200 text/plain", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("Request blocked by policy"))
		}, false},
		{"redirect to a login page", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/login" {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte("<html>sign in</html>"))
				return
			}
			http.Redirect(w, r, "/login", http.StatusFound)
		}, false},
		{"200 with JSON that is not PagerDuty's", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"blocked":true}`))
		}, false},
		{"PagerDuty's 202 with an unreadable body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
		}, true},
		{"a compatible endpoint's 200 with PagerDuty's JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"success","message":"Event processed","dedup_key":"k"}`))
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var posts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					posts.Add(1)
				}
				tc.handler(w, r)
			}))
			defer srv.Close()
			h := newHarness(t, func(c *pagerduty.Config) { c.URL = srv.URL + "/v2/enqueue" })
			err := h.n.Notify(context.Background(), opening("fp1"))
			if tc.delivered {
				if err != nil || posts.Load() != 1 {
					t.Fatalf("Notify = %v after %d posts; want delivered once", err, posts.Load())
				}
				return
			}
			if err == nil || !alert.Retryable(err) {
				t.Fatalf("Notify = %v; want a retryable failure (the event did not reach PagerDuty)", err)
			}
			if !strings.Contains(err.Error(), "not PagerDuty's answer") {
				t.Errorf("the error does not say the answer was not PagerDuty's: %v", err)
			}
			if posts.Load() < 2 {
				t.Errorf("%d posts; want the event retried", posts.Load())
			}
		})
	}
}

// A proxy's or a firewall's error page may echo the request: PagerDuty's
// 400 text was quoted whole in the error, and with it the routing key —
// into the log, the webhook's 503 answer (Alertmanager's log), the journal,
// dead letters and the console (an audit). The key is hidden.
func TestAnAnswerEchoingTheEventHidesTheRoutingKey(t *testing.T) {
	// The padding puts the key across the 512 characters errorText keeps:
	// hidden after the cut, the part of it before was left (a review).
	for _, pad := range []int{0, 470} {
		for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError} {
			checkEchoHidesTheKey(t, status, pad)
		}
	}
}

func checkEchoHidesTheKey(t *testing.T, status, pad int) {
	t.Helper()
	{
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.WriteHeader(status)
			_, _ = w.Write(append([]byte("bad request: "+strings.Repeat("x", pad)), body...))
		}))
		h := newHarness(t, func(c *pagerduty.Config) { c.URL = srv.URL + "/v2/enqueue" })
		err := h.n.Notify(context.Background(), opening("fp1"))
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), "routing_key") {
			t.Fatalf("HTTP %d: Notify = %v; want the echoed event quoted", status, err)
		}
		if strings.Contains(err.Error(), pdtest.RoutingKey[:8]) || !strings.Contains(err.Error(), `"routing_key":"<secret>`) {
			t.Errorf("HTTP %d, %d bytes before the event: the error shows the routing key: %v", status, pad, err)
		}
	}
}
