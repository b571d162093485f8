package slack_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// dropFront is a server before target (an Alertmanager) that hands it the
// next POST /api/v2/silences and then closes the connection without
// answering — Alertmanager, or a proxy before it, going away after taking
// the request —, noting whether that POST came on a connection used
// before (kept alive). Other requests pass through.
type dropFront struct {
	*httptest.Server
	mu     sync.Mutex
	seen   map[string]bool
	drops  int
	reused bool
}

func newDropFront(t *testing.T, target http.Handler) *dropFront {
	t.Helper()
	f := &dropFront{seen: map[string]bool{}, drops: 1}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		before := f.seen[r.RemoteAddr]
		f.seen[r.RemoteAddr] = true
		drop := silenceCreate(r) && f.drops > 0
		if drop {
			f.drops--
			f.reused = before
		}
		f.mu.Unlock()
		if !drop {
			target.ServeHTTP(w, r)
			return
		}
		target.ServeHTTP(httptest.NewRecorder(), r)
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// droppedReused reports whether the POST was dropped, on a kept-alive
// connection.
func (f *dropFront) droppedReused() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.drops == 0 && f.reused
}

// The auditor's case: a Silence whose connection Alertmanager's side
// closed after taking the request, on a kept-alive connection. End of file
// there was taken for an idle connection the server had closed (the
// request not taken): the user was told "silence failed, nothing changed …
// Try again" while Alertmanager held the silence, on no message, and a
// second click made a second one. The router looks the silence up and
// records it as done.
func TestASilenceWhoseConnectionDroppedAfterTheRequestIsFoundAndKept(t *testing.T) {
	am := startAlertmanager(t)
	front := newDropFront(t, proxyTo(t, am.url))
	c, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	// An earlier request (another click, a slash command) left the
	// connection kept alive.
	if _, err := c.List(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: c, Metrics: slack.NewTriageMetrics(e.reg)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U0BOB", UserName: "bob", ActionID: "alertrouter:silence:24h", ActionTS: "1700002300.000001"}, signingSecret, e.now(), nil)
	if !front.droppedReused() {
		t.Fatal("the silence's POST was not dropped on a kept-alive connection: the case is not reproduced")
	}
	list, err := am.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("silences %+v (%v), want the one Alertmanager made", list, err)
	}
	for _, r := range e.h.srv.Responses() {
		if strings.Contains(r.Text, "nothing changed") {
			t.Fatalf("answered %q while Alertmanager holds silence %s", r.Text, list[0].ID)
		}
	}
	if got := e.actionCount(slack.ActionSilence, slack.OutcomeDone); got != 1 {
		t.Fatalf("silence done %v times, want 1 (answers %+v)", got, e.h.srv.Responses())
	}
	if thread := e.h.srv.Thread(e.parent.TS); len(thread) != 1 || !strings.Contains(thread[0].Text, list[0].ID) {
		t.Fatalf("thread %+v, want the reply naming silence %s", thread, list[0].ID)
	}
	if b := strings.Join(buttons(t, e.current(t)), " "); !strings.Contains(b, "alertrouter:unsilence") || strings.Contains(b, "alertrouter:silence:") {
		t.Fatalf("buttons %q, want Unsilence and no Silence", b)
	}
}

// The same through /alertrouter silence, Alertmanager's silences not
// readable to look it up: the answer says the silence may exist, never
// that nothing changed.
func TestASilenceCommandWhoseConnectionDroppedSaysItMayHaveBeenDone(t *testing.T) {
	am := startAlertmanager(t)
	front := newDropFront(t, failingLookups(proxyTo(t, am.url)))
	c, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Alerts(context.Background(), nil); err != nil { // a kept-alive connection
		t.Fatal(err)
	}
	e := newTriageEnv(t, alert.ActionPage, nil)
	j := journalOf(t, e.store, journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: "inc/1",
		Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}, Decision: alert.Decision{Action: alert.ActionPage}})
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: c, Journal: j, Metrics: slack.NewTriageMetrics(e.reg)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	a := e.commandAnswer(t, tr, "silence inc/1 24h", "drop1", "U0BOB")
	if !front.droppedReused() {
		t.Fatal("the silence's POST was not dropped on a kept-alive connection: the case is not reproduced")
	}
	if strings.Contains(a.Text, "nothing changed") || !strings.Contains(a.Text, "may have been done") || !strings.Contains(a.Text, "Check Alertmanager's silences") {
		t.Fatalf("answer %q, want that the silence may have been made and to check Alertmanager", a.Text)
	}
	if got := e.actionCount(slack.ActionSilence, slack.OutcomeUnconfirmed); got != 1 {
		t.Fatalf("silence unconfirmed %v times, want 1", got)
	}
}
