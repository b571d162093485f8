package slack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The thread reply a triage click posts is posted under the poster's name
// and icon, their templates rendered with what the click knows (the
// receiver, the incident and its labels); a template that needs what a
// click has not (.Alerts) leaves its key out, as one that renders empty.
// Before, the click's reply ignored username, icon_emoji and icon_url.
func TestAClicksThreadReplyHasThePostersNameAndIcon(t *testing.T) {
	for _, tt := range []struct {
		name                         string
		mutate                       func(*slack.Config)
		username, iconEmoji, iconURL string
	}{
		{
			name: "templates over the click's data",
			mutate: func(c *slack.Config) {
				c.Username = "{{ .CommonLabels.job }} alerts ({{ .Receiver }})"
				c.IconEmoji = ":{{ .GroupLabels.alertname | toLower }}:"
				c.IconURL = "https://icons.example/{{ .Incident | urlquery }}.png"
			},
			username: "vllm alerts (triage)", iconEmoji: ":ttfthigh:", iconURL: "https://icons.example/llm-inference-gpu%2Fchat%2FTTFT.png",
		},
		{
			name:     "literals",
			mutate:   func(c *slack.Config) { c.Username, c.IconEmoji = "alertrouter", ":rotating_light:" },
			username: "alertrouter", iconEmoji: ":rotating_light:",
		},
		{
			name: "a template needing the alerts",
			mutate: func(c *slack.Config) {
				c.Username = "{{ (index .Alerts 0).Labels.job }} alerts"
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTriageEnv(t, alert.ActionPage, nil)
			tr := e.replica(t, tt.mutate, slack.NewTriageMetrics(e.reg))
			click := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000100.000001"}
			if code := e.click(t, tr, e.parent, click, signingSecret, e.now(), nil); code != http.StatusOK {
				t.Fatalf("click answered %d", code)
			}
			var replies int
			for _, r := range e.h.srv.Thread(e.parent.TS) {
				if !strings.Contains(r.Text, "acknowledged the incident") {
					continue
				}
				replies++
				if r.Username != tt.username || r.IconEmoji != tt.iconEmoji || r.IconURL != tt.iconURL {
					t.Errorf("the click's reply was posted as %q %q %q, want %q %q %q", r.Username, r.IconEmoji, r.IconURL, tt.username, tt.iconEmoji, tt.iconURL)
				}
			}
			if replies != 1 {
				t.Fatalf("%d thread replies record the click, want 1", replies)
			}
		})
	}
}
