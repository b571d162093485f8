package policies

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Config is the `policies` section of the router's configuration. Decode it
// with yaml.UnmarshalStrict (UnmarshalYAML fills the defaults of SPEC §5
// first) and check it with Validate; New validates again.
type Config struct {
	// Sloth maps values of Sloth's sloth_severity label to actions.
	Sloth map[string]alert.Action `yaml:"sloth"`
	// Pyrra maps the (long, short) window labels of Pyrra's alerts to actions.
	Pyrra PyrraConfig `yaml:"pyrra"`
	// BurnRate holds the multi-window burn-rate tiers.
	BurnRate BurnRateConfig `yaml:"burn_rate"`
	// Capacity holds the utilization thresholds.
	Capacity CapacityConfig `yaml:"capacity"`
	// Regression holds the baseline-relative thresholds per sensitivity.
	Regression RegressionConfig `yaml:"regression"`
	// SeverityLabels are the labels read by the severity policy, in order:
	// the first whose value is recognised decides. The default list puts
	// Grafana SLO's grafana_slo_severity right after severity.
	SeverityLabels []string `yaml:"severity_labels"`
	// PageLabels are labels that ask for a page explicitly (GitLab's
	// `pager: pagerduty`): a yes word (true, yes, on, 1, page) or a pager's
	// name (pagerduty, pd, opsgenie, victorops, splunk-oncall, incident.io)
	// pages, before the severity labels are read; any other value is
	// ignored. An empty list turns them off.
	PageLabels []string `yaml:"page_labels"`
	// Severity maps severity words to actions (keys are matched
	// case-insensitively).
	Severity map[string]alert.Action `yaml:"severity"`
	// SeverityNumbers maps numeric severities (1 = most severe, as Deckhouse's
	// severity_level and syslog-style levels) to actions.
	SeverityNumbers SeverityNumbers `yaml:"severity_numbers"`
	// DefaultAction is the action of an alert that has no input for any
	// policy, or only a severity that is not recognised: ticket by default,
	// so that a human sees it rather than it being silently dropped. It is
	// page or ticket, never none.
	DefaultAction alert.Action `yaml:"default_action"`
}

// SeverityNumbers maps a numeric severity n (an integer ≥ 0) to an action:
// n ≤ Page pages, n ≤ Ticket tickets, anything above is none.
type SeverityNumbers struct {
	Page   int `yaml:"page"`
	Ticket int `yaml:"ticket"`
}

// PyrraConfig is how Pyrra's multi-window alerts are decided. Pyrra's own
// severity label decides first (Severity), then a custom severity value
// that the general severity table maps to page or ticket; without either
// the window pair is ranked against the SLO period when the alert names one
// (PageDivisor), else looked up in Windows (the 28-day table), else ranked
// against DefaultPeriod.
type PyrraConfig struct {
	// Severity maps Pyrra's severity label to actions (case-insensitive).
	Severity map[string]alert.Action `yaml:"severity"`
	// PageDivisor: a long window ≤ period ÷ PageDivisor pages, a longer one
	// tickets (112: 6h of a 28-day period).
	PageDivisor float64 `yaml:"page_divisor"`
	// DefaultPeriod is the SLO period assumed for a pair that is not in
	// Windows when the alert names no period. Pyrra's page pairs are
	// exactly period ÷ 112 long, so a default of 30d ranks the windows of
	// both 28-day and 30-day SLOs right (6h and 6h26m ≤ 6h26m page; 1d and
	// 1d1h43m ticket); a shorter default would make a longer period's page
	// pair a ticket.
	DefaultPeriod model.Duration `yaml:"default_period"`
	// Windows lists the window pairs of a 28-day SLO and their action.
	Windows []WindowAction `yaml:"windows"`
}

// WindowAction is one row of the Pyrra table.
type WindowAction struct {
	Long   model.Duration `yaml:"long"`
	Short  model.Duration `yaml:"short"`
	Action alert.Action   `yaml:"action"`
}

// BurnRateConfig lists the burn-rate tiers.
type BurnRateConfig struct {
	// Tiers are tried loudest action first; within an action, in order.
	Tiers []Tier `yaml:"tiers"`
}

// Tier pages or tickets when the burn rate is strictly greater than Factor
// over both Long and Short.
type Tier struct {
	Long   model.Duration `yaml:"long"`
	Short  model.Duration `yaml:"short"`
	Factor float64        `yaml:"factor"`
	Action alert.Action   `yaml:"action"`
}

// CapacityConfig holds the utilization thresholds, as ratios of validated
// steady-state capacity.
type CapacityConfig struct {
	// Warn: utilization above it tickets (pages when latency_above_slo).
	Warn float64 `yaml:"warn"`
	// Critical: utilization above it pages.
	Critical float64 `yaml:"critical"`
}

// RegressionConfig holds the regression thresholds.
type RegressionConfig struct {
	// BaselineWindow is the window of the baseline the ratio is taken
	// against; it is quoted in reasons (the alert rule computes the ratio).
	BaselineWindow model.Duration `yaml:"baseline_window"`
	// DefaultSensitivity applies when neither the alert's sensitivity label
	// nor its sector gives one (an unknown sector).
	DefaultSensitivity string `yaml:"default_sensitivity"`
	// Sensitivities holds the thresholds per sensitivity.
	Sensitivities Sensitivities `yaml:"sensitivities"`
}

// Sensitivities holds the thresholds of each regression sensitivity.
type Sensitivities struct {
	High   Thresholds `yaml:"high"`
	Medium Thresholds `yaml:"medium"`
	Low    Thresholds `yaml:"low"`
}

// Thresholds are ratios to the baseline: above Warn tickets, above Critical
// pages.
type Thresholds struct {
	Warn     float64 `yaml:"warn"`
	Critical float64 `yaml:"critical"`
}

func mustDuration(s string) model.Duration {
	d, err := model.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DefaultConfig returns the defaults of SPEC §5. Each call returns fresh maps
// and slices.
func DefaultConfig() Config {
	d := mustDuration
	return Config{
		Sloth: map[string]alert.Action{
			"page":   alert.ActionPage,
			"ticket": alert.ActionTicket,
		},
		Pyrra: PyrraConfig{
			Severity: map[string]alert.Action{
				"critical": alert.ActionPage,
				"warning":  alert.ActionTicket,
			},
			PageDivisor:   112,
			DefaultPeriod: d("30d"),
			Windows: []WindowAction{
				{Long: d("1h"), Short: d("5m"), Action: alert.ActionPage},
				{Long: d("6h"), Short: d("30m"), Action: alert.ActionPage},
				{Long: d("1d"), Short: d("2h"), Action: alert.ActionTicket},
				{Long: d("3d"), Short: d("6h"), Action: alert.ActionTicket},
				{Long: d("4d"), Short: d("6h"), Action: alert.ActionTicket},
			}},
		// Factors: see the package comment (fraction of a 30-day budget).
		BurnRate: BurnRateConfig{Tiers: []Tier{
			{Long: d("1h"), Short: d("5m"), Factor: 14.4, Action: alert.ActionPage}, // 2% in 1h
			{Long: d("6h"), Short: d("30m"), Factor: 6, Action: alert.ActionPage},   // 5% in 6h
			{Long: d("1d"), Short: d("2h"), Factor: 3, Action: alert.ActionTicket},  // 10% in 1d
			{Long: d("3d"), Short: d("6h"), Factor: 1, Action: alert.ActionTicket},  // 10% in 3d
		}},
		Capacity: CapacityConfig{Warn: 0.80, Critical: 0.90},
		Regression: RegressionConfig{
			BaselineWindow:     d("7d"),
			DefaultSensitivity: "medium",
			Sensitivities: Sensitivities{
				High:   Thresholds{Warn: 1.10, Critical: 1.20},
				Medium: Thresholds{Warn: 1.15, Critical: 1.30},
				Low:    Thresholds{Warn: 1.25, Critical: 1.50},
			},
		},
		SeverityLabels:  []string{"severity", "grafana_slo_severity", "severity_level", "priority", "level", "urgency"},
		PageLabels:      []string{"pager", "page"},
		Severity:        defaultSeverityWords(),
		SeverityNumbers: SeverityNumbers{Page: 3, Ticket: 6},
		DefaultAction:   alert.ActionTicket,
	}
}

// defaultSeverityWords is the word map of docs/policies.md (severity): the
// seed's words, plus the most severe spellings of incident tooling that
// are common in rules (P0, SEV0, S0/S1, crit, Zabbix's disaster, Jira's
// blocker) — a P0 must not be a ticket — and sev4/S2/S3/S4 tickets. SEV-2
// pages like P2: on the incident scales that write it (PagerDuty's response
// guide, Atlassian's) a SEV-2 is a major incident someone is paged for,
// while GitLab's S2 pages only with its pager label. Values are
// also matched without "-", "_" or spaces (SEV-1, P_0, sev 2).
//
// high/medium/low follow the tools that use them as a scale where high is
// the most severe: PagerDuty's urgency (high notifies and escalates, low
// notifies without paging) and high/medium/low severities (Nobl9 and many
// shops). So high pages, and low is a ticket: a firing alert someone named
// low is still seen, never silently none. The scales' other top words page
// too: urgent (Zendesk's and Linear's top priority), highest (Jira's),
// severe (above moderate on low/moderate/severe scales), very high (the
// top of very low … very high scales, as highest); moderate, Jira's lowest
// and very low are tickets like medium and low; trace is none like debug.
// "very high" and "very-high" are read as veryhigh (separators dropped).
//
// Zabbix's scale (not classified, information, warning, average, high,
// disaster) reads as its words say: information is none like info,
// average a ticket between warning and high.
//
// The top-tier words of logging and incident scales page too: emerg
// (syslog's most severe level, beside its alert, crit and err), panic
// (syslog's old name for emerg, and Go's and logrus' top level), fatal,
// catastrophic.
func defaultSeverityWords() map[string]alert.Action {
	m := map[string]alert.Action{}
	for act, words := range map[alert.Action][]string{
		alert.ActionPage: {"critical", "page", "emergency", "emerg", "panic", "alert", "fatal", "catastrophic", "sev1", "sev2", "p1", "p2", "p0", "sev0", "s0", "s1", "crit",
			"disaster", "blocker", "high", "highest", "veryhigh", "urgent", "severe"},
		alert.ActionTicket: {"warning", "warn", "ticket", "task", "error", "major", "minor", "medium", "moderate", "low", "lowest", "verylow", "average", "sev3", "sev4", "s2", "s3", "s4", "p3", "p4", "err"},
		alert.ActionNone:   {"info", "informational", "information", "none", "debug", "trace", "notice", "p5"},
	} {
		for _, w := range words {
			m[w] = act
		}
	}
	return m
}

// UnmarshalYAML fills the defaults and then decodes the section over them:
// a key left out keeps its default; a list given (pyrra.windows,
// burn_rate.tiers, severity_labels, page_labels) replaces the default list
// (an empty page_labels turns paging labels off); a map given
// (sloth, pyrra.severity, severity)
// adds to or overrides the default entries (map a default key to none to
// silence it).
func (c *Config) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultConfig()
	defaults := *c
	// Strict decoding refuses keys already present in a map, so the maps
	// are decoded empty and merged with their defaults afterwards.
	c.Sloth, c.Severity, c.Pyrra.Severity = nil, nil, nil
	type plain Config
	if err := unmarshal((*plain)(c)); err != nil {
		return fmt.Errorf("decode policies: %w", err)
	}
	c.Sloth = merge(defaults.Sloth, c.Sloth)
	c.Severity = merge(defaults.Severity, c.Severity)
	c.Pyrra.Severity = merge(defaults.Pyrra.Severity, c.Pyrra.Severity)
	return nil
}

func merge(defaults, given map[string]alert.Action) map[string]alert.Action {
	for k, v := range given {
		defaults[k] = v
	}
	return defaults
}

// Validate checks the section and returns every problem found, joined, each
// prefixed by its YAML path relative to the section (e.g.
// "burn_rate.tiers[2].factor: ...").
func (c *Config) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}

	for _, k := range sortedKeys(c.Sloth) {
		if !validAction(c.Sloth[k], true) {
			add("sloth."+k, "unknown action %q (want page, ticket or none)", c.Sloth[k])
		}
	}

	for _, k := range sortedKeys(c.Pyrra.Severity) {
		if !validAction(c.Pyrra.Severity[k], true) {
			add("pyrra.severity."+k, "unknown action %q (want page, ticket or none)", c.Pyrra.Severity[k])
		}
	}
	if !(c.Pyrra.PageDivisor >= 1) {
		add("pyrra.page_divisor", "must be at least 1, got %s", fmtNum(c.Pyrra.PageDivisor))
	}
	if c.Pyrra.DefaultPeriod <= 0 {
		add("pyrra.default_period", "must be positive, got %s", c.Pyrra.DefaultPeriod)
	}
	seen := map[[2]model.Duration]int{}
	for i, w := range c.Pyrra.Windows {
		p := fmt.Sprintf("pyrra.windows[%d]", i)
		checkWindows(p, w.Long, w.Short, add)
		if !validAction(w.Action, false) {
			add(p+".action", "unknown action %q (want page or ticket)", w.Action)
		}
		key := [2]model.Duration{w.Long, w.Short}
		if j, dup := seen[key]; dup {
			add(p, "window pair %s/%s already listed at pyrra.windows[%d]", w.Long, w.Short, j)
		} else {
			seen[key] = i
		}
	}

	for i, t := range c.BurnRate.Tiers {
		p := fmt.Sprintf("burn_rate.tiers[%d]", i)
		checkWindows(p, t.Long, t.Short, add)
		if t.Factor < 0 {
			add(p+".factor", "must not be negative, got %s", fmtNum(t.Factor))
		}
		if !validAction(t.Action, false) {
			add(p+".action", "unknown action %q (want page or ticket)", t.Action)
		}
		if t.Action != alert.ActionTicket {
			continue
		}
		// A ticket tier that needs a faster burn than a page tier over the
		// same windows can never decide: the page tier always matches first.
		for j, pt := range c.BurnRate.Tiers {
			if pt.Action == alert.ActionPage && pt.Long == t.Long && pt.Short == t.Short && t.Factor > pt.Factor {
				add(p+".factor", "ticket factor %s over %s/%s is higher than page factor %s of burn_rate.tiers[%d]",
					fmtNum(t.Factor), t.Long, t.Short, fmtNum(pt.Factor), j)
			}
		}
	}

	checkThresholds("capacity", c.Capacity.Warn, c.Capacity.Critical, add)

	if c.Regression.BaselineWindow <= 0 {
		add("regression.baseline_window", "must be positive, got %s", c.Regression.BaselineWindow)
	}
	if !validSensitivity(c.Regression.DefaultSensitivity) {
		add("regression.default_sensitivity", "unknown sensitivity %q (want high, medium or low)", c.Regression.DefaultSensitivity)
	}
	checkThresholds("regression.sensitivities.high", c.Regression.Sensitivities.High.Warn, c.Regression.Sensitivities.High.Critical, add)
	checkThresholds("regression.sensitivities.medium", c.Regression.Sensitivities.Medium.Warn, c.Regression.Sensitivities.Medium.Critical, add)
	checkThresholds("regression.sensitivities.low", c.Regression.Sensitivities.Low.Warn, c.Regression.Sensitivities.Low.Critical, add)

	for _, k := range sortedKeys(c.Severity) {
		if !validAction(c.Severity[k], true) {
			add("severity."+k, "unknown action %q (want page, ticket or none)", c.Severity[k])
		}
	}
	if len(c.SeverityLabels) == 0 {
		add("severity_labels", "at least one label is required")
	}
	for i, l := range c.SeverityLabels {
		if !validLabelName(l) {
			add(fmt.Sprintf("severity_labels[%d]", i), "%q is not a label name", l)
		}
	}
	for i, l := range c.PageLabels {
		if !validLabelName(l) {
			add(fmt.Sprintf("page_labels[%d]", i), "%q is not a label name", l)
		}
	}
	if c.SeverityNumbers.Page < 0 {
		add("severity_numbers.page", "must not be negative, got %d", c.SeverityNumbers.Page)
	}
	if c.SeverityNumbers.Ticket < c.SeverityNumbers.Page {
		add("severity_numbers.ticket", "%d must not be below page %d", c.SeverityNumbers.Ticket, c.SeverityNumbers.Page)
	}
	if !validAction(c.DefaultAction, false) {
		add("default_action", "unknown action %q (want page or ticket: an alert without input is never dropped)", c.DefaultAction)
	}
	return errors.Join(errs...)
}

func checkWindows(p string, long, short model.Duration, add func(string, string, ...any)) {
	if long <= 0 {
		add(p+".long", "must be a positive duration, got %s", long)
	}
	if short <= 0 {
		add(p+".short", "must be a positive duration, got %s", short)
	}
	if long > 0 && short >= long {
		add(p+".short", "window %s must be shorter than the long window %s", short, long)
	}
}

func checkThresholds(p string, warn, critical float64, add func(string, string, ...any)) {
	if warn <= 0 {
		add(p+".warn", "must be positive, got %s", fmtNum(warn))
	}
	if critical <= 0 {
		add(p+".critical", "must be positive, got %s", fmtNum(critical))
	}
	if warn >= critical {
		add(p, "warn %s must be lower than critical %s", fmtNum(warn), fmtNum(critical))
	}
}

func validAction(a alert.Action, allowNone bool) bool {
	switch a {
	case alert.ActionPage, alert.ActionTicket:
		return true
	case alert.ActionNone:
		return allowNone
	}
	return false
}

func validSensitivity(s string) bool {
	return s == "high" || s == "medium" || s == "low"
}

func sortedKeys(m map[string]alert.Action) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// windowName renders a window the way Prometheus does ("1h", "30m", "3d"),
// except that whole days stay days ("7d", not "1w") as SREs write them.
func windowName(d model.Duration) string {
	const day = model.Duration(24 * time.Hour)
	if d > 0 && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}

// pairName renders a window pair, e.g. "1h/5m".
func pairName(long, short model.Duration) string {
	return windowName(long) + "/" + windowName(short)
}

func lowerKeys(m map[string]alert.Action) map[string]alert.Action {
	out := make(map[string]alert.Action, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

// validLabelName reports whether s is a classic Prometheus label name,
// [a-zA-Z_][a-zA-Z0-9_]*.
func validLabelName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
