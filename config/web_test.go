package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/alertrouter/alertrouter/config"
)

const routeLog = "route: {receiver: log}\nreceivers:\n  - name: log\n    log_configs: [{}]\n"

const triageReceiver = `  - name: triage
    slack_configs:
      - token: xoxb-t
        channel: '#triage'
        signing_secret: s1gning-secret
        actions: [escalate]
        escalate_to: pd
  - name: pd
    pagerduty_configs: [{routing_key: k}]
`

func mustParse(t *testing.T, y string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(y), t.TempDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	return c
}

func TestCheckWebConfigNamesEveryConflictAndItsFix(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("p4ssword"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users, err := config.ParseWebConfig([]byte("tls_server_config: {cert_file: c, key_file: k}\nbasic_auth_users:\n  prometheus: " + string(hash) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	tlsOnly, err := config.ParseWebConfig([]byte("tls_server_config: {cert_file: c, key_file: k}\n"))
	if err != nil {
		t.Fatal(err)
	}
	clientCerts, err := config.ParseWebConfig([]byte("tls_server_config: {cert_file: c, key_file: k, client_ca_file: ca, client_auth_type: RequireAndVerifyClientCert}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, yaml string
		web        string // users, tls, certs or none
		want       []string
	}{
		{"triage under web users", routeLog + triageReceiver, "users", []string{"receivers[1].slack_configs[0].actions: Slack triage cannot work with basic_auth_users", "console.auth"}},
		{"bearer under web users", "auth: {bearer_token_file: /x}\n" + routeLog, "users", []string{"auth.bearer_token: cannot work", "basic_auth_users user"}},
		{"unknown basic user", "auth: {basic_auth: {username: am, password: p4ssword}}\n" + routeLog, "users", []string{`"am" is not one of the basic_auth_users of --web.config.file (prometheus)`}},
		{"replay, nothing", "console: {enable_replay: true}\n" + routeLog, "none", []string{"console.enable_replay: the console is unprotected", "console.auth"}},
		{"replay, TLS only", "console: {enable_replay: true}\n" + routeLog, "tls", []string{"console.enable_replay"}},
		{"replay under web users", "console: {enable_replay: true}\n" + routeLog, "users", nil},
		{"replay behind client certificates", "console: {enable_replay: true}\n" + routeLog, "certs", nil},
		{"replay behind console.auth", "console: {enable_replay: true, auth: {basic_auth: {username: ops, password: p4ssword}}}\n" + routeLog, "none", nil},
		{"triage and bearer, TLS only", "auth: {bearer_token_file: /x}\n" + routeLog + triageReceiver, "tls", nil},
		{"known basic user", "auth: {basic_auth: {username: prometheus, password: p4ssword}}\n" + routeLog, "users", nil},
		{"console user not a web user", "console: {auth: {basic_auth: {username: ops, password: p4ssword}}}\n" + routeLog, "users", []string{"console.auth: cannot work with basic_auth_users in --web.config.file (prometheus)", "everyone 401"}},
		{"console bearer under web users", "console: {auth: {bearer_token: t0ken-for-scripts}}\n" + routeLog, "users", []string{"console.auth: cannot work"}},
		{"console user a web user", "console: {auth: {basic_auth: {username: prometheus, password: p4ssword}}}\n" + routeLog, "users", nil},
		// A web user with another password: one layer or the other
		// answers every request 401 (Alertmanager drops a 4xx'd page).
		{"known basic user, another password", "auth: {basic_auth: {username: prometheus, password: s3cret}}\n" + routeLog, "users", []string{`auth.basic_auth.password: user "prometheus" of basic_auth_users in --web.config.file has another password`, "no webhook would arrive"}},
		{"console user a web user, another password", "console: {auth: {basic_auth: {username: prometheus, password: s3cret}}}\n" + routeLog, "users", []string{"console.auth: cannot work with basic_auth_users in --web.config.file (prometheus) unless it is basic_auth of one of those users with the same password"}},
		{"replay behind an authenticating proxy", "console: {enable_replay: true, protected_by_proxy: true}\n" + routeLog, "none", nil},
	} {
		c := mustParse(t, tc.yaml)
		w := map[string]*web.Config{"users": users, "tls": tlsOnly, "certs": clientCerts, "none": nil}[tc.web]
		err := c.CheckWebConfig(w)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want no conflict", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no conflict found", tc.name)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\ndoes not say %q", tc.name, err, want)
			}
		}
	}
	// The password read from password_file, trailing newline dropped, as
	// the edge reads it.
	for content, conflict := range map[string]bool{"p4ssword\n": false, "pw\n": true} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := config.Parse([]byte("auth: {basic_auth: {username: prometheus, password_file: pw}}\n"+routeLog), dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CheckWebConfig(users); (err != nil) != conflict {
			t.Errorf("password_file holding %q: %v, want a conflict: %v", content, err, conflict)
		}
	}
}

func TestConsoleAuthIsValidatedLikeAuth(t *testing.T) {
	for y, want := range map[string]string{
		"console: {auth: {}}\n":                                         "console.auth: set basic_auth",
		"console: {auth: {basic_auth: {password: p4ssword}}}\n":         "console.auth.basic_auth.username: required",
		"console: {auth: {basic_auth: {username: ops}}}\n":              "console.auth.basic_auth: exactly one of password and password_file",
		"console: {auth: {bearer_token: abcd, bearer_token_file: f}}\n": "console.auth: at most one of bearer_token and bearer_token_file",
	} {
		_, err := config.Parse([]byte(y+routeLog), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", y, err, want)
		}
	}
	dir := t.TempDir()
	c, err := config.Parse([]byte("console:\n  external_url: https://AlertRouter.example.com:8443/ui\n  auth: {basic_auth: {username: ops, password_file: pw}}\n"+routeLog), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Console.Auth.BasicAuth.PasswordFile; got != dir+"/pw" {
		t.Errorf("password_file = %q, want it resolved against the config's directory", got)
	}
	if got := c.Console.ExternalHost(); got != "alertrouter.example.com" {
		t.Errorf("ExternalHost = %q", got)
	}
	found := false
	for _, f := range c.SecretFiles() {
		found = found || f == dir+"/pw"
	}
	if !found {
		t.Errorf("SecretFiles %v lacks console.auth's password_file (a rotated password would not reload)", c.SecretFiles())
	}
	if s := c.String(); strings.Contains(s, "p4ssword") {
		t.Errorf("String prints a secret: %s", s)
	}
}

// Errors print URLs with their credentials hidden, whichever part of the
// config (or library) wrote them.
func TestParseErrorsHideURLCredentials(t *testing.T) {
	for _, y := range []string{
		"alertmanager: {url: 'ftp://am:AMPASS7@am:9093'}\n",
		"prometheus: {url: 'ftp://p:AMPASS7@prom:9090'}\n",
		"prometheus: {url: 'http://p:AMPASS7@prom:9090/%zz'}\n",
		"alertmanager: {url: 'http://am:9093', http_config: {proxy_url: 'http://u:AMPASS7@proxy/%zz'}}\n",
		"console: {external_url: 'ftp://u:AMPASS7@x'}\n",
	} {
		_, err := config.Parse([]byte(y+routeLog), t.TempDir())
		if err == nil || strings.Contains(err.Error(), "AMPASS7") {
			t.Errorf("%s: %v; want an error without the password", y, err)
		}
	}
}

// An IPv6 address written without brackets in any URL the config takes
// ("http://::1:9093", which url.Parse refuses for its port) is refused
// with where the brackets go, and the bracketed form is taken (IPV6 audit:
// the errors said only "is not a URL").
func TestURLsTellWhereIPv6BracketsGo(t *testing.T) {
	for _, c := range []struct{ key, bare, bracketed string }{
		{"alertmanager.url", "alertmanager: {url: 'http://::1:9093'}\n", "alertmanager: {url: 'http://[::1]:9093'}\n"},
		{"prometheus", "prometheus: {url: 'http://u:p@fd00::1:9090'}\n", "prometheus: {url: 'http://u:p@[fd00::1]:9090'}\n"},
		{"console.external_url", "console: {external_url: 'https://fd00::1/ui'}\n", "console: {external_url: 'https://[fd00::1]/ui'}\n"},
		{"url", "route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key: x, url: 'http://::1:8080/v2/enqueue'}]}]\n", "route: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key: x, url: 'http://[::1]:8080/v2/enqueue'}]}]\n"},
		{"api_url", "route: {receiver: s}\nreceivers: [{name: s, slack_configs: [{token: x, channel: '#c', api_url: 'http://::1:8081/api/'}]}]\n", "route: {receiver: s}\nreceivers: [{name: s, slack_configs: [{token: x, channel: '#c', api_url: 'http://[::1]:8081/api/'}]}]\n"},
		{"api_url", "route: {receiver: s}\nreceivers: [{name: s, slack_configs: [{channel: '#c', api_url: 'http://::1:8081/services/T/B/X'}]}]\n", "route: {receiver: s}\nreceivers: [{name: s, slack_configs: [{channel: '#c', api_url: 'http://[::1]:8081/services/T/B/X'}]}]\n"},
	} {
		tail := routeLog
		if strings.HasPrefix(c.bare, "route:") {
			tail = ""
		}
		_, err := config.Parse([]byte(c.bare+tail), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), "an IPv6 address goes in brackets") {
			t.Errorf("%s: Parse = %v; want %s refused naming the brackets", c.bare, err, c.key)
		}
		if _, err := config.Parse([]byte(c.bracketed+tail), t.TempDir()); err != nil {
			t.Errorf("%s: %v", c.bracketed, err)
		}
	}
	// A host name with a port, or a bracketed address, has no hint.
	_, err := config.Parse([]byte("alertmanager: {url: 'ftp://[::1]:9093'}\n"+routeLog), t.TempDir())
	if err == nil || strings.Contains(err.Error(), "brackets") {
		t.Errorf("ftp://[::1]:9093: %v; want refused for its scheme without the IPv6 hint", err)
	}
}

// console.external_url is the link every notification carries: credentials
// in it would reach every PagerDuty incident and Slack message.
func TestConsoleExternalURLHoldsNoCredentials(t *testing.T) {
	_, err := config.Parse([]byte("console: {external_url: 'https://ops:S3CRET@alertrouter.example.com'}\n"+routeLog), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "console.external_url") || !strings.Contains(err.Error(), "holds credentials") || strings.Contains(err.Error(), "S3CRET") {
		t.Fatalf("Parse = %v; want console.external_url refused for its credentials, without printing them", err)
	}
	if _, err := config.Parse([]byte("console: {external_url: 'https://alertrouter.example.com'}\n"+routeLog), t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// The secret-file check watches --web.config.file and the TLS files it
// names (relative ones from its directory): exporter-toolkit reads them on
// every request, so a change of any is checked by a reload.
func TestWebConfigFilesNameTheFileAndItsTLSFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(path, []byte("tls_server_config:\n  cert_file: tls.crt\n  key_file: /abs/tls.key\n  client_ca_file: ca.crt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{path, filepath.Join(dir, "tls.crt"), "/abs/tls.key", filepath.Join(dir, "ca.crt")}
	if got := config.WebConfigFiles(path); !slices.Equal(got, want) {
		t.Errorf("WebConfigFiles = %v; want %v", got, want)
	}
	if got := config.WebConfigFiles(filepath.Join(dir, "missing.yml")); len(got) != 1 {
		t.Errorf("WebConfigFiles of a missing file = %v; want the file alone", got)
	}
	if got := config.WebConfigFiles(""); got != nil {
		t.Errorf("WebConfigFiles(\"\") = %v; want none", got)
	}
}
