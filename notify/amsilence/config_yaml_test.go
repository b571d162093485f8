package amsilence_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/notify/amsilence"
)

// An alertmanager section written without http_config reads
// prometheus/common's client defaults, as Alertmanager's and Prometheus'
// own do: its client follows a redirect within the host (an audit: an
// alertmanager.url answering 307 — an ingress moving the path — failed
// every silence and every question to Alertmanager, while the PagerDuty,
// Slack and Prometheus clients followed). Written off, it stays off.
func TestAnAlertmanagerSectionWithoutHTTPConfigFollowsRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/moved/") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[]"))
			return
		}
		http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		yaml   string
		follow bool
	}{
		{"url: " + srv.URL, true},
		{"url: " + srv.URL + "\nresolve_unsent_after: 1m", true},
		{"url: " + srv.URL + "\nhttp_config: {follow_redirects: false}", false},
	} {
		var cfg amsilence.Config
		if err := yaml.UnmarshalStrict([]byte(tc.yaml), &cfg); err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if !cfg.HTTPConfig.EnableHTTP2 {
			t.Errorf("%q: enable_http2 off, want prometheus/common's default", tc.yaml)
		}
		c, err := amsilence.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.List(context.Background())
		if tc.follow && err != nil {
			t.Errorf("%q: listing silences through a 307: %v", tc.yaml, err)
		}
		if !tc.follow && err == nil {
			t.Errorf("%q: followed the 307 with follow_redirects: false", tc.yaml)
		}
	}
}
