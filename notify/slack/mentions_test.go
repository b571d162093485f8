package slack_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// pingable finds a plain "@name" Slack links with link_names on: "@"
// directly followed by a name (not by the invisible WORD JOINER the router
// puts after the "@" of alert data).
var pingable = regexp.MustCompile(`@(channel|here|everyone|jdoe|oncall-team)\b`)

// messageTexts returns every string of m that Slack reads as text: its
// text and each string of its blocks.
func messageTexts(t *testing.T, m slacktest.Message) []string {
	t.Helper()
	var blocks any
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	out := []string{m.Text}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(blocks)
	return out
}

// pings returns the pingable mentions of m's texts.
func pings(t *testing.T, m slacktest.Message) []string {
	t.Helper()
	var out []string
	for _, s := range messageTexts(t, m) {
		out = append(out, pingable.FindAllString(s, -1)...)
	}
	return out
}

// mentioning returns a notification whose alert data holds mentions: an
// annotation "@channel", a summary "@here", a label "@everyone" and a
// reason naming "@jdoe".
func mentioning(no *alert.Notification) *alert.Notification {
	no.Data.CommonAnnotations["description"] = "@channel GPU queue saturated, ask @jdoe"
	for _, r := range no.Results {
		r.Alert.Annotations["summary"] = "@here TTFT p99 is 2.4s"
		r.Alert.Labels["team"] = "@everyone"
		r.Decision.Reasons = []string{"burn rate 15.2 > 14.4 (owner @jdoe)"}
	}
	no.Data.CommonLabels["team"] = "@everyone"
	return no
}

// With link_names on, Slack links a plain "@channel" or "@name" in the
// text: alert data must never notify anyone, while the operator's own
// mentions, in the title and text templates, do. Before, "@channel" in an
// annotation reached Slack as written and notified the whole channel.
func TestAlertDataNeverPingsWithLinkNames(t *testing.T) {
	operator := func(c *slack.Config) {
		c.LinkNames = true
		c.Title = "{{ .CommonLabels.alertname }} for {{ .CommonLabels.team }} @oncall-team"
		c.Text = "<!here> @oncall-team: {{ .CommonAnnotations.description }} (team {{ .CommonLabels.team }}){{ range .Alerts }} {{ .Annotations.summary }}{{ end }}"
	}
	builtin := func(c *slack.Config) { c.LinkNames = true }
	for _, tt := range []struct {
		name     string
		mutate   func(*slack.Config)
		operator bool
	}{
		{name: "operator templates", mutate: operator, operator: true},
		{name: "built-in texts", mutate: builtin},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			n := h.notifier(t, tt.mutate)
			no := mentioning(opening("aaa"))
			no.Action, no.Paged = alert.ActionPage, true
			for _, r := range no.Results {
				r.Decision.Action = alert.ActionPage
			}
			if err := n.Notify(context.Background(), no); err != nil {
				t.Fatal(err)
			}
			update := mentioning(note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"))
			if err := n.Notify(context.Background(), under(no.Ref, update)); err != nil {
				t.Fatal(err)
			}
			msgs := h.srv.Messages()
			if len(msgs) != 2 {
				t.Fatalf("%d messages, want the parent and a reply", len(msgs))
			}
			for _, m := range msgs {
				if !m.LinkNames {
					t.Fatalf("message %s was posted without link_names", m.TS)
				}
				got := pings(t, m)
				if tt.operator && m.ThreadTS == "" {
					// The operator's own mentions stay: in the text, and in
					// the title (the header and the fallback text).
					if strings.Join(got, " ") != "@oncall-team @oncall-team @oncall-team" {
						t.Errorf("parent mentions %q, want the operator's @oncall-team and nothing from the alerts", got)
					}
					if !strings.Contains(strings.Join(messageTexts(t, m), "\n"), "<!here> @oncall-team: ") {
						t.Errorf("the operator's <!here> was lost: %s", m.Blocks)
					}
					continue
				}
				if len(got) > 0 {
					t.Errorf("message %s would ping %q: %s / %s", m.TS, got, m.Text, m.Blocks)
				}
			}
			// The alert data is still shown: "@" is there, followed by an
			// invisible WORD JOINER.
			all := strings.Join(messageTexts(t, msgs[0]), "\n") + strings.Join(messageTexts(t, msgs[1]), "\n")
			for _, want := range []string{"@\u2060here TTFT p99", "@\u2060jdoe"} {
				if !strings.Contains(all, want) {
					t.Errorf("the messages do not show %q", want)
				}
			}
			// Links are built from the data as it is: the prefilled
			// silence matches the label "@everyone".
			if !strings.Contains(all, "team%3D%22%40everyone%22") {
				t.Errorf("the silence link lost the label's value: %s", msgs[0].Blocks)
			}
		})
	}
}

// Without link_names Slack links no plain name: the alert data is shown as
// it is, no character added.
func TestAlertDataIsUnchangedWithoutLinkNames(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	if err := n.Notify(context.Background(), mentioning(opening("aaa"))); err != nil {
		t.Fatal(err)
	}
	m := h.srv.Messages()[0]
	if m.LinkNames || strings.Contains(string(m.Blocks), "\u2060") || !strings.Contains(string(m.Blocks), "@channel GPU queue") {
		t.Fatalf("link_names %v, blocks %s", m.LinkNames, m.Blocks)
	}
}
