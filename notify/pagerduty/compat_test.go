package pagerduty_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	commoncfg "github.com/prometheus/common/config"

	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// Alertmanager's keys take their meaning in the event: description is the
// summary, class/component/group override the derived ones, links and
// images are added, details join custom_details.
func TestAlertmanagerKeysShapeTheEvent(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) {
		c.Description = "DESC {{ .CommonLabels.alertname }}"
		c.Class, c.Component, c.Group = "cls", "comp", "grp"
		c.Links = []pagerduty.Link{{Href: "https://runbooks.example/{{ .CommonLabels.alertname }}", Text: "rb"}}
		c.Images = []pagerduty.Image{{Src: "https://img.example/g.png", Alt: "graph"}}
		c.Details = map[string]any{"owner": "team-{{ .CommonLabels.alertname }}", "static": 3}
	})
	if err := h.n.Notify(context.Background(), opening("fp1")); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	raw := string(evs[0].Raw)
	for _, want := range []string{`"summary":"DESC TTFTHigh"`, `"class":"cls"`, `"component":"comp"`, `"group":"grp"`,
		`"href":"https://runbooks.example/TTFTHigh"`, `"src":"https://img.example/g.png"`, `"owner":"team-TTFTHigh"`, `"static":3`} {
		if !strings.Contains(raw, want) {
			t.Errorf("event lacks %s:\n%s", want, raw)
		}
	}
}

// http_config builds the client: a proxy set there carries the events.
func TestHTTPConfigProxyCarriesTheEvents(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer proxy.Close()
	u, _ := url.Parse(proxy.URL)
	h := newHarness(t, func(c *pagerduty.Config) {
		hc := commoncfg.DefaultHTTPClientConfig
		hc.ProxyURL = commoncfg.URL{URL: u}
		c.HTTPConfig = &hc
	})
	if err := h.n.Notify(context.Background(), opening("fp1")); err != nil {
		t.Fatal(err)
	}
	if proxied.Load() != 1 || len(h.srv.Events()) != 1 {
		t.Fatalf("proxied %d requests, PagerDuty got %d events; want the event through the proxy", proxied.Load(), len(h.srv.Events()))
	}
}
