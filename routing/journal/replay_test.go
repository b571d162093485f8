package journal_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

	// Through a writer (the router's): the same entry, written by it. The
	// dead letter is another notification's (another receiver's): a copy
	// of the first, written within its replay's millisecond, read that
	// replay as its own earlier send and was rightly not sent again (the
	// test failed about once in 200 runs).
	msg, results := decide(t, "firing.json")
	writeDeadLetter(t, w, &alert.Notification{Receiver: "slack-other", Integration: "slack/0", Incident: results[0].Incident, Kind: alert.KindFiring,
		Action: results[0].Decision.Action, Opening: true, Results: results[:1], Data: &msg.Data})
	dls, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter, Newest: true, Limit: 1})
	if err != nil || len(dls) != 1 || dls[0].DeadLetter.Receiver != "slack-other" {
		t.Fatalf("second dead letter = %+v, %v", dls, err)
	}
	id2 := dls[0].ID
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

// Two dead letters of one notification (Alertmanager retried a failing
// webhook, each retry failed alike) replayed at the same moment — two SREs
// on two replicas, the CLI and the console — send it once: both copies are
// claimed through their notification, not through their ids alone (audit
// REPLAY: 11 runs in 50 paged twice).
func TestTwoCopiesOfANotificationReplayedAtOnceSendOnce(t *testing.T) {
	for run := range 30 {
		j := store.NewMemoryJournal(store.JournalRetention{})
		w, _ := newWriter(t, j, journal.WriterOptions{})
		older, newer := deadLetter(t, w, j), deadLetter(t, w, j)
		var calls atomic.Int32
		claims := store.NewMemory()
		replayer := func(owner string) *journal.Replayer {
			return &journal.Replayer{Journal: j, Claims: claims, KeyPrefix: "test:", Owner: owner,
				Send: func(context.Context, journal.DeadLetter) error {
					calls.Add(1)
					time.Sleep(2 * time.Millisecond)
					return nil
				}}
		}
		var wg sync.WaitGroup
		var sent atomic.Int32
		for i, id := range []string{older, newer} {
			r := replayer([]string{"router-a", "router-b"}[i])
			wg.Go(func() {
				ok, err := r.Replay(context.Background(), id)
				if err != nil && !errors.Is(err, journal.ErrInFlight) { // the other copy is being sent
					t.Errorf("replay %s: %v", id, err)
				}
				if ok {
					sent.Add(1)
				}
			})
		}
		wg.Wait()
		if calls.Load() != 1 || sent.Load() != 1 {
			t.Fatalf("run %d: two copies replayed at once sent %d times (reported %d), want 1", run, calls.Load(), sent.Load())
		}
		if rep, err := replayer("cli").ReplayAll(t.Context(), time.Time{}); err != nil || rep.Sent != 0 || calls.Load() != 1 {
			t.Fatalf("run %d: replay --all after = %+v, %v (%d sends)", run, rep, err, calls.Load())
		}
	}
}

// A firing dead letter whose alerts all resolved since — the resolve was
// journaled, delivered or dead-lettered itself — is not sent: it would page
// for something over, and PagerDuty's incident would stay open unless the
// resolve's dead letter is replayed too (audit REPLAY). A resolve's dead
// letter is still sent, and a firing one whose alerts did not all resolve.
func TestReplayLeavesAFiringWhoseAlertsResolvedSince(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	msg, results := decide(t, "firing.json")
	if len(results) < 2 {
		t.Fatalf("firing.json decides %d alerts, want 2 or more", len(results))
	}
	inc := results[0].Incident
	both := slices.Clone(results[:2])
	both[1].Incident = inc
	writeDeadLetter(t, w, &alert.Notification{Receiver: "pd", Integration: "pagerduty/0", Incident: inc, Kind: alert.KindFiring,
		Action: alert.ActionPage, Opening: true, Results: both, Data: &msg.Data})
	got, _ := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter})
	firing := got[0]
	var calls []string
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(_ context.Context, d journal.DeadLetter) error {
			calls = append(calls, d.ID)
			return nil
		}}
	resolve := func(fp string) {
		w.Write(journal.Entry{Kind: journal.KindDecision, Time: firing.Time.Add(time.Second), Fingerprint: fp, Incident: inc, Status: "resolved",
			Receivers:  []string{"pd"},
			Deliveries: []journal.Delivery{{Receiver: "pd", Integration: "pagerduty/0", Outcome: journal.OutcomeDeadLetter, Error: "pagerduty: 400"}}})
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	resolve(both[0].Alert.Fingerprint) // one of the two: the other still fires
	resolve("another-alert")
	var sentAlerts []string
	r.Send = func(_ context.Context, d journal.DeadLetter) error {
		calls = append(calls, d.ID)
		n, err := d.Notification()
		if err != nil {
			return err
		}
		for _, res := range n.Results {
			sentAlerts = append(sentAlerts, res.Alert.Fingerprint)
		}
		return nil
	}
	if sent, err := r.Replay(t.Context(), firing.ID); !sent || err != nil || len(calls) != 1 {
		t.Fatalf("a firing with one of its two alerts resolved since: replay = %v, %v (%d sends); want sent", sent, err, len(calls))
	}
	// The alert resolved since is not drawn firing (a review: the parent
	// said "2 firing").
	if !slices.Equal(sentAlerts, []string{both[1].Alert.Fingerprint}) {
		t.Errorf("the replay sent alerts %v, want the one still firing, %s", sentAlerts, both[1].Alert.Fingerprint)
	}

	// The same notification failing again later, both alerts resolving since.
	writeDeadLetter(t, w, &alert.Notification{Receiver: "pd", Integration: "pagerduty/0", Incident: inc, Kind: alert.KindFiring,
		Action: alert.ActionPage, Results: both[1:], Data: &msg.Data})
	got, _ = journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter, Newest: true, Limit: 1})
	firing = got[0]
	resolve(both[1].Alert.Fingerprint)
	resolvedCopy := *both[1].Alert
	resolvedCopy.Status = "resolved"
	writeDeadLetter(t, w, &alert.Notification{Receiver: "pd", Integration: "pagerduty/0", Incident: inc, Kind: alert.KindResolved,
		Action: alert.ActionPage, IncidentResolved: true, Results: []*alert.Result{{Alert: &resolvedCopy, Incident: inc, Decision: both[1].Decision}}, Data: &msg.Data})
	sent, err := r.Replay(t.Context(), firing.ID)
	if sent || !errors.Is(err, journal.ErrResolvedSince) || len(calls) != 1 {
		t.Fatalf("a firing whose alert resolved since: replay = %v, %v (%d sends); want ErrResolvedSince, nothing sent", sent, err, len(calls))
	}
	rep, err := r.ReplayAll(t.Context(), time.Time{})
	// Both firings are left resolved since (the first, replayed before its
	// second alert resolved, is superseded as well now).
	if err != nil || rep.ResolvedSince != 2 || rep.Sent != 1 || len(calls) != 2 {
		t.Fatalf("replay --all = %+v, %v (%d sends); want the resolve sent, the firings left resolved since", rep, err, len(calls))
	}
	if d, _, _ := journal.Get(t.Context(), j, calls[1]); d.DeadLetter == nil || d.DeadLetter.Kind != alert.KindResolved {
		t.Fatalf("replay --all sent %s, want the resolve", calls[1])
	}
}

// failingClaims fails DeleteIfEqual (a Redis blip as a failed replay
// releases its claims) or Set (as a sent one keeps them).
type failingClaims struct {
	*store.Memory
	failDelete, failSet atomic.Bool
}

func (c *failingClaims) DeleteIfEqual(ctx context.Context, e []store.Entry) error {
	if c.failDelete.Load() {
		return fmt.Errorf("redis: i/o timeout: %w", store.ErrUnavailable)
	}
	return c.Memory.DeleteIfEqual(ctx, e)
}

func (c *failingClaims) Set(ctx context.Context, e []store.Entry) error {
	if c.failSet.Load() {
		return fmt.Errorf("redis: i/o timeout: %w", store.ErrUnavailable)
	}
	return c.Memory.Set(ctx, e)
}

// A failed replay whose claims could not be released stays replayable once
// they lapse (they were marked replayed for a month, nothing sent: audit
// REPLAY); a sent one whose marks could not be written is not sent again
// when they lapse: its journaled replay says it went out.
func TestAReplayWhoseClaimsCouldNotBeWrittenBackSendsOnce(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	id := deadLetter(t, w, j)
	claims := &failingClaims{Memory: store.NewMemory()}
	claims.failDelete.Store(true)
	fail := true
	var calls int
	r := &journal.Replayer{Journal: j, Claims: claims, KeyPrefix: "test:", Owner: "r1", Hold: 50 * time.Millisecond, Recorder: w,
		Send: func(context.Context, journal.DeadLetter) error {
			calls++
			if fail {
				return errors.New("slack: channel_not_found")
			}
			return nil
		}}
	if sent, err := r.Replay(t.Context(), id); sent || err == nil || !strings.Contains(err.Error(), "release claims") {
		t.Fatalf("failed replay, release failing = %v, %v", sent, err)
	}
	claims.failDelete.Store(false)
	fail = false
	time.Sleep(120 * time.Millisecond) // the hold lapses
	claims.failSet.Store(true)
	sent, err := r.Replay(t.Context(), id)
	if !sent || err == nil || calls != 2 {
		t.Fatalf("replay after the hold lapsed, marks failing = %v, %v (%d sends); want sent and the marks' error", sent, err, calls)
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	claims.failSet.Store(false)
	time.Sleep(120 * time.Millisecond) // the unwritten marks' hold lapses
	if sent, err := r.Replay(t.Context(), id); sent || err != nil || calls != 2 {
		t.Fatalf("replay of one sent whose marks lapsed = %v, %v (%d sends); want nothing sent", sent, err, calls)
	}
	if list, err := r.List(t.Context(), time.Time{}); err != nil || len(list) != 1 || !list[0].Replayed {
		t.Fatalf("List = %+v, %v; want it marked replayed now", list, err)
	}
}

// A replay holds the ids of its notification's other dead letters while it
// sends: a replica of the build before, which claims the id it replays
// alone, replaying another copy at the same moment finds it held (a
// review: 9 notifications in 20 sent twice across the two builds). And a
// copy the build before holds keeps this build from sending.
func TestAReplayHoldsItsCopiesAgainstTheBuildBefore(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	older, newer := deadLetter(t, w, j), deadLetter(t, w, j)
	claims := store.NewMemory()
	oldKey := func(id string) string { return store.Key("test:", "replayed", id, "") }
	var sends int
	r := &journal.Replayer{Journal: j, Claims: claims, KeyPrefix: "test:", Owner: "router-new",
		Send: func(ctx context.Context, _ journal.DeadLetter) error {
			sends++
			// The build before replaying the older copy now: SET NX of its id.
			if won, err := claims.SetNX(ctx, []store.Entry{{Key: oldKey(older), Value: "router-old/x", TTL: time.Hour}}); err != nil || won[0] {
				t.Errorf("the build before claimed the older copy while this one was being sent: %v %v", won, err)
			}
			return nil
		}}
	if sent, err := r.Replay(t.Context(), newer); !sent || err != nil || sends != 1 {
		t.Fatalf("replay of the newer copy = %v, %v (%d sends)", sent, err, sends)
	}

	// The build before holds a copy: this build sends nothing.
	j2 := store.NewMemoryJournal(store.JournalRetention{})
	w2, _ := newWriter(t, j2, journal.WriterOptions{})
	a, b := deadLetter(t, w2, j2), deadLetter(t, w2, j2)
	claims2 := store.NewMemory()
	if _, err := claims2.SetNX(t.Context(), []store.Entry{{Key: oldKey(a), Value: "router-old/y", TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	r2 := &journal.Replayer{Journal: j2, Claims: claims2, KeyPrefix: "test:", Owner: "router-new",
		Send: func(context.Context, journal.DeadLetter) error { sends++; return nil }}
	if sent, err := r2.Replay(t.Context(), b); sent || err != nil || sends != 1 {
		t.Fatalf("replay of a copy the build before holds = %v, %v (%d sends); want nothing sent", sent, err, sends)
	}
}

// A replay in flight is not "already replayed": another replay of it is
// told it is being sent and stays replayable if that send fails, and the
// list does not show it replayed meanwhile (a review: told "replayed",
// nothing sent).
func TestAReplayInFlightIsSaidInFlight(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	id := deadLetter(t, w, j)
	claims := store.NewMemory()
	release, sending := make(chan struct{}), make(chan struct{})
	var fail atomic.Bool
	fail.Store(true)
	slow := &journal.Replayer{Journal: j, Claims: claims, KeyPrefix: "test:", Owner: "router-a",
		Send: func(context.Context, journal.DeadLetter) error {
			close(sending)
			<-release
			if fail.Load() {
				return errors.New("pagerduty: 400")
			}
			return nil
		}}
	other := &journal.Replayer{Journal: j, Claims: claims, KeyPrefix: "test:", Owner: "router-b",
		Send: func(context.Context, journal.DeadLetter) error { return nil }}
	done := make(chan error)
	go func() { _, err := slow.Replay(context.Background(), id); done <- err }()
	<-sending
	if sent, err := other.Replay(t.Context(), id); sent || !errors.Is(err, journal.ErrInFlight) || !strings.Contains(err.Error(), "router-a") {
		t.Errorf("replay while another sends it = %v, %v; want ErrInFlight naming router-a", sent, err)
	}
	if list, err := other.List(t.Context(), time.Time{}); err != nil || len(list) != 1 || list[0].Replayed || !list[0].Replaying {
		t.Errorf("List while it is sent = %+v, %v; want it being replayed, not replayed yet", list, err)
	}
	close(release)
	if err := <-done; err == nil {
		t.Fatal("the slow replay did not fail")
	}
	if sent, err := other.Replay(t.Context(), id); !sent || err != nil {
		t.Errorf("replay after the first failed = %v, %v; want sent", sent, err)
	}
}

// A resolve's dead letter whose alert fired again since — a later start,
// a new episode — is not sent: it would close at PagerDuty an incident that
// fires (a review). A firing of the same start after it (an Alertmanager HA
// peer lagging) does not stop it. And a firing's dead letter whose alert's
// resolve was decided before the dead letter was written (its sends gave
// up later) is resolved since all the same.
func TestAResolveWhoseAlertFiredAgainSinceIsNotSent(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	dl, res, results := closingResolveDeadLetter(t, w, j)
	al := *res.Alert
	start := al.StartsAt
	var sends int
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(context.Context, journal.DeadLetter) error { sends++; return errors.New("still failing") }}
	decision := func(status string, at time.Time, action alert.Action) {
		w.Write(journal.Entry{Kind: journal.KindDecision, Time: dl.Time.Add(time.Second), Fingerprint: al.Fingerprint, Incident: res.Incident,
			Status: status, StartsAt: at, Receivers: []string{"pd"}, Decision: alert.Decision{Action: action}})
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	decision("firing", start, alert.ActionPage) // a lagging peer's copy of the same episode
	if _, err := r.Replay(t.Context(), dl.ID); errors.Is(err, journal.ErrFiredSince) || sends != 1 {
		t.Fatalf("a firing of the same start after the resolve stopped it: %v (%d sends)", err, sends)
	}
	// A new episode decided none (a low burn rate): nothing holds the
	// incident open, the resolve is needed (a review: refused for good).
	decision("firing", start.Add(30*time.Minute), alert.ActionNone)
	if _, err := r.Replay(t.Context(), dl.ID); errors.Is(err, journal.ErrFiredSince) || sends != 2 {
		t.Fatalf("a re-fire decided none stopped the resolve: %v (%d sends)", err, sends)
	}
	decision("firing", start.Add(time.Hour), alert.ActionPage) // a new episode that pages
	if sent, err := r.Replay(t.Context(), dl.ID); sent || !errors.Is(err, journal.ErrFiredSince) || sends != 2 {
		t.Fatalf("replay of a resolve whose alert fired again = %v, %v (%d sends); want ErrFiredSince", sent, err, sends)
	}
	decision("resolved", start.Add(time.Hour), alert.ActionPage) // and resolved since: the resolve is needed again
	if _, err := r.Replay(t.Context(), dl.ID); errors.Is(err, journal.ErrFiredSince) || sends != 3 {
		t.Fatalf("a re-fire resolved since still stopped the resolve: %v (%d sends)", err, sends)
	}

	// The resolve decided before the firing's dead letter was written.
	j2 := store.NewMemoryJournal(store.JournalRetention{})
	w2, _ := newWriter(t, j2, journal.WriterOptions{})
	w2.Write(journal.Entry{Kind: journal.KindDecision, Time: time.Now().Add(-7 * time.Second), Fingerprint: results[0].Alert.Fingerprint,
		Incident: results[0].Incident, Status: "resolved", StartsAt: start, Receivers: []string{"slack-llm"}})
	id := deadLetter(t, w2, j2)
	r2 := &journal.Replayer{Journal: j2, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(context.Context, journal.DeadLetter) error { sends++; return nil }}
	if sent, err := r2.Replay(t.Context(), id); sent || !errors.Is(err, journal.ErrResolvedSince) || sends != 3 {
		t.Fatalf("replay of a firing resolved just before its dead letter was written = %v, %v; want ErrResolvedSince", sent, err)
	}
}

// A resolve's dead letter that closes its incident is not sent while
// another alert of the incident fires since: PagerDuty's incident is the
// incident's (its dedup key), and the other alert was folded into it (a
// review: the replay resolved PagerDuty while it fired). Once that alert
// resolved too, the resolve goes.
func TestAClosingResolveIsNotSentWhileAnotherAlertOfItFires(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	dl, res, _ := closingResolveDeadLetter(t, w, j)
	al := *res.Alert
	var sends int
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(context.Context, journal.DeadLetter) error { sends++; return errors.New("still failing") }}
	other := func(status string) {
		w.Write(journal.Entry{Kind: journal.KindDecision, Time: dl.Time.Add(time.Second), Fingerprint: "bbbbbbbbbbbbbbb2", Incident: res.Incident,
			Status: status, StartsAt: al.StartsAt.Add(-time.Hour), Receivers: []string{"pd"}, Decision: alert.Decision{Action: alert.ActionPage},
			Deliveries: []journal.Delivery{{Receiver: "pd", Integration: "pagerduty/0", Outcome: string(alert.DeliverySuppressed)}}})
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	other("firing")
	if sent, err := r.Replay(t.Context(), dl.ID); sent || !errors.Is(err, journal.ErrFiredSince) || sends != 0 {
		t.Fatalf("replay of the closing resolve while another alert of the incident fires = %v, %v (%d sends); want ErrFiredSince", sent, err, sends)
	}
	other("resolved")
	if _, err := r.Replay(t.Context(), dl.ID); errors.Is(err, journal.ErrFiredSince) || sends != 1 {
		t.Fatalf("the other alert resolved since, the replay is still refused: %v (%d sends)", err, sends)
	}
}

// closingResolveDeadLetter writes the dead letter of the resolve, closing
// its incident at PagerDuty, of firing.json's first alert, and returns it
// with that resolved alert's result and the file's results.
func closingResolveDeadLetter(t *testing.T, w *journal.Writer, j store.Journal) (journal.Entry, *alert.Result, []*alert.Result) {
	t.Helper()
	msg, results := decide(t, "firing.json")
	res := *results[0]
	al := *res.Alert
	al.Status = "resolved"
	res.Alert = &al
	writeDeadLetter(t, w, &alert.Notification{Receiver: "pd", Integration: "pagerduty/0", Incident: res.Incident, Kind: alert.KindResolved,
		Action: alert.ActionPage, IncidentResolved: true, Results: []*alert.Result{&res}, Data: &msg.Data})
	got, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter, Newest: true, Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("the resolve's dead letter: %v, %v", got, err)
	}
	return got[0], &res, results
}
