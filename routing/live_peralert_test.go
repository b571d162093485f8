package routing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// lookupErr is a lookup's error that says whether Prometheus itself failed.
type lookupErr struct {
	reason string
	unwell bool
}

func (e lookupErr) Error() string           { return e.reason }
func (e lookupErr) LiveUnavailable() string { return e.reason }
func (e lookupErr) PrometheusUnwell() bool  { return e.unwell }

// One alert's own lookup failure — its prometheus.expr template needs a
// label it lacks — was stamped on every later alert of the same SLO in
// the webhook: an alert that pages on its live burn alone was a ticket,
// "the template needs a label the alert lacks" though it had the label.
// A failure of Prometheus itself still stands for the SLO's other alerts.
func TestOneAlertsLiveLookupFailureIsItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		unwell    bool
		wantPages int
	}{
		{"the alert's own failure", false, 1},
		{"Prometheus' failure", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ok := &fakeLive{burns: map[string]string{"burn_rate_1h": "20", "burn_rate_5m": "25"}}
			calls := 0
			lookup := routing.LiveLookupFunc(func(ctx context.Context, a *alert.Alert) (*routing.Live, error) {
				calls++
				if _, has := a.Labels["tier"]; !has {
					return nil, lookupErr{reason: "no data: the prometheus.expr template needs a label the alert lacks", unwell: tc.unwell}
				}
				return ok.LookupLive(ctx, a)
			})
			p := livePipeline(t, e, lookup)
			// The alert without the label comes first in the payload.
			sum, err := process(t, p, sloAlert("firing", "instance", "a", "severity", "warning"), sloAlert("firing", "instance", "b", "severity", "warning", "tier", "2"))
			if err != nil {
				t.Fatalf("Process: %v (%+v)", err, sum)
			}
			pages := len(e.pd.notifications())
			if pages != tc.wantPages {
				t.Fatalf("%d PagerDuty notifications, want %d (lookups %d)", pages, tc.wantPages, calls)
			}
			if tc.unwell {
				return
			}
			r := only(t, e.pd)
			if r.Alert.Labels["tier"] != "2" || strings.Contains(strings.Join(r.Decision.Reasons, " "), "lacks") {
				t.Errorf("paged %v with reasons %q; want the alert with the label, decided on its own lookup", r.Alert.Labels, r.Decision.Reasons)
			}
		})
	}
}
