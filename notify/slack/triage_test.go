package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// clock is the fixed time of the triage lines, so the final blocks are
// golden.
var clock = time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)

type triageEnv struct {
	h      *harness
	pd     *pdtest.Server
	store  store.Store
	reg    *prometheus.Registry
	parent slacktest.Message
	// now stamps the requests (the real clock: Slack's window is 5 minutes).
	now func() time.Time
	// shift moves the default memory store's clock (nil: another store).
	shift *atomic.Int64
}

// newTriageEnv posts the parent of an incident decided action through a
// notifier offering every action, with st as the shared store.
func newTriageEnv(t testing.TB, action alert.Action, st store.Store) *triageEnv {
	t.Helper()
	e := &triageEnv{h: newHarness(t), pd: pdtest.NewServer(), store: st, reg: prometheus.NewRegistry(), now: time.Now}
	t.Cleanup(e.pd.Close)
	if e.store == nil {
		// Its clock a minute back while a page opens (pageSteps): a page
		// opens long before anyone clicks Resolve on it.
		e.shift = new(atomic.Int64)
		e.store = store.NewMemory(store.WithClock(func() time.Time { return time.Now().Add(time.Duration(e.shift.Load())) }))
	}
	no := note(alert.KindFiring, action, "firing", "aaa")
	no.Opening = true
	no.Integration = "slack/0"
	if err := e.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	e.parent = e.h.srv.Parents()[0]
	return e
}

func (e *triageEnv) notifier(t testing.TB, mutate func(*slack.Config)) *slack.Notifier {
	return e.h.notifier(t, func(c *slack.Config) {
		c.SigningSecret = signingSecret
		c.Actions = slack.TriageActions{Names: []string{slack.ActionAck, slack.ActionSilence, slack.ActionEscalate, slack.ActionResolve}}
		if mutate != nil {
			mutate(c)
		}
	})
}

// pager is the PagerDuty integration the triage acts through, on the
// env's stand-in.
func (e *triageEnv) pager(t testing.TB) *pagerduty.Notifier {
	t.Helper()
	pcfg := pagerduty.DefaultConfig()
	pcfg.RoutingKey = pdtest.RoutingKey
	pcfg.URL = e.pd.EnqueueURL()
	pager, err := pagerduty.New(&pcfg, "triage", notify.Deps{Retry: notify.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return pager
}

// replica builds one router replica's triage handler.
func (e *triageEnv) replica(t testing.TB, mutate func(*slack.Config), metrics *slack.TriageMetrics) *slack.Triage {
	t.Helper()
	return e.triage(t, e.notifier(t, mutate), e.pager(t), nil, metrics)
}

// triage builds a triage handler acting on notifier n's messages through
// pager and escalation (slack.Triage.Add's).
func (e *triageEnv) triage(t testing.TB, n *slack.Notifier, pager, escalation slack.Pager, metrics *slack.TriageMetrics) *slack.Triage {
	t.Helper()
	o := slack.TriageOptions{Store: e.store, Metrics: metrics, Now: func() time.Time { return clock }, Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))}
	tr := slack.NewTriage(o)
	if err := tr.Add("triage", "slack/0", n, pager, escalation); err != nil {
		t.Fatal(err)
	}
	return tr
}

// silences starts a real Alertmanager and returns a client creating and
// expiring silences in it.
func silences(t *testing.T) *amsilence.Client {
	t.Helper()
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	c, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// click sends the interaction of c on message m, signed with secret at
// when, to tr, waits for its background work, and returns the status.
func (e *triageEnv) click(t *testing.T, tr *slack.Triage, m slacktest.Message, c slacktest.Click, secret string, when time.Time, header http.Header) int {
	t.Helper()
	body, err := e.h.srv.Interaction(m, c)
	if err != nil {
		t.Fatal(err)
	}
	return e.send(t, tr, slacktest.Sign(secret, when, body), body, header)
}

func (e *triageEnv) send(t testing.TB, tr *slack.Triage, h http.Header, body []byte, extra http.Header) int {
	t.Helper()
	req, err := slacktest.NewRequest("http://router/slack/interactions", h, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	tr.ServeHTTP(rec, req)
	tr.Wait()
	return rec.Code
}

// current is the parent as Slack holds it now.
func (e *triageEnv) current(t *testing.T) slacktest.Message {
	t.Helper()
	for _, m := range e.h.srv.Parents() {
		if m.TS == e.parent.TS {
			return m
		}
	}
	t.Fatal("parent message gone")
	return slacktest.Message{}
}

func (e *triageEnv) actionCount(action, outcome string) float64 {
	mfs, _ := e.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "alertrouter_slack_actions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label(m, "action") == action && label(m, "outcome") == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// buttons lists the action_ids of a message's buttons.
func buttons(t testing.TB, m slacktest.Message) []string {
	t.Helper()
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string `json:"action_id"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range blocks {
		if b.Type == "actions" {
			for _, el := range b.Elements {
				out = append(out, el.ActionID)
			}
		}
	}
	return out
}

func TestParentOffersTheButtonsThatApply(t *testing.T) {
	page := newTriageEnv(t, alert.ActionPage, nil)
	if got := strings.Join(buttons(t, page.parent), " "); got != "alertrouter:ack alertrouter:silence:1h alertrouter:silence:4h alertrouter:silence:24h alertrouter:resolve" {
		t.Errorf("page buttons = %s", got)
	}
	ticket := newTriageEnv(t, alert.ActionTicket, nil)
	if got := strings.Join(buttons(t, ticket.parent), " "); got != "alertrouter:escalate alertrouter:silence:1h alertrouter:silence:4h alertrouter:silence:24h" {
		t.Errorf("ticket buttons = %s", got)
	}
	for _, m := range ticket.h.srv.Messages() {
		if m.ThreadTS != "" && len(buttons(t, m)) > 0 {
			t.Errorf("thread reply %s carries buttons", m.TS)
		}
	}
}

func TestAcknowledgeIsDoneOnceDespiteRetriesAndDoubleClicks(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	first := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000100.000001"}

	if code := e.click(t, tr, e.parent, first, signingSecret, e.now(), nil); code != http.StatusOK {
		t.Fatalf("valid click answered %d", code)
	}
	// Slack's retry of the same request, and a double click (another
	// action_ts, from the message as it was before the update).
	retry := http.Header{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}}
	if code := e.click(t, tr, e.parent, first, signingSecret, e.now(), retry); code != http.StatusOK {
		t.Fatalf("retry answered %d", code)
	}
	second := first
	second.ActionTS = "1700000100.000002"
	if code := e.click(t, tr, e.parent, second, signingSecret, e.now(), nil); code != http.StatusOK {
		t.Fatalf("double click answered %d", code)
	}

	if n := e.pd.Count("acknowledge", dedup); n != 1 {
		t.Fatalf("PagerDuty got %d acknowledges for %s, want 1 (events %+v)", n, dedup, e.pd.Events())
	}
	if n := len(e.pd.Events()); n != 1 {
		t.Fatalf("PagerDuty got %d events, want 1", n)
	}
	replies := e.h.srv.Thread(e.parent.TS)
	var acks int
	for _, r := range replies {
		if strings.Contains(r.Text, "<@U123> acknowledged the incident in PagerDuty") {
			acks++
		}
	}
	if acks != 1 {
		t.Fatalf("thread records %d acknowledgements, want 1: %+v", acks, replies)
	}
	resp := e.h.srv.Responses()
	if len(resp) != 1 || resp[0].ID != second.ActionTS || resp[0].ResponseType != "ephemeral" || !strings.Contains(resp[0].Text, "Already done") {
		t.Fatalf("ephemeral answers = %+v, want one 'Already done' to the double click", resp)
	}
	if e.actionCount("ack", "done") != 1 || e.actionCount("ack", "duplicate") != 2 {
		t.Fatalf("metrics: done %v duplicate %v", e.actionCount("ack", "done"), e.actionCount("ack", "duplicate"))
	}
	final := e.current(t)
	if final.Updates != 1 {
		t.Fatalf("parent updated %d times, want 1", final.Updates)
	}
	golden(t, "triage-ack.golden.json", final.Blocks)
}

func TestBadSignatureOrStaleTimestampIs401AndDoesNothing(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	c := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000100.000001"}
	if code := e.click(t, tr, e.parent, c, "not-the-secret", e.now(), nil); code != http.StatusUnauthorized {
		t.Errorf("bad signature answered %d, want 401", code)
	}
	if code := e.click(t, tr, e.parent, c, signingSecret, e.now().Add(-6*time.Minute), nil); code != http.StatusUnauthorized {
		t.Errorf("stale timestamp answered %d, want 401", code)
	}
	// A forged request with an old time is a bad signature, not a stale
	// one: it said this host's clock was wrong (an audit).
	if code := e.click(t, tr, e.parent, c, "not-the-secret", e.now().Add(-time.Hour), nil); code != http.StatusUnauthorized {
		t.Errorf("forged stale request answered %d, want 401", code)
	}
	// A body altered after signing.
	body, _ := e.h.srv.Interaction(e.parent, c)
	h := slacktest.Sign(signingSecret, e.now(), body)
	if code := e.send(t, tr, h, append(body, '&', 'x', '=', '1'), nil); code != http.StatusUnauthorized {
		t.Errorf("altered body answered %d, want 401", code)
	}
	if code := e.send(t, tr, http.Header{}, body, nil); code != http.StatusUnauthorized {
		t.Errorf("unsigned request answered %d, want 401", code)
	}
	// Signed but no interaction.
	junk := []byte("payload=%7Bnot-json")
	if code := e.send(t, tr, slacktest.Sign(signingSecret, e.now(), junk), junk, nil); code != http.StatusBadRequest {
		t.Errorf("signed junk answered %d, want 400", code)
	}
	if n := len(e.pd.Events()); n != 0 {
		t.Errorf("PagerDuty got %d events", n)
	}
	if m := e.current(t); m.Updates != 0 || len(e.h.srv.Thread(e.parent.TS)) != 0 || len(e.h.srv.Responses()) != 0 {
		t.Errorf("something was done: %d updates, thread %v, responses %v", m.Updates, e.h.srv.Thread(e.parent.TS), e.h.srv.Responses())
	}
	if e.actionCount("none", "bad_signature") != 4 || e.actionCount("none", "stale") != 1 {
		t.Errorf("metrics: bad_signature %v stale %v", e.actionCount("none", "bad_signature"), e.actionCount("none", "stale"))
	}
}

// redisStore is a store on a redis-server of its own, started with args.
func redisStore(t *testing.T, args ...string) *store.Redis {
	t.Helper()
	return redisOn(t, redistest.Start(t, args...).Addr())
}

// redisOn is a store on the redis-server at addr.
func redisOn(t *testing.T, addr string) *store.Redis {
	t.Helper()
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = []string{addr}
	st, err := store.NewRedis(cfg, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestTwoReplicasResolveOnce(t *testing.T) {
	st := redisStore(t)
	e := newTriageEnv(t, alert.ActionPage, st)
	metrics := slack.NewTriageMetrics(e.reg)
	a, b := e.replica(t, nil, metrics), e.replica(t, nil, metrics)
	c := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:resolve", ActionTS: "1700000200.000001"}
	body, err := e.h.srv.Interaction(e.parent, c)
	if err != nil {
		t.Fatal(err)
	}
	h := slacktest.Sign(signingSecret, e.now(), body)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, tr := range []*slack.Triage{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = e.send(t, tr, h, body, nil)
		}()
	}
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Fatalf("answers %v", codes)
	}
	if n := e.pd.Resolves(pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); n != 1 || len(e.pd.Events()) != 1 {
		t.Fatalf("PagerDuty got %d resolves (%d events), want 1", n, len(e.pd.Events()))
	}
	if e.actionCount("resolve", "done") != 1 || e.actionCount("resolve", "duplicate") != 1 {
		t.Fatalf("metrics: done %v duplicate %v", e.actionCount("resolve", "done"), e.actionCount("resolve", "duplicate"))
	}
	thread := e.h.srv.Thread(e.parent.TS)
	if len(thread) != 1 || !strings.Contains(thread[0].Text, "keep firing in Alertmanager until their rule clears") || !strings.Contains(thread[0].Text, "triggers PagerDuty again") {
		t.Fatalf("thread = %+v", thread)
	}
	// The mark that makes the next alert joining the incident page again
	// (routing: TestAnIncidentResolvedByHandPagesAgainWhenAlertsJoin).
	vals, found, err := st.Get(context.Background(), []string{dedup.HandResolvedKey("", "llm-inference-gpu/chat/TTFT")})
	if err != nil || !found[0] || !strings.Contains(vals[0], "U123") {
		t.Fatalf("hand-resolve mark = %q found %v err %v, want the resolving user", vals, found, err)
	}
	golden(t, "triage-resolve.golden.json", e.current(t).Blocks)
}

func TestEscalateTriggersOncePerTicket(t *testing.T) {
	e := newTriageEnv(t, alert.ActionTicket, nil)
	tr := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	c := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700000300.000001"}
	e.click(t, tr, e.parent, c, signingSecret, e.now(), nil)
	c.ActionTS = "1700000300.000002"
	e.click(t, tr, e.parent, c, signingSecret, e.now(), nil)
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	if n := e.pd.Triggers(dedup); n != 1 || len(e.pd.Events()) != 1 {
		t.Fatalf("PagerDuty got %d triggers (%d events), want 1", n, len(e.pd.Events()))
	}
	ev := e.pd.Events()[0]
	if ev.Payload == nil || ev.Payload.Severity != "critical" || ev.Payload.Summary != "[PAGE] TTFTHigh (llm-inference-gpu TTFT) 1 firing (escalated from a ticket in Slack by @jdoe)" {
		t.Fatalf("trigger = %+v, payload %+v", ev, ev.Payload)
	}
	// The page carries what the ticket said: its text, the incident's
	// labels, its links. It reached PagerDuty with none of them, and the
	// engineer it woke had to find the ticket first (an audit).
	var details struct {
		Ticket string            `json:"ticket"`
		Labels map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(ev.Payload.CustomDetails, &details); err != nil {
		t.Fatalf("custom_details: %v: %s", err, ev.Payload.CustomDetails)
	}
	ticket := details.Ticket
	for _, want := range []string{"Time to first token of model llama-70b breaches its SLO.", "burn rate 15.2 > 14.4 over 1h", "*TTFTHigh* · instance=gpu-node-1:8000"} {
		if !strings.Contains(ticket, want) {
			t.Errorf("the escalation's details.ticket lacks %q:\n%s", want, ticket)
		}
	}
	if details.Labels["alertname"] != "TTFTHigh" {
		t.Errorf("the escalation's details.labels = %v, want the incident's labels", details.Labels)
	}
	var hrefs []string
	for _, l := range ev.Links {
		hrefs = append(hrefs, l.Text+"="+l.Href)
	}
	if got := strings.Join(hrefs, " "); !strings.Contains(got, "Runbook=https://runbooks.example.com/ttft") || !strings.Contains(got, "Dashboard=https://grafana.example.com/d/ttft") {
		t.Errorf("the escalation's links = %s, want the ticket's runbook and dashboard", got)
	}
	// The escalated incident is now acknowledged once from the updated
	// message.
	final := e.current(t)
	if got := strings.Join(buttons(t, final), " "); got != "alertrouter:ack alertrouter:silence:1h alertrouter:silence:4h alertrouter:silence:24h alertrouter:resolve" {
		t.Fatalf("buttons after escalation = %s", got)
	}
	golden(t, "triage-escalate.golden.json", final.Blocks)
	ack := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000300.000003"}
	e.click(t, tr, final, ack, signingSecret, e.now(), nil)
	if n := e.pd.Count("acknowledge", dedup); n != 1 {
		t.Fatalf("acknowledges after escalation = %d", n)
	}
}

func TestAuthorization(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	e.h.srv.SetUserGroup("S0PRIMARY", "U777")
	tr := e.replica(t, func(c *slack.Config) {
		c.Authorized = map[string][]string{slack.ActionAck: {"U999", "S0PRIMARY"}}
	}, slack.NewTriageMetrics(e.reg))
	refused := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000400.000001"}
	e.click(t, tr, e.parent, refused, signingSecret, e.now(), nil)
	if n := len(e.pd.Events()); n != 0 {
		t.Fatalf("refused user acknowledged (%d events)", n)
	}
	if r := e.h.srv.Responses(); len(r) != 1 || !strings.Contains(r[0].Text, "not allowed") {
		t.Fatalf("responses = %+v", r)
	}
	if !strings.Contains(e.h.logs.String(), "action refused") || e.actionCount("ack", "refused") != 1 {
		t.Fatalf("refused not counted")
	}
	member := slacktest.Click{User: "U777", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700000400.000002"}
	e.click(t, tr, e.parent, member, signingSecret, e.now(), nil)
	if n := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); n != 1 {
		t.Fatalf("group member's acknowledge: %d events", n)
	}
}

// A user-group lookup that fails (Slack rate limiting, a missing scope) is
// not a refusal: the user is told the check failed, and the click can be
// made again at once.
func TestAGroupLookupThatFailsIsNotARefusal(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	e.h.srv.SetUserGroup("S0ONCALL", "U777")
	tr := e.replica(t, func(c *slack.Config) {
		c.Authorized = map[string][]string{slack.ActionAck: {"S0ONCALL"}}
	}, slack.NewTriageMetrics(e.reg))
	e.h.srv.Fail(slacktest.Fault{Error: "ratelimited"})
	click := slacktest.Click{User: "U777", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700000450.000001"}
	e.click(t, tr, e.parent, click, signingSecret, e.now(), nil)
	if n := len(e.pd.Events()); n != 0 {
		t.Fatalf("acknowledged without knowing the user may (%d events)", n)
	}
	r := e.h.srv.Responses()
	if len(r) != 1 || strings.Contains(r[0].Text, "not allowed") || !strings.Contains(r[0].Text, "could not check") || !strings.Contains(r[0].Text, "ratelimited") {
		t.Fatalf("responses = %+v, want the failed check named, not a refusal", r)
	}
	if e.actionCount("ack", "refused") != 0 || e.actionCount("ack", "failed") != 1 {
		t.Fatalf("metrics: refused %v failed %v, want a failure", e.actionCount("ack", "refused"), e.actionCount("ack", "failed"))
	}
	// Slack's retry of the same click (the lookup answers now) acts.
	retry := http.Header{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}}
	e.click(t, tr, e.parent, click, signingSecret, e.now(), retry)
	if n := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); n != 1 {
		t.Fatalf("the retried click acknowledged %d times, want 1", n)
	}
}

// A ticket receiver without PagerDuty of its own acknowledges and resolves
// on its escalate_to receiver's PagerDuty (README, "Triage from Slack": the
// pages of the incident went there).
func TestAckAndResolveUseEscalateToWithoutAPagerOfTheirOwn(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.triage(t, e.notifier(t, nil), nil, e.pager(t), slack.NewTriageMetrics(e.reg))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000460.000001"}, signingSecret, e.now(), nil)
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:resolve", ActionTS: "1700000460.000002"}, signingSecret, e.now(), nil)
	if e.pd.Count("acknowledge", dedup) != 1 || e.pd.Count("resolve", dedup) != 1 {
		t.Fatalf("PagerDuty events %+v, want one acknowledge and one resolve through escalate_to's integration (answers %+v)", e.pd.Events(), e.h.srv.Responses())
	}
}

// Two people click on one message at once: each click carries the message
// as it was before either, and each edits the parent. The parent ends with
// both lines, in order, and without the buttons both took (before, the
// later edit drew the other's line away). Two replicas on one store, as in
// production. A click from a copy that already shows a line draws it once.
func TestConcurrentClicksKeepEveryLineOnTheParent(t *testing.T) {
	ack := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000490.000001"}
	resolve := slacktest.Click{User: "U456", UserName: "asmith", ActionID: "alertrouter:resolve", ActionTS: "1700000490.000002"}
	want := []string{"Acknowledged in PagerDuty by <@U123>", "Resolved in PagerDuty by <@U456>"}
	for _, stale := range []bool{true, false} {
		e := newTriageEnv(t, alert.ActionPage, nil)
		one := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
		two := e.replica(t, nil, slack.NewTriageMetrics(prometheus.NewRegistry()))
		e.click(t, one, e.parent, ack, signingSecret, e.now(), nil)
		from := e.current(t)
		if stale {
			from = e.parent
		}
		e.click(t, two, from, resolve, signingSecret, e.now(), nil)

		final := e.current(t)
		lines := logLines(t, final)
		if len(lines) != len(want) {
			t.Fatalf("stale copy %v: parent's triage lines %q, want %q", stale, lines, want)
		}
		for i := range want {
			if !strings.HasPrefix(lines[i], want[i]) {
				t.Errorf("stale copy %v: line %d is %q, want %q…", stale, i, lines[i], want[i])
			}
		}
		if got := strings.Join(buttons(t, final), " "); strings.Contains(got, "alertrouter:ack") || strings.Contains(got, "alertrouter:resolve") {
			t.Errorf("stale copy %v: buttons %q, but acknowledge and resolve are done", stale, got)
		}
	}
}

// logLines are the texts of a message's triage lines.
func logLines(t testing.TB, m slacktest.Message) []string {
	t.Helper()
	var blocks []struct {
		BlockID  string `json:"block_id"`
		Elements []struct {
			Text json.RawMessage `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range blocks {
		if strings.HasPrefix(b.BlockID, "alertrouter-log-") && len(b.Elements) > 0 {
			var text string
			if err := json.Unmarshal(b.Elements[0].Text, &text); err != nil {
				t.Fatal(err)
			}
			out = append(out, text)
		}
	}
	return out
}

// A click on the message of an incident that has resolved since it was
// drawn does nothing and says so, and leaves the resolved message as it is
// (before, the click's copy of the message put the firing header and its
// buttons back); once the incident fires again, the buttons act again.
func TestAClickOnAResolvedIncidentActsOnNothing(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	n := e.notifier(t, nil)
	tr := e.triage(t, n, e.pager(t), nil, slack.NewTriageMetrics(e.reg))
	ref := e.parent.Channel + " " + e.parent.TS
	resolved := under(ref, note(alert.KindResolved, alert.ActionPage, "resolved", "aaa"))
	resolved.IncidentResolved, resolved.Integration = true, "slack/0"
	if err := n.Notify(context.Background(), resolved); err != nil {
		t.Fatal(err)
	}
	after := e.current(t)
	// The click is made on the message as it was drawn before the resolve.
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000470.000001"}, signingSecret, e.now(), nil)
	if n := len(e.pd.Events()); n != 0 {
		t.Fatalf("acknowledged a resolved incident (%d events)", n)
	}
	if r := e.h.srv.Responses(); len(r) != 1 || !strings.Contains(r[0].Text, "has resolved since this message was drawn") {
		t.Fatalf("responses = %+v", r)
	}
	if now := e.current(t); now.Updates != after.Updates || string(now.Blocks) != string(after.Blocks) {
		t.Fatalf("the resolved parent was redrawn by the click: %s", now.Blocks)
	}
	if e.actionCount("ack", "stale") != 1 {
		t.Fatalf("the click on a resolved incident was not counted stale")
	}
	// The incident fires again: its parent is redrawn, the buttons act.
	refire := under(ref, note(alert.KindFiring, alert.ActionPage, "firing", "aaa"))
	refire.Opening, refire.Integration = true, "slack/0"
	if err := n.Notify(context.Background(), refire); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.current(t), slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000470.000002"}, signingSecret, e.now(), nil)
	if n := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); n != 1 {
		t.Fatalf("after the incident fired again, ack sent %d acknowledges, want 1 (answers %+v)", n, e.h.srv.Responses())
	}
}

// racingPager runs during before each acknowledge it passes on.
type racingPager struct {
	slack.Pager
	during func()
}

func (p racingPager) Acknowledge(ctx context.Context, incident string) error {
	p.during()
	return p.Pager.Acknowledge(ctx, incident)
}

// The incident resolves while a click is being acted on: the action is
// taken (it was valid when clicked) and recorded in the thread, and the
// parent stays as the resolve left it.
func TestAClickRacingTheResolveLeavesTheResolvedParent(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Metrics: slack.NewTriageMetrics(e.reg)})
	n := e.notifier(t, nil)
	resolved := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindResolved, alert.ActionPage, "resolved", "aaa"))
	resolved.IncidentResolved, resolved.Integration = true, "slack/0"
	pager := racingPager{Pager: e.pager(t), during: func() {
		if err := n.Notify(context.Background(), resolved); err != nil {
			t.Error(err)
		}
	}}
	if err := tr.Add("triage", "slack/0", n, pager, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000480.000001"}, signingSecret, e.now(), nil)
	if n := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); n != 1 {
		t.Fatalf("acknowledges = %d, want 1", n)
	}
	m := e.current(t)
	if m.Updates != 1 || strings.Contains(string(m.Blocks), "alertrouter:") {
		t.Fatalf("parent updated %d times, blocks %s: want only the resolve's edit, without buttons", m.Updates, m.Blocks)
	}
	var recorded bool
	for _, r := range e.h.srv.Thread(e.parent.TS) {
		recorded = recorded || strings.Contains(r.Text, "<@U123> acknowledged the incident in PagerDuty")
	}
	if !recorded {
		t.Fatalf("the acknowledgement is not in the thread: %+v", e.h.srv.Thread(e.parent.TS))
	}
}

// racingSilencer runs during while a silence is being created.
type racingSilencer struct {
	*amsilence.Client
	during func()
}

func (s racingSilencer) Create(ctx context.Context, si amsilence.Silence) (string, error) {
	s.during()
	return s.Client.Create(ctx, si)
}

// A Silence click on an incident that resolves while the silence is made:
// the parent stays as the resolve drew it, without buttons, so nothing in
// Slack could undo the silence, which would mute the alerts' next firing
// unseen (an audit: a 1h silence left, and a reply pointing at an
// Unsilence button that was gone). The silence is expired at once and the
// thread says so.
func TestASilenceRacingTheResolveIsExpired(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	c := silences(t)
	n := e.notifier(t, nil)
	resolved := under(e.parent.Channel+" "+e.parent.TS, note(alert.KindResolved, alert.ActionPage, "resolved", "aaa"))
	resolved.IncidentResolved, resolved.Integration = true, "slack/0"
	racing := racingSilencer{Client: c, during: func() {
		if err := n.Notify(context.Background(), resolved); err != nil {
			t.Error(err)
		}
	}}
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: racing})
	if err := tr.Add("triage", "slack/0", n, nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000490.000001"}, signingSecret, e.now(), nil)
	list, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Status == nil || list[0].Status.State != "expired" {
		t.Fatalf("silences = %+v, want the one made, expired", list)
	}
	m := e.current(t)
	if strings.Contains(string(m.Blocks), "alertrouter:") {
		t.Fatalf("the parent offers buttons after the resolve: %s", m.Blocks)
	}
	var said bool
	for _, r := range e.h.srv.Thread(e.parent.TS) {
		said = said || strings.Contains(r.Text, "clicked Silence as the incident resolved: the silence") && strings.Contains(r.Text, "was expired at once")
	}
	if !said {
		t.Fatalf("the thread does not say the silence was expired: %+v", e.h.srv.Thread(e.parent.TS))
	}
}

// Slack refusing the parent's redraw after an action (its thread reply
// taken) left the message offering what was done, and nobody was told (an
// audit): the clicking user hears it.
func TestAClickWhoseRedrawSlackRefusesTellsTheUser(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	e.h.srv.Fail(slices.Repeat([]slacktest.Fault{{Status: 503, Method: "chat.update"}}, 20)...)
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000495.000001"}, signingSecret, e.now(), nil)
	if n := e.pd.Count("acknowledge", pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")); n != 1 {
		t.Fatalf("acknowledges = %d, want 1", n)
	}
	var told bool
	for _, r := range e.h.srv.Responses() {
		told = told || r.ResponseType == "ephemeral" && strings.Contains(r.Text, "Slack did not take the edit of the incident's message")
	}
	if !told {
		t.Fatalf("the user was not told the message could not be redrawn: %+v", e.h.srv.Responses())
	}
}

func TestUnknownActionOrIncidentAnswersEphemerally(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	unknownAction := slacktest.Click{User: "U123", ActionID: "alertrouter:reboot", ActionTS: "1700000500.000001", Value: `{"r":"triage","g":"slack/0","i":"x"}`}
	e.click(t, tr, e.parent, unknownAction, signingSecret, e.now(), nil)
	unknownIncident := slacktest.Click{User: "U123", ActionID: "alertrouter:ack", ActionTS: "1700000500.000002", Value: `{"r":"gone","g":"slack/0","i":"x","p":true}`}
	e.click(t, tr, e.parent, unknownIncident, signingSecret, e.now(), nil)
	garbage := slacktest.Click{User: "U123", ActionID: "alertrouter:ack", ActionTS: "1700000500.000003", Value: "not json"}
	e.click(t, tr, e.parent, garbage, signingSecret, e.now(), nil)
	// No button of Slack's carries more than 2000 characters: a forged one
	// of 100 KB (an incident of 100 KB) is refused, not decoded and logged.
	huge := slacktest.Click{User: "U123", ActionID: "alertrouter:ack", ActionTS: "1700000500.000004", Value: `{"r":"triage","g":"slack/0","i":"` + strings.Repeat("A", 100<<10) + `","p":true}`}
	e.click(t, tr, e.parent, huge, signingSecret, e.now(), nil)
	r := e.h.srv.Responses()
	if len(r) != 4 || !strings.Contains(r[0].Text, "Unknown action") || !strings.Contains(r[1].Text, "unknown here") || !strings.Contains(r[2].Text, "no incident") ||
		!strings.Contains(r[3].Text, "over Slack's 2000") || len(r[3].Text) > 1000 {
		t.Fatalf("responses = %.2000v", r)
	}
	for _, x := range r {
		if x.ResponseType != "ephemeral" {
			t.Fatalf("answer not ephemeral: %+v", x)
		}
	}
	if len(e.pd.Events()) != 0 || e.current(t).Updates != 0 {
		t.Fatal("something was done")
	}
}

// The Silence button was drawn with the labels of the incident's first
// alert; a click made after another alert joined (another job here)
// silences what every alert firing now shares, read from the journal, and
// exactly the values in which they differ.
func TestASilenceClickCoversAlertsThatJoinedLater(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	c := silences(t)
	incident := "llm-inference-gpu/chat/TTFT"
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: incident, Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm"}, Decision: alert.Decision{Action: alert.ActionPage}},
		journal.Entry{Fingerprint: "bbb", Status: "firing", Receivers: []string{"triage"}, Incident: incident, Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm-canary"}, Decision: alert.Decision{Action: alert.ActionPage}},
		journal.Entry{Fingerprint: "zzz", Status: "firing", Receivers: []string{"triage"}, Incident: "another/incident", Labels: map[string]string{"alertname": "Other"}, Decision: alert.Decision{Action: alert.ActionPage}},
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: c, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000650.000001"}, signingSecret, e.now(), nil)
	list, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := `{alertname="TTFTHigh", job=~"vllm|vllm-canary"}`
	if len(list) != 1 || amsilence.Text(list[0].Matchers) != want {
		t.Fatalf("silences = %+v (responses %+v), want one matching %s: both jobs fire, and no other job", list, e.h.srv.Responses(), want)
	}
}

func TestSilenceAndUnsilenceInAlertmanager(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	c := silences(t)
	// Alertmanager refuses silences that ended already: the fixed clock of
	// the golden tests would not do.
	silence := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:4h", ActionTS: "1700000600.000001"}
	tr2 := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: c})
	if err := tr2.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr2, e.parent, silence, signingSecret, e.now(), nil)
	list, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("silences = %+v (responses %+v)", list, e.h.srv.Responses())
	}
	s := list[0]
	want := []amsilence.Matcher{{Name: "alertname", Value: "TTFTHigh", IsEqual: true}, {Name: "job", Value: "vllm", IsEqual: true}}
	if len(s.Matchers) != 2 || s.Matchers[0] != want[0] || s.Matchers[1] != want[1] {
		t.Fatalf("matchers = %+v, want %+v", s.Matchers, want)
	}
	if s.Status.State != "active" || s.CreatedBy != "jdoe (U123) via Slack" || !strings.Contains(s.Comment, "https://acme.slack.com/archives/"+e.parent.Channel+"/p") {
		t.Fatalf("silence = %+v", s)
	}
	// Alertmanager moves a start in the past to its receipt time.
	if d := s.EndsAt.Sub(s.StartsAt); d > 4*time.Hour || d < 4*time.Hour-time.Minute {
		t.Fatalf("silence lasts %s", d)
	}
	m := e.current(t)
	if got := strings.Join(buttons(t, m), " "); got != "alertrouter:ack alertrouter:unsilence alertrouter:resolve" {
		t.Fatalf("buttons after silence = %s", got)
	}
	// A second Silence click from the old message makes no second silence.
	silence.ActionTS = "1700000600.000002"
	e.click(t, tr2, e.parent, silence, signingSecret, e.now(), nil)
	if list, _ := c.List(context.Background()); len(list) != 1 {
		t.Fatalf("double click made %d silences", len(list))
	}

	unsilence := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:unsilence", ActionTS: "1700000600.000003"}
	e.click(t, tr2, m, unsilence, signingSecret, e.now(), nil)
	got, err := c.Get(context.Background(), s.ID)
	if err != nil || got.Status.State != "expired" {
		t.Fatalf("after unsilence: %+v, %v", got, err)
	}
	m = e.current(t)
	if got := strings.Join(buttons(t, m), " "); got != "alertrouter:ack alertrouter:silence:1h alertrouter:silence:4h alertrouter:silence:24h alertrouter:resolve" {
		t.Fatalf("buttons after unsilence = %s", got)
	}
	// Silenced again from the updated message: a new silence.
	silence.ActionTS = "1700000600.000004"
	e.click(t, tr2, m, silence, signingSecret, e.now(), nil)
	if list, _ := c.List(context.Background()); len(list) != 2 {
		t.Fatalf("silencing again: %d silences, want 2", len(list))
	}
}

// panickingSilencer is a Silencer with a bug.
type panickingSilencer struct{}

func (panickingSilencer) Create(context.Context, amsilence.Silence) (string, error) {
	panic("silencer bug")
}

func (panickingSilencer) Expire(context.Context, string) error { panic("silencer bug") }

func (panickingSilencer) Alerts(context.Context, []amsilence.Matcher) ([]amsilence.Alert, error) {
	return nil, nil
}

// A panic in the work after the answer ends that click only: counted,
// logged with its stack, and the next click is handled.
func TestAPanicAfterTheAnswerEndsTheClickNotTheRouter(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: panickingSilencer{}, Metrics: slack.NewTriageMetrics(e.reg),
		Logger: slog.New(slog.NewTextHandler(e.h.logs, nil))})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), e.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	silence := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:4h", ActionTS: "1700000700.000001"}
	if code := e.click(t, tr, e.parent, silence, signingSecret, e.now(), nil); code != http.StatusOK {
		t.Fatalf("click answered %d", code)
	}
	if got := e.actionCount("none", slack.OutcomePanic); got != 1 {
		t.Fatalf(`alertrouter_slack_actions_total{outcome="panic"} = %v, want 1`, got)
	}
	if l := e.h.logs.String(); !strings.Contains(l, "silencer bug") || !strings.Contains(l, "triage_test.go") {
		t.Fatalf("log lacks the panic and its stack:\n%s", l)
	}
	ack := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000700.000002"}
	e.click(t, tr, e.parent, ack, signingSecret, e.now(), nil)
	if got := e.actionCount("ack", slack.OutcomeDone); got != 1 {
		t.Fatalf("ack after the panic: done %v, want 1 (responses %+v)", got, e.h.srv.Responses())
	}
}

// hungPager is a PagerDuty whose acknowledgement never returns until the
// test ends: a replica that died in the middle of a click.
type hungPager struct {
	entered chan struct{}
	release chan struct{}
}

func (p *hungPager) Acknowledge(ctx context.Context, _ string) error {
	close(p.entered)
	select {
	case <-p.release:
	case <-ctx.Done():
	}
	return errors.New("replica gone")
}
func (p *hungPager) Resolve(context.Context, string) error { return errors.New("unused") }
func (p *hungPager) Escalate(context.Context, notify.Escalation) error {
	return errors.New("unused")
}

// A replica that dies in the middle of a click (a rollout, an OOM kill)
// leaves the button's claim behind: another click meanwhile is told the
// action is in progress — not "already done" —, and once the claim has
// outlived the action's time the button works again (it used to stay
// taken for the week the done record lives).
func TestAClickWhoseReplicaDiedFreesTheButtonAfterTheActionsTime(t *testing.T) {
	var mu sync.Mutex
	now := clock
	e := newTriageEnv(t, alert.ActionPage, store.NewMemory(store.WithClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	})))
	dedup := pagerduty.DedupKey("llm-inference-gpu/chat/TTFT")

	hung := &hungPager{entered: make(chan struct{}), release: make(chan struct{})}
	dead := slack.NewTriage(slack.TriageOptions{Store: e.store, Timeout: time.Hour, Now: func() time.Time { return clock }})
	if err := dead.Add("triage", "slack/0", e.notifier(t, nil), hung, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(hung.release); dead.Wait() })
	body, err := e.h.srv.Interaction(e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000100.000001"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := slacktest.NewRequest("http://router/slack/interactions", slacktest.Sign(signingSecret, e.now(), body), body)
	if err != nil {
		t.Fatal(err)
	}
	dead.ServeHTTP(httptest.NewRecorder(), req)
	<-hung.entered // the click holds the message's ack claim, and never finishes

	tr := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	e.click(t, tr, e.parent, slacktest.Click{User: "U456", UserName: "asmith", ActionID: "alertrouter:ack", ActionTS: "1700000160.000001"}, signingSecret, e.now(), nil)
	resp := e.h.srv.Responses()
	if len(resp) != 1 || !strings.Contains(resp[0].Text, "in progress") {
		t.Fatalf("answers %+v, want one saying the other click is in progress", resp)
	}
	if n := e.pd.Count("acknowledge", dedup); n != 0 {
		t.Fatalf("PagerDuty got %d acknowledges while the first click held the claim", n)
	}

	mu.Lock()
	now = now.Add(2*time.Hour + 2*time.Minute) // past the dead click's action time (its timeout: 1h)
	mu.Unlock()
	e.click(t, tr, e.parent, slacktest.Click{User: "U456", UserName: "asmith", ActionID: "alertrouter:ack", ActionTS: "1700007400.000001"}, signingSecret, e.now(), nil)
	if n := e.pd.Count("acknowledge", dedup); n != 1 {
		t.Fatalf("PagerDuty got %d acknowledges after the dead click's claim expired, want 1 (answers %+v)", n, e.h.srv.Responses())
	}
}

// A click signed ahead of this replica's clock (its clock behind: a broken
// NTP) is refused as stale, and says why: before, it read "invalid request
// signature", nothing naming the clock, while the click failed at random
// behind a load balancer.
func TestAClickFromThisReplicasFutureSaysItsClockIsBehind(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.replica(t, nil, slack.NewTriageMetrics(e.reg))
	c := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000100.000001"}
	body, _ := e.h.srv.Interaction(e.parent, c)
	req, err := slacktest.NewRequest("http://router/slack/interactions", slacktest.Sign(signingSecret, time.Now().Add(10*time.Minute), body), body)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	tr.ServeHTTP(rec, req)
	tr.Wait()
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "ahead of this server's clock") {
		t.Errorf("answer %d %q, want 401 naming the clock", rec.Code, rec.Body.String())
	}
	if e.actionCount("none", "stale") != 1 {
		t.Errorf("stale refusals = %v, want 1", e.actionCount("none", "stale"))
	}
}
