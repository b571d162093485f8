package slack_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// teams is one router's triage for three teams, each with its own channel
// (#team-00, #team-01, #team-05: C0001, C0002, C0003), one Slack app.
type teams struct {
	e  *triageEnv
	h  *harness
	tr *slack.Triage
	// parents are the incident's parents by receiver.
	parents map[string]slacktest.Message
}

const sharedIncident = "SharedCacheDown/cache/prod-eu1"

// newTeams builds the teams' triage over journal entries and posts the
// parents of sharedIncident in the channels of posted (receivers).
func newTeams(t *testing.T, silences slack.Silencer, entries []journal.Entry, posted ...string) *teams {
	t.Helper()
	e := newTriageEnv(t, alert.ActionPage, nil)
	h := &harness{srv: slacktest.NewServer(token, "team-00", "team-01", "team-05"), waits: e.h.waits, logs: e.h.logs}
	t.Cleanup(h.srv.Close)
	e.h = h
	tm := &teams{e: e, h: h, parents: map[string]slacktest.Message{}}
	tm.tr = slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: silences, Journal: journalOf(t, e.store, entries...)})
	notifiers := map[string]*slack.Notifier{}
	for _, team := range []string{"team-00", "team-01", "team-05"} {
		n := h.notifier(t, func(c *slack.Config) {
			c.Channel = "#" + team
			c.SigningSecret = signingSecret
			c.Actions = slack.TriageActions{Names: []string{slack.ActionAck, slack.ActionSilence, slack.ActionResolve}}
		})
		if err := tm.tr.Add(receiverPrefix+team+"-slack", "slack/0", n, nil, nil); err != nil {
			t.Fatal(err)
		}
		notifiers[receiverPrefix+team+"-slack"] = n
	}
	for _, receiver := range posted {
		no := notifytest.Notification(receiver, alert.KindFiring, alert.ActionPage, notifytest.Result("SharedCacheDown", "fp-"+receiver, "firing", alert.ActionPage))
		no.Incident, no.Integration, no.Opening = sharedIncident, "slack/0", true
		before := len(h.srv.Parents())
		if err := notifiers[receiver].Notify(context.Background(), no); err != nil {
			t.Fatal(err)
		}
		tm.parents[receiver] = h.srv.Parents()[before]
	}
	return tm
}

// command runs /alertrouter text in channel (its id and name) as user and
// returns the answer.
func (tm *teams) command(t *testing.T, channelID, channelName, text, trigger, user string) slacktest.Response {
	t.Helper()
	// slacktest names every channel "triage": the name is set here.
	v, err := url.ParseQuery(string(tm.h.srv.Command(slacktest.SlashCommand{Command: "/alertrouter", Text: text, User: user, UserName: strings.ToLower(user), Channel: channelID, TriggerID: trigger})))
	if err != nil {
		t.Fatal(err)
	}
	v.Set("channel_name", channelName)
	body := []byte(v.Encode())
	tm.e.send(t, tm.tr, slacktest.Sign(signingSecret, tm.e.now(), body), body, nil)
	for _, r := range tm.h.srv.Responses() {
		if r.ID == trigger {
			return r
		}
	}
	t.Fatalf("no answer to %q (%s): %+v", text, trigger, tm.h.srv.Responses())
	return slacktest.Response{}
}

// The 30-team audit: SharedCacheDown pages team-01 (#team-01) and team-05
// (#team-05), both without authorized lists; from #team-00, a team-00 user
// ran /alertrouter silence on it and silenced both teams' alerts, answered
// in #team-00 only — the teams' threads said nothing, their messages still
// offered Silence. The command acts on the targets posting in its channel
// only: from #team-00 nothing is silenced and the answer names the
// channels; from #team-01, team-01's alert is silenced, not team-05's, the
// answer says #team-05 was left alone, team-01's thread is told, and its
// message's Silence finds the silence done.
func TestTheSilenceCommandActsOnItsChannelsTeamOnly(t *testing.T) {
	am := startAlertmanager(t)
	team01 := map[string]string{"alertname": "SharedCacheDown", "service": "cache", "cluster": "prod-eu1", "team": "team-01"}
	team05 := map[string]string{"alertname": "SharedCacheDown", "service": "cache", "cluster": "prod-eu1", "team": "team-05"}
	all := []map[string]string{team01, team05}
	am.fire(t, all...)
	entry := func(fp string, labels map[string]string, team string) journal.Entry {
		return journal.Entry{Fingerprint: fp, Status: "firing", Incident: sharedIncident, Labels: labels, Decision: alert.Decision{Action: alert.ActionPage},
			Receivers:  []string{team + "-pd", team + "-slack"},
			Deliveries: []journal.Delivery{{Receiver: team + "-pd", Integration: "pagerduty/0", Outcome: journal.OutcomeSent}, {Receiver: team + "-slack", Integration: "slack/0", Outcome: journal.OutcomeSent}}}
	}
	tm := newTeams(t, am.Client, []journal.Entry{entry("f01", team01, "team-01"), entry("f05", team05, "team-05")}, "team-01-slack", "team-05-slack")
	p01, p05 := tm.parents["team-01-slack"], tm.parents["team-05-slack"]
	if p01.Channel != "C0002" || p05.Channel != "C0003" {
		t.Fatalf("parents posted in %s and %s, want C0002 and C0003", p01.Channel, p05.Channel)
	}

	a := tm.command(t, "C0001", "team-00", "silence "+sharedIncident+" 1h", "x1", "U0TEAM00A")
	if a.ResponseType != "ephemeral" || !strings.Contains(a.Text, "Nothing was silenced") || !strings.Contains(a.Text, "<#C0002>") || !strings.Contains(a.Text, "<#C0003>") {
		t.Errorf("the command from #team-00 answered %+v, want nothing done and the channels named", a)
	}
	if list, _ := am.List(context.Background()); len(list) != 0 {
		t.Fatalf("the command from #team-00 made silences: %+v", list)
	}

	a = tm.command(t, "C0002", "team-01", "silence "+sharedIncident+" 1h", "x2", "U0TEAM01A")
	if a.ResponseType != "in_channel" || !strings.Contains(a.Text, "Left alone") || !strings.Contains(a.Text, "<#C0003>") || strings.Contains(a.Text, "<#C0002>") || strings.Contains(a.Text, "holds none") {
		t.Errorf("the command from #team-01 answered %+v, want a silence and #team-05 named as left alone", a)
	}
	am.awaitMuted(t, all, team01)
	thread01, thread05 := tm.h.srv.Thread(p01.TS), tm.h.srv.Thread(p05.TS)
	if len(thread01) != 1 || !strings.Contains(thread01[0].Text, "<@U0TEAM01A> silenced incident") {
		t.Errorf("team-01's thread %+v, want the silence said", thread01)
	}
	if len(thread05) != 0 {
		t.Errorf("team-05's thread %+v, want nothing: nothing of theirs was done", thread05)
	}
	tm.e.click(t, tm.tr, p01, slacktest.Click{User: "U0TEAM01B", UserName: "bob", ActionID: "alertrouter:silence:1h", ActionTS: "1700005000.000001"}, signingSecret, tm.e.now(), nil)
	if r := tm.h.srv.Responses(); !strings.Contains(r[len(r)-1].Text, "Already done") {
		t.Errorf("a Silence click on team-01's message after the command answered %+v, want already done", r[len(r)-1])
	}
	if list, _ := am.List(context.Background()); len(list) != 1 {
		t.Errorf("silences %+v, want the command's one", list)
	}
}

// A router whose alertmanager.url names another Alertmanager than the one
// sending its alerts (another cluster's, another tenant's): the silence
// was said made — "silenced the incident's alerts" — while it muted
// nothing where they fire. The answer says that Alertmanager holds none of
// them.
func TestASilenceWhereNoneOfTheAlertsIsHeldSaysSo(t *testing.T) {
	am := startAlertmanager(t) // holds no alert: they fire elsewhere
	team01 := map[string]string{"alertname": "SharedCacheDown", "service": "cache", "cluster": "prod-eu1", "team": "team-01"}
	tm := newTeams(t, am.Client, []journal.Entry{slackEntry("f01", team01)}, "team-01-slack")
	a := tm.command(t, "C0002", "team-01", "silence "+sharedIncident+" 1h", "n1", "U0TEAM01A")
	if !strings.Contains(a.Text, "silenced incident") || !strings.Contains(a.Text, "holds none of these alerts") {
		t.Errorf("the command answered %q, want the silence made and said to mute nothing there now", a.Text)
	}
	p := tm.parents["team-01-slack"]
	if th := tm.h.srv.Thread(p.TS); len(th) == 0 || !strings.Contains(th[0].Text, "holds none of these alerts") {
		t.Errorf("the thread %+v, want the silence told with the warning", th)
	}
}

// An incident fed by two Alertmanagers (two regions, one service): the
// silence made in alertmanager.url's mutes its region only, and the answer
// said the incident was silenced. It says how many of the alerts that
// Alertmanager holds.
func TestASilenceWhereSomeOfTheAlertsAreHeldSaysSo(t *testing.T) {
	am := startAlertmanager(t)
	us := map[string]string{"alertname": "SharedCacheDown", "service": "cache", "region": "us", "team": "team-01"}
	eu := map[string]string{"alertname": "SharedCacheDown", "service": "cache", "region": "eu", "team": "team-01"}
	am.fire(t, us) // eu fires in another Alertmanager
	tm := newTeams(t, am.Client, []journal.Entry{slackEntry("fus", us), slackEntry("feu", eu)}, "team-01-slack")
	a := tm.command(t, "C0002", "team-01", "silence "+sharedIncident+" 1h", "p1", "U0TEAM01A")
	if !strings.Contains(a.Text, "silenced incident") || !strings.Contains(a.Text, "holds 1 of the 2 alerts silenced") {
		t.Errorf("the command answered %q, want the silence made and the unheld alert told", a.Text)
	}
}

// The 30-team audit: in #team-00, /alertrouter incidents listed the whole
// organisation's incidents (the first 20 of 125, team-00's own possibly
// hidden, counts mixing teams), and explain showed any team's alert and
// where it went. Both read the channel's alerts — those routed to the
// receivers posting there —, counted so; `all` reads every channel's.
func TestIncidentsAndExplainReadTheChannelsAlerts(t *testing.T) {
	tm := newTeams(t, nil, []journal.Entry{
		teamEntry("f00", "disk/node/prod", "NodeDiskFull", "team-00"),
		teamEntry("f01", sharedIncident, "SharedCacheDown", "team-01"),
		teamEntry("f05", sharedIncident, "SharedCacheDown", "team-05"),
		teamEntry("g05", "queue/lag/prod", "QueueLag", "team-05"),
	})

	a := tm.command(t, "C0001", "team-00", "incidents", "i1", "U0TEAM00A")
	if !strings.Contains(a.Text, "`disk/node/prod`") || strings.Contains(a.Text, sharedIncident) || strings.Contains(a.Text, "queue/lag/prod") || !strings.Contains(a.Text, "incidents all") {
		t.Errorf("incidents in #team-00 answered %q, want team-00's incident only, and how to list all", a.Text)
	}
	a = tm.command(t, "C0002", "team-01", "incidents", "i2", "U0TEAM01A")
	if !strings.Contains(a.Text, "`"+sharedIncident+"` · page · 1 firing") || strings.Contains(a.Text, "disk/node/prod") || strings.Contains(a.Text, "queue/lag/prod") {
		t.Errorf("incidents in #team-01 answered %q, want the shared incident counted with team-01's alert only", a.Text)
	}
	a = tm.command(t, "C0001", "team-00", "incidents all", "i3", "U0TEAM00A")
	for _, want := range []string{"`disk/node/prod`", "`" + sharedIncident + "` · page · 2 firing", "`queue/lag/prod`"} {
		if !strings.Contains(a.Text, want) {
			t.Errorf("incidents all answered %q, want %s", a.Text, want)
		}
	}

	a = tm.command(t, "C0002", "team-01", "explain f05", "e1", "U0TEAM01A")
	if strings.Contains(a.Text, "pagerduty/0") || !strings.Contains(a.Text, "not an alert of this channel") || !strings.Contains(a.Text, "#team-05") {
		t.Errorf("explain of team-05's alert in #team-01 answered %q, want it refused, naming #team-05", a.Text)
	}
	if a = tm.command(t, "C0002", "team-01", "explain f01", "e2", "U0TEAM01A"); !strings.Contains(a.Text, "team-01-pd/pagerduty/0: sent") {
		t.Errorf("explain of team-01's alert in #team-01 answered %q", a.Text)
	}
	if a = tm.command(t, "C0002", "team-01", "explain f05 all", "e3", "U0TEAM01A"); !strings.Contains(a.Text, "team-05-pd/pagerduty/0: sent") {
		t.Errorf("explain … all of team-05's alert answered %q", a.Text)
	}
	if a = tm.command(t, "C0002", "team-01", "help", "h1", "U0TEAM01A"); !strings.Contains(a.Text, "incidents [all]") || !strings.Contains(a.Text, "explain <fingerprint> [all]") {
		t.Errorf("help answered %q, want the all argument documented", a.Text)
	}
}

// A command run in a private channel: Slack sends "privategroup" for its
// name, so a channel configured by name ("#team-01") matched nothing —
// "No firing incident in this channel", and explain refused the team's
// own alert as another channel's. Such a channel is known by the channel
// id its parents were posted in.
func TestCommandsInAPrivateChannelFindItsIncidents(t *testing.T) {
	tm := newTeams(t, nil, []journal.Entry{
		teamEntry("f00", "disk/node/prod", "NodeDiskFull", "team-00"),
		teamEntry("f01", sharedIncident, "SharedCacheDown", "team-01"),
	}, "team-01-slack")
	channelReadsItsOwn(t, tm, "privategroup", "team-01-pd/pagerduty/0")
}

// channelReadsItsOwn runs incidents and explain in #team-01 (id C0002,
// named name as Slack sends it) over the journal of newTeams' two teams'
// entries f00 (team-00) and f01 (team-01, sharedIncident), and checks
// that they read team-01's alert only; pd is team-01's PagerDuty target as
// explain names it.
func channelReadsItsOwn(t *testing.T, tm *teams, name, pd string) {
	t.Helper()
	a := tm.command(t, "C0002", name, "incidents", name+"-1", "U0TEAM01A")
	if !strings.Contains(a.Text, "`"+sharedIncident+"`") || strings.Contains(a.Text, "disk/node/prod") {
		t.Errorf("incidents in #team-01 (%s) answered %q, want its incident only", name, a.Text)
	}
	if a = tm.command(t, "C0002", name, "explain f01", name+"-2", "U0TEAM01A"); !strings.Contains(a.Text, pd+": sent") {
		t.Errorf("explain of the channel's own alert answered %q", a.Text)
	}
	if a = tm.command(t, "C0002", name, "explain f00", name+"-3", "U0TEAM01A"); !strings.Contains(a.Text, "not an alert of this channel") {
		t.Errorf("explain of another channel's alert answered %q, want it refused", a.Text)
	}
}

// teamEntry is a journal entry of team's page alertname, fingerprint fp, in
// incident: routed to the team's PagerDuty and Slack receivers, sent at
// PagerDuty.
func teamEntry(fp, incident, alertname, team string) journal.Entry {
	team = receiverPrefix + team
	return journal.Entry{Fingerprint: fp, Status: "firing", Incident: incident, Labels: map[string]string{"alertname": alertname, "team": team, "instance": fp},
		Decision: alert.Decision{Action: alert.ActionPage, Policy: "test"}, Receivers: []string{team + "-pd", team + "-slack"},
		Deliveries: []journal.Delivery{{Receiver: team + "-pd", Integration: "pagerduty/0", Outcome: journal.OutcomeSent}}}
}

// slackEntry is a journal entry of team-01's page fp, labels, in
// sharedIncident, routed to and sent by its Slack receiver only.
func slackEntry(fp string, labels map[string]string) journal.Entry {
	return journal.Entry{Fingerprint: fp, Status: "firing", Incident: sharedIncident, Labels: labels, Decision: alert.Decision{Action: alert.ActionPage},
		Receivers:  []string{"team-01-slack"},
		Deliveries: []journal.Delivery{{Receiver: "team-01-slack", Integration: "slack/0", Outcome: journal.OutcomeSent}}}
}

// receiverPrefix begins the teams' receiver names (newTeams, teamEntry).
var receiverPrefix = ""

// The Prometheus Operator names the receivers of its AlertmanagerConfig
// resources "namespace/name/receiver": the commands split a target's key
// at its first "/", took "shop" for the receiver, and saw nothing of the
// channel ("No firing incident in this channel"; explain refused the
// channel's own alert).
func TestCommandsFindReceiversNamedWithSlashes(t *testing.T) {
	receiverPrefix = "shop/checkout-amc/"
	t.Cleanup(func() { receiverPrefix = "" })
	tm := newTeams(t, nil, []journal.Entry{
		teamEntry("f00", "disk/node/prod", "NodeDiskFull", "team-00"),
		teamEntry("f01", sharedIncident, "SharedCacheDown", "team-01"),
	}, "shop/checkout-amc/team-01-slack")
	channelReadsItsOwn(t, tm, "team-01", "shop/checkout-amc/team-01-pd/pagerduty/0")
}
