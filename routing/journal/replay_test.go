package journal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// A replay's outcome is journaled (journal.KindReplay): the incident's page
// shows it beside the dead letter, which before stayed "dead_letter" with
// nothing beside it after a successful replay. A replayer without a
// writer (the CLI) appends it at once; a failed send is journaled failed,
// a second replay that sends nothing journals nothing.
func TestAReplayJournalsItsOutcome(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	id := deadLetter(t, w, j)
	fail := true
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "cli@ops-host", Via: "cli",
		Send: func(context.Context, journal.DeadLetter) error {
			if fail {
				return errors.New("slack: invalid_auth")
			}
			return nil
		}}
	if sent, err := r.Replay(t.Context(), id); sent || err == nil {
		t.Fatalf("replay with the token revoked = %v, %v", sent, err)
	}
	fail = false
	if sent, err := r.Replay(t.Context(), id); !sent || err != nil {
		t.Fatalf("replay = %v, %v", sent, err)
	}
	if sent, err := r.Replay(t.Context(), id); sent || err != nil {
		t.Fatalf("second replay = %v, %v; want nothing sent", sent, err)
	}
	got, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindReplay})
	if err != nil || len(got) != 2 {
		t.Fatalf("replay entries = %+v, %v; want the failure and the send", got, err)
	}
	dl, _, _ := journal.Get(t.Context(), j, id)
	for i, want := range []string{journal.OutcomeFailed, journal.OutcomeSent} {
		e := got[i]
		if e.Replay == nil || e.Replay.DeadLetter != id || e.Replay.Via != "cli" || e.Replica != "cli@ops-host" ||
			e.Incident != dl.DeadLetter.Incident || e.Replay.Kind != alert.KindFiring || len(e.Deliveries) != 1 {
			t.Fatalf("replay entry %d = %+v (replay %+v)", i, e, e.Replay)
		}
		d := e.Deliveries[0]
		if d.Outcome != want || d.Receiver != "slack-llm" || d.Integration != "slack/0" || (want == journal.OutcomeFailed) != (d.Error != "") {
			t.Errorf("replay entry %d delivery = %+v, want %s", i, d, want)
		}
	}

	// Through a writer (the router's): the same entry, written by it.
	id2 := deadLetter(t, w, j)
	r2 := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "router-1", Via: "console", Recorder: w,
		Send: func(context.Context, journal.DeadLetter) error { return nil }}
	if sent, err := r2.Replay(t.Context(), id2); !sent || err != nil {
		t.Fatalf("console replay = %v, %v", sent, err)
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, _ = journal.Read(t.Context(), j, journal.Query{Kind: journal.KindReplay, Newest: true, Limit: 1})
	if len(got) != 1 || got[0].Replay.DeadLetter != id2 || got[0].Replay.Via != "console" || got[0].Replica != "router-1" || got[0].Deliveries[0].Outcome != journal.OutcomeSent {
		t.Fatalf("console replay entry = %+v", got)
	}
}

// The journal's readers that decide or count alerts read decisions only:
// triage and replay entries in an export (`router journal export` writes
// every kind; `simulate --from` reads it) change nothing the simulator
// reports.
func TestTheSimulatorSkipsTriageAndReplayEntries(t *testing.T) {
	msg := decodeFile(t, "mixed.json")
	p := pipeline(t, config.LoadDefault().Policies)
	var entries []journal.Entry
	for _, r := range p.Evaluate(msg) {
		entries = append(entries, journal.FromResult(msg, r))
	}
	inc := entries[0].Incident
	mixed := append([]journal.Entry{
		{Kind: journal.KindTriage, Time: msg.ReceivedAt, Incident: inc, Triage: &journal.Triage{Action: journal.TriageEscalate, UserID: "U1"}},
		{Kind: journal.KindReplay, Time: msg.ReceivedAt, Incident: inc, Fingerprint: entries[0].Fingerprint, Status: "firing",
			Decision:   alert.Decision{Action: alert.ActionPage},
			Deliveries: []journal.Delivery{{Receiver: "pd", Integration: "pagerduty/0", Outcome: journal.OutcomeSent}},
			Replay:     &journal.Replay{DeadLetter: "1-0", Kind: alert.KindFiring, Action: alert.ActionPage}},
	}, entries...)
	want := journal.Simulate(entries, p.Evaluate, journal.Options{})
	rep := journal.Simulate(mixed, p.Evaluate, journal.Options{})
	if rep.Alerts != want.Alerts || rep.Changed != want.Changed || rep.Changed != 0 {
		t.Fatalf("with triage and replay entries: %d alerts, %d changed; without: %d, %d", rep.Alerts, rep.Changed, want.Alerts, want.Changed)
	}
}

// A replay of a resolve that closed the incident says so on its delivery:
// the console then knows PagerDuty's incident closed, and an acknowledgement
// of it says nothing of the next page (review R15).
func TestAReplayOfAClosingResolveSaysItClosed(t *testing.T) {
	for _, closing := range []bool{true, false} {
		e := &journal.Entry{ID: "1-0", DeadLetter: &journal.DeadLetter{Receiver: "oncall", Integration: "pagerduty/0", Incident: "inc", Kind: alert.KindResolved, IncidentResolved: closing}}
		r := journal.NewReplay(e, "router-0", "console", time.Now(), time.Millisecond, nil)
		if len(r.Deliveries) != 1 || r.Deliveries[0].Closed != closing || r.Deliveries[0].Outcome != journal.OutcomeSent {
			t.Errorf("a replay of a dead letter closing=%v: deliveries %+v", closing, r.Deliveries)
		}
	}
}
