package main

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// Every key the router writes has a time to live, so a Redis whose
// maxmemory-policy evicts — allkeys-* and the volatile-* policies managed
// services default to — deletes dedup markers once full and alerts page
// again. Nothing told the operator: serve now warns (naming the policy)
// and sets alertrouter_store_evicting, which AlertrouterStoreEvicts reads;
// noeviction reads 0. The policy is changed on the running Redis, so each
// reading is the check's, not the gauge's initial 0. A policy put right
// while Redis is full (the router's writes refused) reads 0 too: the check
// ran only after a write probe that succeeded, and the alert fired on,
// telling on-call to set what they had set (an audit).
func TestServeWarnsOfARedisThatEvicts(t *testing.T) {
	old := evictionCheckEvery
	evictionCheckEvery = 100 * time.Millisecond
	t.Cleanup(func() { evictionCheckEvery = old })
	srv := redistest.Start(t, "--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru")
	p := writeFile(t, "router.yml", "store: {redis: {addrs: ["+srv.Addr()+"]}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	addr, errb := serveUnready(t, p, "--store.probe-interval=100ms")
	for _, tc := range []struct {
		policy string
		evicts bool
		full   bool // maxmemory below what Redis holds: writes refused (OOM)
	}{
		{"volatile-lru", true, false},
		{"noeviction", false, false},
		{"allkeys-lru", true, false},
		{"noeviction", false, true},
	} {
		if tc.full {
			if _, err := redistest.Do(srv.Addr(), "CONFIG", "SET", "maxmemory", "1"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := redistest.Do(srv.Addr(), "CONFIG", "SET", "maxmemory-policy", tc.policy); err != nil {
			t.Fatal(err)
		}
		want := "alertrouter_store_evicting 0"
		if tc.evicts {
			want = "alertrouter_store_evicting 1"
		}
		warning := "maxmemory_policy=" + tc.policy
		deadline := time.Now().Add(15 * time.Second)
		got := ""
		for time.Now().Before(deadline) {
			if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
				var b bytes.Buffer
				_, _ = b.ReadFrom(resp.Body)
				resp.Body.Close()
				got = b.String()
				if strings.Contains(got, "\n"+want+"\n") && (!tc.evicts || strings.Contains(errb.String(), warning)) {
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(got, "\n"+want+"\n") {
			t.Fatalf("maxmemory-policy %s: /metrics lacks %q:\n%s", tc.policy, want, grepLines(got, "alertrouter_store_evicting"))
		}
		if warned := strings.Contains(errb.String(), warning); warned != tc.evicts {
			t.Fatalf("maxmemory-policy %s: warned %v, want %v:\n%s", tc.policy, warned, tc.evicts, errb.String())
		}
	}
	if !strings.Contains(errb.String(), "Redis deletes keys when full") {
		t.Fatalf("the warning does not say what an evicting Redis does:\n%s", errb.String())
	}
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// A Redis that answers PING but refuses the router's commands — a
// read-only replica named by mistake, an ACL user without scripting —
// passed the readiness probe: every webhook then failed open (duplicates)
// or, with fail_closed, 503 on every replica while all read ready. The
// probe now runs a script that writes, so a replica starting against such
// a store stays unready, naming the refusal, and the failure counts as a
// ping's (AlertrouterStoreDown).
func TestReadinessProbeFindsARedisThatRefusesTheRoutersCommands(t *testing.T) {
	master := redistest.Start(t)
	for name, tc := range map[string]struct {
		args  []string
		store string
		want  string
	}{
		"read-only replica":     {[]string{"--replicaof", "127.0.0.1", strings.TrimPrefix(master.Addr(), "127.0.0.1:")}, "", "READONLY"},
		"ACL without scripting": {[]string{"--user", "router", "on", ">pw", "~*", "+@all", "-@scripting"}, ", username: router, password: pw", "NOPERM"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := redistest.Start(t, tc.args...)
			p := writeFile(t, "router.yml", "store: {redis: {addrs: ["+srv.Addr()+"]"+tc.store+"}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
			addr, _ := serveUnready(t, p, "--store.probe-interval=0")
			var code int
			var body string
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) {
				resp, err := http.Get("http://" + addr + "/-/ready")
				if err == nil {
					var b bytes.Buffer
					_, _ = b.ReadFrom(resp.Body)
					resp.Body.Close()
					code, body = resp.StatusCode, b.String()
					if strings.Contains(body, tc.want) {
						break
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			if code != http.StatusServiceUnavailable || !strings.Contains(body, tc.want) {
				t.Fatalf("/-/ready against a Redis refusing writes: %d %q; want 503 naming %s", code, body, tc.want)
			}
			resp, err := http.Get("http://" + addr + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			resp.Body.Close()
			// AlertrouterStoreDown fires when the failed pings are as many
			// as the pings: the write probe is no ping of its own.
			value := func(name string) float64 {
				line := strings.TrimSpace(grepLines(b.String(), name+`{operation="ping"} `))
				f, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
				if line == "" || err != nil {
					t.Fatalf("no %s{operation=\"ping\"} in /metrics (%q)", name, line)
				}
				return f
			}
			if errs, pings := value("alertrouter_store_errors_total"), value("alertrouter_store_operation_duration_seconds_count"); errs == 0 || errs < pings {
				t.Fatalf("refused probes: %v failed pings of %v; want every ping counted failed (AlertrouterStoreDown's condition)", errs, pings)
			}
		})
	}
}

// serveUnready runs serve in process on the config file p with flags added,
// without waiting for it to be ready (tests of readiness itself), and stops
// it at the test's end; it returns its address and its log.
func serveUnready(t *testing.T, p string, flags ...string) (addr string, log *syncBuffer) {
	t.Helper()
	addr = freeAddr(t)
	var out syncBuffer
	log = &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- (&Main{Stdout: &out, Stderr: log}).Run(ctx, append([]string{"--config.file=" + p, "--web.listen-address=" + addr}, flags...))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return addr, log
}
