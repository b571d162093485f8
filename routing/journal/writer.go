package journal

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// Writer defaults.
const (
	DefaultBuffer = 4096
	DefaultBatch  = 256
	// appendTimeout bounds one batch append so a hung store cannot hold the
	// writer (entries behind it are then dropped and counted, not queued
	// forever).
	appendTimeout = 5 * time.Second
)

// Metrics are the journal's metrics.
type Metrics struct {
	written     prometheus.Counter
	dropped     prometheus.Counter
	failed      prometheus.Counter
	panics      prometheus.Counter
	deadLetters *prometheus.CounterVec
}

// NewMetrics creates the journal's metrics and registers them on reg (nil:
// not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_journal_written_total",
			Help: "Journal entries appended to the store.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_journal_dropped_total",
			Help: "Journal entries dropped because the writer's buffer was full or the store failed; webhooks are never delayed by the journal.",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_journal_append_failures_total",
			Help: "Batches of journal entries the store failed to append (their entries are counted as dropped).",
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_journal_panics_total",
			Help: "Batches of journal entries whose append panicked (a bug): their entries dropped (and counted), the writer going on.",
		}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_dead_letters_total",
			Help: "Notifications that failed permanently and were kept as dead letters.",
		}, []string{"receiver", "integration"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.written, m.dropped, m.failed, m.panics, m.deadLetters} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register journal metrics: %w", err)
			}
		}
	}
	return m, nil
}

// InitDeadLetters creates the dead-letter series of a receiver's integration
// at zero, so that alerts on its rate see it before the first dead letter.
func (m *Metrics) InitDeadLetters(receiver, integration string) {
	m.deadLetters.WithLabelValues(receiver, alert.IntegrationType(integration))
}

// ForgetDeadLetters deletes the dead-letter series of receiver's
// integrations of a kind ("": every kind), which a reload removed.
func (m *Metrics) ForgetDeadLetters(receiver, kind string) {
	m.deadLetters.DeletePartialMatch(alert.IntegrationSeries(receiver, kind))
}

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Replica is stamped on entries that carry none.
	Replica string
	// Buffer is how many entries may wait to be appended before a Write
	// is dropped (DefaultBuffer when 0); a Write admitted below it is
	// kept whole.
	Buffer int
	// Batch is how many entries the writer gathers from queued writes
	// before it appends them (DefaultBatch when 0); the entries of one
	// write are never split across appends, so a batch may exceed it.
	Batch int
	// Now stamps entries that carry no time (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// item is the entries of one Write, or a flush marker (done != nil).
type item struct {
	entries []Entry
	done    chan struct{}
}

// Writer appends entries to a store.Journal asynchronously: Write never
// blocks and never fails. One goroutine drains a bounded channel and appends
// what it finds in batches, packed into frames (frame.go); entries that do
// not fit the buffer, or whose batch the store rejects, are dropped and
// counted in alertrouter_journal_dropped_total; while appends fail,
// Failure says since when and how many were lost, for the console. It is
// safe for concurrent use.
type Writer struct {
	journal store.Journal
	m       *Metrics
	opts    WriterOptions

	mu     sync.RWMutex // guards closed against sends on a closed channel
	closed bool
	ch     chan item
	done   chan struct{}
	// queued counts the entries in ch, bounded by opts.Buffer.
	queued atomic.Int64
	// frame holds encodeFrame's buffers, used by the run goroutine only.
	frame frameBuffers

	// failLogs throttles the append failures logged during a store outage.
	failLogs logthrottle.Throttle

	failMu  sync.Mutex    // guards failure and failing
	failure AppendFailure // the current run of failed appends, if failing
	failing bool

	quietMu sync.Mutex           // guards quiet (record.go)
	quiet   map[string]time.Time // quiet decisions journaled recently
}

// AppendFailure is a run of failed appends: the store refuses or cannot
// take the journal's entries (a full Redis under noeviction, an ACL user
// without XADD, a read-only replica, Redis down). Webhooks are not
// affected, but what the journal's readers show is incomplete.
type AppendFailure struct {
	// Since is when the first append of the run failed.
	Since time.Time
	// Err is the last failure's error.
	Err string
	// Decisions and DeadLetters count the entries of each kind dropped
	// since: in the appends that failed, and for want of room in the
	// buffer while the writer waited on the failing store.
	Decisions, DeadLetters int
}

// Failure returns the current run of failed appends; ok is false when the
// last append succeeded, or none failed yet. A successful append ends the
// run. It is safe for concurrent use.
func (w *Writer) Failure() (f AppendFailure, ok bool) {
	w.failMu.Lock()
	defer w.failMu.Unlock()
	return w.failure, w.failing
}

// appendFailed starts or extends the run of failed appends with the
// entries of a failed append.
func (w *Writer) appendFailed(err error, counts [2]int) {
	w.failMu.Lock()
	defer w.failMu.Unlock()
	if !w.failing {
		w.failing, w.failure = true, AppendFailure{Since: w.opts.Now()}
	}
	w.failure.Err = err.Error()
	w.failure.Decisions += counts[0]
	w.failure.DeadLetters += counts[1]
}

// droppedWhileFailing adds entries dropped for want of room in the buffer
// to the run of failed appends, if there is one.
func (w *Writer) droppedWhileFailing(entries []Entry) {
	w.failMu.Lock()
	defer w.failMu.Unlock()
	if w.failing {
		c := countKinds(entries)
		w.failure.Decisions += c[0]
		w.failure.DeadLetters += c[1]
	}
}

// appendSucceeded ends the run of failed appends, if there is one, and
// logs what it lost.
func (w *Writer) appendSucceeded() {
	w.failMu.Lock()
	f, failing := w.failure, w.failing
	w.failing, w.failure = false, AppendFailure{}
	w.failMu.Unlock()
	switch {
	case failing && f.DeadLetters > 0:
		w.opts.Logger.Warn("journal appends succeed again; the entries dropped while they failed, dead letters among them, are not in the journal: a notification that failed for good then is replayable only once Alertmanager's retry fails it again",
			"since", f.Since, "decisions", f.Decisions, "dead_letters", f.DeadLetters, "last_err", f.Err)
	case failing:
		w.opts.Logger.Info("journal appends succeed again; the entries dropped while they failed are not in the journal",
			"since", f.Since, "decisions", f.Decisions, "dead_letters", f.DeadLetters, "last_err", f.Err)
	}
}

// countKinds counts the decisions ([0]) and dead letters ([1]) of entries.
func countKinds(entries []Entry) (c [2]int) {
	for i := range entries {
		switch entries[i].Kind {
		case KindDecision:
			c[0]++
		case KindDeadLetter:
			c[1]++
		}
	}
	return c
}

// NewWriter starts a writer appending to j; Close stops it.
func NewWriter(j store.Journal, m *Metrics, opts WriterOptions) *Writer {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// Every queued write holds at least one entry, so a channel of Buffer
	// items never blocks a Write that the entry budget admitted — but for
	// Flush's markers, which share the channel (a review: a Write admitted
	// while markers filled it was dropped at the channel; counted as any
	// drop, see write).
	w := &Writer{journal: j, m: m, opts: opts, ch: make(chan item, opts.Buffer), done: make(chan struct{})}
	go w.run()
	return w
}

// Write queues entries without blocking, together: the entries of one call
// are kept in order and appended in the same frames. A call that finds the
// buffer full (Buffer entries waiting: the store is behind) is dropped
// whole; one that finds room is kept whole, however many entries it holds,
// so the buffer holds at most Buffer entries plus each concurrent call's.
// A dead-letter entry is counted in alertrouter_dead_letters_total here,
// whether or not it fits the buffer. Entries written after Close are
// dropped.
func (w *Writer) Write(entries ...Entry) { w.write(entries, false) }

// write is Write; owned says the writer may keep entries itself (Record's
// own slice) instead of a copy.
func (w *Writer) write(entries []Entry, owned bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, e := range entries {
		if e.Kind == KindDeadLetter && e.DeadLetter != nil {
			w.m.deadLetters.WithLabelValues(e.DeadLetter.Receiver, alert.IntegrationType(e.DeadLetter.Integration)).Inc()
		}
	}
	if w.closed || len(entries) == 0 {
		w.m.dropped.Add(float64(len(entries)))
		return
	}
	// Take room for every entry; a write that found the buffer full gives
	// its room back and is dropped whole. One that found room is kept
	// whole: a webhook's decisions are never split, however many (a
	// 100,000-alert webhook kept its first 4,096, and the console and the
	// incidents command counted those: an audit).
	n := int64(len(entries))
	if before := w.queued.Add(n) - n; before >= int64(w.opts.Buffer) {
		w.queued.Add(-n)
		w.m.dropped.Add(float64(n))
		w.droppedWhileFailing(entries)
		return
	}
	if !owned {
		entries = slices.Clone(entries)
	}
	for i := range entries {
		if entries[i].Time.IsZero() {
			entries[i].Time = w.opts.Now()
		}
		if entries[i].Replica == "" {
			entries[i].Replica = w.opts.Replica
		}
	}
	select {
	case w.ch <- item{entries: entries}:
	default: // only while Flush's markers fill the channel (see NewWriter)
		w.queued.Add(-int64(len(entries)))
		w.m.dropped.Add(float64(len(entries)))
		w.droppedWhileFailing(entries)
	}
}

// Flush waits until every entry written before the call has been appended
// (or dropped), or ctx ends.
func (w *Writer) Flush(ctx context.Context) error {
	done := make(chan struct{})
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return nil
	}
	select {
	case w.ch <- item{done: done}:
		w.mu.RUnlock()
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting entries, appends what is buffered and returns when
// done or when ctx ends.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		// Said here: a shutdown's close goes on to close the store, and
		// what the writer still holds fails to append then (counted
		// dropped), logged after the router said it stopped (a review).
		w.opts.Logger.Warn("journal writer stopping before the store took what it holds: those entries are given up (counted in alertrouter_journal_dropped_total as their append fails)",
			"queued", len(w.ch), "err", ctx.Err())
		return ctx.Err()
	}
}

// run drains the channel: it waits for one item, takes whatever else is
// already queued up to a batch, and appends the batch.
func (w *Writer) run() {
	defer close(w.done)
	batch := make([]Entry, 0, w.opts.Batch)
	var markers []chan struct{}
	for it := range w.ch {
		batch, markers = w.add(batch, markers, it)
	fill:
		for len(batch) < w.opts.Batch {
			select {
			case it, ok := <-w.ch:
				if !ok {
					break fill
				}
				batch, markers = w.add(batch, markers, it)
			default:
				break fill
			}
		}
		w.appendContained(batch)
		for _, m := range markers {
			close(m)
		}
		clear(batch) // release the entries' maps before the next wait
		batch, markers = batch[:0], markers[:0]
	}
}

// appendContained is append with a panic (a bug, in encoding or in the
// store's client) turned into the batch's entries dropped, counted and
// logged with the stack: the writer goes on with the next batch, and the
// router does not crash with every webhook in flight.
func (w *Writer) appendContained(batch []Entry) {
	defer func() {
		if v := recover(); v != nil {
			w.frame = frameBuffers{}
			w.m.dropped.Add(float64(len(batch)))
			w.m.panics.Inc() // AlertrouterPanicked reads it
			w.opts.Logger.Error("journal writer panicked (a bug: please report it with this stack); the batch's entries dropped, webhooks unaffected",
				"entries", len(batch), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	w.append(batch)
}

func (w *Writer) add(batch []Entry, markers []chan struct{}, it item) ([]Entry, []chan struct{}) {
	if it.done != nil {
		return batch, append(markers, it.done)
	}
	w.queued.Add(-int64(len(it.entries)))
	return append(batch, it.entries...), markers
}

// append packs one batch into frames — runs of consecutive entries of one
// kind, at most MaxFrameEntries each — and appends them in one store call.
func (w *Writer) append(batch []Entry) {
	if len(batch) == 0 {
		return
	}
	recs := make([]store.JournalRecord, 0, len(batch)/MaxFrameEntries+2)
	entries := 0
	var kinds [2]int // the decisions and dead letters in recs
	for start := 0; start < len(batch); {
		end := start + 1
		for end < len(batch) && end-start < MaxFrameEntries && batch[end].Kind == batch[start].Kind {
			end++
		}
		frame := batch[start:end]
		start = end
		data, err := encodeFrame(frame, &w.frame)
		if err == nil {
			recs = append(recs, store.JournalRecord{Kind: string(frame[0].Kind), Data: data})
			entries += len(frame)
			c := countKinds(frame)
			kinds[0], kinds[1] = kinds[0]+c[0], kinds[1]+c[1]
			continue
		}
		// An entry the encoder refuses (decoding lets no such value in;
		// were one to pass) costs only itself, not its frame's others:
		// each is tried in a frame of its own.
		for i := range frame {
			data, err := encodeFrame(frame[i:i+1], &w.frame)
			if err != nil {
				w.m.dropped.Inc()
				w.opts.Logger.Error("journal entry not encodable; dropped", "fingerprint", frame[i].Fingerprint, "err", err)
				continue
			}
			recs = append(recs, store.JournalRecord{Kind: string(frame[i].Kind), Data: data})
			entries++
			c := countKinds(frame[i : i+1])
			kinds[0], kinds[1] = kinds[0]+c[0], kinds[1]+c[1]
		}
	}
	if len(recs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), appendTimeout)
	defer cancel()
	if _, err := w.journal.AppendJournal(ctx, recs); err != nil {
		w.m.failed.Inc()
		w.m.dropped.Add(float64(entries))
		w.appendFailed(err, kinds)
		if kinds[1] > 0 {
			// A dead letter is what on-call replays after fixing an
			// integration: the log sent them to a replay of a dead
			// letter the journal never got (an audit: 120 dropped in
			// a store outage, logged "webhooks unaffected").
			w.failLogs.Log(ctx, w.opts.Logger, slog.LevelError, "append-dead-letters:"+logthrottle.ErrorClass(err), "journal append failed; dead letters dropped: `router dead-letters list` and the console will not show them, nor replay them — Alertmanager's retries of their webhooks (answered 5xx) write them again while their alerts fire",
				"entries", entries, "dead_letters", kinds[1], "err", err)
			return
		}
		w.failLogs.Log(ctx, w.opts.Logger, slog.LevelWarn, "append:"+logthrottle.ErrorClass(err), "journal append failed; entries dropped, webhooks unaffected", "entries", entries, "err", err)
		return
	}
	w.m.written.Add(float64(entries))
	w.appendSucceeded()
}
