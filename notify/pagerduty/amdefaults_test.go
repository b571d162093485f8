package pagerduty_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// triggerWith sends an opening through the entry yml (its routing_key and
// url added) with the template file content, and returns PagerDuty's event
// and the start log.
func triggerWith(t *testing.T, content, yml string) (pdtest.Event, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "custom.tmpl"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl, err := notify.LoadTemplates([]string{filepath.Join(dir, "*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	srv := pdtest.NewServer()
	defer srv.Close()
	var cfg pagerduty.Config
	if err := yaml.UnmarshalStrict([]byte("{routing_key: "+pdtest.RoutingKey+", url: '"+srv.EnqueueURL()+"', "+yml+"}"), &cfg); err != nil {
		t.Fatal(err)
	}
	logs := &notifytest.SyncBuffer{}
	n, err := pagerduty.New(&cfg, "oncall", notify.Deps{Templates: tmpl, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Retry: notify.RetryPolicy{MaxAttempts: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	evs := srv.Events()
	if len(evs) != 1 {
		t.Fatalf("events %+v, want one trigger", evs)
	}
	return evs[0], logs.String()
}

// A template file that redefines Alertmanager's default PagerDuty
// templates, or the helpers they call (__alertmanager, __alertmanagerURL,
// __subject), changes the description, client and client URL of every
// Alertmanager event whose key is unset: the router's too, said at start.
// Keys the entry sets — client: alertrouter included — stay as set.
func TestRedefinedAlertmanagerDefaultsRenderWherePagerDutyKeysAreUnset(t *testing.T) {
	const redefined = `
{{ define "__alertmanager" }}Cloud Alertmanager{{ end }}
{{ define "__alertmanagerURL" }}{{ .ExternalURL }}/deployment/d-1/alertmanager/alerts{{ end }}
{{ define "pagerduty.default.description" }}[{{ .Status | toUpper }}] {{ .GroupLabels.alertname }} - {{ .CommonAnnotations.summary }}{{ end }}
`
	ev, logs := triggerWith(t, redefined, "")
	if ev.Payload.Summary != "[FIRING] TTFTHigh - TTFT p99 is 2.4s (SLO 1s)" || ev.Client != "Cloud Alertmanager" ||
		ev.ClientURL != "http://alertmanager.example.com/deployment/d-1/alertmanager/alerts" {
		t.Errorf("summary %q, client %q, client_url %q; want the redefined templates'", ev.Payload.Summary, ev.Client, ev.ClientURL)
	}
	for _, key := range []string{"description: ", "client: ", "client_url: "} {
		if !strings.Contains(logs, key+`{{ template \"pagerduty.default.`) {
			t.Errorf("start log %q does not name %s", logs, key)
		}
	}

	ev, _ = triggerWith(t, redefined, "client: alertrouter, summary: '{{ .CommonLabels.alertname }}', client_url: 'https://runbooks.example.com/'")
	if ev.Payload.Summary != "TTFTHigh" || ev.Client != "alertrouter" || ev.ClientURL != "https://runbooks.example.com/" {
		t.Errorf("summary %q, client %q, client_url %q; want the entry's", ev.Payload.Summary, ev.Client, ev.ClientURL)
	}

	// Only __subject redefined: the description follows it; the client
	// and its link stay the router's.
	ev, _ = triggerWith(t, `{{ define "__subject" }}subject {{ .Status }}{{ end }}`, "")
	if ev.Payload.Summary != "subject firing" || ev.Client != "alertrouter" || !strings.Contains(ev.ClientURL, "/#/alerts?") {
		t.Errorf("summary %q, client %q, client_url %q; want the redefined __subject, the router's client and link", ev.Payload.Summary, ev.Client, ev.ClientURL)
	}

	// Nothing of Alertmanager's redefined: the router's own.
	ev, logs = triggerWith(t, `{{ define "team.summary" }}x{{ end }}`, "")
	if ev.Client != "alertrouter" || strings.HasPrefix(ev.Payload.Summary, "[FIRING]") || strings.Contains(logs, "redefine") {
		t.Errorf("summary %q, client %q, log %q; want the router's own", ev.Payload.Summary, ev.Client, logs)
	}
}
