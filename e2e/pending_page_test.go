package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// ackResolveConfig is the stack's router config with Acknowledge and
// Resolve on the triage channel, acting on the pagerduty receiver's
// PagerDuty (escalate_to), where the pages go.
var ackResolveConfig = template.Must(template.New("router.yml").Parse(`
auth:
  bearer_token: {{.WebhookToken}}
store:
  redis:
    addrs: ["{{.Redis}}"]
webhook:
  timeout: 8s
dedup:
  claim_ttl: 30s
route:
  receiver: slack-triage
  routes:
    - matchers: ['decision="page"']
      receiver: pagerduty
      continue: true
    - matchers: ['decision=~"page|ticket"']
      receiver: slack-triage
receivers:
  - name: pagerduty
    pagerduty_configs:
      - routing_key: {{.RoutingKey}}
        url: {{.PagerDutyURL}}
  - name: slack-triage
    slack_configs:
      - token: {{.SlackToken}}
        api_url: {{.SlackURL}}
        channel: "#{{.SlackChannel}}"
        mirror_pages: true
        signing_secret: {{.SigningSecret}}
        actions: [ack, resolve]
        escalate_to: pagerduty
`))

// startAckResolveRouter runs a router of the stack with ackResolveConfig.
func (s *stack) startAckResolveRouter(t *testing.T, name string) *proc {
	t.Helper()
	var cfg bytes.Buffer
	err := ackResolveConfig.Execute(&cfg, map[string]string{
		"WebhookToken": webhookToken, "Redis": s.redis.Addr(),
		"RoutingKey": pdtest.RoutingKey, "PagerDutyURL": s.pd.EnqueueURL(),
		"SlackToken": slackToken, "SlackURL": s.slack.APIURL(), "SlackChannel": slackChannel,
		"SigningSecret": signingSecret,
	})
	if err != nil {
		t.Fatalf("render router config: %v", err)
	}
	path := filepath.Join(t.TempDir(), name+".yml")
	if err := os.WriteFile(path, cfg.Bytes(), 0o600); err != nil {
		t.Fatalf("write router config: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	return newProc(t, name, routerBin, addr, []string{"serve", "--config.file=" + path,
		"--web.listen-address=" + addr, "--log.level=debug"})
}

// TestAResolveClickedBeforePagerDutyHasThePageIsNotLost: the Slack mirror
// of a page is posted at once, beside the PagerDuty trigger, which is slow
// here (PagerDuty rate limiting in a storm, a slow network); on-call
// resolves from Slack before the trigger has landed. PagerDuty dropped
// that resolve (a dedup_key it did not hold), then took the trigger and
// paged while Slack said resolved. The click now waits for the page: the
// resolve reaches PagerDuty after the trigger, or the click does nothing
// and says PagerDuty has not confirmed the page yet — never a resolve
// before the trigger.
func TestAResolveClickedBeforePagerDutyHasThePageIsNotLost(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	router := s.startAckResolveRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{})
	s.pd.Fail(pdtest.Fault{Delay: 3 * time.Second}) // the page's trigger

	postAlerts(t, []alert{scenarioAlerts()[0]}, am)
	var parent slacktest.Message
	eventually(t, 30*time.Second, "the page's mirror with a Resolve button", func() error {
		for _, m := range s.slack.Parents() {
			if strings.Contains(string(m.Blocks), "alertrouter:resolve") {
				parent = m
				return nil
			}
		}
		return fmt.Errorf("none among %d parents", len(s.slack.Parents()))
	})
	key := pagerduty.DedupKey(pageIncident)
	body, err := s.slack.Interaction(parent, slacktest.Click{ActionID: "alertrouter:resolve", User: "U0ONCALL", UserName: "oncall", ActionTS: "1764700000.000200"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := slacktest.NewRequest("http://"+router.addr+"/slack/interactions", slacktest.Sign(signingSecret, time.Now(), body), body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the signed click was answered %d, want 200", resp.StatusCode)
	}

	notConfirmed := func() bool {
		for _, r := range s.slack.Responses() {
			// Not confirmed yet; or, the page's alert having joined the
			// incident within 2 s of the click, stopped as for an alert the
			// user could not have seen — either way nothing was sent.
			if strings.Contains(r.Text, "PagerDuty has not confirmed the page") || strings.Contains(r.Text, "nothing was resolved") {
				return true
			}
		}
		return false
	}
	eventually(t, 20*time.Second, "the trigger, and the click's resolve or its answer", func() error {
		if s.pd.Triggers(key) == 0 || s.pd.Resolves(key) == 0 && !notConfirmed() {
			return fmt.Errorf("triggers %d, resolves %d, answers %+v", s.pd.Triggers(key), s.pd.Resolves(key), s.slack.Responses())
		}
		return nil
	})
	var order []string
	for _, e := range s.pd.Events() {
		if e.DedupKey == key {
			order = append(order, e.EventAction)
		}
	}
	if order[0] != "trigger" {
		t.Fatalf("PagerDuty got %v: a resolve before the trigger is dropped there, and the trigger then pages while Slack says resolved", order)
	}
}
