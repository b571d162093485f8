package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// These sequences run faults in a row against the real binary: flapping
// across replicas, a replica killed mid-send, a reload that regroups
// incidents, an Alertmanager peer lost mid-group, Redis lost with an
// incident open, and webhooks out of order.

// pdByKey returns, per dedup_key, the counts of triggers and resolves and
// the last event's action.
func (s *stack) pdByKey() map[string]string {
	out := map[string]string{}
	counts := map[string][2]int{}
	last := map[string]string{}
	for _, e := range s.pd.Events() {
		c := counts[e.DedupKey]
		switch e.EventAction {
		case "trigger":
			c[0]++
		case "resolve":
			c[1]++
		}
		counts[e.DedupKey] = c
		last[e.DedupKey] = e.EventAction
	}
	for k, c := range counts {
		out[k] = fmt.Sprintf("triggers=%d resolves=%d last=%s", c[0], c[1], last[k])
	}
	return out
}

// allClosed fails unless PagerDuty's last event of every dedup_key that
// was triggered is a resolve.
func (s *stack) allClosed() error {
	last := map[string]string{}
	for _, e := range s.pd.Events() {
		last[e.DedupKey] = e.EventAction
	}
	var open []string
	for k, a := range last {
		if a != "resolve" && s.pd.Triggers(k) > 0 {
			open = append(open, k)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("incidents left open at PagerDuty: %q", open)
	}
	return nil
}

// waitAnswered2xx waits until the proxy has forwarded at least n webhooks
// after from whose summary contains status (e.g. "resolved=1") and was
// answered 2xx, and returns the index after it.
func waitAnswered2xx(t *testing.T, p *webhookProxy, from int, status string, within time.Duration) int {
	t.Helper()
	var idx int
	eventually(t, within, "a "+status+" webhook answered 2xx", func() error {
		seen := p.webhooks()
		for i := from; i < len(seen); i++ {
			if strings.Contains(seen[i], status) && strings.HasSuffix(seen[i], "→ 200") {
				idx = i + 1
				return nil
			}
		}
		return fmt.Errorf("webhooks so far: %q", seen[from:])
	})
	return idx
}

// sequenceLog logs what the stand-ins and the proxy saw.
func (s *stack) sequenceLog(t *testing.T, p *webhookProxy) {
	t.Helper()
	t.Logf("PagerDuty by key: %v", s.pdByKey())
	t.Logf("Slack parents %d, messages %d; answers %v", len(s.slack.Parents()), len(s.slack.Messages()), p.answered())
	t.Logf("webhooks: %q", p.webhooks())
	for _, m := range s.slack.Messages() {
		text := m.Text
		if len(text) > 120 {
			text = text[:120]
		}
		t.Logf("Slack %s thread=%q updates=%d: %q", m.TS, m.ThreadTS, m.Updates, text)
	}
}

// An alert flapping across group_interval, two replicas taking alternate
// webhooks: the first firing pages, the re-fires within the flap cool-down
// are tickets (Slack), and PagerDuty's last event is the resolve. The
// resolves of the damped firings also reach PagerDuty (a resolve no marker
// of PagerDuty's explains is sent where routed: docs/architecture.md), as
// no-ops there — unless another alert holds the incident open: then they
// must not close it. So a second, steady alert of the same incident pages
// and fires through the later cycles.
func TestSequenceFlappingAcrossReplicas(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{})
	defer s.sequenceLog(t, proxy)
	from := 0
	const cycles = 2
	steady := pageAlerts("steady", 1)
	for i := range cycles {
		a := pageAlerts("flap", 1)
		postAlerts(t, a, am)
		from = waitAnswered2xx(t, proxy, from, "firing truncated", 20*time.Second)
		if i == 1 {
			// The steady alert joins: the incident is closed, so it pages.
			postAlerts(t, steady, am)
			eventually(t, 20*time.Second, "the steady alert's page", s.wantPD(2, 1))
		}
		postAlerts(t, resolved(a), am)
		from = waitAnswered2xx(t, proxy, from, "resolved=1", 20*time.Second)
		t.Logf("cycle %d: PagerDuty %v", i, s.pdByKey())
		if i >= 1 {
			if ev := s.pd.Events(); ev[len(ev)-1].EventAction != "trigger" {
				t.Fatalf("cycle %d: the flapping alert's resolve closed the incident the steady alert holds open", i)
			}
		}
	}
	postAlerts(t, resolved(steady), am)
	eventually(t, 20*time.Second, "the steady alert's resolve", s.allClosed)
	consistently(t, 2*groupInterval, "two pages (the flapping alert's first, the steady one's), the resolve last", func() error {
		tr, _ := s.pdCounts()
		return errAll(wantCount("PagerDuty triggers", tr, 2), s.allClosed())
	})
	if p := s.slack.Parents(); len(p) < 2 {
		t.Errorf("Slack parents = %d, want one per opening", len(p))
	}
}

// A replica SIGKILLed while its PagerDuty trigger is in flight (the
// stand-in holds it, then takes it): Alertmanager's retries reach the other
// replica, which sends it again once the dead one's claim and lease expire
// — the duplicate docs/architecture.md documents, folded by PagerDuty.
// Then a replica SIGKILLed while the resolve is in flight and never
// arrives (the stand-in holds the request until the connection drops): the
// other replica sends it once the claim and the resolving lease expire.
func TestSequenceReplicaKilledMidSend(t *testing.T) {
	s := newStack(t)
	k := faultKnobs{Retrigger: 5 * time.Minute, WebhookTimeout: 4 * time.Second}
	r1, r2 := s.startFaultRouterWith(t, "router-1", k), s.startFaultRouterWith(t, "router-2", k)
	proxy := newWebhookProxy(t, r1, r2)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{})
	defer s.sequenceLog(t, proxy)
	inFlight := func(reqs int) func() error {
		return func() error {
			if s.pd.Requests() == reqs {
				return fmt.Errorf("no request yet")
			}
			return nil
		}
	}
	alerts := pageAlerts("k", 2)

	reqs := s.pd.Requests()
	s.pd.Fail(pdtest.Fault{Delay: 2 * time.Second})
	postAlerts(t, alerts, am) // the first webhook goes to router-1
	eventually(t, 15*time.Second, "the trigger in flight", inFlight(reqs))
	r1.kill()
	eventually(t, 40*time.Second, "the page", func() error {
		if tr, _ := s.pdCounts(); tr < 1 {
			return fmt.Errorf("no trigger yet")
		}
		return nil
	})
	r1.restart()
	from := waitAnswered2xx(t, proxy, 0, "firing truncated", 40*time.Second)
	tr, _ := s.pdCounts()
	if tr > 2 {
		t.Errorf("PagerDuty triggers = %d, want 1 (2: the documented duplicate)", tr)
	}

	proxy.mu.Lock()
	victim := proxy.routers[proxy.next%len(proxy.routers)] // the resolve's replica
	proxy.mu.Unlock()
	reqs = s.pd.Requests()
	s.pd.Fail(pdtest.Fault{Hang: true})
	postAlerts(t, resolved(alerts), am)
	eventually(t, 15*time.Second, "the resolve in flight", inFlight(reqs))
	victim.kill()
	eventually(t, 40*time.Second, "the resolve", s.allClosed)
	victim.restart()
	waitAnswered2xx(t, proxy, from, "resolved truncated", 30*time.Second)
	consistently(t, 2*groupInterval, "nothing more", func() error {
		return errAll(s.allClosed(), s.wantPD(tr, 1)())
	})
}

// burnAlerts are n burn-rate pages without an SLO identity (their incident
// by incidents.group_by), told apart by their instance label; burn is the
// burn rate of every window: 16 pages in the 1h/5m tier, 7 in the 6h/30m.
func burnAlerts(prefix string, n int, burn string) []alert {
	now := time.Now().UTC()
	out := make([]alert, n)
	for i := range out {
		out[i] = alert{
			Labels: map[string]string{"alertname": "ChatErrorBudgetBurn", "service": "chat",
				"sector": "llm-inference-gpu", "kpi": "TTFT", "instance": fmt.Sprintf("%s-%02d", prefix, i)},
			Annotations: map[string]string{"summary": "chat error budget burning", "burn_rate_1h": burn,
				"burn_rate_5m": burn, "burn_rate_6h": burn, "burn_rate_30m": burn},
			StartsAt: now, GeneratorURL: "http://prometheus.example/graph",
		}
	}
	return out
}

// reload sends SIGHUP to each router and waits until each reloaded.
func reload(t *testing.T, routers ...*proc) {
	t.Helper()
	before := make([]float64, len(routers))
	for i, p := range routers {
		v, err := p.metric("alertrouter_config_last_reload_success_timestamp_seconds")
		if err != nil {
			t.Fatal(err)
		}
		before[i] = v
	}
	time.Sleep(1100 * time.Millisecond) // the gauge counts whole seconds
	for i, p := range routers {
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, p.name+" reloaded", func() error {
			v, err := p.metric("alertrouter_config_last_reload_success_timestamp_seconds")
			if err != nil {
				return err
			}
			if v <= before[i] {
				return fmt.Errorf("last reload at %v", v)
			}
			return nil
		})
	}
}

// A reload that changes incidents.group_by while an incident is open:
// the open incident's reminders, an alert's change of page tier and the
// resolves still reach the incident PagerDuty holds, a new alert opens an
// incident of the new grouping, and nothing is left open there.
func TestSequenceReloadRegroupsWhileOpen(t *testing.T) {
	s := newStack(t)
	k := faultKnobs{Retrigger: 5 * time.Minute, RepeatInterval: 3 * time.Second}
	r1, r2 := s.startFaultRouterWith(t, "router-1", k), s.startFaultRouterWith(t, "router-2", k)
	proxy := newWebhookProxy(t, r1, r2)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{})
	defer s.sequenceLog(t, proxy)
	alerts := burnAlerts("n", 3, "16")
	postAlerts(t, alerts[:2], am)
	oldKey := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	newKey := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT/n-02")
	eventually(t, 15*time.Second, "the opening", func() error {
		return wantCount("triggers of the old incident", s.pd.Triggers(oldKey), 1)
	})
	k.GroupBy = "[sector, service, kpi, instance]"
	for _, r := range []*proc{r1, r2} {
		s.writeFaultConfig(t, configPath(r), k)
	}
	reload(t, r1, r2)
	time.Sleep(k.RepeatInterval) // the reminders are due
	from := len(proxy.webhooks())
	// n-00 falls to the slower page tier, n-01 is reminded, and the new
	// n-02 changes the group: Alertmanager sends all three.
	alerts[0].Annotations = burnAlerts("n", 1, "7")[0].Annotations
	postAlerts(t, alerts, am)
	waitAnswered2xx(t, proxy, from, "firing truncated", 20*time.Second)
	t.Logf("after the reload, a tier change and a new alert: %v", s.pdByKey())
	for key := range s.pdByKey() {
		if key != oldKey && key != newKey {
			t.Errorf("PagerDuty incident %s opened: an alert of the open incident left it", key)
		}
	}
	if tr := s.pd.Triggers(oldKey); tr != 2 {
		t.Errorf("triggers of the old incident = %d, want 2 (its opening, then n-01's reminder)", tr)
	}
	from = len(proxy.webhooks())
	postAlerts(t, resolved(alerts[1:2]), am) // one old alert resolves, the other fires on
	waitAnswered2xx(t, proxy, from, "resolved=1", 20*time.Second)
	consistently(t, 2*groupInterval, "the old incident open while an alert of it fires", func() error {
		return wantCount("resolves of the old incident", s.pd.Resolves(oldKey), 0)
	})
	postAlerts(t, resolved(alerts), am)
	eventually(t, 20*time.Second, "every incident resolved", s.allClosed)
	consistently(t, 2*groupInterval, "nothing reopens", s.allClosed)
	if rs := s.pd.Resolves(oldKey); rs != 1 {
		t.Errorf("resolves of the old incident = %d, want 1", rs)
	}
}

// configPath is the --config.file of a router process.
func configPath(p *proc) string {
	for _, a := range p.args {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			return v
		}
	}
	return ""
}

// An HA pair where one peer is killed mid-group (alerts joining while it
// is gone) and comes back without its alerts, which Prometheus sends it
// again: one trigger, one Slack parent, one resolve.
func TestSequenceHAPeerLostMidGroup(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	g1, g2 := "127.0.0.1:"+fmt.Sprint(freePort(t)), "127.0.0.1:"+fmt.Sprint(freePort(t))
	am1 := startFaultAM(t, "am-1", proxy, 0, amOptions{clusterAddr: g1, peers: []string{g2}})
	am2 := startFaultAM(t, "am-2", proxy, 0, amOptions{clusterAddr: g2, peers: []string{g1}})
	defer s.sequenceLog(t, proxy)
	alerts := pageAlerts("h", 4)
	postAlerts(t, alerts[:2], am1, am2)
	eventually(t, 15*time.Second, "the opening", s.wantPD(1, 0))
	am2.kill()
	from := len(proxy.webhooks())
	postAlerts(t, alerts[:3], am1)
	from = waitAnswered2xx(t, proxy, from, "firing truncated", 20*time.Second)
	am2.restart()
	postAlerts(t, alerts, am1, am2)
	waitAnswered2xx(t, proxy, from, "firing truncated", 20*time.Second)
	consistently(t, 2*groupInterval, "one trigger", s.wantPD(1, 0))
	postAlerts(t, resolved(alerts), am1, am2)
	eventually(t, 20*time.Second, "the resolve", s.wantPD(1, 1))
	consistently(t, 2*groupInterval, "one resolve", s.wantPD(1, 1))
	if p := s.slack.Parents(); len(p) != 1 {
		t.Errorf("Slack parents = %d, want 1", len(p))
	}
}

// Redis restarted empty while an incident is open, then new alerts join
// it: at most one new trigger, and the resolve closes everything open.
func TestSequenceRedisLostThenAlertsJoin(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{})
	defer s.sequenceLog(t, proxy)
	alerts := pageAlerts("r", 4)
	postAlerts(t, alerts[:2], am)
	eventually(t, 15*time.Second, "the opening", s.wantPD(1, 0))
	s.redis.Kill()
	if err := s.redis.Restart(); err != nil {
		t.Fatal(err)
	}
	from := len(proxy.webhooks())
	postAlerts(t, alerts, am)
	waitAnswered2xx(t, proxy, from, "firing truncated", 20*time.Second)
	consistently(t, 2*groupInterval, "at most one new trigger", func() error {
		if tr, _ := s.pdCounts(); tr > 2 {
			return fmt.Errorf("PagerDuty triggers = %d after the join, want at most 2", tr)
		}
		return nil
	})
	postAlerts(t, resolved(alerts), am)
	eventually(t, 20*time.Second, "the resolve", s.allClosed)
	consistently(t, 2*groupInterval, "nothing reopens", s.allClosed)
}

// webhookBody is a version 4 webhook of one alert.
func webhookBody(a alert, status string) []byte {
	type wa struct {
		Status       string            `json:"status"`
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
		StartsAt     time.Time         `json:"startsAt"`
		EndsAt       time.Time         `json:"endsAt"`
		GeneratorURL string            `json:"generatorURL"`
	}
	end := time.Time{}
	if a.EndsAt != nil {
		end = *a.EndsAt
	}
	b, _ := json.Marshal(map[string]any{
		"version": "4", "status": status, "receiver": "router", "groupKey": "{}:{alertname=\"" + a.Labels["alertname"] + "\"}",
		"groupLabels": map[string]string{"alertname": a.Labels["alertname"]}, "commonLabels": a.Labels,
		"commonAnnotations": a.Annotations, "externalURL": "http://alertmanager.example",
		"alerts": []wa{{Status: status, Labels: a.Labels, Annotations: a.Annotations, StartsAt: a.StartsAt, EndsAt: end, GeneratorURL: a.GeneratorURL}},
	})
	return b
}

// postWebhook posts a webhook through the proxy and returns the status.
func postWebhook(t *testing.T, p *webhookProxy, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.srv.URL+"/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+webhookToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A resolve that arrives before its firing (two Alertmanagers, the one
// that saw the firing lagging): what PagerDuty is left with.
func TestSequenceResolveBeforeFiring(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	defer s.sequenceLog(t, proxy)
	a := pageAlerts("o", 1)[0]
	a.StartsAt = time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	res := resolved([]alert{a})[0]
	t.Logf("resolve first: %d", postWebhook(t, proxy, webhookBody(res, "resolved")))
	t.Logf("PagerDuty after the resolve: %v", s.pdByKey())
	t.Logf("late firing: %d", postWebhook(t, proxy, webhookBody(a, "firing")))
	t.Logf("PagerDuty after the late firing: %v", s.pdByKey())
	t.Logf("firing repeated: %d", postWebhook(t, proxy, webhookBody(a, "firing")))
	t.Logf("lagging peer's resolve: %d", postWebhook(t, proxy, webhookBody(res, "resolved")))
	t.Logf("resolve retried at the other replica: %d", postWebhook(t, proxy, webhookBody(res, "resolved")))
	t.Logf("PagerDuty at the end: %v", s.pdByKey())
	if err := s.allClosed(); err != nil {
		t.Error(err)
	}
	// The same after a delivered firing: firing, resolve, the lagging
	// peer's firing (a re-fire: docs/policies.md), then its resolve.
	b := pageAlerts("o2", 1)[0]
	b.StartsAt = time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	resB := resolved([]alert{b})[0]
	for i, step := range []struct {
		a      alert
		status string
	}{{b, "firing"}, {resB, "resolved"}, {b, "firing"}, {resB, "resolved"}} {
		code := postWebhook(t, proxy, webhookBody(step.a, step.status))
		t.Logf("step %d %s: %d, PagerDuty %v", i, step.status, code, s.pdByKey())
		if i == 0 && (code/100 != 2 || len(s.pdByKey()) == 0) {
			// allClosed passes when nothing was ever triggered: the
			// delivered firing must have paged for it to say anything.
			t.Fatalf("the first firing answered %d, PagerDuty %v: want 2xx and a trigger", code, s.pdByKey())
		}
	}
	if err := s.allClosed(); err != nil {
		t.Error(err)
	}
}
