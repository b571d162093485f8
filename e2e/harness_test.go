package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/proctest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// Shared settings of the generated configs.
const (
	webhookToken = "e2e-webhook-token"
	slackToken   = "xoxb-e2e-token"
	slackChannel = "alerts-triage"
	// signingSecret is the Slack app signing secret of the triage tests.
	signingSecret = "e2e-slack-signing-secret"
	// groupInterval is Alertmanager's group_interval; the quiet windows that
	// prove no duplicates arrive last a few of them.
	groupInterval = 2 * time.Second
)

// routerBin is the router binary TestMain builds once per run.
var routerBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "alertrouter-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: make temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	routerBin = filepath.Join(dir, "router")
	build := exec.Command("go", "build", "-o", routerBin, "github.com/alertrouter/alertrouter/cmd/router")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build the router:", err)
		return 1
	}
	return m.Run()
}

// proc is a subprocess whose output goes to a log file printed when the
// test fails.
type proc struct {
	t       *testing.T
	name    string
	bin     string
	args    []string
	addr    string // host:port of its HTTP API
	logPath string

	cmd    *exec.Cmd
	exited chan struct{}
}

func newProc(t *testing.T, name, bin, addr string, args []string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, bin: bin, args: args, addr: addr,
		logPath: filepath.Join(t.TempDir(), name+".log")}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("---- %s log (%s) ----\n%s", p.name, p.logPath, proctest.Tail(p.logPath))
		}
	})
	// The port came from freePort, which another process may take before
	// this one binds it: on "address already in use" pick another and
	// start again (bounded).
	for try := 0; ; try++ {
		if p.start(try < 2) {
			return p
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
		for i, a := range p.args {
			p.args[i] = strings.ReplaceAll(a, p.addr, addr)
		}
		p.addr = addr
	}
}

// start launches the process and waits for /-/ready. With retryPort, a
// process that exits because its port was taken reports false instead of
// failing the test.
func (p *proc) start(retryPort ...bool) bool {
	p.t.Helper()
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		p.t.Fatalf("open %s log: %v", p.name, err)
	}
	fmt.Fprintf(log, "==== %s %s\n", p.bin, strings.Join(p.args, " "))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	return p.waitReady(len(retryPort) > 0 && retryPort[0])
}

func (p *proc) waitReady(retryPort bool) bool {
	p.t.Helper()
	url := "http://" + p.addr + "/-/ready"
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var last error
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		last = err
		select {
		case <-p.exited:
			p.cmd = nil
			if retryPort && strings.Contains(proctest.Tail(p.logPath), "address already in use") {
				return false
			}
			p.t.Fatalf("%s exited before becoming ready:\n%s", p.name, proctest.Tail(p.logPath))
		case <-tick.C:
		}
	}
	p.t.Fatalf("%s not ready within 20s: %v\n%s", p.name, last, proctest.Tail(p.logPath))
	return false
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	p.t.Helper()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	p.cmd = nil
}

// stop ends the process with SIGTERM, then SIGKILL after a bounded wait.
func (p *proc) stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
	p.cmd = nil
}

// restart starts the process again with the same arguments (same port).
func (p *proc) restart() {
	p.t.Helper()
	p.start()
}

// metric sums the samples of a counter whose series line contains every
// one of match (e.g. `code="503"`), from the process's /metrics.
func (p *proc) metric(name string, match ...string) (float64, error) {
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape %s: %w", p.name, err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, m := range match {
			if !strings.Contains(line, m) {
				continue lines
			}
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("parse %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// stack is what every scenario needs: one Redis and the two stand-ins.
type stack struct {
	redis *redistest.Server
	// triageAM, when set before startRouter, is the Alertmanager URL the
	// router's Slack triage buttons silence through (with signingSecret).
	triageAM string
	pd       *pdtest.Server
	slack    *slacktest.Server
}

func newStack(t *testing.T) *stack {
	t.Helper()
	amtest.Binary(t) // skip before starting anything when Alertmanager is missing
	s := &stack{redis: redistest.Start(t), pd: pdtest.NewServer(), slack: slacktest.NewServer(slackToken, slackChannel)}
	t.Cleanup(s.pd.Close)
	t.Cleanup(s.slack.Close)
	return s
}

var routerConfig = template.Must(template.New("router.yml").Parse(`
auth:
  bearer_token: {{.WebhookToken}}
store:
  redis:
    addrs: ["{{.Redis}}"]
webhook:
  timeout: 8s
dedup:
  claim_ttl: 3s
  in_flight_wait: 1s
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
        signing_secret: {{.SigningSecret}}
        actions: [silence]
alertmanager:
  url: {{.AlertmanagerURL}}
{{- end}}
`))

// startRouter runs one router replica of the stack on a free port.
func (s *stack) startRouter(t *testing.T, name string) *proc {
	t.Helper()
	var cfg bytes.Buffer
	err := routerConfig.Execute(&cfg, map[string]string{
		"WebhookToken": webhookToken, "Redis": s.redis.Addr(),
		"RoutingKey": pdtest.RoutingKey, "PagerDutyURL": s.pd.EnqueueURL(),
		"SlackToken": slackToken, "SlackURL": s.slack.APIURL(), "SlackChannel": slackChannel,
		"AlertmanagerURL": s.triageAM, "SigningSecret": signingSecret,
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

var amConfig = template.Must(template.New("alertmanager.yml").Parse(`
route:
  receiver: router
  group_by: {{.GroupBy}}
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
{{.Routes}}
receivers:
  - name: router
    webhook_configs:
      - url: http://{{.Router}}/webhook
        send_resolved: true
        max_alerts: {{.MaxAlerts}}
        http_config:
          authorization:
            credentials: {{.Token}}
`))

// amOptions shape one Alertmanager.
type amOptions struct {
	// addr is its HTTP address; empty picks a free port.
	addr string
	// clusterAddr is the gossip listen address; empty runs it alone.
	clusterAddr string
	// peers are the gossip addresses of the other members.
	peers []string
	// groupBy is the route's group_by as a YAML flow list (default
	// [alertname, service, slo]); maxAlerts the webhook's max_alerts (0:
	// all).
	groupBy   string
	maxAlerts int
	// routes are the root route's own keys added as YAML (indented two
	// spaces: "  routes: …"); top, top-level keys (time_intervals: …).
	routes, top string
}

// startAM runs an Alertmanager sending its webhooks to router.
func startAM(t *testing.T, name string, router *proc, o amOptions) *proc {
	t.Helper()
	dir := t.TempDir()
	var cfg bytes.Buffer
	groupBy := o.groupBy
	if groupBy == "" {
		groupBy = "[alertname, service, slo]"
	}
	if err := amConfig.Execute(&cfg, map[string]string{"Router": router.addr, "Token": webhookToken,
		"GroupBy": groupBy, "MaxAlerts": strconv.Itoa(o.maxAlerts), "Routes": o.routes}); err != nil {
		t.Fatalf("render alertmanager config: %v", err)
	}
	cfg.WriteString(o.top)
	path := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(path, cfg.Bytes(), 0o600); err != nil {
		t.Fatalf("write alertmanager config: %v", err)
	}
	addr := o.addr
	if addr == "" {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	}
	args := []string{"--config.file=" + path, "--storage.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=debug",
		"--cluster.listen-address=" + o.clusterAddr}
	if o.clusterAddr != "" {
		args = append(args, "--cluster.advertise-address="+o.clusterAddr,
			// Fast convergence on loopback; both members notify without
			// waiting for the other's notification log (peer-timeout 1ms: v0.35 refuses 0), so
			// the routers' shared dedup is what keeps pages single.
			"--cluster.gossip-interval=50ms", "--cluster.pushpull-interval=1s",
			"--cluster.settle-timeout=2s", "--cluster.peer-timeout=1ms",
			"--cluster.probe-interval=200ms", "--cluster.reconnect-interval=1s")
		for _, peer := range o.peers {
			args = append(args, "--cluster.peer="+peer)
		}
	}
	return newProc(t, name, amtest.Binary(t), addr, args)
}

// alert is one alert of Alertmanager's POST /api/v2/alerts.
type alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       *time.Time        `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// resolved returns a copy of the alerts ending now.
func resolved(alerts []alert) []alert {
	now := time.Now().UTC()
	out := make([]alert, len(alerts))
	for i, a := range alerts {
		a.EndsAt = &now
		out[i] = a
	}
	return out
}

// postAlerts posts alerts to each Alertmanager.
func postAlerts(t *testing.T, alerts []alert, ams ...*proc) {
	t.Helper()
	body, err := json.Marshal(alerts)
	if err != nil {
		t.Fatalf("encode alerts: %v", err)
	}
	for _, am := range ams {
		resp, err := http.Post("http://"+am.addr+"/api/v2/alerts", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("post alerts to %s: %v", am.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("post alerts to %s: %s: %s", am.name, resp.Status, b)
		}
	}
}

// poll is the polling period of eventually and consistently.
const poll = 50 * time.Millisecond

// eventually polls cond until it returns nil, failing the test with cond's
// last error when within has passed.
func eventually(t *testing.T, within time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %v", what, within, err)
		}
		<-tick.C
	}
}

// consistently polls cond for the bounded window, failing the test as soon
// as it returns an error: it proves nothing more arrives while Alertmanager
// flushes its groups again.
func consistently(t *testing.T, window time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(window)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if err := cond(); err != nil {
			t.Fatalf("%s: broken: %v", what, err)
		}
		if time.Now().After(deadline) {
			return
		}
		<-tick.C
	}
}

// errAll joins the non-nil errors.
func errAll(errs ...error) error { return errors.Join(errs...) }

// wantCount returns an error when got differs from want.
func wantCount(what string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s: got %d, want %d", what, got, want)
	}
	return nil
}

// freePort asks the kernel for a free loopback port (newProc starts again
// on another one when it was taken in the meantime).
func freePort(t *testing.T) int {
	t.Helper()
	port, err := proctest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
