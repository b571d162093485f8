package config

import (
	"fmt"
	"reflect"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/config/configtest"
	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/policies"
)

// fuzzInputTime bounds one input while fuzzing (configtest.Bound).
const fuzzInputTime = 5 * time.Second

// Any bytes given as router.yml are accepted or refused without a panic
// and within fuzzInputTime; a refusal names where (a YAML path, or the
// line of what the YAML decode refuses: README.md, "Configuration"), and
// a config Parse accepts validates again and builds its classifier,
// policies and routes without a panic. Seeds: the embedded defaults,
// config/testdata, the Kubernetes and Helm examples, the README's yaml
// blocks, and hostile shapes (aliases, nesting, tags, odd bytes).
func FuzzParseConfig(f *testing.F) {
	for _, s := range configSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		type outcome struct {
			c        *Config
			err      error
			problems []string
		}
		done := make(chan outcome, 1)
		go func() {
			var o outcome
			defer func() {
				if p := recover(); p != nil {
					o.problems = append(o.problems, fmt.Sprintf("panic: %v\n%s", p, debug.Stack()))
				}
				done <- o
			}()
			o.c, o.err = Parse(b, "/etc/alertrouter")
			if o.err == nil {
				o.problems = exerciseAccepted(o.c)
			}
		}()
		select {
		case o := <-done:
			for _, p := range o.problems {
				t.Errorf("%s\ninput: %q", p, b)
			}
			if o.err != nil && !errorSaysWhere(o.err, b) {
				t.Errorf("error names no YAML path nor line: %q\ninput: %q", o.err, b)
			}
			if o.err == nil && o.c == nil {
				t.Errorf("Parse returned neither a config nor an error\ninput: %q", b)
			}
		case <-time.After(configtest.Bound(fuzzInputTime)):
			t.Fatalf("Parse took more than %s\ninput (%d bytes): %.2000q", configtest.Bound(fuzzInputTime), len(b), b)
		}
	})
}

// exerciseAccepted runs what serve and check-config do with an accepted
// config that needs no file nor connection, and returns what went wrong.
func exerciseAccepted(c *Config) []string {
	var problems []string
	_ = c.String()
	_ = c.SecretFiles()
	_ = c.ShortClaimTTL()
	_ = c.LongSendTimeouts()
	_ = c.SlackTriage()
	_ = c.CheckWebConfig(nil)
	_ = c.Console.ExternalHost()
	if _, err := enrich.New(c.Classifier); err != nil {
		problems = append(problems, fmt.Sprintf("accepted, but its classifier does not build: %v", err))
	}
	if _, err := policies.New(c.Policies); err != nil {
		problems = append(problems, fmt.Sprintf("accepted, but its policies do not build: %v", err))
	}
	if c.Route == nil {
		return append(problems, "accepted without a route")
	}
	for _, labels := range []map[string]string{
		{"decision": "page", "sector": "hft-cdn", "alertname": "x"},
		{"decision": "ticket"},
		{},
	} {
		_ = c.Route.Match(func(n string) string { return labels[n] })
	}
	return problems
}

var (
	// lineRef is how an error gives the line: yaml.v2's "line 3:",
	// locate's "(line 3)", "(lines 4, 6)".
	lineRef = regexp.MustCompile(`\blines? \d+`)
	// topKeys are the top-level keys a YAML path starts with.
	topKeys = yamlFields(reflect.TypeOf(Config{}))
)

// errorSaysWhere reports whether every problem of err, Parse's error on
// b, names its YAML path (led by a top-level key:
// `route.routes[0].matchers[0]: …`, as TestBadConfigsFailWithTheirYAMLPath
// reads them) or its line (what the YAML decode refuses, as
// TestDecodeErrorsNameTheYAMLPathAndLine reads them). A problem's message
// may run over several lines: each line that starts unindented is a
// problem. yaml.v2's own error, kept when locating cannot tell (an alias
// bomb), gives each problem's line on a line of its own.
func errorSaysWhere(err error, b []byte) bool {
	msg := strings.TrimPrefix(err.Error(), "parse YAML: ")
	if rest, ok := strings.CutPrefix(msg, "yaml: unmarshal errors:\n"); ok {
		// Each problem's line starts "  line N: "; a value quoted in
		// it may hold a newline.
		return strings.HasPrefix(rest, "  line ") && lineRef.MatchString(rest)
	}
	if lineRef.MatchString(msg) && !strings.Contains(msg, "\n") {
		return true
	}
	if unlocatedSyntaxError(msg, b) {
		return true
	}
	for _, l := range strings.Split(msg, "\n") {
		if l == "" || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue // a continuation of the problem above
		}
		if lineRef.MatchString(l) || strings.HasPrefix(l, "(top level):") {
			continue
		}
		i := strings.IndexAny(l, ".[:")
		if i <= 0 {
			return false
		}
		if _, ok := topKeys[l[:i]]; !ok {
			return false
		}
	}
	return true
}

// unlocatedSyntaxError reports whether msg is one of the YAML syntax
// errors the YAML libraries give without a line (README.md promises one):
// a syntax error on the first line (yaml.v2 and v3 print no "line 1"),
// a reader error (control characters, invalid UTF-8 or UTF-16), an unknown anchor,
// an anchor containing itself, a tree nested too deep. A known gap (the configfuzz report), let
// through so that the fuzzer looks for others.
func unlocatedSyntaxError(msg string, b []byte) bool {
	if lineRef.MatchString(msg) || strings.Contains(msg, "\n") {
		return false
	}
	what, ok := strings.CutPrefix(msg, "yaml: ")
	if !ok {
		return false
	}
	if unlocatedYAML.MatchString(what) {
		return true
	}
	// On the first line: one line lower, it names line 2 (a scanner
	// error) or 1 (a parser error: the YAML libraries count its lines
	// from 0, printing none for 0).
	var v interface{}
	bom, rest := "", string(b)
	if r, ok := strings.CutPrefix(rest, "\ufeff"); ok {
		bom, rest = "\ufeff", r
	}
	err := yaml.Unmarshal([]byte(bom+"\n"+rest), &v)
	return err != nil && (err.Error() == "yaml: line 2: "+what || err.Error() == "yaml: line 1: "+what)
}

var unlocatedYAML = regexp.MustCompile(`^(control characters are not allowed|.*UTF-(8|16).*|invalid Unicode character|.*surrogate.*|exceeded max depth of \d+|unknown anchor '.*' referenced|anchor '.*' value contains itself)$`)

// configSeeds returns the router configurations the repository ships and
// documents (configtest.Seeds), and hostile shapes.
func configSeeds(f *testing.F) []string {
	seeds, err := configtest.Seeds("..")
	if err != nil {
		f.Fatal(err)
	}
	return append(seeds, hostileConfigs()...)
}

// hostileConfigs are shapes a fuzzer finds slowly: alias bombs, deep
// nesting, huge numbers, tags, odd bytes, bad templates and regexps.
func hostileConfigs() []string {
	const tail = "route:\n  receiver: log\nreceivers:\n  - name: log\n    log_configs: [{}]\n"
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		laughs += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	// The same bomb under a key the config reads (a list of strings).
	laughsIn := "x: &x [a, a, a, a, a, a, a, a, a, a]\n"
	prev = "x"
	for i := 0; i < 7; i++ {
		n := fmt.Sprintf("x%d", i)
		laughsIn += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	nested := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	// Locating its unknown key re-decoded each level's subtree: 25 s
	// for these 12 KB (TestLocatingADeepTreeIsBounded).
	deepRoutes := deepRouteTree(1000, "bogus: 1")
	return []string{
		laughs,
		laughsIn + "incidents:\n  group_by: *x6\n" + tail,
		"a: &x [*x]\n" + tail,
		"route: &r {receiver: log, routes: [*r]}\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"x: &m {receiver: log, bogus: 1}\nroute: *m\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"classifier: " + nested + "\n" + tail,
		"classifier:\n  " + strings.Repeat("a: {", 2000) + strings.Repeat("}", 2000) + "\n" + tail,
		deepRoutes,
		"dedup: {claim_ttl: 99999999999999999999999h}\n" + tail,
		"dedup: {claim_ttl: 9223372036854775807ns, notified_ttl: 292y}\n" + tail,
		"webhook: {timeout: -1s, max_body_bytes: 99999999999999999999, max_concurrent: 1e100}\n" + tail,
		"flap: {threshold: 18446744073709551616, window: 0s, cool_down: -1h}\n" + tail,
		"incidents: {update_window: 1e9h}\n" + tail,
		"auth: {bearer_token: !!binary c2VjcmV0}\n" + tail,
		"auth: !!map {bearer_token: !!str x}\n" + tail,
		"route: !!seq [receiver, log]\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"!!null\n",
		"--- !!str\n" + tail,
		"? [complex, key]\n: value\n" + tail,
		"route:\n  receiver: \"lo\x00g\"\nreceivers:\n  - name: \"lo\x00g\"\n    log_configs: [{}]\n",
		"route:\r\n  receiver: log\r\nreceivers:\r\n  - name: log\r\n    log_configs: [{}]\r\n",
		"\ufeff" + tail,
		"\xff\xfe" + tail,
		"route: {receiver: log}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"receivers:\n  - name: log\n    log_configs: [{}]\n    log_configs: [{}]\nroute: {receiver: log}\n",
		tail + "receivers: []\n",
		"route:\n  receiver: pd\nreceivers:\n  - name: pd\n    pagerduty_configs:\n      - routing_key: k\n        summary: '{{ .CommonLabels.x '\n        severity: '{{ end }}'\n",
		"route:\n  receiver: sl\nreceivers:\n  - name: sl\n    slack_configs:\n      - token: xoxb-1\n        channel: '#{{ if }}'\n        title: '{{ template \"nope\" . }}'\n        text: '{{'\n",
		"route:\n  receiver: log\n  routes:\n    - matchers: ['alertname=~\"(a+)+$\"']\n      receiver: log\n    - matchers: ['alertname=~\"[\"']\n      receiver: log\n" + "receivers:\n  - name: log\n    log_configs: [{}]\n",
		"route:\n  receiver: log\n  routes:\n    - match_re: {alertname: '(a|aa)*$'}\n      receiver: log\n    - match_re: {alertname: '(?P<x'}\n      receiver: log\nreceivers:\n  - name: log\n    log_configs: [{}]\n",
		"route:\n  receiver: log\n  routes:\n    - matchers: ['{{{{']\n      receiver: log\n    - matchers: ['a=\"" + strings.Repeat("x", 70000) + "\"']\n      receiver: log\nreceivers: [{name: log, log_configs: [{}]}]\n",
		"route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\ntime_intervals:\n  - name: t\n    time_intervals:\n      - times: [{start_time: '25:00', end_time: '00:00'}]\n        weekdays: ['sunday:monday:tuesday']\n        days_of_month: ['-40']\n        months: ['13']\n        years: ['99999999999999999999']\n        location: '../../etc/passwd'\n",
		"templates: ['[', '\\\\', '/nonexistent/**/*.tmpl']\n" + tail,
		"auth:\n  bearer_token: ${ALERTROUTER_FUZZ_UNDEFINED}\n" + tail,
		"${ALERTROUTER_FUZZ_UNDEFINED}: x\n" + tail,
		"auth: {bearer_token: $$x, bearer_token_file: '$${X}'}\n" + tail,
		"auth: &a {bearer_token: '${HOME}'}\nconsole: {auth: *a}\n" + tail,
		"store:\n  redis:\n    addrs: ['redis://u:p@h:1/0', '[::1', '']\n    db: -1\n    pool_size: -5\n    max_retries: -2\n" + tail,
		"prometheus: {url: 'http://[::1', timeout: 1ns, cache_ttl: -1s}\n" + tail,
		"alertmanager: {url: ':', resolve_unsent: -1s}\n" + tail,
		"console: {external_url: 'https://u:p@x/\\x00', auth: {}}\n" + tail,
		"policies:\n  burn_rate:\n    tiers: [{factor: NaN}, {factor: .inf}, {factor: -.inf}]\n" + tail,
		"classifier:\n  sectors: {x: {rules: [{match: '(a+)+$'}]}}\n" + tail,
		tail + "receivers:\n  - null\n  - ~\n  - name: x\n    pagerduty_configs: [null]\n    slack_configs: [~]\n",
		"receivers:\n  - name: log\n    slack_configs:\n      - token: t\n        channel: c\n        actions: [silence, ack, escalate]\n        escalate_to: nobody\nroute: {receiver: log}\n",
		"",
		"---\n",
		"--- \n...\n--- {route: {receiver: log}}\n",
		"%YAML 1.1\n---\n" + tail,
		"\t" + tail,
		"route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n" + strings.Repeat("#", 100000) + "\n",
	}
}

// deepRouteTree is a route tree depth routes deep, its deepest route
// holding leaf.
func deepRouteTree(depth int, leaf string) string {
	return "route: {receiver: log, routes: " + strings.Repeat("[{routes: ", depth) + "[{" + leaf + "}]" + strings.Repeat("}]", depth) +
		"}\nreceivers: [{name: log, log_configs: [{}]}]\n"
}

// A deep tree's decode error is still named by a YAML path and a line,
// and found without re-decoding every level's subtree to the bottom: a
// route tree nested 1000 deep (12 KB) with an unknown key at its bottom
// kept check-config, the start and a reload busy for 25 s (FuzzParseConfig
// fails on the same tree past 5 s).
func TestLocatingADeepTreeIsBounded(t *testing.T) {
	_, err := Parse([]byte(deepRouteTree(1000, "bogus: 1")), ".")
	if err == nil || !strings.HasPrefix(err.Error(), "parse YAML: route.routes[0].routes[0].") || !lineRef.MatchString(err.Error()) {
		t.Fatalf("error = %.300v\nwant a route's path and a line", err)
	}
	// Nor, located no further, does it print the value it could not
	// decode (a secret, for all it knows).
	_, err = Parse([]byte(deepRouteTree(1000, "receiver: !!int SECRETDEEPVAL1")), ".")
	if err == nil || strings.Contains(err.Error(), "SECRETDEEPVAL1") {
		t.Fatalf("error = %.300v\nwant no value printed", err)
	}
	// A shallow one is still located to its key.
	_, err = Parse([]byte(deepRouteTree(3, "bogus: 1")), ".")
	if want := "route.routes[0].routes[0].routes[0].routes[0].bogus: unknown field (line 1)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v\nwant %q", err, want)
	}
}

// Any bytes given as --web.config.file are accepted or refused by
// ParseWebConfig without a panic, and an accepted one is checked against
// the router's auth (CheckWebConfig: what serve and check-config refuse)
// without a panic.
func FuzzParseWebConfig(f *testing.F) {
	for _, s := range []string{
		"",
		"basic_auth_users: {prometheus: $2y$04$Tb0BdxYcTVWWE7WUHI7TY.mHWGXZCRnF8NVpRHTFG4U5fnWOIWkVu}\n",
		"tls_server_config: {cert_file: c, key_file: k, client_ca_file: ca, client_auth_type: RequireAndVerifyClientCert}\n",
		"tls_server_config: {cert_file: c, key_file: k, min_version: TLS13, cipher_suites: [TLS_AES_128_GCM_SHA256], curve_preferences: [X25519]}\nhttp_server_config: {http2: false, headers: {X-Frame-Options: deny}}\n",
		"basic_auth_users: {am: x, ops: ''}\nbasic_auth_users: {}\n",
		"tls_server_config: !!binary AAAA\n",
	} {
		f.Add([]byte(s))
	}
	c, err := Parse([]byte("auth: {basic_auth: {username: prometheus, password: p4ssword}}\nconsole: {enable_replay: true, auth: {bearer_token: t}}\n"+
		"route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n"), ".")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		done := make(chan string, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					done <- fmt.Sprintf("panic: %v\n%s", p, debug.Stack())
				}
			}()
			if w, err := ParseWebConfig(b); err == nil {
				_ = c.CheckWebConfig(w)
			}
			done <- ""
		}()
		select {
		case p := <-done:
			if p != "" {
				t.Fatalf("%s\ninput: %q", p, b)
			}
		case <-time.After(configtest.Bound(fuzzInputTime)):
			t.Fatalf("ParseWebConfig and CheckWebConfig took more than %s\ninput: %q", configtest.Bound(fuzzInputTime), b)
		}
	})
}
