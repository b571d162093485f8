package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// serveConfig runs the router on the config file p until the test ends and
// returns its base URL and its log.
func serveConfig(t *testing.T, p string) (string, *syncBuffer) {
	t.Helper()
	base, _, log := serveWithStdout(t, p)
	return base, log
}

// serveWithStdout is serveConfig, with flags added to the command line, that
// also returns what the router prints on stdout (the log receiver's
// notifications).
func serveWithStdout(t *testing.T, p string, flags ...string) (base string, stdout, log *syncBuffer) {
	t.Helper()
	base, stdout, log, stop := runRouter(t, p, flags...)
	t.Cleanup(stop)
	return base, stdout, log
}

// runRouter runs the router in process on the config file p with flags added to the
// command line, once it is ready; stop shuts it down (as SIGTERM does) and
// returns when Run has.
func runRouter(t *testing.T, p string, flags ...string) (base string, stdout, log *syncBuffer, stop func()) {
	t.Helper()
	addr := freeAddr(t)
	stdout, log = &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	args := append([]string{"--config.file=" + p, "--web.listen-address=" + addr}, flags...)
	go func() {
		done <- (&Main{Stdout: stdout, Stderr: log}).Run(ctx, args)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	base = "http://" + addr
	waitReady(t, base)
	return base, stdout, log, stop
}

// postReload asks the router at base to reload its config (POST /-/reload,
// which needs --web.enable-lifecycle) and returns the answer's status and
// body.
func postReload(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Post(base+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// postClick sends sl's signed click on the button action of the parent
// message inc-1 in #triage, carrying value, to the router at base.
func postClick(t *testing.T, base string, sl *slacktest.Server, action, actionTS, value string) {
	t.Helper()
	parent := slacktest.Message{Channel: sl.ChannelID("triage"), TS: "1700000000.000001", Text: "inc-1",
		Blocks: json.RawMessage(`[{"type":"actions","block_id":"alertrouter-actions","elements":[{"type":"button","action_id":"alertrouter:` + action + `","text":{"type":"plain_text","text":"` + action + `"}}]}]`)}
	body, err := sl.Interaction(parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:" + action, ActionTS: actionTS, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	req, err := slacktest.NewRequest(base+"/slack/interactions", slacktest.Sign(triageSecret, time.Now(), body), body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("click %s: %d", action, resp.StatusCode)
	}
}

const triageSecret = "0123456789abcdef-signing-secret"

func TestServeMountsSlackInteractions(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	p := writeFile(t, "router.yml", oncallTriageConfig(pd, sl))
	base, errb := serveConfig(t, p)

	// Slack sends the message with the click: it carries the button clicked
	// (a message without it is a stale copy, and the click does nothing).
	parent := slacktest.Message{Channel: sl.ChannelID("triage"), TS: "1700000000.000001", Text: "inc-1",
		Blocks: json.RawMessage(`[{"type":"actions","block_id":"alertrouter-actions","elements":[{"type":"button","action_id":"alertrouter:ack","text":{"type":"plain_text","text":"Acknowledge"}}]}]`)}
	body, err := sl.Interaction(parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000001.000001",
		Value: `{"r":"oncall","g":"slack/0","i":"inc-1","p":true}`})
	if err != nil {
		t.Fatal(err)
	}
	post := func(h http.Header) int {
		req, err := slacktest.NewRequest(base+"/slack/interactions", h, body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(slacktest.Sign("wrong", time.Now(), body)); code != http.StatusUnauthorized {
		t.Fatalf("bad signature: %d, want 401", code)
	}
	if code := post(slacktest.Sign(triageSecret, time.Now(), body)); code != http.StatusOK {
		t.Fatalf("signed click: %d, want 200", code)
	}
	deadline := time.Now().Add(20 * time.Second)
	for pd.Count("acknowledge", "inc-1") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no acknowledge reached PagerDuty; log:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := `alertrouter_slack_actions_total{action="none",outcome="bad_signature"} 1`; !strings.Contains(string(metrics), m) {
		t.Errorf("/metrics lacks %s", m)
	}
	if n := len(pd.Events()); n != 1 {
		t.Errorf("PagerDuty got %d events, want 1", n)
	}
}

func TestWithoutActionsTheInteractionsRouteIs404(t *testing.T) {
	p := writeFile(t, "router.yml", "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	base, _ := serveConfig(t, p)
	resp, err := http.Post(base+"/slack/interactions", "application/x-www-form-urlencoded", strings.NewReader("payload=%7B%7D"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d, want 404", resp.StatusCode)
	}
}

// oncallTriageConfig is a router.yml whose receiver oncall pages pd and
// posts to sl's #triage with the acknowledge and resolve buttons.
func oncallTriageConfig(pd *pdtest.Server, sl *slacktest.Server) string {
	return fmt.Sprintf(`
route: {receiver: oncall}
receivers:
  - name: oncall
    pagerduty_configs:
      - routing_key: %s
        url: %s
    slack_configs:
      - token: xoxb-router
        api_url: %s
        channel: '#triage'
        signing_secret: %s
        actions: [ack, resolve]
`, pdtest.RoutingKey, pd.EnqueueURL(), sl.APIURL(), triageSecret)
}

// A ticket escalated from Slack paged escalate_to's PagerDuty; after a
// reload points escalate_to at another receiver, its acknowledgement still
// goes to the PagerDuty that has the page (the router knows every
// receiver's PagerDuty, not only the current escalate_to's).
func TestAnEscalationIsAcknowledgedWhereItPagedAfterAReload(t *testing.T) {
	pd1, pd2 := pdtest.NewServer(), pdtest.NewServer()
	defer pd1.Close()
	defer pd2.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	config := func(escalateTo string) string {
		return fmt.Sprintf(`
route: {receiver: triage}
receivers:
  - name: oncall
    pagerduty_configs: [{routing_key: %[1]s, url: %[2]s}]
  - name: oncall2
    pagerduty_configs: [{routing_key: %[1]s, url: %[3]s}]
  - name: triage
    slack_configs:
      - token: xoxb-router
        api_url: %[4]s
        channel: '#triage'
        signing_secret: %[5]s
        actions: [ack, escalate]
        escalate_to: %[6]s
`, pdtest.RoutingKey, pd1.EnqueueURL(), pd2.EnqueueURL(), sl.APIURL(), triageSecret, escalateTo)
	}
	p := writeFile(t, "router.yml", config("oncall"))
	base, _, errb := serveWithStdout(t, p, "--web.enable-lifecycle")

	click := func(action, ts, value string) { t.Helper(); postClick(t, base, sl, action, ts, value) }
	wait := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s never happened; log:\n%s", what, errb.String())
			}
		}
	}
	click("escalate", "1700000001.000001", `{"r":"triage","g":"slack/0","i":"inc-1"}`)
	wait("the escalation's trigger", func() bool { return pd1.Count("trigger", "inc-1") == 1 })

	if err := os.WriteFile(p, []byte(config("oncall2")), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := postReload(t, base); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, body)
	}
	click("ack", "1700000002.000001", `{"r":"triage","g":"slack/0","i":"inc-1","p":true,"e":true}`)
	wait("the acknowledgement where the page is", func() bool { return pd1.Count("acknowledge", "inc-1") == 1 })
	if n := len(pd2.Events()); n != 0 {
		t.Errorf("the new escalate_to's PagerDuty got %d events for a page it never had", n)
	}
}

// A Slack click answered before a shutdown (a rollout) finishes its work
// before the router exits: cut short, it would leave the action undone and
// its claim on the message behind. So does one answered before a reload
// replaced the configuration that took it.
func TestShutdownWaitsForAnAnsweredClick(t *testing.T) {
	for _, reload := range []bool{false, true} {
		t.Run(fmt.Sprintf("reloaded=%v", reload), func(t *testing.T) {
			pd := pdtest.NewServer()
			defer pd.Close()
			sl := slacktest.NewServer("xoxb-router", "triage")
			defer sl.Close()
			p := writeFile(t, "router.yml", oncallTriageConfig(pd, sl))
			base, _, errb, stop := runRouter(t, p, "--web.enable-lifecycle")
			defer stop()

			pd.Fail(pdtest.Fault{Delay: time.Second}) // PagerDuty takes a second to acknowledge
			postClick(t, base, sl, "ack", "1700000001.000001", `{"r":"oncall","g":"slack/0","i":"inc-1","p":true}`)
			for deadline := time.Now().Add(10 * time.Second); pd.Requests() == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the click never reached PagerDuty; log:\n%s", errb.String())
				}
			}
			if reload {
				if code, body := postReload(t, base); code != http.StatusOK {
					t.Fatalf("reload: %d %s", code, body)
				}
			}
			stop() // SIGTERM while PagerDuty holds the acknowledgement
			if n := pd.Count("acknowledge", "inc-1"); n != 1 {
				t.Fatalf("the router exited with the click's acknowledgement not done (PagerDuty has %d)", n)
			}
			if !strings.Contains(errb.String(), "action taken from Slack") {
				t.Errorf("the click was not recorded before the router exited; log:\n%s", errb.String())
			}
		})
	}
}

// A channel shared by teams mirrors a page routed to one team's PagerDuty
// (continue: true), its Slack entry escalating to another team's: the
// message's Acknowledge acts on the PagerDuty the page went to. Before, it
// went to escalate_to's PagerDuty — where PagerDuty dropped it, or, when
// that team had a page of the same incident key, acknowledged theirs —
// while Slack said the page was acknowledged (an audit of a multi-team
// configuration). A page routed to two PagerDuty receivers (a team's and
// the platform's) is acknowledged and resolved at both (its review).
func TestAMirroredPageIsAcknowledgedWhereItPagedNotAtEscalateTo(t *testing.T) {
	for name, tc := range map[string]struct {
		alsoPlatform bool
	}{
		"one team's page":                   {false},
		"a page at the team's and platform": {true},
	} {
		t.Run(name, func(t *testing.T) {
			checkout, platform := pdtest.NewServer(), pdtest.NewServer()
			defer checkout.Close()
			defer platform.Close()
			sl := slacktest.NewServer("xoxb-router", "triage")
			defer sl.Close()
			also := ""
			if tc.alsoPlatform {
				also = "\n    - matchers: ['decision=\"page\"']\n      receiver: pd-platform\n      continue: true"
			}
			p := writeFile(t, "router.yml", fmt.Sprintf(`
route:
  receiver: team-channel
  routes:
    - matchers: ['decision="page"']
      receiver: pd-checkout
      continue: true%[6]s
    - receiver: team-channel
receivers:
  - name: pd-checkout
    pagerduty_configs: [{routing_key: %[1]s, url: %[2]s}]
  - name: pd-platform
    pagerduty_configs: [{routing_key: %[1]s, url: %[3]s}]
  - name: team-channel
    slack_configs:
      - token: xoxb-router
        api_url: %[4]s
        channel: '#triage'
        signing_secret: %[5]s
        mirror_pages: true
        actions: [ack, resolve]
        escalate_to: pd-platform
`, pdtest.RoutingKey, checkout.EnqueueURL(), platform.EnqueueURL(), sl.APIURL(), triageSecret, also))
			base, errb := serveConfig(t, p)
			if code := postWebhook(t, base, nil); code != http.StatusOK {
				t.Fatalf("webhook: %d; log:\n%s", code, errb.String())
			}
			wantPlatform := 0
			if tc.alsoPlatform {
				wantPlatform = 1
			}
			parents := sl.Parents()
			if len(parents) != 1 || len(checkout.Events()) != 1 || len(platform.Events()) != wantPlatform {
				t.Fatalf("%d Slack parents, %d checkout and %d platform PagerDuty events; want the page's", len(parents), len(checkout.Events()), len(platform.Events()))
			}
			incident := checkout.Events()[0].DedupKey
			postClick(t, base, sl, "ack", "1700000001.000001", parentButton(t, sl, "ack"))
			waitUntil(t, "the acknowledgement where the page went", errb, func() bool {
				return checkout.Count("acknowledge", incident) == 1 && platform.Count("acknowledge", incident) == wantPlatform
			})
			// A Resolve counts the alerts joining up to 2 s before the click
			// reached the router as new ones it stops for: the page opened
			// before that, as pages do.
			time.Sleep(2100 * time.Millisecond)
			postClick(t, base, sl, "resolve", "1700000002.000001", parentButton(t, sl, "resolve"))
			waitUntil(t, "the resolve where the page went", errb, func() bool {
				return checkout.Count("resolve", incident) == 1 && platform.Count("resolve", incident) == wantPlatform
			})
			if n := len(platform.Events()); n != 3*wantPlatform {
				t.Errorf("escalate_to's PagerDuty got %d events, want %d", n, 3*wantPlatform)
			}
		})
	}
}

// One team's ticket escalated from Slack to the PagerDuty service another
// team's page of the same incident key went to shares that page's
// dedup_key: when the ticket's alerts resolve, the escalation's resolve is
// not sent while the other team's page still fires there (a review: it
// resolved that live page); the page resolves with its own alerts.
func TestAnEscalationsResolveLeavesAnotherTeamsOpenPageOpen(t *testing.T) {
	shop := pdtest.NewServer()
	defer shop.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	p := writeFile(t, "router.yml", fmt.Sprintf(`
route:
  receiver: payments
  routes:
    - matchers: ['team="checkout"']
      receiver: pd-shop
    - matchers: ['team="payments"']
      receiver: payments
receivers:
  - name: pd-shop
    pagerduty_configs: [{routing_key: %s, url: %s}]
  - name: payments
    slack_configs:
      - token: xoxb-router
        api_url: %s
        channel: '#triage'
        signing_secret: %s
        actions: [escalate]
        escalate_to: pd-shop
`, pdtest.RoutingKey, shop.EnqueueURL(), sl.APIURL(), triageSecret))
	base, errb := serveConfig(t, p)
	tax := func(team, severity, status string) string {
		return alertJSON(status, "alertname", "TaxErrors", "service", "tax", "team", team, "severity", severity)
	}
	sendAlerts(t, base, errb, tax("checkout", "critical", "firing"), tax("payments", "warning", "firing"))
	events := shop.Events()
	if len(events) != 1 || len(sl.Parents()) != 1 {
		t.Fatalf("%d PagerDuty events, %d Slack parents; want checkout's page and payments' ticket", len(events), len(sl.Parents()))
	}
	incident := events[0].DedupKey
	postClick(t, base, sl, "escalate", "1700000001.000001", `{"r":"payments","g":"slack/0","i":"`+incident+`"}`)
	waitUntil(t, "the escalation's trigger", errb, func() bool { return shop.Count("trigger", incident) == 2 })
	sendAlerts(t, base, errb, tax("checkout", "critical", "firing"), tax("payments", "warning", "resolved"))
	if n := shop.Count("resolve", incident); n != 0 {
		t.Fatalf("the escalated ticket's resolve resolved checkout's page, still firing (%d resolves); log:\n%s", n, errb.String())
	}
	sendAlerts(t, base, errb, tax("checkout", "critical", "resolved"))
	if n := shop.Count("resolve", incident); n != 1 {
		var actions []string
		for _, e := range shop.Events() {
			actions = append(actions, e.EventAction)
		}
		t.Fatalf("checkout's page got %d resolves when its alert resolved, want 1 (events %v); log:\n%s", n, actions, errb.String())
	}
}

// A ticket escalated from Slack (paging escalate_to's PagerDuty) that a
// page of the same incident then joins (paging the team's own PagerDuty,
// the parent redrawn as a page): Acknowledge acts on both pages. Before,
// it acknowledged the escalation only, while the team's page went on
// escalating and Slack said acknowledged (a review).
func TestAnEscalatedTicketAPageJoinedIsAcknowledgedAtBoth(t *testing.T) {
	checkout, platform := pdtest.NewServer(), pdtest.NewServer()
	defer checkout.Close()
	defer platform.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	p := writeFile(t, "router.yml", fmt.Sprintf(`
route:
  receiver: checkout
  routes:
    - matchers: ['decision="page"']
      receiver: pd-checkout
      continue: true
    - receiver: checkout
receivers:
  - name: pd-checkout
    pagerduty_configs: [{routing_key: %[1]s, url: %[2]s}]
  - name: pd-platform
    pagerduty_configs: [{routing_key: %[1]s, url: %[3]s}]
  - name: checkout
    slack_configs:
      - token: xoxb-router
        api_url: %[4]s
        channel: '#triage'
        signing_secret: %[5]s
        mirror_pages: true
        actions: [ack, escalate]
        escalate_to: pd-platform
`, pdtest.RoutingKey, checkout.EnqueueURL(), platform.EnqueueURL(), sl.APIURL(), triageSecret))
	base, errb := serveConfig(t, p)
	tax := func(instance, severity string) string {
		return alertJSON("firing", "alertname", "TaxErrors", "service", "tax", "instance", instance, "severity", severity)
	}
	sendAlerts(t, base, errb, tax("a", "warning"))
	parents := sl.Parents()
	if len(parents) != 1 || len(checkout.Events()) != 0 {
		t.Fatalf("%d Slack parents, %d PagerDuty events; want the ticket only", len(parents), len(checkout.Events()))
	}
	postClick(t, base, sl, "escalate", "1700000001.000001", parentButton(t, sl, "escalate"))
	waitUntil(t, "the escalation", errb, func() bool { return len(platform.Events()) == 1 })
	incident := platform.Events()[0].DedupKey

	sendAlerts(t, base, errb, tax("a", "warning"), tax("b", "critical"))
	waitUntil(t, "the joining page", errb, func() bool { return checkout.Count("trigger", incident) == 1 })
	waitUntil(t, "the parent redrawn as a page", errb, func() bool { return strings.Contains(string(sl.Parents()[0].Blocks), "alertrouter:ack") })
	postClick(t, base, sl, "ack", "1700000002.000001", parentButton(t, sl, "ack"))
	waitUntil(t, "the acknowledgement of both pages", errb, func() bool {
		return checkout.Count("acknowledge", incident) == 1 && platform.Count("acknowledge", incident) == 1
	})
}

// alertJSON is one alert of a webhook: status firing or resolved, with
// labels given as name, value pairs.
func alertJSON(status string, kv ...string) string {
	var labels []string
	for i := 0; i+1 < len(kv); i += 2 {
		labels = append(labels, fmt.Sprintf("%q:%q", kv[i], kv[i+1]))
	}
	a := `{"status":"` + status + `","labels":{` + strings.Join(labels, ",") + `},"startsAt":"2026-12-01T10:00:00Z"`
	if status == "resolved" {
		a += `,"endsAt":"2026-12-01T10:30:00Z"`
	}
	return a + "}"
}

// sendAlerts posts one webhook of alerts (alertJSON) to the router at base
// and fails the test unless it is answered 200.
func sendAlerts(t *testing.T, base string, log *syncBuffer, alerts ...string) {
	t.Helper()
	body := `{"version":"4","status":"firing","receiver":"r","alerts":[` + strings.Join(alerts, ",") + `]}`
	resp, err := http.Post(base+"/webhook", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %d; log:\n%s", resp.StatusCode, log.String())
	}
}

// parentButton is the value of the button action of sl's first parent.
func parentButton(t *testing.T, sl *slacktest.Server, action string) string {
	t.Helper()
	v, ok := sl.Parents()[0].ButtonValue("alertrouter:" + action)
	if !ok {
		t.Fatalf("the parent offers no %s", action)
	}
	return v
}
