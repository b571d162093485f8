package policies

import (
	"strconv"
	"strings"
)

// The inputs that say which way a KPI regresses.
const (
	labelRegressionDirection = "regression_direction"
	labelKPI                 = "kpi"
)

// The values of regression_direction (case, "-" and spaces do not matter:
// lower-is-worse, Lower Is Worse).
const (
	directionLowerIsWorse  = "lower_is_worse"
	directionHigherIsWorse = "higher_is_worse"
)

// regressionDirection is which way an alert's KPI regresses, and how that
// is known.
type regressionDirection struct {
	lower bool   // true: lower is worse (throughput, hit rate …)
	known bool   // said by the alert (regression_direction, its kpi); false: unknown, or guessed from the classification
	text  string // e.g. "lower is worse (kpi label \"goodput\")"
	// shortfall names 1 − value of a KPI that is a share of good events,
	// bounded by 1 ("unavailability" of AVAIL), "" for other KPIs: see
	// boundedKPIs.
	shortfall string
}

// boundedKPIs are the lower-is-worse KPIs of knownKPIDirections that are
// shares of good events, bounded by 1 and normally close to it
// (availability, success rate, apdex), by kpiKey, with the name of their
// shortfall from 1. Their regression is the rise of that shortfall:
// 0.95 against 0.9999 is 500 times the unavailability, though 0.95 ÷
// 0.9999 is 0.95x (decideRegression). Hit rates and accuracies are not
// near 1 by nature and keep value ÷ baseline.
var boundedKPIs = map[string]string{
	"avail": "unavailability", "availability": "unavailability",
	"sliav": "unavailability", "availabilitysli": "unavailability",
	"up": "unavailability", "targetupscrapehealth": "unavailability",
	"successrate": "failure rate", "successratio": "failure rate",
	"apdex": "apdex shortfall",
}

// kpiDirection is one row of the known-KPI table: a KPI of the catalog (its
// acronym and expansion, as enrich's catalog spells them) or a common KPI
// name, and whether lower is worse.
type kpiDirection struct {
	id, name string
	lower    bool
}

// knownKPIDirections says which way the KPIs of the catalog (enrich's
// catalog.go) and common KPI names regress. The catalog's latency SLI
// (SLI-LAT) is left out: it is a duration or a share of fast requests
// depending on the rule.
var knownKPIDirections = []kpiDirection{
	// Lower is worse: throughputs, hit rates, utilizations of a resource
	// one wants used, margins, accuracies, availabilities.
	{"ITPS", "ingest throughput", true},
	{"PCHR", "prefix-cache hit rate", true},
	{"CTR", "cached-token ratio", true},
	{"TTFTR", "TTFT reduction from caching", true},
	{"CHR", "cache hit ratio", true},
	{"RCHR", "per-route cache hit rate", true},
	{"UDR", "unique-data ratio", true},
	{"MFU", "model FLOPs utilization", true},
	{"TPS", "tokens/s", true},
	{"RACC", "reward/preference accuracy", true},
	{"RMAR", "chosen-vs-rejected reward margin", true},
	{"OOR", "origin offload ratio", true},
	{"AVAIL", "availability", true},
	{"OSNRM", "OSNR margin", true},
	{"SLI-AV", "availability SLI", true},
	{"UP", "target up / scrape health", true},
	{"", "throughput", true},
	{"", "goodput", true},
	{"", "tokens per second", true},
	{"", "tokens_per_second", true},
	{"", "token throughput", true},
	{"", "hit rate", true},
	{"", "hit ratio", true},
	{"", "cache hit rate", true},
	{"", "prefix cache hit ratio", true},
	{"", "bandwidth", true},
	{"", "uptime", true},
	{"", "success rate", true},
	{"", "success ratio", true},
	{"", "apdex", true},
	{"", "accuracy", true},
	// Higher is worse: latencies, error and loss rates, queues, lags,
	// durations, misses.
	{"TTFT", "time to first token", false},
	{"ITL", "inter-token latency", false},
	{"TPOT", "time per output token", false},
	{"E2E", "end-to-end request latency", false},
	{"QTS", "request queue time", false},
	{"P95 LAT", "p95 latency", false},
	{"ERR", "error rate", false},
	{"429R", "HTTP 429 rate", false},
	{"UST", "upstream service time", false},
	{"OWD", "one-way delay", false},
	{"PDV", "packet delay variation (jitter)", false},
	{"LOSS", "packet loss", false},
	{"ECN", "ECN mark rate", false},
	{"RCR", "re-compute ratio", false},
	{"CLAT", "cache latency", false},
	{"COCC", "cache occupancy", false},
	{"EVR", "eviction rate", false},
	{"LQ", "load-balancer queue (active + pending requests)", false},
	{"URT", "upstream response time", false},
	{"RTR", "retry rate", false},
	{"DHR", "duplicate hit rate", false},
	{"CONT", "contamination rate", false},
	{"STEP", "step time", false},
	{"A2AS", "all-to-all/dispatch share of step", false},
	{"EIR", "expert imbalance ratio", false},
	{"RDY", "CPU ready time", false},
	{"CSTP", "CPU co-stop", false},
	{"NUMA MISS", "NUMA miss ratio", false},
	{"T2D", "tick-to-decision latency", false},
	{"W2W", "wire-to-wire latency", false},
	{"JITR", "p99/p999 jitter", false},
	{"CPM", "cycles per message", false},
	{"MPKI", "LLC misses per kilo-instruction", false},
	{"TTFB", "time to first byte", false},
	{"OTTFB", "origin TTFB", false},
	{"JIT", "jitter", false},
	{"FLAT", "feed latency", false},
	{"OLAT", "order latency", false},
	{"Pre-FEC BER", "pre-FEC bit error rate", false},
	{"BTT", "backtest wall-clock time", false},
	{"TSS", "training-serving skew", false},
	{"FFL", "feature freshness lag", false},
	{"JDUR", "job duration", false},
	{"SKR", "task skew ratio", false},
	{"SPILL", "shuffle spill bytes", false},
	{"CLAG", "consumer lag", false},
	{"EBR", "error-budget burn rate", false},
	{"", "latency", false},
	{"", "duration", false},
	{"", "errors", false},
	{"", "miss rate", false},
	{"", "miss ratio", false},
	{"", "lag", false},
}

// kpiLowerIsWorse maps the normalized acronyms and names of
// knownKPIDirections to their direction.
var kpiLowerIsWorse = func() map[string]bool {
	m := make(map[string]bool, 2*len(knownKPIDirections))
	for _, k := range knownKPIDirections {
		if k.id != "" {
			m[kpiKey(k.id)] = k.lower
		}
		m[kpiKey(k.name)] = k.lower
	}
	return m
}()

// kpiKey normalizes a KPI acronym or name: lower case, letters and digits
// only ("Pre-FEC BER" → "prefecber", "tokens/s" → "tokenss").
func kpiKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// direction says which way the alert's KPI regresses: the
// regression_direction label or annotation, else the kpi label or
// annotation, else the classification's primary KPI, looked up in the
// known-KPI table; else higher is worse, as a default that is not known.
func (e *Engine) direction(st *decision) regressionDirection {
	if raw, src, ok := lookup(st.a, labelRegressionDirection); ok {
		v := strings.ToLower(strings.TrimSpace(raw))
		v = strings.NewReplacer("-", "_", " ", "_").Replace(v)
		switch v {
		case directionLowerIsWorse:
			return regressionDirection{lower: true, known: true, text: "lower is worse (regression_direction " + src + ")"}
		case directionHigherIsWorse:
			return regressionDirection{known: true, text: "higher is worse (regression_direction " + src + ")"}
		}
		st.note("regression_direction %s %q ignored: want %s or %s", src, raw, directionLowerIsWorse, directionHigherIsWorse)
	}
	if raw, src, ok := lookup(st.a, labelKPI); ok {
		if lower, known := kpiLowerIsWorse[kpiKey(raw)]; known {
			return regressionDirection{lower: lower, known: true, shortfall: boundedKPIs[kpiKey(raw)],
				text: directionWord(lower) + " (kpi " + src + " " + strconv.Quote(raw) + ")"}
		}
	}
	if st.c != nil && len(st.c.KPIs) > 0 {
		k := st.c.KPIs[0]
		key := kpiKey(k.ID)
		lower, known := kpiLowerIsWorse[key]
		if !known && k.Name != "" {
			key = kpiKey(k.Name)
			lower, known = kpiLowerIsWorse[key]
		}
		if known {
			// The classification's KPI is a guess (an `up` gate in the
			// expression reads as KPI UP): it may add a regression the
			// default reading misses, never remove one (decideRegression).
			return regressionDirection{lower: lower, shortfall: boundedKPIs[key],
				text: directionWord(lower) + " (KPI " + k.ID + ", as classified)"}
		}
	}
	return regressionDirection{text: "higher is worse by default (direction unknown)"}
}

func directionWord(lower bool) string {
	if lower {
		return "lower is worse"
	}
	return "higher is worse"
}
