package console_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// The 30-team audit: /decisions?receiver=team-11-slack answered "No
// decision matches" while ?q=team-11 showed 11 decisions, 6 of them muted
// by a time interval — journaled with no receivers, since nothing was
// sent. The receiver filter matches the receivers of the routes that
// muted a decision too (muted_receivers), the filter offers them, and a
// muted decision, its incident's card and page say "muted (<receiver>)".
func TestTheReceiverFilterFindsMutedDecisions(t *testing.T) {
	e := newEnv(t)
	for i := range 11 {
		en := journal.Entry{Kind: journal.KindDecision, Time: e.now.Add(-time.Duration(i) * time.Minute), Fingerprint: fmt.Sprintf("%016x", i),
			Alertname: "Team11Disk", Status: "firing", Sector: "storage", Labels: map[string]string{"team": "team-11"},
			Decision: alert.Decision{Action: alert.ActionTicket, Policy: "severity"}}
		if i < 6 {
			en.Incident = "team-11/muted"
			en.Muted, en.MutedBy, en.MutedReceivers = true, "mute_time_intervals nights of route.routes[11]", []string{"team-11-slack"}
		} else {
			en.Incident = "team-11/routed"
			en.Receivers = []string{"team-11-slack"}
		}
		e.writer.Write(en)
	}
	e.writer.Write(journal.Entry{Kind: journal.KindDecision, Time: e.now, Fingerprint: "00000000000000ff", Alertname: "Other", Status: "firing",
		Incident: "team-12/x", Receivers: []string{"team-12-slack"},
		Decision: alert.Decision{Action: alert.ActionTicket, Policy: "severity"}})
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.console)
	defer srv.Close()

	_, body := get(t, srv, "/decisions?receiver=team-11-slack")
	if n := len(rowRE.FindAllString(body, -1)); n != 11 {
		t.Fatalf("receiver=team-11-slack lists %d decisions, want 11 (6 muted):\n%s", n, body)
	}
	if n := strings.Count(body, `<span class="muted-receivers">muted (team-11-slack)</span>`); n != 6 {
		t.Errorf("%d decisions say muted (team-11-slack), want 6", n)
	}
	if !strings.Contains(body, `<option selected>team-11-slack</option>`) {
		t.Errorf("the receiver filter does not offer team-11-slack selected")
	}
	if _, body := get(t, srv, "/decisions?receiver=team-12-slack"); len(rowRE.FindAllString(body, -1)) != 1 {
		t.Errorf("receiver=team-12-slack does not list its one decision alone")
	}

	// Only muted decisions of a receiver: it is still offered.
	e2 := newEnv(t)
	e2.writer.Write(journal.Entry{Kind: journal.KindDecision, Time: e2.now, Fingerprint: "00000000000000aa", Alertname: "Quiet", Status: "firing",
		Incident: "team-13/x", Muted: true, MutedReceivers: []string{"team-13-pd"}, Decision: alert.Decision{Action: alert.ActionPage, Policy: "severity"}})
	if err := e2.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(e2.console)
	defer srv2.Close()
	if _, body := get(t, srv2, "/decisions"); !strings.Contains(body, `<option>team-13-pd</option>`) {
		t.Errorf("a receiver whose decisions are all muted is not offered by the filter")
	}

	_, body = get(t, srv, "/")
	card := cards(body)["team-11/muted"]
	if !strings.Contains(card, `receivers <b><span class="muted-receivers">muted (team-11-slack)</span></b>`) {
		t.Errorf("the muted incident's card does not say muted (team-11-slack):\n%s", card)
	}
	if card := cards(body)["team-11/routed"]; !strings.Contains(card, "receivers <b>team-11-slack</b>") {
		t.Errorf("the routed incident's card does not say its receiver:\n%s", card)
	}
	if _, body := get(t, srv, console.IncidentPath("team-11/muted")); !strings.Contains(body, `<span class="muted-receivers">muted (team-11-slack)</span>`) {
		t.Errorf("the muted incident's page does not say muted (team-11-slack)")
	}
}
