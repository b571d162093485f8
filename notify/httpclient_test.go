package notify_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/alertrouter/alertrouter/notify"
)

// A 307 sends a POST's body again to where it points, and prometheus/common
// adds the http_config's credentials to every request, a redirected GET's
// too; Go drops only its own Authorization header across hosts: a redirect
// to another host received a Slack token, a PagerDuty routing key and
// Alertmanager's basic auth (an audit, a review). The outbound clients
// refuse any redirect to another host; one within the host is followed.
func TestARedirectDoesNotTakeCredentialsToAnotherHost(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	var arrived atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away307":
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/v2/enqueue", http.StatusTemporaryRedirect)
		case "/away302":
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/login", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/v2/enqueue", http.StatusPermanentRedirect)
		default:
			arrived.Add(1)
		}
	}))
	defer srv.Close()
	cfg := commoncfg.DefaultHTTPClientConfig
	cfg.BasicAuth = &commoncfg.BasicAuth{Username: "am", Password: "SECRETPW"}
	c, err := notify.HTTPClient(&cfg, "test", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/away307", "/away302"} {
		resp, err := c.Post(srv.URL+path, "application/json", strings.NewReader(`{"routing_key":"SECRET"}`))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: a redirect to another host was followed (status %d)", path, resp.StatusCode)
		}
		if !strings.Contains(err.Error(), "refused a redirect to another host") {
			t.Errorf("%s: error %v", path, err)
		}
	}
	if elsewhere.Load() != 0 {
		t.Errorf("the other host got %d requests", elsewhere.Load())
	}
	resp, err := c.Post(srv.URL+"/moved", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != http.StatusOK || arrived.Load() != 1 {
		t.Fatalf("a 308 within the host: %v, %d posts arrived; want followed", err, arrived.Load())
	}
	resp.Body.Close()
}

// KeepCredentialsHome: the same host however written (case, a trailing
// dot, another port, an IP written otherwise, http to https) is followed;
// another host, or https to http, is not.
func TestKeepCredentialsHomeReadsHostsAsHosts(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"https://events.pagerduty.com/v2/enqueue", "https://EVENTS.pagerduty.com./v2/enqueue", true},
		{"http://relay:80/x", "https://relay/x", true},
		{"http://relay:8080/x", "http://relay:8443/x", true},
		{"http://[::1]:9/x", "http://[0:0::1]:9/y", true},
		{"https://events.pagerduty.com/v2/enqueue", "http://events.pagerduty.com/v2/enqueue", false},
		{"https://slack.com/api/chat.postMessage", "https://evil.example/api", false},
		{"http://127.0.0.1:1/x", "http://localhost:1/x", false},
	} {
		from, _ := http.NewRequest(http.MethodPost, tc.from, nil)
		to, _ := http.NewRequest(http.MethodPost, tc.to, nil)
		if err := notify.KeepCredentialsHome(to, []*http.Request{from}); (err == nil) != tc.ok {
			t.Errorf("%s → %s: %v, want followed %v", tc.from, tc.to, err, tc.ok)
		}
	}
}
