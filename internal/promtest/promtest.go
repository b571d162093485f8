// Package promtest starts a real Prometheus server (Debian's `prometheus`
// package, installed by scripts/install-deps.sh) for tests: on a free
// loopback port with its own temporary data directory, optionally with TSDB
// blocks backfilled from OpenMetrics text by `promtool tsdb
// create-blocks-from openmetrics`, recording rules that Prometheus itself
// evaluates, and loopback scrape targets. The server is killed when the
// test ends.
//
// When prometheus or promtool is not on PATH the test is skipped with a
// loud message, or fails when the CI environment variable is set.
package promtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/proctest"
)

// startTimeout bounds how long backfilling and a start may take.
const startTimeout = 60 * time.Second

// errExited says that prometheus exited before it was ready.
var errExited = proctest.ErrExited

// Options says what the server starts with. The zero value is an empty
// Prometheus.
type Options struct {
	// Series is OpenMetrics text (ending in "# EOF") backfilled into the
	// TSDB before the server starts. Timestamps are in seconds.
	Series string
	// Rules is the content of one rules file (Prometheus rule-group YAML).
	Rules string
	// EvalInterval is the global rule evaluation and scrape interval;
	// default 1s.
	EvalInterval time.Duration
	// ScrapeTargets are "host:port" targets scraped every EvalInterval
	// with honor_labels, under the job name "promtest".
	ScrapeTargets []string
	// Features are passed as --enable-feature, e.g. "exemplar-storage".
	Features []string
}

// Server is one prometheus process. Its methods are safe for concurrent use.
type Server struct {
	bin  string
	dir  string
	args []string

	mu     sync.Mutex
	port   int
	proc   *os.Process
	exited chan struct{}
}

// Start backfills o.Series, writes the configuration and starts prometheus
// on a free loopback port, retrying with another port when the one picked
// was taken in the meantime, and waits until /-/ready answers 200.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := lookPath(t, "prometheus")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if o.Series != "" {
		if err := Backfill(lookPath(t, "promtool"), dir, data, o.Series); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath, err := writeConfig(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{bin: bin, dir: dir, args: []string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + data,
		"--storage.tsdb.retention.time=60d",
		"--web.enable-lifecycle",
		"--log.level=warn",
	}}
	if len(o.Features) > 0 {
		s.args = append(s.args, "--enable-feature="+strings.Join(o.Features, ","))
	}
	var errs []error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s.port = port
		err = s.Restart()
		if err == nil {
			t.Cleanup(s.Kill)
			return s
		}
		errs = append(errs, err)
		if !errors.Is(err, errExited) || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		// The port was taken between picking and binding: try another.
	}
	t.Fatalf("start prometheus: %v", errors.Join(errs...))
	return nil
}

// Backfill writes series (OpenMetrics text) to a file in dir and turns it
// into TSDB blocks in data with promtool.
func Backfill(promtool, dir, data, series string) error {
	in := filepath.Join(dir, "series.om")
	if err := os.WriteFile(in, []byte(series), 0o600); err != nil {
		return fmt.Errorf("write backfill input: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", in, data)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("promtool tsdb create-blocks-from openmetrics: %w\n%s", err, out)
	}
	return nil
}

func writeConfig(dir string, o Options) (string, error) {
	every := o.EvalInterval
	if every <= 0 {
		every = time.Second
	}
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  evaluation_interval: %s\n", every, every)
	if o.Rules != "" {
		rules := filepath.Join(dir, "rules.yml")
		if err := os.WriteFile(rules, []byte(o.Rules), 0o600); err != nil {
			return "", fmt.Errorf("write rules: %w", err)
		}
		fmt.Fprintf(&b, "rule_files:\n  - %q\n", rules)
	}
	if len(o.ScrapeTargets) > 0 {
		fmt.Fprintf(&b, "scrape_configs:\n  - job_name: promtest\n    honor_labels: true\n    static_configs:\n      - targets: [%s]\n",
			quoteAll(o.ScrapeTargets))
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("write prometheus.yml: %w", err)
	}
	return path, nil
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// URL returns the server's base URL, "http://127.0.0.1:port".
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// Kill kills the server and waits for it to exit; its data is kept, so
// Restart brings it back with the same series. Killing a stopped server
// does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	_ = s.proc.Kill()
	<-s.exited
	s.proc = nil
}

// Restart starts the server (again, after Kill) on its port and waits until
// it is ready.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return fmt.Errorf("prometheus on port %d is already running", s.port)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	logPath := filepath.Join(s.dir, "prometheus.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("open prometheus log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(s.bin, append([]string{"--web.listen-address=" + addr}, s.args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	if err := waitReady(exited, "http://"+addr+"/-/ready"); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("prometheus on %s: %w\n%s", addr, err, tail(logPath))
	}
	s.proc, s.exited = cmd.Process, exited
	return nil
}

// waitReady polls url until it answers 200, the process exits, or
// startTimeout passes.
func waitReady(exited <-chan struct{}, url string) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", startTimeout, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("%w: %w", errExited, err)
		case <-tick.C:
		}
	}
}

// WaitValue polls an instant query until it returns exactly one sample and
// returns its value; it fails the test after 30 s.
func (s *Server) WaitValue(t testing.TB, query string) float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		v, err := instant(s.URL(), query)
		if err == nil {
			return v
		}
		last = err.Error()
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("query %s: no single sample after 30s: %s", query, last)
	return 0
}

func instant(base, query string) (float64, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	if n := len(body.Data.Result); n != 1 {
		return 0, fmt.Errorf("%d samples", n)
	}
	str, _ := body.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(str, 64)
}

func lookPath(t testing.TB, name string) string {
	t.Helper()
	return proctest.LookPath(t, "apt-get install prometheus", name)
}

var (
	freePort = proctest.FreePort
	tail     = proctest.Tail
)
