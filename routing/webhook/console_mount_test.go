package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
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
