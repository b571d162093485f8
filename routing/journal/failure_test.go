package journal_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// switchedJournal fails its appends with the error stored in fail (none:
// they go to the inner journal); with hold set, an append first says
// entered and waits for release.
type switchedJournal struct {
	store.Journal
	fail    atomic.Pointer[error]
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (j *switchedJournal) AppendJournal(ctx context.Context, recs []store.JournalRecord) ([]string, error) {
	if j.hold.Load() {
		j.entered <- struct{}{}
		<-j.release
	}
	if err := j.fail.Load(); err != nil {
		return nil, *err
	}
	return j.Journal.AppendJournal(ctx, recs)
}

func (j *switchedJournal) failWith(err error) {
	if err == nil {
		j.fail.Store(nil)
		return
	}
	j.fail.Store(&err)
}

// The writer keeps the run of failed appends the console shows (journal
// writes failing since when, why, and how much was lost): the time of the
// run's first failure, the last error, and the decisions and dead letters
// dropped since — those of the failed appends, and those the buffer had
// no room for while the writer waited on the failing store. The next
// successful append ends it.
func TestWriterKeepsTheRunOfFailedAppendsUntilOneSucceeds(t *testing.T) {
	inner := store.NewMemoryJournal(store.JournalRetention{})
	j := &switchedJournal{Journal: inner, entered: make(chan struct{}, 1), release: make(chan struct{})}
	var clock atomic.Int64
	t0 := time.Date(2025, 3, 1, 3, 0, 0, 0, time.UTC)
	clock.Store(t0.UnixNano())
	w, _ := newWriter(t, j, journal.WriterOptions{Buffer: 2, Batch: 1, Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	decision := journal.Entry{Kind: journal.KindDecision, Time: t0}
	dead := journal.Entry{Kind: journal.KindDeadLetter, Time: t0, DeadLetter: &journal.DeadLetter{Receiver: "oncall", Integration: "pagerduty/0"}}
	flush := func() {
		t.Helper()
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	w.Write(decision)
	flush()
	if f, ok := w.Failure(); ok {
		t.Fatalf("appends succeed: the writer reports a failure %+v", f)
	}

	j.failWith(errors.New("redis journal append: NOPERM User router has no permissions to run the 'xadd' command"))
	w.Write(decision, dead)
	flush()
	f, ok := w.Failure()
	if want := (journal.AppendFailure{Since: t0, Err: "redis journal append: NOPERM User router has no permissions to run the 'xadd' command",
		Decisions: 1, DeadLetters: 1}); !ok || f != want {
		t.Fatalf("after a failed append: %+v, %v; want %+v", f, ok, want)
	}

	// Later failures extend the run: its start stays, the error is the
	// last one, and what the buffer drops while an append hangs counts.
	clock.Store(t0.Add(time.Minute).UnixNano())
	j.failWith(errors.New("redis journal append: OOM command not allowed when used memory > 'maxmemory'."))
	j.hold.Store(true)
	w.Write(decision)
	<-j.entered // the writer holds it in a hung append
	j.hold.Store(false)
	w.Write(decision, decision)   // fits the buffer
	w.Write(decision, dead, dead) // no room: dropped
	close(j.release)
	flush()
	f, ok = w.Failure()
	if want := (journal.AppendFailure{Since: t0, Err: "redis journal append: OOM command not allowed when used memory > 'maxmemory'.",
		Decisions: 5, DeadLetters: 3}); !ok || f != want {
		t.Fatalf("after more failures: %+v, %v; want %+v", f, ok, want)
	}

	j.failWith(nil)
	w.Write(decision)
	flush()
	if f, ok := w.Failure(); ok {
		t.Fatalf("an append succeeded: the writer still reports %+v", f)
	}
	// A new run starts afresh.
	clock.Store(t0.Add(time.Hour).UnixNano())
	j.failWith(store.ErrUnavailable)
	w.Write(decision)
	flush()
	if f, ok := w.Failure(); !ok || !f.Since.Equal(t0.Add(time.Hour)) || f.Decisions != 1 || f.DeadLetters != 0 {
		t.Fatalf("a new run of failures: %+v, %v; want one decision lost since %s", f, ok, t0.Add(time.Hour))
	}
}

// An alert muted by a time interval has no receivers — nothing was sent,
// and notify/slack's Silence reads Receivers as where it was routed — but
// its entry keeps whose it was (muted_receivers), which the receiver
// filter matches: /decisions?receiver=team-11-slack answered "No decision
// matches" for team 11's muted decisions. An entry that is not muted keeps
// none, and an old entry without the field reads as before.
func TestAMutedDecisionKeepsItsReceiversApart(t *testing.T) {
	a := &alert.Alert{}
	a.Labels = map[string]string{"alertname": "DiskFull", "team": "11"}
	muted := journal.FromResult(&alert.Message{}, &alert.Result{Alert: a, MutedBy: "mute_time_intervals nights of route.routes[11]",
		MutedReceivers: []string{"team-11-slack"}})
	if len(muted.Receivers) != 0 || !slices.Equal(muted.MutedReceivers, []string{"team-11-slack"}) || !muted.Muted {
		t.Fatalf("muted entry: receivers %v, muted receivers %v, muted %v; want none, [team-11-slack], true", muted.Receivers, muted.MutedReceivers, muted.Muted)
	}
	// A result routed after all (the evaluation fallback pages the root
	// receiver) records no muted receivers.
	routed := journal.FromResult(&alert.Message{}, &alert.Result{Alert: a, Receivers: []string{"default"}, MutedReceivers: []string{"team-11-slack"}})
	if len(routed.MutedReceivers) != 0 {
		t.Fatalf("an entry that is not muted keeps muted receivers %v", routed.MutedReceivers)
	}
	for _, tc := range []struct {
		entry journal.Entry
		want  bool
	}{
		{muted, true},
		{routed, false},
		{journal.Entry{Kind: journal.KindDecision, Receivers: []string{"team-11-slack"}}, true},
		{journal.Entry{Kind: journal.KindDecision, Receivers: []string{"team-12-slack"}, MutedReceivers: []string{"team-12-pd"}}, false},
	} {
		if got := (journal.Filter{Receiver: "team-11-slack"}).Match(&tc.entry); got != tc.want {
			t.Errorf("receiver filter on receivers %v, muted receivers %v: %v, want %v", tc.entry.Receivers, tc.entry.MutedReceivers, got, tc.want)
		}
	}

	// Written and read back through a frame; an entry written before the
	// field existed reads with none.
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	w.Write(muted)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := j.AppendJournal(t.Context(), []store.JournalRecord{{Kind: "decision", Data: []byte(`{"kind":"decision","time":"2025-03-01T03:00:00Z","receivers":["team-11-slack"]}`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil || len(got) != 2 {
		t.Fatalf("read back %d entries, %v", len(got), err)
	}
	if !slices.Equal(got[0].MutedReceivers, []string{"team-11-slack"}) || len(got[0].Receivers) != 0 {
		t.Errorf("muted entry read back with receivers %v, muted receivers %v", got[0].Receivers, got[0].MutedReceivers)
	}
	if !slices.Equal(got[1].Receivers, []string{"team-11-slack"}) || got[1].MutedReceivers != nil {
		t.Errorf("old entry read back with receivers %v, muted receivers %v", got[1].Receivers, got[1].MutedReceivers)
	}
}

// A Write the entry budget admits while Flush's markers fill the channel
// is dropped at the channel (a review): counted, and in the run of failed
// appends the console shows, as any drop.
func TestAWriteDroppedAtAChannelFullOfFlushMarkersIsInTheFailureRun(t *testing.T) {
	inner := store.NewMemoryJournal(store.JournalRetention{})
	j := &switchedJournal{Journal: inner, entered: make(chan struct{}, 4), release: make(chan struct{})}
	w, reg := newWriter(t, j, journal.WriterOptions{Buffer: 2, Batch: 1})
	j.failWith(errors.New("redis journal append: OOM command not allowed"))
	w.Write(decisions("failed", 1)...)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	j.hold.Store(true)
	w.Write(decisions("held", 1)...)
	<-j.entered // the writer is stuck in a failing append
	w.Write(decisions("a", 1)...)
	flushed := make(chan error, 1)
	go func() { flushed <- w.Flush(t.Context()) }() // its marker fills the channel
	for deadline := time.Now().Add(5 * time.Second); !journal.ChannelFull(w); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Flush's marker never reached the channel")
		}
	}
	w.Write(decisions("b", 1)...) // admitted (1 entry waits), the channel full
	j.hold.Store(false)
	close(j.release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	dropped := metricSum(t, reg, "alertrouter_journal_dropped_total")
	f, ok := w.Failure()
	if !ok || float64(f.Decisions) != dropped {
		t.Fatalf("failure run %+v (failing %v), dropped_total %v: want every drop in the run", f, ok, dropped)
	}
}

// Dead letters dropped by a failing store were logged as any entry —
// "journal append failed; entries dropped, webhooks unaffected", and the
// recovery at info —, while each failure's line sent on-call to replay a
// dead letter the journal never got (an audit: 120 dropped in a store
// outage). An append that drops dead letters is an error naming them,
// and the recovery after such a run a warning.
func TestDroppedDeadLettersAreLoggedAsLost(t *testing.T) {
	inner := store.NewMemoryJournal(store.JournalRetention{})
	j := &switchedJournal{Journal: inner}
	var logs notifytest.SyncBuffer
	w, _ := newWriter(t, j, journal.WriterOptions{Batch: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	t0 := time.Date(2025, 3, 1, 3, 0, 0, 0, time.UTC)
	decision := journal.Entry{Kind: journal.KindDecision, Time: t0}
	dead := journal.Entry{Kind: journal.KindDeadLetter, Time: t0, DeadLetter: &journal.DeadLetter{Receiver: "oncall", Integration: "pagerduty/0"}}
	write := func(e ...journal.Entry) {
		t.Helper()
		w.Write(e...)
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	j.failWith(store.ErrUnavailable)
	write(decision)
	if out := logs.String(); !strings.Contains(out, `level=WARN msg="journal append failed; entries dropped, webhooks unaffected"`) {
		t.Fatalf("a decision dropped:\n%s", out)
	}
	write(decision, dead)
	if out := logs.String(); !strings.Contains(out, `level=ERROR msg="journal append failed; dead letters dropped: `) || !strings.Contains(out, "dead_letters=1") {
		t.Errorf("a dead letter dropped is not logged as an error naming it:\n%s", out)
	}
	j.failWith(nil)
	write(decision)
	if out := logs.String(); !strings.Contains(out, `level=WARN msg="journal appends succeed again; the entries dropped while they failed, dead letters among them`) {
		t.Errorf("the recovery after dead letters were dropped is not a warning naming them:\n%s", out)
	}
}
