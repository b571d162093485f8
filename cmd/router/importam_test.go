package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Alertmanager's own good configs (copied from its repository's
// config/testdata) import into router configs check-config accepts.
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
