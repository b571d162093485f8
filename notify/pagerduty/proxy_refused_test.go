package pagerduty_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	commoncfg "github.com/prometheus/common/config"

	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// An egress proxy refusing the tunnel to PagerDuty (CONNECT answered 403 or
// 407) read "send trigger event: Forbidden", as if PagerDuty had refused
// the event: the error says the proxy refused.
func TestAProxyRefusingTheTunnelIsNamed(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusProxyAuthRequired} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "denied by policy", status)
			}))
			defer proxy.Close()
			u, err := url.Parse(proxy.URL)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, func(c *pagerduty.Config) {
				c.URL = "https://events.pagerduty.invalid/v2/enqueue"
				c.HTTPConfig = &commoncfg.HTTPClientConfig{ProxyConfig: commoncfg.ProxyConfig{ProxyURL: commoncfg.URL{URL: u}}}
			})
			err = h.n.Notify(context.Background(), opening("aaa"))
			if err == nil || !strings.Contains(err.Error(), "the proxy refused the connection") || !strings.Contains(err.Error(), http.StatusText(status)) {
				t.Fatalf("Notify = %v, want it to say the proxy refused (%d)", err, status)
			}
		})
	}
}
