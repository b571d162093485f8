// Package policies decides whether an alert deserves a page, a ticket or
// nothing (SPEC §5). Engine implements model.Decider.
//
// The policies are pure functions of the alert, its classification and an
// injected clock; they never do I/O and never keep state, so one Engine is
// safe for concurrent use. They are evaluated in a fixed order and the first
// policy that has its input decides:
//
//  1. SLO generators, whose own tier label is authoritative: Sloth
//     (sloth_severity) and Pyrra (its severity label on alerts with long and
//     short window labels, or a custom severity that the severity table
//     maps to page or ticket; without either the pair ranked against the
//     SLO period, or the 28-day table, or default_period: 30d, which ranks
//     28-day and 30-day windows right). Alerts with long and short but no
//     slo label (kube-prometheus' KubeAPIErrorBudgetBurn) are decided the
//     same way, their reasons naming a burn-rate window pair, not Pyrra.
//  2. Burn-rate tiers from burn_rate_<window> labels or annotations.
//  3. Capacity from utilization (a resolved alert's as if firing). A bare number in
//     (1, 2] is read as a percentage; when that reading decides none, a
//     severity that pages or tickets decides instead (1.2 may be 120%).
//  4. Regression from baseline_ratio ("+35%", with its sign, is a change:
//     1.35), or value ÷ baseline, against the sector's sensitivity, in the
//     KPI's direction: regression_direction, else the known-KPI table (kpi
//     label, classification), else higher is worse. Lower is worse regresses below 1/threshold. With the direction
//     unknown, a drop that would regress if lower were worse gives way to a
//     severity that pages or tickets.
//  5. Severity: a paging label (pager, page: any value but "", false, no,
//     none, off or 0) pages; on an alert Grafana SLO generated
//     (grafana_slo_uuid …) grafana_slo_severity decides; otherwise the
//     labels severity, grafana_slo_severity, severity_level, priority,
//     level and urgency, by word (critical, high, p1, s4, info …), number
//     (1 = most severe; 3.0 is 3) or parts that agree (P1-Critical; never
//     a negation such as non-critical), NFKC-normalised without format
//     characters, a louder grafana_slo_severity winning. The first page or
//     ticket decides, but a later label's page beats an earlier label's
//     ticket (severity="warning" beside priority="P1" pages; not over
//     the word ticket, nor from level, often a log level); a none
//     (severity="none") only when no label says more, never over another
//     label's P1.
//  6. Default: an alert with no input for any policy, or only unrecognised
//     severities, is a ticket by policy "default" (default_action), so that
//     a human sees it. None is never silent: it comes from an info-level
//     severity or an input below every threshold, with its reasons.
//
// A policy "has its input" when the alert carries the values it reads, even
// if those values are below every threshold: burn_rate_1h="14.4" with
// burn_rate_5m="20" decides none by the burn-rate policy, it does not fall
// through to the severity label. Numbers are read as Prometheus templates
// print them, humanize's and humanize1024's unit prefixes included (932m,
// 1.5k, 2Gi). Values that cannot be read (NaN, ±Inf, a comma, an unknown
// suffix, garbage) count as absent, and the decision's reasons say which
// value was ignored and why.
//
// Every input is read from the alert's labels first, then its annotations.
//
// # Burn-rate arithmetic
//
// A burn rate is how fast the error budget is being spent relative to the
// rate that spends exactly the whole budget over the SLO period: burn rate 1
// uses 100% of a 30-day budget in 30 days. Spending a fraction f of the
// budget within an alert window w therefore takes a burn rate of
//
//	factor = f × period ÷ w
//
// which gives the defaults of the Google SRE workbook (period = 30d = 720h):
//
//	2% in 1h:   0.02 × 720h ÷ 1h  = 14.4  → page (budget gone in ~2 days)
//	5% in 6h:   0.05 × 720h ÷ 6h  = 6     → page (budget gone in 5 days)
//	10% in 1d:  0.10 × 720h ÷ 24h = 3     → ticket (Sloth's extra pair)
//	10% in 3d:  0.10 × 720h ÷ 72h = 1     → ticket (budget gone by period end)
//
// Each tier also needs a short window (1/12 of the long one) above the same
// factor, so that an alert stops soon after the burn stops: the long window
// gives significance, the short one gives a fast reset.
package policies
