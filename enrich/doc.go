// Package enrich classifies alerts into the infrastructure sectors of the
// seed catalog (SPEC §3) and attaches the shared-analytic hints of SPEC §4.
//
// A Classifier reads, strongest first: an explicit `sector` label (a sector
// id or the seed's full name, case-insensitive); an explicit `kpi` label (a
// KPI acronym such as "TTFT", "NUMA MISS" or "Pre-FEC BER"); the sector rules
// of the configuration (Alertmanager label matchers); the metric names found
// in the PromQL expression of the alert's generatorURL (`g0.expr`), matched
// against a catalog of well-known metric families; and the words of the
// alertname and of the summary/description annotations. Ordinary words the
// catalog also uses ("duplicate", "eviction", "vCPU" …) count only when a
// signal that is not such a word points at the same sector. Words of an
// annotation that quote a context label's value (job, namespace, pod,
// container, service, instance) are that context label, which only breaks
// ties. Every
// conclusion carries the signals it rests on and a confidence in [0,1]. An
// alert that nothing identifies stays model.Unknown with confidence 0: the
// classifier never guesses.
//
// # Incident classes
//
// Every KPI of the catalog belongs to exactly one incident class, so that
// downstream stages (incident grouping, templates) can reason about the kind
// of problem without knowing every sector:
//
//   - latency: a duration got longer (TTFT, P95 LAT, OWD, order latency …).
//   - errors: requests fail or are retried (ERR, RTR).
//   - availability: something is down or unreachable (AVAIL, SLI-AV, UP).
//   - saturation: work waits for a busy resource (QTS, LQ, 429R, RDY, ECN …).
//   - capacity: throughput or space runs short of the envelope (ITPS, COCC,
//     job and backtest duration).
//   - cache-efficiency: a cache serves less than it should (PCHR, CHR, EVR,
//     NUMA MISS, MPKI …).
//   - network-integrity: bits or packets are lost or corrupted (LOSS,
//     Pre-FEC BER, OSNRM).
//   - data-quality: the data itself is wrong (duplicates, contamination,
//     training-serving skew, stale features).
//   - backpressure: a data path falls behind (consumer lag, spill, skew).
//   - training-stability: a training run is slow or unstable (MFU, step time,
//     expert imbalance, reward accuracy).
//   - budget-burn: an error budget is being consumed (EBR).
//
// The IncidentClass of a classification is the class of its primary KPI;
// without a KPI it is availability for an alert on absent(), else read from
// words of the alertname ("Down", "Errors", "Latency" …) or stays
// model.Unknown.
package enrich
