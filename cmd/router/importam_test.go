package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		if code != 0 {
			t.Fatalf("import %s: exit %d: %s", f, code, errs)
		}
		p := writeFile(t, "router.yml", out)
		code, sum, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Errorf("check-config of the import of %s: exit %d:\n%s\n--- imported:\n%s", f, code, errs, out)
			continue
		}
		switch filepath.Base(f) {
		case "kube-prometheus-default.yml":
			for _, want := range []string{`receiver "null": no integrations, in Alertmanager as here: a blackhole`, "- null: no integrations: a blackhole", `warning: the root route's receiver "Default" has no integrations`} {
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
		{"time_intervals a mapping", "route: {receiver: a}\nreceivers: [{name: a}]\ntime_intervals: {x: 1}\n", "time_intervals: want a list"},
		{"a null integration list", "route: {receiver: a}\nreceivers: [{name: a, pagerduty_configs: }]\n", ""},
		{"a later route key", "route: {receiver: a, routes: [{receiver: a, matchers: ['x=\"y\"'], some_future_key: 1}]}\nreceivers: [{name: a, pagerduty_configs: [{routing_key: k}]}]\n", ""},
		{"the Slack URL in global.slack_api_url_file", "global: {slack_api_url_file: hook-url}\nroute: {receiver: a}\nreceivers: [{name: a, slack_configs: [{channel: '#c'}]}]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			am := filepath.Join(dir, "alertmanager.yml")
			if err := os.WriteFile(am, []byte(tc.in), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runMain(t, "import-alertmanager", am)
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
			p := filepath.Join(dir, "router.yml")
			if err := os.WriteFile(p, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, sum, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 {
				t.Fatalf("check-config of the import: exit %d\n%s%s\n--- imported:\n%s", code, sum, errs, out)
			}
			switch tc.name {
			case "a later route key":
				if strings.Contains(out, "some_future_key: 1") || !strings.Contains(out, "route.routes[0]: some_future_key: not an Alertmanager v0.35 route key the router knows; dropped") {
					t.Errorf("the unknown route key was not dropped with a note:\n%s", out)
				}
			case "the Slack URL in global.slack_api_url_file":
				if !strings.Contains(out, "api_url_file: hook-url") {
					t.Errorf("the global Slack URL file was not applied:\n%s", out)
				}
			}
		})
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
		out, err := convertAlertmanager([]byte(in))
		if err == nil && !strings.Contains(out, "route:") {
			t.Fatalf("no error and no route in the output:\n%s", out)
		}
	})
}
