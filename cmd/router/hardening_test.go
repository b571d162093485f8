package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/webhook"
)

// leak is the secret of the leak table: YAML syntax at the start (an alias
// once pasted into the raw text), an anchor, a tag and a comment inside.
const leak = "*Hunt3r&Secret!Value#1"

// leaked reports whether s shows the secret or any recognizable part.
func leaked(s string) bool { return strings.Contains(s, "Hunt3r") || strings.Contains(s, "Secret!") }

// fragment is a piece of a config: top-level sections and receivers.
type fragment struct{ top, receivers string }

func compose(parts ...fragment) string {
	var top, recv strings.Builder
	for _, p := range parts {
		top.WriteString(p.top)
		recv.WriteString(p.receivers)
	}
	return top.String() + "route: {receiver: log}\nreceivers:\n  - name: log\n    log_configs: [{}]\n" + recv.String()
}

// secretKinds puts the secret in every kind of field that holds one.
var secretKinds = map[string]fragment{
	"auth.bearer_token":     {top: "auth:\n  bearer_token: ${ALERTROUTER_LEAK}\n"},
	"auth.basic_auth":       {top: "auth:\n  basic_auth:\n    username: u\n    password: ${ALERTROUTER_LEAK}\n"},
	"store.redis.password":  {top: "store:\n  redis:\n    addrs: ['127.0.0.1:1']\n    password: ${ALERTROUTER_LEAK}\n"},
	"pagerduty routing_key": {receivers: "  - name: pd\n    pagerduty_configs:\n      - routing_key: ${ALERTROUTER_LEAK}\n"},
	"pagerduty url":         {receivers: "  - name: pdurl\n    pagerduty_configs: [{routing_key: k, url: 'https://u:${ALERTROUTER_LEAK_URL}@events.example/v2/enqueue'}]\n"},
	"slack token":           {receivers: "  - name: sl\n    slack_configs:\n      - token: ${ALERTROUTER_LEAK}\n        channel: '#c'\n"},
	"literal in url":        {receivers: "  - name: pdlit\n    pagerduty_configs: [{routing_key: k, url: 'https://u:Hunt3rLiteral@events.example/v2/enqueue'}]\n"},
}

// breaks are the error paths; path is the YAML path the error must name
// exactly once ("" for none).
var breaks = map[string]struct {
	f    fragment
	path string
}{
	"ok":                 {},
	"unknown key":        {fragment{top: "bogus_key: 1\n"}, "bogus_key"},
	"secret in int":      {fragment{top: "webhook:\n  max_body_bytes: ${ALERTROUTER_LEAK}\n"}, "webhook.max_body_bytes: cannot unmarshal !!str"},
	"validation":         {fragment{receivers: "  - name: nokey\n    pagerduty_configs: [{}]\n"}, "receivers[1]"},
	"missing key file":   {fragment{receivers: "  - name: pdfile\n    pagerduty_configs: [{routing_key_file: nonexistent-key}]\n"}, "pagerduty_configs[0].routing_key_file"},
	"broken template":    {fragment{receivers: "  - name: pdtmpl\n    pagerduty_configs: [{routing_key: k, summary: '{{ .Broken '}]\n"}, "pagerduty_configs[0].summary"},
	"missing token file": {fragment{receivers: "  - name: slfile\n    slack_configs: [{token_file: nonexistent-token, channel: '#c'}]\n"}, "slack_configs[0].token_file"},
	"missing auth file":  {fragment{top: "webhook: {timeout: 5s}\n"}, ""},
}

// serveExit runs serve on the config at p and returns its exit code and
// log; a config serve accepts is served until the context ends.
func serveExit(t *testing.T, p string) (int, string) {
	t.Helper()
	var out, errb syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	code := (&Main{Stdout: &out, Stderr: &errb}).Run(ctx, []string{"--config.file=" + p, "--web.listen-address=" + freeAddr(t)})
	return code, errb.String()
}

// The secret leak table: a secret in every field kind × every error path →
// never in check-config's output (success or error), serve's log, or the
// answer to a reload; check-config fails exactly where serve does, and
// each error names its YAML path once.
func TestSecretsNeverPrintAndCheckConfigAgreesWithServe(t *testing.T) {
	t.Setenv("ALERTROUTER_LEAK", leak)
	t.Setenv("ALERTROUTER_LEAK_URL", "Hunt3rUrlSecret")
	for kind, kf := range secretKinds {
		for name, br := range breaks {
			cfg := compose(br.f, kf)
			if strings.Contains(kf.top, "webhook:") && strings.Contains(br.f.top, "webhook:") {
				continue
			}
			p := writeFile(t, "router.yml", cfg)
			code, out, errs := runMain(t, "--config.file="+p, "check-config")
			if leaked(out + errs) {
				t.Errorf("%s × %s: check-config printed the secret:\n%s%s", kind, name, out, errs)
			}
			wantFail := br.path != ""
			if (code != 0) != wantFail {
				t.Errorf("%s × %s: check-config exit %d (want failure: %v):\n%s", kind, name, code, wantFail, errs)
			}
			if wantFail && strings.Count(errs, br.path) != 1 {
				t.Errorf("%s × %s: check-config names %q %d times, want once:\n%s", kind, name, br.path, strings.Count(errs, br.path), errs)
			}
			if !wantFail || kind == "store.redis.password" && name == "ok" {
				continue
			}
			scode, log := serveExit(t, p)
			if scode == 0 {
				t.Errorf("%s × %s: check-config fails, serve accepted the config", kind, name)
			}
			if leaked(log) {
				t.Errorf("%s × %s: serve logged the secret:\n%s", kind, name, log)
			}
		}
	}
}

func TestReloadAnswerAndLogNeverPrintSecrets(t *testing.T) {
	t.Setenv("ALERTROUTER_LEAK", leak)
	t.Setenv("ALERTROUTER_LEAK_URL", "Hunt3rUrlSecret")
	p := writeFile(t, "router.yml", compose())
	base, errb, stop := startServe(t, p, "--web.enable-lifecycle")
	defer stop()
	for kind, kf := range secretKinds {
		for name, br := range breaks {
			if br.path == "" {
				continue
			}
			if err := os.WriteFile(p, []byte(compose(br.f, kf)), 0o600); err != nil {
				t.Fatal(err)
			}
			code, body := postReload(t, base)
			if code != 500 || !strings.Contains(body, br.path) {
				t.Errorf("%s × %s: reload answered %d %s; want 500 naming %s", kind, name, code, body, br.path)
			}
			if leaked(body) {
				t.Errorf("%s × %s: the reload answer prints the secret: %s", kind, name, body)
			}
		}
	}
	if leaked(errb.String()) {
		t.Errorf("the log prints the secret:\n%s", errb.String())
	}
}

// startServe runs serve with args on the config at p until stop.
func startServe(t *testing.T, p string, args ...string) (base string, log *syncBuffer, stop func()) {
	t.Helper()
	addr := freeAddr(t)
	var out syncBuffer
	log = &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- (&Main{Stdout: &out, Stderr: log}).Run(ctx, append([]string{"--config.file=" + p, "--web.listen-address=" + addr}, args...))
	}()
	base = "http://" + addr
	waitReady(t, base)
	return base, log, func() { cancel(); <-done }
}

func TestLifecycleEndpointsNeedTheFlag(t *testing.T) {
	p := writeFile(t, "router.yml", compose())
	base, _, stop := startServe(t, p)
	defer stop()
	for _, path := range []string{"/-/reload", "/-/quit"} {
		resp, err := http.Post(base+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "--web.enable-lifecycle") {
			t.Errorf("POST %s without --web.enable-lifecycle: %d %s; want 403 naming the flag", path, resp.StatusCode, body)
		}
	}
}

func TestQuitShutsDownGracefully(t *testing.T) {
	p := writeFile(t, "router.yml", compose())
	addr := freeAddr(t)
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- (&Main{Stdout: &out, Stderr: &errb}).Run(context.Background(), []string{"--config.file=" + p, "--web.listen-address=" + addr, "--web.enable-lifecycle"})
	}()
	base := "http://" + addr
	waitReady(t, base)
	resp, err := http.Post(base+"/-/quit", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(errb.String(), "shutting down") {
			t.Fatalf("serve after /-/quit: exit %d, log:\n%s", code, errb.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop after /-/quit")
	}
}

// routeConfig routes pages by sector and everything else to tickets.
const routeConfig = `
route:
  receiver: tickets
  routes:
    - matchers: ['decision="page"']
      receiver: pages
      routes:
        - matchers: ['sector=~"hft-.*"']
          receiver: hft-pages
receivers:
  - {name: tickets, log_configs: [{}]}
  - {name: pages, log_configs: [{}]}
  - {name: hft-pages, log_configs: [{}]}
`

// --test-route with an alert's labels reaches the receivers explain prints
// for it: both derive sector and decision the same way.
func TestTestRouteAgreesWithExplain(t *testing.T) {
	p := writeFile(t, "router.yml", routeConfig)
	files, _ := filepath.Glob("../../testdata/sectors/*.json")
	files = append(files, "../../testdata/webhook/firing.json", "../../testdata/webhook/mixed.json")
	compared := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := webhook.Decode(body, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := runMain(t, "--config.file="+p, "explain", f)
		if code != 0 {
			t.Fatalf("explain %s: %s", f, errs)
		}
		byFP := map[string]explanation{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e explanation
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			byFP[e.Fingerprint] = e
		}
		for _, a := range msg.Items {
			e, ok := byFP[a.Fingerprint]
			if !ok || !a.Firing() {
				continue
			}
			var kv []string
			for k, v := range a.Labels {
				if strings.ContainsAny(v, ",=\"") {
					kv = nil
					break
				}
				kv = append(kv, k+"="+v)
			}
			if kv == nil {
				continue
			}
			sort.Strings(kv)
			list := strings.Join(kv, ",")
			want := strings.Join(e.Receivers, ",")
			_, got, errs := runMain(t, "--config.file="+p, "check-config", "--test-route", list)
			if derived := strings.Fields(errs); !slices.Contains(derived, "sector="+e.Sector) || !slices.Contains(derived, "decision="+string(e.Decision.Action)) {
				// Classified or decided from annotations or the generator
				// URL, which labels do not carry: give the derived labels
				// explain printed, as an operator would.
				_, got, errs = runMain(t, "--config.file="+p, "check-config", "--test-route", list+",sector="+e.Sector+",decision="+string(e.Decision.Action))
			}
			if strings.TrimSpace(got) != want {
				t.Errorf("%s %s: --test-route → %q, explain → %q (decision %s, sector %s; %s)", f, a.Labels["alertname"], strings.TrimSpace(got), want, e.Decision.Action, e.Sector, errs)
			}
			compared++
		}
	}
	if compared < 5 {
		t.Fatalf("only %d alerts compared", compared)
	}
	// decision= overrides the derived decision.
	_, got, _ := runMain(t, "--config.file="+p, "check-config", "--test-route", "alertname=X,sector=hft-cdn,decision=page")
	if strings.TrimSpace(got) != "hft-pages" {
		t.Errorf("--test-route with decision=page → %q, want hft-pages", got)
	}
}
