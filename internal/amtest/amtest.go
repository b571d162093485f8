// Package amtest runs a real Alertmanager (the Debian package
// prometheus-alertmanager, installed by scripts/install-deps.sh) for the
// tests of any package: a config of the caller's, a free loopback port,
// readiness awaited, the process stopped and its log shown on failure.
// Without the binary the test is skipped, loudly, and fails under CI.
package amtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/proctest"
)

// Alertmanager is one running Alertmanager.
type Alertmanager struct {
	// URL is its base URL (http://127.0.0.1:port).
	URL string
	log string
}

// Binary finds Alertmanager, skipping the test (failing it under CI)
// without it: $ALERTMANAGER_BIN when set (`make am-current` runs the
// Alertmanager tests again with the release go.mod requires, built by
// scripts/build-alertmanager.sh), else Debian's on PATH.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("ALERTMANAGER_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("ALERTMANAGER_BIN: %v", err)
		}
		return bin
	}
	return proctest.LookPath(t, "apt-get install prometheus-alertmanager", "prometheus-alertmanager", "alertmanager")
}

// Start runs an Alertmanager with the config YAML config and waits until
// it is ready.
func Start(t testing.TB, config string) *Alertmanager {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatalf("write alertmanager config: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	_ = l.Close()
	am := &Alertmanager{URL: "http://" + addr, log: filepath.Join(dir, "alertmanager.log")}
	logf, err := os.Create(am.log)
	if err != nil {
		t.Fatalf("create alertmanager log: %v", err)
	}
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=debug")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start alertmanager: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(am.log)
			if len(b) > 16<<10 {
				b = b[len(b)-16<<10:]
			}
			t.Logf("---- alertmanager log ----\n%s", b)
		}
	})
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get(am.URL + "/-/ready")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return am
			}
			err = fmt.Errorf("GET /-/ready: %s", resp.Status)
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(am.log)
			t.Fatalf("alertmanager exited before becoming ready:\n%s", b)
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager not ready within 20s: %v", err)
		}
	}
}
