package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/internal/redistest"
)

// serve reads when the store's run began (the life key, dedup.StoreLife)
// at start, not one --store.probe-interval later: read later, a fresh
// store's run began after the incidents of the first webhooks, and each
// triggered PagerDuty again on its next new alert (an audit: two routers
// on a fresh key prefix, an alert 2 s after start, three more of its
// incident 11 s later — two triggers).
func TestServeReadsTheStoresRunAtStart(t *testing.T) {
	srv := redistest.Start(t)
	p := writeFile(t, "router.yml", "store: {redis: {addrs: ["+srv.Addr()+"]}, key_prefix: 'life:'}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	serveUnready(t, p, "--store.probe-interval=1h")
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, err := redistest.Do(srv.Addr(), "GET", "life:life")
		if err == nil && strings.Contains(v, " ") {
			return // "<run_id> <ms>"
		}
		if time.Now().After(deadline) {
			t.Fatalf("life key after 20 s of a router probing every hour: %q, %v; want it written at start", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The router's record of Redis' run gone while Redis ran on (deleted, or
// evicted: an audit) was reported as a restart or failover nobody could
// find: it says the record was lost, and what that may mean.
func TestALostRunRecordIsNotCalledARestart(t *testing.T) {
	for _, retrigger := range []bool{true, false} {
		lost, restarted := newRunMessage(true, retrigger), newRunMessage(false, retrigger)
		if strings.Contains(lost, "started a new run") || !strings.Contains(lost, "did not restart") || !strings.Contains(lost, "evicted") {
			t.Errorf("retrigger %v, record lost: %q; want it named lost (evicted, deleted), not a new run", retrigger, lost)
		}
		if !strings.Contains(restarted, "started a new run") {
			t.Errorf("retrigger %v, Redis restarted: %q; want a new run", retrigger, restarted)
		}
		if strings.Contains(lost, "retrigger_interval every incident") != retrigger {
			t.Errorf("retrigger %v, record lost: %q; the retriggers are said only when retrigger_interval is set", retrigger, lost)
		}
	}

	// The probe says so: the life key deleted while Redis runs on is a
	// lost record, a restart a new run.
	srv := redistest.Start(t)
	cfg, err := config.Parse([]byte("store: {redis: {addrs: ["+srv.Addr()+"]}, key_prefix: 'lost:'}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logs, nil)), io.Discard)
	b := generation(t, d, cfg)
	said := logs.String
	d.checkLife(t.Context(), b)
	time.Sleep(2 * time.Millisecond) // another millisecond to begin in
	if _, err := redistest.Do(srv.Addr(), "DEL", "lost:life"); err != nil {
		t.Fatal(err)
	}
	d.checkLife(t.Context(), b)
	if s := said(); !strings.Contains(s, "did not restart") || strings.Contains(s, "started a new run") {
		t.Fatalf("after the life key was deleted the probe said:\n%s\nwant the record named lost, not a new run", s)
	}
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	d.checkLife(t.Context(), b)
	if s := said(); !strings.Contains(s, "started a new run") {
		t.Fatalf("after Redis restarted the probe said:\n%s\nwant a new run", s)
	}
}
