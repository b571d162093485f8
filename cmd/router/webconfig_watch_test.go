package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// metricsAs scrapes /metrics at base as the basic-auth user and password.
func metricsAs(t *testing.T, base, user, password string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics as %s: %d %v", user, resp.StatusCode, err)
	}
	return string(b)
}

// exporter-toolkit reads --web.config.file on every request, but the
// router checked it against its auth: only at start and reload: a change
// of that file alone (a new bcrypt hash for Alertmanager's user) had every
// webhook answered 401 at one layer or the other — Alertmanager never
// retries a 4xx, the pages were lost — while
// alertrouter_config_last_reload_successful stayed 1. The file is now
// watched with the secret files: its change is checked, a mismatch logged
// as a failed reload naming the conflict, and the metric says 0 until the
// two agree again.
func TestAChangedWebConfigFileIsCheckedAgainstTheConfiguration(t *testing.T) {
	web := writeFile(t, "web.yml", "http_server_config:\n  http2: true\n")
	p := writeFile(t, "router.yml", "auth: {basic_auth: {username: am, password: am-pass}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	base, _, log := serveWithStdout(t, p, "--web.config.file="+web, "--config.secret-files-check-interval=50ms", "--store.probe-interval=0")
	users := func(password string) []byte {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return []byte("basic_auth_users:\n  am: " + string(hash) + "\n")
	}
	replaceFile(t, web, users("another-pass"))
	waitLog(t, log, "auth.basic_auth.password")
	if !strings.Contains(log.String(), "level=ERROR") {
		t.Errorf("the mismatch was not logged as an error:\n%s", log.String())
	}
	if m := metricsAs(t, base, "am", "another-pass"); !strings.Contains(m, "alertrouter_config_last_reload_successful 0") {
		t.Errorf("a web configuration that refuses the router's own auth: left alertrouter_config_last_reload_successful at 1")
	}
	// The two agree again: the next check clears the failure.
	replaceFile(t, web, users("am-pass"))
	waitLog(t, log, "configuration reloaded")
	if m := metricsAs(t, base, "am", "am-pass"); !strings.Contains(m, "alertrouter_config_last_reload_successful 1") {
		t.Errorf("the web configuration agreeing again left alertrouter_config_last_reload_successful at 0")
	}
}
