package slack_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// silenceCommandEnv is a triage with a real Alertmanager and a journal
// holding incident inc/1's firing alert.
func silenceCommandEnv(t *testing.T) (*triageEnv, *slack.Triage, *amsilence.Client) {
	t.Helper()
	am := silences(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: "inc/1", Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}, Decision: alert.Decision{Action: alert.ActionPage}},
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	return e, tr, am
}

// /alertrouter silence takes words after the duration as the silence's
// comment (they made the command answer its usage).
func TestTheSilenceCommandTakesAComment(t *testing.T) {
	e, tr, am := silenceCommandEnv(t)
	a := e.commandAnswer(t, tr, "silence inc/1 2h maintenance window", "w1", "U123")
	if a.ResponseType != "in_channel" || !strings.Contains(a.Text, "maintenance window") {
		t.Fatalf("silence with a comment answered %+v", a)
	}
	list, err := am.List(context.Background())
	if err != nil || len(list) != 1 || !strings.HasSuffix(list[0].Comment, ": maintenance window") {
		t.Fatalf("silences %+v, %v: want one whose comment ends with the command's", list, err)
	}
}

// /alertrouter silence takes an incident copied with its backticks from
// the incidents list (`inc/1`).
func TestTheSilenceCommandTakesABacktickedIncident(t *testing.T) {
	e, tr, am := silenceCommandEnv(t)
	if a := e.commandAnswer(t, tr, "silence `inc/1` 2h", "w2", "U123"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, "silenced incident `inc/1`") || !strings.Contains(a.Text, "Alertmanager sends no resolve of silenced alerts") {
		t.Fatalf("silence of a backticked incident answered %+v", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 1 {
		t.Fatalf("silences %+v, want 1", list)
	}
}

// Slack escapes &, < and > in a slash command's text: an incident key
// holding them (a group_by: [] route's matcher owner="R&D <ops>") is read
// unescaped, as the parent showed it (an audit: "No firing alert of
// incident …R&amp;amp;D…").
func TestTheSilenceCommandReadsSlacksEscapes(t *testing.T) {
	am := silences(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	const key = `route/owner="R&D_<ops>",team="db"`
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: key, Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}, Decision: alert.Decision{Action: alert.ActionPage}},
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	escaped := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(key)
	if a := e.commandAnswer(t, tr, "silence "+escaped+" 2h R&amp;D maintenance", "w3", "U123"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, "silenced incident") {
		t.Fatalf("silence of an incident whose key Slack escaped answered %+v", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 1 || !strings.HasSuffix(list[0].Comment, ": R&D maintenance") {
		t.Fatalf("silences %+v, want 1 with the comment unescaped", list)
	}
	// What it echoes back it escapes again: a typed <!channel> as the
	// duration came back live (a review).
	a := e.commandAnswer(t, tr, "silence "+escaped+" &lt;!channel&gt;", "w4", "U123")
	if strings.Contains(a.Text, "<!channel>") || !strings.Contains(a.Text, "&lt;!channel&gt;") || !strings.Contains(a.Text, "is no duration") {
		t.Errorf("a bad duration answered %q, want it escaped", a.Text)
	}
}

// A PagerDuty failure that a second click may not meet (throttled, 5xx)
// says to try again; one that it will (PagerDuty refusing the event) does
// not.
func TestAPagerDutyFailureSaysWhetherToTryAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault pdtest.Fault
		again bool
	}{
		{"throttled", pdtest.Fault{Status: 429}, true},
		{"server error", pdtest.Fault{Status: 500}, true},
		{"refused", pdtest.Fault{Status: 400}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTriageEnv(t, alert.ActionTicket, nil)
			tr := e.triage(t, e.notifier(t, nil), nil, e.pager(t), nil)
			e.pd.Fail(tc.fault)
			e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700001300.000001"}, signingSecret, e.now(), nil)
			r := e.h.srv.Responses()
			if len(r) != 1 || !strings.Contains(r[0].Text, "escalate failed, nothing changed") {
				t.Fatalf("answers %+v", r)
			}
			if got := strings.Contains(r[0].Text, "Try again"); got != tc.again {
				t.Fatalf("answer %q says to try again: %v, want %v", r[0].Text, got, tc.again)
			}
		})
	}
}

// A refused click says which list of the configuration decides who may:
// its key, the receiver, and the user groups it names (users are counted,
// not named). Unsilence, not listed, names silence's.
func TestARefusalSaysWhichListDecides(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	e.h.srv.SetUserGroup("S0ONCALL", "U777")
	tr := e.replica(t, func(c *slack.Config) {
		c.Authorized = map[string][]string{slack.ActionResolve: {"S0ONCALL", "U024BE7LH"}}
	}, nil)
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:resolve", ActionTS: "1700000400.000001"}, signingSecret, e.now(), nil)
	r := e.h.srv.Responses()
	if len(r) != 1 {
		t.Fatalf("answers %+v", r)
	}
	for _, want := range []string{"You are not allowed to resolve this incident", "`authorized.resolve`", `"triage"`, "`S0ONCALL`", "1 user it names"} {
		if !strings.Contains(r[0].Text, want) {
			t.Fatalf("refusal %q lacks %q", r[0].Text, want)
		}
	}
	if strings.Contains(r[0].Text, "U024BE7LH") {
		t.Fatalf("refusal %q names a user", r[0].Text)
	}
}

// Unsilence of a silence that had already ended in Alertmanager (expired
// there, or over): the thread said it was expired and that Alertmanager
// notifies the alerts again, which it had done since the silence ended.
func TestUnsilenceOfASilenceThatHadEndedSaysSo(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	c := silences(t)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: c})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000910.000001"}, signingSecret, e.now(), nil)
	list, err := c.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("silences %+v, %v (answers %+v)", list, err, e.h.srv.Responses())
	}
	if err := c.Expire(context.Background(), list[0].ID); err != nil { // in Alertmanager's UI
		t.Fatal(err)
	}
	e.click(t, tr, e.current(t), slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:unsilence", ActionTS: "1700000910.000002"}, signingSecret, e.now(), nil)
	var said string
	for _, m := range e.h.srv.Thread(e.parent.TS) {
		if strings.Contains(m.Text, "unsilence") || strings.Contains(m.Text, "expired") {
			said = m.Text
		}
	}
	if !strings.Contains(said, "had already ended") || strings.Contains(said, "notifies the incident's alerts again") {
		t.Fatalf("thread says %q, want that the silence had already ended", said)
	}
	if !hasLine(logLines(t, e.current(t)), "Unsilenced by <@U123> (silence `"+list[0].ID+"` had already ended)") {
		t.Fatalf("parent lines %q", logLines(t, e.current(t)))
	}
}

// An Alertmanager restarted without its data directory has lost the
// silence a Silence click made: Unsilence answered "unsilence failed,
// nothing changed: … HTTP 500: silence not found. Try again in a moment",
// and every retry failed the same — the parent said silenced for good (an
// audit with Alertmanager 0.25). A silence Alertmanager does not know has
// ended: Unsilence goes through and says so.
func TestUnsilenceOfASilenceAlertmanagerLostSaysItHadEnded(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: silences(t)})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, tr, e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:1h", ActionTS: "1700000910.000001"}, signingSecret, e.now(), nil)
	if !slices.ContainsFunc(logLines(t, e.current(t)), func(l string) bool { return strings.HasPrefix(l, "Silenced") }) {
		t.Fatalf("parent lines %q, want the silence", logLines(t, e.current(t)))
	}
	// The same router, its Alertmanager now one restarted without data.
	restarted := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: silences(t)})
	if err := restarted.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	e.click(t, restarted, e.current(t), slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:unsilence", ActionTS: "1700000910.000002"}, signingSecret, e.now(), nil)
	for _, r := range e.h.srv.Responses() {
		if strings.Contains(r.Text, "failed") {
			t.Fatalf("Unsilence answered %q", r.Text)
		}
	}
	if !slices.ContainsFunc(logLines(t, e.current(t)), func(l string) bool {
		return strings.HasPrefix(l, "Unsilenced by <@U123>") && strings.Contains(l, "had already ended")
	}) {
		t.Fatalf("parent lines %q, want the Unsilence saying the silence had ended", logLines(t, e.current(t)))
	}
}

// A code span cannot hold a backtick: an incident key holding one (a
// group_by: [] route's matcher note=~"a`b") is shown with ˋ wherever Slack
// shows it in a code span, and a command given the key as shown reads the
// ˋ back (an audit: the span closed at the key's backtick, and the rest
// read as mrkdwn).
func TestAnIncidentKeyWithABacktickIsShownAndReadBack(t *testing.T) {
	am := silences(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	const key = "route/note=~\"a`b|c_d*e\",team=\"db\""
	shown := strings.ReplaceAll(key, "`", "ˋ")
	// A key may hold ˋ itself: typed as is, it names its incident.
	const own = "route/note=\"aˋb\",team=\"web\""
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: key, Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1", "note": "a`b"}, Decision: alert.Decision{Action: alert.ActionPage}},
		journal.Entry{Fingerprint: "bbb", Status: "firing", Receivers: []string{"triage"}, Incident: own, Labels: map[string]string{"alertname": "CheckoutSlow", "job": "web", "instance": "web-1", "note": "aˋb"}, Decision: alert.Decision{Action: alert.ActionPage}},
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"incidents all", "explain aaa all"} {
		a := e.commandAnswer(t, tr, cmd, "w-"+cmd, "U123")
		if !strings.Contains(a.Text, "`"+shown+"`") || strings.Contains(a.Text, "a`b") {
			t.Errorf("%s answered %q, want the key in one code span as %s", cmd, a.Text, shown)
		}
	}
	if a := e.commandAnswer(t, tr, "silence `"+shown+"` 2h", "w-silence", "U123"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, "silenced incident") {
		t.Fatalf("silence of the key as shown answered %+v", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 1 {
		t.Fatalf("silences %+v, want 1", list)
	}
	if a := e.commandAnswer(t, tr, "silence "+own+" 2h", "w-own", "U123"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, "silenced incident") {
		t.Fatalf("silence of a key holding ˋ itself answered %+v", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 2 {
		t.Fatalf("silences %+v, want 2", list)
	}
}

// A key holding a bidirectional control is shown with it as [U+202E]
// (notify.ShowBidi), and one holding a no-break space with the space as it
// is: copied into /alertrouter silence, each names its incident (a review:
// "No firing alert", and "is no duration" for the space split as ASCII's).
func TestAnIncidentKeyWithABidiControlOrANoBreakSpaceIsReadBack(t *testing.T) {
	am := silences(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	const bidi = "route/note=\"a\u202eb\",team=\"db\""
	const nbsp = "route/note=\"a\u00a0b\",team=\"web\""
	j := journalOf(t, e.store,
		journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: bidi, Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1", "note": "a\u202eb"}, Decision: alert.Decision{Action: alert.ActionPage}},
		journal.Entry{Fingerprint: "bbb", Status: "firing", Receivers: []string{"triage"}, Incident: nbsp, Labels: map[string]string{"alertname": "CheckoutSlow", "job": "web", "instance": "web-1", "note": "a\u00a0b"}, Decision: alert.Decision{Action: alert.ActionPage}},
	)
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, nil), nil, nil); err != nil {
		t.Fatal(err)
	}
	shown := notify.ShowBidi(bidi)
	if a := e.commandAnswer(t, tr, "incidents all", "w-incidents", "U123"); !strings.Contains(a.Text, shown) {
		t.Fatalf("incidents answered %q, want the key shown as %s", a.Text, shown)
	}
	for i, key := range []string{"`" + shown + "`", nbsp} {
		if a := e.commandAnswer(t, tr, "silence "+key+" 2h", fmt.Sprintf("w-silence-%d", i), "U123"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, "silenced incident") {
			t.Fatalf("silence %q answered %+v", key, a)
		}
		if list, _ := am.List(context.Background()); len(list) != i+1 {
			t.Fatalf("after silence %q: silences %+v, want %d", key, list, i+1)
		}
	}
}

// A command pasted with no-break spaces between its words (Slack clients
// put them in pasted text) reads as typed with spaces, while a key holding
// one (above) still names its incident (a review: "incidents all" pasted
// answered the usage, and a silence its comment as the duration).
func TestACommandWithNoBreakSpacesBetweenItsWordsIsRead(t *testing.T) {
	e, tr, am := silenceCommandEnv(t)
	if a := e.commandAnswer(t, tr, "incidents\u00a0all", "w-nb-incidents", "U123"); !strings.Contains(a.Text, "inc/1") {
		t.Fatalf("incidents\\u00a0all answered %q, want the incident listed", a.Text)
	}
	if a := e.commandAnswer(t, tr, "explain aaa\u00a0all", "w-nb-explain", "U123"); !strings.Contains(a.Text, "TTFTHigh") {
		t.Fatalf("explain aaa\\u00a0all answered %q, want the alert's decision", a.Text)
	}
	if a := e.commandAnswer(t, tr, "silence `inc/1`\u00a02h\u00a0deploy rollback", "w-nb-silence", "U123"); a.ResponseType != "in_channel" || !strings.Contains(a.Text, "silenced incident") {
		t.Fatalf("a silence pasted with no-break spaces answered %+v", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 1 {
		t.Fatalf("silences %+v, want 1", list)
	}
}
