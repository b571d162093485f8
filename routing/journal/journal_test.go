package journal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

func newWriter(t testing.TB, j store.Journal, opts journal.WriterOptions) (*journal.Writer, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := journal.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	w := journal.NewWriter(j, m, opts)
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	return w, reg
}

// decide evaluates a testdata webhook with the default configuration.
func decide(t testing.TB, file string) (*alert.Message, []*alert.Result) {
	t.Helper()
	p := pipeline(t, config.LoadDefault().Policies)
	msg := decodeFile(t, file)
	return msg, p.Evaluate(msg)
}

func decodeFile(t testing.TB, file string) *alert.Message {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "webhook", file))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := webhook.Decode(body, time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func pipeline(t testing.TB, pc policies.Config) *routing.Pipeline {
	t.Helper()
	cfg := config.LoadDefault()
	cls, err := enrich.New(cfg.Classifier)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := policies.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	return &routing.Pipeline{Classifier: cls, Decider: dec, Routes: cfg.Route, GroupBy: cfg.Incidents.GroupBy,
		Now: func() time.Time { return time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC) }}
}

func TestWriterAppendsEveryDecisionOfAWebhook(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, reg := newWriter(t, j, journal.WriterOptions{Replica: "r1", Batch: 7})
	msg, results := decide(t, "hundred.json")
	for _, r := range results {
		w.Write(journal.FromResult(msg, r))
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(results) {
		t.Fatalf("journal holds %d entries, want %d", len(got), len(results))
	}
	for i, e := range got {
		r := results[i]
		if e.ID == "" || e.Replica != "r1" || e.Fingerprint != r.Alert.Fingerprint || e.Decision.Action != r.Decision.Action ||
			e.Sector != r.Classification.Sector || len(e.Decision.Reasons) != len(r.Decision.Reasons) || e.Incident != r.Incident {
			t.Fatalf("entry %d = %+v does not record result %+v", i, e, r)
		}
	}
	if v := metricSum(t, reg, "alertrouter_journal_written_total"); v != float64(len(results)) {
		t.Fatalf("written_total = %v, want %d", v, len(results))
	}
}

// metricSum sums the values of a registered counter's series.
func metricSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// blockingJournal holds every append until released.
type blockingJournal struct {
	store.Journal
	entered chan struct{}
	release chan struct{}
}

func (b *blockingJournal) AppendJournal(ctx context.Context, recs []store.JournalRecord) ([]string, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Journal.AppendJournal(ctx, recs)
}

func TestWriterNeverBlocksAndCountsWhatItDrops(t *testing.T) {
	inner := store.NewMemoryJournal(store.JournalRetention{})
	j := &blockingJournal{Journal: inner, entered: make(chan struct{}, 10), release: make(chan struct{})}
	w, reg := newWriter(t, j, journal.WriterOptions{Buffer: 4, Batch: 1})
	w.Write(journal.Entry{Kind: journal.KindDecision, Alertname: "first"})
	<-j.entered // the writer holds "first" in a stuck append
	for range 10 {
		w.Write(journal.Entry{Kind: journal.KindDecision}) // 4 fit the buffer
	}
	if v := metricSum(t, reg, "alertrouter_journal_dropped_total"); v != 6 {
		t.Fatalf("dropped_total = %v, want 6", v)
	}
	close(j.release)
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, _ := journal.Read(t.Context(), inner, journal.Query{})
	if len(got) != 5 {
		t.Fatalf("journal holds %d entries after close, want 5", len(got))
	}
	w.Write(journal.Entry{Kind: journal.KindDecision}) // after Close: dropped, no panic
	if v := metricSum(t, reg, "alertrouter_journal_dropped_total"); v != 7 {
		t.Fatalf("dropped_total after a write past Close = %v, want 7", v)
	}
}

// failingJournal fails every append.
type failingJournal struct{ store.Journal }

func (failingJournal) AppendJournal(context.Context, []store.JournalRecord) ([]string, error) {
	return nil, store.ErrUnavailable
}

func TestWriterCountsEntriesTheStoreRejectsAsDropped(t *testing.T) {
	w, reg := newWriter(t, failingJournal{}, journal.WriterOptions{})
	w.Write(journal.Entry{Kind: journal.KindDecision}, journal.Entry{Kind: journal.KindDecision})
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v := metricSum(t, reg, "alertrouter_journal_dropped_total"); v != 2 {
		t.Fatalf("dropped_total = %v, want 2", v)
	}
}

// An entry the encoder refuses (a time in a zone offset JSON cannot write)
// costs only itself: the others of its frame are written.
func TestWriterDropsOnlyTheEntryItCannotEncode(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, reg := newWriter(t, j, journal.WriterOptions{})
	at := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	var batch []journal.Entry
	for i := range 5 {
		e := journal.Entry{Kind: journal.KindDecision, Time: at, Fingerprint: fmt.Sprintf("fp%d", i)}
		if i == 2 {
			e.StartsAt = at.In(time.FixedZone("bad", 24*60*60))
		}
		batch = append(batch, e)
	}
	w.Write(batch...)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var fps []string
	for _, e := range got {
		fps = append(fps, e.Fingerprint)
	}
	if strings.Join(fps, ",") != "fp0,fp1,fp3,fp4" {
		t.Errorf("journal holds %v, want every entry but fp2", fps)
	}
	if v := metricSum(t, reg, "alertrouter_journal_dropped_total"); v != 1 {
		t.Errorf("dropped_total = %v, want 1", v)
	}
}

// panickingJournal panics on its first append, then works.
type panickingJournal struct {
	store.Journal
	calls atomic.Int32
}

func (p *panickingJournal) AppendJournal(ctx context.Context, recs []store.JournalRecord) ([]string, error) {
	if p.calls.Add(1) == 1 {
		panic("client bug")
	}
	return p.Journal.AppendJournal(ctx, recs)
}

// A panic in the writer's goroutine drops that batch, counted (and counted
// a panic, which AlertrouterPanicked reads), and the writer goes on: the next entries are appended (and the test binary, like
// the router, is still alive).
func TestWriterSurvivesAPanicAndDropsOnlyThatBatch(t *testing.T) {
	j := &panickingJournal{Journal: store.NewMemoryJournal(store.JournalRetention{})}
	w, reg := newWriter(t, j, journal.WriterOptions{})
	w.Write(journal.Entry{Kind: journal.KindDecision, Fingerprint: "lost"})
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	w.Write(journal.Entry{Kind: journal.KindDecision, Fingerprint: "kept"})
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v := metricSum(t, reg, "alertrouter_journal_dropped_total"); v != 1 {
		t.Fatalf("dropped_total = %v, want 1 (the batch of the panic)", v)
	}
	if v := metricSum(t, reg, "alertrouter_journal_panics_total"); v != 1 {
		t.Fatalf("panics_total = %v, want 1 (AlertrouterPanicked reads it)", v)
	}
	got, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDecision, Limit: 10})
	if err != nil || len(got) != 1 || got[0].Fingerprint != "kept" {
		t.Fatalf("journal = %+v, %v; want the entry written after the panic", got, err)
	}
}

// heldJournal holds every append until release is closed (a stalled
// store).
type heldJournal struct {
	store.Journal
	entered chan struct{}
	release chan struct{}
}

func (h *heldJournal) AppendJournal(ctx context.Context, recs []store.JournalRecord) ([]string, error) {
	h.entered <- struct{}{}
	<-h.release
	return h.Journal.AppendJournal(ctx, recs)
}

// A close whose time runs out while the store holds an append says so, with
// what is still queued: a shutdown then closes the store, and the entries
// were given up with no word before the router said it stopped (a review).
func TestACloseOutOfTimeSaysWhatItGivesUp(t *testing.T) {
	var logs notifytest.SyncBuffer
	h := &heldJournal{Journal: store.NewMemoryJournal(store.JournalRetention{}), entered: make(chan struct{}, 1), release: make(chan struct{})}
	w, _ := newWriter(t, h, journal.WriterOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer close(h.release)
	w.Write(journal.Entry{Kind: journal.KindDecision, Fingerprint: "held"})
	<-h.entered
	w.Write(journal.Entry{Kind: journal.KindDecision, Fingerprint: "queued"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want its context's error", err)
	}
	if !strings.Contains(logs.String(), "journal writer stopping before the store took what it holds") || !strings.Contains(logs.String(), "queued=1") {
		t.Errorf("the close out of time says nothing of what it gives up:\n%s", logs.String())
	}
}

// deadLetter writes the dead letter of the first notification-worthy
// result of firing.json and returns its id.
// writeDeadLetter journals n as a dead letter (Slack refusing its token).
func writeDeadLetter(t *testing.T, w *journal.Writer, n *alert.Notification) {
	t.Helper()
	e, err := journal.NewDeadLetter(n, errors.New("slack: invalid_auth"), 1, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.Write(e)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func deadLetter(t *testing.T, w *journal.Writer, j store.Journal) string {
	t.Helper()
	msg, results := decide(t, "firing.json")
	writeDeadLetter(t, w, &alert.Notification{Receiver: "slack-llm", Integration: "slack/0", Incident: results[0].Incident, Kind: alert.KindFiring,
		Action: results[0].Decision.Action, Opening: true, Results: results[:1], Data: &msg.Data})
	got, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter, Newest: true, Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("dead letter not in the journal: %v, %v", got, err)
	}
	return got[0].ID
}

func TestDeadLetterKeepsTheNotificationToResend(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, reg := newWriter(t, j, journal.WriterOptions{})
	id := deadLetter(t, w, j)
	e, ok, err := journal.Get(t.Context(), j, id)
	if err != nil || !ok || e.DeadLetter == nil {
		t.Fatalf("Get(%s) = %+v, %v, %v", id, e, ok, err)
	}
	n, err := e.DeadLetter.Notification()
	if err != nil {
		t.Fatal(err)
	}
	_, results := decide(t, "firing.json")
	if n.Receiver != "slack-llm" || n.Incident != results[0].Incident || len(n.Results) != 1 ||
		n.Results[0].Alert.Fingerprint != results[0].Alert.Fingerprint || n.Results[0].Decision.Reasons[0] != results[0].Decision.Reasons[0] ||
		n.Integration != "slack/0" || !n.Opening || n.Data == nil || n.Data.Receiver == "" {
		t.Fatalf("rebuilt notification %+v differs from the one that failed", n)
	}
	if e.DeadLetter.Error != "slack: invalid_auth" || e.DeadLetter.Integration != "slack/0" {
		t.Fatalf("dead letter lost its cause: %+v", e.DeadLetter)
	}
	if v := metricSum(t, reg, "alertrouter_dead_letters_total"); v != 1 {
		t.Fatalf("dead_letters_total = %v, want 1", v)
	}
}

func TestReplaySendsADeadLetterExactlyOnce(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	id := deadLetter(t, w, j)
	var calls atomic.Int32
	fail := atomic.Bool{}
	fail.Store(true)
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(_ context.Context, d journal.DeadLetter) error {
			calls.Add(1)
			if d.ID != id || d.Receiver != "slack-llm" {
				t.Errorf("Send got %+v", d)
			}
			if fail.Load() {
				return errors.New("slack: invalid_auth")
			}
			return nil
		}}
	if sent, err := r.Replay(t.Context(), id); sent || err == nil {
		t.Fatalf("replay with the token still revoked = %v, %v; want an error", sent, err)
	}
	fail.Store(false) // token fixed
	calls.Store(0)

	var wg sync.WaitGroup
	var sentCount atomic.Int32
	for range 4 { // concurrent replays (two replicas, a double click)
		wg.Go(func() {
			sent, err := r.Replay(context.Background(), id)
			if err != nil && !errors.Is(err, journal.ErrInFlight) { // another is sending it
				t.Errorf("replay: %v", err)
			}
			if sent {
				sentCount.Add(1)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 || sentCount.Load() != 1 {
		t.Fatalf("replay sent %d times (reported %d), want 1", calls.Load(), sentCount.Load())
	}
	if sent, err := r.Replay(t.Context(), id); sent || err != nil || calls.Load() != 1 {
		t.Fatalf("second replay = %v, %v with %d sends; want nothing sent", sent, err, calls.Load())
	}
	rep, err := r.ReplayAll(t.Context(), time.Time{})
	if err != nil || rep.Sent != 0 || rep.AlreadyReplayed != 1 || calls.Load() != 1 {
		t.Fatalf("replay --all after a replay = %+v, %v; want nothing sent", rep, err)
	}
	list, err := r.List(t.Context(), time.Time{})
	if err != nil || len(list) != 1 || !list[0].Replayed {
		t.Fatalf("List = %+v, %v; want one replayed dead letter", list, err)
	}
}

// A dead letter whose incident was delivered to the same integration since
// (Alertmanager's retry went through) is not sent again: it would page
// twice, or re-open a PagerDuty incident the router never closes. A
// delivery elsewhere (another integration) does not count.
func TestReplayLeavesADeadLetterDeliveredSince(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	id := deadLetter(t, w, j)
	dead, _, err := journal.Get(t.Context(), j, id)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(context.Context, journal.DeadLetter) error {
			calls.Add(1)
			return errors.New("slack: still failing")
		}}
	later := func(integration string) {
		w.Write(journal.Entry{Kind: journal.KindDecision, Time: dead.Time.Add(time.Second), Fingerprint: "retry", Incident: dead.DeadLetter.Incident,
			Receivers:  []string{"slack-llm"},
			Deliveries: []journal.Delivery{{Receiver: "slack-llm", Integration: integration, Outcome: journal.OutcomeSent}}})
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	later("slack/1") // another integration of the receiver: not this one
	if _, err := r.Replay(t.Context(), id); errors.Is(err, journal.ErrDeliveredSince) || calls.Load() != 1 {
		t.Fatalf("a delivery to another integration stopped the replay: %v (%d sends)", err, calls.Load())
	}
	later("slack/0")
	sent, err := r.Replay(t.Context(), id)
	if sent || !errors.Is(err, journal.ErrDeliveredSince) || calls.Load() != 1 {
		t.Fatalf("replay after the retry delivered = %v, %v (%d sends); want ErrDeliveredSince, nothing sent", sent, err, calls.Load())
	}
	rep, err := r.ReplayAll(t.Context(), time.Time{})
	if err != nil || rep.DeliveredSince != 1 || rep.Sent != 0 || calls.Load() != 1 {
		t.Fatalf("replay --all = %+v, %v; want it counted delivered since", rep, err)
	}
}

// replay --all reads the journal once for all its dead letters' checks,
// and brings that read up to date before each: a delivery journaled while
// it runs (Alertmanager's retry of a later dead letter's notification going
// through) leaves that dead letter unsent, and a replay journaled meanwhile
// by another replayer is seen as sent.
func TestReplayAllSeesWhatIsJournaledWhileItRuns(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	msg, results := decide(t, "firing.json")
	var incidents []string
	for i := range 3 {
		r := *results[0]
		r.Incident = fmt.Sprintf("%s/%d", results[0].Incident, i)
		incidents = append(incidents, r.Incident)
		writeDeadLetter(t, w, &alert.Notification{Receiver: "slack-llm", Integration: "slack/0", Incident: r.Incident, Kind: alert.KindFiring,
			Action: r.Decision.Action, Opening: true, Results: []*alert.Result{&r}, Data: &msg.Data})
	}
	dead, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter})
	if err != nil || len(dead) != 3 {
		t.Fatalf("dead letters = %d, %v", len(dead), err)
	}
	var sent []string
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1"}
	r.Send = func(_ context.Context, d journal.DeadLetter) error {
		sent = append(sent, d.Incident)
		if len(sent) > 1 {
			return nil
		}
		// While the first is sent: the second's incident delivered by
		// Alertmanager's retry, the third replayed by another replayer.
		w.Write(journal.Entry{Kind: journal.KindDecision, Time: time.Now(), Fingerprint: "retry", Incident: incidents[1],
			Receivers:  []string{"slack-llm"},
			Deliveries: []journal.Delivery{{Receiver: "slack-llm", Integration: "slack/0", Outcome: journal.OutcomeSent}}})
		w.Write(journal.NewReplay(&dead[2], "r2", "cli", time.Now(), time.Millisecond, nil))
		return w.Flush(t.Context())
	}
	rep, err := r.ReplayAll(t.Context(), time.Time{})
	if err != nil || rep.Sent != 1 || rep.DeliveredSince != 1 || rep.AlreadyReplayed != 1 || !slices.Equal(sent, incidents[:1]) {
		t.Fatalf("replay --all = %+v, %v, sent %v; want the first sent, the second delivered since, the third replayed by r2", rep, err, sent)
	}
}

func TestReplayRejectsWrongIDs(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	w.Write(journal.Entry{Kind: journal.KindDecision})
	_ = w.Flush(t.Context())
	decisions, _ := journal.Read(t.Context(), j, journal.Query{})
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), Send: func(context.Context, journal.DeadLetter) error {
		t.Error("Send called for a wrong id")
		return nil
	}}
	for _, tc := range []struct {
		id   string
		want error
	}{
		{"garbage", journal.ErrNotFound},
		{"1-0", journal.ErrNotFound},
		{decisions[0].ID, journal.ErrNotDeadLetter},
	} {
		if _, err := r.Replay(t.Context(), tc.id); !errors.Is(err, tc.want) {
			t.Errorf("Replay(%q) = %v, want %v", tc.id, err, tc.want)
		}
	}
}

func TestFilterNarrowsDecisions(t *testing.T) {
	msg, results := decide(t, "hundred.json")
	var entries []journal.Entry
	for _, r := range results {
		entries = append(entries, journal.FromResult(msg, r))
	}
	count := func(f journal.Filter) int {
		n := 0
		for i := range entries {
			if f.Match(&entries[i]) {
				n++
			}
		}
		return n
	}
	all := count(journal.Filter{})
	pages := count(journal.Filter{Action: "page"})
	tickets := count(journal.Filter{Action: "ticket"})
	none := count(journal.Filter{Action: "none"})
	if all != len(entries) || pages == 0 || pages+tickets+none != all {
		t.Fatalf("action filter: all %d, page %d, ticket %d, none %d", all, pages, tickets, none)
	}
	sector := entries[0].Sector
	if n := count(journal.Filter{Sector: sector}); n == 0 || n == all && count(journal.Filter{Sector: "no-such"}) != 0 {
		t.Fatalf("sector filter %q matched %d", sector, n)
	}
	name := entries[0].Alertname
	if n := count(journal.Filter{Text: strings.ToUpper(name)}); n == 0 {
		t.Fatalf("text filter %q matched nothing", name)
	}
	if n := count(journal.Filter{Text: "no such text anywhere"}); n != 0 {
		t.Fatalf("text filter matched %d entries it should not", n)
	}
}

func TestFromResultKeepsMuteLiveSLOAndFlapping(t *testing.T) {
	a := &alert.Alert{}
	a.Labels = map[string]string{"alertname": "SLOBurn"}
	r := &alert.Result{Alert: a, MutedBy: "mute_time_intervals: weekends",
		Live: &alert.LiveSLO{Summary: "budget 37 % left · burn 1h 15.2×"},
		Flap: &alert.Flap{Reason: "flapping: 5 transitions in 1h: page downgraded to ticket"}}
	e := journal.FromResult(&alert.Message{}, r)
	if !e.Muted || e.MutedBy != r.MutedBy || e.LiveSLO != r.Live.Summary || e.Flapping != r.Flap.Reason {
		t.Fatalf("entry %+v lost the mute, the live SLO line or the flap reason", e)
	}
}

// TestJournalRecordsAreEncodingJSON: the writer's frames decompress to byte
// for byte what encoding/json makes of what they encode (a decision's wire
// form), although decisions are encoded by go-json — every decided alert
// of every testdata webhook, with deliveries whose errors hold the strings
// JSON encoders treat differently (HTML characters, line and paragraph
// separators, control characters, invalid UTF-8), and a dead letter.
func TestJournalRecordsAreEncodingJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "webhook", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	odd := []string{"<a href=\"x\">&amp;</a>", "line\u2028para\u2029", "ctl\x00\x01\x1f\x7f", "bad \xff\xfe utf8", `q"b\s`, "é漢字😀", ""}
	received := time.Date(2025, 3, 14, 10, 0, 0, 123456789, time.UTC)
	var entries []journal.Entry
	for _, f := range files {
		if strings.HasSuffix(f, ".bad.json") {
			continue
		}
		msg, results := decide(t, filepath.Base(f))
		for i, r := range results {
			e := journal.FromResult(msg, r)
			e.Time, e.Replica = received, "r1"
			o := odd[i%len(odd)]
			e.Deliveries = []journal.Delivery{{Receiver: "pagerduty", Integration: "pagerduty/0", Outcome: journal.OutcomeFailed,
				Attempts: i, Latency: time.Duration(i) * time.Millisecond, Error: o}}
			e.Labels["odd"], e.Decision.Reasons = o, append(e.Decision.Reasons, o)
			e.Muted, e.Deduplicated = i%2 == 0, i%3 == 0
			entries = append(entries, e)
		}
	}
	dl, err := journal.NewDeadLetter(&alert.Notification{Receiver: "slack", Integration: "slack/0", Incident: "inc<1>"},
		errors.New("invalid_auth \xff"), 2, received)
	if err != nil {
		t.Fatal(err)
	}
	dl.Replica = "r1"
	entries = append(entries, dl)

	recs := writeRecords(t, entries...)
	// One Write: runs of one kind, 32 entries at most per record.
	var want [][]journal.Entry
	for start := 0; start < len(entries); {
		end := start + 1
		for end < len(entries) && end-start < 32 && entries[end].Kind == entries[start].Kind {
			end++
		}
		want, start = append(want, entries[start:end]), end
	}
	if len(recs) != len(want) {
		t.Fatalf("journal holds %d records, want %d frames of %d entries", len(recs), len(want), len(entries))
	}
	for i, frame := range want {
		js, err := json.Marshal(journal.WireFrame(frame))
		if err != nil {
			t.Fatal(err)
		}
		data := recs[i].Data
		if len(data) == 0 || data[0] != 0x01 {
			t.Fatalf("record %d does not start with the S2 frame header: % x", i, data[:min(len(data), 8)])
		}
		got, err := s2.Decode(nil, data[1:])
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if string(got) != string(js) {
			t.Fatalf("record %d:\n got %s\nwant %s", i, got, js)
		}
		if recs[i].Kind != string(frame[0].Kind) {
			t.Fatalf("record %d kind %q, want %q", i, recs[i].Kind, frame[0].Kind)
		}
	}
}

// Alertmanager repeats an unchanged none or suppressed decision every
// group_interval: a replica journals it once per hour, not on every repeat,
// while a delivery is always journaled.
func TestRecordJournalsAQuietDecisionOncePerHour(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	w, _ := newWriter(t, j, journal.WriterOptions{Now: func() time.Time { return now }})
	a := &alert.Alert{}
	a.Status, a.Fingerprint = "firing", "f1"
	quiet := &alert.Result{Alert: a, Decision: alert.Decision{Action: alert.ActionNone, Policy: "severity"}}
	sent := &alert.Result{Alert: a, Decision: alert.Decision{Action: alert.ActionPage},
		Deliveries: []alert.Delivery{{Receiver: "pd", Integration: "pagerduty/0", Outcome: alert.DeliverySent}}}
	msg := &alert.Message{}
	w.Record(msg, []*alert.Result{quiet, sent})
	w.Record(msg, []*alert.Result{quiet, sent})
	now = now.Add(time.Hour)
	w.Record(msg, []*alert.Result{quiet})
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	none, page := 0, 0
	for _, e := range got {
		switch e.Decision.Action {
		case alert.ActionNone:
			none++
		case alert.ActionPage:
			page++
		}
	}
	if none != 2 || page != 2 {
		t.Fatalf("journaled %d none and %d page entries, want 2 none (first and an hour later) and 2 pages (every delivery)", none, page)
	}
}

// The resolve of a ticket its SLO's page suppressed has nothing to send:
// it was not journaled, the episode's last entry stayed "firing", and the
// console listed the SLO's incident open after everything had resolved
// (a review). A resolve is journaled (once per quiet repeat, as a quiet
// decision).
func TestRecordJournalsAResolveWithNothingToSend(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	firing := &alert.Alert{}
	firing.Status, firing.Fingerprint = "firing", "t1"
	resolved := &alert.Alert{}
	resolved.Status, resolved.Fingerprint = "resolved", "t1"
	ticket := alert.Decision{Action: alert.ActionTicket, Policy: "pyrra", SLO: "cart-latency"}
	msg := &alert.Message{}
	w.Record(msg, []*alert.Result{{Alert: firing, Decision: ticket, SuppressedBy: "page ErrorBudgetBurn (p1) of SLO cart-latency"}})
	w.Record(msg, []*alert.Result{{Alert: resolved, Decision: ticket}})
	w.Record(msg, []*alert.Result{{Alert: resolved, Decision: ticket}}) // Alertmanager's repeat
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, e := range got {
		statuses = append(statuses, e.Status)
	}
	if !slices.Equal(statuses, []string{"firing", "resolved"}) {
		t.Fatalf("journaled %q, want the suppressed firing and its resolve, once", statuses)
	}
}

// A permanent failure answered 5xx is retried by Alertmanager, and each
// retry that fails alike writes one more dead letter of the same
// notification: replay --all sends it once (the newest), not once per
// retry — an audit's replay sent one incident's Slack page 14 times and a
// PagerDuty resolve 7 times. Another notification of the incident (its
// resolve) is sent too, after.
func TestReplayAllSendsANotificationRetriedIntoManyDeadLettersOnce(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	msg, results := decide(t, "firing.json")
	write := func(kind alert.Kind, reason string) {
		r := *results[0]
		r.Decision.Reasons = []string{reason} // what differs between retries
		writeDeadLetter(t, w, &alert.Notification{Receiver: "slack-llm", Integration: "slack/0", Incident: r.Incident, Kind: kind,
			Action: r.Decision.Action, Opening: kind == alert.KindFiring, Results: []*alert.Result{&r}, Data: &msg.Data})
	}
	for i := range 5 { // the firing, and Alertmanager's four retries
		write(alert.KindFiring, fmt.Sprintf("retry %d", i))
	}
	write(alert.KindResolved, "resolved")
	var sent []string
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(_ context.Context, d journal.DeadLetter) error {
			sent = append(sent, string(d.Kind))
			return nil
		}}
	rep, err := r.ReplayAll(t.Context(), time.Time{})
	if err != nil || rep.Sent != 2 || rep.Repeated != 4 || strings.Join(sent, ",") != "firing,resolved" {
		t.Fatalf("replay --all = %+v, %v, sent %v; want the firing once, then its resolve, 4 repeats left", rep, err, sent)
	}
	// The copies left are handled too: listed replayed, and a replay of
	// one by id, or another replay --all, sends nothing (an audit: an old
	// replica's replay --all, or one by id, sent them again).
	list, err := r.List(t.Context(), time.Time{})
	if err != nil || len(list) != 6 {
		t.Fatalf("List = %d, %v", len(list), err)
	}
	for _, l := range list {
		if !l.Replayed {
			t.Errorf("dead letter %s (%s) listed not replayed after replay --all", l.ID, l.DeadLetter.Kind)
		}
	}
	oldest := list[len(list)-1] // newest first
	if got, err := r.Replay(t.Context(), oldest.ID); got || err != nil || len(sent) != 2 {
		t.Errorf("replay of an older copy = %v, %v (%d sends in all), want nothing sent", got, err, len(sent))
	}
	if rep, err := r.ReplayAll(t.Context(), time.Time{}); err != nil || rep.Sent != 0 || len(sent) != 2 {
		t.Errorf("a second replay --all = %+v, %v, want nothing sent", rep, err)
	}
}

// A dead letter replayed by id makes the older copies of its notification
// (Alertmanager's retries failing alike) replayed too: a replay of one of
// them by id sends nothing.
func TestReplayOfAnOlderCopyAfterTheNewestWasReplayedSendsNothing(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	deadLetter(t, w, j)
	newest := deadLetter(t, w, j)
	var sends int
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(context.Context, journal.DeadLetter) error { sends++; return nil }}
	if sent, err := r.Replay(t.Context(), newest); !sent || err != nil {
		t.Fatalf("replay of the newest = %v, %v", sent, err)
	}
	list, err := r.List(t.Context(), time.Time{})
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %d, %v", len(list), err)
	}
	older := list[1].ID
	if sent, err := r.Replay(t.Context(), older); sent || err != nil || sends != 1 {
		t.Errorf("replay of the older copy = %v, %v (%d sends), want nothing sent", sent, err, sends)
	}
	if l, _ := r.List(t.Context(), time.Time{}); !l[1].Replayed {
		t.Error("the older copy is not listed replayed")
	}
}

// A dead letter replayed by id marks the other copies of its notification,
// older and newer, replayed at once: listed so, and a replay --all sends
// none of them (an audit: replaying a middle copy by id, then replay --all,
// sent the newest too — two triggers).
func TestReplayByIDMarksTheNotificationsOtherCopies(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	deadLetter(t, w, j)
	middle := deadLetter(t, w, j)
	deadLetter(t, w, j)
	var sends int
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(context.Context, journal.DeadLetter) error { sends++; return nil }}
	if sent, err := r.Replay(t.Context(), middle); !sent || err != nil {
		t.Fatalf("replay of the middle copy = %v, %v", sent, err)
	}
	list, err := r.List(t.Context(), time.Time{})
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %d, %v", len(list), err)
	}
	for _, l := range list {
		if !l.Replayed {
			t.Errorf("dead letter %s listed not replayed after its notification was replayed by id", l.ID)
		}
	}
	if rep, err := r.ReplayAll(t.Context(), time.Time{}); err != nil || rep.Sent != 0 || sends != 1 {
		t.Errorf("replay --all after a replay by id = %+v, %v (%d sends in all), want nothing more sent", rep, err, sends)
	}
}
