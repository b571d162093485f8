package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// crashLooping is a webhook of Alertmanager's receiver "router" carrying
// one KubePodCrashLooping alert of pod in namespace shop at severity.
func crashLooping(pod, severity string) string {
	return fmt.Sprintf(`{"receiver":"router","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"KubePodCrashLooping","severity":%[2]q,"namespace":"shop","job":"kube-state-metrics","pod":%[1]q},"annotations":{"summary":"%[1]s crash"},"startsAt":"2026-12-04T18:37:39Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prom/graph","fingerprint":""}],"groupLabels":{"alertname":"KubePodCrashLooping","namespace":"shop"},"commonLabels":{"alertname":"KubePodCrashLooping","severity":%[2]q,"namespace":"shop","job":"kube-state-metrics","pod":%[1]q},"commonAnnotations":{},"externalURL":"http://am.example:9093","version":"4","groupKey":"{}:{alertname=\"KubePodCrashLooping\", namespace=\"shop\"}","truncatedAlerts":0}`, pod, severity)
}

func postAlerts(t *testing.T, base, payload string) {
	t.Helper()
	resp, err := http.Post(base+"/webhook", "application/json", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %d %s", resp.StatusCode, body)
	}
}

// The audit's Alertmanager parity scenario through the whole router (store,
// dispatch core, notifiers): a Slack channel templated on the namespace;
// severity warning → critical gives the alert a new fingerprint, a new
// alert that pages joining the ticket's incident. PagerDuty is triggered
// once, with a client_url listing the incident's alerts in Alertmanager
// (its receiver "router", the group's labels); the Slack parent, posted in
// #shop-triage, is redrawn once as the page with Acknowledge and Resolve;
// a further page of the incident finds the Ref the dispatch core kept
// saying page, and redraws nothing.
func TestAPageJoiningATicketThroughTheRouter(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-router", "triage", "shop-triage")
	defer sl.Close()
	p := writeFile(t, "router.yml", fmt.Sprintf(`
route:
  receiver: triage
  routes:
    - receiver: oncall
      matchers: ['decision="page"']
      continue: true
    - receiver: triage
receivers:
  - name: oncall
    pagerduty_configs: [{routing_key: %s, url: %s}]
  - name: triage
    slack_configs:
      - token: xoxb-router
        api_url: %s
        channel: '#{{ .CommonLabels.namespace }}-triage'
        signing_secret: %s
        actions: [ack, resolve]
        escalate_to: oncall
`, pdtest.RoutingKey, pd.EnqueueURL(), sl.APIURL(), triageSecret))
	base, _ := serveConfig(t, p)

	postAlerts(t, base, crashLooping("cart-2", "warning"))
	parents := sl.Parents()
	if len(parents) != 1 || parents[0].Channel != sl.ChannelID("shop-triage") || !strings.HasPrefix(parents[0].Text, "[TICKET]") {
		t.Fatalf("parents %+v, want the ticket's in #shop-triage", parents)
	}
	postAlerts(t, base, crashLooping("cart-1", "critical"))
	evs := pd.Events()
	if len(evs) != 1 || evs[0].EventAction != "trigger" {
		t.Fatalf("PagerDuty events %+v, want one trigger", evs)
	}
	u, err := url.Parse(evs[0].ClientURL)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := url.ParseQuery(strings.TrimPrefix(u.Fragment, "/alerts?"))
	if u.Host != "am.example:9093" || q.Get("receiver") != "router" || q.Get("filter") != `{alertname="KubePodCrashLooping",namespace="shop"}` {
		t.Errorf("client_url = %q, want Alertmanager's alerts of its receiver router and the group", evs[0].ClientURL)
	}
	parent := sl.Parents()[0]
	var blocks []map[string]any
	if err := json.Unmarshal(parent.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	hdr, _ := blocks[0]["text"].(map[string]any)["text"].(string)
	if len(sl.Parents()) != 1 || parent.Updates != 1 || !strings.HasPrefix(hdr, "[PAGE]") || !bytes.Contains(parent.Blocks, []byte("alertrouter:ack")) {
		t.Fatalf("after the page joined: %d parents, the parent updated %d times, header %q; want it redrawn once as the page with Acknowledge", len(sl.Parents()), parent.Updates, hdr)
	}
	if replies := sl.Thread(parent.TS); len(replies) != 1 || replies[0].Channel != parent.Channel {
		t.Fatalf("thread replies %+v, want the page's update in the parent's channel", replies)
	}

	postAlerts(t, base, crashLooping("cart-3", "critical"))
	if got := sl.Calls("chat.update"); got != 1 || len(sl.Thread(parent.TS)) != 2 {
		t.Fatalf("chat.update called %d times, %d replies; want the redraw once and a second reply", got, len(sl.Thread(parent.TS)))
	}
}

// A templated routing_key is refused by check-config (and at start, which
// loads the same way) with its YAML path and what to do, and by
// import-alertmanager, which leaves the entry out, names it and exits 1 —
// the printed file, with its templated Slack channel kept, passes
// check-config. Both used to pass and then fail every send.
func TestATemplatedRoutingKeyIsRefusedByCheckConfigAndTheImport(t *testing.T) {
	p := writeFile(t, "router.yml", `
route: {receiver: team-pd}
receivers:
  - name: team-pd
    pagerduty_configs:
      - routing_key: '{{ .CommonLabels.pd_key }}'
`)
	code, _, errs := runMain(t, "--config.file="+p, "check-config")
	if code != 1 || !strings.Contains(errs, "receivers[0].pagerduty_configs[0].routing_key: a template") || !strings.Contains(errs, "Route by the label instead") {
		t.Fatalf("check-config: exit %d\n%s\nwant 1 naming receivers[0].pagerduty_configs[0].routing_key", code, errs)
	}

	am := writeFile(t, "alertmanager.yml", `
route:
  receiver: team-slack
  routes:
    - matchers: ['severity="critical"']
      receiver: team-pd
receivers:
  - name: team-pd
    pagerduty_configs:
      - routing_key: '{{ .CommonLabels.pd_key }}'
    slack_configs:
      - channel: '#{{ .CommonLabels.team }}-pages'
        http_config: {authorization: {credentials: xoxb-audit}}
  - name: team-slack
    slack_configs:
      - channel: '#{{ .CommonLabels.team }}-triage'
        http_config: {authorization: {credentials: xoxb-audit}}
        send_resolved: true
`)
	code, out, errs := runMain(t, "import-alertmanager", am)
	if code != 1 || !strings.Contains(errs, `receiver "team-pd": receivers[0].pagerduty_configs[0].routing_key: a template`) ||
		!strings.Contains(errs, "it keeps slack_configs") {
		t.Fatalf("import: exit %d\n%s\nwant 1 naming receivers[0].pagerduty_configs[0].routing_key", code, errs)
	}
	body := out[strings.Index(out, "\nroute:"):]
	if strings.Contains(body, "pd_key") || !strings.Contains(body, "channel: '#{{ .CommonLabels.team }}-triage'") {
		t.Fatalf("printed file:\n%s\nwant the PagerDuty entry left out and the templated channel kept", out)
	}
	if code, sum, errs := runMain(t, "--config.file="+writeFile(t, "router.yml", out), "check-config"); code != 0 {
		t.Fatalf("check-config of the printed file: exit %d\n%s%s", code, sum, errs)
	}
}
