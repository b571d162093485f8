package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// redisCLI runs redis-cli against the plain port of srv, authenticated
// with password when not empty.
func redisCLI(t *testing.T, srv *redistest.Server, password string, args ...string) {
	t.Helper()
	a := []string{"-p", strings.TrimPrefix(srv.Addr(), "127.0.0.1:")}
	if password != "" {
		a = append(a, "-a", password, "--no-auth-warning")
	}
	if out, err := exec.Command("redis-cli", append(a, args...)...).CombinedOutput(); err != nil || strings.HasPrefix(string(out), "ERR") {
		t.Fatalf("redis-cli %v: %v %s", args, err, out)
	}
}

// A reload refused because the rotated password file could not connect
// yet (Redis still on the old password) was never tried again: the file
// does not change when Redis switches to the new password and drops its
// connections, so the previous client failed every command (WRONGPASS)
// from then on — fail-open, every repeat paged again; fail_closed, nothing
// paged — until a SIGHUP. The refused reload is retried on every check
// tick and goes through once the new files connect; its log says the whole
// reload was refused and is retried.
func TestARefusedStoreFileReloadIsRetriedUntilTheNewFilesConnect(t *testing.T) {
	srv, caFile, pwFile := tlsStoreFiles(t)
	base, log, send := storeFilesRouter(t, srv, caFile, pwFile)
	send("before")

	// The Secret first: Redis does not take pw2 yet, the reload is refused.
	replaceFile(t, pwFile, []byte("pw2\n"))
	waitLog(t, log, "cannot connect while the previous client still does")
	for _, want := range []string{"the whole reload is refused, routing and every other change in it included", "it is retried automatically"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the refused reload's log does not say %q:\n%s", want, log.String())
		}
	}
	if m := scrape(t, base); !strings.Contains(m, "alertrouter_config_last_reload_successful 0") {
		t.Fatalf("the refused reload left alertrouter_config_last_reload_successful at 1")
	}
	// The retries (every 50ms here) ask the new client without counting
	// the probe's ping errors of a store that serves (a review saw 407 in
	// 100s), and log at debug only.
	time.Sleep(300 * time.Millisecond)
	if m := scrape(t, base); !strings.Contains(m, `alertrouter_store_errors_total{operation="ping"} 0`) {
		t.Errorf("pending retries counted ping errors:\n%s", grepLines(m, "alertrouter_store_errors_total"))
	}
	// The store is said once, at start (at info level, which this router
	// logs at): not again for each retry's client.
	if n := strings.Count(log.String(), "redis store"); n != 1 {
		t.Errorf("the log names the redis store %d times, want once (at start), not per retry:\n%s", n, log.String())
	}

	// Then Redis: it takes pw2 and drops the connections of pw1.
	redisCLI(t, srv, "pw1", "CONFIG", "SET", "requirepass", "pw2")
	redisCLI(t, srv, "pw2", "CLIENT", "KILL", "TYPE", "normal")
	waitLog(t, log, "store settings changed")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(scrape(t, base), "alertrouter_config_last_reload_successful 1") {
		if time.Now().After(deadline) {
			t.Fatalf("alertrouter_config_last_reload_successful stayed 0 after the retried reload went through:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sum := send("before"); sum["deduplicated"] != float64(1) {
		t.Fatalf("the repeat after Redis took the new password answered %v; want it deduplicated (the new client in use):\n%s", sum, log.String())
	}
}

// With fail_closed, a Redis refusing new connections (maxclients) while
// the pooled ones served every webhook failed the readiness probe's
// fresh-connection ping: every replica sharing that Redis went unready and
// the Service lost all its endpoints. The pooled ping decides readiness
// again; the fresh connection's failure is counted apart
// (alertrouter_store_errors_total{operation="new_conn"}) and logged with
// Redis' own reply.
func TestARedisRefusingNewConnectionsKeepsAFailClosedRouterReady(t *testing.T) {
	srv := redistest.Start(t)
	p := writeFile(t, "router.yml", fmt.Sprintf("store: {fail_closed: true, redis: {addrs: [%s]}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n", srv.Addr()))
	base, _, log := serveWithStdout(t, p, "--store.probe-interval=20ms")
	// Created at start (a probe's fresh connection may already have timed
	// out on a loaded machine: its value is not asserted here).
	if m := scrape(t, base); !strings.Contains(m, `alertrouter_store_errors_total{operation="new_conn"} `) {
		t.Fatalf(`alertrouter_store_errors_total{operation="new_conn"} is not created at start`)
	}
	// Nor are the pings': on a loaded machine one may time out before the
	// refusal (CI saw one). What the refusal adds is compared.
	before := scrape(t, base)
	redisCLI(t, srv, "", "CONFIG", "SET", "maxclients", "1")
	time.Sleep(300 * time.Millisecond) // 15 probes: unready after 3 failed ones
	// Ready: the fresh connection's refusal alone made it unready for good
	// (each probe failed). A loaded machine may time out a pooled
	// connection, which is dialed again and refused (CI saw a 503 once), so
	// a 200 is asked for within a few seconds, not of the first read.
	ready := false
	for deadline := time.Now().Add(3 * time.Second); !ready && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ready = resp.StatusCode == http.StatusOK
	}
	if !ready {
		t.Fatalf("/-/ready never 200 while the pooled connections answer:\n%s", log.String())
	}
	waitLog(t, log, "store refuses new connections while the pooled ones answer")
	// Redis' reply names the refusal; a probe may lose it to Redis closing
	// the connection first ("broken pipe", another cause: logged apart),
	// the next probes read it.
	waitLog(t, log, "max number of clients reached")
	// The probes' fresh connections fail every 20 ms; a pooled connection
	// that a loaded machine timed out is dialed again and refused too
	// (CI saw 2 ping errors beside 20 new_conn ones), which readiness
	// rides out (above): the refusal must show as new_conn errors, not as
	// the probe's pings.
	m := scrape(t, base)
	pings := storeErrors(t, m, "ping") - storeErrors(t, before, "ping")
	if conns := storeErrors(t, m, "new_conn") - storeErrors(t, before, "new_conn"); conns < 3 || pings*3 > conns {
		t.Errorf("want the failures counted as new_conn errors, not ping errors; before the refusal:\n%s\nafter:\n%s",
			grepLines(before, "alertrouter_store_errors_total"), grepLines(m, "alertrouter_store_errors_total"))
	}
}

// storeErrors is alertrouter_store_errors_total{operation=op} in the
// scraped metrics m.
func storeErrors(t *testing.T, m, op string) float64 {
	t.Helper()
	line := strings.TrimSpace(grepLines(m, `alertrouter_store_errors_total{operation="`+op+`"} `))
	f, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
	if line == "" || err != nil {
		t.Fatalf("no alertrouter_store_errors_total{operation=%q} in the metrics (%q)", op, line)
	}
	return f
}
