package enrich

import (
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The tests of this file follow audit F, which fired 193 alerts of public
// rule files the corpus had not seen at the router. Its alerts with a
// citable source are in testdata/corpus (grafana-snmp-observ-lib,
// grafana-redis-enterprise-mixin, apa-grafana-mimir-audit-f, apa-cortex,
// apa-grafana-tempo, apa-promtail, grafana-presto-mixin-rules,
// grafana-clickhouse-mixin-rules, apa-clickhouse, apa-blackbox-alerts …);
// the SFP alert comes from an exporter README the index does not name, so
// it is written out here.

// An SFP, a transceiver or optics is on every switch port: the word alone
// is not a DWDM span, and with the dark-fiber sector's high sensitivity it
// turned a regression ticket into a page.
func TestSFPAloneIsNotDarkFiber(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	eng, err := policies.New(policies.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	sfp := newAlert(kv("alertname", "SFPHighTemperature", "job", "switchos", "instance", "10.0.3.17:9100", "severity", "warning"),
		kv("summary", "SFP module temperature high on", "baseline_ratio", "1.22"), `switchos_sfp_temperature_celsius > 70`)
	cl := c.Classify(sfp)
	if cl.Sector != alert.Unknown || hasAnyHint(cl, HintOpticalHealth) {
		t.Errorf("SFPHighTemperature: %s, want unknown without optical-health", describe(cl))
	}
	if d := eng.Decide(sfp, &cl, now); d.Action == alert.ActionPage {
		t.Errorf("SFPHighTemperature with baseline_ratio 1.22 pages (%v): a warning of unknown sector is a ticket", d.Reasons)
	}
	for _, name := range []string{"TransceiverMissing", "OpticsModuleRemoved", "SFPNotPresent"} {
		if cl := c.Classify(newAlert(kv("alertname", name, "severity", "warning"), nil, "")); cl.Sector != alert.Unknown {
			t.Errorf("%s: %s, want unknown", name, describe(cl))
		}
	}
	// Optical evidence still makes the same words dark fiber.
	for _, tc := range []struct{ name, expr string }{
		{"SFPRxPowerLow", `switchos_sfp_rx_power_dbm < -14`},
		{"TransceiverPreFECBERHigh", `transceiver_pre_fec_ber > 1e-5`},
		{"OpticsRxLow", `junos_interface_diagnostics_laser_rx_dbm < -18`},
	} {
		if cl := c.Classify(newAlert(kv("alertname", tc.name), nil, tc.expr)); cl.Sector != "hpc-dark-fiber" {
			t.Errorf("%s: %s, want hpc-dark-fiber", tc.name, describe(cl))
		}
	}
	if cl := c.Classify(newAlert(kv("alertname", "SFPOpticalPowerLow"), nil, "")); cl.Sector != "hpc-dark-fiber" {
		t.Errorf("SFPOpticalPowerLow: %s, want hpc-dark-fiber (\"optical\" agrees)", describe(cl))
	}
}

// snmp_exporter's own scrape metrics are monitoring, as its
// snmp_scrape_duration_seconds already was.
func TestSNMPExporterSelfHealthIsMonitoring(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, name := range []string{"SNMPExporterEmptyResponse", "SNMPExporterSlowScrape"} {
		cl := c.Classify(corpusAlerts(t, "grafana-snmp-observ-lib.json", name)[0])
		if cl.Sector != "slo-monitoring" || kpiOf(cl) != "UP" {
			t.Errorf("%s: %s, want slo-monitoring/UP", name, describe(cl))
		}
	}
	// The devices it scrapes stay the network.
	cl := c.Classify(corpusAlerts(t, "grafana-snmp-observ-lib.json", "SNMPInterfaceDrops")[0])
	if cl.Sector != "llm-inference-network" {
		t.Errorf("SNMPInterfaceDrops: %s, want llm-inference-network", describe(cl))
	}
}

// Interface error counters (CRC, alignment, symbol errors) are a bad cable,
// optic or port: packet loss, but not the congestion microburst depth and
// ECN/PFC counters explain. Discards and drops are.
func TestErrorCountersGetNoMicroburstHint(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct {
		file, name string
		microburst bool
	}{
		{"grafana-snmp-observ-lib.json", "SNMPInterfaceErrors", false},
		{"apa-snmp.json", "SnmpInterfaceHighInboundErrorRate", false},
		{"apa-node.json", "HostNetworkReceiveErrors", false},
		{"apa-node.json", "HostNetworkTransmitErrors", false},
		{"kp-node-exporter.json", "NodeNetworkReceiveErrs", false},
		{"grafana-snmp-observ-lib.json", "SNMPInterfaceDrops", true},
	} {
		cl := c.Classify(corpusAlerts(t, tc.file, tc.name)[0])
		if kpiOf(cl) != "LOSS" || hasAnyHint(cl, HintMicroburst) != tc.microburst {
			t.Errorf("%s: %s, want LOSS with microburst=%v", tc.name, describe(cl), tc.microburst)
		}
	}
	for _, tc := range []struct {
		name, expr string
		microburst bool
	}{
		{"errors and discards", `rate(ifInErrors[5m]) + rate(ifInDiscards[5m]) > 0`, true},
		{"InfiniBand symbol errors", `rate(node_infiniband_symbol_error_total[5m]) > 0`, false},
		{"receive drops", `rate(node_network_receive_drop_total[5m]) > 0`, true},
	} {
		cl := c.Classify(newAlert(kv("alertname", "PortProblem"), nil, tc.expr))
		if kpiOf(cl) != "LOSS" || hasAnyHint(cl, HintMicroburst) != tc.microburst {
			t.Errorf("%s: %s, want LOSS with microburst=%v", tc.name, describe(cl), tc.microburst)
		}
	}
	// A kpi label or a specific number still brings it.
	if cl := c.Classify(newAlert(kv("alertname", "X", "kpi", "LOSS"), nil, `rate(ifInErrors[5m]) > 0`)); !hasAnyHint(cl, HintMicroburst) {
		t.Errorf("kpi=LOSS: %s, want microburst", describe(cl))
	}
}

// A Redis or Memcached cache KPI (prompt-cache storage by the catalog's
// reading) gets no kv-cache hint — prefix-cache recompute and TTFT —
// unless something says the cache serves an LLM.
func TestKVCacheHintNeedsPromptCacheEvidence(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct{ file, name string }{
		{"grafana-redis-enterprise-mixin.json", "RedisEnterpriseKeyEvictionsIncreasing"},
		{"drdroid-redis-alerts.json", "RedisKeyEvictions"},
		{"drdroid-redis-alerts.json", "RedisLowHitRate"},
		{"apa-memcached.json", "MemcachedHighEvictionRate"},
		{"redis-exporter-mixin.json", "RedisOutOfMemory"},
	} {
		cl := c.Classify(corpusAlerts(t, tc.file, tc.name)[0])
		if cl.Sector != "llm-prompt-cache-storage" || kpiOf(cl) == "" || hasAnyHint(cl, HintKVCache) {
			t.Errorf("%s: %s, want prompt-cache storage with a KPI, without kv-cache", tc.name, describe(cl))
		}
	}
	for _, tc := range []struct {
		name string
		a    *alert.Alert
	}{
		{"vLLM's KV cache usage", newAlert(kv("alertname", "VLLMKVCacheAlmostFull"), nil, `vllm:gpu_cache_usage_perc > 0.95`)},
		{"LMCache's Redis evictions", newAlert(kv("alertname", "LMCacheRedisEvictions"), nil, `rate(redis_evicted_keys_total[5m]) > 10`)},
		{"a kpi label", newAlert(kv("alertname", "RedisEvictions", "kpi", "EVR"), nil, `rate(redis_evicted_keys_total[5m]) > 10`)},
		{"the KV cache in the alertname", newAlert(kv("alertname", "KVCacheRedisEvictionsHigh"), nil, `rate(redis_evicted_keys_total[5m]) > 10`)},
	} {
		cl := c.Classify(tc.a)
		if cl.Sector != "llm-prompt-cache-storage" || !hasAnyHint(cl, HintKVCache) {
			t.Errorf("%s: %s, want prompt-cache storage with kv-cache", tc.name, describe(cl))
		}
	}
}

// "Alert on percentiles, not averages" is about latency: an average CPU or
// memory utilisation has no latency tail to hide, whatever the sector's
// sensitivity.
func TestPercentilesHintIsForLatencyOnly(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct{ file, name string }{
		{"grafana-snmp-observ-lib.json", "SNMPNodeCPUHighUsage"},
		{"grafana-snmp-observ-lib.json", "SNMPNodeMemoryUtilization"},
		{"apa-vmware.json", "VirtualMachineMemoryWarning"},
		{"apa-node.json", "HostCpuStealNoisyNeighbor"},
	} {
		cl := c.Classify(corpusAlerts(t, tc.file, tc.name)[0])
		if cl.Sector == alert.Unknown || hasAnyHint(cl, HintPercentiles) {
			t.Errorf("%s: %s, want a sector without percentiles-not-averages", tc.name, describe(cl))
		}
	}
	for _, tc := range []struct {
		name string
		a    *alert.Alert
	}{
		{"Redis Enterprise's average latency (no KPI, class latency)",
			corpusAlerts(t, "grafana-redis-enterprise-mixin.json", "RedisEnterpriseAverageLatencyIncreasing")[0]},
		{"an average OWD of the network (a latency KPI)",
			newAlert(kv("alertname", "FabricOneWayDelayHigh", "kpi", "OWD", "sector", "llm-inference-network"), nil, `avg_over_time(fabric_owd_seconds[5m]) > 0.001`)},
	} {
		if cl := c.Classify(tc.a); !hasAnyHint(cl, HintPercentiles) {
			t.Errorf("%s: %s, want percentiles-not-averages", tc.name, describe(cl))
		}
	}
}

// The monitoring stack (Mimir, Cortex, Tempo, Promtail, blackbox_exporter's
// own health) is monitoring; Presto and ClickHouse are big data. Read from
// their metric prefixes or names that are no English word; their queues
// are not LLM queue time.
func TestMonitoringStackAndSQLEnginesCoverage(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct{ file, name, sector string }{
		{"apa-grafana-mimir-audit-f.json", "MimirIngesterUnhealthy", "slo-monitoring"},
		{"apa-grafana-mimir-audit-f.json", "MimirSchedulerQueriesStuck", "slo-monitoring"},
		{"apa-grafana-mimir-audit-f.json", "MimirMemoryMapAreasTooHigh", "slo-monitoring"},
		{"apa-cortex.json", "CortexRulerConfigurationReloadFailure", "slo-monitoring"},
		{"apa-grafana-tempo.json", "TempoCompactionsFailing", "slo-monitoring"},
		{"apa-grafana-tempo.json", "TempoDistributorUnhealthy", "slo-monitoring"},
		{"apa-promtail.json", "PromtailRequestLatency", "slo-monitoring"},
		{"apa-blackbox-alerts.json", "BlackboxConfigurationReloadFailure", "slo-monitoring"},
		{"grafana-presto-mixin-rules.json", "PrestoHighQueuedTaskCount", "hpc-big-data"},
		{"grafana-presto-mixin-rules.json", "PrestoHighFailedQueriesCritical", "hpc-big-data"},
		{"grafana-clickhouse-mixin-rules.json", "ClickHouseReplicationQueueBackingUp", "hpc-big-data"},
		{"apa-clickhouse.json", "ClickhouseNodeDown", "hpc-big-data"},
	} {
		cl := c.Classify(corpusAlerts(t, tc.file, tc.name)[0])
		if cl.Sector != tc.sector || len(cl.KPIs) != 0 || hasAnyHint(cl, HintQueueTime) {
			t.Errorf("%s: %s, want %s without KPI or queue-time", tc.name, describe(cl), tc.sector)
		}
	}
	// Ordinary words alone name nothing; blackbox probes are the target's.
	for _, tc := range []struct {
		name string
		a    *alert.Alert
	}{
		{"Cortex XDR", newAlert(kv("alertname", "CortexXDRAgentOffline"), nil, `xdr_agent_up == 0`)},
		{"a tempo", newAlert(kv("alertname", "PlaybackTempoDrift"), nil, `player_tempo_drift_ratio > 0.1`)},
		{"presto", newAlert(kv("alertname", "PrestoCheckoutSlow"), nil, `checkout_latency_seconds > 2`)},
		{"a blackbox probe", corpusAlerts(t, "apa-blackbox-alerts.json", "BlackboxProbeFailed")[0]},
		{"Juniper (vendor gear the catalog does not name)", corpusAlerts(t, "apa-juniper-rules.json", "JuniperSwitchDown")[0]},
	} {
		if cl := c.Classify(tc.a); cl.Sector != alert.Unknown {
			t.Errorf("%s: %s, want unknown", tc.name, describe(cl))
		}
	}
}

// Review R1 (B1): a general-purpose store's word ("Redis": prompt-cache
// storage, Store) and a word that says the cache serves an LLM ("LMCache",
// the same target) are one piece of evidence, and the word that says more
// holds it whichever comes first: the kv-cache hint does not depend on
// the order of the words.
func TestKVCacheHintWordOrder(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	expr := `rate(redis_evicted_keys_total[5m]) > 10`
	lmFirst := c.Classify(newAlert(kv("alertname", "LMCacheRedisEvictions"), nil, expr))
	for _, tc := range []struct {
		name string
		a    *alert.Alert
	}{
		{"LMCache before Redis", newAlert(kv("alertname", "LMCacheRedisEvictions"), nil, expr)},
		{"Redis before LMCache", newAlert(kv("alertname", "RedisLMCacheEvictions"), nil, expr)},
		{"a summary naming LMCache after Redis", newAlert(kv("alertname", "CacheEvictions"), kv("summary", "Redis evictions on the LMCache backend"), expr)},
	} {
		cl := c.Classify(tc.a)
		if cl.Sector != "llm-prompt-cache-storage" || !hasAnyHint(cl, HintKVCache) {
			t.Errorf("%s: %s, want prompt-cache storage with kv-cache", tc.name, describe(cl))
		}
	}
	// One piece of evidence either way, with the same score.
	rlFirst := c.Classify(newAlert(kv("alertname", "RedisLMCacheEvictions"), nil, expr))
	if lmFirst.Confidence != rlFirst.Confidence || signalText(lmFirst.Signals) != signalText(rlFirst.Signals) {
		t.Errorf("word order changed the evidence:\nLMCacheRedisEvictions: %s\nRedisLMCacheEvictions: %s", describe(lmFirst), describe(rlFirst))
	}
	// Redis alone still gets no kv-cache hint.
	if cl := c.Classify(newAlert(kv("alertname", "RedisEvictions"), kv("summary", "Redis evictions on the cache backend"), expr)); hasAnyHint(cl, HintKVCache) {
		t.Errorf("Redis alone: %s, want no kv-cache", describe(cl))
	}
}

// Review R1 (D1): the …_scrape_duration_seconds family is any exporter's
// own scrape (ipmi_exporter's ipmi_scrape_duration_seconds);
// snmp_exporter's is snmp_scrape_…'s, which prefixes match first.
func TestScrapeDurationFamilies(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	ipmi, _, ok := c.matchMetric("ipmi_scrape_duration_seconds")
	generic, _, _ := c.families[1].matchPattern("x_scrape_duration_seconds")
	if !ok || ipmi != generic || sectors[ipmi.sector].ID != "slo-monitoring" || ipmi.kpi != "UP" {
		t.Errorf("ipmi_scrape_duration_seconds: %+v, want the …_scrape_duration_seconds family (slo-monitoring/UP)", ipmi)
	}
	var snmpSelf family
	for _, f := range exporterFamilies {
		if f.Prefix == "snmp_scrape_" {
			snmpSelf = f
		}
	}
	for _, f := range exporterFamilies {
		if f.Contains == "_scrape_duration_seconds" && (f.Source == snmpSelf.Source || strings.Contains(f.Source, "snmp")) {
			t.Errorf("the …_scrape_duration_seconds family names snmp_exporter, whose metric snmp_scrape_… matches: %q", f.Source)
		}
	}
}

// An alert on the KV cache's occupancy (vLLM's KV cache usage near full)
// gets the kv-cache hint in its occupancy wording — preemptions first —
// instead of one about a falling hit rate the alert does not show; an
// alert on the hit rate keeps the hit-rate wording.
func TestKVCacheHintOfAFullCacheSpeaksOfPreemptions(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	hint := func(a *alert.Alert) string {
		for _, h := range c.Classify(a).Hints {
			if h.ID == HintKVCache {
				return h.Text
			}
		}
		return ""
	}
	full := newAlert(kv("alertname", "VllmKvCacheNearFull"), nil, `avg_over_time(vllm:kv_cache_usage_perc[5m]) > 0.95`)
	if got := hint(full); !strings.Contains(got, "preemptions") {
		t.Errorf("KV cache usage near full: kv-cache hint %q, want the occupancy wording (preemptions)", got)
	}
	hit := newAlert(kv("alertname", "PrefixCacheHitRateLow"), nil, `vllm:gpu_prefix_cache_hit_rate < 0.3`)
	if got := hint(hit); got == "" || strings.Contains(got, "preemptions") {
		t.Errorf("prefix cache hit rate low: kv-cache hint %q, want the hit-rate wording", got)
	}
}
