package enrich

// word is a word (or a run of up to three words, written with spaces here
// and matched joined, case-insensitively) of an alertname or annotation that
// points at a KPI, a sector, or only at an incident class. Alertnames are
// split at CamelCase boundaries and non-alphanumerics: "VLLMHighTTFT" gives
// "vllm", "high", "ttft"; "KVCacheUsageHigh" gives "kv cache" once joined.
type word struct {
	Phrase string
	Sector string
	KPI    string
	// Class is used only to name the incident class of an alert whose
	// sector is known but whose KPI is not.
	Class string
	// NameClass keeps Class to the alertname and the summary, which say
	// what is: the word in a description (or message, title) names no
	// class.
	NameClass bool
	// Whole matches the phrase as one word only, not joined from a run
	// ("Portkey", not "PortKey" or "port key": a switch's LACP or MACsec
	// port key).
	Whole bool
	// Generic marks an ordinary word (English, or IT at large) that names
	// a KPI or sector of the catalog but just as often something else:
	// "duplicate" (DHR) is also Istio's duplicate entry, "eviction" (EVR)
	// also a Kubernetes pod eviction, "vCPU" and "hypervisor" (VM
	// clusters) also OpenStack capacity. Such a word never classifies
	// alone: it counts only when a signal that is not a generic word (a
	// label, a rule, a metric family, a specific word) points at the same
	// sector; otherwise it is listed with weight 0 (see corroborate).
	Generic bool
	// Scrape marks a word about scrape health ("scrape", "target down") or
	// naming the scraping system ("Prometheus", "kube-state-metrics"). In
	// the annotations of an alert about a target's health (its expression
	// reads up or absent()), such a word names the observer — "KubeAPIDown:
	// KubeAPI has disappeared from Prometheus target discovery" — and is
	// not evidence (listed with weight 0): the up series itself already is,
	// deliberately too weak to win alone. As a context label's word
	// (job="kube-state-metrics" on every alert about a Kubernetes object)
	// it breaks no tie. In an alertname, and in the annotations of other
	// alerts, it counts as usual.
	Scrape bool
	// Store marks a general-purpose key-value store ("Redis", "Memcached"):
	// the catalog reads it as prompt-cache storage, but nothing in the word
	// says it holds prompts or KV blocks, so it does not make the kv-cache
	// hint (recompute, TTFT) relevant (see promptCacheEvidence).
	Store bool
	// Cands are the candidate sectors of a word that names no sector of
	// its own (clock sync: "PTP", "chrony"), as family.Cands; with a KPI,
	// the KPI is the alert's where a candidate having it wins ("expert
	// load": EIR of pre-training, but also what serving balances).
	Cands []string
}

// builtinWords are the words the classifier reads. Bare short acronyms that
// are ordinary English (ERR, UP, STEP, LOSS, JIT, TPS, CONT) are listed only
// in their unambiguous longer forms; other ordinary words are marked
// Generic (see word.Generic).
var builtinWords = []word{
	// LLM GPU serving.
	{Phrase: "ttft", Sector: secGPU, KPI: "TTFT"},
	{Phrase: "time to first token", Sector: secGPU, KPI: "TTFT"},
	{Phrase: "first token", Sector: secGPU, KPI: "TTFT"},
	{Phrase: "itl", Sector: secGPU, KPI: "ITL"},
	{Phrase: "inter token", Sector: secGPU, KPI: "ITL"},
	{Phrase: "tpot", Sector: secGPU, KPI: "TPOT"},
	{Phrase: "time per output token", Sector: secGPU, KPI: "TPOT"},
	{Phrase: "e2e latency", Sector: secGPU, KPI: "E2E", Generic: true},
	{Phrase: "end to end latency", Sector: secGPU, KPI: "E2E", Generic: true},
	{Phrase: "queue time", Sector: secGPU, KPI: "QTS", Generic: true},
	{Phrase: "qts", Sector: secGPU, KPI: "QTS"},
	{Phrase: "vllm", Sector: secGPU},
	{Phrase: "sglang", Sector: secGPU},
	{Phrase: "tgi", Sector: secGPU},
	{Phrase: "triton", Sector: secGPU},
	{Phrase: "prefill", Sector: secGPU},
	// Serving frameworks (families_exporters.go). Not "Dynamo" (also
	// DynamoDB: "DynamoDBThrottling" splits into dynamo, db) nor "NIM".
	{Phrase: "kserve", Sector: secGPU},
	{Phrase: "ray serve", Sector: secGPU},
	{Phrase: "torchserve", Sector: secGPU},
	{Phrase: "bentoml", Sector: secGPU},
	{Phrase: "mlserver", Sector: secGPU},
	{Phrase: "trtllm", Sector: secGPU},
	{Phrase: "tensorrt llm", Sector: secGPU},
	// llama.cpp's server: "llama.cpp", "llama-cpp", "LlamaCpp" and
	// "llamacpp" all join to llamacpp. Not "llama" alone (a model family).
	{Phrase: "llama cpp", Sector: secGPU},
	{Phrase: "decode", Sector: secGPU, Generic: true},
	// LLM API.
	{Phrase: "p95 lat", Sector: secAPI, KPI: "P95 LAT"},
	{Phrase: "p95 latency", Sector: secAPI, KPI: "P95 LAT", Generic: true},
	{Phrase: "429r", Sector: secAPI, KPI: "429R"},
	{Phrase: "429", Sector: secAPI, KPI: "429R", Generic: true},
	{Phrase: "rate limited", Sector: secAPI, KPI: "429R", Generic: true},
	{Phrase: "too many requests", Sector: secAPI, KPI: "429R", Generic: true},
	{Phrase: "ust", Sector: secAPI, KPI: "UST"},
	{Phrase: "upstream service time", Sector: secAPI, KPI: "UST"},
	{Phrase: "api gateway", Sector: secAPI},
	// An AI gateway (Envoy AI Gateway, "ai-gateway") fronts LLM APIs: its
	// TTFT is the upstream's, not a GPU's.
	{Phrase: "ai gateway", Sector: secAPI},
	{Phrase: "litellm", Sector: secAPI},
	// Portkey's gateway: its request_count and llm_request_duration
	// metrics carry no prefix (families_exporters.go), so its name in an
	// alert is what says whose they are — as one word (a review:
	// MacsecPortKeyMismatch read as the LLM API).
	{Phrase: "portkey", Sector: secAPI, Whole: true},
	// LLM inference network.
	{Phrase: "owd", KPI: "OWD"},
	{Phrase: "one way delay", KPI: "OWD"},
	{Phrase: "one way latency", KPI: "OWD"},
	{Phrase: "pdv", Sector: secNet, KPI: "PDV"},
	{Phrase: "packet delay variation", Sector: secNet, KPI: "PDV"},
	{Phrase: "packet loss", Sector: secNet, KPI: "LOSS"},
	{Phrase: "packet drops", Sector: secNet, KPI: "LOSS"},
	{Phrase: "retransmits", Sector: secNet, KPI: "LOSS"},
	{Phrase: "ecn", Sector: secNet, KPI: "ECN"},
	{Phrase: "pfc", Sector: secNet, KPI: "ECN"},
	{Phrase: "roce", Sector: secNet},
	{Phrase: "infiniband", Sector: secNet},
	{Phrase: "microburst", Sector: secNet},
	// Prompt caching, compute.
	{Phrase: "pchr", Sector: secPCompute, KPI: "PCHR"},
	{Phrase: "prefix cache", Sector: secPCompute, KPI: "PCHR"},
	{Phrase: "ctr", Sector: secPCompute, KPI: "CTR", Generic: true},
	{Phrase: "cached tokens", Sector: secPCompute, KPI: "CTR"},
	{Phrase: "cached token", Sector: secPCompute, KPI: "CTR"},
	{Phrase: "ttftr", Sector: secPCompute, KPI: "TTFTR"},
	{Phrase: "rcr", Sector: secPCompute, KPI: "RCR"},
	{Phrase: "recompute", Sector: secPCompute, KPI: "RCR", Generic: true},
	{Phrase: "re compute", Sector: secPCompute, KPI: "RCR", Generic: true},
	// Prompt caching, storage.
	{Phrase: "chr", KPI: "CHR"},
	{Phrase: "cache hit ratio", KPI: "CHR"},
	{Phrase: "cache hit rate", KPI: "CHR"},
	{Phrase: "clat", Sector: secPStorage, KPI: "CLAT"},
	{Phrase: "cache latency", Sector: secPStorage, KPI: "CLAT"},
	{Phrase: "cocc", Sector: secPStorage, KPI: "COCC"},
	{Phrase: "kv cache", Sector: secPStorage, KPI: "COCC"},
	{Phrase: "kvcache", Sector: secPStorage, KPI: "COCC"},
	{Phrase: "cache occupancy", Sector: secPStorage, KPI: "COCC"},
	{Phrase: "evr", Sector: secPStorage, KPI: "EVR"},
	{Phrase: "eviction", Sector: secPStorage, KPI: "EVR", Generic: true},
	{Phrase: "evictions", Sector: secPStorage, KPI: "EVR", Generic: true},
	{Phrase: "lmcache", Sector: secPStorage},
	{Phrase: "redis", Sector: secPStorage, Store: true},
	{Phrase: "memcached", Sector: secPStorage, Store: true},
	// Prompt caching, API + load balancers.
	{Phrase: "rchr", Sector: secPLB, KPI: "RCHR"},
	{Phrase: "route cache hit", Sector: secPLB, KPI: "RCHR"},
	{Phrase: "lq", Sector: secPLB, KPI: "LQ"},
	// Generic: Argo CD's repo server, Celery and every HTTP server have
	// pending requests (ArgoCdRepoServerPendingRequests read as a load
	// balancer's queue, with its scale-out hint).
	{Phrase: "pending requests", Sector: secPLB, KPI: "LQ", Generic: true},
	{Phrase: "lb queue", Sector: secPLB, KPI: "LQ"},
	{Phrase: "urt", Sector: secPLB, KPI: "URT"},
	{Phrase: "upstream response time", Sector: secPLB, KPI: "URT"},
	{Phrase: "upstream latency", Sector: secPLB, KPI: "URT"},
	{Phrase: "rtr", Sector: secPLB, KPI: "RTR", Generic: true},
	{Phrase: "retry rate", Sector: secPLB, KPI: "RTR", Generic: true},
	{Phrase: "retries", Sector: secPLB, KPI: "RTR", Generic: true},
	{Phrase: "envoy", Sector: secPLB},
	{Phrase: "haproxy", Sector: secPLB},
	{Phrase: "load balancer", Sector: secPLB},
	// The Gateway API inference extension's endpoint picker (EPP): the
	// scheduler that routes requests to model servers by queue and cache.
	{Phrase: "epp", Sector: secPLB},
	{Phrase: "endpoint picker", Sector: secPLB},
	// LLM training data.
	{Phrase: "itps", Sector: secData, KPI: "ITPS"},
	{Phrase: "ingest throughput", Sector: secData, KPI: "ITPS"},
	{Phrase: "dhr", Sector: secData, KPI: "DHR"},
	{Phrase: "duplicate hit rate", Sector: secData, KPI: "DHR"},
	{Phrase: "duplicate", Sector: secData, KPI: "DHR", Generic: true},
	{Phrase: "duplicates", Sector: secData, KPI: "DHR", Generic: true},
	{Phrase: "dedup", Sector: secData, KPI: "DHR", Generic: true},
	{Phrase: "udr", Sector: secData, KPI: "UDR"},
	{Phrase: "unique data ratio", Sector: secData, KPI: "UDR"},
	{Phrase: "unique data", Sector: secData, KPI: "UDR", Generic: true},
	{Phrase: "contamination", Sector: secData, KPI: "CONT", Generic: true},
	{Phrase: "contamination rate", Sector: secData, KPI: "CONT"},
	{Phrase: "dataset", Sector: secData, Generic: true},
	{Phrase: "dataloader", Sector: secData},
	{Phrase: "tokenization", Sector: secData, Generic: true},
	// Pre-training MoE.
	{Phrase: "mfu", KPI: "MFU"},
	{Phrase: "flops utilization", KPI: "MFU"},
	{Phrase: "step time", Sector: secPretrain, KPI: "STEP"},
	{Phrase: "a2as", Sector: secPretrain, KPI: "A2AS"},
	{Phrase: "all to all", Sector: secPretrain, KPI: "A2AS"},
	{Phrase: "alltoall", Sector: secPretrain, KPI: "A2AS"},
	{Phrase: "eir", Sector: secPretrain, KPI: "EIR"},
	{Phrase: "expert imbalance", Sector: secPretrain, KPI: "EIR"},
	{Phrase: "router z loss", Sector: secPretrain, KPI: "EIR"},
	{Phrase: "aux loss", Sector: secPretrain, KPI: "EIR"},
	{Phrase: "pretrain", Sector: secPretrain},
	{Phrase: "pre training", Sector: secPretrain},
	{Phrase: "pretraining", Sector: secPretrain},
	// What imbalance among experts does and how Megatron-LM names it: the
	// load-balancing loss, tokens dropped past an expert's capacity
	// factor (moe_utils.py, --moe-expert-capacity-factor). Experts are
	// balanced in serving too (vLLM's expert-parallel load balancer): the
	// words are candidates of training and serving, settled by the other
	// signals or the context, and name pre-training's EIR where it wins.
	{Phrase: "expert load", KPI: "EIR", Cands: collectiveSectors},
	{Phrase: "load imbalance", KPI: "EIR", Cands: collectiveSectors, Generic: true},
	{Phrase: "load balancing loss", KPI: "EIR", Cands: trainingSectors},
	{Phrase: "token drop", KPI: "EIR", Cands: collectiveSectors},
	{Phrase: "tokens dropped", KPI: "EIR", Cands: collectiveSectors},
	{Phrase: "dropped tokens", KPI: "EIR", Cands: collectiveSectors},
	{Phrase: "capacity factor", KPI: "EIR", Cands: collectiveSectors, Generic: true},
	// Mixture-of-experts models are trained and served: pre-training,
	// post-training or GPU serving, the context breaks the tie.
	{Phrase: "moe", Cands: collectiveSectors},
	{Phrase: "mixture of experts", Cands: collectiveSectors},
	{Phrase: "megatron", Cands: trainingSectors},
	{Phrase: "deepspeed", Cands: trainingSectors},
	{Phrase: "torchtitan", Cands: trainingSectors},
	{Phrase: "loss spike", Cands: trainingSectors},
	{Phrase: "training loss", Cands: trainingSectors},
	{Phrase: "lm loss", Cands: trainingSectors},
	{Phrase: "loss nan", Cands: trainingSectors},
	{Phrase: "nan loss", Cands: trainingSectors},
	{Phrase: "grad norm", Cands: trainingSectors},
	{Phrase: "gradient norm", Cands: trainingSectors},
	{Phrase: "nccl", Cands: collectiveSectors},
	// Post-training MoE.
	{Phrase: "tokens per second", Sector: secPost, KPI: "TPS"},
	{Phrase: "racc", Sector: secPost, KPI: "RACC"},
	{Phrase: "reward accuracy", Sector: secPost, KPI: "RACC"},
	{Phrase: "preference accuracy", Sector: secPost, KPI: "RACC"},
	{Phrase: "rmar", Sector: secPost, KPI: "RMAR"},
	{Phrase: "reward margin", Sector: secPost, KPI: "RMAR"},
	{Phrase: "posttrain", Sector: secPost},
	{Phrase: "post training", Sector: secPost},
	{Phrase: "dpo", Sector: secPost},
	{Phrase: "rlhf", Sector: secPost},
	// HFT VM clusters.
	{Phrase: "rdy", Sector: secVM, KPI: "RDY"},
	{Phrase: "cpu ready", Sector: secVM, KPI: "RDY"},
	{Phrase: "cstp", Sector: secVM, KPI: "CSTP"},
	{Phrase: "co stop", Sector: secVM, KPI: "CSTP"},
	{Phrase: "costop", Sector: secVM, KPI: "CSTP"},
	{Phrase: "numa miss", Sector: secVM, KPI: "NUMA MISS"},
	{Phrase: "numa", Sector: secVM, KPI: "NUMA MISS", Generic: true},
	{Phrase: "t2d", Sector: secVM, KPI: "T2D"},
	{Phrase: "tick to decision", Sector: secVM, KPI: "T2D"},
	{Phrase: "vmware", Sector: secVM},
	{Phrase: "esxi", Sector: secVM},
	{Phrase: "vsphere", Sector: secVM}, // "VSphere…" splits into v, sphere: a run of two words
	{Phrase: "vcenter", Sector: secVM},
	{Phrase: "hypervisor", Sector: secVM, Generic: true},
	{Phrase: "vcpu", Sector: secVM, Generic: true},
	// HFT bare metal.
	{Phrase: "w2w", Sector: secBare, KPI: "W2W"},
	{Phrase: "wire to wire", Sector: secBare, KPI: "W2W"},
	{Phrase: "tick to trade", Sector: secBare, KPI: "W2W"},
	{Phrase: "jitr", Sector: secBare, KPI: "JITR"},
	{Phrase: "p999 jitter", Sector: secBare, KPI: "JITR"},
	{Phrase: "cpm", Sector: secBare, KPI: "CPM"},
	{Phrase: "cycles per message", Sector: secBare, KPI: "CPM"},
	{Phrase: "mpki", Sector: secBare, KPI: "MPKI"},
	{Phrase: "llc miss", Sector: secBare, KPI: "MPKI"},
	{Phrase: "llc misses", Sector: secBare, KPI: "MPKI"},
	{Phrase: "baremetal", Sector: secBare, Generic: true},
	{Phrase: "bare metal", Sector: secBare, Generic: true},
	// HFT CDN.
	{Phrase: "oor", Sector: secCDN, KPI: "OOR"},
	{Phrase: "origin offload", Sector: secCDN, KPI: "OOR"},
	{Phrase: "ttfb", Sector: secCDN, KPI: "TTFB"},
	{Phrase: "time to first byte", Sector: secCDN, KPI: "TTFB"},
	{Phrase: "ottfb", Sector: secCDN, KPI: "OTTFB"},
	{Phrase: "origin ttfb", Sector: secCDN, KPI: "OTTFB"},
	{Phrase: "cdn", Sector: secCDN},
	{Phrase: "varnish", Sector: secCDN},
	{Phrase: "traffic server", Sector: secCDN},
	{Phrase: "trafficserver", Sector: secCDN},
	// HFT low-latency execution.
	{Phrase: "jitter", Sector: secExec, KPI: "JIT", Generic: true},
	{Phrase: "flat", KPI: "FLAT", Generic: true},
	{Phrase: "feed latency", KPI: "FLAT"},
	{Phrase: "olat", Sector: secExec, KPI: "OLAT"},
	{Phrase: "order latency", Sector: secExec, KPI: "OLAT"},
	{Phrase: "order gateway", Sector: secExec},
	{Phrase: "market data", Sector: secExec},
	// An order's acknowledgement (the first ExecutionReport) is order
	// latency — where a trading word agrees: a shop's order service acks
	// orders too (a review); a FIX session, FIX's NewOrderSingle and a
	// drop copy are order entry's.
	{Phrase: "order ack", Sector: secExec, KPI: "OLAT", Generic: true},
	{Phrase: "order ack latency", Sector: secExec, KPI: "OLAT", Generic: true},
	{Phrase: "fix session", Sector: secExec},
	{Phrase: "new order single", Sector: secExec},
	{Phrase: "drop copy", Sector: secExec},
	// Dark fiber.
	{Phrase: "avail", Sector: secFiber, KPI: "AVAIL", Generic: true},
	{Phrase: "pre fec", Sector: secFiber, KPI: "Pre-FEC BER"},
	{Phrase: "prefec", Sector: secFiber, KPI: "Pre-FEC BER"},
	{Phrase: "pre fec ber", Sector: secFiber, KPI: "Pre-FEC BER"},
	{Phrase: "ber", Sector: secFiber, KPI: "Pre-FEC BER"},
	{Phrase: "osnrm", Sector: secFiber, KPI: "OSNRM"},
	{Phrase: "osnr", Sector: secFiber, KPI: "OSNRM"},
	{Phrase: "osnr margin", Sector: secFiber, KPI: "OSNRM"},
	{Phrase: "fiber", Sector: secFiber},
	{Phrase: "dark fiber", Sector: secFiber},
	{Phrase: "optical", Sector: secFiber},
	{Phrase: "dwdm", Sector: secFiber},
	{Phrase: "transponder", Sector: secFiber},
	// Quant research.
	{Phrase: "btt", Sector: secQuant, KPI: "BTT"},
	{Phrase: "backtest", Sector: secQuant, KPI: "BTT"},
	{Phrase: "tss", Sector: secQuant, KPI: "TSS"},
	{Phrase: "training serving skew", Sector: secQuant, KPI: "TSS"},
	{Phrase: "ffl", Sector: secQuant, KPI: "FFL"},
	{Phrase: "feature freshness", Sector: secQuant, KPI: "FFL"},
	{Phrase: "feature store", Sector: secQuant},
	// Big data.
	{Phrase: "jdur", Sector: secBigData, KPI: "JDUR"},
	{Phrase: "job duration", Sector: secBigData, KPI: "JDUR", Generic: true},
	{Phrase: "skr", Sector: secBigData, KPI: "SKR"},
	{Phrase: "task skew", Sector: secBigData, KPI: "SKR"},
	{Phrase: "straggler", Sector: secBigData, KPI: "SKR"},
	{Phrase: "spill", Sector: secBigData, KPI: "SPILL"},
	{Phrase: "shuffle spill", Sector: secBigData, KPI: "SPILL"},
	{Phrase: "clag", Sector: secBigData, KPI: "CLAG"},
	{Phrase: "consumer lag", Sector: secBigData, KPI: "CLAG"},
	{Phrase: "spark", Sector: secBigData},
	{Phrase: "kafka", Sector: secBigData},
	{Phrase: "flink", Sector: secBigData},
	// SLO monitoring.
	{Phrase: "sli av", Sector: secSLO, KPI: "SLI-AV"},
	{Phrase: "availability sli", Sector: secSLO, KPI: "SLI-AV"},
	{Phrase: "sli lat", Sector: secSLO, KPI: "SLI-LAT"},
	{Phrase: "latency sli", Sector: secSLO, KPI: "SLI-LAT"},
	{Phrase: "ebr", Sector: secSLO, KPI: "EBR"},
	{Phrase: "burn rate", Sector: secSLO, KPI: "EBR"},
	{Phrase: "burnrate", Sector: secSLO, KPI: "EBR"},
	{Phrase: "error budget", Sector: secSLO, KPI: "EBR"},
	{Phrase: "target down", Sector: secSLO, KPI: "UP", Scrape: true},
	{Phrase: "scrape", Sector: secSLO, KPI: "UP", Generic: true, Scrape: true},
	{Phrase: "sloth", Sector: secSLO},
	{Phrase: "pyrra", Sector: secSLO},
	{Phrase: "alertmanager", Sector: secSLO},
	{Phrase: "prometheus", Sector: secSLO, Scrape: true},
	{Phrase: "thanos", Sector: secSLO},
	{Phrase: "loki", Sector: secSLO},
	// Telemetry and alerting infrastructure beyond Prometheus: tracing,
	// the OpenTelemetry Collector, dashboards, kube-state-metrics (its own
	// health; as a job label it names the observer, see word.Scrape), the
	// prometheus-operator's config reloader. "Watchdog" is kube-prometheus'
	// always-firing alert, but also a hardware or kernel watchdog: generic.
	{Phrase: "jaeger", Sector: secSLO},
	{Phrase: "opentelemetry", Sector: secSLO},
	{Phrase: "otel", Sector: secSLO},
	{Phrase: "otelcol", Sector: secSLO},
	{Phrase: "grafana", Sector: secSLO},
	{Phrase: "kube state metrics", Sector: secSLO, Scrape: true},
	{Phrase: "config reloader", Sector: secSLO},
	{Phrase: "watchdog", Sector: secSLO, Generic: true},
	// The rest of the monitoring stack: Grafana Mimir and Cortex (metrics,
	// cortex_…), Tempo (traces, tempo_… and tempodb_…), Promtail (Loki's
	// log shipper). "Cortex" (also Palo Alto's) and "tempo" are ordinary
	// words: they count only when another signal of the monitoring sector
	// that is not a generic word agrees (a cortex_… or tempo_… metric, a
	// label, a rule, a job, a word such as "Prometheus"; see corroborate).
	{Phrase: "mimir", Sector: secSLO},
	{Phrase: "cortex", Sector: secSLO, Generic: true},
	{Phrase: "tempo", Sector: secSLO, Generic: true},
	{Phrase: "promtail", Sector: secSLO},
	// Systems the catalog of exporters names (see families_exporters.go).
	{Phrase: "nginx", Sector: secPLB},
	{Phrase: "traefik", Sector: secPLB},
	{Phrase: "squid", Sector: secCDN},
	{Phrase: "cloudflare", Sector: secCDN},
	{Phrase: "hadoop", Sector: secBigData},
	{Phrase: "hdfs", Sector: secBigData},
	{Phrase: "namenode", Sector: secBigData},
	{Phrase: "yarn", Sector: secBigData},
	{Phrase: "hbase", Sector: secBigData},
	{Phrase: "airflow", Sector: secBigData},
	{Phrase: "minio", Sector: secBigData},
	{Phrase: "ceph", Sector: secBigData},
	// SQL-on-big-data engines. "Presto" is also an ordinary word: it counts
	// only when another signal of big data that is not a generic word
	// agrees (a presto_… metric, a label, a rule, a job, a word such as
	// "Trino" or "Spark"; see corroborate).
	{Phrase: "presto", Sector: secBigData, Generic: true},
	{Phrase: "trino", Sector: secBigData},
	{Phrase: "clickhouse", Sector: secBigData},
	{Phrase: "snmp", Sector: secNet},
	{Phrase: "bgp", Sector: secNet},
	// Every switch port has an SFP, a transceiver, optics: a module's
	// temperature or presence is switch hardware, not a DWDM span. These
	// words count only when another signal of dark fiber that is not a
	// generic word agrees (a …_dbm… or …fec_… metric, "rx power", OSNR,
	// BER, "optical", "fiber", a label, a rule; see corroborate).
	{Phrase: "sfp", Sector: secFiber, Generic: true},
	{Phrase: "transceiver", Sector: secFiber, Generic: true},
	{Phrase: "optics", Sector: secFiber, Generic: true},
	{Phrase: "rx power", Sector: secFiber}, // optical power, no OSNR margin
	{Phrase: "cpu steal", Sector: secVM, KPI: "RDY"},
	{Phrase: "steal", Sector: secVM, KPI: "RDY", Generic: true},
	// Clock sync is no one-way delay: candidate sectors, no KPI.
	{Phrase: "clock skew", Cands: clockSectors, Generic: true},
	{Phrase: "ptp", Cands: clockSectors, Generic: true},
	{Phrase: "chrony", Cands: clockSectors, Generic: true},
	// Class-only words.
	{Phrase: "latency", Class: ClassLatency},
	{Phrase: "slow", Class: ClassLatency},
	{Phrase: "errors", Class: ClassErrors},
	{Phrase: "error", Class: ClassErrors},
	{Phrase: "failures", Class: ClassErrors},
	{Phrase: "failed", Class: ClassErrors},
	{Phrase: "abort", Class: ClassErrors},
	{Phrase: "aborts", Class: ClassErrors},
	{Phrase: "aborted", Class: ClassErrors},
	{Phrase: "aborting", Class: ClassErrors},
	{Phrase: "5xx", Class: ClassErrors},
	{Phrase: "down", Class: ClassAvailability},
	{Phrase: "unavailable", Class: ClassAvailability},
	{Phrase: "unreachable", Class: ClassAvailability},
	// A FIX session or a client that lost its connection is down — when
	// the alertname or the summary says so (FIXSessionDisconnected, "Kafka
	// Zookeeper sync disconnected."). A description uses the word for what
	// a condition will do ("new clients will be disconnected when
	// maxclients is reached", "brokers disconnect idle clients"): there it
	// names no class (NameClass).
	{Phrase: "disconnected", Class: ClassAvailability, NameClass: true},
	{Phrase: "disconnect", Class: ClassAvailability, NameClass: true},
	{Phrase: "saturated", Class: ClassSaturation},
	{Phrase: "saturation", Class: ClassSaturation},
	{Phrase: "queue", Class: ClassSaturation},
	{Phrase: "capacity", Class: ClassCapacity},
	{Phrase: "full", Class: ClassCapacity},
	{Phrase: "lag", Class: ClassBackpressure},
	{Phrase: "backpressure", Class: ClassBackpressure},
}

// maxWordRun is the longest phrase, in words.
const maxWordRun = 4

// span is a [start,end) range of a word in a lowered buffer.
type span struct{ start, end int }

// splitWords lowers s into buf and records its words in spans, splitting at
// non-alphanumerics and CamelCase boundaries ("KVCacheHigh" → kv, cache,
// high). Digits stay with the word they follow ("HTTP429Rate" → http429,
// rate) unless they start it. It never allocates; text beyond buf is
// ignored. It returns the lowered bytes used and the number of spans.
func splitWords(s string, buf []byte, spans []span) (int, int) {
	n, ns := 0, 0
	start := -1
	flush := func() {
		if start >= 0 && ns < len(spans) {
			spans[ns] = span{start, n}
			ns++
		}
		start = -1
	}
	for i := 0; i < len(s) && n < len(buf); i++ {
		c := s[i]
		switch {
		case isUpper(c):
			// Boundary before an upper-case letter that follows a lower-case
			// letter or a digit, or that starts a capitalised word after an
			// acronym ("KVCache": boundary before "C").
			if start >= 0 && i > 0 && camelBreak(s, i) {
				flush()
			}
			if start < 0 {
				start = n
			}
			buf[n] = c + ('a' - 'A')
			n++
		case isLower(c) || isDigit(c):
			if start < 0 {
				start = n
			}
			buf[n] = c
			n++
		default:
			flush()
		}
	}
	flush()
	return n, ns
}

// camelBreak reports whether a word that reaches the upper-case letter s[i]
// (i > 0) ends before it: after a lower-case letter ("kvCache"), or when it
// starts a capitalised word after an acronym ("KVCache": before "C").
// splitWords and the context words (ctxWords.split) split with it.
func camelBreak(s string, i int) bool {
	p := s[i-1]
	return isLower(p) || (isUpper(p) && i+1 < len(s) && isLower(s[i+1]))
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// normKey normalises a phrase, a KPI acronym or a sector name into buf for
// look-ups: lower-case ASCII letters and digits only ("Pre-FEC BER" →
// "prefecber", "NUMA MISS" → "numamiss").
func normKey(s string, buf []byte) []byte {
	buf = buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUpper(c):
			buf = append(buf, c+('a'-'A'))
		case isLower(c) || isDigit(c):
			buf = append(buf, c)
		}
	}
	return buf
}
