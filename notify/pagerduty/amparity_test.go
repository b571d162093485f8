package pagerduty_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// Alertmanager renders routing_key (routing_key_file's content too) with
// each notification's data; the router sends one fixed key per entry — the
// resolve of an incident and Slack triage's acknowledge and resolve have no
// notification to render it from. A templated key used to load, pass
// check-config and then fail every send (PagerDuty answers 400): it is
// refused, saying what to do instead.
func TestATemplatedRoutingKeyIsRefused(t *testing.T) {
	var c pagerduty.Config
	if err := yaml.UnmarshalStrict([]byte(`routing_key: '{{ .CommonLabels.pd_key }}'`), &c); err != nil {
		t.Fatal(err)
	}
	err := c.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "routing_key: a template") || !strings.Contains(err.Error(), "Route by the label instead") {
		t.Fatalf("Validate: %v, want the templated routing_key refused with what to do", err)
	}
	if strings.Contains(err.Error(), "pd_key }}") {
		t.Errorf("the error quotes the key's text: %v", err)
	}

	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte("{{ .CommonLabels.pd_key }}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := pagerduty.DefaultConfig()
	cfg.RoutingKeyFile = path
	if _, err := pagerduty.New(&cfg, "oncall", notify.Deps{}); err == nil || !strings.HasPrefix(err.Error(), "routing_key_file: holds a template") {
		t.Fatalf("New with a templated key file: %v, want it refused", err)
	}
}

// The default client_url (and the event's "Alertmanager" link) opens the
// incident's alerts in Alertmanager: those of Alertmanager's receiver that
// sent the webhook (the router's receiver is no receiver of Alertmanager's:
// it listed nothing) and of the group's labels. An operator's client_url
// template is rendered as written.
func TestTheClientURLOpensTheIncidentsAlertsInAlertmanager(t *testing.T) {
	h := newHarness(t, nil)
	no := opening("aaa")
	no.AlertmanagerReceiver = "alert.router" // matched exactly: a regular expression there
	no.Data.GroupLabels = template.KV{"alertname": "TTFTHigh", "namespace": `shop "eu"`, "team": "a<b>&c", "odd name": "x"}
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	ev := h.srv.Events()[0]
	u, err := url.Parse(ev.ClientURL)
	if err != nil {
		t.Fatal(err)
	}
	q, err := url.ParseQuery(strings.TrimPrefix(u.EscapedFragment(), "/alerts?"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "alertmanager.example.com" || !strings.HasPrefix(u.Fragment, "/alerts?") ||
		q.Get("receiver") != `alert\.router` || q.Get("filter") != `{alertname="TTFTHigh",namespace="shop \"eu\"",team="a<b>&c"}` || strings.Contains(ev.ClientURL, "+") {
		t.Fatalf("client_url = %q (receiver %q, filter %q), want Alertmanager's alerts of receiver alert.router and the group's labels", ev.ClientURL, q.Get("receiver"), q.Get("filter"))
	}
	var link string
	for _, l := range ev.Links {
		if l.Text == "Alertmanager" {
			link = l.Href
		}
	}
	if link != ev.ClientURL {
		t.Errorf("the Alertmanager link = %q, want the client_url", link)
	}

	// Unknown receiver (a replayed dead letter): the group's alerts.
	no = opening("aaa")
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if got := h.srv.Events()[1].ClientURL; got != "http://alertmanager.example.com/#/alerts?filter=%7Balertname%3D%22TTFTHigh%22%7D" {
		t.Errorf("client_url = %q", got)
	}

	// The operator's template: as written.
	h = newHarness(t, func(c *pagerduty.Config) { c.ClientURL = `{{ .ExternalURL }}/#/alerts?receiver={{ .Receiver }}` })
	no = opening("aaa")
	no.AlertmanagerReceiver = "alertrouter"
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if got := h.srv.Events()[0].ClientURL; got != "http://alertmanager.example.com/#/alerts?receiver=oncall" {
		t.Errorf("client_url of the operator's template = %q", got)
	}
}

// Alertmanager renders client and every string of details — nested ones
// and the names of nested mappings too — and sends a rendered string that
// reads as YAML structure or a JSON string as that structure
// (template.DeepCopyWithTemplate). The router sent client as its template
// text, rendered only top-level strings of details, and a nested mapping
// (YAML's map[interface{}]interface{}) made the whole event fail to encode:
// it went out as the minimal event, every detail and link lost, logged as
// "over 512 KB".
func TestClientAndNestedDetailsAreTemplatesAsInAlertmanager(t *testing.T) {
	var c pagerduty.Config
	conf := `
routing_key: ` + pdtest.RoutingKey + `
client: '{{ .CommonLabels.job }} via alertrouter'
details:
  owner: 'team-{{ .CommonLabels.alertname }}'
  static: 3
  labels: '{{ .CommonLabels | toJson }}'
  nested:
    '{{ .CommonLabels.job }}': 'job {{ .CommonLabels.job }}'
    list: ['{{ .CommonLabels.alertname }}', 7]
`
	if err := yaml.UnmarshalStrict([]byte(conf), &c); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(cfg *pagerduty.Config) {
		cfg.Client, cfg.Details = c.Client, c.Details
	})
	if err := h.n.Notify(context.Background(), opening("fp1")); err != nil {
		t.Fatal(err)
	}
	ev := h.srv.Events()[0]
	if ev.Client != "vllm via alertrouter" {
		t.Errorf("client = %q, want the template rendered", ev.Client)
	}
	var details map[string]any
	if err := json.Unmarshal(ev.Payload.CustomDetails, &details); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(map[string]any{"owner": details["owner"], "static": details["static"], "labels": details["labels"], "nested": details["nested"]})
	want := `{"labels":{"alertname":"TTFTHigh","job":"vllm"},"nested":{"list":["TTFTHigh",7],"vllm":"job vllm"},"owner":"team-TTFTHigh","static":3}`
	if string(got) != want {
		t.Errorf("details = %s\nwant       %s", got, want)
	}
	if details["alerts"] == nil {
		t.Errorf("custom_details lost the alerts: the full event did not go out: %s", ev.Payload.CustomDetails)
	}

	// A nested template that does not parse is refused when the notifier
	// is built.
	cfg := pagerduty.DefaultConfig()
	cfg.RoutingKey = pdtest.RoutingKey
	cfg.Details = map[string]any{"nested": map[any]any{"k": []any{"{{ .Broken "}}}
	if _, err := pagerduty.New(&cfg, "oncall", notify.Deps{}); err == nil || !strings.HasPrefix(err.Error(), "details.nested.k[0]:") {
		t.Errorf("New with a broken nested template: %v, want it refused naming details.nested.k[0]", err)
	}
}
