package dedup_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
)

// SendUnseen sends the resolve of a firing no marker says was notified
// (where routed, marked Unseen); it changes nothing where a marker
// answers, nor for a firing, and the store being down or having lost its
// state is said as before (not Unseen).
func TestTransitionSendsAnUnseenResolveOnlyWhenAsked(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	const page = "page:severity:critical"
	fired := dedup.Marker{Tier: page, At: now.Add(-time.Minute), Incident: "inc-1"}
	resolved := dedup.Marker{Resolved: true, At: now.Add(-time.Minute), Incident: "inc-1"}
	tests := []struct {
		name string
		in   dedup.Input
		want dedup.Step
	}{
		{"no marker, resolved → sent where routed, unseen",
			dedup.Input{SendUnseen: true, Tier: page, Now: now},
			dedup.Step{Verdict: dedup.SendIfRouted, Kind: alert.KindResolved, Unseen: true}},
		{"no marker, resolved, not asked → ignored",
			dedup.Input{Tier: page, Now: now},
			dedup.Step{Verdict: dedup.Ignore}},
		{"no marker, resolved, the store lost its state → a lost resolve, not an unseen one",
			dedup.Input{SendUnseen: true, StoreLost: true, Tier: page, Now: now},
			dedup.Step{Verdict: dedup.SendIfRouted, Kind: alert.KindResolved}},
		{"no marker, firing → the first firing",
			dedup.Input{SendUnseen: true, Firing: true, Tier: page, Now: now},
			dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring}},
		{"firing marker, resolved → the resolve of the firing",
			dedup.Input{SendUnseen: true, Found: true, Marker: fired, Tier: page, Now: now},
			dedup.Step{Verdict: dedup.Send, Kind: alert.KindResolved, Incident: "inc-1", ClaimSuffix: ":f" + itoa(fired.At.UnixMilli())}},
		{"resolved marker, resolved → a dedup hit",
			dedup.Input{SendUnseen: true, Found: true, Marker: resolved, Tier: page, Now: now},
			dedup.Step{Verdict: dedup.Skip}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dedup.Transition(tt.in); got != tt.want {
				t.Fatalf("Transition = %+v, want %+v", got, tt.want)
			}
		})
	}
}
