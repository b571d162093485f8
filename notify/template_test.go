package notify_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

func fixture() *notify.Data {
	n := notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage,
		notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionPage),
		notifytest.Result("TTFTHigh", "bbb", "firing", alert.ActionPage))
	return notify.NewData(n)
}

func TestBuiltinTemplates(t *testing.T) {
	tm := notify.BuiltinTemplates()
	tests := []struct{ name, text, want string }{
		{"the title names decision, alert, sector, KPI and counts", notify.DefaultTitle, "[PAGE] TTFTHigh (llm-inference-gpu TTFT) 2 firing"},
		{"the summary counts the alerts and adds their summary annotation", notify.DefaultSummary, "[FIRING:2] TTFTHigh (llm-inference-gpu TTFT): TTFT p99 is 2.4s (SLO 1s)"},
		{"the text is the description", notify.DefaultText, "Time to first token of model llama-70b breaches its SLO."},
		{"results expose the classification", `{{ range .Results }}{{ .Classification.IncidentClass }} {{ end }}`, "latency latency"},
		{"Alertmanager's own templates work", `{{ template "__subject" . }}`, "[FIRING:2] TTFTHigh (vllm)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tm.Render(nil, "test", tt.text, notify.DefaultTitle, fixture())
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// Grafana names every rule's datasource failure DatasourceError (and
// DatasourceNoData): the built-in title and summary say which rule — or,
// for several rules' errors in one incident, which datasource — and the
// text leads with Grafana's error (its Error annotation), not only the
// rule's own description of what it watches.
func TestBuiltinTextsNameGrafanasFailingRuleAndError(t *testing.T) {
	tm := notify.BuiltinTemplates()
	grafana := func(rules ...string) *notify.Data {
		var rs []*alert.Result
		for i, rule := range rules {
			r := notifytest.Result("DatasourceError", string(rune('a'+i))+"aa", "firing", alert.ActionPage)
			r.Alert.Labels["rulename"], r.Alert.Labels["datasource_uid"] = rule, "prom-main"
			r.Alert.Annotations = map[string]string{"description": "p95 latency of checkout above 1s", "Error": "[sse.dataQueryError] failed to execute query [A]: dial tcp 10.0.0.7:9090: connect: connection refused"}
			rs = append(rs, r)
		}
		n := notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage, rs...)
		alert.SetCommon(n.Data)
		return notify.NewData(n)
	}
	one, two := grafana("Latency SLO breached"), grafana("Latency SLO breached", "Disk full")
	if got := tm.Render(nil, "title", notify.DefaultTitle, "", one); !strings.Contains(got, "DatasourceError of rule Latency SLO breached") {
		t.Errorf("title %q: want the rule named", got)
	}
	if got := tm.Render(nil, "summary", notify.DefaultSummary, "", two); !strings.Contains(got, "DatasourceError on datasource prom-main") {
		t.Errorf("summary %q: want the datasource named", got)
	}
	want := "Grafana could not evaluate the rule: [sse.dataQueryError] failed to execute query [A]: dial tcp 10.0.0.7:9090: connect: connection refused\np95 latency of checkout above 1s"
	if got := tm.Render(nil, "text", notify.DefaultText, "", one); got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	// Other alerts are drawn as before.
	if got := tm.Render(nil, "title", notify.DefaultTitle, "", fixture()); got != "[PAGE] TTFTHigh (llm-inference-gpu TTFT) 2 firing" {
		t.Errorf("title %q of a Prometheus alert changed", got)
	}
}

func TestRenderFallsBackToTheBuiltinTextAndLogs(t *testing.T) {
	dir := t.TempDir()
	// The user file redefines the built-in title with a template that fails
	// at execution; the fallback must use the pristine built-in one.
	if err := os.WriteFile(filepath.Join(dir, "x.tmpl"), []byte(`{{ define "alertrouter.title" }}{{ .Nope.Deeper }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tm, err := notify.LoadTemplates([]string{filepath.Join(dir, "*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	got := tm.Render(logger, "title", notify.DefaultTitle, notify.DefaultTitle, fixture())
	if got != "[PAGE] TTFTHigh (llm-inference-gpu TTFT) 2 firing" {
		t.Fatalf("got %q, want the built-in title", got)
	}
	if !strings.Contains(logs.String(), "template render failed") || !strings.Contains(logs.String(), "field=title") {
		t.Fatalf("the failure was not logged: %s", logs.String())
	}
}

func TestLoadTemplatesReturnsParseErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.tmpl"), []byte(`{{ define "x" }}{{ if }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := notify.LoadTemplates([]string{filepath.Join(dir, "*.tmpl")})
	if err == nil || !strings.Contains(err.Error(), "bad.tmpl") {
		t.Fatalf("err = %v, want a parse error naming bad.tmpl", err)
	}
}

func TestCheckTellsParseErrorsFromDataErrors(t *testing.T) {
	tm := notify.BuiltinTemplates()
	if err := tm.Check(`{{ if }}`); err == nil {
		t.Error("a parse error was not reported")
	}
	if err := tm.Check(`{{ (index .Results 0).Incident }}`); err != nil {
		t.Errorf("an error that depends on the data was reported: %v", err)
	}
}

// A text calling a template nobody defined fails on every notification
// (Render falls back to the built-in text, losing what the text added: an
// on-call mention); Check reports it, naming the template, however deep
// the call, while a call to a template the files define passes.
func TestCheckReportsAnUndefinedTemplate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.tmpl"), []byte(`{{ define "custom_title" }}<!subteam^S0> {{ template "__subject" . }}{{ end }}
{{ define "custom_text" }}{{ range .Alerts }}{{ if .Labels.team }}{{ template "team_line" . }}{{ end }}{{ end }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tm, err := notify.LoadTemplates([]string{filepath.Join(dir, "*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, undefined string }{
		{`{{ template "custom_slack_text" . }}`, "custom_slack_text"},
		{`{{ if .CommonLabels.team }}{{ else }}{{ template "custom_slack_text" . }}{{ end }}`, "custom_slack_text"},
		{`{{ range .Alerts }}{{ with .Labels }}{{ template "custom_slack_text" . }}{{ end }}{{ end }}`, "custom_slack_text"},
		{`{{ template "custom_text" . }}`, "team_line"},
		{`{{ template "custom_title" . }}`, ""},
		{`{{ template "alertrouter.text" . }} {{ template "__text_alert_list" .Alerts }}`, ""},
		{`{{ define "inline" }}x{{ end }}{{ template "inline" . }}`, ""},
		{`{{ block "fallback" . }}x{{ end }}`, ""},
	} {
		err := tm.Check(tc.text)
		switch {
		case tc.undefined == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", tc.text, err)
		case tc.undefined != "" && (err == nil || !strings.Contains(err.Error(), `template "`+tc.undefined+`" is not defined`)):
			t.Errorf("Check(%q) = %v, want an error naming %q", tc.text, err, tc.undefined)
		}
	}
	if got := tm.Render(nil, "text", `{{ template "custom_slack_text" . }}`, notify.DefaultText, fixture()); got != "Time to first token of model llama-70b breaches its SLO." {
		t.Errorf("Render = %q, want the built-in text (what Check warns of)", got)
	}
}

func TestUserTemplatesOverrideBuiltins(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.tmpl"), []byte(`{{ define "alertrouter.title" }}custom {{ .Incident }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tm, err := notify.LoadTemplates([]string{filepath.Join(dir, "*.tmpl"), filepath.Join(dir, "none-*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Render(nil, "title", "", notify.DefaultTitle, fixture()); got != "custom llm-inference-gpu/chat/TTFT" {
		t.Fatalf("got %q", got)
	}
}

func TestMetricsPrecreateEveryLabelValue(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := notify.NewMetrics(reg)
	im := m.Integration("pd", "pagerduty")
	im.Outcome(notify.OutcomeSuccess)
	im.Failure(notify.ReasonRateLimited)
	im.Outcome("not-a-valid-outcome") // ignored: labels stay bounded
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, mf := range mfs {
		series[mf.GetName()] = len(mf.GetMetric())
	}
	if n := series["alertrouter_notifications_total"]; n != 3 {
		t.Errorf("notifications series = %d, want 3", n)
	}
	if n := series["alertrouter_notification_failures_total"]; n != 5 {
		t.Errorf("failure series = %d, want 5", n)
	}
	var nilMetrics *notify.Metrics
	nilMetrics.Integration("r", "x").Attempt() // must not panic
	nilMetrics.PrecreateRenderFailures("r", "summary")
}

// routeLabels "name" renders the route label Alertmanager (v0.35 and later)
// sent with the webhook, verbatim — Alertmanager renders route labels
// before sending, so a value is never executed again — in a text and in a
// template of the user's files; with none sent it renders "", as in
// Alertmanager.
func TestRouteLabelsRenderWhatAlertmanagerSent(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.tmpl"), []byte(`{{ define "team.title" }}[{{ routeLabels "team" }}] {{ .CommonLabels.alertname }}{{ end }}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tm, err := notify.LoadTemplates([]string{filepath.Join(dir, "*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	with := fixture()
	with.RouteLabels = map[string]string{"team": "storage", "reason": "database db1 {{ literal braces }}"}
	tests := []struct {
		name, text string
		data       *notify.Data
		want       string
	}{
		{"a text", `{{ routeLabels "reason" }}`, with, "database db1 {{ literal braces }}"},
		{"a user template", `{{ template "team.title" . }}`, with, "[storage] TTFTHigh"},
		{"the field", `{{ .RouteLabels.team }}`, with, "storage"},
		{"a label not sent", `x{{ routeLabels "nope" }}y`, with, "xy"},
		{"no route labels sent", `{{ template "team.title" . }}`, fixture(), "[] TTFTHigh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tm.Render(nil, "title", tt.text, notify.DefaultTitle, tt.data); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	// The built-in templates render route labels too (the same cache path).
	if got := notify.BuiltinTemplates().Render(nil, "title", `{{ routeLabels "team" }}`, notify.DefaultTitle, with); got != "storage" {
		t.Fatalf("built-in set: got %q, want storage", got)
	}
}
