package slack_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/slack"
)

// Alertmanager renders username, icon_emoji and icon_url with the
// notification's data, as it renders the title and the channel; the router
// posted their template text literally: a bot named
// "{{ .CommonLabels.job }} alerts" in the channel. They are rendered for
// the parent, its thread replies and an incoming webhook's posts.
func TestThePostersNameAndIconAreTemplates(t *testing.T) {
	poster := func(c *slack.Config) {
		c.Username = "{{ .CommonLabels.job }} alerts"
		c.IconEmoji = ":{{ .CommonLabels.alertname | toLower }}:"
		c.IconURL = "https://icons.example/{{ .CommonLabels.job }}.png"
	}
	h := newHarness(t)
	n := h.notifier(t, poster)
	no := opening("aaa")
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if err := n.Notify(context.Background(), under(no.Ref, note("firing", "ticket", "firing", "bbb"))); err != nil {
		t.Fatal(err)
	}
	msgs := h.srv.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want the parent and a reply", len(msgs))
	}
	for _, m := range msgs {
		if m.Username != "vllm alerts" || m.IconEmoji != ":ttfthigh:" || m.IconURL != "https://icons.example/vllm.png" {
			t.Errorf("message %s posted as %q %q %q, want the templates rendered", m.TS, m.Username, m.IconEmoji, m.IconURL)
		}
	}

	s := &webhookStandIn{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := slack.DefaultConfig()
	cfg.APIURL = srv.URL + webhookPath
	poster(&cfg)
	wn, err := slack.New(&cfg, "triage", notify.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wn.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if p := s.posts[0]; p["username"] != "vllm alerts" || p["icon_emoji"] != ":ttfthigh:" || p["icon_url"] != "https://icons.example/vllm.png" {
		t.Errorf("incoming webhook post %v, want the poster templates rendered", p)
	}

	// A template that does not parse is refused when the notifier is built,
	// naming its key.
	cfg = slack.DefaultConfig()
	cfg.Token, cfg.Channel, cfg.Username = token, "#triage", "{{ .CommonLabels.job "
	if _, err := slack.New(&cfg, "triage", notify.Deps{}); err == nil || !strings.HasPrefix(err.Error(), "username:") {
		t.Errorf("New with a broken username template: %v, want it refused as username: …", err)
	}
}
