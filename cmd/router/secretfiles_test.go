package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
)

// A rotated secret file (a Kubernetes Secret's new value in its mounted
// file) is picked up without a restart or a SIGHUP: the next page goes out
// with the new routing key. Before, *_file secrets were read once.
func TestARotatedSecretFileIsUsedWithoutARestart(t *testing.T) {
	const oldKey, newKey = "old0000000000000000000000000key0", "new0000000000000000000000000key0"
	pd := pdtest.NewServer()
	defer pd.Close()
	keyFile, _, _, base, log := keyFileRouter(t, pd, oldKey, "")
	page := func(service string) { // a new incident each
		t.Helper()
		postAlerts(t, base, fmt.Sprintf(`{"version":"4","status":"firing","receiver":"router","groupKey":"{}:{}","alerts":[{"status":"firing","labels":{"alertname":"GPUDown","severity":"critical","service":%q},"startsAt":"2026-12-04T10:00:00Z"}]}`, service))
	}
	keys := func() []string {
		var ks []string
		for _, e := range pd.Events() {
			ks = append(ks, e.RoutingKey)
		}
		return ks
	}
	// pagesWith pages new incidents until one goes out with key (bounded).
	pagesWith := func(key, prefix string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for i := 0; ; i++ {
			page(fmt.Sprintf("%s%d", prefix, i))
			if ks := keys(); ks[len(ks)-1] == key {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("routing keys %q: %s was never used", keys(), key)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	page("a")
	if ks := keys(); len(ks) != 1 || ks[0] != oldKey {
		t.Fatalf("routing keys %q, want the file's first key", ks)
	}
	if err := os.WriteFile(keyFile, []byte(newKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The check runs every 50ms; the reload is seen in the log. Bounded.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), "secret files changed") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload after the key file changed; log:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pagesWith(newKey, "b")

	// A file deleted in the middle of a rotation fails one reload (the
	// previous configuration keeps serving), not one per check with the
	// same error; its next content is picked up.
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	const failed = "configuration reload failed"
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(log.String(), failed) {
		if time.Now().After(deadline) {
			t.Fatalf("no failed reload after the key file was deleted; log:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // twenty checks
	if n := strings.Count(log.String(), failed); n != 1 {
		t.Errorf("%d failed reloads logged for one deleted file, want 1:\n%s", n, log.String())
	}
	const thirdKey = "third00000000000000000000000key0"
	if err := os.WriteFile(keyFile, []byte(thirdKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pagesWith(thirdKey, "c")
}

// Every *_file key of a configuration is watched, those of http_config
// included, without a list to keep up to date.
func TestSecretFilesFindsEveryFileKey(t *testing.T) {
	p := writeFile(t, "router.yml", `
route: {receiver: r}
receivers:
  - name: r
    pagerduty_configs:
      - routing_key_file: /s/pd
    slack_configs:
      - token_file: /s/slack-token
        signing_secret_file: /s/slack-signing
        channel: '#x'
        http_config:
          tls_config: {ca_file: /s/ca.pem}
`)
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.SecretFiles(), " ")
	if want := "/s/ca.pem /s/pd /s/slack-signing /s/slack-token"; got != want {
		t.Fatalf("SecretFiles = %q, want %q", got, want)
	}
}

// A secret file deleted and put back as it was (a rotation undone): the
// failed reload of the deletion kept alertrouter_config_last_reload_successful
// at 0 — AlertrouterConfigReloadFailed fired on a router serving as it
// should — until a SIGHUP. The files back as the configuration was built
// from reload it, and the metric says so.
func TestASecretFileRestoredAsItWasClearsTheFailedReload(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	const key = "old0000000000000000000000000key0"
	keyFile, _, _, base, log := keyFileRouter(t, pd, key, "")
	metric := func() string {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "alertrouter_config_last_reload_successful ") {
				return strings.TrimPrefix(line, "alertrouter_config_last_reload_successful ")
			}
		}
		return ""
	}
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the failed reload", log, func() bool { return metric() == "0" })
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the reload of the restored file", log, func() bool { return metric() == "1" })
}

// Files put back while router.yml itself is broken: the reload fails once,
// not at every check (it was reloaded and logged every interval).
func TestARestoredSecretFileWithABrokenConfigFailsOnce(t *testing.T) {
	pd := pdtest.NewServer()
	defer pd.Close()
	const key = "old0000000000000000000000000key0"
	keyFile, p, good, _, log := keyFileRouter(t, pd, key, "")
	const failed = "configuration reload failed"
	waitFor := func(what string, cond func() bool) { t.Helper(); waitUntil(t, what, log, cond) }
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	waitFor("the failed reload", func() bool { return strings.Count(log.String(), failed) == 1 })
	if err := os.WriteFile(p, []byte(good+"bogus: key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("the reload of the restored file", func() bool { return strings.Count(log.String(), failed) == 2 })
	time.Sleep(time.Second) // twenty checks
	if n := strings.Count(log.String(), failed); n != 2 {
		t.Errorf("%d failed reloads logged, want 2 (the deletion, then the restore with the broken config, once):\n%s", n, log.String())
	}
}

// keyFileRouter writes a routing key file and a config paging through it
// (extra YAML first), and serves it with the secret files checked every
// 50ms: the key file's path, the config's, its text, the base URL and the
// log.
func keyFileRouter(t *testing.T, pd *pdtest.Server, key, extra string) (keyFile, cfgPath, cfgText, base string, log fmt.Stringer) {
	t.Helper()
	keyFile = filepath.Join(t.TempDir(), "routing_key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgText = fmt.Sprintf("%sroute: {receiver: pd}\nreceivers: [{name: pd, pagerduty_configs: [{routing_key_file: %s, url: %s}]}]\n", extra, keyFile, pd.EnqueueURL())
	cfgPath = writeFile(t, "router.yml", cfgText)
	base, _, l := serveWithStdout(t, cfgPath, "--config.secret-files-check-interval=50ms")
	return keyFile, cfgPath, cfgText, base, l
}

// waitUntil polls cond every 20ms until it holds, at most 20s (the log is
// printed when it never does).
func waitUntil(t *testing.T, what string, log fmt.Stringer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened; log:\n%s", what, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A rotated Redis password (README: rotate on Redis' side first, then the
// Secret) reached no client: the reload compared store.redis by its
// password_file's path, kept the old client, and its new connections —
// after Redis dropped the old ones — failed WRONGPASS: every webhook sent
// without deduplication (duplicate pages) while the reload said success.
// A changed store file builds a new client; the repeat is deduplicated.
func TestARotatedRedisPasswordFileReachesANewClient(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "pw1")
	pwFile := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(pwFile, []byte("pw1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, "router.yml", fmt.Sprintf("store: {redis: {addrs: [%s], password_file: %s}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n", srv.Addr(), pwFile))
	_, log, send := serveStore(t, p)
	send("before")
	// Rotate on Redis' side first (a fresh connection authenticates with
	// pw1 to change it), then the file; Redis drops the old connections.
	rotate := exec.Command("redis-cli", "-p", strings.TrimPrefix(srv.Addr(), "127.0.0.1:"), "-a", "pw1", "--no-auth-warning", "CONFIG", "SET", "requirepass", "pw2")
	if out, err := rotate.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli CONFIG SET requirepass: %v %s", err, out)
	}
	tmp := pwFile + ".new"
	if err := os.WriteFile(tmp, []byte("pw2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, pwFile); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(log.String(), "store settings changed") {
		if time.Now().After(deadline) {
			t.Fatalf("the rotated password_file built no new store client:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	kill := exec.Command("redis-cli", "-p", strings.TrimPrefix(srv.Addr(), "127.0.0.1:"), "-a", "pw2", "--no-auth-warning", "CLIENT", "KILL", "TYPE", "normal")
	if out, err := kill.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli CLIENT KILL: %v %s", err, out)
	}
	send("after")
	if sum := send("after"); sum["deduplicated"] != float64(1) {
		t.Fatalf("the repeat after the rotation answered %v; want it deduplicated (the store answering with the new password):\n%s", sum, log.String())
	}
}
