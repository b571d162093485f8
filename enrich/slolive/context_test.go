package slolive

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

func liveContext(burns map[time.Duration]float64) *Context {
	c := &Context{SLO: "svc", Kind: KindSloth, BudgetRemaining: 0.37, HasBudget: true, Trend: TrendRising}
	for w, r := range burns {
		c.Burns = append(c.Burns, Burn{Window: w, Rate: r})
	}
	c.Burns = sortBurns(c.Burns)
	return c
}

const (
	m5, m30, h1, h2, h6, d1, d3 = 5 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour, 24 * time.Hour, 72 * time.Hour
)

func TestSummary(t *testing.T) {
	cases := []struct {
		name string
		c    *Context
		want string
	}{
		{"the issue's example", liveContext(map[time.Duration]float64{m5: 16, h1: 15.24, h6: 7.08}),
			"budget 37 % left · burn 1h 15.2× · 6h 7.1× · rising"},
		{"Pyrra's scaled windows count as the nearest", liveContext(map[time.Duration]float64{64 * time.Minute: 3, 386 * time.Minute: 1}),
			"budget 37 % left · burn 1h 3.0× · 6h 1.0× · rising"},
		{"overspent budget, no trend", &Context{BudgetRemaining: -0.12, HasBudget: true, Burns: []Burn{{h1, 2}}},
			"budget overspent (-12 %) · burn 1h 2.0×"},
		{"only burns: the budget is said unknown", &Context{Burns: []Burn{{h6, 2}}, Trend: TrendFalling}, "budget unknown · burn 6h 2.0× · falling"},
		// The 1h ratio NaN (no traffic in it): the summary read "budget
		// unknown" alone while the details held burn_5m (an audit).
		{"no long window: the short ones", &Context{Burns: []Burn{{m5, 20}, {30 * time.Minute, 8}}}, "budget unknown · burn 5m 20.0× · 30m 8.0×"},
		// Rounded to whole percents, these read "overspent (-0 %)" and "0 %
		// left": under 1 % the summary keeps a decimal, and the sign.
		{"overspent by under 1 %", &Context{BudgetRemaining: -0.004, HasBudget: true}, "budget overspent (-0.4 %)"},
		{"under 1 % left", &Context{BudgetRemaining: 0.004, HasBudget: true}, "budget 0.4 % left"},
		{"overspent by a hair", &Context{BudgetRemaining: -0.0002, HasBudget: true}, "budget overspent (< 0.1 %)"},
		{"a hair left", &Context{BudgetRemaining: 0.0002, HasBudget: true}, "budget < 0.1 % left"},
		{"none left, none overspent", &Context{BudgetRemaining: 0, HasBudget: true}, "budget 0 % left"},
		{"1 % and more in whole percents", &Context{BudgetRemaining: 0.014, HasBudget: true}, "budget 1 % left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.c.Summary(); got != c.want {
				t.Errorf("Summary() = %q, want %q", got, c.want)
			}
		})
	}
}

func TestTrend(t *testing.T) {
	for _, c := range []struct {
		now, before float64
		want        Trend
	}{
		{15, 10, TrendRising}, {10, 15, TrendFalling}, {10, 10.5, TrendSteady},
		{0.04, 0, TrendSteady}, {1, 0, TrendRising}, {0, 0, TrendSteady},
	} {
		if got := trend(c.now, c.before); got != c.want {
			t.Errorf("trend(%g, %g) = %q, want %q", c.now, c.before, got, c.want)
		}
	}
}

func TestBurnRatesFeedThePolicy(t *testing.T) {
	c := liveContext(map[time.Duration]float64{m5: 14.41, h1: 15.2})
	a := &alert.Alert{}
	a.Labels = map[string]string{"alertname": "SLO", "slo": "svc", "severity": "warning"}
	a.Annotations = map[string]string{"summary": "x"}
	withLive, ok := c.WithBurnRates(a)
	if !ok {
		t.Fatal("an alert without burn rates did not take the live ones")
	}
	if a.Annotations["burn_rate_1h"] != "" {
		t.Error("WithBurnRates modified the alert")
	}
	if got := withLive.Annotations["burn_rate_5m"]; got != "14.41" {
		t.Errorf("burn_rate_5m = %q, want full precision 14.41", got)
	}
	eng, err := policies.New(policies.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	d := eng.Decide(withLive, &alert.Classification{}, time.Now())
	if d.Action != alert.ActionPage || d.Policy != policies.PolicyBurnRate {
		t.Errorf("decision from live burn rates: %+v, want a burn-rate page", d)
	}
	a.Labels["burn_rate_1h"] = "2"
	if _, ok := c.WithBurnRates(a); ok {
		t.Error("live burn rates replaced the alert's own")
	}
}

func TestBelowEveryTier(t *testing.T) {
	tiers := policies.DefaultConfig().BurnRate.Tiers
	cases := []struct {
		name  string
		burns map[time.Duration]float64
		below bool
		note  string
	}{
		{"a page tier still burning", map[time.Duration]float64{m5: 20, h1: 15, m30: 1, h6: 1}, false, ""},
		{"fallen below every tier", map[time.Duration]float64{m5: 20, h1: 2, m30: 1, h6: 1, h2: 0.5, d1: 0.5, d3: 0.9},
			true, "live burn now below every tier (live from Prometheus): 1h 2.0× ≤ 13.44, 6h 1.0× ≤ 5.6, 1d 0.5× ≤ 2.8, 3d 0.9× ≤ 0.9333"},
		// A Pyrra page fires at 14× on 1h and 5m (a 28-day SLO's 2 % of
		// budget an hour, Sloth's 13.44): not below the 14.4 tier, though
		// under it (an audit).
		{"a Pyrra page at 14.2×", map[time.Duration]float64{m5: 14.22, h1: 14.22, m30: 3.9, h6: 3.9, h2: 1, d1: 1, d3: 0.8}, false, ""},
		{"a 28-day Sloth page at 5.7× over 6h", map[time.Duration]float64{m5: 1, h1: 1, m30: 5.7, h6: 5.7, h2: 1, d1: 1, d3: 0.8}, false, ""},
		{"no tier has both windows: unknown", map[time.Duration]float64{h1: 0.1}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			below, note := liveContext(c.burns).BelowEveryTier(tiers)
			if below != c.below || note != c.note {
				t.Errorf("BelowEveryTier = %v, %q; want %v, %q", below, note, c.below, c.note)
			}
		})
	}
}

func TestExemplarHintWithoutLinks(t *testing.T) {
	c := &Context{Exemplars: []Exemplar{{TraceID: "abc", Value: 2.5}, {TraceID: "def", Value: 1}}}
	h, ok := c.ExemplarHint()
	if !ok || h.Text != "traces of bad requests in the alert window, worst first: abc (2.5); def (1)" || !h.Specific {
		t.Errorf("hint %+v", h)
	}
	if _, ok := (&Context{}).ExemplarHint(); ok {
		t.Error("a hint without exemplars")
	}
}

func TestConfig(t *testing.T) {
	var c Config
	if err := yaml.UnmarshalStrict([]byte("url: http://prometheus:9090/\n"), &c); err != nil {
		t.Fatal(err)
	}
	if c.Timeout != model.Duration(300*time.Millisecond) || c.CacheTTL != model.Duration(15*time.Second) || c.FromGeneratorURL {
		t.Errorf("defaults: %+v", c)
	}
	bad := []struct{ in, want string }{
		{"timeout: 1s\n", "prometheus.url: required (or set prometheus.from_generator_url)"},
		{"url: ftp://x\n", `prometheus.url: "ftp://x": scheme must be http or https`},
		{"url: http://x\ntimeout: 0s\n", "prometheus.timeout: must be positive"},
		{"url: http://x\nexpr: {burn_rate: '{{.Window'}\n", "prometheus.expr.burn_rate: template"},
		{"url: http://x\nexpr: {budget_remaining: 'x'}\n", "prometheus.expr.budget_remaining: needs prometheus.expr.burn_rate too"},
		{"url: http://x\ncache: 1s\n", "field cache not found"},
		{"url: http://x\nhttp_config: {bearer_token: a, bearer_token_file: b}\n", "decode prometheus: at most one of bearer_token & bearer_token_file"},
	}
	for _, b := range bad {
		var c Config
		err := yaml.UnmarshalStrict([]byte(b.in), &c)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want %q", b.in, err, b.want)
		}
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	var c Config
	if err := yaml.UnmarshalStrict([]byte("url: http://x\nhttp_config: {basic_auth: {username: u, password: hunter2}}\n"), &c); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "hunter2") {
		t.Errorf("the password printed:\n%s", out)
	}
}

func TestTemplatesQuoteLabelValues(t *testing.T) {
	tpl, err := parseTemplates(&Config{Expr: ExprConfig{BurnRate: `x{{.Window}}{slo={{quote .SLO}}}`}})
	if err != nil {
		t.Fatal(err)
	}
	a := &alert.Alert{}
	a.Labels = map[string]string{"slo": `a"} or vector(1) #`}
	p, err := makePlan(a, tpl)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.queries[0].expr, `x5m{slo="a\"} or vector(1) #"}`; got != want {
		t.Errorf("expr %s, want %s", got, want)
	}
	// A label the template needs but the alert lacks: no lookup.
	tpl, _ = parseTemplates(&Config{Expr: ExprConfig{BurnRate: `x{{.Labels.job}}`}})
	if _, err := makePlan(a, tpl); err == nil || !strings.Contains(err.Error(), "render prometheus.expr.burn_rate") {
		t.Errorf("missing label: err %v", err)
	}
}
