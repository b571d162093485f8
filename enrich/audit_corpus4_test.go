package enrich

import (
	"slices"
	"testing"
)

// The tests of this file follow an audit that wrote alerts on the names
// current data-pipeline, network and SLO-tool exporters export (kminion,
// Burrow, Flink's FLIP-33 source metrics, OpenConfig QoS and optical
// amplifiers through gnmic, telegraf's gNMI input, Solarflare NICs through
// node_exporter, slo-generator). Each alert below is as the audit wrote
// it; before these families each was unknown or lacked its KPI.
func TestCorpus4ExporterFamilies(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	kminion := []string{"job", "kminion", "namespace", "kafka"}
	burrow := []string{"job", "burrow", "namespace", "kafka", "cluster", "prod", "consumer_group", "settlement"}
	flink := []string{"job", "flink", "namespace", "streaming", "job_name", "md-normalizer"}
	gnmic := []string{"job", "gnmic", "source", "ny4-leaf-01", "interface_name", "Ethernet12", "namespace", "trading"}
	optical := []string{"job", "gnmic-optical", "source", "dwdm-nyc-01", "region", "us-east", "site", "nyc-60hudson"}
	sloGen := []string{"job", "slo-generator", "service_name", "md", "feature_name", "feed", "slo_name", "latency", "error_budget_policy_step_name", "1 hour"}
	with := func(base []string, more ...string) []string { return append(slices.Clone(base), more...) }
	for _, tc := range []struct {
		name   string
		labels []string
		anns   []string
		expr   string
		sector string
		kpi    string
		hint   string // a hint the alert must carry, if any
	}{
		{
			name:   "KminionConsumerGroupLagHigh",
			labels: with(kminion, "group_id", "risk-engine", "topic_name", "trades", "severity", "warning"),
			anns:   []string{"summary", "Consumer group risk-engine lags on trades", "description", "lag is 1.2M messages", "consumer_lag", "1.2M"},
			expr:   `sum by (group_id, topic_name) (kminion_kafka_consumer_group_topic_lag) > 100000`,
			sector: "hpc-big-data", kpi: "CLAG", hint: HintSpillLag,
		},
		{
			name:   "KminionPartitionLagHigh",
			labels: with(kminion, "group_id", "risk-engine", "topic_name", "trades", "severity", "warning"),
			anns:   []string{"summary", "Consumer group risk-engine lags on a partition of trades"},
			expr:   `max by (group_id, topic_name, partition_id) (kminion_kafka_consumer_group_topic_partition_lag) > 100000`,
			sector: "hpc-big-data", kpi: "CLAG",
		},
		{
			// Kafka's produce-to-consume round trip: the cluster's health,
			// not an LLM request's end-to-end latency.
			name:   "KminionEndToEndLatencyHigh",
			labels: with(kminion, "severity", "critical"),
			anns:   []string{"summary", "Kafka end-to-end roundtrip slow", "description", "p99 produce-to-consume {{ $value }}s"},
			expr:   `histogram_quantile(0.99, sum by (le) (rate(kminion_end_to_end_roundtrip_latency_seconds_bucket[5m]))) > 1`,
			sector: "hpc-big-data", kpi: "",
		},
		{
			name:   "BurrowConsumerGroupError",
			labels: with(burrow, "severity", "critical"),
			anns:   []string{"summary", "Burrow: settlement consumer in ERR/STOP/STALL", "description", "status {{ $value }}"},
			expr:   `burrow_kafka_consumer_status >= 3`,
			sector: "hpc-big-data", kpi: "",
		},
		{
			// Named so that no alertname word says "lag": the metric alone.
			name:   "BurrowSettlementBehind",
			labels: with(burrow, "severity", "warning"),
			anns:   []string{"description", "total {{ $value }}"},
			expr:   `burrow_kafka_consumer_lag_total > 50000`,
			sector: "hpc-big-data", kpi: "CLAG",
		},
		{
			name:   "BurrowPartitionBehind",
			labels: with(burrow, "severity", "warning", "topic", "trades", "partition", "3"),
			expr:   `max by (consumer_group, topic, partition) (burrow_kafka_consumer_partition_lag) > 10000`,
			sector: "hpc-big-data", kpi: "CLAG",
		},
		{
			// FLIP-33's pendingRecords: the records the source has not
			// fetched yet, a Kafka source's consumer lag.
			name:   "FlinkSourcePendingRecordsHigh",
			labels: with(flink, "severity", "warning"),
			anns:   []string{"summary", "Flink Kafka source falling behind", "description", "1.2M records pending in the source", "consumer_lag", "1.2M"},
			expr:   `max by (job_name) (flink_taskmanager_job_task_operator_pendingRecords) > 1e6`,
			sector: "hpc-big-data", kpi: "CLAG", hint: HintSpillLag,
		},
		{
			// Drops of a queue overrun: congestion, so microburst applies.
			name:   "SwitchQueueDrops",
			labels: with(gnmic, "queue_name", "MD", "severity", "critical"),
			anns:   []string{"summary", "Egress queue drops on market-data port", "description", "{{ $value }} pkts/s dropped in queue MD"},
			expr:   `rate(qos_interfaces_interface_output_queues_queue_state_dropped_pkts[1m]) > 0`,
			sector: "llm-inference-network", kpi: "LOSS", hint: HintMicroburst,
		},
		{
			name:   "TelegrafGnmiIfInDiscards",
			labels: []string{"job", "telegraf", "source", "ld4-spine-02", "name", "Ethernet3/1", "severity", "warning"},
			anns:   []string{"summary", "Input discards on ld4-spine-02 Ethernet3/1", "description", "{{ $value }} discards/s"},
			expr:   `rate(ifcounters_in_discards[1m]) > 0`,
			sector: "llm-inference-network", kpi: "LOSS",
		},
		{
			name:   "SolarflareRxNoDescDrops",
			labels: []string{"job", "node", "instance", "ny4-fh-03:9100", "device", "ens2f0", "severity", "critical"},
			anns:   []string{"summary", "Solarflare NIC drops packets (no RX descriptor)", "description", "{{ $value }} drops/s: the Onload stack is not polling fast enough"},
			expr:   `rate(node_ethtool_rx_nodesc_drop_cnt{device="ens2f0"}[1m]) > 0`,
			sector: "llm-inference-network", kpi: "LOSS", hint: HintMicroburst,
		},
		{
			// EF10 adapters spell the same counter port_rx_nodesc_drops.
			name:   "SolarflareNoDescDrops",
			labels: []string{"job", "node", "instance", "ny4-fh-04:9100", "device", "ens1f0", "severity", "critical"},
			expr:   `rate(node_ethtool_port_rx_nodesc_drops{device="ens1f0"}[1m]) > 0`,
			sector: "llm-inference-network", kpi: "LOSS",
		},
		{
			name:   "AmplifierInputPowerLow",
			labels: with(optical, "name", "AMP-1-1", "severity", "critical"),
			anns:   []string{"summary", "EDFA input power low: span loss or cut", "description", "input {{ $value }} dBm"},
			expr:   `optical_amplifier_amplifiers_amplifier_state_input_power_total_instant < -25`,
			sector: "hpc-dark-fiber", kpi: "", hint: HintOpticalHealth,
		},
		{
			name:   "AmplifierOutputPowerLow",
			labels: with(optical, "name", "AMP-1-1", "severity", "critical"),
			expr:   `optical_amplifier_amplifiers_amplifier_state_output_power_total_instant < 0`,
			sector: "hpc-dark-fiber", kpi: "", hint: HintOpticalHealth,
		},
		{
			// slo-generator's SLI against its target: SLO tooling. Which
			// SLI (availability or latency) the metric does not say.
			name:   "SloGeneratorSLIBelowTarget",
			labels: with(sloGen, "severity", "warning"),
			anns:   []string{"summary", "md/feed latency SLI below target"},
			expr:   `sli_measurement < slo_target`,
			sector: "slo-monitoring", kpi: "",
		},
	} {
		lbls := kv(append([]string{"alertname", tc.name}, tc.labels...)...)
		cl := c.Classify(newAlert(lbls, kv(tc.anns...), tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s (%s): %s, want %s %q", tc.name, tc.expr, describe(cl), tc.sector, tc.kpi)
			continue
		}
		if tc.hint != "" && !slices.Contains(hintIDs(cl), tc.hint) {
			t.Errorf("%s (%s): hints %v, want %s", tc.name, tc.expr, hintIDs(cl), tc.hint)
		}
	}
}

// The new families leave the names around them as they were: gnmic's
// interface error counters stay corruption (no microburst hint), a
// transceiver's laser bias stays unknown (every switch port has one), the
// other Flink operator metrics name big data without KPI, and the linkedin
// kafka exporter's kafka_burrow_… names stay Kafka's.
func TestCorpus4NeighboursUnchanged(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, tc := range []struct{ expr, sector, kpi string }{
		{`rate(interfaces_interface_state_counters_in_errors[1m]) > 0`, "llm-inference-network", "LOSS"},
		{`flink_taskmanager_job_task_operator_numRecordsInPerSecond < 1`, "hpc-big-data", ""},
		{`delta(kafka_burrow_partition_current_offset[1m]) < 0`, "hpc-big-data", ""},
	} {
		cl := c.Classify(newAlert(kv("alertname", "Check", "severity", "warning"), nil, tc.expr))
		if cl.Sector != tc.sector || kpiOf(cl) != tc.kpi {
			t.Errorf("%s: %s, want %s %q", tc.expr, describe(cl), tc.sector, tc.kpi)
		}
	}
	cl := c.Classify(newAlert(kv("alertname", "Check", "severity", "warning"), nil,
		`components_component_transceiver_physical_channels_channel_state_laser_bias_current_instant > 100`))
	if cl.Sector != "unknown" {
		t.Errorf("transceiver laser bias: %s, want unknown", describe(cl))
	}
	cl = c.Classify(newAlert(kv("alertname", "Check", "severity", "warning"), nil,
		`rate(interfaces_interface_state_counters_in_errors[1m]) > 0`))
	if slices.Contains(hintIDs(cl), HintMicroburst) {
		t.Errorf("gnmic in_errors: hints %v, want no microburst (a corrupt-frame counter)", hintIDs(cl))
	}
}
