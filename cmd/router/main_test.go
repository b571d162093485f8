package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a server.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb syncBuffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	code = m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func explainLines(t *testing.T, file string) []explanation {
	t.Helper()
	code, out, errs := runMain(t, "--config.file="+filepath.Join(t.TempDir(), "absent.yml"), "explain", file)
	if code != 1 || !strings.Contains(errs, "absent.yml") || out != "" {
		t.Fatalf("explain with a missing explicit --config.file: exit %d, stdout %q, stderr %q; want exit 1 naming the file, nothing explained", code, out, errs)
	}
	code, out, errs = runMain(t, "explain", file)
	if code != 0 {
		t.Fatalf("explain %s: exit %d: %s", file, code, errs)
	}
	var lines []explanation
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e explanation
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("explain line is not JSON: %v\n%s", err, sc.Text())
		}
		lines = append(lines, e)
	}
	return lines
}

func TestExplainClassifiesEverySectorPayload(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/sectors/*.json")
	if len(files) < 17 {
		t.Fatalf("found %d sector payloads, want one per sector (17)", len(files))
	}
	for _, f := range files {
		sector := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(sector, func(t *testing.T) {
			lines := explainLines(t, f)
			if len(lines) == 0 {
				t.Fatal("no alerts explained")
			}
			for _, e := range lines {
				if e.Sector != sector || len(e.KPIs) == 0 || e.IncidentClass == "" || e.Classification.Confidence <= 0 || len(e.Classification.Signals) == 0 {
					t.Errorf("%s: sector %q kpis %v class %q confidence %v signals %d; want sector %q with KPIs, class, confidence and signals",
						e.Alertname, e.Sector, e.KPIs, e.IncidentClass, e.Classification.Confidence, len(e.Classification.Signals), sector)
				}
				if e.Decision.Action == "" || e.Decision.Policy == "" || e.Incident == "" {
					t.Errorf("%s: decision %+v incident %q; want both filled", e.Alertname, e.Decision, e.Incident)
				}
			}
		})
	}
}

func TestExplainDecidesThePolicyPayloads(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/policies/*.json")
	if len(files) < 5 {
		t.Fatalf("found %d policy payloads, want sloth, pyrra, burn-rate, capacity, regression", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var payload struct {
			Alerts []struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"alerts"`
		}
		if err := json.Unmarshal(raw, &payload); err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			lines := explainLines(t, f)
			if len(lines) != len(payload.Alerts) {
				t.Fatalf("explained %d alerts, payload has %d", len(lines), len(payload.Alerts))
			}
			for i, e := range lines {
				ann := payload.Alerts[i].Annotations
				w := [2]string{ann["test_expect_action"], ann["test_expect_policy"]}
				if w[0] == "" {
					continue
				}
				if string(e.Decision.Action) != w[0] || (w[1] != "" && e.Decision.Policy != w[1]) {
					t.Errorf("%s (%s): decision %s/%s, want %s/%s; reasons %v", e.Alertname, e.Fingerprint, e.Decision.Action, e.Decision.Policy, w[0], w[1], e.Decision.Reasons)
				}
				if len(e.Decision.Reasons) == 0 {
					t.Errorf("%s: no reasons", e.Alertname)
				}
			}
		})
	}
}

func TestExplainRejectsAnUnreadablePayload(t *testing.T) {
	code, _, errs := runMain(t, "explain", "../../testdata/webhook/version-3.bad.json")
	if code != 1 || !strings.Contains(errs, "HTTP 400") || !strings.Contains(errs, "version") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the 400 and the version field", code, errs)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const secretConfig = `
auth:
  bearer_token: hunter2-webhook-token
route:
  receiver: pd
  routes:
    - matchers: ['sector=~"hft-.*"', 'decision="page"']
      receiver: log
    - matchers: ['team="${ALERTROUTER_TEST_TEAM_SECRET}"']
      receiver: log
receivers:
  - name: pd
    pagerduty_configs:
      - routing_key: R0UT1NGKEY0123456789abcdefghijkl
  - name: log
    log_configs: [{}]
`

func TestCheckConfigSummarizesAndNeverPrintsSecrets(t *testing.T) {
	// An ${ENV} value in a route matcher is hidden like any other.
	t.Setenv("ALERTROUTER_TEST_TEAM_SECRET", "hunter2-team")
	p := writeFile(t, "router.yml", secretConfig)
	code, out, errs := runMain(t, "--config.file="+p, "check-config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"SUCCESS", "pd: pagerduty×1", "log: log×1", `sector=~"hft-.*"`} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out+errs, "hunter2") || strings.Contains(out+errs, "R0UT1NGKEY") {
		t.Fatalf("check-config printed a secret:\n%s%s", out, errs)
	}
	code, out, _ = runMain(t, "--config.file="+p, "check-config", "--test-route", "sector=hft-cdn,decision=page")
	if code != 0 || strings.TrimSpace(out) != "log" {
		t.Fatalf("--test-route for an HFT page: exit %d, %q; want log", code, out)
	}
	_, out, _ = runMain(t, "--config.file="+p, "check-config", "--test-route", "sector=hft-cdn,decision=ticket")
	if strings.TrimSpace(out) != "pd" {
		t.Fatalf("--test-route for an HFT ticket = %q, want the root receiver pd", out)
	}
}

func TestCheckConfigListsEveryErrorWithItsPath(t *testing.T) {
	p := writeFile(t, "router.yml", `
route:
  receiver: nowhere
  routes:
    - matchers: ['sector=~"(']
receivers:
  - name: pd
    pagerduty_configs: [{}]
`)
	code, _, errs := runMain(t, "--config.file="+p, "check-config")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{"FAILED", `route.receiver: undefined receiver "nowhere"`, "route.routes[0].matchers[0]", "receivers[0].pagerduty_configs[0]"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("router never became ready")
}

func TestServeOnEmbeddedDefaultsPrintsNotificationsAndDrainsOnShutdown(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	payload, err := os.ReadFile(filepath.Join(wd, "../../testdata/webhook/firing.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // no ./router.yml here: the embedded defaults apply
	addr := freeAddr(t)
	var out, errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- (&Main{Stdout: &out, Stderr: &errb}).Run(ctx, []string{"--web.listen-address=" + addr})
	}()
	base := "http://" + addr
	waitReady(t, base)
	if !strings.Contains(errb.String(), "embedded defaults") {
		t.Errorf("first log lines do not say the embedded defaults are in use:\n%s", errb.String())
	}
	for i, want := range []string{`"notified":`, `"deduplicated":`} {
		resp, err := http.Post(base+"/webhook", "application/json", bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		var sum map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&sum)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("webhook %d: status %d", i, resp.StatusCode)
		}
		b, _ := json.Marshal(sum)
		if !strings.Contains(string(b), want) {
			t.Fatalf("webhook %d summary %s lacks %s", i, b, want)
		}
		if i == 1 && sum["notified"].(float64) != 0 {
			t.Fatalf("the repeated webhook notified again: %s", b)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) == 0 || !strings.Contains(lines[0], `"receiver":"log"`) {
		t.Fatalf("stdout has no log-receiver JSON lines:\n%s", out.String())
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var mb bytes.Buffer
	_, _ = mb.ReadFrom(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`alertrouter_webhooks_total{code="200",outcome="ok"} 2`, "alertrouter_build_info", "alertrouter_config_last_reload_successful 1", `alertrouter_dedup_total{result="hit"}`, `alertrouter_notifications_total{integration="log",outcome="success",receiver="log"}`} {
		if !strings.Contains(mb.String(), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d after shutdown, want 0:\n%s", code, errb.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop after shutdown")
	}
}

func TestReloadRejectsABadConfigAndKeepsServing(t *testing.T) {
	p := writeFile(t, "router.yml", "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	addr := freeAddr(t)
	var out, errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- (&Main{Stdout: &out, Stderr: &errb}).Run(ctx, []string{"--config.file=" + p, "--web.listen-address=" + addr, "--web.enable-lifecycle"})
	}()
	base := "http://" + addr
	waitReady(t, base)
	if err := os.WriteFile(p, []byte("route: {receiver: missing}\nreceivers: [{name: log, log_configs: [{}]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := postReload(t, base); code != 500 {
		t.Fatalf("reload of a bad config: status %d, want 500", code)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var mb bytes.Buffer
	_, _ = mb.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(mb.String(), "alertrouter_config_last_reload_successful 0") {
		t.Error("reload failure not exposed in alertrouter_config_last_reload_successful")
	}
	payload := `{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"A","severity":"critical"},"startsAt":"2026-12-01T10:00:00Z"}]}`
	resp, err = http.Post(base+"/webhook", "application/json", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("webhook after a failed reload: status %d, want 200 from the old config", resp.StatusCode)
	}
	cancel()
	<-done
	if !strings.Contains(errb.String(), "previous configuration keeps serving") {
		t.Errorf("log does not say the old config keeps serving:\n%s", errb.String())
	}
}

func TestHelpPrintsAndExitsWithoutServing(t *testing.T) {
	done := make(chan int, 1)
	go func() { code, _, _ := runMain(t, "serve", "--help", "--web.listen-address=127.0.0.1:1"); done <- code }()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve --help exited %d, want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve --help went on to serve")
	}
}

// A claim_ttl not longer than webhook.timeout lets a slow send go
// unclaimed while in flight (another replica sends it again): check-config
// warned of nothing. It says so, and still succeeds; the defaults do not.
func TestCheckConfigWarnsOfAClaimTTLShorterThanASend(t *testing.T) {
	for _, tc := range []struct {
		dedup string
		warns bool
	}{{"", false}, {"dedup: {claim_ttl: 2s}\n", true}, {"webhook: {timeout: 5s}\ndedup: {claim_ttl: 6s}\n", false}} {
		p := writeFile(t, "router.yml", tc.dedup+"route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.dedup, code, errs)
		}
		if got := strings.Contains(out, "warning: dedup.claim_ttl"); got != tc.warns {
			t.Errorf("%q: warns %v, want %v:\n%s", tc.dedup, got, tc.warns, out)
		}
	}
}

// alertmanager.resolve_unsent_after shorter than Prometheus' resend of
// firing alerts to an Alertmanager restarted without its data (a review:
// 10s resolved a live page during such a restart): check-config warns; the
// default (5m) and 0 (off) do not.
func TestCheckConfigWarnsOfAShortResolveUnsentAfter(t *testing.T) {
	for _, tc := range []struct {
		after string
		warns bool
	}{{"", false}, {"resolve_unsent_after: 10s", true}, {"resolve_unsent_after: 0s", false}, {"resolve_unsent_after: 5m", false}} {
		p := writeFile(t, "router.yml", "alertmanager: {url: http://alertmanager:9093, "+tc.after+"}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.after, code, errs)
		}
		if got := strings.Contains(out, "warning: alertmanager.resolve_unsent_after"); got != tc.warns {
			t.Errorf("%q: warns %v, want %v:\n%s", tc.after, got, tc.warns, out)
		}
	}
}

// A PagerDuty or Slack timeout not shorter than webhook.timeout: a slow
// answer is cut by the webhook's deadline, answered 5xx, and the retry
// sends again what may have arrived (an audit: every slow PagerDuty event
// triggered twice). check-config warns; the defaults (10s against 25s) do
// not.
func TestCheckConfigWarnsOfASendTimeoutLongerThanTheWebhooks(t *testing.T) {
	const pd = "receivers: [{name: pd, pagerduty_configs: [{routing_key: 0123456789abcdef0123456789abcdef%s}]}, {name: sl, slack_configs: [{api_url: 'http://127.0.0.1:1/api/', token: xoxb-t, channel: c%s}]}]\nroute: {receiver: pd}\n"
	for _, tc := range []struct {
		webhook, pdTimeout, slTimeout string
		pdWarns, slWarns              bool
	}{
		{"", "", "", false, false},
		{"webhook: {timeout: 4s}\n", "", "", true, true},
		{"webhook: {timeout: 4s}\n", ", timeout: 3s", ", timeout: 3s", false, false},
		{"", ", timeout: 25s", "", true, false},
	} {
		p := writeFile(t, "router.yml", tc.webhook+fmt.Sprintf(pd, tc.pdTimeout, tc.slTimeout))
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Fatalf("%+v: exit %d: %s", tc, code, errs)
		}
		if got := strings.Contains(out, `warning: receiver "pd" pagerduty_configs[0].timeout`); got != tc.pdWarns {
			t.Errorf("%+v: PagerDuty warning %v, want %v:\n%s", tc, got, tc.pdWarns, out)
		}
		if got := strings.Contains(out, `warning: receiver "sl" slack_configs[0].timeout`); got != tc.slWarns {
			t.Errorf("%+v: Slack warning %v, want %v:\n%s", tc, got, tc.slWarns, out)
		}
	}
}

// A prometheus.timeout whose wait (a timeout and a quarter) is longer than
// half of webhook.timeout is cut by the webhook's deadline: check-config
// says so (an audit set 30s against 25s and saw nothing); the defaults
// (300ms against 25s) do not.
func TestCheckConfigWarnsOfALiveTimeoutLongerThanHalfTheWebhooks(t *testing.T) {
	const cfg = "%sprometheus: {url: 'http://127.0.0.1:1'%s}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key: 0123456789abcdef0123456789abcdef}]}]\nroute: {receiver: pd}\n"
	for _, tc := range []struct {
		webhook, timeout string
		warns            bool
	}{
		{"", "", false},
		{"", ", timeout: 30s", true},
		{"webhook: {timeout: 4s}\n", ", timeout: 2s", true},
		{"webhook: {timeout: 4s}\n", ", timeout: 1s", false},
	} {
		p := writeFile(t, "router.yml", fmt.Sprintf(cfg, tc.webhook, tc.timeout))
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Fatalf("%+v: exit %d: %s", tc, code, errs)
		}
		if got := strings.Contains(out, "warning: prometheus.timeout"); got != tc.warns {
			t.Errorf("%+v: warning %v, want %v:\n%s", tc, got, tc.warns, out)
		}
	}
}

// check-config names the Redis topology the addresses select: several
// addresses are Redis Cluster seeds, which a primary and its replica
// given together are not (that router never became ready, and nothing
// said Cluster).
func TestCheckConfigNamesTheRedisTopology(t *testing.T) {
	for redis, want := range map[string]string{
		"{addrs: [redis:6379]}":                                "redis redis:6379 (single node)",
		"{addrs: [redis-0:6379, redis-1:6379]}":                "redis redis-0:6379,redis-1:6379 (Redis Cluster: every address a cluster seed; for one primary give its address alone, for primary and replicas use Sentinel)",
		"{addrs: [seed:6379], cluster: true}":                  "redis seed:6379 (Redis Cluster",
		"{addrs: [s1:26379, s2:26379], master_name: mymaster}": "redis s1:26379,s2:26379 (sentinel, master mymaster)",
		// TLS and the ACL user are said too (the summary left them out).
		"{addrs: [redis:6380], tls: {insecure_skip_verify: true}, username: alertrouter}": `redis redis:6380 (single node) over TLS as ACL user "alertrouter", fail open`,
		"{addrs: [redis:6380], tls: {}}": "redis redis:6380 (single node) over TLS, fail open",
	} {
		p := writeFile(t, "router.yml", "store: {redis: "+redis+"}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 || !strings.Contains(out, "store: "+want) {
			t.Errorf("%s: exit %d, %s%s; want %q", redis, code, out, errs, want)
		}
	}
}

// check-config opens the store client without writing to the store (the
// README says it does not connect): before, it marked the store's epoch
// (SET NX <prefix>epoch) in the production Redis, with the clock of the
// machine it ran on. serve marks it.
func TestCheckConfigWritesNothingToRedis(t *testing.T) {
	srv := redistest.Start(t)
	p := writeFile(t, "router.yml", "store: {redis: {addrs: ["+srv.Addr()+"]}, key_prefix: 'chk:'}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	if code, out, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 {
		t.Fatalf("check-config exit %d: %s%s", code, out, errs)
	}
	// The epoch was marked in the background: look for a second, longer
	// than that write takes on a loopback Redis.
	for range 10 {
		if n, err := redistest.Do(srv.Addr(), "DBSIZE"); err != nil || n != "0" {
			t.Fatalf("after check-config the store holds %s keys (%v), want none", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Where nothing probes /-/ready (docker run, a bare binary), serve pings
// the store itself (--store.probe-interval): a store that does not answer
// shows in alertrouter_store_errors_total{operation="ping"}, which
// AlertrouterStoreDown reads. Before, only /-/ready pinged it: without a
// prober that alert never fired.
func TestServePingsTheStoreWithoutReadinessProbes(t *testing.T) {
	p := writeFile(t, "router.yml", "store: {redis: {addrs: ["+freeAddr(t)+"]}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	addr, errb := serveUnready(t, p, "--store.probe-interval=100ms")
	base := "http://" + addr
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) { // /metrics only: /-/ready would ping
		resp, err := http.Get(base + "/metrics")
		if err == nil {
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			for line := range strings.SplitSeq(b.String(), "\n") {
				if strings.HasPrefix(line, `alertrouter_store_errors_total{operation="ping"} `) && !strings.HasSuffix(line, " 0") {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no failed store ping counted without a readiness probe:\n%s", errb.String())
}

// A PagerDuty routing key that is not 32 characters (an Events API v2
// integration key's length) is refused by PagerDuty on every event — found
// only when pages fail and become dead letters. check-config warns, for an
// inline key and a key file alike; a 32-character key is not warned of.
func TestCheckConfigWarnsOfARoutingKeyOfTheWrongLength(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "pd-key")
	if err := os.WriteFile(keyFile, []byte("0123456789abcdef0123456789abcdef0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key   string
		warns bool
	}{
		{"routing_key: 0123456789abcdef0123456789abcdef", false},
		{"routing_key: 0123456789abcdef0123456789abcdef0", true},
		{"routing_key_file: " + keyFile, true},
	} {
		p := writeFile(t, "router.yml", "receivers: [{name: pd, pagerduty_configs: [{"+tc.key+"}]}]\nroute: {receiver: pd}\n")
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.key, code, errs)
		}
		field := "routing_key"
		if strings.HasPrefix(tc.key, "routing_key_file") {
			field = "routing_key_file's content"
		}
		if got := strings.Contains(out, `warning: receiver "pd" pagerduty_configs[0].`+field+` is 33 characters long`); got != tc.warns {
			t.Errorf("%s: warning %v, want %v:\n%s", tc.key, got, tc.warns, out)
		}
	}
}

// A group_by name written quoted ('"service.name"', as matchers write a
// UTF-8 name) is a label named with its quotes: no alert has it, every
// alert has the same empty value there, and incidents merge. check-config
// warns, for incidents.group_by and a route's group_by; a bare dotted name
// is not warned of.
func TestCheckConfigWarnsOfAQuotedGroupByName(t *testing.T) {
	p := writeFile(t, "router.yml", "incidents: {group_by: [sector, '\"service.name\"', kpi]}\nreceivers: [{name: log, log_configs: [{}]}]\nroute: {receiver: log, routes: [{receiver: log, group_by: [alertname, k8s.pod.name, '\"k8s.cluster.name\"']}]}\n")
	code, out, errs := runMain(t, "--config.file="+p, "check-config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{`warning: incidents.group_by[1] is "service.name", a label named with its quotes`, `warning: route.routes[0].group_by[2] is "k8s.cluster.name"`} {
		if !strings.Contains(out, want) {
			t.Errorf("check-config does not say %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "write the name bare (k8s.cluster.name)") {
		t.Errorf("the warning does not name the bare name:\n%s", out)
	}
	if strings.Contains(out, "group_by[1] is k8s.pod.name") || strings.Count(out, "a label named with its quotes") != 2 {
		t.Errorf("check-config warns of a bare name, or not of both quoted ones:\n%s", out)
	}
	// Written once on the root, inherited by three children: one warning,
	// where it is written (an audit: four, three naming paths the file
	// does not have).
	p = writeFile(t, "router.yml", "receivers: [{name: log, log_configs: [{}]}]\nroute: {receiver: log, group_by: ['\"service.name\"'], routes: [{receiver: log}, {receiver: log, routes: [{receiver: log}]}]}\n")
	if code, out, errs = runMain(t, "--config.file="+p, "check-config"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "a label named with its quotes"); n != 1 || !strings.Contains(out, "warning: route.group_by[0] is") {
		t.Errorf("%d warnings of the root's quoted group_by, want one, on route.group_by[0]:\n%s", n, out)
	}
}

// An alert is one incident, grouped by the first route it matches: a
// `continue` route above a team's (an SRE route with a coarser group_by)
// made the team's pages one incident — one PagerDuty dedup key — where
// Alertmanager groups per route. check-config warns of a continue route
// whose group_by differs from a later sibling's (nested ones too), and not
// where they agree.
func TestCheckConfigWarnsOfAContinueRouteGroupingOthers(t *testing.T) {
	for _, tc := range []struct {
		routes string
		warns  []string
	}{
		{"[{receiver: log, continue: true, group_by: [cluster], matchers: ['tier=\"1\"']}, {receiver: log, group_by: [alertname, cluster, service], matchers: ['team=\"a\"']}]",
			[]string{"route.routes[0] has continue: true and group_by [cluster], route.routes[1] group_by [alertname, cluster, service]"}},
		{"[{receiver: log, matchers: ['org=\"p\"'], group_by: [service], routes: [{receiver: log, continue: true}, {receiver: log, group_by: [alertname]}]}]",
			[]string{"route.routes[0].routes[0] has continue: true and group_by [service], route.routes[0].routes[1] group_by [alertname]"}},
		{"[{receiver: log, continue: true, group_by: [cluster]}, {receiver: log, group_by: [cluster]}]", nil},
		{"[{receiver: log, continue: true}, {receiver: log}]", nil},
		// The Prometheus Operator's sibling routes, one per namespace:
		// no alert matches two of them.
		{"[{receiver: log, continue: true, group_by: [namespace, alertname], matchers: ['namespace=\"monitoring\"']}, {receiver: log, continue: true, group_by: [namespace], matchers: ['namespace=\"shop\"']}]", nil},
		{"[{receiver: log, continue: true, group_by: [namespace, alertname], matchers: ['namespace=\"monitoring\"']}, {receiver: log, group_by: [namespace], matchers: ['namespace=~\"shop|monitoring\"']}]",
			[]string{"route.routes[0] has continue: true and group_by [namespace, alertname], route.routes[1] group_by [namespace]"}},
		// A regex the other's value does not match is disjoint too; a
		// blackhole sibling (kube-prometheus-stack's Watchdog → "null")
		// sends nothing to group.
		{"[{receiver: log, continue: true, group_by: [namespace, alertname], matchers: ['namespace=\"b\"']}, {receiver: log, group_by: [namespace], matchers: ['namespace=~\"c|a\"']}]", nil},
		{"[{receiver: log, continue: true, group_by: [namespace, alertname]}, {receiver: none, group_by: [namespace], matchers: ['alertname=\"Watchdog\"']}]", nil},
		// A blackhole whose child route delivers groups what it sends.
		{"[{receiver: log, continue: true, group_by: [alertname]}, {receiver: none, group_by: [cluster], matchers: ['severity=\"critical\"'], routes: [{receiver: log, matchers: ['service=\"payments\"']}]}]",
			[]string{"route.routes[0] has continue: true and group_by [alertname], route.routes[1] group_by [cluster]"}},
		// `group_by: []` (every alert of the route one incident) is not
		// the default grouping of an unset one, though both are empty (a
		// review: no warning, and two teams' alerts shared one page).
		{"[{receiver: log, continue: true, group_by: [], matchers: ['severity=\"critical\"']}, {receiver: log, matchers: ['team=\"db\"']}]",
			[]string{"route.routes[0] has continue: true and group_by [] (every alert of the route one incident), route.routes[1] group_by (unset: the default grouping)"}},
		// Two routes of `[]` are two incidents, each its route's: an
		// alert matching both is the continue route's at both (a review).
		{"[{receiver: log, continue: true, group_by: [], matchers: ['severity=\"critical\"']}, {receiver: log, group_by: [], matchers: ['team=\"db\"']}]",
			[]string{"route.routes[0] has continue: true and group_by [] (every alert of the route one incident), route.routes[1] group_by [] (every alert of the route one incident)"}},
		// …but not two of the same matchers (one team to Slack and to
		// PagerDuty): one key, one incident, as asked (a review).
		{"[{receiver: log, continue: true, group_by: [], matchers: ['team=\"db\"']}, {receiver: log, group_by: [], matchers: ['team=\"db\"']}]", nil},
	} {
		p := writeFile(t, "router.yml", "receivers: [{name: log, log_configs: [{}]}, {name: none}]\nroute: {receiver: log, routes: "+tc.routes+"}\n")
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.routes, code, errs)
		}
		for _, want := range tc.warns {
			if !strings.Contains(out, want) {
				t.Errorf("%s: check-config does not say %q:\n%s", tc.routes, want, out)
			}
		}
		if got := strings.Count(out, "has continue: true and group_by"); got != len(tc.warns) {
			t.Errorf("%s: %d continue-grouping warnings, want %d:\n%s", tc.routes, got, len(tc.warns), out)
		}
	}
}

// A configuration of 300 teams, each with an SRE continue route before its
// own, warned 43 times the same but for the route index (an audit): pairs
// with the same groupings are one warning naming the first and how many
// more; pairs of other groupings keep their own.
func TestCheckConfigFoldsAlikeContinueGroupingWarnings(t *testing.T) {
	var routes []string
	for i := range 8 {
		routes = append(routes, fmt.Sprintf(`{receiver: log, continue: true, group_by: [cluster], matchers: ['team="t%d"']}, {receiver: log, group_by: [alertname], matchers: ['team="t%d"']}`, i, i))
	}
	routes = append(routes, `{receiver: log, continue: true, group_by: [service], matchers: ['team="x"']}, {receiver: log, group_by: [alertname], matchers: ['team="x"']}`)
	p := writeFile(t, "router.yml", "receivers: [{name: log, log_configs: [{}]}]\nroute: {receiver: log, routes: ["+strings.Join(routes, ", ")+"]}\n")
	code, out, errs := runMain(t, "--config.file="+p, "check-config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got := strings.Count(out, "has continue: true and group_by"); got != 2 {
		t.Errorf("%d continue-grouping warnings, want 2 (one per pair of groupings):\n%s", got, out)
	}
	for _, want := range []string{
		"route.routes[0] has continue: true and group_by [cluster], route.routes[1] group_by [alertname]",
		"so do 7 more pairs of routes with these groupings: route.routes[2] with route.routes[3], ", "and 2 more)",
		"route.routes[16] has continue: true and group_by [service], route.routes[17] group_by [alertname]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check-config does not say %q:\n%s", want, out)
		}
	}
}

// A multi-team configuration whose receivers share one PagerDuty routing
// key, or whose Slack channel is templated on a label the incident key does
// not hold, makes one team's resolve close another's page, or posts a
// team's page into another team's channel (an audit): check-config says
// so, naming the receivers and the label; keys of their own and the label
// in incidents.group_by do not warn.
func TestCheckConfigWarnsOfTeamsSharingAPagerDutyKeyOrAChannelLabel(t *testing.T) {
	const cfg = `%s
receivers:
  - name: pd-payments
    pagerduty_configs: [{routing_key: 0123456789abcdef0123456789abcdef}]
  - name: pd-checkout
    pagerduty_configs: [{routing_key: %s}]
  - name: teams
    slack_configs: [{api_url: 'http://127.0.0.1:1/api/', token: xoxb-t, channel: '#{{ .CommonLabels.team }}-alerts'}]
route: {receiver: teams%s}
`
	for _, tc := range []struct {
		incidents, checkoutKey, route string
		keyWarns, channelWarns        bool
	}{
		{"", "0123456789abcdef0123456789abcdef", "", true, true},
		{"incidents: {group_by: [sector, service, kpi, team]}", "fedcba9876543210fedcba9876543210", "", false, false},
		// A route's group_by forms the incidents of the alerts it routes
		// (an Alertmanager config imported): no warning (a review).
		{"", "fedcba9876543210fedcba9876543210", ", group_by: [alertname, team]", false, false},
		{"", "fedcba9876543210fedcba9876543210", ", group_by: [alertname], routes: [{receiver: teams, group_by: [alertname, team]}]", false, false},
		{"", "fedcba9876543210fedcba9876543210", ", group_by: [alertname], routes: [{receiver: teams, matchers: [severity=critical], group_by: [alertname, team]}]", false, true},
		// A child without group_by inherits its parent's; one with
		// `group_by: []` groups by no label (Alertmanager v0.31 on): every
		// team's alerts of the route are one incident.
		{"", "fedcba9876543210fedcba9876543210", ", group_by: [alertname, team], routes: [{receiver: teams, matchers: [severity=critical]}]", false, false},
		{"", "fedcba9876543210fedcba9876543210", ", group_by: [alertname, team], routes: [{receiver: teams, matchers: [severity=critical], group_by: []}]", false, true},
		// Routes of one team each, grouping by nothing: each incident is
		// one route's, and its matcher fixes the team (a review saw a
		// false warning).
		{"", "fedcba9876543210fedcba9876543210", ", group_by: [alertname, team], routes: [{receiver: teams, matchers: [team=db], group_by: []}, {receiver: teams, matchers: ['team=\"web\"'], group_by: [], routes: [{receiver: teams, matchers: [env=prod]}]}]", false, false},
	} {
		p := writeFile(t, "router.yml", fmt.Sprintf(cfg, tc.incidents, tc.checkoutKey, tc.route))
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 0 {
			t.Fatalf("%+v: exit %d: %s", tc, code, errs)
		}
		if got := strings.Contains(out, `warning: receivers "pd-payments" pagerduty_configs[0] and "pd-checkout" pagerduty_configs[0] send to one PagerDuty routing key`); got != tc.keyWarns {
			t.Errorf("%+v: shared key warning %v, want %v:\n%s", tc, got, tc.keyWarns, out)
		}
		if got := strings.Contains(out, `warning: receiver "teams" slack_configs[0].channel is templated on label team, which the incidents of its alerts are not grouped by`); got != tc.channelWarns {
			t.Errorf("%+v: channel label warning %v, want %v:\n%s", tc, got, tc.channelWarns, out)
		}
	}
}
