package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/promtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// Egress was found at the first page: a wrong CA, a refusing proxy, a
// revoked Slack token or an unreachable PagerDuty passed check-config and
// a ready router. check-config --probe reaches each (Slack's auth.test,
// PagerDuty's events URL, the store with a write, Alertmanager's API)
// through its own HTTP settings without paging anyone, prints a line
// each, and exits 1 naming what failed.
func TestCheckConfigProbeReachesWhatTheConfigNames(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-good", "alerts")
	defer sl.Close()
	srv := redistest.Start(t, "--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru")
	cfg := func(token, am string) string {
		return writeFile(t, "router.yml", fmt.Sprintf(`
store: {redis: {addrs: [%s]}}
alertmanager: {url: %s}
route: {receiver: slack}
receivers:
  - name: pd
    pagerduty_configs: [{url: %s, routing_key: 0123456789abcdef0123456789abcdef}]
  - name: slack
    slack_configs: [{api_url: %s, token: %s, channel: "#alerts"}]
`, srv.Addr(), am, pd.EnqueueURL(), sl.APIURL(), token))
	}
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n").URL
	code, out, errs := runMain(t, "--config.file="+cfg("xoxb-good", am), "check-config", "--probe")
	if code != 1 || !strings.Contains(errs, "1 probes FAILED") {
		t.Fatalf("every probe but the evicting store's should pass: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{`probe receiver "pd" pagerduty/0: ok`, `probe receiver "slack" slack/0: ok: auth.test`, "probe store: FAILED: maxmemory-policy volatile-lru evicts keys when full", "probe alertmanager: ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("check-config --probe does not say %q:\n%s", want, out)
		}
	}
	if len(pd.Events()) != 0 {
		t.Errorf("the probe sent PagerDuty %d events; want none", len(pd.Events()))
	}
	if n, err := redistest.Do(srv.Addr(), "DBSIZE"); err != nil || n != "0" {
		t.Errorf("the store probe left %s keys (%v); want its key deleted", n, err)
	}
	if _, err := redistest.Do(srv.Addr(), "CONFIG", "SET", "maxmemory-policy", "noeviction"); err != nil {
		t.Fatal(err)
	}
	if code, out, errs = runMain(t, "--config.file="+cfg("xoxb-good", am), "check-config", "--probe"); code != 0 || !strings.Contains(out, "probe store: ok") || !strings.Contains(out, "maxmemory-policy noeviction") {
		t.Fatalf("with noeviction every probe should pass: exit %d\n%s\n%s", code, out, errs)
	}

	code, out, errs = runMain(t, "--config.file="+cfg("xoxb-revoked", "http://"+freeAddr(t)), "check-config", "--probe")
	if code != 1 {
		t.Fatalf("a revoked token and an unreachable Alertmanager: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{`probe receiver "slack" slack/0: FAILED: auth.test: invalid_auth — `, "probe alertmanager: FAILED", `probe receiver "pd" pagerduty/0: ok`} {
		if !strings.Contains(out, want) {
			t.Errorf("check-config --probe does not say %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "2 probes FAILED") {
		t.Errorf("stderr does not count the failed probes: %s", errs)
	}
}

// prometheus.url was never probed: a URL without its route prefix (or
// with /graph) made every SLO page read "unavailable" for good, and
// hand-rolled SLOs paging on their live burn ticketed, while
// check-config --probe passed. It asks Prometheus for vector(1) now; a
// 404 names the URL's path.
func TestCheckConfigProbeAsksPrometheus(t *testing.T) {
	prom := promtest.Start(t, promtest.Options{})
	cfg := func(url string) string {
		return writeFile(t, "router.yml", fmt.Sprintf("prometheus: {url: %q}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n", url))
	}
	code, out, errs := runMain(t, "--config.file="+cfg(prom.URL()), "check-config", "--probe")
	if code != 0 || !strings.Contains(out, "probe prometheus: ok: its query API") {
		t.Fatalf("a reachable Prometheus: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runMain(t, "--config.file="+cfg(prom.URL()+"/graph"), "check-config", "--probe")
	if code != 1 || !strings.Contains(out, "probe prometheus: FAILED: Prometheus answered 404 at "+prom.URL()+"/graph: check the path of that URL") {
		t.Errorf("prometheus.url with /graph: exit %d, want the 404 named\n%s\n%s", code, out, errs)
	}
}

// An ACL user without +info cannot read maxmemory-policy: the probe passed
// an evicting Redis without a word, while the same Redis failed it through
// the default user (an audit). It says the policy went unchecked.
func TestCheckConfigProbeSaysWhenItCannotReadTheMemoryPolicy(t *testing.T) {
	srv := redistest.Start(t, "--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru",
		"--user", "router", "on", ">pw", "~*", "+@all", "-info")
	p := writeFile(t, "router.yml", "store: {redis: {addrs: ["+srv.Addr()+"], username: router, password: pw}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	code, out, errs := runMain(t, "--config.file="+p, "check-config", "--probe")
	if code != 0 || !strings.Contains(out, "probe store: ok") || !strings.Contains(out, "maxmemory-policy NOT checked") || !strings.Contains(out, "+info") {
		t.Fatalf("exit %d, want the store probed with the policy said unchecked:\n%s%s", code, out, errs)
	}
}

// check-config --test-route printed the receivers and nothing else: the
// warnings and --probe were skipped, and deploy/README's check (which
// gives --test-route) passed a 5-character routing key and an unreachable
// PagerDuty (an audit). stdout stays the receivers alone, as amtool prints
// them; the warnings and the probes go to stderr, and a failed probe
// fails the check.
func TestCheckConfigTestRouteStillWarnsAndProbes(t *testing.T) {
	cfg := writeFile(t, "router.yml", fmt.Sprintf(`
route: {receiver: pd}
receivers:
  - name: pd
    pagerduty_configs: [{url: %s, routing_key: short}]
`, "http://"+freeAddr(t)+"/v2/enqueue"))
	code, out, errs := runMain(t, "--config.file="+cfg, "check-config", "--test-route", "severity=critical")
	if code != 0 || out != "pd\n" {
		t.Fatalf("--test-route without --probe: exit %d, stdout %q; want 0 and the receiver alone\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "warning: ") || !strings.Contains(errs, "routing_key is 5 characters long") {
		t.Errorf("--test-route does not warn of the 5-character routing key on stderr:\n%s", errs)
	}
	code, out, errs = runMain(t, "--config.file="+cfg, "check-config", "--probe", "--test-route", "severity=critical")
	if code != 1 || out != "pd\n" {
		t.Fatalf("--probe --test-route with PagerDuty unreachable: exit %d, stdout %q; want 1 and the receiver alone\n%s", code, out, errs)
	}
	if !strings.Contains(errs, `probe receiver "pd" pagerduty/0: FAILED`) || !strings.Contains(errs, "1 probes FAILED") {
		t.Errorf("--probe --test-route does not say the probe failed on stderr:\n%s", errs)
	}
}

// A probe's ok line names the URL it reached: a PagerDuty url with
// user:password@ showed the password there, where a failed probe's line
// hid it (an audit).
func TestCheckConfigProbeHidesAURLsPasswordWhenItPasses(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	u := strings.Replace(pd.EnqueueURL(), "http://", "http://pduser:SUPERSECRETPW@", 1)
	cfg := writeFile(t, "router.yml", fmt.Sprintf(`
route: {receiver: pd}
receivers:
  - name: pd
    pagerduty_configs: [{url: %q, routing_key: 0123456789abcdef0123456789abcdef}]
`, u))
	code, out, errs := runMain(t, "--config.file="+cfg, "check-config", "--probe")
	if code != 0 || !strings.Contains(out, `probe receiver "pd" pagerduty/0: ok`) {
		t.Fatalf("check-config --probe: exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out+errs, "SUPERSECRETPW") {
		t.Errorf("the probe's ok line shows the URL's password:\n%s", out)
	}
}

// A Redis that answers, but later than store.redis.read_timeout (one in
// another region, or a read_timeout cut too short), was probed "i/o
// timeout" — the same words as a Redis down — and a probe that passed
// said nothing of the round trip (an audit). The probe names the round
// trip, and for a timeout asks once more with longer to tell a slow Redis
// from a silent one.
func TestCheckConfigProbeTellsASlowRedisFromADownOne(t *testing.T) {
	srv := redistest.Start(t)
	cfg := func(addr, readTimeout string) string {
		return writeFile(t, "router.yml", fmt.Sprintf("store: {redis: {addrs: [%s], read_timeout: %s}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n", addr, readTimeout))
	}
	code, out, errs := runMain(t, "--config.file="+cfg(srv.Addr(), "1s"), "check-config", "--probe")
	if code != 0 || !strings.Contains(out, "probe store: ok: PING in ") {
		t.Fatalf("a near Redis: exit %d, want its round trip named\n%s%s", code, out, errs)
	}
	far := redistest.Distant(t, srv.Addr(), 300*time.Millisecond)
	code, out, errs = runMain(t, "--config.file="+cfg(far, "50ms"), "check-config", "--probe")
	if code != 1 || !strings.Contains(out, "probe store: FAILED: ") || !strings.Contains(out, "Redis answers, in ") ||
		!strings.Contains(out, "later than store.redis.read_timeout (50ms)") {
		t.Errorf("a Redis 300ms away with read_timeout 50ms: exit %d, want the probe to fail saying Redis answers later than read_timeout\n%s%s", code, out, errs)
	}
	// Silent for a moment, then answering at once (a slow command, a
	// fork, a pause): not a round trip too long — a review found it
	// reported as one, with the advice to raise read_timeout.
	if _, err := redistest.Do(srv.Addr(), "CLIENT", "PAUSE", "4000", "ALL"); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runMain(t, "--config.file="+cfg(srv.Addr(), "200ms"), "check-config", "--probe")
	if code != 1 || !strings.Contains(out, "asked again, Redis answered in ") || !strings.Contains(out, "within store.redis.read_timeout (200ms): it answered nothing for a moment") || strings.Contains(out, "raise read_timeout") {
		t.Errorf("a Redis paused 4s with read_timeout 200ms: exit %d, want the probe to fail saying it was silent for a moment, not too far\n%s%s", code, out, errs)
	}
	srv.Kill()
	code, out, errs = runMain(t, "--config.file="+cfg(srv.Addr(), "50ms"), "check-config", "--probe")
	if code != 1 || !strings.Contains(out, "probe store: FAILED: ") || strings.Contains(out, "Redis answers") {
		t.Errorf("a Redis down: exit %d, want the probe to fail without saying it answers\n%s%s", code, out, errs)
	}
}

// The probe's word on a round trip warns past half of read_timeout: a
// slower moment would count Redis as down.
func TestTheStoreProbeWarnsOfARoundTripNearReadTimeout(t *testing.T) {
	for _, c := range []struct {
		rtt, rt time.Duration
		warn    bool
	}{{time.Millisecond, time.Second, false}, {500 * time.Millisecond, time.Second, false}, {501 * time.Millisecond, time.Second, true}, {2 * time.Second, time.Second, true}} {
		got := storeRoundTrip(c.rtt, c.rt)
		if !strings.HasPrefix(got, "PING in "+c.rtt.String()) || strings.Contains(got, "WARNING: over half of store.redis.read_timeout ("+c.rt.String()+")") != c.warn {
			t.Errorf("round trip %s, read_timeout %s: %q; want the round trip named, warning %v", c.rtt, c.rt, got, c.warn)
		}
	}
}
