package console_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// env is a console over a memory journal filled through a journal.Writer
// with what the router decided for the sector corpus of testdata/sectors.
type env struct {
	journal  *store.MemoryJournal
	writer   *journal.Writer
	pipeline *routing.Pipeline
	replayer *journal.Replayer
	console  *console.Console
	now      time.Time
	// replays counts the sends of the injected replay function.
	replays atomic.Int32

	// What was written, for the assertions.
	sectors   []string
	decisions []journal.Entry
}

func newEnv(t testing.TB) *env {
	t.Helper()
	cfg := config.LoadDefault()
	cls, err := enrich.New(cfg.Classifier)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := policies.New(cfg.Policies)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{
		journal:  store.NewMemoryJournal(store.JournalRetention{}),
		pipeline: &routing.Pipeline{Classifier: cls, Decider: dec, Routes: cfg.Route, GroupBy: cfg.Incidents.GroupBy},
		now:      time.Now(),
	}
	m, err := journal.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	e.writer = journal.NewWriter(e.journal, m, journal.WriterOptions{Replica: "router-0"})
	t.Cleanup(func() { _ = e.writer.Close(context.Background()) })
	e.replayer = &journal.Replayer{Journal: e.journal, Claims: store.NewMemory(), KeyPrefix: "alertrouter:", Owner: "router-0",
		Send: func(context.Context, journal.DeadLetter) error { e.replays.Add(1); return nil }}
	e.console = console.New(console.Options{
		Journal: e.journal, Evaluate: e.pipeline.Evaluate, DeadLetters: e.replayer,
		Now: func() time.Time { return e.now },
	})
	return e
}

func readTestdata(t testing.TB, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "testdata"}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// write decides every payload of testdata/sectors and testdata/webhook/
// mixed.json, spreads the webhooks over the last day, records a delivery
// per receiver (one integration failing and retried), and writes a dead
// letter; it returns when the writer has appended everything.
func (e *env) write(t *testing.T) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sectors", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("sector corpus: %v, %v", files, err)
	}
	files = append(files, filepath.Join("..", "..", "testdata", "webhook", "mixed.json"))
	var firstPage *alert.Notification
	n := 0
	for round := range 3 { // Alertmanager re-sends: three webhooks per group
		for i, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			at := e.now.Add(-time.Duration((i*5+round*7)%23) * time.Hour).Add(-time.Duration(i) * time.Minute)
			msg, err := webhook.Decode(body, at)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			results := e.pipeline.Evaluate(msg)
			for _, r := range results {
				en := journal.FromResult(msg, r)
				en.Deduplicated = round > 0
				if r.Decision.Action != alert.ActionNone && r.SuppressedBy == "" {
					for _, rcv := range r.Receivers {
						d := journal.Delivery{Receiver: rcv, Integration: "slack/0", Outcome: journal.OutcomeSent, Attempts: 1, Latency: time.Duration(40+n%90) * time.Millisecond}
						if round > 0 {
							d = journal.Delivery{Receiver: rcv, Integration: "slack/0", Outcome: journal.OutcomeDeduplicated}
						} else if n%9 == 4 {
							d.Attempts, d.Latency = 3, 2100*time.Millisecond // two retries
						}
						en.Deliveries = append(en.Deliveries, d)
					}
					if firstPage == nil && r.Decision.Action == alert.ActionPage && len(r.Receivers) > 0 {
						firstPage = &alert.Notification{Receiver: r.Receivers[0], Integration: "pagerduty/0", Incident: r.Incident, Kind: alert.KindFiring,
							Action: r.Decision.Action, Results: []*alert.Result{r}, Data: &msg.Data}
					}
				}
				n++
				e.writer.Write(en)
				e.decisions = append(e.decisions, en)
				if !slices.Contains(e.sectors, en.Sector) {
					e.sectors = append(e.sectors, en.Sector)
				}
			}
		}
	}
	if firstPage == nil {
		t.Fatal("the corpus pages nothing: the console tests would prove little")
	}
	dl, err := journal.NewDeadLetter(firstPage, errors.New("pagerduty: 400 Bad Request: invalid routing key"), 1, e.now.Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	e.writer.Write(dl)
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// count returns how many written decisions f matches.
func (e *env) count(f journal.Filter) int {
	n := 0
	for i := range e.decisions {
		if f.Match(&e.decisions[i]) {
			n++
		}
	}
	return n
}
