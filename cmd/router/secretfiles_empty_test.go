package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
)

// secretDir holds the files the secret-file tables name: "empty" holds
// only whitespace (a Secret made from an unset variable, a rotation
// caught half-written), "ok" a value, "missing" does not exist.
func secretDir(t *testing.T) (empty, ok, missing string) {
	t.Helper()
	dir := t.TempDir()
	empty, ok, missing = filepath.Join(dir, "empty"), filepath.Join(dir, "ok"), filepath.Join(dir, "missing")
	if err := os.WriteFile(empty, []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ok, []byte("s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return empty, ok, missing
}

// An empty secret file passed check-config and start: pages went out with
// routing_key "", Slack got an empty token, an empty bearer token turned
// the webhook's authentication off. Each is refused at check-config and
// at start alike, naming its YAML path.
func TestAnEmptySecretFileIsRefusedAtCheckConfigAndStart(t *testing.T) {
	empty, _, _ := secretDir(t)
	const log = "receivers: [{name: log, log_configs: [{}]}]\nroute: {receiver: log}\n"
	for name, tc := range map[string]struct{ yml, path string }{
		"a PagerDuty routing_key_file": {fmt.Sprintf("route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key_file: %s}]}]\n", empty),
			"receivers[0].pagerduty_configs[0].routing_key_file"},
		"a Slack token_file": {fmt.Sprintf("route: {receiver: s}\nreceivers: [{name: s, slack_configs: [{token_file: %s, channel: '#a'}]}]\n", empty),
			"receivers[0].slack_configs[0].token_file"},
		"a Slack signing_secret_file": {fmt.Sprintf("route: {receiver: s}\nreceivers: [{name: s, slack_configs: [{token: xoxb-1, channel: '#a', signing_secret_file: %s, actions: [escalate], escalate_to: pd}]}, {name: pd, pagerduty_configs: [{routing_key: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}]}]\n", empty),
			"signing_secret_file"},
		"store.redis.password_file": {fmt.Sprintf("store: {redis: {addrs: ['127.0.0.1:1'], password_file: %s}}\n", empty) + log,
			"store.redis.password_file"},
		"auth.bearer_token_file": {fmt.Sprintf("auth: {bearer_token_file: %s}\n", empty) + log,
			"auth.bearer_token_file"},
		"auth.basic_auth.password_file": {fmt.Sprintf("auth: {basic_auth: {username: am, password_file: %s}}\n", empty) + log,
			"auth.basic_auth.password_file"},
		"console.auth.bearer_token_file": {fmt.Sprintf("console: {auth: {bearer_token_file: %s}}\n", empty) + log,
			"console.auth.bearer_token_file"},
	} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, "router.yml", tc.yml)
			want := tc.path + `: read secret file "` + empty + `": the file is empty`
			code, _, errs := runMain(t, "--config.file="+p, "check-config")
			if code != 1 || !strings.Contains(errs, want) {
				t.Errorf("check-config: exit %d, %s; want 1 and %q", code, errs, want)
			}
			code, slog := serveExit(t, p)
			if code != 1 || !strings.Contains(slog, tc.path) || !strings.Contains(slog, "the file is empty") {
				t.Errorf("serve: exit %d, log:\n%s\nwant 1 naming %s", code, slog, tc.path)
			}
		})
	}
}

// A missing or empty file of an http_config (PagerDuty's, Slack's, the
// alertmanager and prometheus sections') passed check-config and start,
// then failed every notification ("unable to read authorization
// credentials"). Each is named at its YAML path at check-config and start.
func TestAnHTTPConfigFileThatCannotBeReadIsRefused(t *testing.T) {
	empty, ok, missing := secretDir(t)
	const log = "receivers: [{name: log, log_configs: [{}]}]\nroute: {receiver: log}\n"
	pd := func(httpConfig string) string {
		return "route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, http_config: " + httpConfig + "}]}]\n"
	}
	for name, tc := range map[string]struct{ yml, want string }{
		"PagerDuty authorization.credentials_file missing": {pd("{authorization: {credentials_file: " + missing + "}}"),
			`receivers[0].pagerduty_configs[0].http_config.authorization.credentials_file: read secret file "` + missing + `"`},
		// prometheus/common moves bearer_token_file to authorization.credentials_file
		// as it parses: the error names the latter, and the file.
		"PagerDuty bearer_token_file empty": {pd("{bearer_token_file: " + empty + "}"),
			`receivers[0].pagerduty_configs[0].http_config.authorization.credentials_file: read secret file "` + empty + `": the file is empty`},
		"PagerDuty oauth2.client_secret_file missing": {pd("{oauth2: {client_id: c, token_url: 'http://127.0.0.1:1/token', client_secret_file: " + missing + "}}"),
			"receivers[0].pagerduty_configs[0].http_config.oauth2.client_secret_file"},
		"PagerDuty tls_config.ca_file empty": {pd("{tls_config: {ca_file: " + empty + "}}"),
			"receivers[0].pagerduty_configs[0].http_config.tls_config.ca_file"},
		"PagerDuty tls_config.ca_file not a certificate": {pd("{tls_config: {ca_file: " + ok + "}}"),
			"receivers[0].pagerduty_configs[0].http_config.tls_config: unable to use specified CA cert"},
		"Slack basic_auth.password_file missing": {"route: {receiver: s}\nreceivers: [{name: s, slack_configs: [{token: xoxb-1, channel: '#a', http_config: {basic_auth: {username: u, password_file: " + missing + "}}}]}]\n",
			"receivers[0].slack_configs[0].http_config.basic_auth.password_file"},
		"alertmanager basic_auth.password_file missing": {"alertmanager: {url: 'http://127.0.0.1:1', http_config: {basic_auth: {username: u, password_file: " + missing + "}}}\n" + log,
			"alertmanager.http_config.basic_auth.password_file"},
		"prometheus authorization.credentials_file empty": {"prometheus: {url: 'http://127.0.0.1:1', http_config: {authorization: {credentials_file: " + empty + "}}}\n" + log,
			"prometheus.http_config.authorization.credentials_file"},
	} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, "router.yml", tc.yml)
			code, _, errs := runMain(t, "--config.file="+p, "check-config")
			if code != 1 || !strings.Contains(errs, tc.want) {
				t.Errorf("check-config: exit %d, %s; want 1 and %q", code, errs, tc.want)
			}
			if strings.Count(errs, "http_config") != 1 {
				t.Errorf("check-config names the file %d times, want once:\n%s", strings.Count(errs, "http_config"), errs)
			}
			code, slog := serveExit(t, p)
			if key, _, _ := strings.Cut(tc.want, ":"); code != 1 || !strings.Contains(slog, key) {
				t.Errorf("serve: exit %d, log:\n%s\nwant 1 naming %s", code, slog, key)
			}
		})
	}
	// The same files, readable, pass.
	p := writeFile(t, "router.yml", pd("{authorization: {credentials_file: "+ok+"}}"))
	if code, _, errs := runMain(t, "--config.file="+p, "check-config"); code != 0 {
		t.Errorf("readable credentials_file: exit %d, %s", code, errs)
	}
}

// A routing key file emptied in the middle of a rotation fails the reload
// as a deleted one does: the previous key keeps paging. Before, the
// reload succeeded and pages went out with routing_key "".
func TestAReloadOnAnEmptiedSecretFileKeepsThePreviousKey(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	keyFile := filepath.Join(t.TempDir(), "routing_key")
	const key = "old0000000000000000000000000key0"
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, "router.yml", fmt.Sprintf("route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key_file: %s, url: %s}]}]\n", keyFile, pd.EnqueueURL()))
	base, _, _ := serveWithStdout(t, p, "--web.enable-lifecycle")
	if err := os.WriteFile(keyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := postReload(t, base); code != http.StatusInternalServerError || !strings.Contains(body, "routing_key_file") || !strings.Contains(body, "the file is empty") {
		t.Fatalf("reload on an empty routing key file: %d %s; want 500 naming routing_key_file", code, body)
	}
	body := `{"version":"4","status":"firing","receiver":"router","groupKey":"{}:{}","alerts":[{"status":"firing","labels":{"alertname":"GPUDown","severity":"critical","service":"x"},"startsAt":"2026-12-04T10:00:00Z"}]}`
	resp, err := http.Post(base+"/webhook", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook answered %d", resp.StatusCode)
	}
	if ev := pd.Events(); len(ev) != 1 || ev[0].RoutingKey != key {
		t.Fatalf("events %+v, want one with the previous key", ev)
	}
}
