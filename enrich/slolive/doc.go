// Package slolive reads the live state of an alert's SLO from Prometheus at
// decision time: the burn rate over every window (5m … 3d), the error
// budget left, the trend (burn now against 15 minutes ago) and, for SLIs
// with exemplars, the trace ids of bad requests.
//
// It knows the recording rules of the two SLO generators the router
// understands, and a configurable template for hand-rolled SLOs:
//
//   - Sloth (alert label sloth_id): slo:sli_error:ratio_rate<window> is the
//     error ratio over a window; divided by slo:error_budget:ratio (1 −
//     objective) it is the burn rate. slo:period_error_budget_remaining:ratio
//     is the budget left.
//   - Pyrra (alert labels slo, long and short): <metric>:burnrate<window> is
//     the error ratio over a window (Pyrra scales its windows with the SLO
//     period, so they are discovered, not assumed); divided by 1 −
//     pyrra_objective it is the burn rate. (pyrra_availability −
//     pyrra_objective) ÷ (1 − pyrra_objective) is the budget left.
//   - Others (an slo label or burn_rate_* values): the templates of
//     prometheus.expr, rendered once per window.
//
// Prometheus must never be in the way of a page. Every lookup is bounded by
// the configured timeout; a slow or unreachable Prometheus makes Lookup
// return an error (a *LookupError) on which the caller decides from the
// alert's labels, its Reason telling the notification why the live context
// is missing ("no data: …" apart from "Prometheus timed out",
// "Prometheus unreachable", …), counted in metrics and logged once per
// failed query set. A
// circuit breaker stops querying a Prometheus for 30 s after 3 consecutive
// failed lookups. However many alerts of one SLO ask at once, one query set
// runs (singleflight) and its answer is reused for cache_ttl. The host
// named by an alert's generatorURL is queried only when
// prometheus.from_generator_url is set: by default alerts cannot choose
// where the router sends requests.
package slolive
