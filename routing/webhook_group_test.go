package routing_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing"
)

// incomingWebhook records the messages posted to a Slack incoming webhook.
type incomingWebhook struct {
	mu    sync.Mutex
	posts []map[string]any
}

func (s *incomingWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.posts = append(s.posts, m)
	s.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

func (s *incomingWebhook) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.posts {
		t, _ := m["text"].(string)
		out = append(out, t)
	}
	return out
}

// webhookSlack makes receiver "slack" of p post to an incoming webhook
// (Alertmanager's api_url, no token) with the operator's title, as an
// imported config does.
func webhookSlack(t *testing.T, p *routing.Pipeline, title string) *incomingWebhook {
	t.Helper()
	s := &incomingWebhook{}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := slack.DefaultConfig()
	cfg.APIURL = srv.URL + "/services/T000/B000/x"
	cfg.Title = title
	n, err := slack.New(&cfg, "slack", notify.Deps{Logger: slog.New(slog.DiscardHandler),
		Retry: notify.RetryPolicy{MaxAttempts: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	p.Receivers["slack"] = []routing.Integration{{Name: "slack/0", Notifier: n, SendResolved: true}}
	return s
}

// In incoming-webhook mode every notification is a message of its own: no
// parent or thread holds the alerts notified before. The operator's
// templates read the incident as Alertmanager's webhook held it, as
// Alertmanager renders its group: when two pods join one already firing,
// [FIRING:{{ .Alerts.Firing | len }}] says 3 (not the 2 that changed) and
// (index .Alerts 0) is the first pod, as in Alertmanager's own message.
func TestIncomingWebhookTemplatesReadTheWholeGroup(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	hook := webhookSlack(t, p, `[{{ .Status | toUpper }}:{{ .Alerts.Firing | len }}] {{ (index .Alerts 0).Labels.pod }} of {{ len .Alerts }}`)
	mustProcess(t, p, tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-0"))
	mustProcess(t, p,
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-0"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-1"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-2"))
	// Alertmanager repeating the unchanged group sends nothing.
	mustProcess(t, p,
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-0"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-1"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-2"))
	mustProcess(t, p,
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-0"),
		tAlert("KubePodCrashLooping", "resolved", "ticket", "pod", "api-1"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-2"))
	want := []string{
		"[FIRING:1] api-0 of 1",
		"[FIRING:3] api-0 of 3", // the two new pods and api-0, still firing
		"[FIRING:2] api-0 of 3", // api-1 resolved, the others still firing
	}
	got := hook.texts()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("messages posted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// With send_resolved: false Alertmanager leaves resolved alerts out of what
// the integration renders: when api-0 resolves while api-1 fires and api-2
// joins, its message counts two of two and (index .Alerts 0) is api-1 —
// not the resolved api-0 named as the problem.
func TestIncomingWebhookTemplatesLeaveResolvedAlertsOutWithoutSendResolved(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	hook := webhookSlack(t, p, `[{{ .Status | toUpper }}:{{ .Alerts.Firing | len }}] {{ (index .Alerts 0).Labels.pod }} of {{ len .Alerts }}`)
	p.Receivers["slack"][0].SendResolved = false
	mustProcess(t, p,
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-0"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-1"))
	mustProcess(t, p,
		tAlert("KubePodCrashLooping", "resolved", "ticket", "pod", "api-0"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-1"),
		tAlert("KubePodCrashLooping", "firing", "ticket", "pod", "api-2"))
	want := []string{"[FIRING:2] api-0 of 2", "[FIRING:2] api-1 of 2"}
	if got := hook.texts(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("messages posted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
