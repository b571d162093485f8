package slack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
	sl "github.com/slack-go/slack"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const token = "xoxb-test-token"

type harness struct {
	srv   *slacktest.Server
	waits *notifytest.Waits
	logs  *notifytest.SyncBuffer
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{srv: slacktest.NewServer(token, "triage"), waits: &notifytest.Waits{}, logs: &notifytest.SyncBuffer{}}
	t.Cleanup(h.srv.Close)
	return h
}

func (h *harness) notifier(t testing.TB, mutate func(*slack.Config)) *slack.Notifier {
	t.Helper()
	cfg := slack.DefaultConfig()
	cfg.Token = token
	cfg.Channel = "#triage"
	cfg.APIURL = h.srv.APIURL()
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := slack.New(&cfg, "triage", notify.Deps{
		Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
		Retry:  notify.RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: h.waits.Wait},
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func note(kind alert.Kind, action alert.Action, status string, fps ...string) *alert.Notification {
	var rs []*alert.Result
	for _, fp := range fps {
		rs = append(rs, notifytest.Result("TTFTHigh", fp, status, action))
	}
	return notifytest.Notification("triage", kind, action, rs...)
}

// opening returns a ticket of firing alerts that opens the incident, as the
// dispatch core hands it to exactly one sender (no Ref known yet).
func opening(fps ...string) *alert.Notification {
	n := note(alert.KindFiring, alert.ActionTicket, "firing", fps...)
	n.Opening = true
	return n
}

// under returns no with the parent reference ref, as the dispatch core
// hands it to later notifications of an open incident.
func under(ref string, no *alert.Notification) *alert.Notification {
	no.Ref = ref
	return no
}

// opened returns a notifier and the notification that opened the incident
// through it, whose Ref names the parent it posted.
func (h *harness) opened(t *testing.T) (*slack.Notifier, *alert.Notification) {
	t.Helper()
	n := h.notifier(t, nil)
	first := opening("aaa")
	if err := n.Notify(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	if first.Ref == "" {
		t.Fatal("the parent's Ref was not handed back")
	}
	return n, first
}

// ref is the Ref of message m as a page's parent: "channel ts".
func ref(m slacktest.Message) string { return m.Channel + " " + m.TS }

// parentOf is the message a Ref names, "channel ts", without the decision
// a parent drawn quieter than a page adds ("C0001 1700000000.000001
// ticket").
func parentOf(r string) string {
	f := strings.Fields(r)
	if len(f) < 2 {
		return r
	}
	return f[0] + " " + f[1]
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update): %v", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Fatalf("%s differs (run go test -update to accept):\n%s", path, pretty.String())
	}
}

func TestPageBlocksMatchGolden(t *testing.T) {
	h := newHarness(t)
	no := note(alert.KindFiring, alert.ActionPage, "firing", "aaa", "bbb")
	no.Opening = true
	no.Results[1].Live = &alert.LiveSLO{Summary: "budget 37 % left · burn 1h 15.2× · 6h 7.1× · rising"}
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	msgs := h.srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("messages = %d", len(msgs))
	}
	golden(t, "page.golden.json", msgs[0].Blocks)
	if !bytes.Contains(msgs[0].Blocks, []byte("dedup_key `llm-inference-gpu/chat/TTFT`")) {
		t.Fatal("the mirrored page lacks its PagerDuty reference")
	}
	// A page's Ref is "channel ts", as older routers wrote and read it.
	if no.Ref != ref(msgs[0]) {
		t.Fatalf("Ref = %q, want the parent %q", no.Ref, ref(msgs[0]))
	}
}

// The dispatch core keeps the Ref the opening notification hands back and
// passes it to every later notification of the incident.
func TestIncidentLifecycleUsesOneParentAndItsThread(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	ctx := context.Background()
	last := under(first.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "bbb"))
	last.IncidentResolved = true
	steps := []*alert.Notification{
		under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb")),
		under(first.Ref, note(alert.KindReminder, alert.ActionTicket, "firing", "aaa", "bbb")),
		under(first.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa")),
		last,
	}
	for i, s := range steps {
		if err := n.Notify(ctx, s); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if s.Ref != first.Ref {
			t.Fatalf("step %d: Ref = %q, want the parent's %q kept", i, s.Ref, first.Ref)
		}
	}
	parents := h.srv.Parents()
	if len(parents) != 1 || ref(parents[0]) != parentOf(first.Ref) {
		t.Fatalf("parents = %+v, want the one of Ref %q", parents, first.Ref)
	}
	if got := len(h.srv.Thread(parents[0].TS)); got != 4 {
		t.Fatalf("thread replies = %d, want 4", got)
	}
	if parents[0].Updates != 1 || !bytes.Contains(parents[0].Blocks, []byte("[RESOLVED]")) {
		t.Fatalf("the parent was not edited to resolved: updates = %d, blocks = %s", parents[0].Updates, parents[0].Blocks)
	}
	golden(t, "resolved.golden.json", parents[0].Blocks)

	// The incident opening again (the core dropped the closed incident's
	// Ref) starts a new parent.
	again := opening("ccc")
	if err := n.Notify(ctx, again); err != nil {
		t.Fatal(err)
	}
	parents = h.srv.Parents()
	if len(parents) != 2 || parentOf(again.Ref) != ref(parents[1]) {
		t.Fatalf("parents = %d, Ref = %q; want a second parent handed back", len(parents), again.Ref)
	}
}

// An incident whose two alerts resolve in separate webhooks: the last
// notification carries one alert, and the parent, edited when the incident
// resolves, said "[RESOLVED] TTFTHigh (…) 1 resolved" — one of two. Its
// header now says the incident resolved, and the card labels the count as
// the last notification's.
func TestTheResolvedParentDoesNotPassTheLastCountAsTheIncidents(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	ctx := context.Background()
	first := opening("aaa", "bbb")
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	last := under(first.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "bbb"))
	last.IncidentResolved = true
	for _, no := range []*alert.Notification{under(first.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa")), last} {
		if err := n.Notify(ctx, no); err != nil {
			t.Fatal(err)
		}
	}
	parent := h.srv.Parents()[0]
	if parent.Updates != 1 {
		t.Fatalf("the parent was edited %d times, want once, resolved", parent.Updates)
	}
	header := fmt.Sprint(blocksOf(t, parent)[0]["text"].(map[string]any)["text"])
	if want := "[RESOLVED] TTFTHigh (llm-inference-gpu TTFT)"; header != want || parent.Text != want {
		t.Errorf("the resolved parent's header is %q (text %q), want %q: no count of the last notification's alerts passed as the incident's", header, parent.Text, want)
	}
	if s := sectionTexts(t, parent); !strings.Contains(s, "*resolved*: no alert of the incident fires; the last notification resolved 1 alert (below)") {
		t.Errorf("the resolved parent does not label its count as the last notification's:\n%s", s)
	}
	// The minimal message Slack gets when it refuses the card says the same.
	b, err := json.Marshal(slack.MinimalBlocks(last, "t", ""))
	if err != nil {
		t.Fatal(err)
	}
	if minimal := string(b); !strings.Contains(minimal, "Resolved: no alert of the incident fires; the last notification resolved 1 alert.") || strings.Contains(minimal, "0 firing") {
		t.Errorf("the resolved minimal message says %q", minimal)
	}
}

// An incident opening again while its Ref is still kept replies in the
// existing thread and edits the parent back to firing.
func TestOpeningUnderAKeptRefRepliesAndEditsTheParent(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	ctx := context.Background()
	reopen := under(first.Ref, opening("bbb"))
	if err := n.Notify(ctx, reopen); err != nil {
		t.Fatal(err)
	}
	parents := h.srv.Parents()
	if len(parents) != 1 || reopen.Ref != first.Ref {
		t.Fatalf("parents = %d, Ref = %q; want the one parent %q", len(parents), reopen.Ref, first.Ref)
	}
	if got := len(h.srv.Thread(parents[0].TS)); got != 1 {
		t.Fatalf("thread replies = %d, want 1", got)
	}
	if parents[0].Updates != 1 || !bytes.Contains(parents[0].Blocks, []byte("bbb")) {
		t.Fatalf("the parent was not edited: updates = %d, blocks = %s", parents[0].Updates, parents[0].Blocks)
	}
}

// Editing the parent is cosmetic: when it fails the reply stands and the
// notification succeeds.
func TestAFailedParentEditIsLoggedAndTheReplyStands(t *testing.T) {
	h := newHarness(t)
	// Slack refuses every edit (cant_update_message), through a front of
	// the stand-in: the reply goes to the parent's thread, in the parent's
	// channel (its Ref), and the edit fails.
	var updates atomic.Int32
	target, err := url.Parse(h.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat.update") {
			updates.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":false,"error":"cant_update_message"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	n := h.notifier(t, func(c *slack.Config) { c.APIURL = front.URL + "/api/" })
	ctx := context.Background()
	first := opening("aaa")
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	last := under(first.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	last.IncidentResolved = true
	if err := n.Notify(ctx, last); err != nil {
		t.Fatal(err)
	}
	if got := len(h.srv.Thread(h.srv.Parents()[0].TS)); got != 1 {
		t.Fatalf("thread replies = %d, want 1", got)
	}
	if updates.Load() != 1 || !strings.Contains(h.logs.String(), "edit parent message failed") {
		t.Fatalf("chat.update calls = %d, logs = %s; want one failed edit, logged", updates.Load(), h.logs.String())
	}
}

func TestStormStaysWithinSlackLimits(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	fps := make([]string, 200)
	for i := range fps {
		fps[i] = fmt.Sprintf("fp%03d", i)
	}
	// One webhook of 200 alerts: one message, cut to 50 blocks.
	first := note(alert.KindFiring, alert.ActionPage, "firing", fps...)
	first.Opening = true
	if err := n.Notify(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	var blocks []json.RawMessage
	msgs := h.srv.Messages()
	if err := json.Unmarshal(msgs[0].Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 50 || !bytes.Contains(blocks[49], []byte("and ")) || !bytes.Contains(blocks[49], []byte(" more")) {
		t.Fatalf("blocks = %d, last = %s", len(blocks), blocks[len(blocks)-1])
	}
	// Twenty more webhooks of ten alerts each: one call each, all in the thread.
	for i := range 20 {
		if err := n.Notify(context.Background(), under(first.Ref, note(alert.KindFiring, alert.ActionPage, "firing", fps[i*10:i*10+10]...))); err != nil {
			t.Fatal(err)
		}
	}
	if calls := h.srv.Calls("chat.postMessage"); calls != 21 {
		t.Fatalf("postMessage calls = %d, want 21", calls)
	}
	if len(h.srv.Parents()) != 1 {
		t.Fatalf("parents = %d, want 1", len(h.srv.Parents()))
	}
}

// The notifier keeps no state: one replica posts the parent and hands its
// Ref back, every replica threads under the Ref it is given.
func TestSetsRefOnTheParentItPostsAndThreadsUnderAGivenRef(t *testing.T) {
	h := newHarness(t)
	a, first := h.opened(t)
	b := h.notifier(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, n := range []*slack.Notifier{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			no := under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", fmt.Sprint("fp", i)))
			if err := n.Notify(ctx, no); err != nil {
				t.Error(err)
			}
			if no.Ref != first.Ref {
				t.Errorf("Ref = %q, want %q kept", no.Ref, first.Ref)
			}
		}()
	}
	wg.Wait()
	parents := h.srv.Parents()
	if len(parents) != 1 || ref(parents[0]) != parentOf(first.Ref) {
		t.Fatalf("parents = %+v, want the one of Ref %q", parents, first.Ref)
	}
	if got := len(h.srv.Thread(parents[0].TS)); got != 4 {
		t.Fatalf("thread replies = %d, want 4", got)
	}
	if parents[0].Updates != 0 {
		t.Fatalf("parent updates = %d, want 0 (no reply opens or closes the incident)", parents[0].Updates)
	}
}

// A notification that closes an incident with no known parent posts one,
// and hands no Ref back: nothing will thread under it.
func TestAResolveWithoutRefPostsAParentAndHandsNoRefBack(t *testing.T) {
	h := newHarness(t)
	no := note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa")
	no.IncidentResolved = true
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if got := len(h.srv.Parents()); got != 1 || no.Ref != "" {
		t.Fatalf("parents = %d, Ref = %q; want 1 and none", got, no.Ref)
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name          string
		faults        []slacktest.Fault
		mutate        func(*slack.Config)
		wantErr       bool
		wantRetryable bool
		wantWaitMin   time.Duration
		// wantText is in the error (an operator's next step).
		wantText string
	}{
		{name: "a 429 is retried after its Retry-After", faults: []slacktest.Fault{{Status: 429, RetryAfter: "2"}}, wantWaitMin: 2 * time.Second},
		{name: "a 500 is retried", faults: []slacktest.Fault{{Status: 500}, {Status: 500}}},
		{name: "service_unavailable is retried", faults: []slacktest.Fault{{Error: "service_unavailable"}}},
		// Slack says internal_error may come after the post was made: not
		// posted again at once, a retryable error for Alertmanager's retry.
		{name: "internal_error on a post is left to Alertmanager's retry", faults: []slacktest.Fault{{Error: "internal_error"}}, wantErr: true, wantRetryable: true},
		{name: "invalid_auth is permanent", mutate: func(c *slack.Config) { c.Token = "xoxb-wrong" }, wantErr: true},
		// Which channel, when the channel is a template (an audit of the
		// logs: "check channel" named none).
		{name: "channel_not_found is permanent", mutate: func(c *slack.Config) { c.Channel = "#nope" }, wantErr: true, wantText: "(channel #nope)"},
		{name: "not_in_channel is permanent", faults: []slacktest.Fault{{Error: "not_in_channel"}}, wantErr: true, wantText: "(channel #triage)"},
		{
			name:   "a timeout is retryable",
			faults: []slacktest.Fault{{Hang: true}, {Hang: true}, {Hang: true}, {Hang: true}, {Hang: true}},
			mutate: func(c *slack.Config) { c.Timeout = model.Duration(50 * time.Millisecond) }, wantErr: true, wantRetryable: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.Fail(tt.faults...)
			no := opening("aaa")
			err := h.notifier(t, tt.mutate).Notify(context.Background(), no)
			if !tt.wantErr {
				if err != nil || len(h.srv.Messages()) != 1 || parentOf(no.Ref) != ref(h.srv.Messages()[0]) {
					t.Fatalf("err = %v, messages = %d, Ref = %q", err, len(h.srv.Messages()), no.Ref)
				}
				for _, w := range h.waits.All() {
					if w < tt.wantWaitMin {
						t.Fatalf("waited %v, want at least %v", w, tt.wantWaitMin)
					}
				}
				return
			}
			if err == nil || alert.Retryable(err) != tt.wantRetryable {
				t.Fatalf("err = %v, retryable = %v; want retryable = %v", err, alert.Retryable(err), tt.wantRetryable)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %v; want it to say %q", err, tt.wantText)
			}
			if strings.Contains(err.Error(), token) || strings.Contains(h.logs.String(), token) {
				t.Fatal("the token leaked")
			}
			// A failed post hands no Ref back: the retry posts the parent.
			if no.Ref != "" {
				t.Fatalf("a failed post handed back Ref %q", no.Ref)
			}
		})
	}
}

func TestTemplateErrorFallsBackToTheBuiltinTitle(t *testing.T) {
	h := newHarness(t)
	if err := h.notifier(t, func(c *slack.Config) { c.Title = "{{ .Nope.Deeper }}" }).Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	msgs := h.srv.Messages()
	if len(msgs) != 1 || msgs[0].Text != "[TICKET] TTFTHigh (llm-inference-gpu TTFT) 1 firing" {
		t.Fatalf("messages = %+v", msgs)
	}
	if !strings.Contains(h.logs.String(), "template render failed") {
		t.Fatal("the template error was not logged")
	}
}

func TestPagesAreSkippedWhenNotMirrored(t *testing.T) {
	h := newHarness(t)
	no := note(alert.KindFiring, alert.ActionPage, "firing", "aaa")
	no.Opening = true
	if err := h.notifier(t, func(c *slack.Config) { c.MirrorPages = false }).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if len(h.srv.Messages()) != 0 || no.Ref != "" {
		t.Fatalf("a page was posted with mirror_pages false (Ref %q)", no.Ref)
	}
}

// With mirror_pages false, a ticket whose alert escalated to a page and
// resolved decided page: its resolve was skipped as a page, and the
// ticket's card stayed firing for good (a review). A resolve of an
// incident with a card here resolves it; a page with none posts nothing.
func TestAnEscalatedTicketsResolveReachesItsCardWithoutMirroring(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) { c.MirrorPages = false })
	ctx := context.Background()
	first := opening("aaa")
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	last := under(first.Ref, note(alert.KindResolved, alert.ActionPage, "resolved", "aaa"))
	last.IncidentResolved = true
	if err := n.Notify(ctx, last); err != nil {
		t.Fatal(err)
	}
	parents := h.srv.Parents()
	if len(parents) != 1 || parents[0].Updates != 1 || !bytes.Contains(parents[0].Blocks, []byte("[RESOLVED]")) {
		t.Fatalf("parents = %+v; want the ticket's card edited to resolved", parents)
	}
	before := len(h.srv.Messages())
	unmirrored := note(alert.KindResolved, alert.ActionPage, "resolved", "bbb")
	unmirrored.IncidentResolved = true
	if err := n.Notify(ctx, unmirrored); err != nil {
		t.Fatal(err)
	}
	if got := len(h.srv.Messages()); got != before {
		t.Errorf("a page's resolve with no card here posted a message (%d messages, %d before)", got, before)
	}
}

// A Ref whose message is gone (deleted in Slack): the notification posts a
// new parent and hands its Ref back for the dispatch core to keep.
func TestADeletedParentIsReplaced(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	gone := h.srv.ChannelID("triage") + " 1.000"
	no := under(gone, note(alert.KindFiring, alert.ActionTicket, "firing", "aaa"))
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	parents := h.srv.Parents()
	if len(parents) != 1 {
		t.Fatalf("parents = %d, want 1", len(parents))
	}
	if parentOf(no.Ref) != ref(parents[0]) {
		t.Fatalf("Ref = %q, want the new parent %q", no.Ref, ref(parents[0]))
	}

	// Closing the incident under a gone parent posts it standalone and hands
	// back no new Ref.
	last := under(gone, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	last.IncidentResolved = true
	if err := n.Notify(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	if parents := h.srv.Parents(); len(parents) != 2 || last.Ref != gone {
		t.Fatalf("parents = %d, Ref = %q; want 2 and the Ref untouched", len(parents), last.Ref)
	}
}

func TestCheckCallsAuthTest(t *testing.T) {
	h := newHarness(t)
	if err := h.notifier(t, nil).Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := h.notifier(t, func(c *slack.Config) { c.Token = "xoxb-bad" }).Check(context.Background())
	if err == nil || alert.Retryable(err) {
		t.Fatalf("err = %v, want a permanent invalid_auth", err)
	}
}

func TestConfig(t *testing.T) {
	tests := []struct{ name, yaml, wantErr string }{
		{"defaults are filled", "token: x\nchannel: '#t'", ""},
		{"a token is required", "channel: '#t'", "token: one of token or token_file is required"},
		{"a channel is required", "token: x", "channel: is required"},
		{"the api_url must be absolute", "token: x\nchannel: c\napi_url: /api/", "api_url:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c slack.Config
			if err := yaml.UnmarshalStrict([]byte(tt.yaml), &c); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil || !c.MirrorPages || c.APIURL != slack.DefaultAPIURL {
					t.Fatalf("err = %v, config = %+v", err, c)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	c := slack.DefaultConfig()
	c.Token = "xoxb-very-secret"
	b, _ := yaml.Marshal(c)
	if strings.Contains(string(b), "very-secret") {
		t.Fatalf("the token printed: %s", b)
	}
}

func BenchmarkBlocks(b *testing.B) {
	fps := make([]string, 100)
	for i := range fps {
		fps[i] = fmt.Sprint("fp", i)
	}
	no := note(alert.KindFiring, alert.ActionPage, "firing", fps...)
	data := notify.NewData(no)
	b.ReportAllocs()
	for b.Loop() {
		slack.Blocks(no, data, "title", "text", "ref")
	}
}

func TestBlocksLinkTheIncidentsConsolePage(t *testing.T) {
	no := opening("aaa")
	no.ConsoleURL = "https://alertrouter.example.com/incidents/llm-inference-gpu%2Fchat%2FTTFT"
	b, err := json.Marshal(slack.Blocks(no, notify.NewData(no), "title", "text", ""))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `\u003chttps://alertrouter.example.com/incidents/llm-inference-gpu%2Fchat%2FTTFT|Console\u003e`) {
		t.Fatalf("blocks lack the console link: %s", b)
	}
}

// Only http(s) links reach Slack, and a "|" in a URL cannot relabel its
// link: alert annotations and generator URLs come from whoever writes rules.
func TestBlocksLinkOnlyWebPagesUnderTheirOwnLabel(t *testing.T) {
	no := opening("aaa")
	a := no.Results[0].Alert
	a.Annotations["runbook_url"] = "javascript:alert(4)"
	a.Annotations["dashboard_url"] = "https://evil.example/|Runbook (official)> <https://x"
	a.GeneratorURL = "data:text/html,<script>alert(1)</script>"
	b, err := json.Marshal(slack.Blocks(no, notify.NewData(no), "title", "text", ""))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if strings.Contains(got, "javascript:") || strings.Contains(got, "data:text") {
		t.Fatalf("blocks carry a link that is not a web page: %s", got)
	}
	if !strings.Contains(got, `https://evil.example/%7CRunbook (official)\u0026gt; \u0026lt;https://x|Dashboard\u003e`) {
		t.Fatalf("the dashboard URL's | was not escaped (it could relabel the link): %s", got)
	}
}

// An update of an open incident replies with what changed — the counts, the
// decision and one line per alert, in one section — not the parent's whole
// card again; a reminder says so.
func TestAnUpdateRepliesWithWhatChanged(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	ctx := context.Background()
	update := under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb", "ccc", "ddd"))
	gone := notifytest.Result("TTFTHigh", "ddd", "resolved", alert.ActionTicket)
	update.Results[2] = gone
	reminder := under(first.Ref, note(alert.KindReminder, alert.ActionTicket, "firing", "aaa"))
	var many []string
	for i := range 14 {
		many = append(many, fmt.Sprintf("m%02d", i))
	}
	storm := under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", many...))
	for _, no := range []*alert.Notification{update, reminder, storm} {
		if err := n.Notify(ctx, no); err != nil {
			t.Fatal(err)
		}
	}
	parent := h.srv.Parents()[0]
	replies := h.srv.Thread(parent.TS)
	if len(replies) != 3 {
		t.Fatalf("thread replies = %d, want 3", len(replies))
	}
	golden(t, "update.golden.json", replies[0].Blocks)
	if want := "Update of " + update.Incident + ": 2 firing, 1 resolved"; replies[0].Text != want {
		t.Fatalf("reply text = %q, want %q", replies[0].Text, want)
	}
	for _, fp := range []string{"bbb", "ccc", "ddd"} {
		if !bytes.Contains(replies[0].Blocks, []byte("`"+fp+"`")) {
			t.Fatalf("the update lacks alert %s: %s", fp, replies[0].Blocks)
		}
	}
	// The card's parts stay in the parent: no header, hints or links again.
	for _, part := range []string{`"type":"header"`, "*Hints:*", "Runbook"} {
		if bytes.Contains(replies[0].Blocks, []byte(part)) || !bytes.Contains(parent.Blocks, []byte(part)) {
			t.Fatalf("%q: want it in the parent only; parent %s, reply %s", part, parent.Blocks, replies[0].Blocks)
		}
	}
	if !bytes.Contains(replies[1].Blocks, []byte("*Reminder:* 1 firing")) {
		t.Fatalf("the reminder reply = %s", replies[1].Blocks)
	}
	// Many alerts (the update window gathers several webhooks') stay a
	// digest: the first ten listed, the rest counted.
	var blocks []map[string]any
	if err := json.Unmarshal(replies[2].Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 {
		t.Fatalf("the storm's reply has %d blocks, want one section: %s", len(blocks), replies[2].Blocks)
	}
	body := replies[2].Blocks
	if !bytes.Contains(body, []byte("*Update:* 14 firing")) || !bytes.Contains(body, []byte("`m09`")) ||
		bytes.Contains(body, []byte("`m10`")) || !bytes.Contains(body, []byte("…and 4 more")) {
		t.Fatalf("the storm's reply = %s, want m00..m09 listed and 4 more counted", body)
	}
}

// A ticket whose alert now pages (the dispatch core marks the update
// Escalated): the parent, whose header said [TICKET], is redrawn as the
// page, and the thread still gets the update. A plain update leaves the
// parent as it was.
func TestAnEscalationRedrawsTheParent(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	ctx := context.Background()
	if err := n.Notify(ctx, under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"))); err != nil {
		t.Fatal(err)
	}
	if p := h.srv.Parents()[0]; p.Updates != 0 || !bytes.Contains(p.Blocks, []byte("[TICKET]")) {
		t.Fatalf("a plain update touched the parent (%d updates): %s", p.Updates, p.Blocks)
	}
	esc := under(first.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "aaa"))
	esc.Escalated = true
	if err := n.Notify(ctx, esc); err != nil {
		t.Fatal(err)
	}
	p := h.srv.Parents()[0]
	if p.Updates != 1 || !bytes.Contains(p.Blocks, []byte("[PAGE]")) || bytes.Contains(p.Blocks, []byte("[TICKET]")) {
		t.Fatalf("after the escalation the parent (%d updates) reads: %s; want it redrawn as the page", p.Updates, p.Blocks)
	}
	// Drawn from the update, it lists the update's alerts: it says so, and
	// where the incident's earlier ones are (it showed "1 firing" while
	// the earlier alerts still fired, and said nothing of them).
	if !bytes.Contains(p.Blocks, []byte("it lists that update's alerts and the incident's earlier ones Alertmanager sent again with it")) {
		t.Fatalf("the redrawn parent does not say which alerts it lists: %s", p.Blocks)
	}
	if replies := h.srv.Thread(p.TS); len(replies) != 2 {
		t.Fatalf("thread replies = %d, want the update and the escalation", len(replies))
	}
}

// A parent redrawn for a page joining a ticket's incident lists, beside
// the update's alert, the incident's earlier alerts Alertmanager sent again
// with it, still firing, and no other incident's (an audit: the ticket's
// alert, still firing, was shown nowhere once the parent listing it was
// redrawn, and the header said "1 firing").
func TestARedrawnParentListsTheEarlierAlertsStillFiring(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	page := under(first.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "ccc"))
	earlier := notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionTicket)
	earlier.Incident, earlier.Receivers = page.Incident, []string{page.Receiver}
	resolved := notifytest.Result("TTFTHigh", "rrr", "resolved", alert.ActionTicket)
	resolved.Incident, resolved.Receivers = page.Incident, []string{page.Receiver}
	elsewhere := notifytest.Result("TTFTHigh", "zzz", "firing", alert.ActionTicket)
	elsewhere.Incident, elsewhere.Receivers = "another/incident", []string{page.Receiver}
	otherTeam := notifytest.Result("TTFTHigh", "ooo", "firing", alert.ActionTicket)
	otherTeam.Incident, otherTeam.Receivers = page.Incident, []string{"another-team"}
	page.Webhook = append(slices.Clone(page.Results), earlier, resolved, elsewhere, otherTeam)
	// The dispatch core's template data holds the notification's own alerts.
	page.Data = &template.Data{Receiver: page.Receiver, Status: "firing", Alerts: template.Alerts{page.Results[0].Alert.Alert}}
	if err := n.Notify(context.Background(), page); err != nil {
		t.Fatal(err)
	}
	p := h.srv.Parents()[0]
	if p.Updates != 1 || !strings.HasPrefix(header(t, p), "[PAGE]") || !strings.Contains(header(t, p), "2 firing") {
		t.Fatalf("the parent (%d updates, header %q) was not redrawn as the page of 2 firing alerts", p.Updates, header(t, p))
	}
	for _, fp := range []string{"aaa", "ccc"} {
		if !bytes.Contains(p.Blocks, []byte("`"+fp+"`")) {
			t.Errorf("the redrawn parent does not list %s: %s", fp, p.Blocks)
		}
	}
	for _, fp := range []string{"rrr", "zzz", "ooo"} {
		if bytes.Contains(p.Blocks, []byte("`"+fp+"`")) {
			t.Errorf("the redrawn parent lists %s, not a firing alert of its incident and receiver: %s", fp, p.Blocks)
		}
	}
}

// Long summaries are cut in an update's digest, so its ten lines and the
// count of the rest fit Slack's 3000 characters of one section.
func TestAnUpdateDigestFitsOneSection(t *testing.T) {
	h := newHarness(t)
	n, first := h.opened(t)
	var fps []string
	for i := range 12 {
		fps = append(fps, fmt.Sprintf("long%02d", i))
	}
	no := under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", fps...))
	for _, r := range no.Results {
		r.Alert.Annotations = template.KV{"summary": strings.Repeat("queue time & compute <p99> ", 40)}
	}
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	reply := h.srv.Thread(h.srv.Parents()[0].TS)[0]
	var blocks []struct {
		Text struct{ Text string } `json:"text"`
	}
	if err := json.Unmarshal(reply.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	text := blocks[0].Text.Text
	if len(blocks) != 1 || utf8.RuneCountInString(text) > 3000 || !strings.HasSuffix(text, "…and 2 more") ||
		!strings.Contains(text, "`long09`") {
		t.Fatalf("digest (%d blocks, %d runes) = %q, want ten lines and \"…and 2 more\" within 3000", len(blocks), utf8.RuneCountInString(text), text)
	}
}

// blocksOf decodes the blocks of message m.
func blocksOf(t *testing.T, m slacktest.Message) []map[string]any {
	t.Helper()
	var blocks []map[string]any
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// longURL is a URL of about n characters with many query parameters, as
// Prometheus' and Grafana's links are: each "&" takes five once escaped.
func longURL(base string, n int) string {
	u := base + "?x=1"
	for i := 0; len(u) < n; i++ {
		u += fmt.Sprintf("&var-p%d=v%d", i, i)
	}
	return u
}

// Realistic links — a generator URL, a Grafana dashboard with its
// variables, a runbook — each within the limit but together over the 3000
// characters one context element holds: each link is an element of its
// own, and Slack (the stand-in enforces its limits) takes the message.
func TestLongLinksFitSlacksLimits(t *testing.T) {
	h := newHarness(t)
	no := opening("aaa")
	a := no.Results[0].Alert
	a.GeneratorURL = longURL("http://prometheus.example.com/graph", 995)
	a.Annotations["dashboard_url"] = longURL("https://grafana.example.com/d/ttft", 990)
	a.Annotations["runbook_url"] = longURL("https://runbooks.example.com/ttft", 900)
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatalf("Notify: %v (Slack refused the links)", err)
	}
	msgs := h.srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	var links []string
	for _, b := range blocksOf(t, msgs[0]) {
		if b["type"] != "context" {
			continue
		}
		for _, e := range b["elements"].([]any) {
			links = append(links, e.(map[string]any)["text"].(string))
		}
	}
	var joined string
	for _, l := range links {
		joined += l
	}
	for _, label := range []string{"|Runbook>", "|Dashboard>", "|Prometheus>", "|Silence>"} {
		if !strings.Contains(joined, label) {
			t.Errorf("the message lacks its %s link: %q", label, links)
		}
	}
	if len(joined) <= slacktest.MaxSectionText {
		t.Fatalf("the links are %d characters: the test needs more than one element's %d", len(joined), slacktest.MaxSectionText)
	}
}

// A ticket of many alerts with long summaries stays under the size at
// which Slack refuses a message (msg_blocks_too_long), saying how many
// alerts it leaves out; with the triage buttons too, which take the place
// of an alert, not of "…and N more".
func TestManyLongAlertsFitOneMessage(t *testing.T) {
	for _, tc := range []struct {
		name          string
		long, buttons bool
	}{{"long summaries", true, false}, {"long summaries and buttons", true, true}, {"short summaries and buttons", false, true}} {
		buttons := tc.buttons
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			fps := make([]string, 100)
			for i := range fps {
				fps[i] = fmt.Sprintf("fp%03d", i)
			}
			no := opening(fps...)
			for _, r := range no.Results {
				if tc.long {
					r.Alert.Annotations["summary"] = strings.Repeat("consumer lag above threshold ", 14) // ~400 characters
				}
			}
			n := h.notifier(t, func(c *slack.Config) {
				if buttons {
					c.Actions = slack.TriageActions{Names: []string{slack.ActionEscalate, slack.ActionSilence}}
					c.SigningSecret = "s3cret"
				}
			})
			if err := n.Notify(context.Background(), no); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			blocks := blocksOf(t, h.srv.Messages()[0])
			shown, more := 0, 0
			for _, b := range blocks {
				id, _ := b["block_id"].(string)
				switch {
				case strings.HasPrefix(id, "alert-"):
					shown++
				case strings.HasPrefix(id, "more-"):
					text := b["elements"].([]any)[0].(map[string]any)["text"].(string)
					if _, err := fmt.Sscanf(text, "…and %d more", &more); err != nil {
						t.Fatalf("the more line reads %q", text)
					}
				}
			}
			if shown == 0 || shown+more != len(fps) {
				t.Fatalf("%d alerts shown and %d said to be more, want %d in all", shown, more, len(fps))
			}
			if last := blocks[len(blocks)-1]; buttons && last["type"] != "actions" {
				t.Fatalf("the last block is %v, want the buttons", last["type"])
			}
		})
	}
}

// When Slack refuses the message as drawn (a limit the drawing missed), it
// is sent once more as a minimal message — a ticket that says less rather
// than none; a second refusal is permanent.
func TestARefusedMessageIsSentOnceMoreMinimal(t *testing.T) {
	h := newHarness(t)
	h.srv.Fail(slacktest.Fault{Error: "msg_blocks_too_long"})
	no := opening("aaa", "bbb")
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatalf("Notify: %v, want the minimal message sent", err)
	}
	msgs := h.srv.Messages()
	if len(msgs) != 1 || parentOf(no.Ref) != ref(msgs[0]) {
		t.Fatalf("%d messages, Ref %q; want the minimal message as the parent", len(msgs), no.Ref)
	}
	body := string(msgs[0].Blocks)
	if !strings.Contains(body, "Slack refused the full message") || !strings.Contains(body, "2 firing") || strings.Contains(body, "alert-0") {
		t.Fatalf("the minimal message: %s", body)
	}
	if !strings.Contains(h.logs.String(), "msg_blocks_too_long") {
		t.Errorf("the refusal was not logged:\n%s", h.logs.String())
	}

	// A page's minimal message still names its PagerDuty incident.
	h = newHarness(t)
	h.srv.Fail(slacktest.Fault{Error: "invalid_blocks"})
	page := note(alert.KindFiring, alert.ActionPage, "firing", "aaa")
	page.Opening = true
	if err := h.notifier(t, nil).Notify(context.Background(), page); err != nil {
		t.Fatal(err)
	}
	if body := string(h.srv.Messages()[0].Blocks); !strings.Contains(body, "Slack refused the full message") || !strings.Contains(body, "dedup_key") {
		t.Fatalf("a page's minimal message lacks its PagerDuty dedup_key: %s", body)
	}

	h = newHarness(t)
	h.srv.Fail(slacktest.Fault{Error: "invalid_blocks"}, slacktest.Fault{Error: "invalid_blocks"})
	err := h.notifier(t, nil).Notify(context.Background(), opening("aaa"))
	if err == nil || alert.Retryable(err) {
		t.Fatalf("two refusals: err = %v, want a permanent failure", err)
	}
}

// The minimal message is what Slack is sent when it refused the full one:
// its header showed bidi controls as [U+200F] after cutting the title to
// 150 characters, so a title with RLMs (a Hebrew or Arabic annotation's)
// passed the limit and the stand-in, as Slack, refused it too — the
// ticket dead-lettered (an audit). Shown first and then cut, it posts.
func TestTheMinimalMessageOfABidiTitleFitsTheHeader(t *testing.T) {
	h := newHarness(t)
	h.srv.Fail(slacktest.Fault{Error: "msg_blocks_too_long"})
	name := "DiskFull" + strings.Repeat("\u200f", 20)
	r := notifytest.Result(name, "aaa", "firing", alert.ActionTicket)
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, r)
	no.Data.GroupLabels["alertname"], no.Data.CommonLabels["alertname"] = name, name
	no.Opening = true
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatalf("Notify: %v, want the minimal message posted", err)
	}
	msgs := h.srv.Messages()
	if len(msgs) != 1 || !strings.Contains(string(msgs[0].Blocks), "Slack refused the full message") {
		t.Fatalf("%d messages posted, want the minimal one", len(msgs))
	}
	header := slack.MinimalBlocks(no, "[TICKET] "+name+strings.Repeat(" x", 60), "")[0].(*sl.HeaderBlock).Text.Text
	if n := utf8.RuneCountInString(header); n > slacktest.MaxHeaderText || !strings.Contains(header, "[U+200F]") {
		t.Errorf("minimal header of %d characters: %q, want at most %d with the controls shown", n, header, slacktest.MaxHeaderText)
	}
}

// A message's fallback text — what Slack shows in notifications — is cut
// as Alertmanager cuts a Slack title. Slack reads it as mrkdwn: the
// operator's own mention in the title works, as in Alertmanager, while an
// alert's label must not notify a whole channel (escaped).
func TestFallbackTextIsBoundedAndEscaped(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) {
		c.Title = "<!here> {{ .CommonLabels.alertname }} " + strings.Repeat("x", 5000)
	})
	no := opening("aaa")
	no.Data.CommonLabels = template.KV{"alertname": "<!channel>"}
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	text := h.srv.Messages()[0].Text
	if !strings.HasPrefix(text, "<!here> &lt;!channel&gt; xxx") || strings.Contains(text, "<!channel>") {
		t.Errorf("fallback text = %.80q, want the operator's <!here> and the label escaped", text)
	}
	if utf8.RuneCountInString(text) > 1100 {
		t.Errorf("fallback text is %d characters, want it cut near 1024", utf8.RuneCountInString(text))
	}
	// The header is plain text (Slack parses no markup there): the title
	// as rendered.
	if h := blocksOf(t, h.srv.Messages()[0])[0]["text"].(map[string]any)["text"].(string); !strings.HasPrefix(h, "<!here> <!channel> xxx") {
		t.Errorf("header = %.80q, want the title as rendered", h)
	}
}

// A page routed to Slack alone (no PagerDuty on its route) does not claim
// a PagerDuty incident: no "PagerDuty: paged" line, and the triage offers
// Escalate rather than PagerDuty's Ack.
func TestAPageNotSentToPagerDutyDoesNotSaySo(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) {
		c.SigningSecret = "s3cret"
		c.Actions = slack.TriageActions{Names: []string{slack.ActionAck, slack.ActionEscalate}}
	})
	no := note(alert.KindFiring, alert.ActionPage, "firing", "aaa")
	no.Opening, no.Paged = true, false
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	body := string(h.srv.Messages()[0].Blocks)
	if strings.Contains(body, "PagerDuty:") {
		t.Errorf("a page PagerDuty never received names a PagerDuty incident: %s", body)
	}
	if strings.Contains(body, "alertrouter:ack") || !strings.Contains(body, "alertrouter:escalate") {
		t.Errorf("the buttons of a page PagerDuty never received: %s", body)
	}
}
