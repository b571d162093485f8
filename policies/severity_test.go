package policies

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// TestSeverityValues is the table of docs/policies.md (section 5) for the
// spellings an audit found falling to the default ticket.
func TestSeverityValues(t *testing.T) {
	e := newEngine(t)
	const unrecognised = alert.Action("not recognised")
	cases := []struct {
		in   string
		want alert.Action
	}{
		// Words of severity scales.
		{"urgent", alert.ActionPage},
		{"Urgent", alert.ActionPage},
		{"URGENT", alert.ActionPage},
		{"severe", alert.ActionPage},
		{"highest", alert.ActionPage},
		{"high", alert.ActionPage},
		{"moderate", alert.ActionTicket},
		{"lowest", alert.ActionTicket},
		{"trace", alert.ActionNone},
		{"debug", alert.ActionNone},
		// Invisible and full-width characters: format characters are
		// dropped, then NFKC.
		{"critical\u200b", alert.ActionPage}, // zero-width space
		{"\ufeffcritical", alert.ActionPage}, // BOM
		{"crit\u00adical", alert.ActionPage}, // soft hyphen
		{"critical\u00a0", alert.ActionPage}, // no-break space
		{"\u200d warning \u200c", alert.ActionTicket},
		{"ｃｒｉｔｉｃａｌ", alert.ActionPage},
		{"ＣＲＩＴＩＣＡＬ", alert.ActionPage},
		{"ｗａｒｎｉｎｇ", alert.ActionTicket},
		{"Ｐ１", alert.ActionPage},
		{"ｓｅｖ－１", alert.ActionPage},
		{"\u200b", unrecognised},
		{"сritical", unrecognised}, // a Cyrillic с: not the same word
		// Whole numbers written with a fraction of zeros.
		{"1.0", alert.ActionPage},
		{"3.0", alert.ActionPage},
		{"3.00", alert.ActionPage},
		{"0.0", alert.ActionPage},
		{"4.0", alert.ActionTicket},
		{"6.0", alert.ActionTicket},
		{"7.0", alert.ActionNone},
		{"1", alert.ActionPage},
		{"+1", alert.ActionPage},
		{"1.5", unrecognised},
		{"1.", unrecognised},
		{".0", unrecognised},
		{"-1", unrecognised},
		{"-1.0", unrecognised},
		{"1e0", unrecognised},
		{"9999999999", alert.ActionNone},
		{"99999999999999999999", unrecognised}, // beyond int64, as before
		// Compounds: a priority and a severity word that agree.
		{"P1-Critical", alert.ActionPage},
		{"p1 critical", alert.ActionPage},
		{"1 - Critical", alert.ActionPage},
		{"critical/page", alert.ActionPage},
		{"P1 (critical)", alert.ActionPage},
		{"[P1] critical", alert.ActionPage},
		{"sev-1 | critical", alert.ActionPage},
		{"SEV 3 / warning", alert.ActionTicket},
		{"SEV-2", alert.ActionPage},
		{"Information", alert.ActionNone}, // Zabbix
		{"Average", alert.ActionTicket},   // Zabbix
		{"sev 2 / critical", alert.ActionPage},
		{"P3 - Warning", alert.ActionTicket},
		{"4 - warning", alert.ActionTicket},
		{"info/debug", alert.ActionNone},
		{"5 - Info", unrecognised}, // 5 tickets, info is none: they disagree
		{"P3-Critical", unrecognised},
		{"1 - Warning", unrecognised},
		{"critical/warning", unrecognised},
		{"high-low", unrecognised},
		// Negations never page, whatever they negate.
		{"non-critical", unrecognised},
		{"Non-Critical", unrecognised},
		{"not-critical", unrecognised},
		{"not critical", unrecognised},
		{"noncritical", unrecognised},
		{"non_critical", unrecognised},
		{"no page", unrecognised},
		{"never page", unrecognised},
		{"ｎｏｎ－ｃｒｉｔｉｃａｌ", unrecognised},
		// Other parts that are not severities.
		{"page-me", unrecognised},
		{"critical-ish", unrecognised},
		{"critical-error-warning-info-debug", unrecognised}, // more parts than a compound has
		{"ok", unrecognised},
		{"unknown", unrecognised},
		{"-", unrecognised},
		{"//", unrecognised},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			want := tc.want
			got, known := e.severityAction(tc.in)
			if !known {
				got = unrecognised
			}
			if got != want {
				t.Errorf("severityAction(%q) = %s, want %s", tc.in, got, want)
			}
		})
	}
}

func TestSeverityValuesDecide(t *testing.T) {
	e := newEngine(t)
	cases := []struct {
		name   string
		labels map[string]string
		want   want
	}{
		{"urgent pages", map[string]string{"severity": "Urgent"}, want{alert.ActionPage, PolicySeverity, "urgent", `severity="Urgent" → page`}},
		{"severe pages", map[string]string{"severity": "severe"}, want{alert.ActionPage, PolicySeverity, "severe", ""}},
		{"trace is none", map[string]string{"severity": "trace"}, want{alert.ActionNone, PolicySeverity, "trace", ""}},
		{"a zero-width space is dropped, the tier is the word", map[string]string{"severity": "critical\u200b"},
			want{alert.ActionPage, PolicySeverity, "critical", `severity="critical\u200b" → page`}},
		{"full-width critical pages", map[string]string{"severity": "ｃｒｉｔｉｃａｌ"},
			want{alert.ActionPage, PolicySeverity, "critical", `severity="ｃｒｉｔｉｃａｌ" → page`}},
		{"severity_level 3.0 pages", map[string]string{"severity_level": "3.0"}, want{alert.ActionPage, PolicySeverity, "3.0", ""}},
		{"P1-Critical pages", map[string]string{"severity": "P1-Critical"}, want{alert.ActionPage, PolicySeverity, "p1-critical", `severity="P1-Critical" → page`}},
		{"1 - Critical pages", map[string]string{"severity": "1 - Critical"}, want{alert.ActionPage, PolicySeverity, "1 - critical", ""}},
		{"critical/page pages", map[string]string{"severity": "critical/page"}, want{alert.ActionPage, PolicySeverity, "critical/page", ""}},
		{"non-critical is a default ticket, never a page", map[string]string{"severity": "non-critical"},
			want{alert.ActionTicket, PolicyDefault, "default", `severity label "non-critical" is not a recognised severity ("non" negates it)`}},
		{"not-critical is a default ticket", map[string]string{"severity": "not-critical"},
			want{alert.ActionTicket, PolicyDefault, "default", `("not" negates it)`}},
		{"noncritical is a default ticket", map[string]string{"severity": "noncritical"},
			want{alert.ActionTicket, PolicyDefault, "default", `severity label "noncritical" is not a recognised severity`}},
		{"non-critical gives way to the next label", map[string]string{"severity": "non-critical", "priority": "P3"},
			want{alert.ActionTicket, PolicySeverity, "p3", `("non" negates it)`}},
		{"parts that disagree are not recognised, said so", map[string]string{"severity": "P3-Critical"},
			want{alert.ActionTicket, PolicyDefault, "default", `severity label "P3-Critical" is not a recognised severity (its parts disagree: p3 → ticket, critical → page)`}},
		{"a part that is no severity is said so", map[string]string{"severity": "page-me"},
			want{alert.ActionTicket, PolicyDefault, "default", `("me" is not a severity)`}},
		{"Pyrra's table reads a normalised severity", map[string]string{"slo": "api", "long": "1h", "short": "5m", "severity": "critical\u200b"},
			want{alert.ActionPage, PolicyPyrra, "critical", `pyrra severity="critical\u200b" → page (window pair 1h/5m)`}},
		{"a custom Pyrra severity may be a compound", map[string]string{"slo": "api", "long": "6h", "short": "30m", "severity": "P1-Critical"},
			want{alert.ActionPage, PolicyPyrra, "p1-critical", "by the severity table"}},
		{"a Pyrra non-critical leaves it to the window pair", map[string]string{"slo": "api", "long": "1d", "short": "2h", "severity": "non-critical"},
			want{alert.ActionTicket, PolicyPyrra, "1d/2h", "names neither page nor ticket"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, e.Decide(firing(tc.labels), nil, testNow), tc.want)
		})
	}
}

// TestNegatedSeveritiesNeverPage holds whatever the configured words: a
// table that maps "non" to page still does not page non-critical.
func TestNegatedSeveritiesNeverPage(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Severity["non"] = alert.ActionPage
	cfg.Severity["not"] = alert.ActionPage
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"non-critical", "not critical", "critical (not)", "no-page"} {
		if act, known := e.severityAction(v); known {
			t.Errorf("severityAction(%q) = %s, want not recognised", v, act)
		}
	}
}

func TestConfiguredSeverityWordsAreNormalised(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Severity["Ｓ９"] = alert.ActionPage // full-width in the configuration
	cfg.Pyrra.Severity["Fast\u200b"] = alert.ActionPage
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(t, e.Decide(firing(map[string]string{"severity": "s9"}), nil, testNow), want{alert.ActionPage, PolicySeverity, "s9", ""})
	check(t, e.Decide(firing(map[string]string{"slo": "x", "long": "3d", "short": "6h", "severity": "fast"}), nil, testNow),
		want{alert.ActionPage, PolicyPyrra, "fast", `pyrra severity="fast" → page`})
}

// Lower-case values, the common case, allocate nothing (an upper-case one
// costs the lower-casing; a non-ASCII one, NFKC).
func TestSeverityActionOfLowerCaseValuesAllocatesNothing(t *testing.T) {
	e := newEngine(t)
	for _, in := range []string{"critical", "warning", "SEV-1", "sev 2", "4", "3.0", "P1-Critical", "non-critical", "purple"} {
		in := strings.ToLower(in)
		if n := testing.AllocsPerRun(100, func() { _, _ = e.severityAction(in) }); n != 0 {
			t.Errorf("severityAction(%q) allocates %v times", in, n)
		}
	}
}

// FuzzSeverityAction checks that no value crashes the severity reader and
// that a value with a negating part never pages under the default table.
func FuzzSeverityAction(f *testing.F) {
	for _, s := range []string{"critical", "Critical", "SEV-1", "3.0", "P1-Critical", "1 - Critical", "critical/page",
		"non-critical", "not critical", "critical\u200b", "ｃｒｉｔｉｃａｌ", "P3-Critical", "", "\xff", "-1", "sev 2 / warning"} {
		f.Add(s)
	}
	e := newEngine(f)
	f.Fuzz(func(t *testing.T, s string) {
		act, known := e.severityAction(s)
		if !known || act != alert.ActionPage {
			return
		}
		key := severityKey(s)
		spans, n, _ := severityParts(key)
		for i := 0; i < n; i++ {
			if w := key[spans[i][0]:spans[i][1]]; negation(w) {
				t.Fatalf("severityAction(%q) = page, but %q negates it", s, w)
			}
		}
	})
}

// severityAction is severityOf without the key: what these tests read.
func (e *Engine) severityAction(v string) (alert.Action, bool) {
	act, _, known := e.severityOf(v)
	return act, known
}
