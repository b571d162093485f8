package slack_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// journalRecorder keeps what a Triage journals.
type journalRecorder struct {
	mu      sync.Mutex
	entries []journal.Entry
}

func (r *journalRecorder) Write(entries ...journal.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, entries...)
}

func (r *journalRecorder) all() []journal.Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]journal.Entry(nil), r.entries...)
}

// stubSilencer makes silence "s-1" and expires anything.
type stubSilencer struct{}

func (stubSilencer) Create(context.Context, amsilence.Silence) (string, error) { return "s-1", nil }
func (stubSilencer) Expire(context.Context, string) error                      { return nil }
func (stubSilencer) Alerts(context.Context, []amsilence.Matcher) ([]amsilence.Alert, error) {
	return nil, nil
}

// What a click did in Slack reaches the journal, for the console: a second
// engineer opening the incident there sees it acknowledged, silenced,
// resolved by hand or escalated. Before, nothing of it was journaled. A
// refused click did nothing and journals nothing.
func TestAClickTakenIsJournaledAndARefusedOneIsNot(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	rec := &journalRecorder{}
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: stubSilencer{}, Recorder: rec, Now: func() time.Time { return clock }})
	n := e.notifier(t, func(c *slack.Config) { c.Authorized = map[string][]string{slack.ActionAck: {"U999"}} })
	if err := tr.Add("triage", "slack/0", n, e.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	refused := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700000900.000001"}
	e.click(t, tr, e.parent, refused, signingSecret, e.now(), nil)
	if got := rec.all(); len(got) != 0 {
		t.Fatalf("a refused ack journaled %+v", got)
	}

	silence := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:silence:4h", ActionTS: "1700000900.000002"}
	e.click(t, tr, e.parent, silence, signingSecret, e.now(), nil)
	ack := slacktest.Click{User: "U999", UserName: "oncall", ActionID: "alertrouter:ack", ActionTS: "1700000900.000003"}
	e.click(t, tr, e.current(t), ack, signingSecret, e.now(), nil)
	resolve := slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:resolve", ActionTS: "1700000900.000004"}
	e.click(t, tr, e.current(t), resolve, signingSecret, e.now(), nil)

	got := rec.all()
	if len(got) != 3 {
		t.Fatalf("journaled %d entries, want silence, ack, resolve: %+v", len(got), got)
	}
	want := []journal.Triage{
		{Action: journal.TriageSilence, UserID: "U123", UserName: "jdoe", Receiver: "triage", Integration: "slack/0", Silence: "s-1", Until: clock.Add(4 * time.Hour)},
		{Action: journal.TriageAck, UserID: "U999", UserName: "oncall", Receiver: "triage", Integration: "slack/0"},
		{Action: journal.TriageResolve, UserID: "U123", UserName: "jdoe", Receiver: "triage", Integration: "slack/0"},
	}
	for i, en := range got {
		if en.Kind != journal.KindTriage || en.Incident == "" || en.Incident != got[0].Incident || !en.Time.Equal(clock) || en.Triage == nil {
			t.Fatalf("entry %d = %+v", i, en)
		}
		if *en.Triage != want[i] {
			t.Errorf("entry %d: triage %+v, want %+v", i, *en.Triage, want[i])
		}
	}

	// An escalated ticket says who escalated it, and to whom.
	te := newTriageEnv(t, alert.ActionTicket, nil)
	trec := &journalRecorder{}
	tt := slack.NewTriage(slack.TriageOptions{Store: te.store, Recorder: trec, Now: func() time.Time { return clock }})
	if err := tt.Add("triage", "slack/0", te.notifier(t, nil), te.pager(t), nil); err != nil {
		t.Fatal(err)
	}
	te.click(t, tt, te.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:escalate", ActionTS: "1700000900.000005"}, signingSecret, te.now(), nil)
	if got := trec.all(); len(got) != 1 || got[0].Triage == nil || got[0].Triage.Action != journal.TriageEscalate || got[0].Triage.EscalatedTo != "triage" || got[0].Triage.Unconfirmed {
		t.Fatalf("escalation journaled %+v", got)
	}
}
