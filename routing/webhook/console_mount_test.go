package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/routing/webhook"
)

// consoleRuntime is a Runtime with a console.
type consoleRuntime struct{ console http.Handler }

func (consoleRuntime) Current() webhook.Generation     { return webhook.Generation{} }
func (consoleRuntime) Ready(ctx context.Context) error { return nil }
func (consoleRuntime) Reload() error                   { return nil }
func (r consoleRuntime) Console() http.Handler         { return r.console }

// get returns the status and body of GET url.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestConsoleIsMountedBesideTheEdge(t *testing.T) {
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "console "+r.Method+" "+r.URL.Path)
	})
	srv := httptest.NewServer(webhook.NewServer(consoleRuntime{console}, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	for path, want := range map[string]string{
		"/":                   "console GET /",
		"/decisions?action=x": "console GET /decisions",
		"/incidents/a%2Fb":    "console GET /incidents/a/b",
		"/-/healthy":          "OK\n",
	} {
		if _, b := get(t, srv.URL+path); string(b) != want {
			t.Errorf("GET %s = %q, want %q", path, b, want)
		}
	}
	resp, err := http.Post(srv.URL+"/dead-letters/1-0/replay", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "console POST /dead-letters/1-0/replay" {
		t.Fatalf("POST replay reached %q", b)
	}
}

// Go's profiles are served under /debug/pprof/ beside the console, as
// Prometheus and Alertmanager serve them: the index, a named profile and a
// CPU profile (gzip-compressed protobuf).
func TestProfilesAreServedBesideTheConsole(t *testing.T) {
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "console "+r.URL.Path)
	})
	srv := httptest.NewServer(webhook.NewServer(consoleRuntime{console}, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	if code, b := get(t, srv.URL+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(string(b), "goroutine") {
		t.Errorf("GET /debug/pprof/ = %d %.80q, want the index of profiles", code, b)
	}
	if code, b := get(t, srv.URL+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.HasPrefix(string(b), "goroutine profile:") {
		t.Errorf("GET /debug/pprof/goroutine?debug=1 = %d %.80q, want the goroutine profile", code, b)
	}
	if code, b := get(t, srv.URL+"/debug/pprof/profile?seconds=1"); code != http.StatusOK || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("GET /debug/pprof/profile = %d, %d bytes, want a gzip-compressed CPU profile", code, len(b))
	}
	if code, b := get(t, srv.URL+"/debug/pprof/nosuchprofile"); code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/nosuchprofile = %d %.80q, want 404", code, b)
	}
}
