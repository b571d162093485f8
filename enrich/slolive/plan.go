package slolive

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Recording-rule names of the generators, as they write them.
const (
	slothSLIPrefix       = "slo:sli_error:ratio_rate"                // + window: error ratio
	slothErrorBudget     = "slo:error_budget:ratio"                  // 1 - objective
	slothBudgetRemaining = "slo:period_error_budget_remaining:ratio" // 1 - period burn
	pyrraBurnInfix       = ":burnrate"                               // <metric>:burnrate<window>: error ratio
	pyrraObjective       = "pyrra_objective"                         // e.g. 0.99
	pyrraAvailability    = "pyrra_availability"                      // over the SLO window
)

// customWindows are the windows queried through expr.burn_rate: those of
// the default burn-rate tiers.
var customWindows = []time.Duration{
	5 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	6 * time.Hour, 24 * time.Hour, 72 * time.Hour,
}

// The names of the queries of a plan; burn_<window> for custom windows.
const (
	qBurn       = "burn"
	qBurnBefore = "burn_before"
	qBudget     = "budget"
)

// query is one instant query of a plan.
type query struct {
	name string
	expr string
	// ago evaluates the query at now - ago.
	ago time.Duration
}

// plan is the query set of one SLO identity.
type plan struct {
	kind    Kind
	slo     string
	key     string // identity for the cache and singleflight
	labels  map[string]string
	queries []query
	// exemplars is the exemplar selector, "" to derive it from the results
	// (Pyrra) or to read none.
	exemplars string
	// exemplarsErr is why exemplar_query did not render for the alert
	// (no exemplars then), nil when it did or there is none.
	exemplarsErr error
}

// ErrNotSLO says that an alert has no SLO identity that live context can be
// read for: no sloth_id, no slo label, or a hand-rolled SLO while
// prometheus.expr is not configured.
var ErrNotSLO = errors.New("no live SLO context for this alert")

// makePlan reads the alert's SLO identity and builds its queries.
func makePlan(a *alert.Alert, tpl *templates) (*plan, error) {
	l := a.Labels
	var p *plan
	switch {
	case l["sloth_id"] != "":
		id := l["sloth_id"]
		sel := fmt.Sprintf(`sloth_id=%s}`, promQuote(id))
		// One Sloth SLO may record one series per service (an SLI grouped
		// by a label): each alert reads its own, and caches apart.
		p = &plan{kind: KindSloth, slo: id, key: "sloth\x00" + id + "\x00" + groupingKey(l), labels: l, queries: []query{
			{name: qBurn, expr: `{__name__=~"` + slothSLIPrefix + `.+",` + sel},
			{name: qBurnBefore, expr: `{__name__=~"` + slothSLIPrefix + `.+",` + sel, ago: TrendLookback},
			{name: qBudget, expr: `{__name__=~"` + slothErrorBudget + `|` + slothBudgetRemaining + `",` + sel},
		}}
	case l["slo"] != "" && hasKey(l, "long") && hasKey(l, "short"):
		id := l["slo"]
		sel := fmt.Sprintf(`slo=%s}`, promQuote(id))
		p = &plan{kind: KindPyrra, slo: id, key: "pyrra\x00" + id + "\x00" + groupingKey(l), labels: l, queries: []query{
			{name: qBurn, expr: `{__name__=~".+` + pyrraBurnInfix + `.+",` + sel},
			{name: qBurnBefore, expr: `{__name__=~".+` + pyrraBurnInfix + `.+",` + sel, ago: TrendLookback},
			{name: qBudget, expr: `{__name__=~"` + pyrraObjective + `|` + pyrraAvailability + `",` + sel},
		}}
	case tpl.burn != nil && (l["slo"] != "" || hasBurnRates(l) || hasBurnRates(a.Annotations)):
		var err error
		if p, err = customPlan(a, tpl); err != nil {
			return nil, err
		}
	default:
		return nil, ErrNotSLO
	}
	if tpl.exemplars != nil {
		// Exemplars are trace links beside the burn: a query that does
		// not render for this alert (a label it lacks) drops them, not
		// the lookup — which decided a page on its live burn.
		if sel, err := render(tpl.exemplars, TemplateData{SLO: p.slo, Labels: l}); err == nil {
			p.exemplars = sel
		} else {
			p.exemplarsErr = fmt.Errorf("render prometheus.exemplar_query: %w", err)
		}
	}
	return p, nil
}

// alertOnlyLabels are the labels of a Pyrra or Sloth alert that its
// recording rules' series never carry: a Sloth SLO's page and ticket
// alerts (sloth_severity) read one query set, as a Pyrra SLO's do.
var alertOnlyLabels = map[string]bool{"alertname": true, "long": true, "short": true, "severity": true, "exhaustion": true, "slo": true,
	"sloth_severity": true}

// groupingKey is the alert's labels that may select among a Pyrra SLO's
// series (agrees): the alerts of one grouped SLO (one per route, say)
// read different burn rates, so they must not share one cached answer.
func groupingKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		if !alertOnlyLabels[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// customPlan renders the expression templates for a hand-rolled SLO. Its
// identity is the set of rendered expressions: alerts that render the same
// queries share one answer.
func customPlan(a *alert.Alert, tpl *templates) (*plan, error) {
	id := a.Labels["slo"]
	if id == "" {
		id = a.Labels["alertname"]
	}
	p := &plan{kind: KindCustom, slo: id}
	data := TemplateData{SLO: id, Labels: a.Labels}
	var key strings.Builder
	key.WriteString("custom")
	for _, w := range customWindows {
		data.Window = windowName(w)
		e, err := render(tpl.burn, data)
		if err != nil {
			return nil, fmt.Errorf("render prometheus.expr.burn_rate: %w", err)
		}
		p.queries = append(p.queries, query{name: "burn_" + data.Window, expr: e})
		if w == time.Hour {
			p.queries = append(p.queries, query{name: qBurnBefore, expr: e, ago: TrendLookback})
		}
		key.WriteString("\x00" + e)
	}
	if tpl.budget != nil {
		e, err := render(tpl.budget, TemplateData{SLO: id, Labels: a.Labels})
		if err != nil {
			return nil, fmt.Errorf("render prometheus.expr.budget_remaining: %w", err)
		}
		p.queries = append(p.queries, query{name: qBudget, expr: e})
		key.WriteString("\x00" + e)
	}
	p.key = key.String()
	return p, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// templates are the parsed templates of a Config.
type templates struct {
	burn, budget, exemplars, traceURL *template.Template
}

func parseTemplates(c *Config) (*templates, error) {
	var t templates
	var err error
	for _, f := range []struct {
		dst  **template.Template
		key  string
		text string
	}{
		{&t.burn, "prometheus.expr.burn_rate", c.Expr.BurnRate},
		{&t.budget, "prometheus.expr.budget_remaining", c.Expr.BudgetRemaining},
		{&t.exemplars, "prometheus.exemplar_query", c.ExemplarQuery},
		{&t.traceURL, "prometheus.trace_url_template", c.TraceURLTemplate},
	} {
		if *f.dst, err = parseTemplate(f.key, f.text); err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
	}
	return &t, nil
}

func render(t *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// results are the answers of a plan's queries by query name.
type results map[string]model.Vector

// assemble turns the answers into a Context. ErrNoData when no burn rate
// could be computed.
func (p *plan) assemble(r results, at time.Time) (*Context, error) {
	c := &Context{SLO: p.slo, Kind: p.kind, At: at}
	var before map[time.Duration]float64
	switch p.kind {
	case KindSloth:
		// The series that agree with the alert's labels; when none does,
		// those that contradict none of them (agreeing).
		match := agreeing(r[qBurn], slothSLIPrefix, "", p.labels)
		budget := strictest(r[qBudget], slothErrorBudget, match)
		if budget == nil {
			if zeroBudget(r[qBudget], slothErrorBudget, 0) {
				return nil, fmt.Errorf("%w: %s of sloth_id %q is 0", errNoBudget, slothErrorBudget, p.slo)
			}
			return nil, fmt.Errorf("%w: no %s for sloth_id %q", ErrNoData, slothErrorBudget, p.slo)
		}
		eb := float64(budget.Value)
		c.Burns = burnsByName(r[qBurn], slothSLIPrefix, "", eb, match)
		before = toMap(burnsByName(r[qBurnBefore], slothSLIPrefix, "", eb, match))
		if v, ok := lowest(r[qBudget], slothBudgetRemaining, match); ok {
			c.BudgetRemaining, c.HasBudget = v, true
		}
	case KindPyrra:
		// SLOs of one name in several namespaces (or clusters) record
		// pyrra_objective once each: the alert's is the one whose labels
		// agree with it; of several (none agrees), the strictest.
		obj := strictest(r[qBudget], pyrraObjective, matcher{labels: p.labels})
		if obj == nil {
			obj = strictest(r[qBudget], pyrraObjective, matcher{labels: p.labels, loose: true})
		}
		if obj == nil {
			if zeroBudget(r[qBudget], pyrraObjective, 1) {
				return nil, fmt.Errorf("%w: %s of slo %q is 1", errNoBudget, pyrraObjective, p.slo)
			}
			if strictest(r[qBudget], pyrraObjective, matcher{}) != nil {
				// Objectives there are, of other namespaces (or tenants)
				// than the alert's: not a missing flag.
				return nil, fmt.Errorf("%w: no %s of slo %q agrees with the alert's labels", ErrNoData, pyrraObjective, p.slo)
			}
			if len(burnsByName(r[qBurn], "", pyrraBurnInfix, 1, matcher{})) > 0 {
				// The burn series are there: only the objective is not
				// (Pyrra records it with --generic-rules).
				return nil, fmt.Errorf("%w: no %s for slo %q", errNoObjective, pyrraObjective, p.slo)
			}
			return nil, fmt.Errorf("%w: no %s for slo %q", ErrNoData, pyrraObjective, p.slo)
		}
		eb := 1 - float64(obj.Value)
		// As Sloth's: the series that agree with the alert's labels, else
		// those that contradict none of them.
		match := agreeing(r[qBurn], "", pyrraBurnInfix, p.labels)
		c.Burns = burnsByName(r[qBurn], "", pyrraBurnInfix, eb, match)
		before = toMap(burnsByName(r[qBurnBefore], "", pyrraBurnInfix, eb, match))
		// pyrra_availability is recorded with pyrra_objective's labels.
		if av := sameSeries(r[qBudget], pyrraAvailability, obj.Metric); av != nil && finite(float64(av.Value)) {
			c.BudgetRemaining, c.HasBudget = (float64(av.Value)-float64(obj.Value))/eb, true
		}
	case KindCustom:
		for _, w := range customWindows {
			if v, ok := worst(r["burn_"+windowName(w)]); ok {
				c.Burns = append(c.Burns, Burn{Window: w, Rate: v})
			}
		}
		if v, ok := worst(r[qBurnBefore]); ok {
			before = map[time.Duration]float64{time.Hour: v}
		}
		// The budget of the worst series is its lowest, as the burn of
		// the worst is its highest: a hand-rolled SLO recorded per
		// cluster shows the cluster that is spending its budget.
		if v, ok := lowest(r[qBudget], "", matcher{}); ok {
			c.BudgetRemaining, c.HasBudget = v, true
		}
	}
	if len(c.Burns) == 0 {
		if len(r[qBurn]) > 0 && !slices.ContainsFunc(r[qBurn], func(s *model.Sample) bool { return finite(float64(s.Value)) }) {
			return nil, fmt.Errorf("%w: %s SLO %q", errNoFiniteBurn, p.kind, p.slo)
		}
		return nil, fmt.Errorf("%w: no burn rate for %s SLO %q", ErrNoData, p.kind, p.slo)
	}
	c.Burns = sortBurns(c.Burns)
	c.setTrend(before)
	return c, nil
}

// setTrend compares the burn over the window nearest to 1h with the same
// window TrendLookback ago.
func (c *Context) setTrend(before map[time.Duration]float64) {
	best := -1
	for i, b := range c.Burns {
		if best < 0 || absDur(b.Window-time.Hour) < absDur(c.Burns[best].Window-time.Hour) {
			best = i
		}
	}
	b := c.Burns[best]
	c.TrendWindow = b.Window
	if v, ok := before[b.Window]; ok {
		c.BurnBefore = v
		c.Trend = trend(b.Rate, v)
	}
}

// burnsByName reads one burn rate per window from series whose name is
// prefix+window (Sloth) or <metric>+infix+window (Pyrra), dividing the error
// ratio by the error budget eb. With match, only series whose labels (other
// than __name__ and slo) agree with match count; of several series of a
// window the highest burn wins.
func burnsByName(v model.Vector, prefix, infix string, eb float64, match matcher) []Burn {
	by := map[time.Duration]float64{}
	for _, s := range v {
		name := string(s.Metric[model.MetricNameLabel])
		var suffix string
		switch {
		case prefix != "":
			var ok bool
			if suffix, ok = strings.CutPrefix(name, prefix); !ok {
				continue
			}
		default:
			i := strings.LastIndex(name, infix)
			if i <= 0 {
				continue
			}
			suffix = name[i+len(infix):]
		}
		d, err := model.ParseDuration(suffix)
		// An error ratio below 0 is a recording rule's defect, not a burn.
		if err != nil || d <= 0 || !finite(float64(s.Value)) || s.Value < 0 || !agrees(s.Metric, match) {
			continue
		}
		rate := float64(s.Value) / eb
		if old, ok := by[time.Duration(d)]; !ok || rate > old {
			by[time.Duration(d)] = rate
		}
	}
	out := make([]Burn, 0, len(by))
	for w, r := range by {
		out = append(out, Burn{Window: w, Rate: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Window < out[j].Window })
	return out
}

// matcher picks the series of an SLO's answer that are the alert's. Its
// zero value takes every series (a hand-rolled SLO shows its worst).
// Strict, a series agrees when each of its labels (but __name__, slo and
// sloth_window, the series's, never an alert's, and alert.ReplicaLabels —
// the series of one SLO recorded by either replica of an HA pair, read
// through a querier that does not deduplicate them, agree with an alert
// sent by any: the alert of replica 2 read "no data" when only replicas 0
// and 1 answered) has the
// alert's value.
// Loose, when none of them has another value than the alert's: a series
// may carry a label the alert lacks (an undeduplicated HA pair's replica,
// a federated tenant's id), never another value of one it has — another
// objective_name's, another service's burn is not this alert's (an
// autometrics SLO's alert for checkout read api's 20× when checkout had
// no series).
type matcher struct {
	labels map[string]string
	loose  bool
}

// agreeing is the matcher burnsByName reads the burn series v with:
// strict when some series agree with labels, else loose.
func agreeing(v model.Vector, prefix, infix string, labels map[string]string) matcher {
	strict := matcher{labels: labels}
	if len(burnsByName(v, prefix, infix, 1, strict)) > 0 {
		return strict
	}
	return matcher{labels: labels, loose: true}
}

// agrees reports whether match takes the series m.
func agrees(m model.Metric, match matcher) bool {
	if match.labels == nil {
		return true
	}
	for k, v := range m {
		if k == model.MetricNameLabel || k == "slo" || k == "sloth_window" || alert.ReplicaLabels[string(k)] {
			continue
		}
		mv, ok := match.labels[string(k)]
		if (ok || !match.loose) && mv != string(v) {
			return false
		}
	}
	return true
}

// pyrraBase returns the metric a Pyrra burnrate series was recorded from,
// without _total/_count ("http_requests" of "http_requests:burnrate5m").
func pyrraBase(name string) string {
	if i := strings.LastIndex(name, pyrraBurnInfix); i > 0 {
		return name[:i]
	}
	return ""
}

// pyrraExemplarSelector derives an exemplar selector from the Pyrra burn
// series that matched the alert: the histogram buckets or counter of the
// metric the SLO was generated from, with the series' equality labels.
func pyrraExemplarSelector(v model.Vector, match matcher) string {
	for _, s := range v {
		if !agrees(s.Metric, match) {
			continue
		}
		base := pyrraBase(string(s.Metric[model.MetricNameLabel]))
		if base == "" {
			continue
		}
		// The name as a regex of itself (a UTF-8 name's dots are no
		// wildcards), the label names quoted where Prometheus 3 needs it
		// (service.name): unquoted, the selector was refused (bad_data)
		// and the traces dropped.
		q := regexp.QuoteMeta(base)
		parts := []string{"__name__=~" + promQuote(q+"_bucket|"+q+"_total|"+q+"_count|"+q)}
		var keys []string
		for k := range s.Metric {
			if k != model.MetricNameLabel && k != "slo" {
				keys = append(keys, string(k))
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := k
			if !model.LegacyValidation.IsValidLabelName(k) {
				name = promQuote(k) // a UTF-8 name, as Prometheus 3 writes it
			}
			parts = append(parts, name+"="+promQuote(string(s.Metric[model.LabelName(k)])))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return ""
}

// strictest returns, of the samples of v named name whose labels agree with
// match (agrees), the one with the smallest error budget: for Sloth's
// slo:error_budget:ratio (1 − objective, in (0, 1)) the lowest value, for
// pyrra_objective (in (0, 1)) the highest. nil when there is none: the
// burn rates divided by it are the highest any of them gives.
func strictest(v model.Vector, name string, match matcher) *model.Sample {
	var best *model.Sample
	for _, s := range v {
		f := float64(s.Value)
		if string(s.Metric[model.MetricNameLabel]) != name || !(f > 0 && f < 1) || !agrees(s.Metric, match) {
			continue
		}
		if best == nil {
			best = s
			continue
		}
		stricter := f < float64(best.Value) // an error budget
		if name == pyrraObjective {
			stricter = f > float64(best.Value) // an objective
		}
		if stricter {
			best = s
		}
	}
	return best
}

// sameSeries returns the sample of v named name whose labels, but for
// __name__, are those of m, or nil.
func sameSeries(v model.Vector, name string, m model.Metric) *model.Sample {
	for _, s := range v {
		if string(s.Metric[model.MetricNameLabel]) != name || len(s.Metric) != len(m) {
			continue
		}
		same := true
		for k, val := range m {
			if k != model.MetricNameLabel && s.Metric[k] != val {
				same = false
				break
			}
		}
		if same {
			return s
		}
	}
	return nil
}

// lowest returns the lowest finite value of the samples of v named name
// ("" for any name) whose labels agree with match (agrees): the budget left
// of the series that has the least.
func lowest(v model.Vector, name string, match matcher) (float64, bool) {
	low, ok := 0.0, false
	for _, s := range v {
		f := float64(s.Value)
		if (name != "" && string(s.Metric[model.MetricNameLabel]) != name) || !finite(f) || !agrees(s.Metric, match) {
			continue
		}
		if !ok || f < low {
			low, ok = f, true
		}
	}
	return low, ok
}

// errNoObjective is ErrNoData for a Pyrra SLO whose burn-rate series
// Prometheus holds without pyrra_objective (Pyrra writes that series with
// --generic-rules only): the burn rates cannot be scaled by the budget.
var errNoObjective = fmt.Errorf("%w: the burn-rate series are there, the objective is not", ErrNoData)

// errNoFiniteBurn is ErrNoData for an SLO whose burn-rate series are all
// NaN or infinite (no traffic: 0/0).
var errNoFiniteBurn = fmt.Errorf("%w: every burn-rate series is NaN or infinite", ErrNoData)

// errNoBudget is ErrNoData for an SLO whose objective leaves no error
// budget (100 %): its series are there, but no burn rate is defined.
var errNoBudget = fmt.Errorf("%w: the objective leaves no error budget", ErrNoData)

// zeroBudget reports whether v holds a sample named name of value at:
// an error budget of 0 (Sloth) or an objective of 1 (Pyrra).
func zeroBudget(v model.Vector, name string, at float64) bool {
	for _, s := range v {
		if string(s.Metric[model.MetricNameLabel]) == name && float64(s.Value) == at {
			return true
		}
	}
	return false
}

// worst returns the highest finite value of v that is not below 0: the
// burn rate of the series that burns fastest (a burn below 0 is a
// recording rule's defect, as burnsByName reads it).
func worst(v model.Vector) (float64, bool) {
	best, ok := 0.0, false
	for _, s := range v {
		f := float64(s.Value)
		if finite(f) && f >= 0 && (!ok || f > best) {
			best, ok = f, true
		}
	}
	return best, ok
}

func toMap(bs []Burn) map[time.Duration]float64 {
	m := make(map[time.Duration]float64, len(bs))
	for _, b := range bs {
		m[b.Window] = b.Rate
	}
	return m
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
