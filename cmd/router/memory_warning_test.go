package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// The warning that the embedded in-memory store is in use is logged for
// the generation that installs it, never by a reload that fails after
// opening it: the previous store keeps serving, and the log said the
// opposite.
func TestTheMemoryStoreWarningIsLoggedOnlyWhenItIsInstalled(t *testing.T) {
	const warning = "no store.redis configured"
	const log = "receivers: [{name: log, log_configs: [{}]}]\nroute: {receiver: log}\n"
	p := writeFile(t, "router.yml", log)
	base, _, logs := serveWithStdout(t, p, "--web.enable-lifecycle")
	if n := strings.Count(logs.String(), warning); n != 1 {
		t.Fatalf("%d warnings at start, want 1:\n%s", n, logs)
	}
	// Another key prefix opens another store; a missing routing key file
	// then fails the reload.
	bad := "store: {key_prefix: 'other:'}\nreceivers: [{name: log, log_configs: [{}]}, {name: pd, pagerduty_configs: [{routing_key_file: /nonexistent/key}]}]\nroute: {receiver: log}\n"
	if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := postReload(t, base); code != http.StatusInternalServerError {
		t.Fatalf("reload: %d %s, want 500", code, body)
	}
	if n := strings.Count(logs.String(), warning); n != 1 {
		t.Fatalf("%d warnings after a failed reload, want still 1:\n%s", n, logs)
	}
	// The same store switch, succeeding, says it.
	if err := os.WriteFile(p, []byte("store: {key_prefix: 'other:'}\n"+log), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := postReload(t, base); code != http.StatusOK {
		t.Fatalf("reload: %d %s, want 200", code, body)
	}
	if n := strings.Count(logs.String(), warning); n != 2 {
		t.Fatalf("%d warnings after a reload switching stores, want 2:\n%s", n, logs)
	}
}
