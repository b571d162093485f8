package enrich

import "testing"

// The tests of this file pin what a mutation audit changed without a test
// noticing: each says what on-call would see go wrong.

// An embedding (TEI's te_embed_*) generates no tokens: no prefill, no
// decode, no KV cache. An alert on one that also names TTFT — a kpi label,
// or TTFT in its name — must not send on-call to the KV-cache hit rate.
func TestEmbeddingWithTTFTGetsNoKVCacheHint(t *testing.T) {
	expr := `histogram_quantile(0.95, sum by (le) (rate(te_embed_duration_bucket{job="tei"}[5m]))) > 1`
	checkGatewayCases(t, []gatewayCase{
		{"TEI's embedding latency with kpi=TTFT",
			newAlert(kv("alertname", "TEIEmbeddingLatencyHigh", "job", "tei", "kpi", "TTFT"), nil, expr),
			secGPU, "TTFT", ClassLatency, []string{HintQueueTime}, noGPUHints},
		{"TEI's embedding latency named TTFT",
			newAlert(kv("alertname", "TEIEmbeddingTTFTHigh", "job", "tei"), nil, expr),
			secGPU, "E2E", ClassLatency, []string{HintQueueTime}, noGPUHints},
	})
}

// A burn rate of 0 says nothing of how long the budget lasts: the hint
// reads the next window that burns, not "burn rate 0.0 over 1h … lasts
// more than a year" while the 6h window spends the budget in 15 days.
func TestBurnHintSkipsAZeroBurn(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "kpi", "EBR", "burn_rate_1h", "0", "burn_rate_6h", "2"), nil, ""))
	wantHint(t, "burn 0 over 1h, 2 over 6h", cl, HintBurnExemplars,
		[]string{"burn rate 2.0 over 6h", "lasts 15d"}, []string{"over 1h", "more than a year"})
	only := c.Classify(newAlert(kv("alertname", "ErrorBudgetBurn", "kpi", "EBR", "burn_rate_1h", "0"), nil, ""))
	wantHint(t, "burn 0 over 1h only", only, HintBurnExemplars, []string{"exemplars"}, []string{"burn rate 0.0", "more than a year"})
}
