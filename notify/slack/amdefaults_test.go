package slack_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/slack"
)

// userTemplates loads a template file of content as the config's
// templates: lists it.
func userTemplates(t *testing.T, content string) *notify.Templates {
	t.Helper()
	p := filepath.Join(t.TempDir(), "custom.tmpl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl, err := notify.LoadTemplates([]string{filepath.Join(filepath.Dir(p), "*.tmpl")})
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// redefinedDefaults redefines, as teams do, the helpers Alertmanager's
// default Slack templates call (__subject for slack.default.title,
// __alertmanager for slack.default.username) and slack.default.text.
const redefinedDefaults = `
{{ define "__alertmanager" }}AlertManager{{ end }}
{{ define "__subject" }}{{ .Status | toUpper }}[{{ .Alerts.Firing | len }}] {{ .CommonLabels.alertname }} - Team ml{{ end }}
{{ define "slack.default.text" }}{{ range .Alerts }}*Alert:* {{ .Annotations.summary }}{{ end }}{{ end }}
`

// A template file that redefines Alertmanager's default Slack templates,
// or the helpers they call, changes every Alertmanager message whose key
// is unset: the router's too, in the Web API mode and with an incoming
// webhook, and says so at start. Keys the config sets stay as set.
func TestRedefinedAlertmanagerDefaultsRenderWhereTheKeyIsUnset(t *testing.T) {
	h := newHarness(t)
	tmpl := userTemplates(t, redefinedDefaults)
	newNotifier := func(mutate func(*slack.Config)) *slack.Notifier {
		cfg := slack.DefaultConfig()
		cfg.Token, cfg.Channel, cfg.APIURL = token, "#triage", h.srv.APIURL()
		if mutate != nil {
			mutate(&cfg)
		}
		n, err := slack.New(&cfg, "triage", notify.Deps{Templates: tmpl, Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
			Retry: notify.RetryPolicy{MaxAttempts: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	if err := newNotifier(nil).Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	m := h.srv.Parents()[0]
	if m.Text != "FIRING[1] TTFTHigh - Team ml" || m.Username != "AlertManager" || !strings.Contains(string(m.Blocks), "*Alert:* TTFT p99 is 2.4s (SLO 1s)") {
		t.Errorf("parent text %q, username %q, blocks %s; want the redefined title, username and text", m.Text, m.Username, m.Blocks)
	}
	for _, key := range []string{`title: {{ template \"slack.default.title\" . }}`, `text: {{ template \"slack.default.text\" . }}`, `username: {{ template \"slack.default.username\" . }}`} {
		if !strings.Contains(h.logs.String(), key) {
			t.Errorf("start log %q does not name %s", h.logs.String(), key)
		}
	}

	// Keys the config sets are its own.
	if err := newNotifier(func(c *slack.Config) { c.Title, c.Username = "mine", "me" }).Notify(context.Background(), opening("bbb")); err != nil {
		t.Fatal(err)
	}
	if m := h.srv.Parents()[1]; m.Text != "mine" || m.Username != "me" || !strings.Contains(string(m.Blocks), "*Alert:*") {
		t.Errorf("parent text %q, username %q: want the config's title and username, the redefined text", m.Text, m.Username)
	}

	// An incoming webhook (an imported api_url) renders them alike.
	s := &webhookStandIn{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	w := newNotifier(func(c *slack.Config) { c.Token, c.Channel, c.APIURL = "", "", srv.URL+webhookPath })
	if err := w.Notify(context.Background(), opening("ccc")); err != nil {
		t.Fatal(err)
	}
	if len(s.posts) != 1 || s.posts[0]["text"] != "FIRING[1] TTFTHigh - Team ml" || s.posts[0]["username"] != "AlertManager" {
		t.Errorf("incoming webhook posts %v; want the redefined title and username", s.posts)
	}
}

// Templates that redefine none of Alertmanager's defaults (nor what they
// call) leave the router's built-in texts, and no username (the app's
// name), where the keys are unset.
func TestUnrelatedTemplatesKeepTheBuiltInTexts(t *testing.T) {
	h := newHarness(t)
	cfg := slack.DefaultConfig()
	cfg.Token, cfg.Channel, cfg.APIURL = token, "#triage", h.srv.APIURL()
	n, err := slack.New(&cfg, "triage", notify.Deps{Templates: userTemplates(t, `{{ define "team.title" }}x{{ end }}{{ define "slack.default.text" }}{{ end }}`),
		Logger: slog.New(slog.NewTextHandler(h.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if m := h.srv.Parents()[0]; !strings.HasPrefix(m.Text, "[TICKET] TTFTHigh") || m.Username != "" {
		t.Errorf("parent text %q, username %q; want the built-in title, no username", m.Text, m.Username)
	}
	if strings.Contains(h.logs.String(), "redefine") {
		t.Errorf("start log %q names redefined defaults", h.logs.String())
	}
}
