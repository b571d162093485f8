package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBadConfigsFailWithTheirYAMLPath(t *testing.T) {
	cases := map[string]string{
		"unknown-key.bad.yml":        "recievers: unknown field (line 3; did you mean receivers?)",
		"undefined-receiver.bad.yml": `route.routes[0].receiver: undefined receiver "pagerduty"`,
		"bad-matcher.bad.yml":        "route.routes[0].matchers[0]:",
		"duplicate-receiver.bad.yml": `receivers[1].name: duplicate receiver name "log"`,
		"no-route.bad.yml":           "route: required",
		"dedup-ttl.bad.yml":          "dedup.notified_ttl: 1h must be longer than repeat_interval (4h)",
		"undefined-env.bad.yml":      "auth.bearer_token: undefined environment variable(s) referenced as ${…}: ALERTROUTER_TEST_UNDEFINED_VARIABLE (line 2)",
		"basic-auth.bad.yml":         "auth.basic_auth: exactly one of password and password_file must be set",
		"flap.bad.yml":               "flap.threshold: must be at least 1, got 0",
		"prometheus.bad.yml":         "prometheus.url: required (or set prometheus.from_generator_url)",
		"update-window.bad.yml":      "incidents.update_window: 10s must be at least 0 and shorter than webhook.timeout (10s)",
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", file))
			if err == nil {
				t.Fatalf("Load(%s) succeeded, want error containing %q", file, want)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("Load(%s) error = %q, want it to contain %q", file, err, want)
			}
		})
	}
}

func TestGoodConfigLoadsWithDefaultsAndExpandsEnv(t *testing.T) {
	t.Setenv("ALERTROUTER_TEST_TOKEN", "s3cr3t-token-value")
	c, err := Load("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Auth.BearerToken) != "s3cr3t-token-value" {
		t.Errorf("bearer token = %q, want the expanded env value", c.Auth.BearerToken)
	}
	if time.Duration(c.Webhook.Timeout) != 10*time.Second || c.Webhook.MaxBodyBytes != 64<<20 {
		t.Errorf("webhook = %+v, want timeout 10s and the default body limit", c.Webhook)
	}
	if time.Duration(c.Dedup.ClaimTTL) != 30*time.Second || time.Duration(c.Dedup.RepeatInterval) != 4*time.Hour {
		t.Errorf("dedup = %+v, want claim_ttl 30s and the default repeat interval", c.Dedup)
	}
	got := c.Route.Match(func(n string) string {
		return map[string]string{"decision": "page", "sector": "hft-cdn"}[n]
	})
	if strings.Join(got, ",") != "hft" {
		t.Errorf("route for an HFT page = %v, want [hft]", got)
	}
	if c.Store.Redis != nil {
		t.Errorf("store.redis = %+v, want nil (embedded store) by default", c.Store.Redis)
	}
	if c.Prometheus == nil || c.Prometheus.URL != "http://prometheus:9090" || time.Duration(c.Prometheus.Timeout) != 200*time.Millisecond ||
		time.Duration(c.Prometheus.CacheTTL) != 15*time.Second {
		t.Errorf("prometheus = %+v, want the url, timeout 200ms and the default cache_ttl", c.Prometheus)
	}
	if c.Flap.Threshold != 3 || time.Duration(c.Flap.Window) != time.Hour || time.Duration(c.Flap.CoolDown) != 10*time.Minute {
		t.Errorf("flap = %+v, want threshold 3 and the default window and cool_down", c.Flap)
	}
	if time.Duration(c.Incidents.UpdateWindow) != 5*time.Millisecond {
		t.Errorf("incidents.update_window = %s, want the default 5ms", c.Incidents.UpdateWindow)
	}
	if d := LoadDefault(); d.Prometheus != nil || d.Flap.Threshold != 4 {
		t.Errorf("defaults: prometheus %+v, flap %+v; want no prometheus and flap damping on with threshold 4", d.Prometheus, d.Flap)
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	t.Setenv("ALERTROUTER_TEST_TOKEN", "s3cr3t-token-value")
	c, err := Load("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); strings.Contains(s, "s3cr3t-token-value") || !strings.Contains(s, "<secret>") {
		t.Fatalf("config rendering leaks the secret or hides nothing:\n%s", s)
	}
}

// A secret written with a YAML tag it cannot take (routing_key: !!int …)
// failed to decode, and yaml's error quoted it: the reload's answer, the
// log and check-config printed it (an audit). The error names the key and
// the line, not the value; the other keys' values are still quoted.
func TestAnUndecodableSecretIsNotPrinted(t *testing.T) {
	_, err := Parse([]byte(`route: {receiver: pd}
receivers:
  - name: pd
    pagerduty_configs:
      - routing_key: !!int SECRETTAGVAL1
        timeout: !!int 10x
`), "")
	if err == nil {
		t.Fatal("parsed")
	}
	msg := err.Error()
	if strings.Contains(msg, "SECRETTAGVAL1") || !strings.Contains(msg, "routing_key") || !strings.Contains(msg, "<secret>") || !strings.Contains(msg, "10x") {
		t.Fatalf("error %q: want routing_key named, its value hidden, timeout's value shown", msg)
	}
}

func TestEmbeddedDefaultsAreValid(t *testing.T) {
	c := LoadDefault()
	if c.Route.Receiver != "log" || len(c.Receivers) != 1 || len(c.Receivers[0].LogConfigs) != 1 {
		t.Fatalf("embedded defaults = route %q, receivers %+v; want one log receiver", c.Route.Receiver, c.Receivers)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "router.yml")
	if err := os.WriteFile(p, DefaultYAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil {
		t.Fatalf("the embedded defaults written to a file do not load: %v", err)
	}
}

func TestDollarDollarIsALiteralDollar(t *testing.T) {
	out, _, _, err := expandEnv([]byte("a: $$HOME"))
	if err != nil || string(out) != "a: \"$HOME\"\n" {
		t.Fatalf("expandEnv = %q, %v; want a literal $HOME", out, err)
	}
}

// The README's configuration example is what users copy: it must load.
func TestReadmeConfigurationExampleLoads(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Configuration")
	if i < 0 {
		t.Fatal("README has no Configuration section")
	}
	s = s[i:]
	start := strings.Index(s, "```yaml\n")
	end := strings.Index(s[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("README Configuration section has no yaml block")
	}
	c, err := Parse([]byte(s[start+8:start+8+end]), "/etc/alertrouter")
	if err != nil {
		t.Fatalf("README configuration example does not load: %v", err)
	}
	if c.Store.Redis == nil || len(c.Receivers) != 3 || len(c.Route.Routes) != 2 {
		t.Fatalf("README example parsed to store %+v, %d receivers, %d routes", c.Store.Redis, len(c.Receivers), len(c.Route.Routes))
	}
}

// ${ENV} values are data, whatever they hold: YAML syntax characters in a
// secret neither change the document nor empty the value.
func TestEnvValuesAreExpandedAsDataNotYAML(t *testing.T) {
	t.Setenv("ALERTROUTER_TEST_RETRIES", "3")
	for _, v := range []string{"*alias-like", "&anchor-like", "!tag-like", "# comment-like", "a: b", "'quoted\"", "multi\nline", "{x: 1}", "[1, 2]", "|", "-dash"} {
		t.Setenv("ALERTROUTER_TEST_SECRET", v)
		c, err := Parse([]byte("auth:\n  bearer_token: ${ALERTROUTER_TEST_SECRET}\nstore:\n  redis:\n    addrs: [localhost:6379]\n    max_retries: ${ALERTROUTER_TEST_RETRIES}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), ".")
		if err != nil {
			t.Fatalf("secret %q: %v", v, err)
		}
		if string(c.Auth.BearerToken) != v {
			t.Errorf("secret %q loaded as %q", v, c.Auth.BearerToken)
		}
		if c.Store.Redis.MaxRetries != 3 {
			t.Errorf("a plain ${ENV} integer did not load as one: max_retries = %d", c.Store.Redis.MaxRetries)
		}
	}
}

// A secret in a wrongly typed node or an invalid value is never printed,
// not even its first characters.
func TestEnvValuesNeverPrintInErrors(t *testing.T) {
	const secret = "hunter2-SECRET-value"
	t.Setenv("ALERTROUTER_TEST_SECRET", secret)
	for name, doc := range map[string]string{
		"type error":       "webhook:\n  max_body_bytes: ${ALERTROUTER_TEST_SECRET}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"duration error":   "webhook:\n  timeout: ${ALERTROUTER_TEST_SECRET}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"validation error": "store:\n  redis:\n    addrs: ['${ALERTROUTER_TEST_SECRET}']\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"url error":        "route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key: x, url: 'https://u:${ALERTROUTER_TEST_SECRET}@example.com/nope'}]}]\n",
		"url literal":      "route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key: x, url: 'https://u:" + secret + "@example.com/nope'}]}]\n",
		"addr literal":     "store:\n  redis:\n    addrs: ['redis://:" + secret + "@host:6379']\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n",
	} {
		_, err := Parse([]byte(doc), ".")
		if err == nil {
			t.Errorf("%s: loaded", name)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:7]) {
			t.Errorf("%s: the error prints the secret: %v", name, err)
		}
	}
}

// An update window set to 0 turns coalescing by window off; with group_by
// set alone it keeps its default.
func TestUpdateWindowZeroIsOffAndAbsentIsTheDefault(t *testing.T) {
	for _, tt := range []struct {
		incidents string
		want      time.Duration
	}{
		{"{update_window: 0s}", 0},
		{"{update_window: 250ms}", 250 * time.Millisecond},
		{"{group_by: [sector, service]}", 5 * time.Millisecond},
	} {
		c, err := Parse([]byte("incidents: "+tt.incidents+"\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), ".")
		if err != nil {
			t.Fatalf("incidents %s: %v", tt.incidents, err)
		}
		if got := time.Duration(c.Incidents.UpdateWindow); got != tt.want {
			t.Errorf("incidents %s: update_window %s, want %s", tt.incidents, got, tt.want)
		}
	}
}

// incidents.retrigger_interval defaults to Alertmanager's group_interval,
// and 0 turns it off.
func TestRetriggerInterval(t *testing.T) {
	for _, tt := range []struct {
		incidents string
		want      time.Duration
	}{
		{"{retrigger_interval: 0s}", 0},
		{"{retrigger_interval: 1m}", time.Minute},
		{"{group_by: [sector, service]}", 5 * time.Minute},
	} {
		c, err := Parse([]byte("incidents: "+tt.incidents+"\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), ".")
		if err != nil {
			t.Fatalf("incidents %s: %v", tt.incidents, err)
		}
		if got := time.Duration(c.Incidents.RetriggerInterval); got != tt.want {
			t.Errorf("incidents %s: retrigger_interval %s, want %s", tt.incidents, got, tt.want)
		}
	}
}

// What the YAML decode itself refuses (an unknown key deep in the tree, a
// duration without a unit, an unknown time zone, a word where a number
// belongs) is named by its YAML path and line, as the checks after the
// decode name theirs — not by yaml.v2's Go type names, nor with no
// position at all; in a file with ${ENV} references too (the lines are
// those of the text as written).
func TestDecodeErrorsNameTheYAMLPathAndLine(t *testing.T) {
	t.Setenv("ALERTROUTER_TEST_TOKEN", "tok")
	const tail = "route:\n  receiver: log\nreceivers:\n  - name: log\n    log_configs: [{}]\n"
	cases := []struct{ name, yml, want, not string }{
		{"unknown key in a route", "route:\n  receiver: log\n  recevier: x\nreceivers:\n  - name: log\n    log_configs: [{}]\n",
			"route.recevier: unknown field (line 3; did you mean receiver?)", "routing.Route"},
		{"unknown key in a receiver's integration", tail + "  - name: pd\n    pagerduty_configs:\n      - routing_key: k\n        severty: x\n",
			"receivers[1].pagerduty_configs[0].severty: unknown field (line 9; did you mean severity?)", "pagerduty.Config"},
		{"a duration without a unit", "dedup:\n  claim_ttl: 5\n" + tail,
			`dedup.claim_ttl: not a valid duration string: "5" (line 2)`, ""},
		{"an unknown time zone", "time_intervals:\n  - name: night\n    time_intervals:\n      - location: Mars/Olympus\n" + tail,
			"time_intervals[0].time_intervals[0].location: unknown time zone Mars/Olympus (line 4)", ""},
		{"a word where a number belongs", "webhook:\n  max_concurrent: many\n" + tail,
			"webhook.max_concurrent: cannot unmarshal !!str `many` into int (line 2)", ""},
		{"after an expanded reference", "auth:\n  bearer_token: ${ALERTROUTER_TEST_TOKEN}\nwebhook:\n  timeout: 10\n" + tail,
			`webhook.timeout: not a valid duration string: "10" (line 4)`, "tok"},
		{"a section's own path", "policies:\n  capacity: {warning: 0.9}\n" + tail,
			"policies.capacity.warning: unknown field (line 2", ""},
		{"every problem", "dedup:\n  claim_ttl: 5\nflap:\n  treshold: 2\n" + tail,
			"dedup.claim_ttl: not a valid duration string: \"5\" (line 2)\nflap.treshold: unknown field (line 4; did you mean threshold?)", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yml), ".")
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || (tc.not != "" && strings.Contains(err.Error(), tc.not)) {
				t.Errorf("error = %q\nwant it to contain %q (and not %q)", err, tc.want, tc.not)
			}
		})
	}
}

// Locating a decode error never loops nor expands aliases without bound:
// a self-referencing anchor and the "billion laughs" keep yaml.v2's error.
func TestLocatingSurvivesHostileAliases(t *testing.T) {
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	for _, in := range []string{
		"a: &x [*x]\n",
		"route: &r {receiver: log, routes: [*r]}\nreceivers: [{name: log, log_configs: [{}]}]\n",
		laughs,
		"x: &m {receiver: log, bogus: 1}\nroute: *m\nreceivers: [{name: log, log_configs: [{}]}]\n",
	} {
		if _, err := Parse([]byte(in), "."); err == nil {
			t.Errorf("Parse(%.40q) succeeded", in)
		}
	}
	// An alias of a shared anchor is located through.
	_, err := Parse([]byte("x: &m {receiver: log, bogus: 1}\n"+"route: *m\nreceivers: [{name: log, log_configs: [{}]}]\n"), ".")
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("error = %v, want the unknown key named", err)
	}
}

// Alertmanager still reads its deprecated top-level mute_time_intervals as
// time_intervals; a router.yml written by hand that kept it was refused as
// an unknown field (an audit). It is read as time_intervals, the names of
// both shared.
func TestTopLevelMuteTimeIntervalsAreTimeIntervals(t *testing.T) {
	const route = "route:\n  receiver: log\n  routes:\n    - receiver: log\n      mute_time_intervals: [night]\nreceivers:\n  - name: log\n    log_configs: [{}]\n"
	night := "  - name: night\n    time_intervals:\n      - times: [{start_time: '00:00', end_time: '06:00'}]\n"
	if _, err := Parse([]byte("mute_time_intervals:\n"+night+route), "."); err != nil {
		t.Fatalf("a top-level mute_time_intervals: %v", err)
	}
	if _, err := Parse([]byte(route), "."); err == nil || !strings.Contains(err.Error(), "night") {
		t.Fatalf("a route naming no interval defined: %v, want refused", err)
	}
	_, err := Parse([]byte("time_intervals:\n"+night+"mute_time_intervals:\n"+night+route), ".")
	if err == nil || !strings.Contains(err.Error(), `mute_time_intervals[0].name: missing or duplicate name "night"`) {
		t.Fatalf("a name in both lists: %v, want refused as a duplicate", err)
	}
}
