package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config/configtest"
)

// Any bytes given as router.yml make `router check-config` exit 0 with
// its summary or 1 naming every problem by its YAML path or line, never
// panic nor hang (README.md, "Configuration": check-config fails where
// the config is wrong, never crashes). check-config builds what serve
// builds (notifiers, templates, the edge's auth, the store client without
// connecting), so a panic here is one serve and every reload would meet.
// The secret files the seeds name exist (in the config's directory), so
// the build goes past reading them; URLs are stand-ins nothing listens on,
// and check-config sends nothing.
func FuzzCheckConfig(f *testing.F) {
	dir := f.TempDir()
	for name, content := range map[string]string{
		"secrets/webhook-token":         "webhook-token-value",
		"secrets/redis-password":        "redis-password-value",
		"secrets/slack-token":           "xoxb-fuzz-slack-token",
		"secrets/pagerduty-routing-key": "0123456789abcdef0123456789abcdef",
		"secrets/console-password":      "console-password-value",
		"secrets/redis-ca.crt":          "not a certificate",
		"redis-auth/redis-password":     "redis-password-value",
		"templates/fuzz.tmpl":           `{{ define "fuzz.title" }}[{{ .Status }}] {{ .CommonLabels.alertname }}{{ end }}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	local := strings.NewReplacer("/etc/alertrouter/secrets/", "secrets/", "/etc/alertrouter/redis-auth/", "redis-auth/",
		"/etc/alertrouter/templates/", "templates/", "/etc/alertrouter/tls/", "secrets/")
	seeds, err := configtest.Seeds(filepath.Join("..", ".."))
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, standInConfigs...)
	for _, s := range seeds {
		f.Add([]byte(local.Replace(s)))
	}
	bound := configtest.Bound(10 * time.Second)
	f.Fuzz(func(t *testing.T, b []byte) {
		fh, err := os.CreateTemp(dir, "router-*.yml")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(fh.Name())
		if _, err := fh.Write(b); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		type outcome struct {
			code           int
			stdout, stderr string
			panicked       string
		}
		done := make(chan outcome, 1)
		go func() {
			var o outcome
			defer func() {
				if p := recover(); p != nil {
					o.panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
				}
				done <- o
			}()
			var out, errb syncBuffer
			m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
			o.code = m.Run(context.Background(), []string{"--config.file=" + fh.Name(), "check-config"})
			o.stdout, o.stderr = out.String(), errb.String()
		}()
		var o outcome
		select {
		case o = <-done:
		case <-time.After(bound):
			t.Fatalf("check-config took more than %s\ninput (%d bytes): %.2000q", bound, len(b), b)
		}
		switch {
		case o.panicked != "":
			t.Fatalf("check-config panicked: %s\ninput: %q", o.panicked, b)
		case o.code == 0:
			if !strings.Contains(o.stdout, "SUCCESS") {
				t.Fatalf("exit 0 without SUCCESS: %q\ninput: %q", o.stdout, b)
			}
		case o.code == 1:
			if bad := unlocatedProblems(o.stderr, filepath.Base(fh.Name())); bad != "" {
				t.Fatalf("check-config names no YAML path nor line for %q\nstderr: %s\ninput: %q", bad, o.stderr, b)
			}
		default:
			t.Fatalf("check-config: exit %d\nstdout %q\nstderr %q\ninput: %q", o.code, o.stdout, o.stderr, b)
		}
	})
}

var (
	lineRefCheck = regexp.MustCompile(`\blines? \d+`)
	// pathLead is a YAML path led by a top-level key of the config.
	pathLead = regexp.MustCompile(`^(auth|webhook|store|dedup|incidents|classifier|policies|prometheus|flap|templates|route|receivers|console|alertmanager|time_intervals|mute_time_intervals)[.\[:]`)
	// unlocatedYAMLErrors are the YAML errors the YAML libraries give
	// without a line (the configfuzz report's finding).
	unlocatedYAMLErrors = regexp.MustCompile(`^yaml: [^\n]*$`)
)

// unlocatedProblems returns the first problem check-config printed in
// stderr that names neither its YAML path nor a line, "" when each does.
// Each problem is a line of stderr indented two spaces, after
// `config "<file>": ` and `parse YAML: `; deeper indentation continues it.
func unlocatedProblems(stderr, file string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) == 0 || lines[0] != "router check-config: FAILED" {
		return stderr
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") || strings.TrimSpace(l) == "" {
			continue
		}
		p := strings.TrimPrefix(l, "  ")
		if i := strings.Index(p, `": `); strings.HasPrefix(p, "config ") && i > 0 {
			p = p[i+3:]
		}
		p = strings.TrimPrefix(p, "parse YAML: ")
		if lineRefCheck.MatchString(p) || pathLead.MatchString(p) || strings.HasPrefix(p, "(top level):") ||
			p == "yaml: unmarshal errors:" || unlocatedYAMLErrors.MatchString(p) {
			continue
		}
		return p
	}
	return ""
}

// standInConfigs use every integration and section, with stand-in URLs
// nothing listens on and the secret files FuzzCheckConfig writes.
var standInConfigs = []string{
	`auth: {bearer_token_file: secrets/webhook-token}
templates: [templates/*.tmpl]
route:
  receiver: triage
  routes:
    - matchers: ['decision="page"']
      receiver: pd
      continue: true
      mute_time_intervals: [night]
receivers:
  - name: pd
    pagerduty_configs:
      - routing_key_file: secrets/pagerduty-routing-key
        url: http://127.0.0.1:1/v2/enqueue
        summary: '{{ template "fuzz.title" . }}'
        custom_details: {runbook: '{{ .CommonAnnotations.runbook_url }}'}
  - name: triage
    slack_configs:
      - token_file: secrets/slack-token
        channel: '#{{ .CommonLabels.team }}-alerts'
        api_url: http://127.0.0.1:1/api/
        actions: [ack, resolve, silence, escalate]
        escalate_to: pd
        signing_secret: fuzz-signing-secret
alertmanager: {url: http://127.0.0.1:1}
prometheus: {url: http://127.0.0.1:1, timeout: 300ms}
time_intervals:
  - name: night
    time_intervals: [{times: [{start_time: '00:00', end_time: '06:00'}], location: Europe/Paris}]
console:
  external_url: https://alertrouter.example.com
  enable_replay: true
  auth: {basic_auth: {username: ops, password_file: secrets/console-password}}
store:
  redis: {addrs: ['127.0.0.1:1'], password_file: secrets/redis-password, dial_timeout: 100ms}
`,
	`route: {receiver: hook}
receivers:
  - name: hook
    slack_configs:
      - api_url: http://127.0.0.1:1/services/T/B/x
        title: '{{ template "nope" . }}'
        text: '{{'
`,
	`route: {receiver: pd}
receivers:
  - name: pd
    pagerduty_configs:
      - routing_key: '{{ .CommonLabels.key }}'
        severity: '{{ if }}'
        http_config: {tls_config: {ca_file: secrets/redis-ca.crt}, proxy_url: 'http://u:p@[::1'}
`,
	`store:
  redis: {addrs: ['127.0.0.1:1', '127.0.0.1:2'], master_name: m, tls: {ca_file: secrets/redis-ca.crt}, db: 3, cluster: true}
route: {receiver: log}
receivers: [{name: log, log_configs: [{}]}]
`,
	`store: {redis: {addrs: ['127.0.0.1:1'], password_file: secrets/absent}}
auth: {basic_auth: {username: am, password_file: secrets/empty}}
console: {auth: {bearer_token_file: secrets}}
route: {receiver: log}
receivers: [{name: log, log_configs: [{}]}]
`,
}
