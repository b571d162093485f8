package slack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v2"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const token = "xoxb-test-token"

type harness struct {
	srv   *slacktest.Server
	store *store.Memory
	waits *notifytest.Waits
	logs  *bytes.Buffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{srv: slacktest.NewServer(token, "triage"), store: store.NewMemory(), waits: &notifytest.Waits{}, logs: &bytes.Buffer{}}
	t.Cleanup(h.srv.Close)
	return h
}

func (h *harness) notifier(t *testing.T, mutate func(*slack.Config)) *slack.Notifier {
	t.Helper()
	cfg := slack.DefaultConfig()
	cfg.Token = token
	cfg.Channel = "#triage"
	cfg.APIURL = h.srv.APIURL()
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := slack.New(&cfg, "triage", notify.Deps{
		Store:     h.store,
		KeyPrefix: "ar:",
		Logger:    slog.New(slog.NewTextHandler(h.logs, nil)),
		Retry:     notify.RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: h.waits.Wait},
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
	if err := h.notifier(t, nil).Notify(context.Background(), note(alert.KindFiring, alert.ActionPage, "firing", "aaa", "bbb")); err != nil {
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
}

func TestIncidentLifecycleUsesOneParentAndItsThread(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	ctx := context.Background()
	steps := []*alert.Notification{
		note(alert.KindFiring, alert.ActionTicket, "firing", "aaa"),
		note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"),
		note(alert.KindReminder, alert.ActionTicket, "firing", "aaa", "bbb"),
		note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"),
		func() *alert.Notification {
			r := note(alert.KindResolved, alert.ActionTicket, "resolved", "bbb")
			r.IncidentResolved = true
			return r
		}(),
	}
	for i, s := range steps {
		if err := n.Notify(ctx, s); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	parents := h.srv.Parents()
	if len(parents) != 1 {
		t.Fatalf("parents = %d, want 1", len(parents))
	}
	if got := len(h.srv.Thread(parents[0].TS)); got != 4 {
		t.Fatalf("thread replies = %d, want 4", got)
	}
	if parents[0].Updates != 1 || !bytes.Contains(parents[0].Blocks, []byte("[RESOLVED]")) {
		t.Fatalf("the parent was not edited to resolved: updates = %d, blocks = %s", parents[0].Updates, parents[0].Blocks)
	}
	golden(t, "resolved.golden.json", parents[0].Blocks)

	// The incident firing again starts a new parent.
	if err := n.Notify(ctx, note(alert.KindFiring, alert.ActionTicket, "firing", "ccc")); err != nil {
		t.Fatal(err)
	}
	if got := len(h.srv.Parents()); got != 2 {
		t.Fatalf("parents = %d, want 2", got)
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
	if err := n.Notify(context.Background(), note(alert.KindFiring, alert.ActionPage, "firing", fps...)); err != nil {
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
		if err := n.Notify(context.Background(), note(alert.KindFiring, alert.ActionPage, "firing", fps[i*10:i*10+10]...)); err != nil {
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

func TestTwoReplicasCreateOneParent(t *testing.T) {
	h := newHarness(t)
	a, b := h.notifier(t, nil), h.notifier(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, n := range []*slack.Notifier{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.Notify(ctx, note(alert.KindFiring, alert.ActionTicket, "firing", fmt.Sprint("fp", i))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := len(h.srv.Parents()); got != 1 {
		t.Fatalf("parents = %d, want 1", got)
	}
	if got := len(h.srv.Messages()); got != 4 {
		t.Fatalf("messages = %d, want 4", got)
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
	}{
		{name: "a 429 is retried after its Retry-After", faults: []slacktest.Fault{{Status: 429, RetryAfter: "2"}}, wantWaitMin: 2 * time.Second},
		{name: "a 500 is retried", faults: []slacktest.Fault{{Status: 500}, {Status: 502}}},
		{name: "internal_error is retried", faults: []slacktest.Fault{{Error: "internal_error"}}},
		{name: "invalid_auth is permanent", mutate: func(c *slack.Config) { c.Token = "xoxb-wrong" }, wantErr: true},
		{name: "channel_not_found is permanent", mutate: func(c *slack.Config) { c.Channel = "#nope" }, wantErr: true},
		{name: "not_in_channel is permanent", faults: []slacktest.Fault{{Error: "not_in_channel"}}, wantErr: true},
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
			err := h.notifier(t, tt.mutate).Notify(context.Background(), note(alert.KindFiring, alert.ActionTicket, "firing", "aaa"))
			if !tt.wantErr {
				if err != nil || len(h.srv.Messages()) != 1 {
					t.Fatalf("err = %v, messages = %d", err, len(h.srv.Messages()))
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
			if strings.Contains(err.Error(), token) || strings.Contains(h.logs.String(), token) {
				t.Fatal("the token leaked")
			}
			// A failed parent post releases its claim: the retry posts a parent.
			if _, ok := value(t, h.store, store.Key("ar:", "slack", "llm-inference-gpu/chat/TTFT", "#triage")); ok {
				t.Fatal("a failed post left its claim behind")
			}
		})
	}
}

func TestTemplateErrorFallsBackToTheBuiltinTitle(t *testing.T) {
	h := newHarness(t)
	if err := h.notifier(t, func(c *slack.Config) { c.Title = "{{ .Nope.Deeper }}" }).Notify(context.Background(), note(alert.KindFiring, alert.ActionTicket, "firing", "aaa")); err != nil {
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
	if err := h.notifier(t, func(c *slack.Config) { c.MirrorPages = false }).Notify(context.Background(), note(alert.KindFiring, alert.ActionPage, "firing", "aaa")); err != nil {
		t.Fatal(err)
	}
	if len(h.srv.Messages()) != 0 {
		t.Fatal("a page was posted with mirror_pages false")
	}
}

func TestADeletedParentIsReplaced(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	key := store.Key("ar:", "slack", "llm-inference-gpu/chat/TTFT", "#triage")
	if err := h.store.Set(context.Background(), []store.Entry{{Key: key, Value: h.srv.ChannelID("triage") + " 1.000"}}); err != nil {
		t.Fatal(err)
	}
	if err := n.Notify(context.Background(), note(alert.KindFiring, alert.ActionTicket, "firing", "aaa")); err != nil {
		t.Fatal(err)
	}
	parents := h.srv.Parents()
	if len(parents) != 1 {
		t.Fatalf("parents = %d, want 1", len(parents))
	}
	if v, _ := value(t, h.store, key); v != parents[0].Channel+" "+parents[0].TS {
		t.Fatalf("stored parent = %q", v)
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

// value reads key from the store, for assertions.
func value(t *testing.T, st *store.Memory, key string) (string, bool) {
	t.Helper()
	vals, found, err := st.Get(context.Background(), []string{key})
	if err != nil {
		t.Fatal(err)
	}
	return vals[0], found[0]
}

func TestStoreOutagePostsStandalone(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	if err := h.store.Close(); err != nil { // a closed store answers ErrStoreUnavailable
		t.Fatal(err)
	}
	if err := n.Notify(context.Background(), note(alert.KindFiring, alert.ActionTicket, "firing", "aaa")); err != nil {
		t.Fatal(err)
	}
	if len(h.srv.Messages()) != 1 {
		t.Fatal("the notification was lost while the store was down")
	}
}
