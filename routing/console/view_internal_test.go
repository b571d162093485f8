package console

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// An incident shows, per integration, the outcome that matters most over
// all its entries, and the latest beside it when that is another.
func TestAnIncidentShowsTheDeliveryThatMatters(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 7, 1, 53, 0, time.UTC)
	type step struct {
		fingerprint, integration, outcome string
	}
	for _, tc := range []struct {
		name string
		// steps are the entries, oldest first, one minute apart.
		steps []step
		// want is the outcome shown and the minute of its entry; latest
		// the latest's outcome ("": none shown beside it).
		want, latest string
		at, latestAt int
	}{
		{name: "a page sent outranks the update PagerDuty's open incident folded since",
			steps: []step{{"a", "pagerduty/0", "sent"}, {"b", "pagerduty/0", "suppressed"}},
			want:  "sent", latest: "suppressed", latestAt: 1},
		{name: "the page of an alert that resolved since still counts",
			steps: []step{{"a", "pagerduty/0", "sent"}, {"b", "pagerduty/0", "suppressed"}, {"a", "pagerduty/0", "suppressed"}},
			want:  "sent", latest: "suppressed", latestAt: 2},
		{name: "another replica waiting on the send does not hide it",
			steps: []step{{"a", "pagerduty/0", "sent"}, {"a", "pagerduty/0", "in_flight"}},
			want:  "sent", latest: "in_flight", latestAt: 1},
		{name: "a dead letter outranks a later send",
			steps: []step{{"a", "pagerduty/0", "dead_letter"}, {"b", "pagerduty/0", "sent"}},
			want:  "dead_letter", latest: "sent", latestAt: 1},
		{name: "a failure Alertmanager retried shows with the send that followed",
			steps: []step{{"a", "slack/0", "failed"}, {"a", "slack/0", "sent"}},
			want:  "failed", latest: "sent", latestAt: 1},
		{name: "a send outranks a deduplicated repeat",
			steps: []step{{"a", "slack/0", "sent"}, {"a", "slack/0", "deduplicated"}},
			want:  "sent", latest: "deduplicated", latestAt: 1},
		{name: "of equal outcomes the newest is shown, alone",
			steps: []step{{"a", "pagerduty/0", "sent"}, {"b", "pagerduty/0", "sent"}},
			want:  "sent", at: 1},
		{name: "the newest outcome that matters most is shown alone",
			steps: []step{{"a", "pagerduty/0", "suppressed"}, {"a", "pagerduty/0", "failed"}},
			want:  "failed", at: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newIncidentSet(0, time.Time{})
			for i := len(tc.steps) - 1; i >= 0; i-- { // fed newest first
				st := tc.steps[i]
				s.add(&journal.Entry{Kind: journal.KindDecision, Time: t0.Add(time.Duration(i) * time.Minute), Incident: "inc",
					Fingerprint: st.fingerprint, Status: "firing", Decision: alert.Decision{Action: alert.ActionPage},
					Deliveries: []journal.Delivery{{Receiver: "oncall", Integration: st.integration, Outcome: st.outcome}}})
			}
			views := s.views(false)
			if len(views) != 1 || len(views[0].Deliveries) != 1 {
				t.Fatalf("got %+v, want one incident with one delivery", views)
			}
			d := views[0].Deliveries[0]
			if d.Outcome != tc.want || !d.At.Equal(t0.Add(time.Duration(tc.at)*time.Minute)) {
				t.Errorf("shown %s at %s, want %s at minute %d", d.Outcome, d.At, tc.want, tc.at)
			}
			switch {
			case tc.latest == "" && d.Latest != nil:
				t.Errorf("latest %s shown beside it, want none", d.Latest.Outcome)
			case tc.latest != "" && d.Latest == nil:
				t.Errorf("no latest shown, want %s", tc.latest)
			case tc.latest != "" && (d.Latest.Outcome != tc.latest || !d.Latest.At.Equal(t0.Add(time.Duration(tc.latestAt)*time.Minute))):
				t.Errorf("latest %s at %s, want %s at minute %d", d.Latest.Outcome, d.Latest.At, tc.latest, tc.latestAt)
			}
		})
	}
}
