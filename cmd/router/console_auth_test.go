package main

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
)

// request sends method path to base with headers h and returns the status,
// the body and the WWW-Authenticate header.
func request(t *testing.T, method, url string, h http.Header, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("WWW-Authenticate")
}

func basic(user, pass string) http.Header {
	return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}}
}

// The combination the audit found impossible, on the real binary and one
// listener: Alertmanager's bearer token reaches /webhook, Slack's signed
// requests reach /slack/*, and the console, Go's profiles and the
// lifecycle endpoints ask for console.auth's password (a Basic challenge
// browsers prompt for) — each route with its own guard.
func TestSlackBearerWebhookAndPasswordConsoleWorkTogether(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	dir := t.TempDir()
	for name, content := range map[string]string{"webhook-token": "am-bearer-token\n", "console-password": "c0nsole-pass\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "router.yml")
	cfg := "auth:\n  bearer_token_file: webhook-token\nconsole:\n  auth:\n    basic_auth: {username: ops, password_file: console-password}\n" + oncallTriageConfig(pd, sl)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	rp := startRouter(t, buildRouter(t), "--config.file="+p, "--web.enable-lifecycle")

	if code := postWebhook(t, rp.base, map[string]string{"Authorization": "Bearer am-bearer-token"}); code != http.StatusOK {
		t.Errorf("webhook with Alertmanager's bearer token: %d, want 200", code)
	}
	if code := postWebhook(t, rp.base, map[string]string{"Authorization": basic("ops", "c0nsole-pass").Get("Authorization")}); code != http.StatusUnauthorized {
		t.Errorf("webhook with console.auth's credentials: %d, want 401", code)
	}

	// A slash command Slack signed: answered 200 with no Authorization,
	// its usage reaching the response_url; a bad signature is Slack's
	// check's 401, not an authentication wall's.
	body := sl.Command(slacktest.SlashCommand{Command: "/alertrouter", Text: "help", User: "U1", UserName: "jdoe", Channel: sl.ChannelID("triage"), TriggerID: "trig-1"})
	if code, b, _ := request(t, http.MethodPost, rp.base+"/slack/commands", slacktest.Sign(triageSecret, time.Now(), body), string(body)); code != http.StatusOK {
		t.Errorf("signed Slack command: %d %s, want 200", code, b)
	}
	for deadline := time.Now().Add(10 * time.Second); len(sl.Responses()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the signed command's answer never reached the response_url:\n%s", rp.stderr.String())
		}
	}
	if r := sl.Responses()[0]; !strings.Contains(r.Text, "Usage") {
		t.Errorf("command answer %q, want the usage", r.Text)
	}
	if code, _, _ := request(t, http.MethodPost, rp.base+"/slack/commands", slacktest.Sign("wrong-secret", time.Now(), body), string(body)); code != http.StatusUnauthorized {
		t.Errorf("badly signed Slack command: %d, want 401", code)
	}

	// The console and what shares its guard.
	ops := basic("ops", "c0nsole-pass")
	for _, g := range []struct{ method, path string }{
		{http.MethodGet, "/"},
		{http.MethodGet, "/journal.jsonl"},
		{http.MethodGet, "/dead-letters"},
		{http.MethodPost, "/dead-letters/1700000000000-0/replay"},
		{http.MethodGet, "/debug/pprof/cmdline"},
		{http.MethodGet, "/debug/pprof/goroutine?debug=2"},
		{http.MethodPost, "/-/reload"},
		{http.MethodPost, "/-/quit"},
	} {
		for name, h := range map[string]http.Header{"none": nil, "a wrong password": basic("ops", "wrong"), "the webhook's bearer token": {"Authorization": {"Bearer am-bearer-token"}}} {
			if code, b, challenge := request(t, g.method, rp.base+g.path, h, ""); code != http.StatusUnauthorized || challenge != `Basic realm="alertrouter"` || strings.Contains(b, "router") && strings.Contains(b, "--config.file") {
				t.Errorf("%s %s with %s credentials: %d (WWW-Authenticate %q) %.100q; want 401 with a Basic challenge", g.method, g.path, name, code, challenge, b)
			}
		}
	}
	if code, b, _ := request(t, http.MethodGet, rp.base+"/", ops, ""); code != http.StatusOK || !strings.Contains(b, "<html") {
		t.Errorf("GET / with console.auth's credentials: %d %.100q; want the console", code, b)
	}
	if code, b, _ := request(t, http.MethodGet, rp.base+"/debug/pprof/cmdline", ops, ""); code != http.StatusOK || !strings.Contains(b, "--config.file") {
		t.Errorf("GET /debug/pprof/cmdline with console.auth's credentials: %d %.100q", code, b)
	}
	if code, b, _ := request(t, http.MethodPost, rp.base+"/-/reload", ops, ""); code != http.StatusOK {
		t.Errorf("POST /-/reload with console.auth's credentials: %d %s", code, b)
	}
	for _, path := range []string{"/metrics", "/-/healthy", "/-/ready"} {
		if code, _, _ := request(t, http.MethodGet, rp.base+path, nil, ""); code != http.StatusOK {
			t.Errorf("GET %s without credentials: %d, want 200", path, code)
		}
	}
	// DNS rebinding: the page of a name pointed at the router is
	// same-origin with it, and has the password cached for nothing (it is
	// another origin to the browser) — but even with it, its Host is
	// refused for what changes state.
	rebound := http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"same-origin"}, "Authorization": ops["Authorization"]}
	req, _ := http.NewRequest(http.MethodPost, rp.base+"/-/reload", nil)
	req.Host = "evil.example"
	for k, v := range rebound {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "DNS rebinding") {
		t.Errorf("reload for Host evil.example: %d %s; want 403 naming DNS rebinding", resp.StatusCode, b)
	}
}

// webConfig writes an exporter-toolkit web configuration with the basic
// auth user am (password am-pass) and returns its path.
func webConfig(t *testing.T) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("am-pass"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "web.yml", "basic_auth_users:\n  am: "+string(hash)+"\n")
}

// serveExitWith runs serve with args and returns its exit code and log; a
// router that starts is stopped after 3s (code 0).
func serveExitWith(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	code := (&Main{Stdout: &out, Stderr: &errb}).Run(ctx, append([]string{"--web.listen-address=" + freeAddr(t)}, args...))
	return code, errb.String()
}

// What cannot serve is refused by serve at start (exit 1, never a router
// that answers 401 to every Slack click or webhook) and by check-config
// given the same --web.config.file, each naming the conflict and the fix;
// the combinations that work pass both.
func TestCombinationsThatCannotServeAreRefused(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	sl := slacktest.NewServer("xoxb-router", "triage")
	defer sl.Close()
	web := webConfig(t)
	const minimal = "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"
	consoleAuth := "console:\n  auth: {basic_auth: {username: ops, password: c0nsole-pass}}\n"
	for _, tc := range []struct {
		name, config string
		web          bool
		want         []string // "" when the combination works
	}{
		{"web basic auth + Slack triage", oncallTriageConfig(pd, sl), true,
			[]string{"receivers[0].slack_configs[0].actions: Slack triage cannot work with basic_auth_users", "401", "console.auth"}},
		{"web basic auth + Slack triage + console.auth", consoleAuth + oncallTriageConfig(pd, sl), true,
			[]string{"Slack triage cannot work with basic_auth_users"}},
		{"web basic auth + auth bearer", "auth: {bearer_token: am-bearer-token}\n" + minimal, true,
			[]string{"auth.bearer_token: cannot work with basic_auth_users", "console.auth", "http_config the basic_auth of a basic_auth_users user"}},
		{"web basic auth + another auth.basic_auth user", "auth: {basic_auth: {username: alertmanager, password: am-pass}}\n" + minimal, true,
			[]string{`auth.basic_auth.username: "alertmanager" is not one of the basic_auth_users of --web.config.file (am)`}},
		{"replay with nothing protecting the console", "console: {enable_replay: true}\n" + minimal, false,
			[]string{"console.enable_replay: the console is unprotected", "console.auth"}},
		// What works.
		{"web basic auth, Alertmanager as one of its users", "auth: {basic_auth: {username: am, password: am-pass}}\n" + minimal, true, nil},
		{"web basic auth protects replay", "console: {enable_replay: true}\n" + minimal, true, nil},
		{"console.auth protects replay", "console: {enable_replay: true, auth: {basic_auth: {username: ops, password: c0nsole-pass}}}\n" + minimal, false, nil},
		{"console.auth + bearer + Slack triage", "auth: {bearer_token: am-bearer-token}\n" + consoleAuth + oncallTriageConfig(pd, sl), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "router.yml", tc.config)
			args := []string{"--config.file=" + p}
			if tc.web {
				args = append(args, "--web.config.file="+web)
			}
			code, out, errs := runMain(t, append(args, "check-config")...)
			scode, log := serveExitWith(t, args...)
			if tc.want == nil {
				if code != 0 || scode != 0 {
					t.Fatalf("check-config exit %d (%s), serve exit %d (%s); want both to accept it", code, errs, scode, log)
				}
				return
			}
			if code != 1 || scode != 1 {
				t.Fatalf("check-config exit %d, serve exit %d; want 1 from both\ncheck-config: %s%s\nserve: %s", code, scode, out, errs, log)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("check-config does not say %q:\n%s", w, errs)
				}
				if !strings.Contains(strings.ReplaceAll(log, `\"`, `"`), w) {
					t.Errorf("serve's log does not say %q:\n%s", w, log)
				}
			}
			if !strings.Contains(log, "refusing to start") {
				t.Errorf("serve's log does not say it refuses to start:\n%s", log)
			}
		})
	}
}

// A reload to a config that cannot serve is refused like a start, and the
// previous config keeps serving.
func TestReloadRefusesAReplayingConsoleNothingProtects(t *testing.T) {
	const minimal = "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"
	p := writeFile(t, "router.yml", minimal)
	base, _, _ := serveWithStdout(t, p, "--web.enable-lifecycle")
	if err := os.WriteFile(p, []byte("console: {enable_replay: true}\n"+minimal), 0o600); err != nil {
		t.Fatal(err)
	}
	code, body, _ := request(t, http.MethodPost, base+"/-/reload", nil, "")
	if code != http.StatusInternalServerError || !strings.Contains(body, "console.enable_replay: the console is unprotected") {
		t.Fatalf("reload to an unprotected replaying console: %d %s; want 500 naming console.enable_replay", code, body)
	}
	if code, body, _ := request(t, http.MethodPost, base+"/dead-letters/1700000000000-0/replay", nil, ""); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("replay after the refused reload: %d %.200s; want the read-only console's 403", code, body)
	}
}

// URL credentials never print: every URL field whose error shows its value
// (alertmanager.url, prometheus.url, http_config.proxy_url in each block
// that has one, console.external_url), in check-config's output, serve's
// log and the answer of POST /-/reload.
func TestURLCredentialsNeverPrint(t *testing.T) {
	const pass = "URLPASS7"
	const minimal = "route: {receiver: log}\nreceivers:\n  - name: log\n    log_configs: [{}]\n"
	cases := []struct{ name, config, want string }{
		{"alertmanager.url scheme", "alertmanager: {url: 'ftp://am:" + pass + "@am:9093'}\n" + minimal, "alertmanager.url"},
		{"alertmanager.url unparsable", "alertmanager: {url: 'http://am:" + pass + "@am:9093/%zz'}\n" + minimal, "alertmanager.url"},
		{"prometheus.url scheme", "prometheus: {url: 'ftp://p:" + pass + "@prom:9090'}\n" + minimal, "prometheus.url"},
		{"prometheus.url unparsable", "prometheus: {url: 'http://p:" + pass + "@prom:9090/%zz'}\n" + minimal, "prometheus.url"},
		{"prometheus.url query", "prometheus: {url: 'http://p:" + pass + "@prom:9090/?x=1'}\n" + minimal, "prometheus.url"},
		{"alertmanager proxy_url", "alertmanager: {url: 'http://am:9093', http_config: {proxy_url: 'http://u:" + pass + "@proxy:3128/%zz'}}\n" + minimal, "invalid URL escape"},
		{"prometheus proxy_url", "prometheus: {url: 'http://prom:9090', http_config: {proxy_url: 'http://u:" + pass + "@proxy:3128/%zz'}}\n" + minimal, "invalid URL escape"},
		{"pagerduty proxy_url", minimal + "  - name: pd\n    pagerduty_configs: [{routing_key: k, http_config: {proxy_url: 'http://u:" + pass + "@proxy:3128/%zz'}}]\n", "invalid URL escape"},
		{"slack proxy_url", minimal + "  - name: sl\n    slack_configs: [{token: t0ken, channel: '#c', http_config: {proxy_url: 'http://u:" + pass + "@proxy:3128/%zz'}}]\n", "invalid URL escape"},
		{"console.external_url", "console: {external_url: 'ftp://u:" + pass + "@console.example'}\n" + minimal, "console.external_url"},
	}
	for _, tc := range cases {
		p := writeFile(t, "router.yml", tc.config)
		code, out, errs := runMain(t, "--config.file="+p, "check-config")
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: check-config exit %d, %s; want 1 naming %s", tc.name, code, errs, tc.want)
		}
		if strings.Contains(out+errs, pass) {
			t.Errorf("%s: check-config printed the password:\n%s%s", tc.name, out, errs)
		}
	}
	p := writeFile(t, "router.yml", minimal)
	base, _, log := serveWithStdout(t, p, "--web.enable-lifecycle")
	for _, tc := range cases {
		if err := os.WriteFile(p, []byte(tc.config), 0o600); err != nil {
			t.Fatal(err)
		}
		code, body, _ := request(t, http.MethodPost, base+"/-/reload", nil, "")
		if code != http.StatusInternalServerError || !strings.Contains(body, tc.want) {
			t.Errorf("%s: reload answered %d %s; want 500 naming %s", tc.name, code, body, tc.want)
		}
		if strings.Contains(body, pass) {
			t.Errorf("%s: the reload answer prints the password: %s", tc.name, body)
		}
	}
	if strings.Contains(log.String(), pass) {
		t.Errorf("the log prints the password:\n%s", log.String())
	}
}
