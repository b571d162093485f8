package routing_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/timeinterval"

	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// team11Muted sends team 11's alerts to its PagerDuty and its Slack, both
// muted all the time; everything else goes to slack.
const team11Muted = `
receiver: slack
routes:
  - receiver: pagerduty
    matchers: ['team="11"']
    mute_time_intervals: [always]
    continue: true
  - receiver: slack
    matchers: ['team="11"']
    mute_time_intervals: [always]
`

// An alert every matched route of which is muted by a time interval is
// sent nowhere and journaled with no receivers — delivery, and the Slack
// Silence, read Receivers — but with the receivers of the routes that
// muted it (muted_receivers), so that the console's receiver filter finds
// it: /decisions?receiver=team-11-slack answered "No decision matches"
// while six of team 11's eleven decisions were muted. An alert that
// another route delivers keeps none; a resolve, which goes wherever its
// firing went, neither.
func TestAMutedAlertIsJournaledWithTheReceiversThatMutedIt(t *testing.T) {
	e := newEnv(t)
	e.routes = team11Muted
	p := e.pipeline()
	if err := p.Routes.SetTimeIntervals(map[string][]timeinterval.TimeInterval{"always": {{}}}); err != nil {
		t.Fatal(err)
	}
	j := store.NewMemoryJournal(store.JournalRetention{})
	m, err := journal.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := journal.NewWriter(j, m, journal.WriterOptions{})
	t.Cleanup(func() { _ = w.Close(context.Background()) })
	p.Recorder = w

	mustProcess(t, p, tAlert("DiskFull", "firing", "page", "team", "11"), tAlert("DiskFull", "firing", "page", "team", "12"))
	mustProcess(t, p, tAlert("DiskFull", "resolved", "page", "team", "11"))
	for _, n := range append(e.pd.notifications(), e.slack.notifications()...) {
		for _, r := range n.Results {
			if r.Alert.Labels["team"] == "11" && r.Alert.Firing() {
				t.Fatalf("the muted alert was sent to %s", n.Receiver)
			}
		}
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	entries, err := journal.Read(t.Context(), j, journal.Query{Since: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var muted, routed int
	for _, en := range entries {
		switch {
		case en.Labels["team"] == "11" && en.Status == "firing":
			muted++
			if !en.Muted || len(en.Receivers) != 0 || !slices.Equal(en.MutedReceivers, []string{"pagerduty", "slack"}) {
				t.Errorf("muted alert journaled muted %v, receivers %v, muted receivers %v; want true, none, [pagerduty slack]", en.Muted, en.Receivers, en.MutedReceivers)
			}
			if !(journal.Filter{Receiver: "slack"}).Match(&en) {
				t.Errorf("the receiver filter does not find the muted alert under slack")
			}
		case en.Labels["team"] == "12":
			routed++
			if len(en.MutedReceivers) != 0 || !slices.Equal(en.Receivers, []string{"slack"}) {
				t.Errorf("routed alert journaled with receivers %v, muted receivers %v; want [slack], none", en.Receivers, en.MutedReceivers)
			}
		case len(en.MutedReceivers) != 0:
			t.Errorf("%s %s journaled with muted receivers %v", en.Alertname, en.Status, en.MutedReceivers)
		}
	}
	if muted != 1 || routed != 1 {
		t.Fatalf("journal holds %d muted and %d routed firing entries, want 1 and 1: %+v", muted, routed, entries)
	}
}

// Deliver returns the receivers of the muted routes, once each, only when
// every matched route is muted.
func TestDeliverNamesTheMutedReceiversOnlyWhenAllAreMuted(t *testing.T) {
	e := newEnv(t)
	// Two muted routes to the same receiver, one more muted, one not.
	e.routes = `
receiver: slack
routes:
  - receiver: slack
    matchers: ['team="11"']
    mute_time_intervals: [always]
    continue: true
  - receiver: pagerduty
    matchers: ['team="11"']
    mute_time_intervals: [always]
    continue: true
  - receiver: slack
    matchers: ['team="11"']
    mute_time_intervals: [always]
    continue: true
  - receiver: pagerduty
    matchers: ['team="11"']
`
	r := e.pipeline().Routes
	if err := r.SetTimeIntervals(map[string][]timeinterval.TimeInterval{"always": {{}}}); err != nil {
		t.Fatal(err)
	}
	routes := r.MatchRoutes(labelsOf(map[string]string{"team": "11"}))
	now := time.Now()
	for _, tc := range []struct {
		name                      string
		routes                    []*routing.Route
		receivers, mutedReceivers []string
	}{
		{"every route muted", routes[:3], nil, []string{"slack", "pagerduty"}},
		{"one route of four delivers", routes, []string{"pagerduty"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			receivers, mutedBy, mutedReceivers := routing.Deliver(tc.routes, now)
			if !slices.Equal(receivers, tc.receivers) || !slices.Equal(mutedReceivers, tc.mutedReceivers) || (mutedBy != "") != (tc.receivers == nil) {
				t.Fatalf("receivers %v, muted receivers %v, muted by %q; want %v, %v", receivers, mutedReceivers, mutedBy, tc.receivers, tc.mutedReceivers)
			}
		})
	}
}
