package enrich

import (
	"slices"
	"testing"
)

// The tests of this file follow an audit that fired public rules of the
// product's own sectors at the router: Debezium's change-data-capture lag
// and ntpd-rs' clock offsets were classified unknown with no signal.

// Debezium's lag behind its source database (the JMX exporter's name, as
// Debezium writes it or lower-cased) is consumer lag of a data pipeline.
func TestDebeziumLagIsPipelineConsumerLag(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	for _, expr := range []string{
		`debezium_metrics_MilliSecondsBehindSource{context="streaming"} > 30000`,
		`max(debezium_metrics_millisecondsbehindsource{namespace="kafka"}) > 600000`,
	} {
		cl := c.Classify(newAlert(kv("alertname", "DebeziumHighLag", "severity", "warning"), nil, expr))
		if cl.Sector != "hpc-big-data" || kpiOf(cl) != "CLAG" {
			t.Errorf("%s: %s, want hpc-big-data CLAG", expr, describe(cl))
		}
	}
	cl := c.Classify(newAlert(kv("alertname", "DebeziumErrors", "severity", "warning"), nil, `increase(debezium_metrics_NumberOfErroneousEvents[5m]) > 0`))
	if cl.Sector != "hpc-big-data" || kpiOf(cl) != "" {
		t.Errorf("Debezium errors: %s, want hpc-big-data without KPI", describe(cl))
	}
}

// ntpd-rs' offsets are clock sync, as chrony's: the sectors that time
// one-way delay are candidates, none is chosen and no KPI claimed.
func TestNtpdRsOffsetIsClockSync(t *testing.T) {
	c := newClassifier(t, DefaultConfig())
	cl := c.Classify(newAlert(kv("alertname", "HighNTPOffset", "severity", "warning"), nil, `abs(ntp_source_offset_seconds) > 0.05`))
	if kpiOf(cl) != "" || !slices.Contains(cl.Candidates, "hft-low-latency-exec") {
		t.Errorf("ntpd-rs offset: %s, want no KPI and hft-low-latency-exec among the candidates", describe(cl))
	}
}
