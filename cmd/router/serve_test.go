package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// scrape returns the router's /metrics.
func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The counters AlertrouterPanicked watches exist at 0 from the start, so
// increase() sees their first panic: a counter that first appears at 1 has
// no earlier sample to increase from. The notifier's series follow the
// configuration, reloads included.
func TestAFreshRouterExposesThePanicCountersAtZero(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	receivers := oncallTriageConfig(pd, sl)
	p := writeFile(t, "router.yml", receivers)
	base, _, _ := serveWithStdout(t, p, "--web.enable-lifecycle")

	metrics := scrape(t, base)
	want := []string{
		`alertrouter_notifier_panics_total{integration="pagerduty",receiver="oncall"} 0`,
		`alertrouter_notifier_panics_total{integration="slack",receiver="oncall"} 0`,
		`alertrouter_dead_letters_total{integration="pagerduty",receiver="oncall"} 0`,
		// README lists coalesced updates among the per-receiver series that
		// start at zero; it appeared at its first coalesced send (an audit).
		`alertrouter_notifications_coalesced_total{integration="pagerduty",receiver="oncall"} 0`,
		`alertrouter_notifications_coalesced_total{integration="slack",receiver="oncall"} 0`,
		`alertrouter_webhooks_total{code="500",outcome="panic"} 0`,
		`alertrouter_webhooks_total{code="200",outcome="ok"} 0`,
		`alertrouter_webhooks_total{code="503",outcome="failed"} 0`,
		`alertrouter_evaluation_panics_total 0`,
	}
	for _, action := range []string{"none", "command", "ack", "silence", "unsilence", "escalate", "resolve"} {
		want = append(want, fmt.Sprintf(`alertrouter_slack_actions_total{action=%q,outcome="panic"} 0`, action))
	}
	for _, w := range want {
		if !strings.Contains(metrics, w+"\n") {
			t.Errorf("a fresh router's /metrics lacks %s", w)
		}
	}
	// The exposition follows Prometheus' naming conventions, as promtool
	// check metrics reads them (units, _total on counters, no camelCase).
	problems, err := promlint.New(strings.NewReader(metrics)).Lint()
	if err != nil {
		t.Fatalf("lint /metrics: %v", err)
	}
	for _, p := range problems {
		t.Errorf("/metrics: %s: %s", p.Metric, p.Text)
	}
	// Every series labels an integration as the notification counters do
	// (Alertmanager's way: its type), so failures, panics, dead letters and
	// send latency join on it in a query.
	notified := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^alertrouter_notifications_total\{.*integration="([^"]*)"`).FindAllStringSubmatch(metrics, -1) {
		notified[m[1]] = true
	}
	if !notified["pagerduty"] || !notified["slack"] {
		t.Fatalf("alertrouter_notifications_total integrations %v, want pagerduty and slack", notified)
	}
	for _, m := range regexp.MustCompile(`(?m)^(alertrouter_\w+)\{.*integration="([^"]*)"`).FindAllStringSubmatch(metrics, -1) {
		if !notified[m[2]] {
			t.Errorf("%s labels integration %q, which alertrouter_notifications_total does not use", m[1], m[2])
		}
	}

	// A receiver added by a reload gets its series at 0 too.
	if err := os.WriteFile(p, []byte(receivers+"  - name: audit\n    log_configs: [{}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := postReload(t, base); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, body)
	}
	if w := `alertrouter_notifier_panics_total{integration="log",receiver="audit"} 0`; !strings.Contains(scrape(t, base), w+"\n") {
		t.Errorf("after a reload adding receiver audit, /metrics lacks %s", w)
	}
}

// buildRouter builds the router binary once per test that needs a real
// process (signals reach the whole test binary otherwise).
func buildRouter(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "router")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/router: %v\n%s", err, out)
	}
	return bin
}

// routerProcess is a router started as its own process.
type routerProcess struct {
	cmd    *exec.Cmd
	base   string
	stderr *syncBuffer
	exited chan error
}

func startRouter(t *testing.T, bin string, args ...string) *routerProcess {
	t.Helper()
	addr := freeAddr(t)
	rp := &routerProcess{base: "http://" + addr, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	rp.cmd = exec.Command(bin, append([]string{"--web.listen-address=" + addr}, args...)...)
	rp.cmd.Dir = t.TempDir() // no ./router.yml: the embedded defaults
	rp.cmd.Stdout = io.Discard
	rp.cmd.Stderr = rp.stderr
	if err := rp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { rp.exited <- rp.cmd.Wait() }()
	t.Cleanup(func() {
		_ = rp.cmd.Process.Kill()
		<-rp.exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-rp.exited:
			rp.exited <- err
			t.Fatalf("router exited before it was ready: %v\n%s", err, rp.stderr.String())
		default:
		}
		if resp, err := http.Get(rp.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return rp
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("router never became ready:\n%s", rp.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wait returns how long the router took to exit after since, and fails the
// test when it exits non-zero or not within limit.
func (rp *routerProcess) wait(t *testing.T, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case err := <-rp.exited:
		rp.exited <- err
		if err != nil {
			t.Fatalf("router exited with %v, want 0:\n%s", err, rp.stderr.String())
		}
		return time.Since(since)
	case <-time.After(limit):
		t.Fatalf("router still running %s after the signal:\n%s", limit, rp.stderr.String())
		return 0
	}
}

func status(base, path string) int {
	resp, err := http.Get(base + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// SIGTERM with --web.shutdown-delay: /-/ready turns 503 at once, webhooks
// are still answered for the delay (the endpoints of a Service drop the pod
// meanwhile), then the router drains and exits 0. SIGINT drains at once, and
// so does SIGTERM without the flag; SIGINT or POST /-/quit during the delay
// ends it.
func TestShutdownDelayKeepsServingUnreadyAfterSIGTERM(t *testing.T) {
	bin := buildRouter(t)
	payload, err := os.ReadFile("../../testdata/webhook/firing.json")
	if err != nil {
		t.Fatal(err)
	}
	const delay = 2 * time.Second

	t.Run("SIGTERM", func(t *testing.T) {
		rp := startRouter(t, bin, "--web.shutdown-delay="+delay.String())
		sent := time.Now()
		if err := rp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for status(rp.base, "/-/ready") != http.StatusServiceUnavailable {
			if time.Since(sent) > delay/2 {
				t.Fatalf("/-/ready still %d %s after SIGTERM, want 503 at once", status(rp.base, "/-/ready"), time.Since(sent))
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got := status(rp.base, "/-/healthy"); got != http.StatusOK {
			t.Errorf("/-/healthy during the shutdown delay = %d, want 200", got)
		}
		resp, err := http.Post(rp.base+"/webhook", "application/json", bytes.NewReader(payload))
		if err != nil {
			t.Fatalf("a webhook during the shutdown delay: %v (the listener closed early)", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("a webhook during the shutdown delay: %d, want 200", resp.StatusCode)
		}
		if took := rp.wait(t, sent, delay+20*time.Second); took < delay {
			t.Errorf("the router exited %s after SIGTERM, before its %s shutdown delay", took, delay)
		}
		if log := rp.stderr.String(); !strings.Contains(log, "shutdown_delay=2s") || !strings.Contains(log, "draining in-flight webhooks") {
			t.Errorf("log does not tell the shutdown delay, then the drain:\n%s", log)
		}
	})

	t.Run("SIGINT", func(t *testing.T) {
		rp := startRouter(t, bin, "--web.shutdown-delay="+delay.String())
		sent := time.Now()
		if err := rp.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if took := rp.wait(t, sent, 20*time.Second); took >= delay {
			t.Errorf("SIGINT: the router took %s to exit, want an immediate drain (no %s shutdown delay)", took, delay)
		}
	})

	// An operator who sends SIGINT (or POST /-/quit) while the delay runs
	// wants the router gone now: the delay here is far longer than the
	// test's limit.
	for _, how := range []string{"SIGINT", "POST /-/quit"} {
		t.Run(how+" during the delay", func(t *testing.T) {
			rp := startRouter(t, bin, "--web.shutdown-delay=10m", "--web.enable-lifecycle")
			sent := time.Now()
			if err := rp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for status(rp.base, "/-/ready") != http.StatusServiceUnavailable {
				if time.Since(sent) > 15*time.Second {
					t.Fatal("/-/ready never turned 503 after SIGTERM")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if how == "SIGINT" {
				if err := rp.cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
			} else {
				resp, err := http.Post(rp.base+"/-/quit", "text/plain", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("POST /-/quit during the shutdown delay: %d, want 200", resp.StatusCode)
				}
			}
			rp.wait(t, sent, 30*time.Second)
			if log := rp.stderr.String(); !strings.Contains(log, "during the shutdown delay: draining now") {
				t.Errorf("log does not say the delay was cut short:\n%s", log)
			}
		})
	}

	t.Run("SIGTERM without the flag", func(t *testing.T) {
		rp := startRouter(t, bin)
		sent := time.Now()
		if err := rp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if took := rp.wait(t, sent, 20*time.Second); took >= delay {
			t.Errorf("SIGTERM with the default --web.shutdown-delay=0s: the router took %s to exit, want an immediate drain", took)
		}
	})

	t.Run("negative delay", func(t *testing.T) {
		code, _, errs := runMain(t, "--web.shutdown-delay=-1s")
		if code != 2 || !strings.Contains(errs, "--web.shutdown-delay") {
			t.Errorf("--web.shutdown-delay=-1s: exit %d, stderr %q; want 2 naming the flag", code, errs)
		}
	})
}

// The reload line names the config file under a key of its own: "source"
// is slog's key for the caller (AddSource), so a handler that adds it
// printed the path as logged_source.
func TestReloadLogsTheConfigFileNotUnderSlogsSourceKey(t *testing.T) {
	h := newReloadHarness(t, redistest.Start(t).Addr(), "p:")
	var buf bytes.Buffer
	h.rt.m.logger = slog.New(slog.NewJSONHandler(&buf, nil))
	h.reload()
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] != "configuration reloaded" {
			continue
		}
		if _, ok := rec[slog.SourceKey]; ok || rec["config_file"] != h.path {
			t.Fatalf("reload logged %v: want config_file=%s and no %q key", rec, h.path, slog.SourceKey)
		}
		return
	}
	t.Fatalf("no reload line in:\n%s", buf.String())
}
