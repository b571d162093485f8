package journal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// BenchmarkReplayAll replays every dead letter of a journal that holds n of
// them (each its own incident's page) beside the decisions of 100-alert
// webhooks (ten per hundred dead letters), in memory and on a real
// redis-server: its cost per dead letter should not grow with n, since
// each replay's checks (delivered, resolved or fired again since, sent
// before) read the same journal.
func BenchmarkReplayAll(top *testing.B) {
	msg, results := decide(top, "hundred.json")
	var rdb *store.Redis
	for _, kind := range []string{"memory", "redis"} {
		for _, n := range []int{100, 400} {
			top.Run(fmt.Sprintf("store=%s/dead=%d", kind, n), func(b *testing.B) {
				if kind == "redis" && rdb == nil {
					srv := redistest.Start(top) // kept for every size
					var err error
					rc := store.DefaultRedisConfig()
					rc.Addrs = []string{srv.Addr()}
					if rdb, err = store.NewRedis(rc, nil, nil); err != nil {
						b.Fatal(err)
					}
					top.Cleanup(func() { _ = rdb.Close() })
				}
				run := 0
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer() // a fresh journal: each run's replays are journaled
					run++
					var j store.Journal = store.NewMemoryJournal(store.JournalRetention{})
					var claims store.Store = store.NewMemory()
					prefix := "bench:"
					if kind == "redis" {
						prefix = fmt.Sprintf("bench-%d-%d:", n, run)
						j, claims = rdb.Journal(prefix+"journal", store.JournalRetention{}, nil), rdb
					}
					writeDeadLetters(b, j, n, msg, results)
					b.StartTimer()
					r := &journal.Replayer{Journal: j, Claims: claims, KeyPrefix: prefix, Owner: "bench",
						Send: func(context.Context, journal.DeadLetter) error { return nil }}
					rep, err := r.ReplayAll(b.Context(), time.Time{})
					if err != nil || rep.Sent != n {
						b.Fatalf("ReplayAll = %+v, %v; want %d sent", rep, err, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/deadletter")
			})
		}
	}
}

// writeDeadLetters journals n dead letters, each its own incident's page,
// and the decisions of a 100-alert webhook before every tenth.
func writeDeadLetters(b *testing.B, j store.Journal, n int, msg *alert.Message, results []*alert.Result) {
	w, _ := newWriter(b, j, journal.WriterOptions{})
	for i := range n {
		if i%10 == 0 {
			w.Record(msg, results)
		}
		r := *results[i%len(results)]
		r.Incident = fmt.Sprintf("bench/incident-%d", i)
		e, err := journal.NewDeadLetter(&alert.Notification{Receiver: "slack-llm", Integration: "slack/0", Incident: r.Incident,
			Kind: alert.KindFiring, Action: r.Decision.Action, Opening: true, Results: []*alert.Result{&r}, Data: &msg.Data},
			fmt.Errorf("slack: invalid_auth"), 1, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		w.Write(e)
	}
	if err := w.Flush(b.Context()); err != nil {
		b.Fatal(err)
	}
}
