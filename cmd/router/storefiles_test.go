package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// storeFilesRouter serves a router whose store is srv through a TLS
// connection trusting caFile, authenticated by the password in pwFile,
// checking its secret files every 50ms. It returns the router's base URL,
// its log and send, which posts one firing alert of service and returns
// the webhook's summary.
func storeFilesRouter(t *testing.T, srv *redistest.Server, caFile, pwFile string) (string, *syncBuffer, func(service string) map[string]any) {
	t.Helper()
	return serveStore(t, writeFile(t, "router.yml", fmt.Sprintf("store: {redis: {addrs: [%s], password_file: %s, tls: {ca_file: %s}}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n", srv.TLSAddr(), pwFile, caFile)))
}

// serveStore serves the config file p, its secret files checked every
// 50ms and no store probe, and returns its base URL, its log and a send
// of one firing alert of service, answering the webhook's summary.
func serveStore(t *testing.T, p string) (string, *syncBuffer, func(service string) map[string]any) {
	t.Helper()
	base, _, log := serveWithStdout(t, p, "--config.secret-files-check-interval=50ms", "--store.probe-interval=0")
	send := func(service string) map[string]any {
		t.Helper()
		body := fmt.Sprintf(`{"version":"4","status":"firing","receiver":"router","groupKey":"{}:{}","alerts":[{"status":"firing","labels":{"alertname":"GPUDown","severity":"critical","service":%q},"startsAt":"2026-12-04T10:00:00Z"}]}`, service)
		resp, err := http.Post(base+"/webhook", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sum map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("webhook answered %d (%v)", resp.StatusCode, err)
		}
		return sum
	}
	return base, log, send
}

// tlsStoreFiles starts a TLS redis-server requiring password pw1, and
// writes its CA and the password into files of a temporary directory.
func tlsStoreFiles(t *testing.T) (srv *redistest.Server, caFile, pwFile string) {
	t.Helper()
	tlsFiles := redistest.NewTLS(t)
	srv = redistest.StartTLS(t, tlsFiles, "--requirepass", "pw1")
	dir := t.TempDir()
	caFile, pwFile = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "redis-password")
	ca, err := os.ReadFile(tlsFiles.CA)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile(t, caFile, ca)
	replaceFile(t, pwFile, []byte("pw1\n"))
	return srv, caFile, pwFile
}

// replaceFile writes content to path as a Kubernetes Secret update does:
// a new file renamed over the old one.
func replaceFile(t *testing.T, path string, content []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits (bounded) until the router's log holds want.
func waitLog(t *testing.T, log *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", want, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A reload on changed store files swapped the working client for one that
// could not connect, and said "configuration reloaded": a CA rotated
// before Redis' certificate (cert-manager's usual order), or a password
// file changed before Redis' requirepass, failed every store operation —
// webhooks failed open, an Alertmanager repeat paged again. The reload is
// now refused naming the error, the previous client keeps deduplicating,
// and alertrouter_config_last_reload_successful says 0 (the mixin's
// failed-reload alert).
func TestAReloadKeepsTheStoreClientWhenTheNewFilesCannotConnect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rotate func(t *testing.T, caFile, pwFile string)
	}{
		{"a CA that did not sign Redis' certificate", func(t *testing.T, caFile, _ string) {
			b, err := os.ReadFile(redistest.NewTLS(t).CA)
			if err != nil {
				t.Fatal(err)
			}
			replaceFile(t, caFile, b)
		}},
		{"a password Redis does not take yet", func(t *testing.T, _, pwFile string) {
			replaceFile(t, pwFile, []byte("pw2\n"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, caFile, pwFile := tlsStoreFiles(t)
			base, log, send := storeFilesRouter(t, srv, caFile, pwFile)
			send("before")
			tc.rotate(t, caFile, pwFile)
			waitLog(t, log, "cannot connect while the previous client still does")
			if m := scrape(t, base); !strings.Contains(m, "alertrouter_config_last_reload_successful 0") {
				t.Errorf("the refused store client left alertrouter_config_last_reload_successful at 1")
			}
			if strings.Contains(log.String(), "store settings changed") {
				t.Errorf("the store client was swapped for one that cannot connect:\n%s", log.String())
			}
			send("after")
			if sum := send("after"); sum["deduplicated"] != float64(1) {
				t.Fatalf("the repeat after the refused rotation answered %v; want it deduplicated (the previous client still answering):\n%s", sum, log.String())
			}
		})
	}
}
