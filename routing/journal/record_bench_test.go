package journal_test

import (
	"context"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// BenchmarkRecord is the journal's cost per webhook: Record of every alert
// of a 100-alert webhook (each with a delivery), its encoding and its
// append to the in-memory journal.
func BenchmarkRecord(b *testing.B) {
	msg, results := decide(b, "hundred.json")
	for _, r := range results {
		r.Deliveries = []alert.Delivery{{Receiver: "slack-triage", Integration: "slack/0", Kind: alert.KindFiring, Outcome: alert.DeliverySent}}
	}
	w, _ := newWriter(b, store.NewMemoryJournal(store.DefaultJournalRetention), journal.WriterOptions{})
	b.ReportAllocs()
	for b.Loop() {
		w.Record(msg, results)
		if err := w.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(results)), "ns/entry")
}
