package policies

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// The policy names a Decision carries.
const (
	PolicySloth      = "sloth"
	PolicyPyrra      = "pyrra"
	PolicyBurnRate   = "burn-rate"
	PolicyCapacity   = "capacity"
	PolicyRegression = "regression"
	PolicySeverity   = "severity"
	PolicyDefault    = "default"
)

// ReasonDefault is the reason of a decision that no policy input made.
const ReasonDefault = "no policy input: ticket so that a human sees it"

// The label and annotation names the policies read.
const (
	labelSlothSeverity   = "sloth_severity"
	labelSlothID         = "sloth_id"
	labelSLO             = "slo"
	labelLong            = "long"
	labelShort           = "short"
	labelSeverity        = "severity"
	labelSLOPeriod       = "slo_period"
	labelPeriod          = "period"
	labelExhaustion      = "exhaustion"
	burnRatePrefix       = "burn_rate_"
	labelUtilization     = "utilization"
	labelLatencyAboveSLO = "latency_above_slo"
	labelBaselineRatio   = "baseline_ratio"
	labelValue           = "value"
	labelBaseline        = "baseline"
	labelSensitivity     = "sensitivity"
	labelBudgetRemaining = "budget_remaining"
	labelErrorBudgetRem  = "error_budget_remaining"
	labelWindow          = "window"
	labelGrafanaSeverity = "grafana_slo_severity"
	// labelLevel is the severity label a later page does not read over
	// an earlier ticket (laterPage).
	labelLevel         = "level"
	labelGrafanaUUID   = "grafana_slo_uuid"
	labelGrafanaWindow = "grafana_slo_window"
	labelGrafanaOrigin = "__grafana_origin"
	grafanaSLOOrigin   = "plugin/grafana-slo-app"
	slothPrefix        = "sloth_"
)

// Engine applies the policies of a Config. It implements alert.Decider
// and is safe for concurrent use: it is never written after New.
type Engine struct {
	sloth    map[string]alert.Action
	pyrraSev map[string]alert.Action
	pyrraDiv float64
	// pyrraDivText is pyrraDiv as the reasons print it ("112").
	pyrraDivText string
	// pyrraTable names the window table in reasons: "28-day table", or
	// "configured window table" when pyrra.windows is not the default.
	pyrraTable string
	pyrraDef   time.Duration
	pyrra      []pyrraWindow
	tiers      []tier
	windows    map[string]time.Duration // burn_rate_<suffix> → window, for the configured windows
	tierPairs  string                   // the tiers' window pairs, for reasons: "1h/5m, 6h/30m, …"
	capacity   CapacityConfig
	capWarn    string // capacity thresholds rendered once ("80.0%")
	capCrit    string
	regr       RegressionConfig
	baseline   string // regression.baseline_window, rendered once
	sevLabels  []string
	// grafana: grafana_slo_severity is one of sevLabels, so Grafana SLO's
	// tier label is read (decideSeverity).
	grafana bool
	// sevLower: every severity label is lower-case ASCII (mayFold).
	sevLower   bool
	pageLabels []string
	// notInIdentity are the labels left out of SLO identities: the fixed
	// ones (identityExcluded) and the configured severity and paging
	// labels, which differ between the page and the ticket of one SLO.
	notInIdentity map[string]bool
	severity      map[string]alert.Action
	sevNums       SeverityNumbers
	deflt         alert.Action
}

type pyrraWindow struct {
	long, short time.Duration
	action      alert.Action
	name        string
}

type tier struct {
	long, short         time.Duration
	longName, shortName string
	factor              float64
	factorText          string
	action              alert.Action
	name                string // e.g. "1h/5m>14.4"
}

var _ alert.Decider = (*Engine)(nil)

// New validates cfg and builds an Engine from it. The returned error joins
// every problem of cfg (see Config.Validate).
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("validate policies: %w", err)
	}
	e := &Engine{
		sloth:         lowerKeys(cfg.Sloth),
		windows:       map[string]time.Duration{},
		capacity:      cfg.Capacity,
		capWarn:       fmtPercent(cfg.Capacity.Warn),
		capCrit:       fmtPercent(cfg.Capacity.Critical),
		regr:          cfg.Regression,
		baseline:      windowName(cfg.Regression.BaselineWindow),
		pyrraSev:      normKeys(cfg.Pyrra.Severity),
		pyrraDiv:      cfg.Pyrra.PageDivisor,
		pyrraDef:      time.Duration(cfg.Pyrra.DefaultPeriod),
		sevLabels:     append([]string(nil), cfg.SeverityLabels...),
		pageLabels:    append([]string(nil), cfg.PageLabels...),
		notInIdentity: identityExclusions(cfg),
		severity:      normKeys(cfg.Severity),
		sevNums:       cfg.SeverityNumbers,
		deflt:         cfg.DefaultAction,
	}
	e.grafana = slices.Contains(cfg.SeverityLabels, labelGrafanaSeverity)
	e.sevLower = !slices.ContainsFunc(cfg.SeverityLabels, func(l string) bool { return !lowerASCII(l) })
	e.pyrraDivText = strconv.FormatFloat(cfg.Pyrra.PageDivisor, 'f', -1, 64)
	e.pyrraTable = "28-day table"
	if !slices.Equal(cfg.Pyrra.Windows, DefaultConfig().Pyrra.Windows) {
		e.pyrraTable = "configured window table"
	}
	for _, w := range cfg.Pyrra.Windows {
		e.pyrra = append(e.pyrra, pyrraWindow{
			long: time.Duration(w.Long), short: time.Duration(w.Short),
			action: w.Action, name: pairName(w.Long, w.Short),
		})
	}
	for _, t := range cfg.BurnRate.Tiers {
		ft := fmtNum(t.Factor)
		e.tiers = append(e.tiers, tier{
			long: time.Duration(t.Long), short: time.Duration(t.Short),
			longName: windowName(t.Long), shortName: windowName(t.Short),
			factor: t.Factor, factorText: ft, action: t.Action,
			name: pairName(t.Long, t.Short) + ">" + ft,
		})
		e.windows[windowName(t.Long)] = time.Duration(t.Long)
		e.windows[windowName(t.Short)] = time.Duration(t.Short)
	}
	// The loudest tier that matches decides: try page tiers before ticket
	// tiers, keeping the configured order within an action.
	sort.SliceStable(e.tiers, func(i, j int) bool {
		return actionRank(e.tiers[i].action) < actionRank(e.tiers[j].action)
	})
	pairs := make([]string, len(e.tiers))
	for i, t := range e.tiers {
		pairs[i] = t.longName + "/" + t.shortName
	}
	e.tierPairs = strings.Join(pairs, ", ")
	return e, nil
}

func actionRank(a alert.Action) int {
	switch a {
	case alert.ActionPage:
		return 0
	case alert.ActionTicket:
		return 1
	}
	return 2
}

// decision is the work area of one Decide call.
type decision struct {
	a   *alert.Alert
	c   *alert.Classification
	now time.Time
	// notes explain inputs that were present but not used (garbage values,
	// a resolved capacity alert); they follow the deciding reasons.
	notes []string
	// burnNoTier: the alert has burn_rate_<window> values, but no tier
	// has both of its windows among them (for the default reason).
	burnNoTier bool
}

func (d *decision) note(format string, args ...any) {
	d.notes = append(d.notes, fmt.Sprintf(format, args...))
}

// Decide applies the policies in order, first match wins (SPEC §5), and
// returns the decision with its policy, tier, reasons, SLO identity and
// budget facts. now is the time of the decision; Decide reads no clock.
// c may be nil (treated as an unknown sector).
//
// Resolved alerts are decided like firing ones by every policy except
// capacity (which judges only a firing, i.e. sustained, utilization), so
// that a resolve normally reaches the receivers its firing alert reached.
func (e *Engine) Decide(a *alert.Alert, c *alert.Classification, now time.Time) alert.Decision {
	st := decision{a: a, c: c, now: now}
	out, ok := e.decideHeartbeat(&st)
	if !ok {
		out, ok = e.decideSloth(&st)
	}
	if !ok {
		out, ok = e.decidePyrra(&st)
	}
	if !ok {
		out, ok = e.decideBurnRate(&st)
	}
	if !ok {
		out, ok = e.decideCapacity(&st)
	}
	if !ok {
		out, ok = e.decideRegression(&st)
	}
	if !ok {
		out, ok = e.decideSeverity(&st)
	}
	if !ok {
		burnText := "burn_rate_<window>"
		if st.burnNoTier {
			burnText = "burn_rate_<window> for no tier's pair"
		}
		r := ReasonDefault
		if e.deflt != alert.ActionTicket {
			r = "no policy input: " + string(e.deflt) + " so that a human sees it"
		}
		out = alert.Decision{
			Action: e.deflt, Policy: PolicyDefault, Tier: "default",
			Reasons: []string{r + " (no sloth_severity, long/short window labels, " + burnText + ", " +
				"utilization, baseline_ratio (or value and baseline)" + e.pageLabelsText() +
				" or recognised " + strings.Join(e.sevLabels, "/") + ")"},
		}
	}
	b := budgetFacts(&st)
	out.Reasons = append(out.Reasons, st.notes...)
	out.SLO = sloIdentity(a, e.notInIdentity)
	if b != "" {
		out.Budget = b
		out.Reasons = append(out.Reasons, "budget: "+b)
	}
	if !a.Firing() {
		out.Reasons = append(out.Reasons, "alert is "+statusName(a)+": decided as if firing so the resolve reaches the same receivers")
	}
	return out
}

func statusName(a *alert.Alert) string {
	if a.Status == "" {
		return "without status"
	}
	return a.Status
}

// decideSloth reads Sloth's sloth_severity label. Sloth generates two
// alerts per SLO: "page" (1h/5m at 14.4 or 6h/30m at 6) and "ticket" (1d/2h
// at 3 or 3d/6h at 1), with sloth_id, sloth_service, sloth_slo labels.
func (e *Engine) decideSloth(st *decision) (alert.Decision, bool) {
	v, src, ok := lookup(st.a, labelSlothSeverity)
	if !ok {
		return alert.Decision{}, false
	}
	if slothMeta(st.a) {
		st.note("sloth_severity %s %q ignored: the alert carries sloth_slo_info's labels (sloth_version, sloth_mode, sloth_spec): a rule about Sloth's own series, not an SLO's burn", src, v)
		return alert.Decision{}, false
	}
	key := strings.TrimSpace(v)
	act, known := e.sloth[key]
	if !known {
		act, known = e.sloth[strings.ToLower(key)]
	}
	if !known {
		st.note("sloth_severity %s %q ignored: not in the sloth table", src, v)
		return alert.Decision{}, false
	}
	r := "sloth_severity=" + strconv.Quote(v) + " → " + string(act)
	if id := st.a.Labels[labelSlothID]; id != "" {
		r += " (sloth SLO " + id + ")"
	}
	return alert.Decision{Action: act, Policy: PolicySloth, Tier: strings.ToLower(key), Reasons: []string{r}}, true
}

// slothMeta reports whether a carries the labels of Sloth's sloth_slo_info
// series (sloth_version, sloth_mode, sloth_spec), which Sloth's generated
// burn-rate alerts never carry: a rule written over that series — an
// absent() check that an SLO's recording rules run, Wikimedia's
// SlothSliErrorRatioRateAbsent — keeps them, and with them the SLO's
// sloth_id and sloth_severity, but is about Sloth's rules, not the SLO's
// burn: it paged as the SLO whatever its severity said.
func slothMeta(a *alert.Alert) bool {
	for _, k := range [...]string{"sloth_version", "sloth_mode", "sloth_spec"} {
		if _, ok := a.Labels[k]; ok {
			return true
		}
	}
	return false
}

// decidePyrra decides multi-window burn-rate alerts by their long and
// short window labels: Pyrra's (which also carry Pyrra's slo label) and
// hand-written ones such as kube-prometheus' KubeAPIErrorBudgetBurn (long,
// short and severity, no slo). The reasons name Pyrra only for Pyrra's
// alerts; the policy is PolicyPyrra for both.
//
// The alert's own signals decide first (pyrraSeverity): a paging label,
// then Grafana SLO's tier label on an alert a Grafana SLO marker label
// says Grafana SLO generated, then the severity (label, then annotation:
// Pyrra up to v0.3.1 wrote it as an annotation) by the pyrra table, then
// by the severity table (an unmarked grafana_slo_severity louder than it
// wins), then the other severity labels as the severity policy reads
// them. The severity is
// authoritative: Pyrra scales its windows with the SLO period (a 7-day
// SLO's slow pair is 6h/30m), so a pair alone does not say which tier it
// is. Without a page or ticket from them the pair is ranked against the
// period the alert names (slo_period or period): long window ≤ period ÷
// page_divisor pages, else tickets; with no period, the window table (the
// 28-day table unless configured) decides, and a pair not in it is ranked
// against default_period (30d, which ranks both 28-day and 30-day windows
// right).
func (e *Engine) decidePyrra(st *decision) (alert.Decision, bool) {
	ls, okL := st.a.Labels[labelLong]
	ss, okS := st.a.Labels[labelShort]
	if !okL || !okS {
		return alert.Decision{}, false
	}
	// Pyrra puts its slo label on every alert it generates; long and
	// short alone are a hand-written multi-window alert.
	slo := st.a.Labels[labelSLO]
	// gen is pw.gen for notes: a field of pw passed to st.note would move
	// all of pw, the pair's name included, to the heap.
	gen := ""
	pw := pyrraWords{pairWord: "burn-rate window pair", table: "window-pair"}
	if slo != "" {
		gen = "pyrra "
		pw = pyrraWords{gen: gen, pairWord: "pyrra window pair", table: "pyrra", suffix: " (pyrra SLO " + slo + ")"}
	}
	long, errL := model.ParseDuration(strings.TrimSpace(ls))
	short, errS := model.ParseDuration(strings.TrimSpace(ss))
	if errL != nil || errS != nil {
		st.note("%swindows long=%q short=%q ignored: not Prometheus durations", gen, ls, ss)
		return alert.Decision{}, false
	}
	pw.inPair = "window pair " + pairName(long, short)
	if slo == "" {
		pw.inPair = "burn-rate " + pw.inPair
	}
	d, decided, sevWhy := e.pyrraSeverity(st, &pw)
	if decided {
		return d, true
	}
	periodWhy := "no period"
	if raw, src, ok := e.pyrraPeriod(st); ok {
		p, err := model.ParseDuration(strings.TrimSpace(raw))
		if err == nil && p > 0 {
			return e.rankPyrra(long, short, time.Duration(p), src+" "+strings.TrimSpace(raw), pw.pairWord, pw.suffix), true
		}
		why := "not a Prometheus duration"
		if err == nil {
			why = "not positive"
		}
		st.note("%speriod %s %q ignored: %s", gen, src, raw, why)
		periodWhy = "no usable period"
	}
	for _, w := range e.pyrra {
		if w.long == time.Duration(long) && w.short == time.Duration(short) {
			why := ", no severity or period"
			switch {
			case sevWhy != "no severity":
				// A severity that named no action: set apart from the table's name.
				why = "; " + sevWhy + ", " + periodWhy
			case periodWhy != "no period":
				why = ", no severity, " + periodWhy
			}
			r := pw.pairWord + " " + w.name + " → " + string(w.action) + " (" + e.pyrraTable + why + ")" + pw.suffix
			return alert.Decision{Action: w.action, Policy: PolicyPyrra, Tier: w.name, Reasons: []string{r}}, true
		}
	}
	return e.rankPyrra(long, short, e.pyrraDef, "default_period "+windowName(model.Duration(e.pyrraDef)), pw.pairWord, pw.suffix), true
}

// pyrraWords are the words of a long/short alert's reasons: gen ("pyrra "
// or ""), the pair ("pyrra window pair", "burn-rate window pair"), the
// severity table ("pyrra", "window-pair"), inPair ("window pair 1h/5m")
// and the suffix naming Pyrra's SLO.
type pyrraWords struct {
	gen, pairWord, table, inPair, suffix string
}

// pyrraSeverity decides a long/short alert by its own signals, as the
// severity policy reads them: a paging label (decidePageLabel); Grafana
// SLO's tier label on an alert a Grafana SLO marker label says Grafana SLO
// generated (markedGrafana), which beats severity as it does in the
// severity policy; the severity, label then annotation, by the pyrra
// table, then by the severity table — except that an unmarked
// grafana_slo_severity louder than it wins (grafanaTier.louder); then the other
// severity labels and label names in another case (severityLabelsAfter),
// where a none of severity gives way to another label's page or ticket. A
// page or ticket decides, with the pair in its reason. Otherwise it
// returns what the window pair's reason says of the severity: "no
// severity", `severity="info" names no action` …
func (e *Engine) pyrraSeverity(st *decision, pw *pyrraWords) (alert.Decision, bool, string) {
	if d, ok := e.decidePageLabel(st); ok {
		return pyrraBySeverity(d, pw), true, ""
	}
	var q quietSeverity
	g := e.grafanaTier(st)
	if d, ok := e.markedGrafana(st, &g, &q); ok {
		return pyrraBySeverity(d, pw), true, ""
	}
	sevWhy := "no severity"
	sevNote := ""
	sevUnknown := false
	if sev, src, ok := lookup(st.a, labelSeverity); ok && strings.TrimSpace(sev) != "" {
		what := labelSeverity + "=" + strconv.Quote(sev)
		if src != "label" {
			what = labelSeverity + " " + src + " " + strconv.Quote(sev)
		}
		key := severityKey(sev)
		// The pyrra table decides, none included (a none configured
		// there is the operator's); the severity table only with a page
		// or a ticket. An unmarked grafana_slo_severity louder than a
		// page or ticket wins, as in the severity policy.
		act, inPyrra := e.pyrraSev[key]
		known := inPyrra
		if !inPyrra {
			act, known = e.severityOfKey(key)
		}
		if inPyrra || known && act != alert.ActionNone {
			if g.val != "" && act != alert.ActionNone {
				if d, ok := g.louder(act, what+" → "+string(act), &q); ok {
					return pyrraBySeverity(d, pw), true, ""
				}
			}
			by := " (" + pw.inPair + ")"
			if !inPyrra {
				by = " by the severity table (not in the " + pw.table + " severity table; " + pw.inPair + ")"
			}
			r := pw.gen + what + " → " + string(act) + by + pw.suffix
			return alert.Decision{Action: act, Policy: PolicyPyrra, Tier: key, Reasons: []string{r}}, true, ""
		}
		if known {
			q.set(severityDecision(act, key, what+" → none"), what+" → none")
		}
		sevUnknown = !known
		sevWhy = what + " names no action"
		sevNote = pw.gen + what + " names neither page nor ticket in the " + pw.table + " or the severity table"
	}
	mark := len(st.notes)
	d, ok := e.severityLabelsAfter(st, labelSeverity, q, &g)
	if ok && d.Action != alert.ActionNone {
		if sevUnknown {
			st.note("%s", sevNote) // an unrecognised severity, which the reason does not name
		}
		return pyrraBySeverity(d, pw), true, ""
	}
	if sevNote != "" {
		st.note("%s: the window pair decides", sevNote)
	} else if ok {
		// A none of another severity label: its name and value, without
		// the action and any parenthetical (`Severity="info"`).
		what, _, _ := strings.Cut(d.Reasons[0], " → ")
		sevWhy = what + " names no action"
		st.note("%s names neither page nor ticket: the window pair decides", what)
	} else if len(st.notes) > mark {
		sevWhy = "no recognised severity"
	}
	return alert.Decision{}, false, sevWhy
}

// pyrraBySeverity is d, a decision of the severity policy's rules, as the
// decision of a long/short alert.
func pyrraBySeverity(d alert.Decision, pw *pyrraWords) alert.Decision {
	d.Policy = PolicyPyrra
	d.Reasons[0] += " (" + pw.inPair + ")" + pw.suffix
	return d
}

// pyrraPeriod returns the SLO period an alert names, if any.
func (e *Engine) pyrraPeriod(st *decision) (string, string, bool) {
	if v, src, ok := lookup(st.a, labelSLOPeriod); ok {
		return v, labelSLOPeriod + " " + src, true
	}
	if v, src, ok := lookup(st.a, labelPeriod); ok {
		return v, labelPeriod + " " + src, true
	}
	return "", "", false
}

// rankPyrra ranks a window pair against an SLO period. pairWord names the
// pair in the reason ("pyrra window pair", "burn-rate window pair").
func (e *Engine) rankPyrra(long, short model.Duration, period time.Duration, what, pairWord, suffix string) alert.Decision {
	limit := time.Duration(float64(period) / e.pyrraDiv).Round(time.Minute)
	pair := pairName(long, short)
	act, op := alert.ActionTicket, ">"
	if time.Duration(long) <= limit {
		act, op = alert.ActionPage, "≤"
	}
	r := pairWord + " " + pair + ": long window " + windowName(long) + " " + op + " " +
		windowName(model.Duration(period)) + "/" + e.pyrraDivText + " = " + windowName(model.Duration(limit)) +
		" (" + what + ") → " + string(act) + suffix
	return alert.Decision{Action: act, Policy: PolicyPyrra, Tier: pair, Reasons: []string{r}}
}

// burnInput is one burn_rate_<window> value of an alert, with the key and
// source it was read from and the text (for the note of a value not used).
type burnInput struct {
	window   time.Duration
	v        float64
	key, raw string
	label    bool
}

// maxBurnInputs bounds the burn-rate values read from one alert; real
// alerts carry two to eight.
const maxBurnInputs = 16

// burnInputs are the burn-rate values of one alert, on the stack: in, the
// value used for each window, and dropped, the other spellings of a window
// (burn_rate_60m beside burn_rate_1h), noted once both passes are done. A
// slice, not an array: it is rare, and zeroing a second array on every
// decision costs more than its allocation.
type burnInputs struct {
	n       int
	in      [maxBurnInputs]burnInput
	dropped []burnInput
}

func (b *burnInputs) get(w time.Duration) (float64, bool) {
	if i := b.index(w); i >= 0 {
		return b.in[i].v, true
	}
	return 0, false
}

// noteDropped notes each dropped spelling whose value differs from the one
// used for its window: against the value finally kept, so that the notes
// do not depend on the order the maps were read in.
func (b *burnInputs) noteDropped(st *decision) {
	for _, d := range b.dropped {
		kept := b.in[b.index(d.window)]
		if d.v != kept.v {
			st.note("%s %s %q ignored: %s %s %q gives the %s window", d.key, sourceName(d.label), d.raw,
				kept.key, sourceName(kept.label), kept.raw, windowName(model.Duration(d.window)))
		}
	}
}

func (b *burnInputs) index(w time.Duration) int {
	for i := 0; i < b.n; i++ {
		if b.in[i].window == w {
			return i
		}
	}
	return -1
}

// windowsText lists the windows of b, shortest first: "5m, 1h4m".
func (b *burnInputs) windowsText() string {
	ws := make([]time.Duration, b.n)
	for i := range ws {
		ws[i] = b.in[i].window
	}
	slices.Sort(ws)
	var sb strings.Builder
	for i, w := range ws {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(windowName(model.Duration(w)))
	}
	return sb.String()
}

func sourceName(label bool) string {
	if label {
		return "label"
	}
	return "annotation"
}

// collect reads every burn_rate_<window> entry of kv into b (labels, then
// annotations). Two or more entries for one window (burn_rate_1h,
// burn_rate_60m, burn_rate_3600s, or a label and an annotation) are
// decided the same way whatever the map order: a label's beats an
// annotation's, else the higher burn rate (fail towards paging), else the
// first key in byte order. The values not used are kept in b.dropped, and
// noteDropped names each that differs from the one used.
func (e *Engine) collect(st *decision, b *burnInputs, kv map[string]string, label bool) {
	src := sourceName(label)
	for k, raw := range kv {
		if !strings.HasPrefix(k, burnRatePrefix) {
			continue
		}
		suffix := k[len(burnRatePrefix):]
		w, ok := e.windows[suffix]
		if !ok {
			// Not a configured window name: normalize it, so that
			// burn_rate_60m feeds the 1h window.
			d, err := model.ParseDuration(suffix)
			if err != nil || d <= 0 {
				st.note("%s %s ignored: %q is not a Prometheus duration", k, src, suffix)
				continue
			}
			w = time.Duration(d)
		}
		p, err := parseValue(raw)
		if err != nil {
			st.note("%s %s %q ignored: %v", k, src, raw, err)
			continue
		}
		if p.v < 0 {
			st.note("%s %s %q ignored: %v", k, src, raw, errRange)
			continue
		}
		in := burnInput{window: w, v: p.v, key: k, raw: raw, label: label}
		if i := b.index(w); i >= 0 {
			dropped := in
			if kept := b.in[i]; kept.label == label && (in.v > kept.v || in.v == kept.v && in.key < kept.key) {
				dropped = kept
				b.in[i] = in
			}
			b.dropped = append(b.dropped, dropped)
			continue
		}
		if b.n == maxBurnInputs {
			st.note("%s %s ignored: more than %d burn-rate values", k, src, maxBurnInputs)
			continue
		}
		b.in[b.n] = in
		b.n++
	}
}

// decideBurnRate compares burn_rate_<window> values with the tiers: a tier
// matches when the burn rate is strictly greater than its factor over both
// its long and its short window. The policy has input when at least one
// tier has both of its windows; then it decides, none included.
func (e *Engine) decideBurnRate(st *decision) (alert.Decision, bool) {
	var b burnInputs
	start := len(st.notes)
	e.collect(st, &b, st.a.Labels, true)
	e.collect(st, &b, st.a.Annotations, false)
	b.noteDropped(st)
	if len(st.notes) > start+1 {
		sort.Strings(st.notes[start:]) // map order is random; reasons are not
	}
	if b.n == 0 {
		return alert.Decision{}, false
	}
	var below []string
	for i := range e.tiers {
		t := &e.tiers[i]
		lv, okL := b.get(t.long)
		sv, okS := b.get(t.short)
		if !okL || !okS {
			continue
		}
		if lv > t.factor && sv > t.factor {
			r := "burn rate " + fmtNum(lv) + " > " + t.factorText + " over " + t.longName +
				" and " + fmtNum(sv) + " > " + t.factorText + " over " + t.shortName
			return alert.Decision{Action: t.action, Policy: PolicyBurnRate, Tier: t.name, Reasons: []string{r}}, true
		}
		below = append(below, "burn rate "+fmtNum(lv)+" "+cmp(lv, t.factor)+" "+t.factorText+" over "+t.longName+
			" and "+fmtNum(sv)+" "+cmp(sv, t.factor)+" "+t.factorText+" over "+t.shortName+": no "+string(t.action))
	}
	if len(below) == 0 {
		st.burnNoTier = true
		st.note("burn_rate_<window> for %s: no tier has both of its windows (tiers %s)", b.windowsText(), e.tierPairs)
		return alert.Decision{}, false
	}
	return alert.Decision{Action: alert.ActionNone, Policy: PolicyBurnRate, Tier: "below", Reasons: below}, true
}

func cmp(v, limit float64) string {
	if v > limit {
		return ">"
	}
	return "≤"
}

// decideCapacity compares utilization (a ratio of validated steady-state
// capacity) with the warn and critical thresholds. A resolved alert is
// judged as if firing, as by every policy: its utilization is the last value
// Prometheus saw while it fired, so its resolve is decided as its page was
// and the incident's Slack card keeps saying it paged. (Skipping it left a
// capacity page's resolve to the severity labels: "ticket (severity,
// warning)" on the card of a page that woke someone — an audit.)
//
// A bare number in (1, 2] is read as a percentage (1.2 is 1.2%), but it is
// as plausibly a ratio above 100% (120%). When that reading decides none
// while the severity labels decide page or ticket, the severity decision is
// taken, with a reason saying the value was ambiguous: a page is never lost
// to a guess about the template.
func (e *Engine) decideCapacity(st *decision) (alert.Decision, bool) {
	raw, src, ok := lookup(st.a, labelUtilization)
	if !ok {
		return alert.Decision{}, false
	}
	u, ambiguous, err := readRatio(raw)
	if err != nil {
		st.note("utilization %s %q ignored: %v", src, raw, err)
		return alert.Decision{}, false
	}
	sustained := ""
	if st.a.Firing() && !st.a.StartsAt.IsZero() && st.now.After(st.a.StartsAt) {
		sustained = ", firing for " + st.now.Sub(st.a.StartsAt).Truncate(time.Second).String()
	}
	latency := false
	if lv, lsrc, ok := lookup(st.a, labelLatencyAboveSLO); ok {
		var known bool
		if latency, known = parseFlag(lv); !known {
			st.note("latency_above_slo %s %q ignored: not a yes or no word (%s)", lsrc, lv, flagWordsText)
		}
	}
	d := e.capacityDecision(u, latency, sustained)
	if !ambiguous || d.Action != alert.ActionNone {
		return d, true
	}
	asRatio := e.capacityDecision(u*100, latency, "")
	why := "utilization " + src + " " + strconv.Quote(strings.TrimSpace(raw)) + " is ambiguous: " +
		fmtPercent(u) + " or " + fmtPercent(u*100) + "? Read as a percentage: " + d.Reasons[0] + " → none; read as a ratio: " +
		asRatio.Reasons[0] + " → " + string(asRatio.Action)
	mark := len(st.notes)
	if sev, ok := e.decideSeverity(st); ok && sev.Action != alert.ActionNone {
		sev.Reasons = append(sev.Reasons, why+"; the severity label decides")
		return sev, true
	}
	st.notes = st.notes[:mark] // notes of severities that did not decide are not this decision's
	d.Reasons = append(d.Reasons, why+"; write a ratio above 100% as \""+fmtPercent(u*100)+"\" to have it judged as one")
	return d, true
}

// capacityDecision compares a utilization ratio with the thresholds.
func (e *Engine) capacityDecision(u float64, latency bool, sustained string) alert.Decision {
	c := e.capacity
	d := alert.Decision{Policy: PolicyCapacity}
	switch {
	case u > c.Critical:
		d.Action, d.Tier = alert.ActionPage, "critical"
		d.Reasons = []string{"utilization " + fmtPercent(u) + " > " + e.capCrit + " critical" + sustained}
	case u > c.Warn && latency:
		d.Action, d.Tier = alert.ActionPage, "warn+latency"
		d.Reasons = []string{"utilization " + fmtPercent(u) + " > " + e.capWarn + " warn and latency is above SLO" + sustained}
	case u > c.Warn:
		d.Action, d.Tier = alert.ActionTicket, "warn"
		d.Reasons = []string{"utilization " + fmtPercent(u) + " > " + e.capWarn + " warn" + sustained}
	default:
		d.Action, d.Tier = alert.ActionNone, "below"
		d.Reasons = []string{"utilization " + fmtPercent(u) + " ≤ " + e.capWarn + " warn"}
	}
	return d
}

// decideRegression compares the alert's ratio to its baseline with the
// thresholds of its sensitivity: the sensitivity label if valid, else the
// sector's, else regression.default_sensitivity (an unknown sector).
//
// Which way is worse comes from the regression_direction label or
// annotation, else the KPI (kpi label, else the classification's primary
// KPI) in the known-KPI table, else higher is worse by default. Higher is
// worse: ratio > warn tickets, > critical pages. Lower is worse (throughput,
// hit rate …): ratio < 1/warn tickets, < 1/critical pages, so that a drop
// to 1/1.30 of the baseline weighs as a rise to 1.30 times it.
//
// When the direction is not known and the ratio fell below 1/warn (a
// regression if lower is worse), a none of the default reading gives way
// to the severity labels when they decide page or ticket: a page is never
// lost to a guess about the KPI.
//
// A KPI that is a share of good events, bounded by 1 (availability,
// success rate, apdex: boundedKPIs), whose value and baseline are both
// ratios in [0, 1] regresses as its shortfall from 1 rises: lower is worse
// is read as (1 − value) ÷ (1 − baseline), higher is worse
// (shortfallReading).
func (e *Engine) decideRegression(st *decision) (alert.Decision, bool) {
	ratio, what, pair, ok := e.regressionRatio(st)
	if !ok {
		return alert.Decision{}, false
	}
	sens, why := e.sensitivity(st)
	th := e.thresholds(sens)
	dir := e.direction(st)
	head := what + " the " + e.baseline + " baseline, "
	tail := " for " + sens + " sensitivity (" + why + "); " + dir.text
	lower := regressionReading(ratio, th, true, head, tail)
	if dir.lower && dir.shortfall != "" && pair != nil {
		if sf, ok := e.shortfallReading(*pair, dir.shortfall, th, tail); ok {
			lower = e.capShortfall(st, sf)
		}
	}
	d := regressionReading(ratio, th, false, head, tail)
	switch {
	case dir.known && dir.lower:
		return lower, true
	case dir.known:
		return d, true
	case dir.lower:
		// Lower is worse as classified: a guess (an `up == 1` gate in the
		// expression reads as KPI UP), which may add a regression the
		// default reading misses but never drops one it finds.
		if alert.Rank(d.Action) > alert.Rank(lower.Action) {
			d.Reasons = append(d.Reasons, "read as higher is worse: the classified KPI is a guess, and the alert fired")
			return d, true
		}
		return lower, true
	}
	if d.Action != alert.ActionNone || !(ratio < 1/th.Warn) {
		return d, true
	}
	// The tier the ratio reaches read as lower is worse: "< 0.8696 (1/1.15)
	// warn" understated a 0.70x that is critical (an audit).
	tier, line := "warn", th.Warn
	if ratio < 1/th.Critical {
		tier, line = "critical", th.Critical
	}
	guess := "if lower is worse for this KPI, " + fmtRatio(ratio) + "x is a regression (< " + inverse(line) +
		" " + tier + "); say so with regression_direction: " + directionLowerIsWorse
	mark := len(st.notes)
	if sev, ok := e.decideSeverity(st); ok && sev.Action != alert.ActionNone {
		sev.Reasons = append(sev.Reasons, "regression: "+d.Reasons[0]+", but "+guess+"; the severity label decides")
		return sev, true
	}
	st.notes = st.notes[:mark] // notes of severities that did not decide are not this decision's
	d.Reasons = append(d.Reasons, guess)
	return d, true
}

// regressionReading compares ratio with the thresholds th: above them
// when higher is worse, below their inverses when lower is.
func regressionReading(ratio float64, th Thresholds, lower bool, head, tail string) alert.Decision {
	d := alert.Decision{Policy: PolicyRegression}
	if lower {
		switch {
		case ratio < 1/th.Critical:
			d.Action, d.Tier = alert.ActionPage, "critical"
			d.Reasons = []string{head + "< " + inverse(th.Critical) + " critical" + tail}
		case ratio < 1/th.Warn:
			d.Action, d.Tier = alert.ActionTicket, "warn"
			d.Reasons = []string{head + "< " + inverse(th.Warn) + " warn" + tail}
		default:
			d.Action, d.Tier = alert.ActionNone, "below"
			d.Reasons = []string{head + "≥ " + inverse(th.Warn) + " warn" + tail}
		}
		return d
	}
	switch {
	case ratio > th.Critical:
		d.Action, d.Tier = alert.ActionPage, "critical"
		d.Reasons = []string{head + "> " + fmtRatio(th.Critical) + " critical" + tail}
	case ratio > th.Warn:
		d.Action, d.Tier = alert.ActionTicket, "warn"
		d.Reasons = []string{head + "> " + fmtRatio(th.Warn) + " warn" + tail}
	default:
		d.Action, d.Tier = alert.ActionNone, "below"
		d.Reasons = []string{head + "≤ " + fmtRatio(th.Warn) + " warn" + tail}
	}
	return d
}

// shortfallReading reads a value + baseline pair of a KPI bounded by 1
// (boundedKPIs), both ratios in [0, 1], as the rise of its shortfall from
// 1, named name ("unavailability"): (1 − value) ÷ (1 − baseline) against
// the thresholds, higher is worse. 0.95 against 0.9999 is 0.05 ÷ 0.0001 =
// 500x the unavailability, where 0.95 ÷ 0.9999 = 0.95x would never reach
// 1/1.10. A baseline of exactly 1 has no shortfall to divide by: any
// shortfall of the value is beyond every threshold. ok is false when a
// side is not such a ratio.
func (e *Engine) shortfallReading(p numberPair, name string, th Thresholds, tail string) (alert.Decision, bool) {
	v, b := p.v.v, p.b.v
	if v > 1 && b > 1 && v <= 100 && b <= 100 {
		// Two bare numbers above 1 and up to 100 of a share of good
		// events: percentages (95 against 99.99), as utilization reads a
		// bare number.
		v, b = v/100, b/100
		tail += ", value and baseline read as percentages"
	}
	if v < 0 || v > 1 || b < 0 || b > 1 {
		return alert.Decision{}, false
	}
	sv, sb := 1-v, 1-b
	tail += ", compared as its " + name + ", (1 − value) ÷ (1 − baseline): a share of good events bounded by 1"
	if sb == 0 {
		d := alert.Decision{Policy: PolicyRegression}
		head := name + " " + fmtPercent(sv) + " (value " + strings.TrimSpace(p.rv) + ") against none at baseline " + strings.TrimSpace(p.rb)
		if sv > 0 {
			d.Action, d.Tier = alert.ActionPage, "critical"
			d.Reasons = []string{head + ": any shortfall from a baseline of 100% is beyond every threshold, > " + fmtRatio(th.Critical) + " critical" + tail}
		} else {
			d.Action, d.Tier = alert.ActionNone, "below"
			d.Reasons = []string{head + ": no change, ≤ " + fmtRatio(th.Warn) + " warn" + tail}
		}
		return d, true
	}
	r := sv / sb
	head := name + " " + fmtPercent(sv) + " ÷ baseline " + fmtPercent(sb) + " = " + fmtRatio(r) + "x the " + e.baseline +
		" baseline (value " + strings.TrimSpace(p.rv) + ", baseline " + strings.TrimSpace(p.rb) + "), "
	return regressionReading(r, th, false, head, tail), true
}

// capShortfall bounds a page of the shortfall comparison by the alert's
// own severity: the sector's regression thresholds (1.10–1.50) read on an
// unavailability ratio page on changes that are noise at four nines
// (99.985 % against 99.99 % is 1.5x), so a shortfall pages only when no
// severity label says less — a warning alert's is a ticket. Without a
// severity label the comparison decides alone.
func (e *Engine) capShortfall(st *decision, d alert.Decision) alert.Decision {
	if d.Action != alert.ActionPage {
		return d
	}
	mark := len(st.notes)
	sev, ok := e.decideSeverity(st)
	st.notes = st.notes[:mark] // the severity's notes are not this decision's
	if !ok || sev.Action == alert.ActionPage {
		return d
	}
	d.Action, d.Tier = alert.ActionTicket, "warn"
	d.Reasons = append(d.Reasons, "a ticket: the alert's severity ("+sev.Tier+") does not say page, and a shortfall comparison pages only when it does not say less")
	return d
}

// numberPair is a value + baseline pair read as numbers, as written (rv,
// rb) and parsed.
type numberPair struct {
	v, b   parsedValue
	rv, rb string
}

// inverse renders 1/t for reasons: "0.7692 (1/1.30)".
func inverse(t float64) string {
	return fmtRatio(1/t) + " (1/" + fmtRatio(t) + ")"
}

// regressionRatio reads baseline_ratio, else value ÷ baseline, and says how
// it got it ("baseline_ratio 1.25x", `baseline_ratio "+35%" read as a
// change: 1.35x` or "value 125.0 ÷ baseline 100.0 = 1.25x").
//
// A baseline_ratio written with an explicit sign is a change relative to
// the baseline, as a template or a dashboard writes one: "+35%" is 1.35,
// "-20%" 0.80, "+0%" 1.0, "+0.35" 1.35, "-0.2" 0.8 (baselineChange); a
// change below -100% ("-1.5") would be a negative ratio and is refused.
// Without the sign a number is the ratio itself ("135%" and "1.35" are
// 1.35). value and baseline are never read so: a value is not a change.
//
// pair is the value + baseline pair when the ratio is theirs, as numbers
// (not durations); nil otherwise.
func (e *Engine) regressionRatio(st *decision) (float64, string, *numberPair, bool) {
	if raw, src, ok := lookup(st.a, labelBaselineRatio); ok {
		p, err := parseValue(raw)
		change := err == nil && baselineChange(raw, p)
		v := p.v
		if change {
			v = 1 + p.v
		}
		switch {
		case err != nil:
			st.note("baseline_ratio %s %q ignored: %v", src, raw, err)
		case v < 0 && change:
			st.note("baseline_ratio %s %q ignored: a change of %s would make a negative ratio", src, raw, strings.TrimSpace(raw))
		case v < 0:
			st.note("baseline_ratio %s %q ignored: %v", src, raw, errRange)
		case change:
			return v, "baseline_ratio " + strconv.Quote(strings.TrimSpace(raw)) + " read as a change: " + fmtRatio(v) + "x", nil, true
		default:
			return v, "baseline_ratio " + fmtRatio(v) + "x", nil, true
		}
	}
	rv, vsrc, okV := lookup(st.a, labelValue)
	rb, bsrc, okB := lookup(st.a, labelBaseline)
	if !okV || !okB {
		// A lone value annotation is common ({{ $value }}) and is not a
		// regression input.
		return 0, "", nil, false
	}
	v, errV := parseValue(rv)
	b, errB := parseValue(rb)
	if errV != nil || errB != nil {
		// Not numbers: durations as humanizeDuration prints them ("1m 30s",
		// "1.5s", "250ms") or as they are written ("1h30m"), a plain number
		// on the other side being seconds.
		sv, okV := secondsOf(rv)
		sb, okB := secondsOf(rb)
		switch {
		case okV && okB && sb <= 0:
			st.note("baseline %s %q gives no ratio: it must be positive", bsrc, rb)
			return 0, "", nil, false
		case okV && okB:
			r := sv / sb
			return r, "value " + strings.TrimSpace(rv) + " ÷ baseline " + strings.TrimSpace(rb) + " = " + fmtRatio(r) + "x", nil, true
		case okV && errV != nil:
			st.note("baseline %s %q ignored: value %q is a duration, the baseline %s; write value and baseline alike", bsrc, rb, rv, notSeconds(errB))
			return 0, "", nil, false
		case okB && errB != nil:
			st.note("value %s %q ignored: baseline %q is a duration, the value %s; write value and baseline alike", vsrc, rv, rb, notSeconds(errV))
			return 0, "", nil, false
		}
		if errV != nil {
			st.note("value %s %q ignored: %v", vsrc, rv, errV)
		} else {
			st.note("baseline %s %q ignored: %v", bsrc, rb, errB)
		}
		return 0, "", nil, false
	}
	if b.v <= 0 {
		st.note("baseline %s %q gives no ratio: it must be positive", bsrc, rb)
		return 0, "", nil, false
	}
	if amb, ok := durationAmbiguity(v, rv, b, rb); ok {
		st.note("value %s %q and baseline %s %q give no ratio: %s", vsrc, rv, bsrc, rb, amb)
		return 0, "", nil, false
	}
	if amb, ok := percentAmbiguity(v, rv, b, rb); ok {
		st.note("value %s %q and baseline %s %q give no ratio: %s", vsrc, rv, bsrc, rb, amb)
		return 0, "", nil, false
	}
	r := v.v / b.v
	return r, "value " + valueText(v, rv) + " ÷ baseline " + valueText(b, rb) + " = " + fmtRatio(r) + "x", &numberPair{v, b, rv, rb}, true
}

// baselineChange reports whether a baseline_ratio (raw, read as p) is a
// change relative to the baseline rather than the ratio itself: a number
// written with an explicit sign, a percentage ("+35%", "-20%", "+0%") or
// not ("+0.35" from `printf "%+.2f"` of current/baseline − 1, "-0.2"). A
// ratio is never signed, so the sign can only mean a change.
func baselineChange(raw string, p parsedValue) bool {
	s := strings.TrimSpace(raw)
	return s != "" && (s[0] == '+' || s[0] == '-')
}

// notSeconds says why the other side of a duration is no time: it is no
// number (err), or a number with a unit prefix or a percent sign.
func notSeconds(err error) string {
	if err != nil {
		return "not a duration and " + err.Error()
	}
	return "a number with a unit prefix or a percent sign, not seconds"
}

// durationAmbiguity says why value ÷ baseline has no reading when one of
// them ends in a unit prefix that is also a duration unit (m, y) and the
// other is a plain number or ends in the other such unit: "5m" is 0.005 to
// Prometheus' humanize and 5 minutes as a duration (a lag, a latency), and
// the ratio to a baseline "120" (seconds?) differs by orders of magnitude
// between the two readings. When both end in the same prefix, or the other
// in one no duration has (k, u …), the readings agree and there is a ratio.
func durationAmbiguity(v parsedValue, rv string, b parsedValue, rb string) (string, bool) {
	amb, ok := unitAmbiguity(v, rv, b, rb)
	if !ok {
		return "", false
	}
	return amb + "; write value and baseline alike", true
}

// unitAmbiguity is durationAmbiguity's reason without its advice: why two
// numbers compared with each other have no one reading ("5m" beside "120").
// ReadTimes shares it.
func unitAmbiguity(v parsedValue, rv string, b parsedValue, rb string) (string, bool) {
	if v.prefix() == b.prefix() {
		return "", false
	}
	raw, pre := rv, v.prefix()
	switch {
	case durationUnit(v.prefix()) && (b.prefix() == "" || durationUnit(b.prefix())):
	case durationUnit(b.prefix()) && v.prefix() == "":
		raw, pre = rb, b.prefix()
	default:
		return "", false
	}
	si, unit := "milli", "minutes"
	if pre == "y" {
		si, unit = "yocto", "years"
	}
	return strconv.Quote(strings.TrimSpace(raw)) + " is " + si + " to Prometheus' humanize but " + unit +
		" as a duration, and the ratio differs between the two readings", true
}

// percentAmbiguity says why value ÷ baseline has no reading when exactly
// one side is a percentage and the other a number above 1 without one
// ("85" beside "80%"): a template printing `{{ $value }}` of a `* 100`
// query writes 85 for 85%, one printing a ratio 85 for 8500%, and the
// ratio to the baseline differs a hundredfold between the two readings. A
// number in [0, 1] beside a percentage is a ratio ("0.85" beside "80%" is
// 1.0625x).
func percentAmbiguity(v parsedValue, rv string, b parsedValue, rb string) (string, bool) {
	bare := ""
	switch {
	case v.percent == b.percent:
		return "", false
	case v.percent && b.v > 1:
		bare = rb
	case b.percent && v.v > 1:
		bare = rv
	default:
		return "", false
	}
	return "a percentage beside a bare number above 1: is " + strconv.Quote(strings.TrimSpace(bare)) +
		" a ratio or a percentage? Write value and baseline alike", true
}

// valueText renders a value of value ÷ baseline for reasons: as written
// when it had a unit prefix ("1.5k", "300n": fmtNum would print 0.0), else
// fmtNum.
func valueText(p parsedValue, raw string) string {
	if p.prefix() != "" {
		return strings.TrimSpace(raw)
	}
	return fmtNum(p.v)
}

func (e *Engine) sensitivity(st *decision) (sens, why string) {
	if raw, src, ok := lookup(st.a, labelSensitivity); ok {
		s := strings.ToLower(strings.TrimSpace(raw))
		if validSensitivity(s) {
			return s, "sensitivity " + src
		}
		st.note("sensitivity %s %q ignored: want high, medium or low", src, raw)
	}
	if st.c != nil && validSensitivity(st.c.Sensitivity) {
		return st.c.Sensitivity, "sector " + st.c.Sector
	}
	return e.regr.DefaultSensitivity, "default, sector unknown"
}

func (e *Engine) thresholds(sens string) Thresholds {
	switch sens {
	case "high":
		return e.regr.Sensitivities.High
	case "low":
		return e.regr.Sensitivities.Low
	}
	return e.regr.Sensitivities.Medium
}

// severityOf maps one severity value (severityKey, severityOfKey): a word
// of the table (as it is, or without "-", "_" and spaces: SEV-1, P_0), else
// a whole number (1 = most severe; 3.0 is 3), else words and numbers that
// agree (P1-Critical). It also returns the value's key, the tier of a
// decision it makes.
func (e *Engine) severityOf(v string) (act alert.Action, key string, known bool) {
	key = severityKey(v)
	act, known = e.severityOfKey(key)
	return act, key, known
}

// decideSeverity reads, in turn:
//
//  1. the paging labels (page_labels: pager, page): a yes word or a
//     pager's name (pageValues) pages — an explicit request for a page
//     (GitLab's `pager: pagerduty` on its S1 and S2 alerts) beats the
//     severity words;
//  2. Grafana SLO's tier label grafana_slo_severity, on an alert that a
//     Grafana SLO marker label says Grafana SLO generated (grafana_slo_uuid,
//     grafana_slo_window or __grafana_origin): like sloth_severity, the
//     generator's tier beats a team-wide severity — a page or a ticket
//     does; a none there is a none like any other (3.);
//  3. the severity labels in the configured order (severity,
//     grafana_slo_severity, severity_level, priority, level, urgency): the
//     first whose value is recognised as page or ticket decides — except
//     that, without a marker, a louder grafana_slo_severity wins, said so;
//     a label spelled in another case (foldedSeverity) when no label as
//     configured says page or ticket.
//
// A none (none, info, debug, severity_level 7 …) decides only when no
// severity label says page or ticket: a none read from one label never
// silences the page or ticket of another (severity="none" beside
// priority="P1" pages), and the reason of the page or ticket names the
// label that said none. Values that are not recognised are noted and
// leave the alert to the default action.
func (e *Engine) decideSeverity(st *decision) (alert.Decision, bool) {
	if d, ok := e.decidePageLabel(st); ok {
		return d, true
	}
	var q quietSeverity
	g := e.grafanaTier(st)
	if d, ok := e.markedGrafana(st, &g, &q); ok {
		return d, true
	}
	return e.severityLabelsAfter(st, "", q, &g)
}

// grafanaTier is Grafana SLO's tier label as the severity policy reads it:
// a recognised grafana_slo_severity (val "" without one) and the marker
// label that says Grafana SLO generated the alert ("" without one).
type grafanaTier struct {
	act         alert.Action
	val, key    string
	marker      string
	markedQuiet bool // a marked none, set in q by markedGrafana
}

// grafanaTier reads Grafana SLO's tier label, when grafana_slo_severity is
// a severity label and the alert carries a recognised one.
func (e *Engine) grafanaTier(st *decision) grafanaTier {
	var g grafanaTier
	if !e.grafana {
		return g
	}
	v, _, ok := lookup(st.a, labelGrafanaSeverity)
	if !ok || strings.TrimSpace(v) == "" {
		return g
	}
	act, key, known := e.severityOf(v)
	if !known {
		return g
	}
	g.act, g.val, g.key = act, v, key
	g.marker, _ = grafanaSLOMarker(st.a)
	return g
}

// markedGrafana decides by a marked Grafana SLO tier: like sloth_severity,
// the generator's tier beats every other severity label when it says page
// or ticket. A marked none is set in q (the first none read), and the
// label is not read again (severityLabelsAfter).
func (e *Engine) markedGrafana(st *decision, g *grafanaTier, q *quietSeverity) (alert.Decision, bool) {
	if g.val == "" || g.marker == "" {
		return alert.Decision{}, false
	}
	r := labelGrafanaSeverity + "=" + strconv.Quote(g.val) + " → " + string(g.act) +
		" (Grafana SLO's tier label, " + g.marker
	if g.act == alert.ActionNone {
		q.set(severityDecision(g.act, g.key, r+")"), labelGrafanaSeverity+"="+strconv.Quote(g.val)+" → none")
		g.markedQuiet = true
		return alert.Decision{}, false
	}
	if other, ok := e.firstSeverity(st, labelGrafanaSeverity); ok && other.Action != g.act {
		r += "; it beats " + other.Reasons[0]
	}
	return severityDecision(g.act, g.key, r+")"), true
}

// louder decides by an unmarked Grafana SLO tier louder than act, the
// page or ticket another severity label says (r: `severity="warning" →
// ticket`): without a marker, nothing says which is the generator's tier,
// and the louder decides.
func (g *grafanaTier) louder(act alert.Action, r string, q *quietSeverity) (alert.Decision, bool) {
	if g.val == "" || alert.Rank(g.act) <= alert.Rank(act) {
		return alert.Decision{}, false
	}
	return severityDecision(g.act, g.key, labelGrafanaSeverity+"="+strconv.Quote(g.val)+" → "+string(g.act)+
		", louder than "+r+" (no Grafana SLO marker label such as "+labelGrafanaUUID+
		" says which is the generator's tier: the louder decides"+q.clause("; ")+")"), true
}

// severityLabelsAfter is decideSeverity after the paging labels and
// Grafana SLO's marked tier (markedGrafana, which read g): the severity
// labels in the configured order, then a label name in another case. skip
// is a severity label the caller has read already (the severity of a
// long/short alert, pyrraSeverity), q the none read so far, if any: it
// gives way to another label's page or ticket as a none read here does.
func (e *Engine) severityLabelsAfter(st *decision, skip string, q quietSeverity, g *grafanaTier) (alert.Decision, bool) {
	// q is the first none read: it decides only when no severity
	// label says more; its what names it in the reason of one that does.
	for _, name := range e.sevLabels {
		if name == skip || g.markedQuiet && name == labelGrafanaSeverity {
			continue // read by the caller, or a marked none read by markedGrafana
		}
		v, src, ok := lookup(st.a, name)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if name == labelLevel && q.what != "" {
			// level, as often a log level (a log rule's level="fatal"),
			// does not overrule another label's none, as it overrules no
			// ticket (laterPage).
			continue
		}
		act, key, known := e.severityOf(v)
		if !known {
			st.note("%s %s %q is not a recognised severity%s", name, src, v, e.unrecognisedWhy(key))
			continue
		}
		r := name + "=" + strconv.Quote(v) + " → " + string(act)
		if act == alert.ActionNone {
			q.set(severityDecision(act, key, r), r)
			continue
		}
		if name != labelGrafanaSeverity {
			if d, ok := g.louder(act, r, &q); ok {
				return d, true
			}
		}
		if act == alert.ActionTicket && key != string(alert.ActionTicket) {
			if d, ok := e.laterPage(st, name, skip, r, q, g); ok {
				return d, true
			}
		}
		return severityDecision(act, key, r+q.clause(" (")+q.close()), true
	}
	return e.foldedSeverity(st, q)
}

// laterPage decides by a page a severity label after name says, when name
// said a ticket (r: `severity="warning" → ticket`): of two configured
// severity labels, the louder decides — `severity="warning"` beside
// `priority="P1"` pages, as `severity="info"` beside it does — so that a
// page is never lost to the order of the labels. Not over the word ticket
// itself (severityLabelsAfter: the author chose the action), and not from
// level, which is as often a log level (a log rule's level="fatal") as a
// severity. skip and a marked none of Grafana SLO's tier are not read.
func (e *Engine) laterPage(st *decision, name, skip, r string, q quietSeverity, g *grafanaTier) (alert.Decision, bool) {
	i := slices.Index(e.sevLabels, name)
	for _, later := range e.sevLabels[i+1:] {
		if later == skip || later == labelLevel || g.markedQuiet && later == labelGrafanaSeverity {
			continue
		}
		v, _, ok := lookup(st.a, later)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if act, key, known := e.severityOf(v); known && act == alert.ActionPage {
			return severityDecision(act, key, later+"="+strconv.Quote(v)+" → page, louder than "+r+
				" (of two severity labels the louder decides"+q.clause("; ")+")"), true
		}
	}
	return alert.Decision{}, false
}

// quietSeverity is the first none a severity label said: it decides only
// when no severity label says page or ticket.
type quietSeverity struct {
	d    alert.Decision
	what string // `severity="none" → none`
}

// set keeps the first none read.
func (q *quietSeverity) set(d alert.Decision, what string) {
	if q.what == "" {
		q.d, q.what = d, what
	}
}

// clause says, after open, that the none read gives way to the deciding
// page or ticket; "" without a none.
func (q *quietSeverity) clause(open string) string {
	if q.what == "" {
		return ""
	}
	return open + q.what + " gives way: a none never silences another severity label's page or ticket"
}

// close ends clause(" (").
func (q *quietSeverity) close() string {
	if q.what == "" {
		return ""
	}
	return ")"
}

// foldedSeverity reads a severity label spelled in another case
// (`Severity`, `SEVERITY`) when no severity label as configured says page
// or ticket: label names are case-sensitive, but the rule's author asked
// for that severity, and a critical alert must not become the default
// ticket for the case of a letter. The labels are tried in the order of
// severity_labels; of two spellings of one name, the first in byte order.
// As for the labels as configured, the first page or ticket decides, and
// a none only when none says more: q, the none of a label as configured,
// before that of one spelled in another case. Annotations are not read
// this way.
func (e *Engine) foldedSeverity(st *decision, q quietSeverity) (alert.Decision, bool) {
	if !e.mayFold(st.a.Labels) {
		return q.d, q.what != ""
	}
	for _, name := range e.sevLabels {
		found := ""
		for k := range st.a.Labels {
			if k != name && strings.EqualFold(k, name) && (found == "" || k < found) {
				found = k
			}
		}
		v := st.a.Labels[found]
		if found == "" || strings.TrimSpace(v) == "" {
			continue
		}
		act, key, known := e.severityOf(v)
		if !known {
			st.note("label %s %q is not a recognised severity%s", found, v, e.unrecognisedWhy(key))
			continue
		}
		r := found + "=" + strconv.Quote(v) + " → " + string(act)
		d := severityDecision(act, key, r+" (label "+found+" read as "+name+
			": label names are case-sensitive, so Alertmanager routes on "+name+" do not match it"+q.clause("; ")+")")
		if act == alert.ActionNone {
			q.set(d, r)
			continue
		}
		return d, true
	}
	return q.d, q.what != ""
}

// mayFold reports whether a label name of l may be a severity label
// spelled in another case: one pass over the names instead of one per
// severity label. When every severity label is lower-case ASCII (sevLower,
// as label names are in practice), a name that is lower-case ASCII too
// equals one of them or differs in more than case, so only a name with an
// upper-case or a non-ASCII letter ("Severity", "ſeverity": the long s
// folds to s) may be one.
func (e *Engine) mayFold(l map[string]string) bool {
	if !e.sevLower {
		return true
	}
	for k := range l {
		if !lowerASCII(k) {
			return true
		}
	}
	return false
}

// lowerASCII reports whether s has no upper-case ASCII letter and no
// byte outside ASCII.
func lowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// severityDecision is a decision of the severity policy on a value whose
// severityKey is key.
func severityDecision(act alert.Action, key, reason string) alert.Decision {
	return alert.Decision{
		Action: act, Policy: PolicySeverity, Tier: key,
		Reasons: []string{reason},
	}
}

// firstSeverity is what the severity labels other than skip say, without
// notes: the first recognised page or ticket, else the first none — the
// label a deciding one is compared with.
func (e *Engine) firstSeverity(st *decision, skip string) (alert.Decision, bool) {
	var quiet alert.Decision
	found := false
	for _, name := range e.sevLabels {
		if name == skip {
			continue
		}
		v, _, ok := lookup(st.a, name)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		act, key, known := e.severityOf(v)
		if !known {
			continue
		}
		d := severityDecision(act, key, name+"="+strconv.Quote(v)+" → "+string(act))
		if act != alert.ActionNone {
			return d, true
		}
		if !found {
			quiet, found = d, true
		}
	}
	return quiet, found
}

// grafanaSLOMarker returns the label that says Grafana SLO generated the
// alert ("grafana_slo_uuid present"), if one does.
func grafanaSLOMarker(a *alert.Alert) (string, bool) {
	for _, l := range []string{labelGrafanaUUID, labelGrafanaWindow} {
		if strings.TrimSpace(a.Labels[l]) != "" {
			return l + " present", true
		}
	}
	if a.Labels[labelGrafanaOrigin] == grafanaSLOOrigin {
		return labelGrafanaOrigin + "=" + strconv.Quote(grafanaSLOOrigin), true
	}
	return "", false
}

// pageValues are the values of a paging label that ask for a page: yes
// words and pagers' names (GitLab's `pager: pagerduty`). Any other value is
// not a request: a label named page may be an exporter's own (a web page's
// path), and a page storm is as bad as a lost page.
var pageValues = map[string]bool{
	"true": true, "yes": true, "on": true, "1": true, "page": true,
	"pagerduty": true, "pd": true, "opsgenie": true, "victorops": true, "splunk-oncall": true, "incident.io": true,
}

// decidePageLabel pages on the first paging label (page_labels) whose value
// asks for a page. Paging labels are read from labels only: they are
// routing labels, and an annotation named page is often a link.
func (e *Engine) decidePageLabel(st *decision) (alert.Decision, bool) {
	for _, name := range e.pageLabels {
		v := st.a.Labels[name]
		if !pageValues[strings.ToLower(strings.TrimSpace(v))] {
			continue
		}
		r := name + "=" + strconv.Quote(v) + " → page (an explicit paging label"
		if other, ok := e.firstSeverity(st, ""); ok && other.Action != alert.ActionPage {
			r += "; without it " + other.Reasons[0]
		}
		r += ")"
		return alert.Decision{
			Action: alert.ActionPage, Policy: PolicySeverity,
			Tier: name + "=" + strings.ToLower(strings.TrimSpace(v)), Reasons: []string{r},
		}, true
	}
	return alert.Decision{}, false
}

// pageLabelsText names the paging labels for the default reason.
func (e *Engine) pageLabelsText() string {
	if len(e.pageLabels) == 0 {
		return ""
	}
	return ", paging label " + strings.Join(e.pageLabels, "/")
}

// identityExcluded are labels left out of every SLO identity built from
// an alert's labels: those that differ between the alerts of one SLO
// (alertname for a generator's, window pair, severity, exhaustion, the
// window of GitLab-style alerts), policy inputs (burn_rate_*, utilization,
// kpi …), the slo label itself, and labels that say where a notification
// goes (Sloth's documented page_alert and ticket_alert labels routing_key
// and slack_channel), which the page and the ticket of one SLO carry
// differently. The configured severity and paging labels are left out too
// (identityExclusions), and for Sloth every sloth_* label; and the labels
// naming the replica of an HA pair (alert.ReplicaLabels): both replicas of a
// pair whose Alertmanager keeps them send one SLO's alert, which paged twice
// under two identities (an audit).
var identityExcluded = map[string]bool{
	model.AlertNameLabel:     true,
	labelLong:                true,
	labelShort:               true,
	labelWindow:              true,
	labelSeverity:            true,
	labelExhaustion:          true,
	labelUtilization:         true,
	labelLatencyAboveSLO:     true,
	labelBaselineRatio:       true,
	labelValue:               true,
	labelBaseline:            true,
	labelSensitivity:         true,
	labelBudgetRemaining:     true,
	labelErrorBudgetRem:      true,
	labelSLOPeriod:           true,
	labelPeriod:              true,
	labelKPI:                 true,
	labelRegressionDirection: true,
	labelSLO:                 true,
	"routing_key":            true,
	"slack_channel":          true,
}

// identityExclusions returns identityExcluded plus cfg's severity and
// paging labels.
func identityExclusions(cfg Config) map[string]bool {
	m := make(map[string]bool, len(identityExcluded)+len(alert.ReplicaLabels)+len(cfg.SeverityLabels)+len(cfg.PageLabels))
	for k := range identityExcluded {
		m[k] = true
	}
	for k := range alert.ReplicaLabels {
		m[k] = true
	}
	for _, l := range cfg.SeverityLabels {
		m[l] = true
	}
	for _, l := range cfg.PageLabels {
		m[l] = true
	}
	return m
}

// defaultNotInIdentity are the exclusions of the default configuration,
// for SLOIdentity.
var defaultNotInIdentity = identityExclusions(DefaultConfig())

// sloScopeLabels tell apart the SLOs of a plain slo label (SLOIdentity):
// where the alert fires — its cluster, namespace and alert.SiteLabels, as
// an incident's scope does (without region, a second region's page of one
// SLO was folded into the first's, and its ticket suppressed by the
// first's page) — and its service.
var sloScopeLabels = slices.Concat([]string{"cluster", "namespace", "kubernetes_namespace"}, alert.SiteLabels, []string{"service"})

// SLOIdentity returns the SLO an alert belongs to under the default
// configuration, so that the alerts one SLO generator fires for one
// problem can be told apart from other SLOs (Engine.Decide puts the same,
// with the configured severity and paging labels left out, in
// Decision.SLO):
//
//   - Sloth: the sloth_id label followed by the alert's other labels,
//     sorted, except alertname, the sloth_* labels and those of
//     identityExcluded: "checkout-availability/service_name=checkout".
//     Sloth keeps the labels of the SLI (sum by (service_name) …) on its
//     alerts, so one SLO fires one page per service, and each is a problem
//     of its own; an alert with nothing else is its sloth_id alone;
//   - Pyrra (slo plus long and short labels): the slo label followed by the
//     alert's other labels, sorted, except those of identityExcluded:
//     `api-errors{job="api",namespace="prod"}`;
//   - a hand-written multi-window alert (long and short, no slo, as
//     kube-prometheus' KubeAPIErrorBudgetBurn): its alertname followed by
//     the other labels as for Sloth: "KubeAPIErrorBudgetBurn/cluster=prod";
//   - any other alert with an slo label: its value followed by the scope
//     labels it carries (sloScopeLabels): `availability/service=checkout`
//     — a hand-written rule's slo is often a category (availability,
//     latency) that several services share, and one identity for them all
//     folded a second service's page into the first's;
//   - otherwise "".
//
// The "/name=value" identities have no braces (a brace in a value is
// written "_"): identities are part of incident keys, PagerDuty dedup keys
// and Redis hash tags.
func SLOIdentity(a *alert.Alert) string {
	return sloIdentity(a, defaultNotInIdentity)
}

// sloIdentity is SLOIdentity with the labels of excl left out.
func sloIdentity(a *alert.Alert, excl map[string]bool) string {
	if id := a.Labels[labelSlothID]; id != "" && !slothMeta(a) {
		return labelPath(id, a.Labels, excl, slothPrefix)
	}
	slo := a.Labels[labelSLO]
	_, okL := a.Labels[labelLong]
	_, okS := a.Labels[labelShort]
	if slo == "" {
		if name := a.Labels[model.AlertNameLabel]; okL && okS && name != "" {
			return labelPath(name, a.Labels, excl, "")
		}
		return ""
	}
	if !okL || !okS {
		id := slo
		for _, k := range sloScopeLabels {
			if v := a.Labels[k]; v != "" {
				id += "/" + k + "=" + v
			}
		}
		return id
	}
	var buf [16]string
	keys := buf[:0]
	for k := range a.Labels {
		if excluded(excl, k) || strings.HasPrefix(k, burnRatePrefix) {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return slo
	}
	sort.Strings(keys)
	var b strings.Builder
	b.Grow(len(slo) + 16*len(keys))
	b.WriteString(slo)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(a.Labels[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// excluded reports whether label k is left out of an identity: one of excl
// in any case — the severity policy reads `Severity` as `severity`, and a
// page and a ticket of one SLO told apart by `Severity` alone had two
// identities, so the page did not suppress the ticket (an audit).
func excluded(excl map[string]bool, k string) bool {
	return excl[k] || excl[strings.ToLower(k)]
}

// noBraces writes the braces of a label value as "_", as IncidentKey does.
var noBraces = strings.NewReplacer("{", "_", "}", "_")

// labelPath renders name followed by "/k=v" for each label of l, sorted,
// except empty ones, those of excl, burn_rate_* and those starting with
// skipPrefix (when not empty).
func labelPath(name string, l map[string]string, excl map[string]bool, skipPrefix string) string {
	var buf [16]string
	keys := buf[:0]
	for k, v := range l {
		if v == "" || excluded(excl, k) || strings.HasPrefix(k, burnRatePrefix) ||
			(skipPrefix != "" && strings.HasPrefix(k, skipPrefix)) {
			continue
		}
		keys = append(keys, k)
	}
	name = noBraces.Replace(name)
	if len(keys) == 0 {
		return name
	}
	sort.Strings(keys)
	var b strings.Builder
	b.Grow(len(name) + 24*len(keys))
	b.WriteString(name)
	for _, k := range keys {
		b.WriteByte('/')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(noBraces.Replace(l[k]))
	}
	return b.String()
}

// budgetFacts renders the error-budget facts the alert carries: Pyrra's
// exhaustion label (how long the budget lasts at the alert's burn factor)
// and a budget_remaining (or error_budget_remaining) ratio, e.g. from
// Sloth's slo:period_error_budget_remaining:ratio. A remaining budget may
// be negative (overspent). A bare number beyond ±1 and up to ±100 is a
// percentage, whichever its sign (41 is 41%, -50 is -50%, said so: it may
// be an overspent ratio); beyond ±100 it is neither, and is noted as
// ignored, as is anything that is not a number.
func budgetFacts(st *decision) string {
	a := st.a
	var parts [2]string
	n := 0
	name := labelBudgetRemaining
	raw, src, ok := lookup(a, name)
	if !ok {
		name = labelErrorBudgetRem
		raw, src, ok = lookup(a, name)
	}
	if ok {
		p, err := parseValue(raw)
		v := p.v
		switch {
		case err != nil:
			st.note("%s %s %q ignored: %v", name, src, raw, err)
		case !p.percent && (v > 100 || v < -100):
			st.note("%s %s %q ignored: a bare number beyond ±100 is neither a ratio nor a percentage", name, src, raw)
		default:
			if !p.percent && (v > 1 || v < -1) {
				v /= 100 // a bare percentage, as for utilization
				if v < 0 {
					st.note("%s %s %q read as a percentage, %s, as a bare number beyond ±1 is; write \"%s\" if it is the ratio %s",
						name, src, raw, fmtPercent(v), strconv.FormatFloat(p.v*100, 'f', -1, 64)+"%", strings.TrimSpace(raw))
				}
			}
			parts[n] = "error budget remaining " + fmtPercent(v)
			n++
		}
	}
	if ex, _, ok := lookup(a, labelExhaustion); ok && strings.TrimSpace(ex) != "" {
		ex = strings.TrimSpace(ex)
		parts[n] = "budget exhausted in " + ex + " at this burn rate"
		n++
	}
	switch n {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return parts[0] + "; " + parts[1]
}
