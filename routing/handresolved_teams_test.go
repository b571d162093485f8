package routing_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// twoTeamRoutes send team a's and team b's alerts to each team's own
// PagerDuty (pages) and Slack: the incident key is made of the alerts'
// labels, not of the team, so both teams' alerts of one service share it.
const twoTeamRoutes = `
receiver: team-a-slack
routes:
  - receiver: team-a-slack
    matchers: ['team="a"']
    routes:
      - receiver: team-a-pd
        matchers: ['decision="page"']
        continue: true
      - receiver: team-a-slack
  - receiver: team-b-slack
    matchers: ['team="b"']
    routes:
      - receiver: team-b-pd
        matchers: ['decision="page"']
        continue: true
      - receiver: team-b-slack
`

// twoTeams is one router for two teams sharing incidents.
type twoTeams struct {
	aPD, bPD, aSlack, bSlack *sink
}

func (e *env) twoTeams() (*routing.Pipeline, *twoTeams) {
	e.t.Helper()
	var r routing.Route
	if err := yaml.UnmarshalStrict([]byte(twoTeamRoutes), &r); err != nil {
		e.t.Fatal(err)
	}
	if err := r.Compile(map[string]bool{"team-a-pd": true, "team-a-slack": true, "team-b-pd": true, "team-b-slack": true}); err != nil {
		e.t.Fatal(err)
	}
	tt := &twoTeams{aPD: &sink{}, bPD: &sink{}, aSlack: &sink{}, bSlack: &sink{}}
	e.reg = prometheus.NewRegistry()
	p := &routing.Pipeline{
		Classifier: fakeClassifier,
		Decider:    fakeDecider,
		Routes:     &r,
		Receivers: map[string][]routing.Integration{
			"team-a-pd":    {{Name: "pagerduty/0", Notifier: silentSink{tt.aPD}, SendResolved: true}},
			"team-a-slack": {{Name: "slack/0", Notifier: tt.aSlack, SendResolved: true}},
			"team-b-pd":    {{Name: "pagerduty/0", Notifier: silentSink{tt.bPD}, SendResolved: true}},
			"team-b-slack": {{Name: "slack/0", Notifier: tt.bSlack, SendResolved: true}},
		},
		Store:   e.store,
		Dedup:   e.dedup,
		Metrics: routing.NewMetrics(e.reg),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:     e.clock.Now,
	}
	return p, tt
}

// triggers counts the notifications of s that trigger PagerDuty.
func triggers(s *sink) int {
	n := 0
	for _, no := range s.notifications() {
		if no.Opening {
			n++
		}
	}
	return n
}

// One team resolving its page by hand (the Resolve button in Slack) pages
// that team again when a new alert of its own joins the incident: another
// team's alert joining the same incident key neither triggers the other
// team's PagerDuty nor consumes the mark (the 30-team audit: team-14 got a
// needless page and team-02's re-page was lost). Only the re-paged team's
// Slack update says PagerDuty was paged again.
func TestAHandResolveRepagesOnlyTheTeamThatResolved(t *testing.T) {
	e := newEnv(t)
	p, tt := e.twoTeams()
	mustProcess(t, p, tAlert("DiskFull", "firing", "page", "team", "a"), tAlert("DiskFull", "firing", "page", "team", "b"))
	if triggers(tt.aPD) != 1 || triggers(tt.bPD) != 1 {
		t.Fatalf("openings: team a %d, team b %d; want each team's PagerDuty triggered once", triggers(tt.aPD), triggers(tt.bPD))
	}
	incident := tt.aPD.notifications()[0].Incident
	if got := tt.bPD.notifications()[0].Incident; got != incident {
		t.Fatalf("the teams' alerts are in incidents %q and %q, want one", incident, got)
	}
	// Team a's Resolve click, as notify/slack writes it.
	key := dedup.HandResolvedAtKey(e.dedup.KeyPrefix, incident, "team-a-pd/pagerduty/0")
	if err := e.store.Set(context.Background(), []store.Entry{{Key: key, Value: "alice (U0A) via Slack", TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}

	// Team b's new alert joins: an update of team b's open page.
	mustProcess(t, p, tAlert("DiskFull", "firing", "page", "team", "b", "instance", "b-2"))
	if n := triggers(tt.bPD); n != 1 {
		t.Errorf("team b's PagerDuty was triggered %d times, want once (team a's resolve is not team b's)", n)
	}
	if n := len(tt.aPD.notifications()); n != 1 {
		t.Errorf("team a's PagerDuty got %d notifications, want only its opening", n)
	}
	for _, n := range tt.bSlack.notifications() {
		if n.Repaged {
			t.Errorf("team b's Slack was told PagerDuty paged again")
		}
	}
	if _, found, _ := e.store.Get(context.Background(), []string{key}); !found[0] {
		t.Fatal("team b's alert consumed team a's hand-resolve mark")
	}

	// Team a's and team b's new alerts join in one webhook: team a pages
	// again, team b stays an update; only team a's Slack says so.
	mustProcess(t, p, tAlert("DiskFull", "firing", "page", "team", "a", "instance", "a-2"), tAlert("DiskFull", "firing", "page", "team", "b", "instance", "b-3"))
	if n := triggers(tt.aPD); n != 2 {
		t.Errorf("team a's PagerDuty was triggered %d times, want twice (its opening, then again after its hand resolve)", n)
	}
	if n := triggers(tt.bPD); n != 1 {
		t.Errorf("team b's PagerDuty was triggered %d times, want once", n)
	}
	aSlack, bSlack := tt.aSlack.notifications(), tt.bSlack.notifications()
	if last := aSlack[len(aSlack)-1]; !last.Repaged || last.Opening {
		t.Errorf("team a's Slack update: Repaged %v, opening %v; want an update saying PagerDuty paged again", last.Repaged, last.Opening)
	}
	for _, n := range bSlack {
		if n.Repaged {
			t.Errorf("team b's Slack was told PagerDuty paged again (team a was)")
		}
	}
	if _, found, _ := e.store.Get(context.Background(), []string{key}); found[0] {
		t.Fatal("team a's mark is still there after its trigger was delivered")
	}
}
