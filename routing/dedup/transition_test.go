package dedup_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
)

func TestTransitionCoversEveryMarkerStatusAndTier(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	start := now.Add(-2 * time.Hour)
	const page, ticket = "page:severity:critical", "ticket:severity:warning"
	fired := func(tier string, ago time.Duration) dedup.Marker {
		return dedup.Marker{Tier: tier, At: now.Add(-ago), Incident: "inc-1"}
	}
	resolved := dedup.Marker{Resolved: true, At: now.Add(-time.Minute), Incident: "inc-1"}
	tests := []struct {
		name      string
		found     bool
		marker    dedup.Marker
		storeDown bool
		storeLost bool
		firing    bool
		tier      string
		repeat    time.Duration
		want      dedup.Step
	}{
		{name: "no marker, firing → first firing", firing: true, tier: page,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring}},
		{name: "no marker, firing, store down → first firing (fail open)", storeDown: true, firing: true, tier: page,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring}},
		{name: "no marker, resolved → never notified here, nothing to resolve", tier: page,
			want: dedup.Step{Verdict: dedup.Ignore}},
		{name: "no marker, resolved, store down → resolve where routed (fail open)", storeDown: true, tier: page,
			want: dedup.Step{Verdict: dedup.SendIfRouted, Kind: alert.KindResolved}},
		{name: "no marker, resolved, the store's state began after the alert → resolve where routed", storeLost: true, tier: page,
			want: dedup.Step{Verdict: dedup.SendIfRouted, Kind: alert.KindResolved}},
		{name: "resolved marker, resolved, store lost → still a dedup hit (the marker is there)", found: true, marker: resolved, storeLost: true, tier: page,
			want: dedup.Step{Verdict: dedup.Skip}},
		{name: "firing marker, firing, same tier → dedup hit", found: true, marker: fired(page, time.Minute), firing: true, tier: page,
			want: dedup.Step{Verdict: dedup.Skip}},
		{name: "firing marker, firing, same tier, repeat interval not yet passed → hit", found: true, marker: fired(page, time.Hour), firing: true, tier: page, repeat: 4 * time.Hour,
			want: dedup.Step{Verdict: dedup.Skip}},
		{name: "firing marker, firing, same tier, repeat interval passed → reminder, in the marker's incident", found: true, marker: fired(page, 5*time.Hour), firing: true, tier: page, repeat: 4 * time.Hour,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindReminder, Incident: "inc-1", ClaimSuffix: ":r0"}},
		{name: "firing marker, firing, other tier → new firing in the marker's incident (a ticket that now pages escalates)", found: true, marker: fired(ticket, time.Minute), firing: true, tier: page,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring, Escalates: true, Incident: "inc-1", ClaimSuffix: ":t" + itoa(now.Add(-time.Minute).UnixMilli())}},
		{name: "firing marker, firing, a quieter tier → new firing in the marker's incident, no escalation", found: true, marker: fired(page, time.Minute), firing: true, tier: ticket,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring, Incident: "inc-1", ClaimSuffix: ":t" + itoa(now.Add(-time.Minute).UnixMilli())}},
		// Escalates makes Slack treat the update as louder than what
		// on-call saw: a ticket that stays a ticket (or none that stays
		// none) under another policy is not an escalation.
		{name: "firing marker, firing, another ticket tier → new firing in the marker's incident, no escalation", found: true, marker: fired("ticket:capacity:warn", time.Minute), firing: true, tier: "ticket:regression:warn",
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring, Incident: "inc-1", ClaimSuffix: ":t" + itoa(now.Add(-time.Minute).UnixMilli())}},
		{name: "firing marker, firing, another none tier → new firing in the marker's incident, no escalation", found: true, marker: fired("none:capacity:info", time.Minute), firing: true, tier: "none:regression:info",
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring, Incident: "inc-1", ClaimSuffix: ":t" + itoa(now.Add(-time.Minute).UnixMilli())}},
		{name: "firing marker, resolved → resolve in the firing's incident", found: true, marker: fired(page, time.Minute), tier: ticket,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindResolved, Incident: "inc-1", ClaimSuffix: ":f" + itoa(now.Add(-time.Minute).UnixMilli())}},
		{name: "resolved marker, resolved → dedup hit", found: true, marker: resolved, tier: page,
			want: dedup.Step{Verdict: dedup.Skip}},
		{name: "resolved marker, firing → re-fire with its own claim", found: true, marker: resolved, firing: true, tier: page,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring, ClaimSuffix: ":a" + itoa(resolved.At.UnixMilli()), Refire: true, ResolvedAt: resolved.At}},
		{name: "unreadable marker, firing → sent again rather than lost", found: true, marker: dedup.ParseMarker("garbage"), firing: true, tier: page,
			want: dedup.Step{Verdict: dedup.Send, Kind: alert.KindFiring}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := dedup.Transition(dedup.Input{Found: tt.found, Marker: tt.marker, StoreDown: tt.storeDown, StoreLost: tt.storeLost, Firing: tt.firing,
				Tier: tt.tier, StartsAt: start, Now: now, RepeatInterval: tt.repeat})
			if got != tt.want {
				t.Fatalf("Transition = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReminderBucketsAdvanceWithoutStartsAt(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	in := dedup.Input{Found: true, Marker: dedup.Marker{Tier: "p", At: now.Add(-5 * time.Hour)}, Firing: true, Tier: "p", Now: now, RepeatInterval: 4 * time.Hour}
	a := dedup.Transition(in)
	in.Now = now.Add(4 * time.Hour)
	in.Marker.At = now
	b := dedup.Transition(in)
	if a.Kind != alert.KindReminder || b.Kind != alert.KindReminder || a.ClaimSuffix == b.ClaimSuffix {
		t.Fatalf("reminders %+v and %+v: want two reminders with distinct claims", a, b)
	}
}

func TestMarkerRoundTrips(t *testing.T) {
	at := time.UnixMilli(1764676800123)
	for _, m := range []dedup.Marker{
		{Tier: "page:sloth:page", At: at, Incident: "slo/gateway|availability"},
		{Resolved: true, At: at, Incident: "llm-inference-gpu/chat/TTFT"},
		{Tier: "ticket:default:", At: at},
	} {
		if got := dedup.ParseMarker(m.String()); got.Tier != m.Tier || got.Resolved != m.Resolved || !got.At.Equal(m.At) || got.Incident != m.Incident {
			t.Errorf("ParseMarker(%q) = %+v, want %+v", m.String(), got, m)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A sender's token and a marker can share a key (a transition never
// notified is claimed on its marker key): IsClaim tells them apart, for
// every kind of marker, including ones whose tier or incident holds "c:".
func TestIsClaimTellsTokensFromMarkers(t *testing.T) {
	at := time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)
	for i := range 20 {
		if tok := dedup.NewToken(); !dedup.IsClaim(tok) {
			t.Fatalf("token %d %q is not a claim", i, tok)
		}
	}
	for _, m := range []dedup.Marker{
		{Tier: "page:burn-rate:1h/5m>14.4", At: at, Incident: "slo/ttft-p95"},
		{Tier: "ticket:capacity:warn", At: at},
		{Resolved: true, At: at, Incident: "inc-1"},
		{Tier: "c:odd-policy:tier", At: at, Incident: "c:incident"},
		{},
	} {
		if v := m.String(); dedup.IsClaim(v) {
			t.Errorf("marker %q taken for a claim", v)
		}
	}
}

// A firing skipped once its marker has lived half of NotifiedTTL renews
// it; a younger marker, a resolve, and no NotifiedTTL do not.
func TestASkippedFiringRenewsAnAgingMarker(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	ttl := 7 * 24 * time.Hour
	for _, tc := range []struct {
		name   string
		in     dedup.Input
		renews bool
	}{
		{"half its life", dedup.Input{Found: true, Marker: dedup.Marker{Tier: "p", At: now.Add(-ttl / 2)}, Firing: true, Tier: "p", Now: now, NotifiedTTL: ttl}, true},
		{"young", dedup.Input{Found: true, Marker: dedup.Marker{Tier: "p", At: now.Add(-ttl/2 + time.Minute)}, Firing: true, Tier: "p", Now: now, NotifiedTTL: ttl}, false},
		{"resolve already notified", dedup.Input{Found: true, Marker: dedup.Marker{Resolved: true, At: now.Add(-ttl)}, Firing: false, Now: now, NotifiedTTL: ttl}, false},
		{"no ttl", dedup.Input{Found: true, Marker: dedup.Marker{Tier: "p", At: now.Add(-ttl)}, Firing: true, Tier: "p", Now: now}, false},
	} {
		st := dedup.Transition(tc.in)
		if st.Verdict != dedup.Skip || st.Renew != tc.renews {
			t.Errorf("%s: %+v; want a Skip with Renew %v", tc.name, st, tc.renews)
		}
	}
}
