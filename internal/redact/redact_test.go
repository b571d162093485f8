package redact

import (
	"errors"
	"strings"
	"testing"
)

func TestURLHidesPasswordsAndQueries(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:hunter22@example.com/v2/enqueue": "https://u:xxxxx@example.com/v2/enqueue",
		"https://example.com/x?token=hunter22":      "https://example.com/x?xxxxx",
		"https://example.com/v2/enqueue":            "https://example.com/v2/enqueue",
		":hunter22@redis:6379":                      "<secret>@redis:6379",
		"redis:6379":                                "redis:6379",
		// A user without a password is a token (an audit).
		"https://ghp_hunter22@api.example.com/x": "https://xxxxx@api.example.com/x",
		// An empty password (curl -u KEY:) leaves the token the user (a review).
		"https://ghp_hunter22:@api.example.com/x": "https://xxxxx@api.example.com/x",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretsHideWholeValuesAndQuotedPrefixes(t *testing.T) {
	var s Secrets
	s.Add("hunter2-very-secret", "ab")
	err := s.Error(errors.New("line 3: cannot unmarshal !!str `hunter2...` into int; value hunter2-very-secret; `ab` `other`"))
	got := err.Error()
	if strings.Contains(got, "hunter2") {
		t.Fatalf("secret leaked: %s", got)
	}
	if !strings.Contains(got, "`other`") || !strings.Contains(got, "`ab`") {
		t.Fatalf("non-secret fragments hidden: %s", got)
	}
}

func TestURLHidesASlackIncomingWebhooksPath(t *testing.T) {
	got := URL("https://hooks.slack.com/services/T000/B000/s3cretPath")
	if strings.Contains(got, "s3cretPath") || got != "https://hooks.slack.com/services/xxxxx" {
		t.Errorf("URL = %q, want the webhook's path hidden", got)
	}
}

// A webhook URL that does not parse (a control character, as a stray byte
// of a copy-paste leaves) or has no scheme, so no host, still hides its
// secret path: check-config prints it in the error that refuses it.
func TestURLHidesTheSecretsOfAURLThatDoesNotParse(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/SUPERSECRETWEBHOOK\x7f": "https://hooks.slack.com/services/xxxxx",
		"hooks.slack.com/services/T0/B0/SUPERSECRETWEBHOOK":             "hooks.slack.com/services/xxxxx",
		"chat.example.org/hooks/SUPERSECRETWEBHOOK":                     "chat.example.org/hooks/xxxxx",
		"https://chat.example.org/hooks/SUPERSECRETWEBHOOK":             "https://chat.example.org/hooks/xxxxx",
		"example.com/v2/enqueue?token=SUPERSECRET":                      "example.com/v2/enqueue?xxxxx",
		"http://u:SUPERSECRET@example.com/%zz":                          "<secret>@example.com/%zz",
		"http://127.0.0.1:1/v2/enqueue%zz":                              "http://127.0.0.1:1/v2/enqueue%zz",
		// A password whose start is digits and then "/" or "#": net/url
		// reads a host and a port, and the rest as a path (a review).
		"http://svc:2024/SUPERSECRET@proxy.corp:3128": "<secret>@proxy.corp:3128",
		"http://svc:2024#SUPERSECRET@proxy.corp:3128": "<secret>@proxy.corp:3128",
		"https://host:8443/path":                      "https://host:8443/path",
		// An "@" in a query or a webhook's path is no password's end: the
		// query and the token stay hidden whole.
		"http://proxyuser:839201?SUPERSECRET@proxy.corp:3128":            "http://proxyuser:xxxxx?xxxxx",
		"http://proxyuser:8392/hooks/SUPERSECRET@proxy.corp:3128":        "http://proxyuser:xxxxx/hooks/xxxxx",
		"http://am:9093/api?token=SUPERSECRET@tail1234":                  "http://am:xxxxx/api?xxxxx",
		"http://prometheus:9090/api/v1/query?query=up@1700000000":        "http://prometheus:xxxxx/api/v1/query?xxxxx",
		"https://hooks.example.com:443/services/T0/B0/SUPERSECRET@en123": "https://hooks.example.com:xxxxx/services/xxxxx",
	} {
		got := URL(in)
		if strings.Contains(got, "SUPERSECRET") || got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// Text hides the credentials of URLs however an error prints them: quoted
// (net/url's parse errors, a config key's own message), or bare.
func TestTextHidesTheCredentialsOfEveryURLInAnError(t *testing.T) {
	for in, want := range map[string]string{
		`alertmanager.url: "ftp://am:SUPERSECRET@am:9093" is not an absolute http(s) URL`: `alertmanager.url: "ftp://am:xxxxx@am:9093" is not an absolute http(s) URL`,
		`parse YAML: parse "http://u:SUPERSECRET@proxy/%zz": invalid URL escape "%zz"`:    `parse YAML: parse "<secret>@proxy/%zz": invalid URL escape "%zz"`,
		`prometheus.url: "http://p:SUPERSECRET@prom:9090/?x=1": must not have a query`:    `prometheus.url: "http://p:xxxxx@prom:9090/?xxxxx": must not have a query`,
		`proxy http://u:SUPERSECRET@proxy:3128 refused`:                                   `proxy http://u:xxxxx@proxy:3128 refused`,
		`url "http://a\"b:SUPERSECRET@h/" odd`:                                            `url "<secret>@h/" odd`,
		`no URL here: "user:pass"`:                                                        `no URL here: "user:pass"`,
		`route "http://example.com/x" ok`:                                                 `route "http://example.com/x" ok`,
		// A password holding "/" or "#" ends the authority early: net/url
		// reads its start as a port (an audit found it in check-config's
		// error, the start log and the reload answer).
		`proxy_url: parse "http://px:SUPERSECRET/rest@127.0.0.1:21799": invalid port ":SUPERSECRET" after host`: `proxy_url: parse "<secret>@127.0.0.1:21799": invalid port ":xxxxx" after host`,
		`proxy_url: parse "http://px:SUPERSECRET": invalid port ":SUPERSECRET" after host`:                      `proxy_url: parse "http://px:xxxxx": invalid port ":xxxxx" after host`,
		`Post "http://prom:2024/SUPERSECRET@127.0.0.1:21904/api/v1/query": refused`:                             `Post "<secret>@127.0.0.1:21904/api/v1/query": refused`,
		`proxy http://u:2024/SUPERSECRET@proxy:3128 refused`:                                                    `proxy http://u:xxxxx@proxy:3128 refused`,
		`invalid port ":SUPERSECRET" after host`:                                                                `invalid port ":xxxxx" after host`,
		`parse "http://h:99999/x": invalid port ":99999" after host`:                                            `parse "http://h:99999/x": invalid port ":xxxxx" after host`,
		// Bare URLs: a token as the user, a query's key, an incoming
		// webhook's path (an audit: left readable before).
		`dial https://SUPERSECRET@api.example.com/x: refused`:                   `dial https://xxxxx@api.example.com/x: refused`,
		`GET http://h:9090/x?api_key=SUPERSECRET&b=1 failed`:                    `GET http://h:9090/x?xxxxx failed`,
		`post to https://hooks.slack.com/services/T0/B0/SUPERSECRET: 404`:       `post to https://hooks.slack.com/services/xxxxx: 404`,
		`"https://hooks.slack.com/services/T0/B0/SUPERSECRET" and "http://u@h"`: `"https://hooks.slack.com/services/xxxxx" and "http://xxxxx@h"`,
		// A review: an "@" in a bare URL's query with a port took the
		// query for a password and showed its token; an e-mail as the
		// user showed the password; an empty password kept the token.
		`url=https://api.example.com:8443/v1/send?to=ops@example.com&token=SUPERSECRET`: `url=https://api.example.com:xxxxx/v1/send?xxxxx`,
		`see https://me@example.com:SUPERSECRET@jira.example.com/rest`:                  `see https://me%40example.com:xxxxx@jira.example.com/rest`,
		`GET https://SUPERSECRET:@api.example.com/x failed`:                             `GET https://xxxxx@api.example.com/x failed`,
		`"https://SUPERSECRET:@api.example.com/x"`:                                      `"https://xxxxx@api.example.com/x"`,
		`http://u:pa?SUPERSECRET@host/x failed`:                                         `<secret>@host/x failed`,
		// A URL with nothing to hide stays as written, unicode and all.
		`see https://例え.jp/パス/x for the runbook`: `see https://例え.jp/パス/x for the runbook`,
		`see https://例え.jp/パス?k=SUPERSECRET`:     `see https://%E4%BE%8B%E3%81%88.jp/%E3%83%91%E3%82%B9?xxxxx`,
		// Slack's link syntax and a sentence's punctuation stay.
		`<https://h/x?token=SUPERSECRET|link>, then (https://h/y?k=SUPERSECRET).`: `<https://h/x?xxxxx|link>, then (https://h/y?xxxxx).`,
	} {
		got := Text(in)
		if strings.Contains(got, "SUPERSECRET") || got != want {
			t.Errorf("Text(%q) =\n  %q, want\n  %q", in, got, want)
		}
	}
}

// Values hides whole values only: a proxy's page quoting a host in back
// quotes was hidden for being part of the webhook's URL (a review).
func TestValuesHidesWholeValuesOnly(t *testing.T) {
	got := Values("access to `127.0.0.1` denied for T0/B0/SUPERSECRET", "T0/B0/SUPERSECRET", "http://127.0.0.1/services/T0/B0/SUPERSECRET", "ab")
	if want := "access to `127.0.0.1` denied for <secret>"; got != want {
		t.Errorf("Values = %q, want %q", got, want)
	}
}

// IPv6Hint reads the host of a URL only: colons of a password, a path or a
// query, and a bracketed address, give no hint.
func TestIPv6HintReadsTheHostOnly(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://::1:9093":                 true,
		"https://u:p@fd00::1/x":           true,
		"fd00::1:9093":                    true,
		"http://[::1]:9093":               false,
		"http://u:pa:ss@host:9093":        false,
		"http://host:9093/a:b:c?x=1:2:3":  false,
		"http://host:9093#a:b:c":          false,
		"http://alertmanager.example.com": false,
		"http://host:9093:1":              false, // a typo, not IPv6
		"http://fe80::1%eth0:9093":        true,
		"http://::ffff:10.0.0.1:9093":     true,
		"http://fd00:0:0:0:0:0:0:1":       true,
	} {
		if got := IPv6Hint(raw) != ""; got != want {
			t.Errorf("IPv6Hint(%q) = %q; want a hint: %v", raw, IPv6Hint(raw), want)
		}
	}
	if _, err := HTTPURL("http://u:S3CRET@::1:9093"); err == nil || strings.Contains(err.Error(), "S3CRET") || !strings.Contains(err.Error(), "brackets") {
		t.Errorf("HTTPURL = %v; want refused with the hint, the password hidden", err)
	}
}
