package config

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	ampagerduty "github.com/prometheus/alertmanager/notify/pagerduty"
	amslack "github.com/prometheus/alertmanager/notify/slack"

	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing"
)

// yamlKeys returns the YAML keys of struct type t, inlined structs
// included.
func yamlKeys(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k := range yamlKeys(ft) {
				out[k] = true
			}
			continue
		}
		if name != "" {
			out[name] = true
		}
	}
	return out
}

// Every key of Alertmanager's own receiver and route config structs is a key of the
// router's: a field Alertmanager adds fails this test until it is handled.
func TestEveryAlertmanagerReceiverKeyIsAccepted(t *testing.T) {
	for _, tc := range []struct {
		name       string
		am, router reflect.Type
	}{
		{"pagerduty_configs", reflect.TypeOf(ampagerduty.PagerdutyConfig{}), reflect.TypeOf(pagerduty.Config{})},
		{"slack_configs", reflect.TypeOf(amslack.SlackConfig{}), reflect.TypeOf(slack.Config{})},
	} {
		ours := yamlKeys(tc.router)
		var missing []string
		for k := range yamlKeys(tc.am) {
			if !ours[k] {
				missing = append(missing, k)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s: Alertmanager keys the router rejects: %s", tc.name, strings.Join(missing, ", "))
		}
	}
}

// An Alertmanager receiver with every key set loads unchanged, and the
// keys take their meaning.
func TestAnAlertmanagerReceiverLoadsUnchanged(t *testing.T) {
	c, err := Parse([]byte(`
route: {receiver: team}
receivers:
  - name: team
    pagerduty_configs:
      - routing_key: abc123
        send_resolved: false
        http_config: {proxy_url: 'http://proxy.example:3128', tls_config: {insecure_skip_verify: false}}
        url: https://events.pagerduty.com/v2/enqueue
        client: Alertmanager
        client_url: '{{ .ExternalURL }}'
        description: '{{ .CommonLabels.alertname }} fired'
        details: {firing: '{{ .Alerts.Firing | len }}', static: 3}
        images: [{src: 'https://img.example/a.png', alt: graph, href: 'https://grafana.example'}]
        links: [{href: 'https://runbooks.example/x', text: runbook}]
        source: prometheus
        severity: error
        class: latency
        component: api
        group: web
        timeout: 5s
    slack_configs:
      - app_token: xoxb-123
        send_resolved: true
        http_config: {follow_redirects: true}
        channel: '#alerts'
        username: alertmanager
        color: '{{ if eq .Status "firing" }}danger{{ else }}good{{ end }}'
        title: '{{ .CommonLabels.alertname }}'
        title_link: 'https://am.example'
        pretext: pre
        text: body
        fields: [{title: t, value: v, short: true}]
        short_fields: true
        footer: foot
        fallback: fb
        callback_id: cb
        icon_emoji: ':fire:'
        link_names: true
        mrkdwn_in: [text]
        message_text: m
        update_message: true
        actions: [{type: button, text: 'Runbook', url: 'https://runbooks.example/x'}]
        timeout: 5s
`), ".")
	if err != nil {
		t.Fatal(err)
	}
	pd, s := c.Receivers[0].PagerdutyConfigs[0], c.Receivers[0].SlackConfigs[0]
	if pd.Resolved() || !s.Resolved() {
		t.Errorf("send_resolved: pagerduty %v (want false), slack %v (want true)", pd.Resolved(), s.Resolved())
	}
	if pd.HTTPConfig == nil || pd.HTTPConfig.ProxyURL.URL == nil || pd.Class != "latency" || len(pd.Links) != 1 || len(pd.Images) != 1 || pd.Details["static"] != 3 {
		t.Errorf("pagerduty keys not loaded: %+v", pd.Compat)
	}
	if s.AppToken != "xoxb-123" || s.Username != "alertmanager" || len(s.Fields) != 1 {
		t.Errorf("slack keys not loaded: %+v", s.Compat)
	}
	if u := strings.Join(s.Unused(), ","); !strings.Contains(u, "color") || !strings.Contains(u, "actions (attachment buttons)") {
		t.Errorf("Unused() = %v, want the attachment keys and buttons listed", u)
	}
	if len(s.Actions.Names) != 0 {
		t.Errorf("Alertmanager's attachment buttons became triage actions %v", s.Actions.Names)
	}
}

// The keys of Alertmanager v0.35's config.Route (its package pulls in every
// notifier's SDK, so they are listed here rather than reflected).
var alertmanagerRouteKeys = []string{"receiver", "group_by", "match", "match_re", "matchers", "mute_time_intervals",
	"active_time_intervals", "continue", "routes", "group_wait", "group_interval", "repeat_interval", "labels"}

func TestEveryAlertmanagerRouteKeyIsAccepted(t *testing.T) {
	ours := yamlKeys(reflect.TypeOf(routing.Route{}))
	for _, k := range alertmanagerRouteKeys {
		if !ours[k] {
			t.Errorf("route key %s is rejected", k)
		}
	}
}
