package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// sizes are the payload sizes every benchmark runs for.
var sizes = []int{1, 10, 100}

var receivedAt = time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)

func corpus(tb testing.TB) *Corpus {
	tb.Helper()
	c, err := LoadCorpus("../testdata")
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func payload(tb testing.TB, c *Corpus, n int) *Payload {
	tb.Helper()
	p, err := c.Build(n, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// perAlert runs the benchmark loop and reports allocations per alert
// besides -benchmem's per-operation figures.
func perAlert(b *testing.B, alerts int, body func()) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		body()
		n++
	}
	runtime.ReadMemStats(&after)
	if n > 0 {
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n*alerts), "allocs/alert")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*alerts), "ns/alert")
	}
}

// routes is the route tree of the README: pages to PagerDuty (continuing),
// pages and tickets to the Slack triage channel.
func routes(tb testing.TB) *routing.Route {
	tb.Helper()
	r := &routing.Route{
		Receiver: "slack-triage",
		Routes: []*routing.Route{
			{Matchers: []string{`decision="page"`}, Receiver: "pagerduty", Continue: true},
			{Matchers: []string{`decision=~"page|ticket"`}, Receiver: "slack-triage"},
		},
	}
	if err := r.Compile(map[string]bool{"pagerduty": true, "slack-triage": true}); err != nil {
		tb.Fatal(err)
	}
	return r
}

// pipeline builds the router's pipeline as cmd/router does, with the
// default classifier and policies, the README's routes, dedup defaults and
// notifiers that deliver instantly.
func pipeline(tb testing.TB, s store.Store) *routing.Pipeline {
	tb.Helper()
	cls, err := enrich.New(enrich.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	dec, err := policies.New(policies.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	noop := alert.NotifierFunc(func(context.Context, *alert.Notification) error { return nil })
	fl := flap.DefaultConfig()
	return &routing.Pipeline{
		Classifier: cls,
		Decider:    dec,
		Routes:     routes(tb),
		Receivers: map[string][]routing.Integration{
			"pagerduty":    {{Name: "pagerduty/0", Notifier: noop, SendResolved: true}},
			"slack-triage": {{Name: "slack/0", Notifier: noop, SendResolved: true}},
		},
		Store: s,
		Dedup: routing.DedupOptions{
			ClaimTTL:       time.Minute,
			NotifiedTTL:    7 * 24 * time.Hour,
			RepeatInterval: 4 * time.Hour,
			InFlightWait:   2 * time.Second,
			KeyPrefix:      "bench:",
		},
		Metrics: routing.NewMetrics(prometheus.NewRegistry()),
		Logger:  slog.New(slog.DiscardHandler),
		Flap:    &fl, // on by default in cmd/router
	}
}

// BenchmarkJSONFloor is the floor: encoding/json decoding the payload into
// a struct mirroring Alertmanager's webhook (template.Data and the v4
// fields), nothing else.
func BenchmarkJSONFloor(b *testing.B) {
	c := corpus(b)
	for _, n := range sizes {
		p := payload(b, c, n)
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(p.Body)))
			perAlert(b, n, func() {
				var f Floor
				if err := json.Unmarshal(p.Body, &f); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkDecode is the router's decoder (validation, mending, flags).
func BenchmarkDecode(b *testing.B) {
	c := corpus(b)
	for _, n := range sizes {
		p := payload(b, c, n)
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(p.Body)))
			perAlert(b, n, func() {
				if _, err := webhook.Decode(p.Body, receivedAt); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func decoded(b *testing.B, c *Corpus, n int) *alert.Message {
	b.Helper()
	m, err := webhook.Decode(payload(b, c, n).Body, receivedAt)
	if err != nil {
		b.Fatal(err)
	}
	if len(m.Items) != n {
		b.Fatalf("decoded %d alerts, want %d (rejected: %v)", len(m.Items), n, m.Rejected)
	}
	return m
}

// BenchmarkClassify is enrich's classifier over every alert of a payload.
func BenchmarkClassify(b *testing.B) {
	c := corpus(b)
	cls, err := enrich.New(enrich.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range sizes {
		m := decoded(b, c, n)
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			perAlert(b, n, func() {
				for i := range m.Items {
					_ = cls.Classify(&m.Items[i])
				}
			})
		})
	}
}

// BenchmarkDecide is the policies engine over every classified alert of a
// payload (classification done once, outside the loop).
func BenchmarkDecide(b *testing.B) {
	c := corpus(b)
	cls, err := enrich.New(enrich.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	dec, err := policies.New(policies.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range sizes {
		m := decoded(b, c, n)
		cs := make([]alert.Classification, n)
		for i := range m.Items {
			cs[i] = cls.Classify(&m.Items[i])
		}
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			perAlert(b, n, func() {
				for i := range m.Items {
					_ = dec.Decide(&m.Items[i], &cs[i], receivedAt)
				}
			})
		})
	}
}

// BenchmarkEvaluate is the pure stages together (classify, decide, route,
// incident, in-payload SLO suppression) on a decoded payload.
func BenchmarkEvaluate(b *testing.B) {
	c := corpus(b)
	p := pipeline(b, store.NewMemory())
	for _, n := range sizes {
		m := decoded(b, c, n)
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			perAlert(b, n, func() { _ = p.Evaluate(m) })
		})
	}
}

// process decodes body and runs the whole pipeline on it, failing the
// benchmark on any error or failed notification.
func process(b testing.TB, p *routing.Pipeline, body []byte) *alert.Summary {
	m, err := webhook.Decode(body, receivedAt)
	if err != nil {
		b.Fatal(err)
	}
	sum, err := p.Process(context.Background(), m)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Failed > 0 {
		b.Fatalf("failed notifications: %v", sum.Errors)
	}
	return sum
}

// runBase and runSeq number the payload runs (Payload.Fresh) of this
// process; the base comes from the clock so that runs against a store kept
// between processes (a Redis not flushed) do not meet either.
var (
	runBase = uint16(time.Now().UnixNano())
	runSeq  atomic.Uint32
)

// nextRun returns a run no other caller in this process got (up to 65,536).
func nextRun() uint16 { return runBase + uint16(runSeq.Add(1)) }

// benchProcess runs the ingest-to-decision path (Decode + Process: classify,
// decide, route, dedup, notify through no-op notifiers) against s for every
// size, in two states:
//   - steady: the same payload repeated, as Alertmanager does every
//     group_interval; after the first pass every alert is a dedup hit.
//   - fresh: new fingerprints each iteration, so every alert is a new
//     transition (read, claim, notify, confirm).
func benchProcess(b *testing.B, s store.Store) {
	c := corpus(b)
	p := pipeline(b, s)
	for _, n := range sizes {
		pl := payload(b, c, n)
		b.Run(fmt.Sprintf("steady/alerts=%d", n), func(b *testing.B) {
			// Fingerprints of its own: the store outlives one count (-count).
			body := pl.Fresh(nil, nextRun(), 0)
			first := process(b, p, body)
			if first.Notified == 0 {
				b.Fatalf("first pass notified nothing: %+v", first)
			}
			again := process(b, p, body)
			if again.Notified != 0 {
				b.Fatalf("repeated payload notified %d alerts, want only dedup hits", again.Notified)
			}
			b.SetBytes(int64(len(body)))
			perAlert(b, n, func() { process(b, p, body) })
		})
		b.Run(fmt.Sprintf("fresh/alerts=%d", n), func(b *testing.B) {
			buf := make([]byte, 0, len(pl.Body))
			var seq uint64
			run := nextRun()
			b.SetBytes(int64(len(pl.Body)))
			perAlert(b, n, func() {
				seq++
				buf = pl.Fresh(buf, run, seq)
				if sum := process(b, p, buf); sum.Deduplicated > 0 {
					b.Fatalf("fresh payload was deduplicated: %+v", sum)
				}
			})
		})
	}
}

// BenchmarkProcessMemory is the pipeline with the embedded in-memory store.
func BenchmarkProcessMemory(b *testing.B) {
	benchProcess(b, store.NewMemory())
}

// countingStore counts the store calls (each one Redis round trip per
// node) the pipeline makes.
type countingStore struct {
	store.Store
	calls atomic.Int64
	// byOp counts the calls per method (index: the op* constants).
	byOp [opCount]atomic.Int64
}

// The methods countingStore counts, in BenchmarkStoreCalls's report order.
const (
	opGet = iota
	opSetNX
	opSet
	opDelete
	opIncidents
	opWrite
	opMembers
	opClaimJoin
	opCount
)

var opNames = [opCount]string{"get", "setnx", "set", "delete", "incidents", "write", "members", "claimjoin"}

func (s *countingStore) SetNX(ctx context.Context, e []store.Entry) ([]bool, error) {
	s.count(opSetNX, len(e) > 0)
	return s.Store.SetNX(ctx, e)
}

// SetNXAndSet is one round trip on Redis (store.ClaimWriter).
func (s *countingStore) SetNXAndSet(ctx context.Context, claims, also []store.Entry) ([]bool, error, error) {
	s.count(opSetNX, len(claims)+len(also) > 0)
	return store.Claim(ctx, s.Store, claims, also)
}

// ClaimJoin is one round trip on a single Redis node (store.ClaimJoiner).
func (s *countingStore) ClaimJoin(ctx context.Context, claims, also []store.Entry, ops []store.ClaimedOp) store.ClaimJoinResult {
	s.count(opClaimJoin, len(claims)+len(also)+len(ops) > 0)
	return store.ClaimJoin(ctx, s.Store, claims, also, ops)
}

func (s *countingStore) Set(ctx context.Context, e []store.Entry) error {
	s.count(opSet, len(e) > 0)
	return s.Store.Set(ctx, e)
}

func (s *countingStore) Get(ctx context.Context, keys []string) ([]string, []bool, error) {
	s.count(opGet, len(keys) > 0)
	return s.Store.Get(ctx, keys)
}

func (s *countingStore) DeleteIfEqual(ctx context.Context, e []store.Entry) error {
	s.count(opDelete, len(e) > 0)
	return s.Store.DeleteIfEqual(ctx, e)
}

func (s *countingStore) AddMembers(ctx context.Context, key string, ttl time.Duration, m ...string) error {
	s.count(opMembers, len(m) > 0)
	return s.Store.AddMembers(ctx, key, ttl, m...)
}

func (s *countingStore) RemoveMembers(ctx context.Context, key string, m ...string) (int64, error) {
	s.count(opMembers, true)
	return s.Store.RemoveMembers(ctx, key, m...)
}

func (s *countingStore) Members(ctx context.Context, key string) ([]string, error) {
	s.count(opMembers, true)
	return s.Store.Members(ctx, key)
}

func (s *countingStore) Incidents(ctx context.Context, ops []store.IncidentOp) ([]store.IncidentResult, error) {
	s.count(opIncidents, len(ops) > 0)
	return s.Store.Incidents(ctx, ops)
}

// Write is one round trip on Redis (store.Writer), whatever its parts.
func (s *countingStore) Write(ctx context.Context, w store.Writes) store.WriteErrors {
	s.count(opWrite, !w.Empty())
	return store.Write(ctx, s.Store, w)
}

// count counts a call that reaches the store: Redis sends nothing for an
// empty batch.
func (s *countingStore) count(op int, nonEmpty bool) {
	if nonEmpty {
		s.calls.Add(1)
		s.byOp[op].Add(1)
	}
}

// report reports the calls per webhook, in all and per method.
func (s *countingStore) report(b *testing.B, ops int) {
	b.ReportMetric(float64(s.calls.Load())/float64(ops), "store-calls/op")
	for op, name := range opNames {
		if n := s.byOp[op].Load(); n > 0 {
			b.ReportMetric(float64(n)/float64(ops), name+"/op")
		}
	}
}

// BenchmarkStoreCalls reports the store calls (round trips) per webhook
// of the steady and fresh states: the figure that, times the Redis round
// trip time, bounds the HTTP latency.
func BenchmarkStoreCalls(b *testing.B) {
	c := corpus(b)
	for _, n := range sizes {
		pl := payload(b, c, n)
		b.Run(fmt.Sprintf("steady/alerts=%d", n), func(b *testing.B) {
			s := &countingStore{Store: store.NewMemory()}
			p := pipeline(b, s)
			process(b, p, pl.Body)
			s.calls.Store(0)
			for op := range s.byOp {
				s.byOp[op].Store(0)
			}
			ops := 0
			for b.Loop() {
				process(b, p, pl.Body)
				ops++
			}
			s.report(b, ops)
		})
		b.Run(fmt.Sprintf("fresh/alerts=%d", n), func(b *testing.B) {
			s := &countingStore{Store: store.NewMemory()}
			p := pipeline(b, s)
			var buf []byte
			ops := 0
			for b.Loop() {
				ops++
				buf = pl.Fresh(buf, 1, uint64(ops))
				process(b, p, buf)
			}
			s.report(b, ops)
		})
	}
}

// BenchmarkProcessRedis is the pipeline against a real redis-server on
// loopback (started for the benchmark; skipped without redis-server).
func BenchmarkProcessRedis(b *testing.B) {
	_, s := redisStore(b)
	benchProcess(b, s)
}

// TestPayloadsAreDistinctAndDecodable checks what the benchmarks rely on:
// every payload decodes without rejection or flags, its fingerprints are
// distinct, and Fresh stamps new distinct fingerprints.
func TestPayloadsAreDistinctAndDecodable(t *testing.T) {
	c := corpus(t)
	for _, n := range []int{1, 10, 100, 250} {
		t.Run(fmt.Sprintf("%d alerts", n), func(t *testing.T) {
			p := payload(t, c, n)
			seen := map[string]bool{}
			for _, body := range [][]byte{p.Body, p.Fresh(nil, 7, 1), p.Fresh(nil, 7, 2)} {
				m, err := webhook.Decode(body, receivedAt)
				if err != nil {
					t.Fatal(err)
				}
				if len(m.Items) != n || len(m.Rejected) != 0 {
					t.Fatalf("decoded %d alerts and %d rejections, want %d and 0", len(m.Items), len(m.Rejected), n)
				}
				for _, a := range m.Items {
					if len(a.Flags) != 0 {
						t.Errorf("alert %s flagged %v", a.Fingerprint, a.Flags)
					}
					if seen[a.Fingerprint] {
						t.Fatalf("fingerprint %s repeated", a.Fingerprint)
					}
					seen[a.Fingerprint] = true
				}
			}
		})
	}
}

// TestStormIsOneFamilyPlusTenPercentNoise checks the storm's shape.
func TestStormIsOneFamilyPlusTenPercentNoise(t *testing.T) {
	c := corpus(t)
	ps, err := c.Storm(100, 100)
	if err != nil {
		t.Fatal(err)
	}
	family, total := 0, 0
	seen := map[string]bool{}
	for _, p := range ps {
		var f Floor
		if err := json.Unmarshal(p.Body, &f); err != nil {
			t.Fatal(err)
		}
		for _, a := range f.Alerts {
			total++
			if seen[a.Fingerprint] {
				t.Fatalf("fingerprint %s repeated", a.Fingerprint)
			}
			seen[a.Fingerprint] = true
			if a.Labels["slo"] == StormFamily["slo"] && a.Labels["service"] == StormFamily["service"] {
				family++
			}
		}
	}
	if total != 10000 || family != 9000 {
		t.Errorf("storm has %d alerts, %d of the family; want 10000 and 9000", total, family)
	}
}
