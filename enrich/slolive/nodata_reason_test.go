package slolive

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

func sample(name string, v float64) *model.Sample {
	return &model.Sample{Metric: model.Metric{model.MetricNameLabel: model.LabelValue(name), "slo": "api"}, Value: model.SampleValue(v)}
}

// "Prometheus has no recording rules or samples for this SLO" was the
// reason on every page of a default Pyrra install (no --generic-rules: the
// burn-rate series are there, pyrra_objective is not) and of an SLO whose
// burn series are all NaN (no traffic): the on-call went looking for rules
// that were there. Each now says what is missing.
func TestNoDataReasonsSayWhatIsMissing(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		p    *plan
		r    results
		want string
	}{
		{"pyrra without its objective", &plan{kind: KindPyrra, slo: "api"},
			results{qBurn: model.Vector{sample("http_requests:burnrate1h", 0.04), sample("http_requests:burnrate5m", 0.05)}},
			ReasonNoObjective},
		{"pyrra without anything", &plan{kind: KindPyrra, slo: "api"}, results{}, ReasonNoData},
		{"sloth, every burn NaN", &plan{kind: KindSloth, slo: "api"},
			results{qBurn: model.Vector{sample(slothSLIPrefix+"1h", math.NaN()), sample(slothSLIPrefix+"5m", math.NaN())},
				qBudget: model.Vector{sample(slothErrorBudget, 0.001)}},
			ReasonNoFiniteBurn},
		{"sloth without series", &plan{kind: KindSloth, slo: "api"}, results{qBudget: model.Vector{sample(slothErrorBudget, 0.001)}}, ReasonNoData},
	} {
		_, err := tc.p.assemble(tc.r, now)
		if !errors.Is(err, ErrNoData) {
			t.Fatalf("%s: %v, want ErrNoData", tc.name, err)
		}
		var le *LookupError
		if !errors.As(lookupError(err), &le) || le.Reason != tc.want {
			t.Errorf("%s: reason %q, want %q", tc.name, le.Reason, tc.want)
		}
	}
}
