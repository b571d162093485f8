package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// These fault sequences run the real router binary, real Alertmanagers and
// Redis behind a proxy that plays a Kubernetes Service: each webhook goes
// to the next replica in turn, and the status each answered Alertmanager
// is recorded (a 2xx must mean delivered, deduplicated or deliberately
// suppressed).

// webhookProxy forwards Alertmanager's webhooks to the router replicas in
// turn and records every answer's status (502 when the replica could not
// be reached, as a Service's proxy answers).
type webhookProxy struct {
	mu       sync.Mutex
	routers  []*proc
	next     int
	statuses []int
	// seen summarises each webhook: its status, truncatedAlerts and the
	// status of each alert, with the answer.
	seen []string
	srv  *httptest.Server
}

func newWebhookProxy(t *testing.T, routers ...*proc) *webhookProxy {
	t.Helper()
	p := &webhookProxy{routers: routers}
	client := &http.Client{Timeout: 20 * time.Second}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			p.record(http.StatusBadGateway)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		p.mu.Lock()
		target := p.routers[p.next%len(p.routers)]
		p.next++
		p.mu.Unlock()
		req, _ := http.NewRequest(http.MethodPost, "http://"+target.addr+r.URL.Path, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			p.record(http.StatusBadGateway)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		p.record(resp.StatusCode)
		p.note(body, resp.StatusCode)
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(b)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *webhookProxy) record(status int) {
	p.mu.Lock()
	p.statuses = append(p.statuses, status)
	p.mu.Unlock()
}

// note summarises one webhook and its answer.
func (p *webhookProxy) note(body []byte, status int) {
	var m struct {
		Status    string `json:"status"`
		Truncated int    `json:"truncatedAlerts"`
		Alerts    []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	_ = json.Unmarshal(body, &m)
	firing, resolved := 0, 0
	for _, a := range m.Alerts {
		if a.Status == "firing" {
			firing++
		} else {
			resolved++
		}
	}
	p.mu.Lock()
	p.seen = append(p.seen, fmt.Sprintf("%s truncated=%d firing=%d resolved=%d → %d", m.Status, m.Truncated, firing, resolved, status))
	p.mu.Unlock()
}

// webhooks returns the summaries of the webhooks forwarded so far.
func (p *webhookProxy) webhooks() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// answered counts the statuses answered so far by class ("2xx", "5xx" …).
func (p *webhookProxy) answered() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for _, s := range p.statuses {
		out[fmt.Sprintf("%dxx", s/100)]++
	}
	return out
}

// faultRouterConfig is the stack's router config with the knobs these
// sequences turn.
var faultRouterConfig = template.Must(template.New("router.yml").Parse(`
auth:
  bearer_token: {{.WebhookToken}}
store:
  redis:
    addrs: ["{{.Redis}}"]
webhook:
  timeout: {{.WebhookTimeout}}
dedup:
  claim_ttl: 3s
  in_flight_wait: 1s
{{- if .RepeatInterval}}
  repeat_interval: {{.RepeatInterval}}
{{- end}}
incidents:
  retrigger_interval: {{.Retrigger}}
{{- if .GroupBy}}
  group_by: {{.GroupBy}}
{{- end}}
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
{{- if .AlertmanagerURL}}
alertmanager:
  url: {{.AlertmanagerURL}}
  resolve_unsent_after: {{.ResolveUnsentAfter}}
{{- end}}
`))

// startFaultRouter runs one router replica with retrigger_interval retrigger.
func (s *stack) startFaultRouter(t *testing.T, name string, retrigger time.Duration) *proc {
	t.Helper()
	return s.startFaultRouterWith(t, name, faultKnobs{Retrigger: retrigger})
}

// faultKnobs are the router settings a fault sequence turns; zero values
// keep the defaults.
type faultKnobs struct {
	Retrigger      time.Duration
	RepeatInterval time.Duration
	// GroupBy is incidents.group_by as a YAML flow list ("[a, b]").
	GroupBy string
	// WebhookTimeout is webhook.timeout (8s when zero): a dead replica's
	// incident lease lasts about this plus the settle time.
	WebhookTimeout time.Duration
	// AlertmanagerURL, when set, is alertmanager.url, with
	// ResolveUnsentAfter its resolve_unsent_after.
	AlertmanagerURL    string
	ResolveUnsentAfter time.Duration
}

// writeFaultConfig renders the fault router config with knobs to path.
func (s *stack) writeFaultConfig(t *testing.T, path string, k faultKnobs) {
	t.Helper()
	vars := map[string]string{
		"WebhookToken": webhookToken, "Redis": s.redis.Addr(), "Retrigger": k.Retrigger.String(),
		"RoutingKey": pdtest.RoutingKey, "PagerDutyURL": s.pd.EnqueueURL(),
		"SlackToken": slackToken, "SlackURL": s.slack.APIURL(), "SlackChannel": slackChannel,
		"GroupBy": k.GroupBy, "WebhookTimeout": "8s",
		"AlertmanagerURL": k.AlertmanagerURL, "ResolveUnsentAfter": k.ResolveUnsentAfter.String(),
	}
	if k.WebhookTimeout > 0 {
		vars["WebhookTimeout"] = k.WebhookTimeout.String()
	}
	if k.RepeatInterval > 0 {
		vars["RepeatInterval"] = k.RepeatInterval.String()
	}
	var cfg bytes.Buffer
	if err := faultRouterConfig.Execute(&cfg, vars); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, cfg.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startFaultRouterWith runs one router replica with the knobs k; its
// config file is <TempDir>/<name>.yml (configPath).
func (s *stack) startFaultRouterWith(t *testing.T, name string, k faultKnobs) *proc {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yml")
	s.writeFaultConfig(t, path, k)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	return newProc(t, name, routerBin, addr, []string{"serve", "--config.file=" + path,
		"--web.listen-address=" + addr, "--log.level=debug"})
}

var faultAMConfig = template.Must(template.New("alertmanager.yml").Parse(`
route:
  receiver: router
  group_by: [alertname, service, slo]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
receivers:
  - name: router
    webhook_configs:
      - url: {{.URL}}/webhook
        send_resolved: true
        max_alerts: {{.MaxAlerts}}
        http_config:
          authorization:
            credentials: {{.Token}}
`))

// startFaultAM runs an Alertmanager sending its webhooks through proxy,
// at most maxAlerts alerts each (0: all).
func startFaultAM(t *testing.T, name string, proxy *webhookProxy, maxAlerts int, o amOptions) *proc {
	t.Helper()
	dir := t.TempDir()
	var cfg bytes.Buffer
	if err := faultAMConfig.Execute(&cfg, map[string]string{"URL": proxy.srv.URL, "Token": webhookToken, "MaxAlerts": strconv.Itoa(maxAlerts)}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(path, cfg.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := o.addr
	if addr == "" {
		addr = "127.0.0.1:" + strconv.Itoa(freePort(t))
	}
	args := []string{"--config.file=" + path, "--storage.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=debug", "--cluster.listen-address=" + o.clusterAddr}
	if o.clusterAddr != "" {
		args = append(args, "--cluster.advertise-address="+o.clusterAddr,
			"--cluster.gossip-interval=50ms", "--cluster.pushpull-interval=1s",
			"--cluster.settle-timeout=2s", "--cluster.peer-timeout=1ms",
			"--cluster.probe-interval=200ms", "--cluster.reconnect-interval=1s")
		for _, peer := range o.peers {
			args = append(args, "--cluster.peer="+peer)
		}
	}
	return newProc(t, name, amtest.Binary(t), addr, args)
}

// pageAlerts are n alerts of the TTFT burn-rate page (one incident,
// pageIncident), told apart by their instance label.
func pageAlerts(prefix string, n int) []alert {
	now := time.Now().UTC()
	out := make([]alert, n)
	for i := range out {
		out[i] = alert{
			Labels: map[string]string{"alertname": "VLLMTTFTBurnRateHigh", "service": "chat",
				"sector": "llm-inference-gpu", "kpi": "TTFT", "slo": "chat-ttft", "instance": fmt.Sprintf("%s-%04d", prefix, i)},
			Annotations: map[string]string{"burn_rate_1h": "15.2", "burn_rate_5m": "16", "summary": "chat TTFT error budget burning 15x"},
			StartsAt:    now, GeneratorURL: "http://prometheus.example/graph",
		}
	}
	return out
}

// pdCounts is the stand-in's triggers and resolves of the page incident.
func (s *stack) pdCounts() (triggers, resolves int) {
	key := pagerduty.DedupKey(pageIncident)
	return s.pd.Triggers(key), s.pd.Resolves(key)
}

func (s *stack) wantPD(triggers, resolves int) func() error {
	return func() error {
		tr, rs := s.pdCounts()
		return errAll(wantCount("PagerDuty triggers", tr, triggers), wantCount("PagerDuty resolves", rs, resolves))
	}
}

// A new alert joining an open incident at a replica that restarted since
// the opening re-triggers PagerDuty once incidents.retrigger_interval has
// passed (the last trigger's time is kept in Redis), once, and nothing more
// follows while the alerts fire on.
func TestRetriggerAcrossARestart(t *testing.T) {
	s := newStack(t)
	r1 := s.startFaultRouter(t, "router-1", 3*time.Second)
	proxy := newWebhookProxy(t, r1)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{})
	alerts := pageAlerts("a", 2)
	postAlerts(t, alerts[:1], am)
	eventually(t, 15*time.Second, "the opening", s.wantPD(1, 0))
	// The router answers Alertmanager after the trigger and the store's
	// confirmation: a kill between the two is a replica dying mid-webhook
	// (answered 5xx by the proxy, retried), not this test's sequence.
	eventually(t, 15*time.Second, "the opening's answer", func() error {
		if a := proxy.answered(); a["2xx"] < 1 {
			return fmt.Errorf("answers %v: the opening's webhook not answered 2xx yet", a)
		}
		return nil
	})
	r1.kill()
	r1.restart()
	time.Sleep(3 * time.Second) // let the retrigger interval pass since the opening
	postAlerts(t, alerts, am)
	eventually(t, 15*time.Second, "the restarted replica's retrigger", s.wantPD(2, 0))
	consistently(t, quietWindow, "no further trigger", s.wantPD(2, 0))
	if a := proxy.answered(); a["5xx"] > 0 {
		t.Errorf("answers %v: want every webhook 2xx", a)
	}
}

// Redis restarted empty between a page's firing and its resolve, two
// replicas: the resolve still reaches PagerDuty, once, and nothing pages
// again.
func TestRedisRestartedEmptyBetweenFiringAndResolve(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{})
	alerts := pageAlerts("a", 3)
	postAlerts(t, alerts, am)
	eventually(t, 15*time.Second, "the opening", s.wantPD(1, 0))
	s.redis.Kill()
	if err := s.redis.Restart(); err != nil {
		t.Fatal(err)
	}
	postAlerts(t, resolved(alerts), am)
	eventually(t, 20*time.Second, "the resolve", s.wantPD(1, 1))
	consistently(t, quietWindow, "nothing more", s.wantPD(1, 1))
	t.Logf("answers %v, Slack parents %d, messages %d", proxy.answered(), len(s.slack.Parents()), len(s.slack.Messages()))
}

// Redis paused (SIGSTOP: connections open, nothing answered) across a
// webhook, two replicas: the page goes out (fail open) and every answer
// that said 2xx was delivered; once Redis answers again the alerts'
// repeats page no one again and their resolve closes the incident once.
func TestRedisPausedAcrossAWebhook(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	am := startFaultAM(t, "alertmanager", proxy, 0, amOptions{})
	alerts := pageAlerts("a", 2)
	if err := s.redis.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	postAlerts(t, alerts[:1], am)
	eventually(t, 20*time.Second, "the page, Redis paused", func() error {
		tr, _ := s.pdCounts()
		if tr < 1 {
			return fmt.Errorf("no trigger yet")
		}
		return nil
	})
	if err := s.redis.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	postAlerts(t, alerts, am)
	time.Sleep(quietWindow)
	tr, rs := s.pdCounts()
	t.Logf("after Redis came back and a second alert joined: triggers %d resolves %d, answers %v", tr, rs, proxy.answered())
	postAlerts(t, resolved(alerts), am)
	eventually(t, 20*time.Second, "the resolve", func() error {
		if _, rs := s.pdCounts(); rs < 1 {
			return fmt.Errorf("no resolve yet")
		}
		return nil
	})
	time.Sleep(quietWindow)
	tr, rs = s.pdCounts()
	t.Logf("end: triggers %d resolves %d, answers %v, Slack parents %d, messages %d", tr, rs, proxy.answered(), len(s.slack.Parents()), len(s.slack.Messages()))
	if rs != 1 {
		t.Errorf("PagerDuty resolves = %d, want 1", rs)
	}
	if ev := s.pd.Events(); len(ev) == 0 || ev[len(ev)-1].EventAction != "resolve" {
		t.Errorf("PagerDuty's last event is not the resolve: %d events", len(ev))
	}
}

// Alertmanager's max_alerts truncates the group's webhooks; its first
// alerts resolve while the rest fire (no resolve), then the rest resolve
// and the group with them.
func TestTruncatedThenFullWebhooks(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	am := startFaultAM(t, "alertmanager", proxy, 2, amOptions{})
	alerts := pageAlerts("a", 4)
	postAlerts(t, alerts, am)
	eventually(t, 15*time.Second, "the opening", s.wantPD(1, 0))
	postAlerts(t, resolved(alerts[:2]), am)
	defer func() { t.Logf("webhooks: %q", proxy.webhooks()) }()
	consistently(t, quietWindow, "no resolve while alerts fire", s.wantPD(1, 0))
	postAlerts(t, resolved(alerts[2:]), am)
	time.Sleep(2 * quietWindow)
	tr, rs := s.pdCounts()
	t.Logf("end: triggers %d resolves %d, answers %v", tr, rs, proxy.answered())
	if rs != 1 {
		t.Errorf("PagerDuty resolves = %d once the whole group resolved, want 1", rs)
	}
}

// An HA Alertmanager pair, both notifying at once, two replicas, webhooks
// of 1000 alerts of one incident: one trigger, one Slack parent, one
// resolve.
func TestThousandAlertWebhooksFromAnHAPair(t *testing.T) {
	s := newStack(t)
	r1, r2 := s.startFaultRouter(t, "router-1", 5*time.Minute), s.startFaultRouter(t, "router-2", 5*time.Minute)
	proxy := newWebhookProxy(t, r1, r2)
	g1, g2 := "127.0.0.1:"+strconv.Itoa(freePort(t)), "127.0.0.1:"+strconv.Itoa(freePort(t))
	am1 := startFaultAM(t, "am-1", proxy, 0, amOptions{clusterAddr: g1, peers: []string{g2}})
	am2 := startFaultAM(t, "am-2", proxy, 0, amOptions{clusterAddr: g2, peers: []string{g1}})
	alerts := pageAlerts("a", 1000)
	postAlerts(t, alerts, am1, am2)
	eventually(t, 40*time.Second, "the opening", s.wantPD(1, 0))
	consistently(t, quietWindow, "one trigger", s.wantPD(1, 0))
	t.Logf("firing: answers %v, Slack parents %d, messages %d", proxy.answered(), len(s.slack.Parents()), len(s.slack.Messages()))
	postAlerts(t, resolved(alerts), am1, am2)
	eventually(t, 40*time.Second, "the resolve", s.wantPD(1, 1))
	consistently(t, quietWindow, "one resolve", s.wantPD(1, 1))
	if p := s.slack.Parents(); len(p) != 1 {
		t.Errorf("Slack parents = %d, want 1", len(p))
	}
	t.Logf("end: answers %v, Slack parents %d, messages %d", proxy.answered(), len(s.slack.Parents()), len(s.slack.Messages()))
}
