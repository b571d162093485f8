package journal_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// The journal records the notifier's real attempts, retries included (it
// recorded 1 for every delivery, so the console's retries were always 0).
func TestJournaledDeliveriesCountTheNotifiersAttempts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int // retryable failures before a success
		outcome  string
		attempts int
		// apiCalls: the notifier's API calls per notification, each
		// through notify.Retry (Slack's resolve: an edit and a reply).
		apiCalls int
	}{
		{"sent at once", 0, journal.OutcomeSent, 1, 1},
		{"sent on the third attempt", 2, journal.OutcomeSent, 3, 1},
		{"failed after every attempt", 99, journal.OutcomeFailed, 5, 1},
		{"two API calls, none retried", 0, journal.OutcomeSent, 1, 2},
		{"two API calls, the first retried once", 1, journal.OutcomeSent, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := store.NewMemoryJournal(store.JournalRetention{})
			m, err := journal.NewMetrics(nil)
			if err != nil {
				t.Fatal(err)
			}
			w := journal.NewWriter(mem, m, journal.WriterOptions{Replica: "router-0"})
			var calls atomic.Int32
			policy := notify.DefaultRetryPolicy()
			policy.Wait = func(context.Context, time.Duration) error { return nil } // no test sleeps
			n := alert.NotifierFunc(func(ctx context.Context, _ *alert.Notification) error {
				for range tc.apiCalls {
					if err := notify.Retry(ctx, policy, func(context.Context) error {
						if int(calls.Add(1)) <= tc.failures {
							return errors.New("503 Service Unavailable")
						}
						return nil
					}); err != nil {
						return err
					}
				}
				return nil
			})
			p := readmePipeline(t, config.LoadDefault().Policies)
			p.Receivers = map[string][]routing.Integration{
				"pagerduty":    {{Name: "pagerduty/0", Notifier: n, SendResolved: true}},
				"slack-triage": {{Name: "slack/0", Notifier: alert.NotifierFunc(func(context.Context, *alert.Notification) error { return nil }), SendResolved: true}},
			}
			p.Store = store.NewMemory()
			p.Dedup = routing.DedupOptions{ClaimTTL: time.Minute, NotifiedTTL: time.Hour, RepeatInterval: 4 * time.Hour, InFlightWait: time.Second}
			p.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			p.Recorder = w
			msg := decodeFile(t, "firing.json")
			_, _ = p.Process(t.Context(), msg)
			if err := w.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			entries, err := journal.Read(t.Context(), mem, journal.Query{Kind: journal.KindDecision})
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, e := range entries {
				for _, d := range e.Deliveries {
					if d.Integration != "pagerduty/0" {
						continue
					}
					found++
					if d.Outcome != tc.outcome || d.Attempts != tc.attempts {
						t.Errorf("%s: %s after %d attempts, want %s after %d", e.Alertname, d.Outcome, d.Attempts, tc.outcome, tc.attempts)
					}
				}
			}
			if found == 0 {
				t.Fatalf("firing.json delivered nothing to PagerDuty: the test proves nothing (%d entries)", len(entries))
			}
		})
	}
}
