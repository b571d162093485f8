package console_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/bench"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// fill writes what the router journals under `loadgen -distinct`: webhooks
// of perWebhook fresh alerts each (distinct label sets and fingerprints,
// built from the testdata corpus), decided by the pipeline, spread over
// the last day, with a delivery per receiver (one in 25 failed and
// retried) and a dead letter every 50 webhooks. It returns the incident of
// the newest webhook's first alert.
func (e *env) fill(tb testing.TB, webhooks, perWebhook int) (newest string) {
	tb.Helper()
	corpus, err := bench.LoadCorpus(filepath.Join("..", "..", "testdata"))
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for w := range webhooks {
		p, err := corpus.Build(perWebhook, w*perWebhook)
		if err != nil {
			tb.Fatal(err)
		}
		at := e.now.Add(-time.Duration(webhooks-w) * 24 * time.Hour / time.Duration(webhooks+1))
		msg, err := webhook.Decode(p.Body, at)
		if err != nil {
			tb.Fatal(err)
		}
		results := e.pipeline.Evaluate(msg)
		entries := make([]journal.Entry, 0, len(results))
		for _, r := range results {
			en := journal.FromResult(msg, r)
			if r.Decision.Action != alert.ActionNone && r.SuppressedBy == "" {
				for _, rcv := range r.Receivers {
					d := journal.Delivery{Receiver: rcv, Integration: "slack/0", Outcome: journal.OutcomeSent, Attempts: 1, Latency: time.Duration(40+n%90) * time.Millisecond}
					if n%25 == 7 {
						d.Outcome, d.Attempts, d.Error = journal.OutcomeFailed, 3, "slack: 503 Service Unavailable"
					}
					en.Deliveries = append(en.Deliveries, d)
				}
			}
			n++
			entries = append(entries, en)
			newest = en.Incident
		}
		e.writer.Write(entries...)
		if w%50 == 49 {
			r := results[0]
			dl, err := journal.NewDeadLetter(&alert.Notification{Receiver: "platform", Integration: "pagerduty/0", Incident: r.Incident, Kind: alert.KindFiring,
				Action: alert.ActionPage, Results: []*alert.Result{r}, Data: &msg.Data}, errors.New("pagerduty: 400 Bad Request: invalid routing key"), 1, at)
			if err != nil {
				tb.Fatal(err)
			}
			e.writer.Write(dl)
		}
		if w%100 == 99 { // the writer's buffer holds 4,096 entries
			if err := e.writer.Flush(tb.Context()); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := e.writer.Flush(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return newest
}

// heapSampler records the largest heap (live objects and garbage not yet
// collected: what the process holds, and the pod's memory limit sees)
// over a stretch of work, above what it was when the sampler started
// right after a collection.
type heapSampler struct {
	base, peak atomic.Uint64
	stop       chan struct{}
	done       sync.WaitGroup
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{stop: make(chan struct{})}
	h.base.Store(heapObjects())
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				if v := heapObjects(); v > h.peak.Load() {
					h.peak.Store(v)
				}
			}
		}
	}()
	return h
}

// report stops the sampler and reports the peak above the base
// (peak-heap-MB) and the base (idle-heap-MB: the journal and the test's
// fixtures; the collector lets the heap grow to about twice what is live
// before it collects, so a peak is never much under it).
func (h *heapSampler) report(b *testing.B) {
	close(h.stop)
	h.done.Wait()
	b.ReportMetric(float64(max(h.peak.Load(), h.base.Load())-h.base.Load())/1e6, "peak-heap-MB")
	b.ReportMetric(float64(h.base.Load())/1e6, "idle-heap-MB")
}

func serveOnce(tb testing.TB, h http.Handler, path string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET %s = %d: %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.Len()
}

// benchJournalEntries is the journal the render benchmarks read: the
// audit's 20,000 decisions (the console's default cap), in webhooks of 10.
const benchJournalEntries = 20_000

// BenchmarkConsoleRender measures one page render over a journal of
// 20,000 decisions (and 40 dead letters): the bytes and allocations per
// render, and the peak heap above the idle one (peak-heap-MB). The
// overview's short cache is off (a shared build in flight is not), so each
// iteration is a full render — the decisions page's included, which builds
// the overview for its filter's options ("decisions-overview-shared" has
// it shared, the default). "4-viewers" is four GET / at once, the audit's
// repro: a build in flight is shared, so they cost about one.
//
//	go test -run '^$' -bench ConsoleRender -benchtime 5x ./routing/console
func BenchmarkConsoleRender(b *testing.B) {
	e := newEnv(b)
	incident := e.fill(b, benchJournalEntries/10, 10)
	c := console.New(benchOptions(e))
	for _, tc := range []struct{ name, path string }{
		{"overview", "/"},
		{"decisions", "/decisions"},
		{"decisions-filtered", "/decisions?q=no-such-alert"},
		{"incident", console.IncidentPath(incident)},
		{"dead-letters", "/dead-letters"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			serveOnce(b, c, tc.path) // warm: templates, pools
			b.ReportAllocs()
			h := startHeapSampler()
			html := 0
			for b.Loop() {
				html = serveOnce(b, c, tc.path)
			}
			h.report(b)
			b.ReportMetric(float64(html)/1e3, "html-kB")
		})
	}
	// The decisions page takes its filter's options from the overview:
	// with the overview shared (the default), it reads only until it has
	// its 200 rows.
	shared := console.New(console.Options{Journal: e.journal, Now: func() time.Time { return e.now }})
	serveOnce(b, shared, "/")
	b.Run("decisions-overview-shared", func(b *testing.B) {
		b.ReportAllocs()
		h := startHeapSampler()
		for b.Loop() {
			serveOnce(b, shared, "/decisions")
		}
		h.report(b)
	})
	b.Run("4-viewers", func(b *testing.B) {
		b.ReportAllocs()
		h := startHeapSampler()
		for b.Loop() {
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					rec := httptest.NewRecorder()
					c.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
					if rec.Code != http.StatusOK {
						panic(fmt.Sprintf("GET / = %d", rec.Code))
					}
				})
			}
			wg.Wait()
		}
		h.report(b)
	})
}

// benchOptions is the console of the benchmarks.
func benchOptions(e *env) console.Options {
	return console.Options{Journal: e.journal, Now: func() time.Time { return e.now }, CacheTTL: -1}
}
