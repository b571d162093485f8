package slolive

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Kind says which generator's recording rules an SLO's live context was
// read from.
type Kind string

// The kinds of SLO.
const (
	// KindSloth reads Sloth's slo:sli_error:ratio_rate<window>,
	// slo:error_budget:ratio and slo:period_error_budget_remaining:ratio.
	KindSloth Kind = "sloth"
	// KindPyrra reads Pyrra's <metric>:burnrate<window> error ratios and
	// its pyrra_objective and pyrra_availability generic rules.
	KindPyrra Kind = "pyrra"
	// KindCustom renders the configured expression templates.
	KindCustom Kind = "custom"
)

// Trend says how the burn rate moved over the last TrendLookback.
type Trend string

// The trends; TrendUnknown when the burn 15 minutes ago is not known.
const (
	TrendRising  Trend = "rising"
	TrendFalling Trend = "falling"
	TrendSteady  Trend = "steady"
	TrendUnknown Trend = ""
)

// TrendLookback is how far back the trend compares the burn rate.
const TrendLookback = 15 * time.Minute

// ReasonLive is what a decision's reason says about burn rates that came
// from Prometheus rather than from the alert.
const ReasonLive = "live from Prometheus"

// Burn is the burn rate over one window: how many times faster than the
// rate that spends exactly the whole error budget over the SLO period.
type Burn struct {
	Window time.Duration
	Rate   float64
}

// Exemplar is one trace of a bad request, from the SLI's exemplars.
type Exemplar struct {
	TraceID string
	// URL is the link built from trace_url_template ("" without one).
	URL string
	// Value is the observation, e.g. the request's latency in seconds.
	Value float64
	At    time.Time
}

// Context is the live state of one SLO read from Prometheus. A Context
// returned by Client.Lookup is shared by every alert of the SLO within the
// cache TTL: treat it as read-only.
type Context struct {
	// SLO is the SLO identity (sloth_id, or Pyrra's or the alert's slo).
	SLO  string
	Kind Kind
	// At is when Prometheus evaluated the queries.
	At time.Time
	// Burns are the burn rates found, shortest window first.
	Burns []Burn
	// BudgetRemaining is the error budget left over the SLO period as a
	// ratio (1 untouched, negative overspent); valid when HasBudget.
	BudgetRemaining float64
	HasBudget       bool
	// Trend compares the burn over TrendWindow now with TrendLookback ago.
	Trend       Trend
	TrendWindow time.Duration
	// BurnBefore is the burn over TrendWindow TrendLookback ago.
	BurnBefore float64
	// Exemplars are up to MaxExemplars traces, worst first.
	Exemplars []Exemplar
	// Warnings are those Prometheus answered with: the answer may be
	// partial (a Thanos store or a federated Prometheus that did not
	// answer), the series that burn among those missing.
	Warnings []string
}

// maxWarningLen bounds the warning the summary quotes.
const maxWarningLen = 120

// partial says, for the summary and BelowEveryTier's note, that the
// answer may lack series, quoting Prometheus' first warning.
func (c *Context) partial() string {
	w := c.Warnings[0]
	if r := []rune(w); len(r) > maxWarningLen {
		w = string(r[:maxWarningLen]) + "…"
	}
	return "partial answer, Prometheus warned: " + w
}

// MaxExemplars bounds the exemplars a Context carries.
const MaxExemplars = 5

// Burn returns the burn rate over the window nearest to w (within 10 %, as
// Pyrra scales its windows with the SLO period: 1h4m for 1h at 30d).
func (c *Context) Burn(w time.Duration) (float64, bool) {
	best, found := 0.0, false
	bestDiff := time.Duration(math.MaxInt64)
	for _, b := range c.Burns {
		d := b.Window - w
		if d < 0 {
			d = -d
		}
		if d <= w/10 && d < bestDiff {
			best, bestDiff, found = b.Rate, d, true
		}
	}
	return best, found
}

// budgetPercent renders a budget ratio as a percentage for Summary: whole
// percents, as "37 %" and "-12 %", but one decimal under 1 % ("0.4 %",
// "-0.4 %") and "< 0.1 %" closer to 0 — rounded to whole percents, an
// overspend of 0.4 % read "-0 %" and a budget nearly spent "0 % left".
func budgetPercent(ratio float64) string {
	p := ratio * 100
	switch a := math.Abs(p); {
	case a >= 1 || p == 0:
		return fmt.Sprintf("%.0f %%", p)
	case a < 0.05:
		return "< 0.1 %"
	default:
		return fmt.Sprintf("%.1f %%", p)
	}
}

// summaryWindows are the windows the one-line summary shows: the long
// windows of the two page tiers.
var summaryWindows = []time.Duration{time.Hour, 6 * time.Hour}

// Summary renders the context in one line for PagerDuty custom_details,
// Slack and the journal, e.g. "budget 37 % left · burn 1h 15.2× · 6h 7.1× ·
// rising". Parts without data are left out, but the budget: "budget
// unknown" when it was not read (a renamed recording rule, a hand-rolled
// SLO without one), so that an on-call tells "not read" from "not shown".
func (c *Context) Summary() string {
	var parts []string
	if !c.HasBudget {
		parts = append(parts, "budget unknown")
	} else {
		if c.BudgetRemaining < 0 {
			parts = append(parts, "budget overspent ("+budgetPercent(c.BudgetRemaining)+")")
		} else {
			parts = append(parts, "budget "+budgetPercent(c.BudgetRemaining)+" left")
		}
	}
	// The long windows of the page tiers; when neither was read (the 1h
	// ratio NaN: no traffic in it), the shorter ones that were — the
	// summary read "budget unknown" alone while custom_details held
	// burn_5m 20 (an audit).
	var shown []Burn
	for _, w := range summaryWindows {
		if r, ok := c.Burn(w); ok {
			shown = append(shown, Burn{Window: w, Rate: r})
		}
	}
	if len(shown) == 0 {
		shown = c.Burns[:min(len(c.Burns), 2)]
	}
	for i, b := range shown {
		p := windowName(b.Window) + " " + strconv.FormatFloat(b.Rate, 'f', 1, 64) + "×"
		if i == 0 {
			p = "burn " + p
		}
		parts = append(parts, p)
	}
	if c.Trend != TrendUnknown {
		parts = append(parts, string(c.Trend))
	}
	if len(c.Warnings) > 0 {
		parts = append(parts, c.partial())
	}
	return strings.Join(parts, " · ")
}

// Details returns the context as flat fields for PagerDuty custom_details
// and the journal: "summary", "budget_remaining" (a ratio), "burn_<window>"
// per window, "trend", "source" ("sloth", "pyrra" or "custom") and, for
// a partial answer, "warnings", numbers rounded to 3 significant digits.
func (c *Context) Details() map[string]string {
	d := make(map[string]string, len(c.Burns)+4)
	d["summary"] = c.Summary()
	d["source"] = string(c.Kind)
	if c.HasBudget {
		d["budget_remaining"] = strconv.FormatFloat(c.BudgetRemaining, 'g', 3, 64)
	}
	for _, b := range c.Burns {
		d["burn_"+windowName(b.Window)] = strconv.FormatFloat(b.Rate, 'g', 3, 64)
	}
	if c.Trend != TrendUnknown {
		d["trend"] = string(c.Trend)
	}
	if len(c.Warnings) > 0 {
		d["warnings"] = strings.Join(c.Warnings, "; ")
	}
	return d
}

// BurnRateValues returns the burn rates as burn_rate_<window> values, the
// form the burn-rate policy reads from labels and annotations, at full
// precision (a rounded 14.41 must not become a 14.4 that does not page).
func (c *Context) BurnRateValues() map[string]string {
	out := make(map[string]string, len(c.Burns))
	for _, b := range c.Burns {
		out["burn_rate_"+windowName(b.Window)] = strconv.FormatFloat(b.Rate, 'g', -1, 64)
	}
	return out
}

// WithBurnRates returns a copy of a whose annotations carry the live burn
// rates (BurnRateValues), for the burn-rate policy, when a has no
// burn_rate_* label or annotation of its own; the decision's reasons should
// then add ReasonLive. Otherwise it returns a itself and false. a is not
// modified.
func (c *Context) WithBurnRates(a *alert.Alert) (*alert.Alert, bool) {
	if len(c.Burns) == 0 || hasBurnRates(a.Labels) || hasBurnRates(a.Annotations) {
		return a, false
	}
	cp := *a
	cp.Annotations = make(map[string]string, len(a.Annotations)+len(c.Burns))
	for k, v := range a.Annotations {
		cp.Annotations[k] = v
	}
	for k, v := range c.BurnRateValues() {
		cp.Annotations[k] = v
	}
	return &cp, true
}

func hasBurnRates(kv map[string]string) bool {
	for k := range kv {
		if strings.HasPrefix(k, "burn_rate_") {
			return true
		}
	}
	return false
}

// BelowEveryTier reports whether the live burn is at or below the factor of
// every tier (over its long or its short window) that it has both windows
// for, and at least one such tier: a page decided from the alert's labels
// whose burn has since fallen. note says so with the numbers, for the
// notification ("live burn now below every tier: 1h 2.1× ≤ 13.44 …"). A
// partial answer (Warnings) is never below every tier.
//
// The tiers' factors are those of a 30-day SLO (the workbook's 14.4 and 6:
// 2 % and 5 % of the budget in 1 h and 6 h); an SLO over 28 days spends as
// much of its budget at 28/30 of them, and its generators page there —
// Sloth at 13.44 and 5.6, Pyrra at 14 and 7. A burn is below a tier only
// at or below that lower factor: a Pyrra page that had just fired at 14.2×
// read "fallen below every tier" against 14.4 (an audit).
func (c *Context) BelowEveryTier(tiers []policies.Tier) (below bool, note string) {
	if len(c.Warnings) > 0 {
		// A partial answer may lack the series that burn: it cannot say
		// that the burn has fallen.
		return false, ""
	}
	var parts []string
	for _, t := range tiers {
		lw, sw := time.Duration(t.Long), time.Duration(t.Short)
		lv, okL := c.Burn(lw)
		sv, okS := c.Burn(sw)
		if !okL || !okS {
			continue
		}
		f := t.Factor * 28 / 30
		if lv > f && sv > f {
			return false, ""
		}
		v, w := lv, lw
		if lv > f {
			v, w = sv, sw // the short window is the one below
		}
		parts = append(parts, fmt.Sprintf("%s %.1f× ≤ %s", windowName(w), v, strconv.FormatFloat(f, 'g', 4, 64)))
	}
	if len(parts) == 0 {
		return false, ""
	}
	return true, "live burn now below every tier (" + ReasonLive + "): " + strings.Join(parts, ", ")
}

// ExemplarHint returns the burn-exemplars hint listing the exemplars'
// trace ids and links, or false when there are none.
func (c *Context) ExemplarHint() (alert.Hint, bool) {
	if len(c.Exemplars) == 0 {
		return alert.Hint{}, false
	}
	var b strings.Builder
	b.WriteString("traces of bad requests in the alert window, worst first: ")
	for i, e := range c.Exemplars {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.TraceID)
		fmt.Fprintf(&b, " (%s)", strconv.FormatFloat(e.Value, 'g', 4, 64))
		if e.URL != "" {
			b.WriteString(" " + e.URL)
		}
	}
	return alert.Hint{ID: "burn-exemplars", Text: b.String(), Specific: true}, true
}

// sortBurns orders burns by window and drops duplicate windows.
func sortBurns(bs []Burn) []Burn {
	sort.Slice(bs, func(i, j int) bool { return bs[i].Window < bs[j].Window })
	out := bs[:0]
	for _, b := range bs {
		if len(out) > 0 && out[len(out)-1].Window == b.Window {
			continue
		}
		out = append(out, b)
	}
	return out
}

// trend compares a burn now with the same burn TrendLookback ago: more than
// 10 % up is rising, more than 10 % down is falling.
func trend(now, before float64) Trend {
	switch {
	case now > before*1.1 && now-before > 0.05:
		return TrendRising
	case now < before*0.9 && before-now > 0.05:
		return TrendFalling
	}
	return TrendSteady
}

func windowName(d time.Duration) string { return model.Duration(d).String() }
