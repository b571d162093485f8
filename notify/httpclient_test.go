package notify_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify"
)

// A 307 sends a POST's body again to where it points, and Go drops only
// the Authorization header across hosts: a redirect to another host
// received a Slack token and a PagerDuty routing key (an audit). The
// outbound clients refuse it; a redirect within the host is followed.
func TestARedirectDoesNotSendTheBodyToAnotherHost(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	var moved atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/v2/enqueue", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/v2/enqueue", http.StatusPermanentRedirect)
		default:
			moved.Add(1)
		}
	}))
	defer srv.Close()
	c, err := notify.HTTPClient(nil, "test", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(srv.URL+"/away", "application/json", strings.NewReader(`{"routing_key":"SECRET"}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a 307 to another host was followed (status %d)", resp.StatusCode)
	}
	if elsewhere.Load() != 0 || !strings.Contains(err.Error(), "refused a redirect") {
		t.Errorf("the other host got %d requests; error %v", elsewhere.Load(), err)
	}
	resp, err = c.Post(srv.URL+"/moved", "application/json", strings.NewReader(`{}`))
	if err != nil || resp.StatusCode != http.StatusOK || moved.Load() != 1 {
		t.Fatalf("a 308 within the host: %v, %d posts arrived; want followed", err, moved.Load())
	}
	resp.Body.Close()
}
