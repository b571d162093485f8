package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/config"
)

// Alertmanager's own good configs (copied from its repository's
// config/testdata and doc/examples, v0.35 route labels included) and one
// in the shape of kube-prometheus' default import into router configs
// check-config accepts.
func TestImportAlertmanagerOutputPassesCheckConfig(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/alertmanager/*.yml")
	if len(files) < 5 {
		t.Fatalf("only %d Alertmanager configs in testdata/alertmanager", len(files))
	}
	for _, f := range files {
		code, out, errs := runMain(t, "import-alertmanager", f)
		if filepath.Base(f) == "doc-examples-simple.yml" {
			// Its pagers use Events API v1 keys: refused, the file printed.
			if code != 1 || !strings.Contains(errs, `receiver "team-DB-pager": pagerduty_configs[0]: Events API v1 service_key`) {
				t.Errorf("import %s: exit %d: %s; want 1 naming the v1 PagerDuty keys", f, code, errs)
			}
		} else if code != 0 {
			t.Fatalf("import %s: exit %d: %s", f, code, errs)
		}
		importErrs := errs
		p := writeFile(t, "router.yml", out)
		code, sum, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Errorf("check-config of the import of %s: exit %d:\n%s\n--- imported:\n%s", f, code, errs, out)
			continue
		}
		switch filepath.Base(f) {
		case "kube-prometheus-default.yml":
			for _, want := range []string{`"null" (4): no integrations, in Alertmanager as here: a blackhole`, "- null: no integrations: a blackhole", `warning: the root route's receiver "Default" has no integrations`} {
				if !strings.Contains(out+sum, want) {
					t.Errorf("import of %s lacks %q:\n%s\n%s", f, want, out, sum)
				}
			}
			if strings.Contains(out, "log_configs") {
				t.Errorf("the blackhole receivers of %s became log receivers:\n%s", f, out)
			}
		case "doc-examples-route_labels.yml":
			if !strings.Contains(sum, "labels description, reason: accepted, no effect here") {
				t.Errorf("check-config of the import of %s does not say what route labels do:\n%s", f, sum)
			}
		}
		if filepath.Base(f) == "conf.good.yml" {
			for _, want := range []string{"# inhibit_rules:", "email_configs: the router has no such integration", "team-DB-pager: pagerduty×1", `service=~"^(foo1|foo2|baz)$"`} {
				if !strings.Contains(out+sum, want) {
					t.Errorf("import of %s lacks %q:\n%s\n%s", f, want, out, sum)
				}
			}
			// What stays in Alertmanager is said where it is seen, not
			// only in the comments.
			if !strings.Contains(importErrs, "not carried over, keep them in Alertmanager's file (see the comments at the top): global.smtp_auth_password, global.smtp_auth_username, global.smtp_from, global.smtp_hello, global.smtp_smarthost, inhibit_rules (1)") {
				t.Errorf("the import of %s does not name on stderr what stays in Alertmanager:\n%s", f, importErrs)
			}
			_, got, _ := runMain(t, "--config.file="+p, "check-config", "--test-route", "alertname=X,service=database,owner=team-Y,decision=page")
			if strings.TrimSpace(got) != "team-Y-pager" {
				t.Errorf("imported routes send service=database,owner=team-Y to %q, want team-Y-pager (as Alertmanager)", got)
			}
		}
	}
}

// An Alertmanager Slack receiver on an incoming webhook loads as one, and
// check-config says what that mode cannot do.
func TestImportKeepsASlackIncomingWebhook(t *testing.T) {
	am := writeFile(t, "alertmanager.yml", `route: {receiver: chat}
receivers:
  - name: chat
    slack_configs:
      - api_url: https://hooks.slack.com/services/T000/B000/XXXXXXXX
        channel: '#alerts'
        send_resolved: true
`)
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "api_url: https://hooks.slack.com/services/T000/B000/XXXXXXXX") {
		t.Fatalf("the incoming webhook was not kept:\n%s", out)
	}
	p := writeFile(t, "router.yml", out)
	code, sum, errs := runMain(t, "--config.file="+p, "check-config")
	if code != 0 {
		t.Fatalf("check-config: exit %d:\n%s\n%s", code, errs, out)
	}
	if !strings.Contains(sum, "incoming webhook (api_url): one message per notification") {
		t.Errorf("check-config does not say what incoming-webhook mode lacks:\n%s", sum)
	}
	if strings.Contains(sum+errs, "XXXXXXXX") {
		t.Errorf("check-config printed the webhook's secret path:\n%s%s", sum, errs)
	}
}

// A team's template file that redefines Alertmanager's defaults (its
// receivers leave title, description … unset) is carried over, and
// check-config names the keys that now render those defaults, as
// Alertmanager does; a receiver whose defaults nobody redefined is not
// named.
func TestCheckConfigNamesTheKeysFollowingRedefinedDefaults(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "custom.tmpl"), []byte(`{{ define "__subject" }}[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }} for team {{ .CommonLabels.team }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	am := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(am, []byte(`route: {receiver: oncall}
templates: ['*.tmpl']
receivers:
  - name: oncall
    pagerduty_configs:
      - routing_key: 0123456789abcdef0123456789abcdef
        client: alertmanager-prod
    slack_configs:
      - api_url: https://hooks.slack.com/services/T000/B000/XXXXXXXX
        channel: '#alerts'
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	p := filepath.Join(dir, "router.yml")
	if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	code, sum, errs := runMain(t, "--config.file="+p, "check-config")
	if code != 0 {
		t.Fatalf("check-config: exit %d:\n%s\n%s", code, errs, out)
	}
	for _, want := range []string{
		`pagerduty_configs[0]: keys left unset render Alertmanager's defaults, which your template files redefine, as Alertmanager does: description: {{ template "pagerduty.default.description" . }}` + "\n",
		`slack_configs[0]: keys left unset render Alertmanager's defaults, which your template files redefine, as Alertmanager does: title: {{ template "slack.default.title" . }}` + "\n",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("check-config does not say %q:\n%s", want, sum)
		}
	}
}

// Where the router would send other alerts than Alertmanager the import
// says so: a route whose alerts the default policies decide none (never
// sent; Alertmanager sent them to the route's receiver), and a matcher on a
// label the router derives. A route whose alerts are sent is not named.
func TestImportNamesTheRoutesThatBehaveDifferently(t *testing.T) {
	am := writeFile(t, "alertmanager.yml", `route:
  receiver: default
  routes:
    - matchers: ['severity="info"']
      receiver: info-chat
    - match: {team: db}
      receiver: db
      routes:
        - match: {severity: debug}
          receiver: db
    - match_re: {sector: retail|ads}
      receiver: retail
    - matchers: ['severity="critical"']
      receiver: default
receivers:
  - name: default
  - name: info-chat
  - name: db
  - name: retail
`)
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		// Whatever the routes match on: info alerts of a team route too.
		"alerts the policies decide none (by default severity info, debug, notice, p5 …) are recorded but never sent",
		`route.routes[0]: the alerts it matches (severity="info") are decided none by the default policies and never sent; Alertmanager sent them to "info-chat"`,
		`route.routes[1].routes[0]: the alerts it matches (severity="debug", team="db") are decided none`,
		`route.routes[2]: matches on "sector", a label the router derives`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the import does not say %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"route.routes[1]: the alerts", "route.routes[3]"} {
		if strings.Contains(out, not) {
			t.Errorf("the import names %q, whose alerts are sent:\n%s", not, out)
		}
	}
}

// Shapes Alertmanager refuses are errors naming their YAML path, never a
// crash; shapes it accepts (an empty integration list, a later
// Alertmanager's route key, a Slack URL only in global.slack_api_url_file)
// convert into a file that loads.
func TestImportNamesWhatIsWrongAndNeverCrashes(t *testing.T) {
	for _, tc := range []struct{ name, in, wantErr string }{
		{"a list at the top", "- route\n", "the file: want a mapping"},
		{"no route", "receivers: [{name: a}]\n", "route: missing"},
		{"a null route", "route:\nreceivers: [{name: a}]\n", "route: missing"},
		{"receivers a string", "route: {receiver: a}\nreceivers: a\n", `receivers: want a list, got the string "a"`},
		{"a receiver a string", "route: {receiver: a}\nreceivers: [a]\n", `receivers[0]: want a mapping, got the string "a"`},
		{"a receiver without a name", "route: {receiver: a}\nreceivers: [{slack_configs: []}]\n", "receivers[0].name: missing"},
		{"a receiver twice", "route: {receiver: a}\nreceivers: [{name: a}, {name: a}]\n", `receivers[1].name: receiver "a" defined twice`},
		{"slack_configs a mapping", "route: {receiver: a}\nreceivers: [{name: a, slack_configs: {}}]\n", "receivers[0].slack_configs: want a list, got a mapping"},
		{"a pagerduty config a string", "route: {receiver: a}\nreceivers: [{name: a, pagerduty_configs: [x]}]\n", `receivers[0].pagerduty_configs[0]: want a mapping, got the string "x"`},
		{"an undefined receiver", "route: {receiver: a, routes: [{receiver: b}]}\nreceivers: [{name: a}]\n", `route.routes[0].receiver: undefined receiver "b"`},
		{"routes a mapping", "route: {receiver: a, routes: {receiver: a}}\nreceivers: [{name: a}]\n", "route.routes: want a list, got a mapping"},
		{"a root without receiver", "route: {group_by: [x]}\nreceivers: [{name: a}]\n", "route.receiver: missing"},
		// Alertmanager refuses these; the import accepted them (an audit).
		{"a wildcard group_by beside labels", "route: {receiver: a, group_by: ['...', alertname]}\nreceivers: [{name: a}]\n", "route.group_by: cannot have wildcard group_by (`...`) and other labels at the same time"},
		{"a label twice in a child's group_by", "route: {receiver: a, routes: [{receiver: a, group_by: [x, x]}]}\nreceivers: [{name: a}]\n", `route.routes[0].group_by: duplicated label "x"`},
		{"an inhibit rule's regex that does not compile", "route: {receiver: a}\nreceivers: [{name: a}]\ninhibit_rules: [{source_matchers: ['severity=\"critical\"'], target_matchers: ['sev=~\"(x\"'], equal: [service]}]\n",
			"inhibit_rules[0].target_matchers[0]:"},
		{"an inhibit rule's old-style regex that does not compile", "route: {receiver: a}\nreceivers: [{name: a}]\ninhibit_rules: [{source_match_re: {severity: '(crit'}, target_match: {severity: warning}}]\n",
			"inhibit_rules[0].source_match_re.severity:"},
		{"inhibit rules that parse", "route: {receiver: a}\nreceivers: [{name: a, pagerduty_configs: [{routing_key: k}]}]\ninhibit_rules: [{source_matchers: ['severity=\"critical\"'], target_match_re: {severity: 'warning|info'}, equal: [service]}]\n", ""},
		{"both api_url and api_url_file", "route: {receiver: a}\nreceivers: [{name: a, slack_configs: [{channel: '#a', api_url: 'https://hooks.slack.com/services/T0/B0/x', api_url_file: f}]}]\n",
			"receivers[0].slack_configs[0]: at most one of api_url and api_url_file must be configured"},
		{"time_intervals a mapping", "route: {receiver: a}\nreceivers: [{name: a}]\ntime_intervals: {x: 1}\n", "time_intervals: want a list"},
		{"a null integration list", "route: {receiver: a}\nreceivers: [{name: a, pagerduty_configs: }]\n", ""},
		{"a later route key", "route: {receiver: a, routes: [{receiver: a, matchers: ['x=\"y\"'], some_future_key: 1}]}\nreceivers: [{name: a, pagerduty_configs: [{routing_key: k}]}]\n", ""},
		// Alertmanager refuses both files; carried on, the first route
		// matched every alert (a page storm to b), the second receiver was
		// a blackhole recording every critical page as muted.
		{"a misspelled matchers", "route: {receiver: a, routes: [{receiver: b, matcher: ['team=\"db\"']}]}\nreceivers: [{name: a}, {name: b, pagerduty_configs: [{routing_key: k}]}]\n",
			"route.routes[0]: matcher: not a route key of Alertmanager v0.35, and without it the route matches every alert"},
		{"a misspelled integration", "route: {receiver: a, routes: [{receiver: b, matchers: ['severity=\"critical\"']}]}\nreceivers: [{name: a}, {name: b, pagerduty_config: [{routing_key: k}]}]\n",
			`receivers[1].pagerduty_config: not a receiver key of Alertmanager`},
		{"a PagerDuty entry without severity", "route: {receiver: a}\nreceivers: [{name: a, pagerduty_configs: [{routing_key: k}, {routing_key: k2, severity: error}]}]\n", ""},
		{"a Slack-compatible incoming webhook", "global: {slack_api_url: 'https://chat.example.org/hooks/x4pmq3s8d7'}\nroute: {receiver: a}\nreceivers: [{name: a, slack_configs: [{channel: '#c'}]}]\n", ""},
		{"a root that continues", "route: {receiver: a, continue: true}\nreceivers: [{name: a}]\n", "route.continue: the root route cannot have it"},
		{"a root with matchers", "route: {receiver: a, matchers: ['x=\"y\"']}\nreceivers: [{name: a}]\n", "route.matchers: the root route cannot have it"},
		{"a root that does not continue, with empty matchers", "route: {receiver: a, continue: false, matchers: []}\nreceivers: [{name: a, pagerduty_configs: [{routing_key: k}]}]\n", ""},
		{"merge keys", "x-slack: &base {api_url: 'https://hooks.slack.com/services/T0/B0/x', channel: '#a', text: 'custom', send_resolved: true}\nroute: {receiver: a, routes: [{<<: {group_wait: 10s}, receiver: b, matchers: ['t=\"b\"']}]}\nreceivers:\n- {name: a, slack_configs: [*base]}\n- name: b\n  slack_configs:\n  - <<: *base\n    channel: '#b'\n", ""},
		{"a bot token in http_config", "route: {receiver: a}\nreceivers:\n- {name: a, slack_configs: [{api_url: 'https://slack.com/api/chat.postMessage', channel: '#a', http_config: {authorization: {credentials_file: tok}}}]}\n- {name: b, slack_configs: [{channel: '#b', http_config: {bearer_token: xoxb-1, proxy_url: 'http://proxy:3128'}}]}\n", ""},
		{"a bot token in global.http_config", "global: {slack_api_url: 'https://slack.com/api/chat.postMessage', http_config: {authorization: {credentials_file: tok}}}\nroute: {receiver: a}\nreceivers: [{name: a, slack_configs: [{channel: '#a'}]}, {name: b, pagerduty_configs: [{routing_key: k}]}]\n", ""},
		{"global.http_config on an incoming webhook", "global: {slack_api_url: 'https://hooks.slack.com/services/T0/B0/x', http_config: {proxy_url: 'http://proxy:3128'}}\nroute: {receiver: a}\nreceivers: [{name: a, slack_configs: [{channel: '#a'}]}]\n", ""},
		{"null integration lists and an unknown top-level key", "tracing: {endpoint: x}\nroute: {receiver: a}\nreceivers: [{name: a, webhook_configs: , email_configs: []}]\n", ""},
		{"a receiver only Alertmanager can send to", "route: {receiver: mail}\nreceivers: [{name: mail, email_configs: [{to: a@example.org}]}]\n", ""},
		{"the Slack URL in global.slack_api_url_file", "global: {slack_api_url_file: hook-url}\nroute: {receiver: a}\nreceivers: [{name: a, slack_configs: [{channel: '#c'}]}]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			am := filepath.Join(dir, "alertmanager.yml")
			if err := os.WriteFile(am, []byte(tc.in), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, importErrs := runMain(t, "import-alertmanager", am)
			errs := importErrs
			if tc.wantErr != "" {
				if code != 1 || !strings.Contains(errs, tc.wantErr) {
					t.Fatalf("exit %d, stderr %q; want 1 and %q", code, errs, tc.wantErr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			// Secret files named by the input exist beside the output.
			if err := os.WriteFile(filepath.Join(dir, "hook-url"), []byte("https://hooks.slack.com/services/T0/B0/x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "tok"), []byte("xoxb-from-file"), 0o600); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "router.yml")
			if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, sum, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 {
				t.Fatalf("check-config of the import: exit %d\n%s%s\n--- imported:\n%s", code, sum, errs, out)
			}
			has := func(want ...string) {
				t.Helper()
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("the import lacks %q:\n%s", w, out)
					}
				}
			}
			switch tc.name {
			case "merge keys":
				// b's entry merges the whole of a's, then overrides the channel.
				if strings.Count(out, "text: custom") != 2 || strings.Count(out, "api_url: https://hooks.slack.com/services/T0/B0/x") != 2 || strings.Contains(out, "<<") {
					t.Errorf("the merged keys were not applied:\n%s", out)
				}
				has("channel: '#b'", "group_wait: 10s", "send_resolved: true")
			case "a bot token in http_config":
				has("app_token_file: tok", "app_token: xoxb-1", "proxy_url: http://proxy:3128")
				if strings.Contains(out, "bearer_token") || strings.Contains(out, "credentials_file") || strings.Contains(out, "log_configs") {
					t.Errorf("a token stayed in http_config or a receiver was lost:\n%s", out)
				}
			case "a bot token in global.http_config":
				has("app_token_file: tok")
				if strings.Count(out, "credentials_file: tok") != 1 {
					t.Errorf("the global http_config, shared with PagerDuty, was changed (want it once, on PagerDuty):\n%s", out)
				}
			case "global.http_config on an incoming webhook":
				has("proxy_url: http://proxy:3128", "api_url: https://hooks.slack.com/services/T0/B0/x", "send_resolved: false", "written as send_resolved: false, Alertmanager's default for Slack")
			case "null integration lists and an unknown top-level key":
				has(`receiver "a": no integrations, in Alertmanager as here: a blackhole`, "# tracing: not read by the router; dropped")
			case "a receiver only Alertmanager can send to":
				if !strings.Contains(importErrs, "warning: 1 receiver(s) lost every integration") || !strings.Contains(importErrs, "mail") {
					t.Errorf("no warning on stderr for a receiver turned into a log receiver: %q", importErrs)
				}
			case "a PagerDuty entry without severity":
				if !strings.Contains(importErrs, `1 PagerDuty entry(ies) without severity, which Alertmanager sends as "error"`) || !strings.Contains(importErrs, "receivers[0].pagerduty_configs[0]") || strings.Contains(importErrs, "pagerduty_configs[1]") {
					t.Errorf("stderr does not name the one PagerDuty entry without severity: %q", importErrs)
				}
				has(`pagerduty_configs[0]: no severity: Alertmanager sends "error"`)
			case "a later route key":
				if strings.Contains(out, "some_future_key: 1") || !strings.Contains(out, "route.routes[0]: some_future_key: not an Alertmanager v0.35 route key the router knows (misspelled? Alertmanager v0.35 refuses it); dropped") {
					t.Errorf("the unknown route key was not dropped with a note:\n%s", out)
				}
				// A dropped route key changes where alerts go (a `contine`
				// lost): stderr says so too (an audit).
				if !strings.Contains(importErrs, "warning: route.routes[0]: some_future_key: not an Alertmanager v0.35 route key") {
					t.Errorf("stderr does not warn of the dropped route key: %q", importErrs)
				}
			case "a Slack-compatible incoming webhook":
				if !strings.Contains(out, "api_url: https://chat.example.org/hooks/x4pmq3s8d7") {
					t.Errorf("the Mattermost-style webhook was not kept:\n%s", out)
				}
			case "the Slack URL in global.slack_api_url_file":
				if !strings.Contains(out, "api_url_file: hook-url") {
					t.Errorf("the global Slack URL file was not applied:\n%s", out)
				}
			}
		})
	}
}

// A PagerDuty entry with an Events API v1 service_key cannot be carried
// over. It used to be dropped with a comment and exit 0, so a receiver with
// Slack too silently became Slack-only: its pages became Slack posts, and
// check-config said SUCCESS. The import names every receiver that lost a
// PagerDuty entry, says why and what to do, and exits 1 — with the file
// still printed, loadable, for the user to edit. Receivers that lose only
// kinds the router lacks keep exit 0 (see TestImportNamesWhatIsWrongAndNeverCrashes).
func TestImportRefusesAPagerDutyEventsV1KeyButPrintsTheFile(t *testing.T) {
	am := writeFile(t, "alertmanager.yml", `route:
  receiver: ops
  routes:
    - matchers: ['team="db"']
      receiver: db
    - matchers: ['team="web"']
      receiver: web
receivers:
  - name: ops
    slack_configs:
      - api_url: https://hooks.slack.com/services/T0/B0/x
        channel: '#ops'
    pagerduty_configs:
      - service_key: 0c1cc665a594419b6d215e81f4e38f7a
  - name: db
    pagerduty_configs:
      - service_key_file: /etc/alertmanager/pd-db
  - name: web
    pagerduty_configs:
      - routing_key: abcdefabcdefabcdefabcdefabcdefab
    email_configs:
      - to: web@example.org
`)
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a lost page is refused); stderr:\n%s", code, errs)
	}
	for _, want := range []string{
		"2 PagerDuty integration(s) cannot be imported",
		`receiver "ops": pagerduty_configs[0]: Events API v1 service_key: create an Events API v2 integration in PagerDuty and set routing_key (it keeps slack_configs: its pages would only reach those)`,
		`receiver "db": pagerduty_configs[0]: Events API v1 service_key: create an Events API v2 integration in PagerDuty and set routing_key (it is left with log_configs`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, `receiver "web"`) {
		t.Errorf("stderr names web, whose PagerDuty entry was kept:\n%s", errs)
	}
	if body := out[strings.Index(out, "\nroute:"):]; strings.Contains(body, "service_key") || !strings.Contains(body, "routing_key: abcdefabcdefabcdefabcdefabcdefab") {
		t.Errorf("the printed file kept a v1 key or lost the v2 one:\n%s", out)
	}
	p := writeFile(t, "router.yml", out)
	if code, sum, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 {
		t.Fatalf("check-config of the printed file: exit %d\n%s%s\n--- printed:\n%s", code, sum, errs, out)
	}
}

// Alertmanager reads every scalar it keeps in a string (label values of
// match, match_re and matchers, names, keys) with the text written; the
// import keeps that text, so routes send where Alertmanager's do. It used
// to decode generically and write 1.20 as 1.2, 010 as 8, yes as true, 0x1F
// as 31, a 31-digit routing key as 1.2345678901234568e+29, and refuse a
// receiver named 911 as nameless. The expected receivers are those of
// Alertmanager v0.35 for the same file (testdata/alertmanager/coerce.yml).
func TestImportKeepsScalarsAsAlertmanagerReadsThem(t *testing.T) {
	code, out, errs := runMain(t, "import-alertmanager", "../../testdata/alertmanager/coerce.yml")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	for _, want := range []string{"k8s_version: 1.20", "tier: 010", "enabled: yes", "code: 0x1F", "routing_key: 0123456789012345678901234567890", "- name: 911", "- receiver: 911", "start_time: 08:00", "send_resolved: yes"} {
		if !strings.Contains(out, want) {
			t.Errorf("the import lacks %q:\n%s", want, out)
		}
	}
	p := writeFile(t, "router.yml", out)
	for labels, want := range map[string]string{
		"k8s_version=1.20,tier=010": "pd",
		"k8s_version=1.2,tier=8":    "default",
		"enabled=yes":               "pd",
		"enabled=true":              "default",
		"code=0x1F":                 "pd",
		"code=31":                   "default",
		"team=1e3":                  "911",
		"team=1000":                 "default",
	} {
		code, got, errs := runMain(t, "--config.file="+p, "check-config", "--test-route", labels+",decision=page")
		if code != 0 || strings.TrimSpace(got) != want {
			t.Errorf("--test-route %s: exit %d, %q (%s); want %q, as Alertmanager", labels, code, got, errs, want)
		}
	}
}

// Alertmanager v0.35 (config.go) gives global.slack_app_token only to an
// entry with no token, no api_url and no http_config authorization of its
// own: its own incoming webhook stays a webhook (it used to get the token,
// then be dropped for naming no channel), its own bearer token is the one
// it posts with. Alertmanager's own test file.
func TestImportAppliesTheGlobalSlackAppTokenAsAlertmanager(t *testing.T) {
	code, out, errs := runMain(t, "import-alertmanager", "../../testdata/alertmanager/conf.slack-default-app-token.yml")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	if strings.Contains(out, "names no channel") || !strings.Contains(out, "api_url: https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX") {
		t.Errorf("the entry with its own incoming webhook was not kept as one:\n%s", out)
	}
	if n := strings.Count(out, "app_token: xoxb-1234-abcdefgh"); n != 2 {
		t.Errorf("the global token is given to %d entries, want 2 (#alerts1, #alerts3):\n%s", n, out)
	}
	if !strings.Contains(out, "app_token: xoxb-my-bot-token") || strings.Contains(out, "credentials:") {
		t.Errorf("the entry with its own authorization does not post with it:\n%s", out)
	}
	p := writeFile(t, "router.yml", out)
	if code, sum, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 || !strings.Contains(sum, "slack×5") {
		t.Errorf("check-config: exit %d, want the 5 entries:\n%s%s", code, sum, errs)
	}
}

// global.slack_app_url is where a token posts, for entries without an
// app_url of their own; the global keys the router does not read are
// named, never their values.
func TestImportReadsTheGlobalSlackAppURLAndNamesTheGlobalsItDrops(t *testing.T) {
	am := writeFile(t, "alertmanager.yml", `global:
  resolve_timeout: 5m
  slack_app_token: xoxb-global-token
  slack_app_url: http://127.0.0.1:18080/slack-proxy/api/chat.postMessage
  smtp_smarthost: 'localhost:25'
  smtp_from: 'am@example.org'
  opsgenie_api_key: og-secret-value
route: {receiver: s}
receivers:
- name: s
  slack_configs:
  - channel: '#ops'
  - channel: '#own'
    app_url: http://own.example/api/chat.postMessage
`)
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"app_url: http://127.0.0.1:18080/slack-proxy/api/chat.postMessage",
		"app_url: http://own.example/api/chat.postMessage",
		"# global: opsgenie_api_key, resolve_timeout, smtp_from, smtp_smarthost: not read by the router; dropped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the import lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "app_url:") != 2 || strings.Contains(out, "og-secret-value") {
		t.Errorf("want one app_url per entry and no dropped value:\n%s", out)
	}
	p := writeFile(t, "router.yml", out)
	if code, sum, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 {
		t.Errorf("check-config: exit %d\n%s%s", code, sum, errs)
	}
}

// Alertmanager's templates: are kept (relative globs resolve against the
// config file's directory in both tools). A message calling a template no
// file defines fails check-config, naming the key and the template — it
// used to pass, and every notification fell back to the built-in text.
func TestImportKeepsTemplatesAndCheckConfigNamesAnUndefinedOne(t *testing.T) {
	dir := t.TempDir()
	am := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(am, []byte(`templates: ['*.tmpl']
route: {receiver: s}
receivers:
- name: s
  slack_configs:
  - api_url: https://hooks.slack.com/services/T0/B0/x
    text: '{{ template "custom_slack_text" . }}'
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "templates:\n- '*.tmpl'\n") || !strings.Contains(out, "# templates: kept") {
		t.Fatalf("templates: was not kept:\n%s", out)
	}
	p := filepath.Join(dir, "router.yml")
	if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	code, sum, errs := runMain(t, "--config.file="+p, "check-config")
	if want := `receivers[0].slack_configs[0].text: template "custom_slack_text" is not defined`; code != 1 || !strings.Contains(sum+errs, want) {
		t.Errorf("check-config without the template file: exit %d, want 1 and %q:\n%s%s", code, want, sum, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "slack.tmpl"), []byte(`{{ define "custom_slack_text" }}<!subteam^S0> {{ .CommonLabels.alertname }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, sum, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 {
		t.Errorf("check-config with the template file beside it: exit %d\n%s%s", code, sum, errs)
	}
}

// Alertmanager v0.35 parses matchers with its UTF-8 parser, falling back
// to the classic one: a quoted label name loads, in the import (which
// reads matchers to name the routes that behave differently) as in
// check-config.
func TestImportAndCheckConfigAcceptUTF8Matchers(t *testing.T) {
	am := writeFile(t, "alertmanager.yml", `route:
  receiver: default
  routes:
  - receiver: pd
    matchers: ['"service.name"="checkout"']
  - receiver: default
    matchers: ['"severity"="info"']
  - receiver: pd
    matchers: ['severity="critical", team="db"']
receivers:
- name: default
- name: pd
  pagerduty_configs:
  - routing_key: abcdefabcdefabcdefabcdefabcdefab
`)
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	if want := `route.routes[1]: the alerts it matches (severity="info") are decided none`; !strings.Contains(out, want) {
		t.Errorf("the import does not read the UTF-8 matcher: it lacks %q:\n%s", want, out)
	}
	p := writeFile(t, "router.yml", out)
	for labels, want := range map[string]string{
		"service.name=checkout,decision=page":     "pd",
		"service=checkout,decision=page":          "default",
		"severity=critical,team=db,decision=page": "pd",
	} {
		code, got, errs := runMain(t, "--config.file="+p, "check-config", "--test-route", labels)
		if code != 0 || strings.TrimSpace(got) != want {
			t.Errorf("--test-route %s: exit %d, %q (%s); want %q, as Alertmanager", labels, code, got, errs, want)
		}
	}
}

// FuzzImportAlertmanager: any input ends in an error or a router.yml, never
// a crash.
func FuzzImportAlertmanager(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/alertmanager/*.yml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("route: {receiver: a}\nreceivers: [{name: a, pagerduty_configs: }]\n")
	f.Fuzz(func(t *testing.T, in string) {
		res, err := convertAlertmanager([]byte(in))
		if err == nil && !strings.Contains(res.out, "route:") {
			t.Fatalf("no error and no route in the output:\n%s", res.out)
		}
	})
}

// Alertmanager never expands environment variables; the router's
// configuration does (`${VAR}`, `$$` for one `$`). An imported text keeps
// what Alertmanager would send, whatever the router's environment holds,
// and a receiver that keeps PagerDuty but loses its email and webhook
// entries is warned about on stderr, not only in the file's comments.
func TestImportKeepsDollarsAndWarnsOfLostIntegrations(t *testing.T) {
	t.Setenv("NAMESPACE", "payments")
	const text = "Budget over $$500; run: kubectl -n ${NAMESPACE} get pods ($HOME)"
	am := writeFile(t, "alertmanager.yml", `route:
  receiver: sev1
receivers:
- name: sev1
  pagerduty_configs:
  - routing_key: 0123456789abcdef0123456789abcdef
    description: '`+text+`'
  email_configs:
  - to: oncall@example.com
  webhook_configs:
  - url: http://hooks.example/x
`)
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "sev1 (email_configs, webhook_configs)") {
		t.Errorf("stderr does not name the receiver's lost integrations:\n%s", errs)
	}
	cfg, err := config.Parse([]byte(out), t.TempDir())
	if err != nil {
		t.Fatalf("the import does not load: %v\n%s", err, out)
	}
	if got := cfg.Receivers[0].PagerdutyConfigs[0].Description; got != text {
		t.Errorf("description = %q, want Alertmanager's %q", got, text)
	}
}

// A child route with `receiver: null`, `receiver:` or no receiver inherits
// its parent's in Alertmanager (testdata/alertmanager/receiver-null-inherits.yml,
// the shape of real files that "silence" a branch this way): the import
// keeps the route, and the router routes it as Alertmanager does.
func TestImportInheritsTheReceiverOfARouteWithANullOne(t *testing.T) {
	code, out, errs := runMain(t, "import-alertmanager", "../../testdata/alertmanager/receiver-null-inherits.yml")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	p := writeFile(t, "router.yml", out)
	// What `amtool config routes test` answers for the same file.
	for labels, want := range map[string]string{
		"team=db,severity=warning,decision=page":  "db-pager",
		"team=db,severity=critical,decision=page": "db-pager",
		"team=web,severity=warning,decision=page": "default-email",
		"alertname=x,decision=page":               "default-email",
	} {
		code, got, errs := runMain(t, "--config.file="+p, "check-config", "--test-route", labels)
		if code != 0 || strings.TrimSpace(got) != want {
			t.Errorf("--test-route %s: exit %d, %q (%s); want %q, as Alertmanager", labels, code, got, errs, want)
		}
	}
	// The root's receiver is still required.
	am := writeFile(t, "alertmanager.yml", "route:\n  receiver: null\nreceivers: [{name: a}]\n")
	if code, _, errs := runMain(t, "import-alertmanager", am); code != 1 || !strings.Contains(errs, "route.receiver: missing") {
		t.Errorf("a root route with receiver: null: exit %d, %s; want 1 naming route.receiver", code, errs)
	}
}

// What fails only when the config is built (a secret or TLS file that is
// missing, at check-config, at start or at a reload) names the config file,
// as the errors of its parse and checks do.
func TestBuildErrorsNameTheConfigFile(t *testing.T) {
	p := writeFile(t, "router.yml", `route:
  receiver: pd
receivers:
  - name: pd
    pagerduty_configs:
      - routing_key_file: missing-routing-key
`)
	code, _, errs := runMain(t, "--config.file="+p, "check-config")
	want := fmt.Sprintf("config %q: receivers[0].pagerduty_configs[0].routing_key_file: read secret file", p)
	if code != 1 || !strings.Contains(errs, want) {
		t.Errorf("check-config: exit %d:\n%s\nwant 1 and %q", code, errs, want)
	}
}

// A file of 300 teams wrote the same note 300 times at the top (one per
// receiver without a PagerDuty severity) and an 11,000-character line on
// stderr (an audit): the notes that say the same of several receivers are
// one naming them — the first ten and how many more — and so is stderr's
// list; a note of one receiver stays as it was.
func TestImportFoldsTheSameNoteOfManyReceivers(t *testing.T) {
	var rs, routes []string
	for i := range 12 {
		rs = append(rs, fmt.Sprintf("{name: team%02d, pagerduty_configs: [{routing_key: k%d}]}", i, i))
		routes = append(routes, fmt.Sprintf("{receiver: team%02d, matchers: ['team=\"%02d\"']}", i, i))
	}
	rs = append(rs, "{name: chat, slack_configs: [{channel: '#x', api_url: 'https://hooks.slack.com/services/T/B/C', send_resolved: true}], email_configs: [{to: a@example.com}]}")
	am := writeFile(t, "alertmanager.yml", "route: {receiver: chat, routes: ["+strings.Join(routes, ", ")+"]}\nreceivers: ["+strings.Join(rs, ", ")+"]\n")
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "no severity: Alertmanager sends"); n != 1 {
		t.Errorf("the severity note appears %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, `# receivers "team00", "team01", "team02", "team03", "team04", "team05", "team06", "team07", "team08", "team09" and 2 more (12): pagerduty_configs[0]: no severity`) {
		t.Errorf("the folded note does not name the receivers:\n%s", out)
	}
	if !strings.Contains(out, `# receiver "chat": email_configs`) {
		t.Errorf("a note of one receiver changed:\n%s", out)
	}
	if !strings.Contains(errs, "12 PagerDuty entry(ies) without severity") || !strings.Contains(errs, "receivers[9].pagerduty_configs[0] and 2 more") || strings.Contains(errs, "receivers[11].pagerduty_configs[0]") {
		t.Errorf("stderr's list is not cut to ten and a count: %q", errs)
	}
}
