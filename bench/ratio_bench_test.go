package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// BenchmarkVsFloor measures each stage as a ratio to the encoding/json
// floor (BenchmarkJSONFloor's decode) of the same payload, interleaved:
// every iteration runs the floor, then the stage, and the reported x-floor
// is the median of the per-iteration ratios. On a shared, noisy machine the
// two halves of one iteration see the same load, so the ratio holds where
// the ns/op of separate benchmarks varies by 2-3x between runs
// (docs/benchmarks.md).
//
//   - decode: webhook.Decode
//   - evaluate: classify, decide, route, incident on the decoded payload
//   - steady: Decode + Process, every alert a dedup hit (in-memory store)
//   - fresh: Decode + Process with new fingerprints every iteration
func BenchmarkVsFloor(b *testing.B) {
	c := corpus(b)
	for _, n := range sizes {
		pl := payload(b, c, n)
		floor := func() {
			var f Floor
			if err := json.Unmarshal(pl.Body, &f); err != nil {
				b.Fatal(err)
			}
		}
		m := decoded(b, c, n)
		steadyP := pipeline(b, store.NewMemory())
		process(b, steadyP, pl.Body)
		freshP := pipeline(b, store.NewMemory())
		var buf []byte
		var seq uint64
		stages := []struct {
			name string
			run  func()
		}{
			{"decode", func() {
				if _, err := webhook.Decode(pl.Body, receivedAt); err != nil {
					b.Fatal(err)
				}
			}},
			{"evaluate", func() { _ = steadyP.Evaluate(m) }},
			{"steady", func() { process(b, steadyP, pl.Body) }},
			{"fresh", func() {
				seq++
				buf = pl.Fresh(buf, 7, seq)
				process(b, freshP, buf)
			}},
		}
		for _, st := range stages {
			b.Run(fmt.Sprintf("%s/alerts=%d", st.name, n), func(b *testing.B) {
				var ratios []float64
				var fl, sg time.Duration
				for b.Loop() {
					t0 := time.Now()
					floor()
					t1 := time.Now()
					st.run()
					t2 := time.Now()
					fl, sg = fl+t1.Sub(t0), sg+t2.Sub(t1)
					ratios = append(ratios, float64(t2.Sub(t1))/float64(max(t1.Sub(t0), 1)))
				}
				slices.Sort(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "x-floor")
				b.ReportMetric(float64(sg)/float64(max(fl, 1)), "x-floor-sum")
				b.ReportMetric(float64(sg.Nanoseconds())/float64(len(ratios)*n), "stage-ns/alert")
			})
		}
	}
}
