package enrich

// The incident classes; see the package documentation.
const (
	ClassLatency           = "latency"
	ClassErrors            = "errors"
	ClassAvailability      = "availability"
	ClassSaturation        = "saturation"
	ClassCapacity          = "capacity"
	ClassCacheEfficiency   = "cache-efficiency"
	ClassNetworkIntegrity  = "network-integrity"
	ClassDataQuality       = "data-quality"
	ClassBackpressure      = "backpressure"
	ClassTrainingStability = "training-stability"
	ClassBudgetBurn        = "budget-burn"
)

// IncidentClasses lists every incident class a KPI can belong to.
var IncidentClasses = []string{
	ClassLatency, ClassErrors, ClassAvailability, ClassSaturation, ClassCapacity,
	ClassCacheEfficiency, ClassNetworkIntegrity, ClassDataQuality, ClassBackpressure,
	ClassTrainingStability, ClassBudgetBurn,
}

// The hint ids of SPEC §4, plus percentiles-not-averages.
const (
	HintQueueTime      = "queue-time"
	HintPrefillDecode  = "prefill-decode"
	HintKVCache        = "kv-cache"
	HintMoERouter      = "moe-router"
	HintCPUReady       = "cpu-ready"
	HintMicroburst     = "microburst"
	HintOpticalHealth  = "optical-health"
	HintSpillLag       = "spill-lag"
	HintBurnExemplars  = "burn-exemplars"
	HintPercentiles    = "percentiles-not-averages"
	numHints           = 10
	sensitivityHigh    = "high"
	sensitivityMedium  = "medium"
	sensitivityLow     = "low"
	weightSectorLabel  = 1.0
	weightKPILabel     = 0.9
	weightRule         = 0.8
	weightMetricExact  = 0.7
	weightMetricPrefix = 0.6
	weightMetricVendor = 0.35 // a vendor prefix that names a sector, no KPI
	weightAlertname    = 0.4
	weightAnnotation   = 0.25
	weightJob          = 0.5  // words of the job an up{job="…"} or absent(up{…}) selector names
	weightUp           = 0.3  // the up series itself: scrape health, a weak hint of monitoring
	weightContext      = 0.25 // words of a context label, counted only for tied candidates
	minWinScore        = 0.35 // a winner below it stays unknown (one annotation word is not enough)
	tieMargin          = 0.05 // sectors this close are tied
	// scoreEpsilon absorbs floating point in score comparisons: 0.4 − 0.35
	// is 0.05000000000000002, a tie "within 0.05" all the same.
	scoreEpsilon = 1e-9
)

// HintIDs lists the hint ids in the order hints are attached.
var HintIDs = [numHints]string{
	HintQueueTime, HintPrefillDecode, HintKVCache, HintMoERouter, HintCPUReady,
	HintMicroburst, HintOpticalHealth, HintSpillLag, HintBurnExemplars, HintPercentiles,
}

// hintClasses are the incident classes each hint diagnoses. A sector's
// alert without KPI gets the hints of its sector's KPIs of its incident
// class only when the hint diagnoses that class: a saturated load
// balancer gets queue-time (from LQ), but a full Ceph disk (capacity, as
// job duration is) does not get spill-lag, which is about backpressure.
var hintClasses = [numHints][]string{
	{ClassLatency, ClassSaturation},                          // queue-time
	{ClassLatency},                                           // prefill-decode
	{ClassCacheEfficiency},                                   // kv-cache
	{ClassTrainingStability},                                 // moe-router
	{ClassSaturation, ClassLatency, ClassCacheEfficiency},    // cpu-ready (ready, co-stop, NUMA misses)
	{ClassSaturation, ClassLatency, ClassNetworkIntegrity},   // microburst
	{ClassNetworkIntegrity, ClassAvailability, ClassLatency}, // optical-health
	{ClassBackpressure},                                      // spill-lag
	{ClassBudgetBurn},                                        // burn-exemplars
	nil,                                                      // percentiles-not-averages: see hints
}

// defaultHintTexts are the generic texts of the hints (SPEC §4), used when
// the alert does not carry the numbers that make a hint specific.
var defaultHintTexts = map[string]string{
	HintQueueTime:     "Compare queue time with compute time: a growing queue means saturation (scale out or shed load), a growing compute time means the work itself got slower.",
	HintPrefillDecode: "Split latency into prefill and decode: slow prefill points at prompt processing (long prompts, missing prefix cache), slow decode at token generation (batch size, KV-cache pressure).",
	HintKVCache:       "Check the prefix/KV cache hit rate: a falling hit rate means avoidable recompute and a higher TTFT.",
	HintMoERouter:     "Watch the auxiliary load-balancing loss and router z-loss: rising values warn of expert imbalance and routing instability before throughput drops.",
	HintCPUReady:      "Check CPU ready, co-stop and NUMA misses: in virtualized clusters they are often the real cause of inconsistent latency.",
	HintMicroburst:    "Look at microburst depth and ECN/PFC counters: they reveal congestion that average bandwidth hides.",
	HintOpticalHealth: "Check OSNR, chromatic dispersion, PMD and pre-FEC BER: optical health degrades long before the link fails.",
	HintSpillLag:      "Check spill bytes and consumer lag: they are the early warning of data-path backpressure and skew.",
	HintBurnExemplars: "Judge by burn rate and exemplars rather than alert counts or average latency: they show how fast the error budget goes and which requests spend it.",
	HintPercentiles:   "This alert is on an average: for a latency-sensitive sector, alert on percentile regressions and error-budget exhaustion, not averages, which hide the tail.",
}

// kpiDef is one KPI of a sector in the catalog.
type kpiDef struct {
	ID    string   // acronym of the seed, e.g. "TTFT"
	Name  string   // expansion, e.g. "time to first token"
	Class string   // incident class
	Hints []string // hint ids this KPI makes relevant
}

// sectorDef is one sector of the catalog (SPEC §3).
type sectorDef struct {
	ID          string
	Name        string // name in the seed
	KPIs        []kpiDef
	AlertStyle  string
	Sensitivity string
	// Hints are the sector-level hints: true of any alert of the sector,
	// so attached even when neither a KPI nor an incident class was
	// identified. Only the dark-fiber sector has one (its network is
	// optical, so optical health bears on every alert of it); every other
	// hint belongs to KPIs (see hintClasses).
	Hints []string
}

// sectors is the catalog of SPEC §3, in the seed's order. KPI expansions
// follow SPEC §3; ITL/TPOT of the seed are two KPIs here.
var sectors = []sectorDef{
	{
		ID: "llm-inference-gpu", Name: "LLM Inference (GP-GPU Service Infra)",
		AlertStyle: "SLO-derived or baseline-relative", Sensitivity: sensitivityMedium,
		KPIs: []kpiDef{
			{"TTFT", "time to first token", ClassLatency, []string{HintQueueTime, HintPrefillDecode, HintKVCache}},
			{"ITL", "inter-token latency", ClassLatency, []string{HintPrefillDecode}},
			{"TPOT", "time per output token", ClassLatency, []string{HintPrefillDecode}},
			{"E2E", "end-to-end request latency", ClassLatency, []string{HintQueueTime, HintPrefillDecode}},
			{"QTS", "request queue time", ClassSaturation, []string{HintQueueTime}},
		},
	},
	{
		ID: "llm-inference-api", Name: "LLM Inference (API Service Infra)",
		AlertStyle: "SLO-derived", Sensitivity: sensitivityMedium,
		KPIs: []kpiDef{
			{"P95 LAT", "p95 latency", ClassLatency, []string{HintQueueTime}},
			{"ERR", "error rate", ClassErrors, nil},
			{"429R", "HTTP 429 rate", ClassSaturation, []string{HintQueueTime}},
			{"UST", "upstream service time", ClassLatency, []string{HintQueueTime}},
		},
	},
	{
		ID: "llm-inference-network", Name: "LLM Inference (Network Hardware + Protocol Infra)",
		AlertStyle: "baseline-relative; budget-relative", Sensitivity: sensitivityHigh,
		KPIs: []kpiDef{
			{"OWD", "one-way delay", ClassLatency, []string{HintMicroburst}},
			{"PDV", "packet delay variation (jitter)", ClassLatency, []string{HintMicroburst}},
			{"LOSS", "packet loss", ClassNetworkIntegrity, []string{HintMicroburst}},
			{"ECN", "ECN mark rate", ClassSaturation, []string{HintMicroburst}},
		},
	},
	{
		ID: "llm-prompt-cache-compute", Name: "LLM Inference (Prompt Caching, Compute + Re-Compute)",
		AlertStyle: "absolute for cache-eligible traffic", Sensitivity: sensitivityMedium,
		KPIs: []kpiDef{
			{"PCHR", "prefix-cache hit rate", ClassCacheEfficiency, []string{HintKVCache}},
			{"CTR", "cached-token ratio", ClassCacheEfficiency, []string{HintKVCache}},
			{"TTFTR", "TTFT reduction from caching", ClassCacheEfficiency, []string{HintKVCache, HintPrefillDecode}},
			{"RCR", "re-compute ratio", ClassCacheEfficiency, []string{HintKVCache}},
		},
	},
	{
		ID: "llm-prompt-cache-storage", Name: "LLM Inference (Prompt Caching, Storage Infra)",
		AlertStyle: "absolute; absolute for cache-eligible traffic", Sensitivity: sensitivityMedium,
		KPIs: []kpiDef{
			{"CHR", "cache hit ratio", ClassCacheEfficiency, []string{HintKVCache}},
			{"CLAT", "cache latency", ClassLatency, nil},
			{"COCC", "cache occupancy", ClassCapacity, []string{HintKVCache}},
			{"EVR", "eviction rate", ClassCacheEfficiency, []string{HintKVCache}},
		},
	},
	{
		ID: "llm-prompt-cache-lb", Name: "LLM Inference (Prompt Caching API + Load-Balancers)",
		AlertStyle: "absolute", Sensitivity: sensitivityMedium,
		KPIs: []kpiDef{
			{"RCHR", "per-route cache hit rate", ClassCacheEfficiency, []string{HintKVCache}},
			{"LQ", "load-balancer queue (active + pending requests)", ClassSaturation, []string{HintQueueTime}},
			{"URT", "upstream response time", ClassLatency, []string{HintQueueTime}},
			{"RTR", "retry rate", ClassErrors, nil},
		},
	},
	{
		ID: "llm-training-data", Name: "LLM Training (bulk initial datasets)",
		AlertStyle: "absolute; capacity-envelope", Sensitivity: sensitivityLow,
		KPIs: []kpiDef{
			{"ITPS", "ingest throughput", ClassCapacity, []string{HintSpillLag}},
			{"DHR", "duplicate hit rate", ClassDataQuality, nil},
			{"UDR", "unique-data ratio", ClassDataQuality, nil},
			{"CONT", "contamination rate", ClassDataQuality, nil},
		},
	},
	{
		ID: "llm-training-pretrain-moe", Name: "LLM Training (pre-training MoE)",
		AlertStyle: "absolute starting point; baseline-relative", Sensitivity: sensitivityLow,
		KPIs: []kpiDef{
			{"MFU", "model FLOPs utilization", ClassTrainingStability, []string{HintMoERouter}},
			{"STEP", "step time", ClassTrainingStability, []string{HintMoERouter}},
			{"A2AS", "all-to-all/dispatch share of step", ClassTrainingStability, []string{HintMoERouter}},
			{"EIR", "expert imbalance ratio", ClassTrainingStability, []string{HintMoERouter}},
		},
	},
	{
		ID: "llm-training-posttrain-moe", Name: "LLM Training (post-training MoE)",
		AlertStyle: "absolute starting point; baseline-relative", Sensitivity: sensitivityLow,
		KPIs: []kpiDef{
			{"TPS", "tokens/s", ClassTrainingStability, []string{HintMoERouter}},
			{"MFU", "model FLOPs utilization", ClassTrainingStability, []string{HintMoERouter}},
			{"RACC", "reward/preference accuracy", ClassTrainingStability, nil},
			{"RMAR", "chosen-vs-rejected reward margin", ClassTrainingStability, nil},
		},
	},
	{
		ID: "hft-vm-clusters", Name: "HPC - High Frequency Trading - VM Clusters",
		AlertStyle: "absolute starting point", Sensitivity: sensitivityHigh,
		KPIs: []kpiDef{
			{"RDY", "CPU ready time", ClassSaturation, []string{HintCPUReady}},
			{"CSTP", "CPU co-stop", ClassSaturation, []string{HintCPUReady}},
			{"NUMA MISS", "NUMA miss ratio", ClassCacheEfficiency, []string{HintCPUReady}},
			{"T2D", "tick-to-decision latency", ClassLatency, []string{HintCPUReady, HintQueueTime}},
		},
	},
	{
		ID: "hft-baremetal", Name: "HPC - High Frequency Trading - Baremetal",
		AlertStyle: "baseline-relative; budget-relative", Sensitivity: sensitivityHigh,
		KPIs: []kpiDef{
			{"W2W", "wire-to-wire latency", ClassLatency, []string{HintQueueTime, HintMicroburst}},
			{"JITR", "p99/p999 jitter", ClassLatency, []string{HintMicroburst}},
			{"CPM", "cycles per message", ClassSaturation, nil},
			{"MPKI", "LLC misses per kilo-instruction", ClassCacheEfficiency, nil},
		},
	},
	{
		ID: "hft-cdn", Name: "HPC - High Frequency Trading - CDN",
		AlertStyle: "absolute", Sensitivity: sensitivityHigh,
		KPIs: []kpiDef{
			{"CHR", "cache hit ratio", ClassCacheEfficiency, nil},
			{"OOR", "origin offload ratio", ClassCacheEfficiency, nil},
			{"TTFB", "time to first byte", ClassLatency, []string{HintQueueTime}},
			{"OTTFB", "origin TTFB", ClassLatency, nil},
		},
	},
	{
		ID: "hft-low-latency-exec", Name: "HPC - High Frequency Trading - Low-Latency Exec",
		AlertStyle: "baseline-relative; budget-relative", Sensitivity: sensitivityHigh,
		KPIs: []kpiDef{
			{"OWD", "one-way delay", ClassLatency, []string{HintMicroburst}},
			{"JIT", "jitter", ClassLatency, []string{HintMicroburst}},
			{"FLAT", "feed latency", ClassLatency, []string{HintQueueTime, HintMicroburst}},
			{"OLAT", "order latency", ClassLatency, []string{HintQueueTime, HintMicroburst}},
		},
	},
	{
		ID: "hpc-dark-fiber", Name: "HPC - Dark Fiber Regional Network + Infra",
		AlertStyle: "SLO-derived; budget-relative", Sensitivity: sensitivityHigh,
		Hints: []string{HintOpticalHealth},
		KPIs: []kpiDef{
			{"AVAIL", "availability", ClassAvailability, []string{HintOpticalHealth}},
			{"OWD", "one-way delay", ClassLatency, []string{HintOpticalHealth}},
			{"Pre-FEC BER", "pre-FEC bit error rate", ClassNetworkIntegrity, []string{HintOpticalHealth}},
			{"OSNRM", "OSNR margin", ClassNetworkIntegrity, []string{HintOpticalHealth}},
		},
	},
	{
		ID: "hpc-quant-research", Name: "HPC - Quantitative Research + Machine Learning",
		AlertStyle: "absolute starting point; baseline-relative", Sensitivity: sensitivityLow,
		KPIs: []kpiDef{
			{"BTT", "backtest wall-clock time", ClassCapacity, nil},
			{"FLAT", "feed latency", ClassLatency, []string{HintQueueTime}},
			{"TSS", "training-serving skew", ClassDataQuality, nil},
			{"FFL", "feature freshness lag", ClassDataQuality, []string{HintSpillLag}},
		},
	},
	{
		ID: "hpc-big-data", Name: "HPC - Big-Data & Multivariate Pattern Analysis",
		AlertStyle: "SLA-derived; absolute", Sensitivity: sensitivityLow,
		KPIs: []kpiDef{
			// A long job (an Airflow DAG run) is no backpressure: spill and
			// consumer lag explain a Spark stage or a stream, not a DAG.
			{"JDUR", "job duration", ClassCapacity, nil},
			{"SKR", "task skew ratio", ClassBackpressure, []string{HintSpillLag}},
			{"SPILL", "shuffle spill bytes", ClassBackpressure, []string{HintSpillLag}},
			{"CLAG", "consumer lag", ClassBackpressure, []string{HintSpillLag}},
		},
	},
	{
		ID: "slo-monitoring", Name: "SLA + SLO Monitoring, Telemetry, Alerting Infra",
		AlertStyle: "SLO-derived", Sensitivity: sensitivityMedium,
		KPIs: []kpiDef{
			{"SLI-AV", "availability SLI", ClassAvailability, []string{HintBurnExemplars}},
			{"SLI-LAT", "latency SLI", ClassLatency, []string{HintBurnExemplars}},
			{"EBR", "error-budget burn rate", ClassBudgetBurn, []string{HintBurnExemplars}},
			{"UP", "target up / scrape health", ClassAvailability, nil},
		},
	},
}

// numSectors is the size of the catalog; per-alert scoring uses fixed
// arrays of this size so that it does not allocate.
const numSectors = 17

// SectorIDs returns the ids of the catalog's sectors in the seed's order.
func SectorIDs() []string {
	ids := make([]string, len(sectors))
	for i := range sectors {
		ids[i] = sectors[i].ID
	}
	return ids
}
