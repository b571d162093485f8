package policies

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/routing/alert"
)

const fixtures = "../testdata/policies"

func loadConfig(t *testing.T, name string) (Config, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return c, err
	}
	return c, c.Validate()
}

func TestBadConfigs(t *testing.T) {
	cases := []struct {
		file string
		want string
	}{
		{"negative-factor.bad.yml", "burn_rate.tiers[1].factor: must not be negative, got -1.0"},
		{"ticket-above-page.bad.yml", "burn_rate.tiers[1].factor: ticket factor 20.0 over 1h/5m is higher than page factor 14.4 of burn_rate.tiers[0]"},
		{"short-not-shorter.bad.yml", "burn_rate.tiers[0].short: window 1h must be shorter than the long window 1h"},
		{"pyrra-short-longer.bad.yml", "pyrra.windows[0].short: window 6h must be shorter than the long window 30m"},
		{"pyrra-duplicate.bad.yml", "pyrra.windows[1]: window pair 1h/5m already listed at pyrra.windows[0]"},
		{"unknown-tier-action.bad.yml", `burn_rate.tiers[0].action: unknown action "wake-everyone" (want page or ticket)`},
		{"unknown-severity-action.bad.yml", `severity.sev1: unknown action "pager" (want page, ticket or none)`},
		{"unknown-sloth-action.bad.yml", `sloth.page: unknown action "call" (want page, ticket or none)`},
		{"capacity-warn-above-critical.bad.yml", "capacity: warn 0.95 must be lower than critical 0.9"},
		{"regression-warn-equals-critical.bad.yml", "regression.sensitivities.high: warn 1.2 must be lower than critical 1.2"},
		{"regression-default-sensitivity.bad.yml", `regression.default_sensitivity: unknown sensitivity "extreme" (want high, medium or low)`},
		{"regression-baseline-window.bad.yml", "regression.baseline_window: must be positive, got 0s"},
		{"default-action-none.bad.yml", `default_action: unknown action "none" (want page or ticket: an alert without input is never dropped)`},
		{"unknown-key.bad.yml", "field warning not found in type policies.CapacityConfig"},
	}
	files, err := filepath.Glob(filepath.Join(fixtures, "*.bad.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(cases) {
		t.Errorf("%d *.bad.yml fixtures but %d cases: every fixture needs its expected message", len(files), len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			_, err := loadConfig(t, tc.file)
			if err == nil {
				t.Fatalf("loaded without error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.want)
			}
			if strings.HasSuffix(tc.file, "unknown-key.bad.yml") {
				return
			}
			// New refuses what Validate refuses.
			var c Config
			b, _ := os.ReadFile(filepath.Join(fixtures, tc.file))
			if err := yaml.UnmarshalStrict(b, &c); err != nil {
				t.Fatal(err)
			}
			if _, err := New(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := DefaultConfig()
	c.Capacity.Warn = 2
	c.BurnRate.Tiers[0].Factor = -3
	c.Severity["x"] = "loud"
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted three problems")
	}
	for _, want := range []string{"capacity:", "burn_rate.tiers[0].factor:", "severity.x:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig invalid: %v", err)
	}
}

func TestEmptySectionDecodesToDefaults(t *testing.T) {
	var c Config
	if err := yaml.UnmarshalStrict([]byte("{}"), &c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, DefaultConfig()) {
		t.Errorf("decoded %+v, want the defaults", c)
	}
}

func TestGoodConfigMergesAndReplaces(t *testing.T) {
	c, err := loadConfig(t, "good.yml")
	if err != nil {
		t.Fatalf("good.yml: %v", err)
	}
	if c.Capacity.Warn != 0.75 || c.Capacity.Critical != 0.90 {
		t.Errorf("capacity = %+v, want warn 0.75 and the default critical 0.90", c.Capacity)
	}
	if h := c.Regression.Sensitivities.High; h.Warn != 1.10 || h.Critical != 1.25 {
		t.Errorf("high = %+v, want the default warn 1.10 and critical 1.25", h)
	}
	if c.Regression.Sensitivities.Low.Critical != 1.50 {
		t.Errorf("low sensitivity lost its default: %+v", c.Regression.Sensitivities.Low)
	}
	if c.Severity["sev1"] != alert.ActionPage || c.Severity["critical"] != alert.ActionPage {
		t.Errorf("severity map did not merge with the defaults: %v", c.Severity)
	}
	if len(c.Pyrra.Windows) != 6 {
		t.Errorf("pyrra windows = %d, want the 6 listed", len(c.Pyrra.Windows))
	}
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Decide(firing(map[string]string{"slo": "a", "long": "1h4m", "short": "5m"}), nil, testNow)
	check(t, d, want{alert.ActionPage, PolicyPyrra, "1h4m/5m", ""})
	d = e.Decide(firing(map[string]string{"severity": "bogus"}), nil, testNow)
	check(t, d, want{alert.ActionPage, PolicyDefault, "default", "no policy input: page so that a human sees it"})
}

func TestDefaultsMatchTheSpec(t *testing.T) {
	c := DefaultConfig()
	var got []string
	for _, tr := range c.BurnRate.Tiers {
		got = append(got, pairName(tr.Long, tr.Short)+">"+fmtNum(tr.Factor)+"="+string(tr.Action))
	}
	want := []string{"1h/5m>14.4=page", "6h/30m>6.0=page", "1d/2h>3.0=ticket", "3d/6h>1.0=ticket"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tiers = %v, want %v", got, want)
	}
	if windowName(c.Regression.BaselineWindow) != "7d" {
		t.Errorf("baseline window = %s, want 7d", c.Regression.BaselineWindow)
	}
}
