package slack_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify/slack"
)

// A Web API api_url (or Alertmanager's app_url) with a query: every method
// went to …/api/?token=…/chat.postMessage (every Slack call failed), and
// the token was printed in the answer to Alertmanager, the log, the
// journal and the console. check-config refuses it, the query hidden.
func TestAWebAPIURLWithAQueryIsRefused(t *testing.T) {
	for _, mutate := range []func(*slack.Config){
		func(c *slack.Config) { c.APIURL = "https://slack.example/api/?token=SECRET-APIQ-41" },
		func(c *slack.Config) { c.AppURL = "https://slack.example/api/chat.postMessage?token=SECRET-APIQ-41" },
	} {
		c := slack.DefaultConfig()
		c.Token, c.Channel = "xoxb-t", "#c"
		mutate(&c)
		err := c.Validate()
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "query") {
			t.Errorf("api_url %q app_url %q: %v; want refused, the query hidden", c.APIURL, c.AppURL, err)
		}
	}
	c := slack.DefaultConfig()
	c.Token, c.Channel = "xoxb-t", "#c"
	if err := c.Validate(); err != nil {
		t.Errorf("the default api_url: %v", err)
	}
}
