package config

import (
	"strings"
	"testing"
)

const triageBase = `
route: {receiver: tickets}
receivers:
  - name: pages
    pagerduty_configs: [{routing_key: 0123456789abcdef0123456789abcdef}]
  - name: tickets
    slack_configs:
      - token: xoxb-1
        channel: '#triage'
`

func TestTriageConfig(t *testing.T) {
	cases := []struct {
		name, extra, want string
	}{
		{"silence needs alertmanager", "        signing_secret: s\n        actions: [silence]\n", "receivers[1].slack_configs[0].actions: silence needs the top-level alertmanager block"},
		{"ack needs pagerduty", "        signing_secret: s\n        actions: [ack]\n", `ack and resolve need pagerduty_configs in receiver "tickets"`},
		{"escalate to an unknown receiver", "        signing_secret: s\n        actions: [escalate]\n        escalate_to: nope\n", `escalate_to: unknown receiver "nope"`},
		{"actions need a signing secret", "        actions: [escalate]\n        escalate_to: pages\n", "actions: need signing_secret or signing_secret_file"},
		{"unknown action", "        signing_secret: s\n        actions: [reboot]\n", `actions: unknown action "reboot"`},
		{"bad authorized id", "        signing_secret: s\n        actions: [escalate]\n        escalate_to: pages\n        authorized: {escalate: [jdoe]}\n", `authorized.escalate: "jdoe" is not a Slack user id`},
		{"bad alertmanager url", "        signing_secret: s\n        actions: [escalate]\n        escalate_to: pages\nalertmanager: {url: 'am:9093'}\n", "alertmanager.url:"},
		{"good", "        signing_secret_file: secret\n        actions: [ack, silence, escalate, resolve]\n        escalate_to: pages\n        authorized: {escalate: [U123, S0ONCALL]}\nalertmanager:\n  url: http://am:9093\n  http_config: {basic_auth: {username: router, password_file: am-pw}}\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(triageBase+c.extra), "/etc/router")
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := cfg.Alertmanager.HTTPConfig.BasicAuth.PasswordFile; got != "/etc/router/am-pw" {
					t.Fatalf("password_file = %q, want it resolved against the config's directory", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
