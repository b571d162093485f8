package dedup

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/store"
)

// Deferred retries, in the background, store writes that failed after a
// notification was delivered: the confirmation of what was sent, the
// release of what failed, and incident steps — above all the closing of an
// incident resolved while the store was down, without which the store would
// still hold it open and a later firing would not open it again. Writes are
// retried with backoff until they succeed or are older than MaxAge; beyond
// MaxItems the oldest are dropped, counted and logged. State lives in this
// process only: it bridges a store outage, not a replica crash. Close
// tries the writes still queued once more, bounded, and counts and logs
// those it gives up. (A resolve whose firing's markers were given up is
// still sent to PagerDuty: routing's lostResolves.)
type Deferred struct {
	store   store.Store
	logger  *slog.Logger
	maxAge  time.Duration
	maxLen  int
	pending prometheus.Gauge
	dropped prometheus.Counter

	mu    sync.Mutex
	queue []job
	// sets indexes the entries the queued jobs set, by key: the newest
	// value and how many queued jobs set the key (Pending).
	sets map[string]queuedSet
	// overLimit counts the jobs dropped over maxLen since the last line
	// saying so, at overLimitLogged.
	overLimit       int
	overLimitLogged time.Time
	closed          bool // Close has given up what was left: add drops
	// next took the queue over (HandOver): add forwards to it.
	next *Deferred
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

type queuedSet struct {
	value string
	n     int
}

type job struct {
	at  time.Time
	set []store.Entry
	del []store.Entry
	inc []store.IncidentOp
}

// DeferredMetrics are the retrier's metrics; create them once per process
// with NewDeferredMetrics (a reload builds a new Deferred on the same ones).
type DeferredMetrics struct {
	pending prometheus.Gauge
	dropped prometheus.Counter
}

// NewDeferredMetrics registers the retrier's metrics on reg (nil: not
// registered).
func NewDeferredMetrics(reg prometheus.Registerer) *DeferredMetrics {
	m := &DeferredMetrics{
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "alertrouter_dedup_deferred_writes",
			Help: "Store writes after deliveries waiting to be retried because the store failed.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "alertrouter_dedup_deferred_dropped_total",
			Help: "Deferred store writes given up (too old or too many); each risks a duplicate or a missed re-opening.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.pending, m.dropped)
	}
	return m
}

// NewDeferred starts a retrier writing to s. Close stops it.
func NewDeferred(s store.Store, m *DeferredMetrics, logger *slog.Logger) *Deferred {
	if m == nil {
		m = NewDeferredMetrics(nil)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Deferred{store: s, logger: logger, maxAge: time.Hour, maxLen: 10000, pending: m.pending, dropped: m.dropped,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go d.run()
	return d
}

// Set queues entries to be set.
func (d *Deferred) Set(entries []store.Entry) { d.add(job{set: entries}) }

// DeleteIfEqual queues compare-and-delete entries.
func (d *Deferred) DeleteIfEqual(entries []store.Entry) { d.add(job{del: entries}) }

// Incidents queues incident steps, applied in order.
func (d *Deferred) Incidents(ops []store.IncidentOp) { d.add(job{inc: ops}) }

// index counts j's set entries in (by 1) or out (by -1) of d.sets; d.mu
// held.
func (d *Deferred) index(j job, by int) {
	for _, e := range j.set {
		q := d.sets[e.Key]
		q.n += by
		switch {
		case q.n <= 0:
			delete(d.sets, e.Key)
			continue
		case by > 0:
			q.value = e.Value
		}
		if d.sets == nil {
			d.sets = map[string]queuedSet{}
		}
		d.sets[e.Key] = q
	}
}

// Pending fills, for each key not found (found[i] false), the value a
// queued write sets it to, if any, and reports whether it filled one: what
// this replica delivered while the store could not take its markers is
// known to it before the store knows it — during the outage, and after it
// until the queue is applied (up to its backoff, 10s). Without it each of
// Alertmanager's retries of a webhook answered 5xx (a resolve held for the
// store) sent its firings again (a review: 25 PagerDuty triggers and 29
// Slack parents for one alert in a 40-second outage), as did every repeat
// of a firing group during an outage.
func (d *Deferred) Pending(keys, values []string, found []bool) bool {
	d.mu.Lock()
	if next := d.next; next != nil {
		d.mu.Unlock()
		return next.Pending(keys, values, found)
	}
	defer d.mu.Unlock()
	filled := false
	if len(d.sets) == 0 {
		return false
	}
	for i, k := range keys {
		if found[i] {
			continue
		}
		if q, ok := d.sets[k]; ok {
			values[i], found[i], filled = q.value, true, true
		}
	}
	return filled
}

// Len returns how many writes wait.
func (d *Deferred) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.queue)
}

func (d *Deferred) add(j job) {
	j.at = time.Now()
	d.enqueue(j)
}

// enqueue queues j (its time kept), or forwards it to the Deferred that
// took the queue over.
func (d *Deferred) enqueue(j job) {
	d.mu.Lock()
	if next := d.next; next != nil {
		d.mu.Unlock()
		next.enqueue(j)
		return
	}
	if d.closed {
		// A settle that outlived the retrier (a reload retired its store).
		d.mu.Unlock()
		d.dropped.Inc()
		d.logger.Error("deferred store write after the retrier stopped: given up")
		return
	}
	d.queue = append(d.queue, j)
	d.index(j, 1)
	if len(d.queue) > d.maxLen {
		d.index(d.queue[0], -1)
		d.queue = d.queue[1:]
		d.dropped.Inc()
		// One line per 10 s with the count, not one per drop (a review:
		// 643 lines in a minute at 80 webhooks/s).
		d.overLimit++
		if now := time.Now(); now.Sub(d.overLimitLogged) >= 10*time.Second {
			d.logger.Error("deferred store writes over their limit: dropping the oldest (their notifications may be sent again)", "dropped", d.overLimit, "limit", d.maxLen)
			d.overLimit, d.overLimitLogged = 0, now
		}
	} else {
		d.pending.Inc()
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// closeFlush bounds Close's last attempt at the writes still queued: a
// store that answers takes them in milliseconds, and one that does not
// must not hold the shutdown (or the retirement of a reloaded store) long.
const closeFlush = 2 * time.Second

// Close stops the retrier after one last attempt, bounded by closeFlush,
// at the writes still queued (the store may have come back since the last
// retry, which can be up to 10s ago). Those it cannot apply are given up:
// counted in alertrouter_dedup_deferred_dropped_total and logged with
// their risk. Closing twice does nothing.
func (d *Deferred) Close() { d.CloseBy(time.Time{}) }

// CloseBy is Close whose last attempt also ends by deadline (the zero
// time: closeFlush alone bounds it): a shutdown's close shares what is
// left of its drain's budget (cmd/router), so the process exits within
// the termination grace period the deployment sizes for it.
func (d *Deferred) CloseBy(deadline time.Time) {
	select {
	case <-d.stop:
		return
	default:
	}
	close(d.stop)
	<-d.done
	if d.Len() > 0 {
		by := time.Now().Add(closeFlush)
		if !deadline.IsZero() && deadline.Before(by) {
			by = deadline
		}
		d.flushWithin(context.Background(), by)
	}
	d.mu.Lock()
	n := len(d.queue)
	d.queue, d.sets, d.closed = nil, nil, true
	d.mu.Unlock()
	if n > 0 {
		d.dropped.Add(float64(n))
		d.pending.Sub(float64(n))
		d.logger.Error("stopping with deferred store writes not applied: given up; the store may not know of notifications sent during its outage (a duplicate, or an incident that does not open again, is possible)", "writes", n)
	}
}

// HandOver stops d's retrier and moves the writes it holds — and those
// added later, by the webhooks of d's generation still in flight — to
// next, which retries them on its store: a reload that builds a new client
// for the same keyspace (a rotated Redis password, new TLS files, new
// timeouts) keeps what an outage left to write, where Close would try the
// old client once and give them up (the notifications sent during the
// outage then sent again). Close afterwards does nothing; handing over
// twice, or after Close, does nothing.
func (d *Deferred) HandOver(next *Deferred) {
	if next == nil || next == d {
		return
	}
	select {
	case <-d.stop:
		return
	default:
	}
	close(d.stop)
	<-d.done
	d.mu.Lock()
	q := d.queue
	d.queue, d.sets, d.next = nil, nil, next
	d.mu.Unlock()
	d.pending.Sub(float64(len(q)))
	for _, j := range q {
		next.enqueue(j)
	}
}

func (d *Deferred) run() {
	defer close(d.done)
	// The loop's attempt ends when d stops: Close and HandOver wait for
	// it, and a write a stalled store held took its own 2s past a
	// shutdown's deadline (a review). A write cut short stays queued for
	// Close's last attempt (each write is safe to apply again).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-d.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	backoff := 100 * time.Millisecond
	for {
		t := time.NewTimer(backoff)
		select {
		case <-d.stop:
			t.Stop()
			return
		case <-d.wake:
			t.Stop()
		case <-t.C:
		}
		if d.flushWithin(ctx, time.Time{}) {
			backoff = 100 * time.Millisecond
		} else {
			backoff = min(backoff*2, 10*time.Second)
		}
	}
}

// flushWithin applies queued jobs in order and stops at the first failure
// or, when deadline is not zero, once deadline has passed (each write's
// timeout is cut to it), or when ctx ends. It reports whether the queue is
// empty. What it applied and gave up is logged once (an outage of a busy
// router queues hundreds of writes: a line each was a burst of hundreds
// at recovery).
func (d *Deferred) flushWithin(ctx context.Context, deadline time.Time) bool {
	var applied, dropped int
	var oldest time.Duration
	defer func() {
		if dropped > 0 {
			d.logger.Error("deferred store writes older than their limit: given up", "writes", dropped)
		}
		if applied > 0 {
			d.logger.Info("deferred store writes applied", "writes", applied, "oldest_age", oldest.Round(time.Millisecond))
		}
	}()
	for {
		d.mu.Lock()
		if len(d.queue) == 0 {
			d.mu.Unlock()
			return true
		}
		j := d.queue[0]
		d.mu.Unlock()
		if time.Since(j.at) > d.maxAge {
			dropped++
			d.dropped.Inc()
			d.pop()
			continue
		}
		end := time.Now().Add(2 * time.Second)
		if !deadline.IsZero() {
			if !time.Now().Before(deadline) {
				return false
			}
			if deadline.Before(end) {
				end = deadline
			}
		}
		wctx, cancel := context.WithDeadline(ctx, end)
		err := d.apply(wctx, j)
		cancel()
		if err != nil {
			return false
		}
		applied++
		oldest = max(oldest, time.Since(j.at))
		d.pop()
	}
}

func (d *Deferred) pop() {
	d.mu.Lock()
	d.index(d.queue[0], -1)
	d.queue = d.queue[1:]
	d.pending.Dec()
	d.mu.Unlock()
}

func (d *Deferred) apply(ctx context.Context, j job) error {
	if len(j.set) > 0 {
		if err := d.store.Set(ctx, j.set); err != nil {
			return err
		}
	}
	if len(j.del) > 0 {
		if err := d.store.DeleteIfEqual(ctx, j.del); err != nil {
			return err
		}
	}
	if len(j.inc) > 0 {
		if _, err := d.store.Incidents(ctx, j.inc); err != nil {
			return err
		}
	}
	return nil
}
