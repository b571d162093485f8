package routing_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

const liveSummary = "budget 37 % left · burn 1h 15.2× · 6h 7.1× · rising"

// fakeLive answers every SLO alert with the given burn rates, as the
// slolive adapter of cmd/router would; err fails every lookup.
type fakeLive struct {
	burns map[string]string
	below string
	err   error
	// panics makes every lookup panic (a bug in the lookup).
	panics bool
	calls  atomic.Int32
}

func (f *fakeLive) LookupLive(_ context.Context, a *alert.Alert) (*routing.Live, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	if f.panics {
		panic("unexpected Prometheus answer")
	}
	l := &routing.Live{SLO: alert.LiveSLO{Summary: liveSummary, Details: map[string]string{"summary": liveSummary}},
		BelowEveryTier: f.below, Hint: &alert.Hint{ID: "burn-exemplars", Text: "traces: 4bf92f35", Specific: true}}
	if _, own := a.Annotations["burn_rate_1h"]; !own {
		cp := *a
		cp.Annotations = map[string]string{}
		for k, v := range a.Annotations {
			cp.Annotations[k] = v
		}
		for k, v := range f.burns {
			cp.Annotations[k] = v
		}
		l.WithBurnRates = &cp
	}
	return l, nil
}

// sloAlert is an alert of SLO api-errors (an slo label) with no burn rates.
func sloAlert(status string, kv ...string) webhooktest.Alert {
	a := tAlert("APIErrorBudgetBurn", status, "", append([]string{"slo", "api-errors"}, kv...)...)
	delete(a.Labels, "test_action")
	a.Fingerprint = webhooktest.Fingerprint(a.Labels)
	return a
}

func livePipeline(t *testing.T, e *env, l routing.LiveLookup) *routing.Pipeline {
	t.Helper()
	dec, err := policies.New(policies.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := e.pipeline()
	p.Decider = dec
	p.Live = l
	return p
}

func only(t *testing.T, s *sink) *alert.Result {
	t.Helper()
	ns := s.notifications()
	if len(ns) != 1 || len(ns[0].Results) != 1 {
		t.Fatalf("notifications = %d, want one of one alert", len(ns))
	}
	return ns[0].Results[0]
}

func TestLiveSLOContextFeedsTheDecision(t *testing.T) {
	t.Run("an SLO alert without burn rates pages on live burn rates, and says so", func(t *testing.T) {
		e := newEnv(t)
		live := &fakeLive{burns: map[string]string{"burn_rate_1h": "15.2", "burn_rate_5m": "16"}}
		mustProcess(t, livePipeline(t, e, live), sloAlert("firing"))
		r := only(t, e.pd)
		why := strings.Join(r.Decision.Reasons, "; ")
		if r.Decision.Action != alert.ActionPage || r.Decision.Policy != policies.PolicyBurnRate || r.Decision.Tier != routing.LiveTier ||
			!strings.Contains(why, "live from Prometheus (the alert carried none), tier 1h/5m>14.4") {
			t.Fatalf("decision %+v; want a burn-rate page whose reasons say live from Prometheus", r.Decision)
		}
		if r.Live == nil || r.Live.Summary != liveSummary || !r.Live.Decided {
			t.Errorf("live = %+v; want the summary, decided", r.Live)
		}
		if h := r.Classification.Hints; len(h) == 0 || h[len(h)-1].ID != "burn-exemplars" {
			t.Errorf("hints = %+v; want the burn-exemplars hint", h)
		}
		if len(e.slack.notifications()) != 0 {
			t.Errorf("slack got %d notifications, want none", len(e.slack.notifications()))
		}
	})
	t.Run("a page from labels whose live burn fell below every tier is sent and says so", func(t *testing.T) {
		e := newEnv(t)
		live := &fakeLive{burns: map[string]string{"burn_rate_1h": "0.5", "burn_rate_5m": "0.4", "burn_rate_6h": "0.5", "burn_rate_30m": "0.5"},
			below: "live burn now below every tier (live from Prometheus): 1h 0.5× ≤ 14.4"}
		mustProcess(t, livePipeline(t, e, live), sloAlert("firing", "severity", "critical"))
		r := only(t, e.pd)
		why := strings.Join(r.Decision.Reasons, "; ")
		if r.Decision.Action != alert.ActionPage || r.Decision.Policy != policies.PolicySeverity || !strings.Contains(why, "below every tier") {
			t.Fatalf("decision %+v; want the severity page, its reasons saying the live burn is below every tier", r.Decision)
		}
		if r.Live == nil || r.Live.Decided || !strings.Contains(r.Live.Note, "below every tier") {
			t.Errorf("live = %+v; want a note, not decided", r.Live)
		}
	})
	t.Run("burn rates of the alert's own decide; live adds the context", func(t *testing.T) {
		e := newEnv(t)
		live := &fakeLive{burns: map[string]string{"burn_rate_1h": "0.1", "burn_rate_5m": "0.1"}}
		a := sloAlert("firing")
		a.Annotations["burn_rate_1h"], a.Annotations["burn_rate_5m"] = "20", "20"
		mustProcess(t, livePipeline(t, e, live), a)
		r := only(t, e.pd)
		if strings.Contains(strings.Join(r.Decision.Reasons, "; "), "live from Prometheus") || r.Live == nil || r.Live.Decided {
			t.Errorf("decision %+v, live %+v; want the alert's own burn rates to decide", r.Decision, r.Live)
		}
	})
	t.Run("live burn moving from one page tier to another pages once", func(t *testing.T) {
		e := newEnv(t)
		live := &fakeLive{burns: map[string]string{"burn_rate_1h": "15.2", "burn_rate_5m": "16"}}
		p := livePipeline(t, e, live)
		mustProcess(t, p, sloAlert("firing"))
		live.burns = map[string]string{"burn_rate_1h": "3", "burn_rate_5m": "3", "burn_rate_6h": "7", "burn_rate_30m": "8"}
		if sum := mustProcess(t, p, sloAlert("firing")); sum.Deduplicated != 1 {
			t.Errorf("summary %+v, want the repeat deduplicated", sum)
		}
		if n := len(e.pd.notifications()); n != 1 {
			t.Errorf("pagerduty notifications = %d, want 1", n)
		}
	})
	t.Run("prometheus failing: the label decision, delivered", func(t *testing.T) {
		e := newEnv(t)
		live := &fakeLive{err: errors.New("prometheus unavailable")}
		mustProcess(t, livePipeline(t, e, live), sloAlert("firing", "severity", "critical"), tAlert("TTFTHigh", "firing", "ticket"))
		r := only(t, e.pd)
		if r.Decision.Action != alert.ActionPage || r.Live == nil || r.Live.Unavailable != "live lookup failed" {
			t.Errorf("decision %+v, live %+v; want the label page, its live context unavailable", r.Decision, r.Live)
		}
		if n := live.calls.Load(); n != 1 {
			t.Errorf("lookups = %d, want 1 (only the SLO alert)", n)
		}
	})
	t.Run("a lookup that panics: the label decision, delivered", func(t *testing.T) {
		e := newEnv(t)
		live := &fakeLive{panics: true}
		mustProcess(t, livePipeline(t, e, live), sloAlert("firing", "severity", "critical"))
		if r := only(t, e.pd); r.Decision.Action != alert.ActionPage || r.Live == nil || r.Live.Unavailable == "" {
			t.Errorf("decision %+v, live %+v; want the label page, its live context unavailable", r.Decision, r.Live)
		}
		// Counted where AlertrouterPanicked reads it (an audit: nothing
		// alerted on this bug).
		if got := metric(t, e.reg, "alertrouter_evaluation_panics_total", ""); got != 1 {
			t.Errorf("alertrouter_evaluation_panics_total = %v, want 1", got)
		}
	})
	t.Run("resolves and alerts without SLO are not looked up", func(t *testing.T) {
		e := newEnv(t)
		live := &fakeLive{}
		mustProcess(t, livePipeline(t, e, live), sloAlert("resolved"), tAlert("TTFTHigh", "firing", "page"))
		if n := live.calls.Load(); n != 0 {
			t.Errorf("lookups = %d, want 0", n)
		}
	})
}
