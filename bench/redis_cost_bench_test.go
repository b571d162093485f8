package bench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// redisStore starts a redis-server for the benchmark and returns it with
// the store cmd/router would build on it (closed at the end).
func redisStore(b *testing.B) (*redistest.Server, *store.Redis) {
	srv := redistest.Start(b)
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = []string{srv.Addr()}
	s, err := store.NewRedis(cfg, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return srv, s
}

// redisCPU returns the CPU time redis-server says it has used (INFO cpu:
// used_cpu_sys + used_cpu_user), in seconds.
func redisCPU(tb testing.TB, srv *redistest.Server) float64 {
	tb.Helper()
	info, err := redistest.Do(srv.Addr(), "INFO", "cpu")
	if err != nil {
		tb.Fatal(err)
	}
	total, found := 0.0, 0
	for line := range strings.Lines(info) {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "used_cpu_sys" && name != "used_cpu_user") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			tb.Fatalf("INFO cpu %s: %v", name, err)
		}
		total += f
		found++
	}
	if found != 2 {
		tb.Fatalf("INFO cpu without used_cpu_sys and used_cpu_user:\n%s", info)
	}
	return total
}

// chargeRedis empties the server, runs the benchmark loop and reports what
// redis-server spent per webhook (µs of its CPU, from INFO) and per alert.
// Every case starts from an empty keyspace so that none pays for keys (and
// incident members) an earlier case left. With -v it also logs Redis' own
// account of each command per webhook (INFO commandstats: calls and µs; a
// command a script runs is counted in its own line and in the script's).
func chargeRedis(b *testing.B, srv *redistest.Server, alerts int, body func()) {
	for _, cmd := range [][]string{{"FLUSHALL"}, {"CONFIG", "RESETSTAT"}} {
		if _, err := redistest.Do(srv.Addr(), cmd...); err != nil {
			b.Fatal(err)
		}
	}
	before := redisCPU(b, srv)
	n := 0
	for b.Loop() {
		body()
		n++
	}
	used := redisCPU(b, srv) - before
	b.ReportMetric(used*1e6/float64(n), "redis-µs/webhook")
	b.ReportMetric(used*1e6/float64(n*alerts), "redis-µs/alert")
	if testing.Verbose() {
		logCommands(b, srv, n)
	}
}

// logCommands logs INFO commandstats per webhook (n webhooks): the commands
// the benchmark sent, the busiest first.
func logCommands(b *testing.B, srv *redistest.Server, n int) {
	info, err := redistest.Do(srv.Addr(), "INFO", "commandstats")
	if err != nil {
		b.Fatal(err)
	}
	type stat struct {
		name        string
		calls, usec float64
	}
	var stats []stat
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || name == "info" || strings.HasPrefix(name, "config") {
			continue
		}
		var st stat
		st.name = name
		for field := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(field, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				st.calls = f
			case "usec":
				st.usec = f
			}
		}
		stats = append(stats, st)
	}
	slices.SortFunc(stats, func(a, c stat) int { return cmp.Compare(c.usec, a.usec) })
	var out strings.Builder
	for _, st := range stats {
		fmt.Fprintf(&out, "\n  %-10s %6.2f calls/webhook %8.1f µs/webhook", st.name, st.calls/float64(n), st.usec/float64(n))
	}
	b.Logf("redis commandstats over %d webhooks:%s", n, out.String())
}

// BenchmarkRedisCost is what new alerts cost Redis itself — the CPU of the
// redis-server process per fresh webhook, which on a machine shared with
// Redis is as much a part of the receiver's cost as its own — for:
//
//   - router: the pipeline's store work for a fresh webhook as cmd/router
//     does it (markers and flap histories read, claims, incident state,
//     confirmations and markers, SLO page sets), notifiers that return at
//     once, no journal;
//   - router+journal: the same with every decision journaled to the Redis
//     Stream, as cmd/router does with a Redis store;
//   - exactly-once-floor: the least a receiver can ask of Redis to deliver
//     each new alert once across replicas: one read of a marker per alert
//     and integration, one claim per alert (SET NX), one marker per alert
//     and integration after the send — three round trips, no incidents,
//     flap damping, page sets or journal.
//
// The ratio router / exactly-once-floor is how much of Redis' cost the
// router's features add over bare exactly-once delivery
// (docs/benchmarks.md).
func BenchmarkRedisCost(b *testing.B) {
	srv, s := redisStore(b)
	c := corpus(b)
	ctx := context.Background()
	run := nextRun()
	var seq uint64
	for _, n := range sizes {
		pl := payload(b, c, n)
		for _, withJournal := range []bool{false, true} {
			name := "router"
			if withJournal {
				name = "router+journal"
			}
			b.Run(fmt.Sprintf("%s/alerts=%d", name, n), func(b *testing.B) {
				p := pipeline(b, s)
				var w *journal.Writer
				if withJournal {
					m, err := journal.NewMetrics(prometheus.NewRegistry())
					if err != nil {
						b.Fatal(err)
					}
					w = journal.NewWriter(s.Journal("bench:journal", store.DefaultJournalRetention, nil), m, journal.WriterOptions{})
					b.Cleanup(func() { _ = w.Close(ctx) })
					p.Recorder = w
				}
				var buf []byte
				chargeRedis(b, srv, n, func() {
					seq++
					buf = pl.Fresh(buf, run, seq)
					if sum := process(b, p, buf); sum.Notified == 0 || sum.Deduplicated > 0 {
						b.Fatalf("fresh webhook: %+v", sum)
					}
					if w != nil {
						if err := w.Flush(ctx); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
		b.Run(fmt.Sprintf("exactly-once-floor/alerts=%d", n), func(b *testing.B) {
			integrations := []string{"pagerduty/0", "slack/0"}
			markers := make([]string, 0, n*len(integrations))
			claims := make([]store.Entry, n)
			done := make([]store.Entry, 0, n*len(integrations))
			chargeRedis(b, srv, n, func() {
				seq++
				markers, done = markers[:0], done[:0]
				for i := range n {
					fp := fmt.Sprintf("%04x%012x", run, seq*1000+uint64(i))
					for _, integ := range integrations {
						markers = append(markers, "bench:n:{"+fp+"}:"+integ)
					}
					claims[i] = store.Entry{Key: "bench:c:{" + fp + "}:firing", Value: "c:token", TTL: time.Minute}
				}
				if _, found, err := s.Get(ctx, markers); err != nil || found[0] {
					b.Fatalf("markers read: %v (found %v)", err, found[0])
				}
				won, err := s.SetNX(ctx, claims)
				if err != nil || !won[0] {
					b.Fatalf("claims: %v (won %v)", err, won[0])
				}
				for _, k := range markers {
					done = append(done, store.Entry{Key: k, Value: "page:burn-rate:critical|1796278347239", TTL: 7 * 24 * time.Hour})
				}
				if err := s.Set(ctx, done); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
