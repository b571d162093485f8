package enrich

import "testing"

// The tests of this file follow an audit that wrote alerts on the names
// trading, quant-research and CDN stacks export: each below was unknown,
// and an unknown sector's regression is judged at medium sensitivity — a
// 1.25× order-latency or CDN-origin regression a ticket where its sector
// (high) pages, a feature store's 1.35× lag a page where quant research
// (low) tickets.
func TestCorpus6TradingQuantAndCDNNames(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct {
		name, expr string
		anns       []string
		sector     string
		kpi        string
	}{
		{"FIXOrderAckLatencyHigh", `histogram_quantile(0.99, sum by (le, session) (rate(fix_exec_report_latency_seconds_bucket[5m]))) > 0.002`,
			[]string{"summary", "p99 order ack latency 4.1ms on XNYS-OUCH-01", "description", "p99 NewOrderSingle -> first ExecutionReport latency on session XNYS-OUCH-01 is 4.1ms (limit 2ms)."}, secExec, "OLAT"},
		{"DropCopySessionDown", `fix_session_connected{session=~".*DROPCOPY.*"} == 0`,
			[]string{"summary", "Drop copy session XNYS-DROPCOPY down"}, secExec, ""},
		{"TickToTradeLatencyHigh", `histogram_quantile(0.99, sum by (le) (rate(bog_performance_tick_to_trade_latency_ns_bucket[1m]))) > 20000`,
			[]string{"summary", "Tick-to-trade p99 20us exceeded"}, secBare, "W2W"},
		{"TradingVMvCPUDelayHigh", `sum by (domain) (rate(libvirt_domain_vcpu_delay_seconds_total[5m])) > 0.05`, nil, secVM, "RDY"},
		{"PCMLLCMissesPerKiloInstruction", `sum(rate(L3_Cache_Misses{source="core",core="3"}[1m])) / sum(rate(Instructions_Retired_Any{source="core",core="3"}[1m])) * 1000 > 5`, nil, secBare, "MPKI"},
		{"FeastStaleFeaturesServed", `sum by (project, feature_name) (rate(feast_serving_stale_feature_count[5m])) > 0`, nil, secQuant, "FFL"},
		{"FeastServingLatencyHigh", `histogram_quantile(0.99, sum by (le, method) (rate(feast_serving_request_latency_seconds_bucket[5m]))) > 0.05`, nil, secQuant, ""},
		{"FeaturesDrift", `evidently:data_drift:n_drifted_features > 0`, nil, secQuant, "TSS"},
		{"FastlyCacheHitRatioLow", `sum(rate(fastly_rt_hits_total[5m])) / (sum(rate(fastly_rt_hits_total[5m])) + sum(rate(fastly_rt_miss_total[5m]))) < 0.8`, nil, secCDN, "CHR"},
		{"FastlyOriginOffloadLow", `1 - sum(rate(fastly_rt_origin_fetches_total[5m])) / sum(rate(fastly_rt_requests_total[5m])) < 0.9`, nil, secCDN, "OOR"},
		{"FastlyMissLatencyHigh", `histogram_quantile(0.99, sum by (le) (rate(fastly_rt_miss_duration_seconds_bucket[5m]))) > 0.5`, nil, secCDN, "OTTFB"},
		{"CloudFrontOriginLatencyHigh", `aws_cloudfront_origin_latency_average > 300`, nil, secCDN, "OTTFB"},
	} {
		cl := c.Classify(newAlert(kv("alertname", tc.name, "severity", "warning"), kv(tc.anns...), tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s (%s): %s, want %s %q", tc.name, tc.expr, describe(cl), tc.sector, tc.kpi)
		}
	}
	// A shop's order service acks orders too: "order ack" alone names no
	// trading venue (a review: its 1.25× regression paged at the trading
	// sector's high sensitivity).
	for _, name := range []string{"OrderAckLatencyHigh", "OrderAckTimeout"} {
		cl := c.Classify(newAlert(kv("alertname", name, "severity", "warning", "job", "order-service", "namespace", "shop"),
			kv("summary", "Order ack latency above 2s"), `histogram_quantile(0.99, sum by (le) (rate(order_ack_duration_seconds_bucket[5m]))) > 2`))
		if cl.Sector == secExec {
			t.Errorf("%s of a shop: %s, want no trading sector", name, describe(cl))
		}
	}
}

// Two sectors 0.05 apart are tied (docs/classification.md: "within
// 0.05"): an alertname word (0.4) against a metric family (0.35) differs
// by 0.05000000000000002 in floating point, and the word won — an Envoy
// gateway's upstream error rate on gen_ai.server.* read as the prompt-cache
// load balancer's (an audit). Tied, it stays unknown with both candidates.
// (Audit GATEWAYS2: with an external provider's name, gen_ai_provider_name="anthropic",
// the same ratio is the API's error rate; see gateways_test.go.)
func TestAGapOfExactlyTheTieMarginIsATie(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	expr := `sum (rate(gen_ai_server_request_duration_seconds_count{job="envoy-ai-gateway",error_type!=""}[5m])) / sum (rate(gen_ai_server_request_duration_seconds_count{job="envoy-ai-gateway"}[5m])) > 0.05`
	cl := c.Classify(newAlert(kv("alertname", "EnvoyUpstreamErrorRate", "severity", "critical"),
		kv("summary", "7% of upstream requests fail"), expr))
	if cl.Sector != "unknown" || len(cl.Candidates) != 2 {
		t.Errorf("%s, candidates %v; want a tie between the Envoy word and the gen_ai family", describe(cl), cl.Candidates)
	}
	cl = c.Classify(newAlert(kv("alertname", "EnvoyAIGatewayUpstreamErrorRate", "severity", "critical", "gen_ai_provider_name", "anthropic"),
		kv("summary", "7% of AI gateway requests to anthropic fail"), expr))
	if cl.Sector != secAPI || kpiOf(cl) != "ERR" {
		t.Errorf("the gateway's error rate of anthropic: %s, want llm-inference-api ERR", describe(cl))
	}
}
