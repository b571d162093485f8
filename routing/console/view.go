package console

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// incidentView is one incident as the console shows it: the latest entry
// of each of its alerts.
type incidentView struct {
	Key       string
	Sector    string
	Action    alert.Action
	Open      bool
	Alerts    []alertRow
	KPIs      []string
	Hints     []string
	Receivers []string
	// MutedReceivers are the receivers of the routes that muted its
	// alerts (journal.Entry.MutedReceivers) that none routed to: shown
	// "muted (…)".
	MutedReceivers []string
	// Deliveries is, per receiver and integration, the outcome that
	// matters most over the incident's entries, with the latest beside it
	// when it is another (deliveryView).
	Deliveries []deliveryView
	// First and Last are the times of the oldest and newest entries read:
	// when the router first and last journaled the incident.
	First time.Time
	Last  time.Time
	// Started is the earliest startsAt of the alerts read: when the
	// incident began firing (zero when no entry read has one).
	Started time.Time
	// Unknown says the incident's alerts were not all read back to their
	// latest entry (the read stopped at its bound before the window's
	// start) and none read is firing: it may be open or closed. Its page
	// reads its own entries and says which.
	Unknown bool
	// More counts the alerts the overview leaves out (its page lists them).
	More int
	// Summary is the summary annotation of its newest firing alert (of
	// its newest alert when none fires), bounded (maxSummaryLine): the
	// overview's line under the key.
	Summary string
	// Slack is what was done on it from Slack (journal.KindTriage); nil
	// when nothing was.
	Slack *slackView
}

// slackView is what was done on an incident from Slack.
type slackView struct {
	// Acked, Escalated, Silenced and HandResolved are the newest actions
	// of each kind: who and when. Silenced is set only while the silence
	// lasts (not unsilenced since, not ended).
	Acked, Escalated, Silenced, HandResolved *triageMark
	// Triage lists the actions, newest first (the incident's page only; at
	// most incidentHistory).
	Triage []journal.Entry
}

// triageMark is one Slack action on an incident, as its marker shows it.
type triageMark struct {
	By          string
	At          time.Time
	Until       time.Time // a silence's end
	Unconfirmed bool      // an escalation PagerDuty did not confirm
}

// Loudness is the action the incident is listed and counted as: a
// ticket escalated from Slack pages (PagerDuty holds the escalation's
// page), so it is listed and counted with the pages.
func (v incidentView) Loudness() alert.Action {
	if v.Slack != nil && v.Slack.Escalated != nil && alert.Rank(alert.ActionPage) > alert.Rank(v.Action) {
		return alert.ActionPage
	}
	return v.Action
}

// incidentSet groups decision entries, fed newest first, by incident,
// keeping the latest entry of each alert: at most keep of them per
// incident (0: all), the others counted in More; and, per integration,
// the deliveries of every entry that matter (deliveryView). It keeps no
// more than that: the overview feeds it the window's decisions one at a
// time.
type incidentSet struct {
	keep int
	// now is when the page is built: a silence that ended by then is not
	// shown.
	now   time.Time
	byKey map[string]*incidentAgg
	order []*incidentAgg
	// seen holds the alerts met (incident and fingerprint).
	seen map[[2]string]struct{}
	// strings are the rows' strings, one copy of each.
	strings map[string]string
}

type incidentAgg struct {
	view incidentView
	// alerts counts the incident's alerts, kept or not.
	alerts int
	// deliveries are keyed by receiver and integration.
	deliveries map[[2]string]*deliveryView
	// replays are the newest replay of a dead letter (journal.KindReplay)
	// per receiver and integration (nil until one is met).
	replays map[[2]string]*replayView
	// summaryFiring says Summary is a firing alert's.
	summaryFiring bool
	// unsilenced are the silence ids an unsilence met so far expired
	// (triage entries are fed newest first).
	unsilenced map[string]bool
	// closedAt is when a notification last closed the incident (a
	// delivery journaled Closed): its current episode began after it.
	// pdClosed holds, per PagerDuty integration notified, when it last
	// received the resolve that closed the incident there (zero: never —
	// with send_resolved: false, or a resolve that failed, its incident
	// stays open and acknowledged). repagedAt is when PagerDuty was last
	// paged again after a resolve by hand (Repaged).
	closedAt, repagedAt time.Time
	pdClosed            map[[2]string]time.Time
	// settled says stale marks were dropped (settleMarks).
	settled bool
	// fired is the loudest decision of its firing entries read ("" when
	// none was decided page or ticket): an incident of resolves only (an
	// alert the router never saw fire, resolved — decided as if firing), or
	// of firings decided none, paged nobody in the window, and a ticket's
	// stray resolve decided page made no page of it (a review).
	fired alert.Action
}

// settleMarks drops the Slack marks that say nothing of the incident's
// current episode: of an open incident, those older than the notification
// that last closed it (an acknowledgement or escalation of an earlier
// episode, before a resolve and a re-fire, was shown on a page nobody
// acknowledged, and listed a new ticket with the pages), and, once
// PagerDuty was paged again after a resolve by hand, that resolve and the
// acknowledgements before the re-page. A silence is no episode's: it holds
// until it ends or is unsilenced. Alerts' starts say nothing of episodes
// (an alert released from a silence fires with an old start).
func (a *incidentAgg) settleMarks() {
	v := a.view.Slack
	if a.settled || v == nil || !a.view.Open {
		a.settled = true
		return
	}
	a.settled = true
	// What was done in PagerDuty holds until PagerDuty's incident closed,
	// where the incident was notified there.
	cut := a.closedAt
	if len(a.pdClosed) > 0 {
		// The earliest of the integrations' last closes: a mark holds while
		// any PagerDuty integration notified may still hold the incident
		// it acted on (two teams, one with send_resolved: false).
		cut = time.Time{}
		first := true
		for _, at := range a.pdClosed {
			if first || at.Before(cut) {
				cut, first = at, false
			}
		}
	}
	c := *v
	for _, m := range []**triageMark{&c.Acked, &c.Escalated, &c.HandResolved} {
		if *m != nil && (*m).At.Before(cut) {
			*m = nil
		}
	}
	if hr := c.HandResolved; hr != nil && a.repagedAt.After(hr.At) {
		c.HandResolved = nil
		if c.Acked != nil && c.Acked.At.Before(a.repagedAt) {
			c.Acked = nil
		}
	}
	a.view.Slack = &c
}

// deliveryAt is a delivery and the time of the entry that recorded it:
// when the router concluded it.
type deliveryAt struct {
	journal.Delivery
	At time.Time
}

// deliveryView is what an incident shows of its notifications to one
// integration of a receiver: the outcome that matters most (outcomeRank)
// over the incident's entries, and the latest beside it when that is
// another entry's. The newest outcome alone misleads: once a second alert
// joined an incident that paged, the update PagerDuty's open incident
// folded ("suppressed") hid that the page was sent; and another replica's
// "in_flight" would hide the send it waited for.
type deliveryView struct {
	deliveryAt
	// Latest is the newest outcome when it is not the one above; nil when
	// it is.
	Latest *deliveryAt
	// Replay is the newest replay of a dead letter to this integration
	// (journal.KindReplay): sent or failed, when, by which replica and
	// how (console, CLI); nil when none was.
	Replay *replayView
}

// replayView is a dead letter's replay as the deliveries show it.
type replayView struct {
	deliveryAt
	Replica string
	journal.Replay
}

// outcomeRank orders the delivery outcomes by what on-call must see first
// of an incident's notifications to an integration: a failure (a dead
// letter, then a failure Alertmanager retries) before a send, a send
// before the one another replica was making (in_flight), and that before
// a notification that needed no send (suppressed: an update PagerDuty's
// open incident folds, a resolve not sent; deduplicated). An outcome it
// does not know ranks last.
func outcomeRank(outcome string) int {
	switch outcome {
	case journal.OutcomeDeadLetter:
		return 5
	case journal.OutcomeFailed:
		return 4
	case journal.OutcomeSent:
		return 3
	case alert.DeliveryInFlight:
		return 2
	case journal.OutcomeDeduplicated, alert.DeliverySuppressed:
		return 1
	}
	return 0
}

// addDelivery counts d, recorded at t, older than the deliveries counted
// before it: it becomes the one shown if it outranks it (an equal rank
// keeps the newer), the newest staying as Latest.
func (a *incidentAgg) addDelivery(d journal.Delivery, t time.Time) {
	k := [2]string{d.Receiver, d.Integration}
	v := a.deliveries[k]
	if v == nil {
		a.deliveries[k] = &deliveryView{deliveryAt: deliveryAt{Delivery: d, At: t}}
		return
	}
	if outcomeRank(d.Outcome) <= outcomeRank(v.Outcome) {
		return
	}
	if v.Latest == nil {
		latest := v.deliveryAt
		v.Latest = &latest
	}
	v.deliveryAt = deliveryAt{Delivery: d, At: t}
}

func newIncidentSet(keep int, now time.Time) *incidentSet {
	return &incidentSet{keep: keep, now: now, byKey: map[string]*incidentAgg{}, seen: map[[2]string]struct{}{}, strings: map[string]string{}}
}

// alertRow is what the overview and an incident's page show of an alert:
// its latest entry's fields that they print (the labels, URL, start and
// end only on the incident's page, which reads its entries whole).
type alertRow struct {
	Alertname, Fingerprint, Status string
	Suppressed, Muted              bool
	Decision                       alert.Decision
	Hints                          []string
	Labels                         map[string]string
	GeneratorURL                   string
	StartsAt, EndsAt               time.Time
	// At is the latest entry's time: when the router decided it.
	At time.Time
	// Text is what the incident's page shows of the alert's annotations:
	// its summary and description (bounded), its runbook and dashboard
	// links (http(s) only), and its other annotations; nil on the
	// overview, whose summaries leave the annotations out (a pointer: the
	// overview keeps thousands of rows).
	Text *annotated
}

// ResolvedAt returns when a resolved alert resolved: its endsAt, or, when
// it has none (or one later than the resolve the router received), the
// time the router journaled the resolve.
func (r alertRow) ResolvedAt() time.Time {
	if r.EndsAt.IsZero() || r.EndsAt.After(r.At) {
		return r.At
	}
	return r.EndsAt
}

// row returns e's row. Its strings but the fingerprint repeat from one
// alert to the next (names, policies, reasons, hint ids): the row keeps
// one copy of each.
func (s *incidentSet) row(e *journal.Entry) alertRow {
	d := alert.Decision{Action: alert.Action(s.intern(string(e.Decision.Action))), Policy: s.intern(e.Decision.Policy),
		Tier: s.intern(e.Decision.Tier), Reasons: s.interned(e.Decision.Reasons)}
	return alertRow{Alertname: s.intern(e.Alertname), Fingerprint: e.Fingerprint, Status: s.intern(e.Status),
		Suppressed: e.Suppressed, Muted: e.Muted, Decision: d, Hints: s.interned(e.Hints),
		Labels: e.Labels, GeneratorURL: e.GeneratorURL, StartsAt: e.StartsAt, EndsAt: e.EndsAt, At: e.Time,
		Text: annotationsOf(e.Annotations)}
}

func (s *incidentSet) intern(v string) string {
	if k, ok := s.strings[v]; ok {
		return k
	}
	s.strings[v] = v
	return v
}

func (s *incidentSet) interned(vs []string) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = s.intern(v)
	}
	return out
}

// add counts e, the next older entry; e is copied when kept.
func (s *incidentSet) add(e *journal.Entry) {
	if e.Kind != journal.KindDecision || e.Incident == "" {
		return
	}
	a := s.byKey[e.Incident]
	if a == nil {
		a = &incidentAgg{view: incidentView{Key: e.Incident, Sector: e.Sector, Last: e.Time}, deliveries: map[[2]string]*deliveryView{}}
		s.byKey[e.Incident] = a
		s.order = append(s.order, a)
	}
	s.addTo(a, e)
}

// addKnown counts e, the next older entry, when its incident was already
// met, and reports whether it was: past its bound the overview reads on
// for the alerts of the incidents it lists only, so that each of their
// alerts has its latest state, whatever the number of newer decisions of
// other incidents.
func (s *incidentSet) addKnown(e *journal.Entry) bool {
	if e.Kind != journal.KindDecision || e.Incident == "" {
		return false
	}
	a := s.byKey[e.Incident]
	if a == nil {
		return false
	}
	s.addTo(a, e)
	return true
}

// addFound counts e, the next older entry past the overview's bound, of an
// incident not met yet: the incident is listed from its first alert whose
// latest entry fires (deserving a page or a ticket), and reads on as
// addKnown from there; an alert whose latest entry does not fire is noted,
// so that its older entries are not taken for its state. Without it an
// incident none of whose entries was among the newest MaxEntries was not
// listed at all, and the overview said nothing fired (an audit: a page
// still firing, hidden by a storm's 49,600 newer decisions). It reports
// whether e was counted.
func (s *incidentSet) addFound(e *journal.Entry) bool {
	if e.Kind != journal.KindDecision || e.Incident == "" {
		return false
	}
	k := [2]string{e.Incident, e.Fingerprint}
	if _, ok := s.seen[k]; ok {
		return false
	}
	if e.Status == "firing" && e.Decision.Action != alert.ActionNone {
		s.add(e)
		return true
	}
	s.seen[k] = struct{}{}
	return false
}

// markUnknown marks the incidents that no alert read shows firing as of
// unknown state: their older entries were not all read.
func (s *incidentSet) markUnknown() {
	for _, a := range s.order {
		if !a.view.Open {
			a.view.Unknown = true
		}
	}
}

func (s *incidentSet) addTo(a *incidentAgg, e *journal.Entry) {
	inc := &a.view
	inc.First = e.Time
	if !e.StartsAt.IsZero() && (inc.Started.IsZero() || e.StartsAt.Before(inc.Started)) {
		inc.Started = e.StartsAt
	}
	// Every entry's deliveries count, not only each alert's latest: the
	// page may be an older entry's, its resolve or a joining alert's
	// update the newer ones.
	for _, d := range e.Deliveries {
		a.addDelivery(d, e.Time)
		if d.Closed && e.Time.After(a.closedAt) {
			a.closedAt = e.Time
		}
		a.notePagerDutyClose(d, e.Time)
		if d.Repaged && e.Time.After(a.repagedAt) {
			a.repagedAt = e.Time
		}
	}
	a.summarize(e, e.Annotations["summary"])
	if e.Status == "firing" && e.Decision.Action != alert.ActionNone && alert.Rank(e.Decision.Action) > alert.Rank(a.fired) {
		a.fired = e.Decision.Action
	}
	k := [2]string{inc.Key, e.Fingerprint} // the key's string, kept once
	if _, ok := s.seen[k]; ok {
		return // an older entry of an alert already counted
	}
	s.seen[k] = struct{}{}
	a.alerts++
	if s.keep == 0 || len(inc.Alerts) < s.keep {
		inc.Alerts = append(inc.Alerts, s.row(e))
	}
	if e.Status == "firing" && e.Decision.Action != alert.ActionNone {
		inc.Open = true
	}

	if alert.Rank(e.Decision.Action) > alert.Rank(inc.Action) || inc.Action == "" {
		inc.Action = e.Decision.Action
	}
	inc.KPIs = union(inc.KPIs, e.KPIs)
	inc.Hints = union(inc.Hints, e.Hints)
	inc.Receivers = union(inc.Receivers, e.Receivers)
	inc.MutedReceivers = union(inc.MutedReceivers, e.MutedReceivers)
}

// views returns the incidents, loudest, then most recent, first; open
// keeps only the open ones — an alert still firing that deserved a page or
// a ticket — and those of unknown state (incidentView.Unknown).
func (s *incidentSet) views(open bool) []incidentView {
	out := make([]incidentView, 0, len(s.order))
	for _, a := range s.order {
		if open && !a.view.Open && !a.view.Unknown {
			continue
		}
		a.settleMarks()
		inc := a.view
		inc.More = a.alerts - len(inc.Alerts)
		inc.MutedReceivers = slices.DeleteFunc(slices.Clone(inc.MutedReceivers), func(r string) bool { return slices.Contains(inc.Receivers, r) })
		for _, k := range slices.SortedFunc(maps.Keys(a.deliveries), func(x, y [2]string) int {
			return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
		}) {
			d := *a.deliveries[k]
			// A replay is shown beside the outcome it followed: one older
			// than the delivery shown replayed an earlier dead letter, and
			// "sent" beside a later one never replayed read as handled.
			if r := a.replays[k]; r != nil && !r.At.Before(d.At) {
				d.Replay = r
			}
			inc.Deliveries = append(inc.Deliveries, d)
		}
		out = append(out, inc)
	}
	slices.SortStableFunc(out, func(a, b incidentView) int {
		return cmp.Or(boolRank(a.Unknown)-boolRank(b.Unknown), alert.Rank(b.Loudness())-alert.Rank(a.Loudness()), b.Last.Compare(a.Last))
	})
	return out
}

// closed counts the incidents no longer open whose loudest decision was a
// page, and those whose loudest was a ticket (those of unknown state are
// neither, nor are those whose entries read are all resolves: a stray
// resolve of an alert never seen firing — an Alertmanager restarted
// without its data sends them — counted as a page, an audit).
func (s *incidentSet) closed() (paged, ticketed int) {
	for _, a := range s.order {
		a.settleMarks()
		switch loud := a.closedAs(); {
		case a.view.Open, a.view.Unknown, a.fired == "":
		case loud == alert.ActionPage:
			paged++
		case loud == alert.ActionTicket:
			ticketed++
		}
	}
	return paged, ticketed
}

// closedAs is how a closed incident is counted: the loudest decision of
// its firings, a ticket escalated from Slack as a page (Loudness).
func (a *incidentAgg) closedAs() alert.Action {
	v := a.view
	v.Action = a.fired
	return v.Loudness()
}

// Bounds of the overview: the page stays a page in an alert storm (the
// audit's 625 incidents made 7 MB of HTML); each incident's own page lists
// everything.
const (
	overviewIncidents = 200
	overviewAlerts    = 20
)

// openIncidents returns the open incidents of s (which keeps at most
// overviewAlerts alerts of each) and those of unknown state, in the
// overview's order (views), how many of them are open and how many of
// unknown state.
func openIncidents(s *incidentSet) (listed []incidentView, open, unknown int) {
	listed = s.views(true)
	for i := range listed {
		if listed[i].Unknown {
			unknown++
		}
	}
	return listed, len(listed) - unknown, unknown
}

// boolRank is 1 for true: the incidents of unknown state sort after the
// open ones.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// Heat map geometry, in SVG user units.
const (
	labelWidth = 190
	cellW      = 26
	cellH      = 20
	cellGap    = 2
	headerH    = 22
)

// heatCell is one sector × hour cell.
type heatCell struct {
	Sector                string
	Hour                  int // 0 = the oldest hour of the window
	Start                 time.Time
	X, Y                  int
	Count, Pages, Tickets int
	Class                 string
	Opacity               string
}

type heatMap struct {
	Sectors       []string
	Hours         int
	Cells         []heatCell
	Rows          []heatRow
	Ticks         []heatTick
	Width, Height int
	Max           int
}

type heatRow struct {
	Sector string
	Y      int
}

type heatTick struct {
	X     int
	Label string
}

// activity counts the window's decisions per sector and hour (the heat
// map) and per action and hour (the chart), fed one entry at a time.
type activity struct {
	start time.Time
	hours int
	// sectors are the counts of each sector seen, per hour of the window.
	sectors map[string][]hourCount
	// bars are the page/ticket/none counts per hour.
	bars []actionBar
}

type hourCount struct{ count, pages, tickets int }

func newActivity(now time.Time, window time.Duration) *activity {
	hours := int(window / time.Hour)
	return &activity{start: now.Truncate(time.Hour).Add(-time.Duration(hours-1) * time.Hour), hours: hours,
		sectors: map[string][]hourCount{}, bars: make([]actionBar, max(hours, 0))}
}

// add counts a decision entry.
func (a *activity) add(e *journal.Entry) {
	s := cmp.Or(e.Sector, alert.Unknown)
	row, ok := a.sectors[s]
	if !ok {
		row = make([]hourCount, max(a.hours, 0))
		a.sectors[s] = row
	}
	hr := int(e.Time.Sub(a.start).Hours())
	if e.Time.Before(a.start) || hr >= a.hours {
		return
	}
	row[hr].count++
	switch e.Decision.Action {
	case alert.ActionPage:
		row[hr].pages++
		a.bars[hr].Page++
	case alert.ActionTicket:
		row[hr].tickets++
		a.bars[hr].Ticket++
	default:
		a.bars[hr].None++
	}
}

// newHeatMap lays out the decisions per sector and hour over the window:
// one cell per sector (the catalog's plus those seen) and hour, coloured
// by the loudest action in it and shaded by count.
func newHeatMap(a *activity, catalog []string) heatMap {
	hours, start := a.hours, a.start
	rows := slices.Clone(catalog)
	for s := range a.sectors {
		if !slices.Contains(rows, s) {
			rows = append(rows, s)
		}
	}
	slices.Sort(rows)
	h := heatMap{Sectors: rows, Hours: hours, Width: labelWidth + hours*(cellW+cellGap), Height: headerH + len(rows)*(cellH+cellGap)}
	h.Cells = make([]heatCell, len(rows)*hours)
	for r, s := range rows {
		h.Rows = append(h.Rows, heatRow{Sector: s, Y: headerH + r*(cellH+cellGap) + cellH*3/4})
		counts := a.sectors[s]
		for hr := range hours {
			c := heatCell{Sector: s, Hour: hr, Start: start.Add(time.Duration(hr) * time.Hour),
				X: labelWidth + hr*(cellW+cellGap), Y: headerH + r*(cellH+cellGap)}
			if counts != nil {
				c.Count, c.Pages, c.Tickets = counts[hr].count, counts[hr].pages, counts[hr].tickets
			}
			h.Max = max(h.Max, c.Count)
			h.Cells[r*hours+hr] = c
		}
	}
	for i := range h.Cells {
		c := &h.Cells[i]
		switch {
		case c.Count == 0:
			c.Class, c.Opacity = "empty", "1"
		case c.Pages > 0:
			c.Class = "page"
		case c.Tickets > 0:
			c.Class = "ticket"
		default:
			c.Class = "none"
		}
		if c.Count > 0 {
			c.Opacity = fmt.Sprintf("%.2f", 0.35+0.65*float64(c.Count)/float64(h.Max))
		}
	}
	for hr := 0; hr < hours; hr += 3 {
		h.Ticks = append(h.Ticks, heatTick{X: labelWidth + hr*(cellW+cellGap), Label: start.Add(time.Duration(hr) * time.Hour).UTC().Format("15h")})
	}
	return h
}

// actionChart is the page/ticket/none counts per hour as stacked bars.
type actionChart struct {
	Page, Ticket, None int
	Bars               []actionBar
	Width, Height      int
	Ticks              []heatTick
}

type actionBar struct {
	Start                 time.Time
	Page, Ticket, None    int
	X                     int
	PageY, TicketY, NoneY int
	PageH, TicketH, NoneH int
}

const chartH = 120

func newActionChart(a *activity) actionChart {
	hours, start := a.hours, a.start
	ch := actionChart{Width: labelWidth + hours*(cellW+cellGap), Height: chartH + headerH}
	bars := slices.Clone(a.bars)
	for _, b := range bars {
		ch.Page += b.Page
		ch.Ticket += b.Ticket
		ch.None += b.None
	}
	peak := 1
	for _, b := range bars {
		peak = max(peak, b.Page+b.Ticket+b.None)
	}
	scale := func(n int) int { return n * chartH / peak }
	for i := range bars {
		b := &bars[i]
		b.Start = start.Add(time.Duration(i) * time.Hour)
		b.X = labelWidth + i*(cellW+cellGap)
		b.PageH, b.TicketH, b.NoneH = scale(b.Page), scale(b.Ticket), scale(b.None)
		b.PageY = chartH - b.PageH
		b.TicketY = b.PageY - b.TicketH
		b.NoneY = b.TicketY - b.NoneH
	}
	ch.Bars = bars
	for hr := 0; hr < hours; hr += 3 {
		ch.Ticks = append(ch.Ticks, heatTick{X: labelWidth + hr*(cellW+cellGap), Label: start.Add(time.Duration(hr) * time.Hour).UTC().Format("15h")})
	}
	return ch
}

// health is the delivery health of the window, in notifications (not
// alerts): what alertrouter_notifications_total counts.
type health struct {
	Integrations []integrationHealth
	DeadLetters  int
	// Superseded counts the dead letters a later notification of their
	// incident delivered to their integration since (superseded).
	Superseded int
	Failures   int
	Retries    int
}

type integrationHealth struct {
	Receiver, Integration                   string
	Sent, Failed, DeadLetters, Deduplicated int
	Superseded                              int
	Retries                                 int
	MaxLatency                              time.Duration
	LastError                               string
}

// notificationKey identifies one notification in the journal: the
// dispatch core sends one per receiver's integration, incident and kind
// for a webhook, and records its outcome on every alert entry of it (the
// entries of one webhook share their replica and time). The alert's
// status stands in for the kind (a reminder counts with the firing), the
// outcome keeps apart the alerts of one webhook that another replica
// delivered (deduplicated) from those this one sent. The strings are
// kept as their hash: the set holds no string of the entries it saw.
type notificationKey struct {
	strings uint64
	at      int64
}

// healthAgg counts the delivery health of the window, fed the decisions
// (newest first), then the dead letters. A notification of many alerts
// counts once: one of 22 alerts failing after 5 attempts is 1 failure
// and 4 retries, not 22 and 88.
type healthAgg struct {
	h     health
	byKey map[string]*integrationHealth
	seen  map[notificationKey]struct{}
	hash  maphash.Hash
}

func newHealthAgg() *healthAgg {
	return &healthAgg{byKey: map[string]*integrationHealth{}, seen: map[notificationKey]struct{}{}}
}

// key returns the notificationKey of d, a delivery of e.
func (a *healthAgg) key(e *journal.Entry, d *journal.Delivery) notificationKey {
	a.hash.Reset()
	for _, s := range [...]string{e.Replica, d.Receiver, d.Integration, e.Incident, e.Status, d.Outcome} {
		a.hash.WriteString(s)
		a.hash.WriteByte(0)
	}
	return notificationKey{strings: a.hash.Sum64(), at: e.Time.UnixNano()}
}

func (a *healthAgg) get(receiver, integration string) *integrationHealth {
	k := receiver + "/" + integration
	ih := a.byKey[k]
	if ih == nil {
		ih = &integrationHealth{Receiver: receiver, Integration: integration}
		a.byKey[k] = ih
	}
	return ih
}

// decision counts a decision entry's deliveries, each notification once.
func (a *healthAgg) decision(e *journal.Entry) {
	for i := range e.Deliveries {
		d := &e.Deliveries[i]
		k := a.key(e, d)
		if _, ok := a.seen[k]; ok {
			continue
		}
		a.seen[k] = struct{}{}
		ih := a.get(d.Receiver, d.Integration)
		switch d.Outcome {
		case journal.OutcomeSent:
			ih.Sent++
		case journal.OutcomeFailed:
			ih.Failed++
			a.h.Failures++
		case journal.OutcomeDeduplicated:
			ih.Deduplicated++
		}
		if d.Attempts > 1 {
			ih.Retries += d.Attempts - 1
			a.h.Retries += d.Attempts - 1
		}
		ih.MaxLatency = max(ih.MaxLatency, d.Latency)
		if d.Error != "" && ih.LastError == "" {
			ih.LastError = d.Error
		}
	}
}

// deadLetter counts a dead letter, apart when superseded; the decisions
// are all counted first.
func (a *healthAgg) deadLetter(e *journal.Entry, superseded bool) {
	if e.DeadLetter == nil {
		return
	}
	ih := a.get(e.DeadLetter.Receiver, e.DeadLetter.Integration)
	if superseded {
		ih.Superseded++
		a.h.Superseded++
		return
	}
	ih.DeadLetters++
	a.h.DeadLetters++
	if ih.LastError == "" {
		ih.LastError = e.DeadLetter.Error
	}
}

func (a *healthAgg) health() health {
	h := a.h
	for _, k := range slices.Sorted(maps.Keys(a.byKey)) {
		h.Integrations = append(h.Integrations, *a.byKey[k])
	}
	return h
}

// optionSet collects the filter values seen in decision entries.
type optionSet struct{ sectors, policies, receivers map[string]struct{} }

func newOptionSet() *optionSet {
	return &optionSet{sectors: map[string]struct{}{}, policies: map[string]struct{}{}, receivers: map[string]struct{}{}}
}

func (o *optionSet) add(e *journal.Entry) {
	o.sectors[cmp.Or(e.Sector, alert.Unknown)] = struct{}{}
	if e.Decision.Policy != "" {
		o.policies[e.Decision.Policy] = struct{}{}
	}
	for _, r := range e.Receivers {
		o.receivers[r] = struct{}{}
	}
	for _, r := range e.MutedReceivers {
		o.receivers[r] = struct{}{}
	}
}

func (o *optionSet) options() filterOptions {
	return filterOptions{Sectors: slices.Sorted(maps.Keys(o.sectors)), Policies: slices.Sorted(maps.Keys(o.policies)),
		Receivers: slices.Sorted(maps.Keys(o.receivers))}
}

// deliveredSince remembers, per incident, receiver and integration, the
// newest journal record holding a decision whose delivery there was sent:
// a dead letter older than it is superseded — the check the replay makes
// (journal.ErrDeliveredSince), which refuses to send it.
type deliveredSince map[[3]string]time.Time

// add notes the sent deliveries of e, a decision of record r, fed newest
// first.
func (s deliveredSince) add(r *record, e *journal.Entry) {
	for _, d := range e.Deliveries {
		if d.Outcome != journal.OutcomeSent || !slices.Contains(e.Receivers, d.Receiver) {
			continue
		}
		k := [3]string{e.Incident, d.Receiver, d.Integration}
		if _, ok := s[k]; !ok {
			s[k] = r.raw.Time()
		}
	}
}

// superseded reports whether the dead letter e was delivered since: a
// decision of its incident sent to its receiver's integration is in a
// record written at or after it (the replay reads the journal from the
// dead letter's time on, to the millisecond).
func (s deliveredSince) superseded(e *journal.Entry) bool {
	d := e.DeadLetter
	if d == nil || d.Incident == "" || e.Time.IsZero() {
		return false
	}
	at, ok := s[[3]string{d.Incident, d.Receiver, d.Integration}]
	return ok && !at.Before(e.Time.Truncate(time.Millisecond))
}

// notePagerDutyClose notes a delivery to a PagerDuty integration at at:
// the integration is one the incident was notified to, and a resolve it
// received that closed the incident there (Closed, sent — by the dispatch
// core or a replay of its dead letter) ends what was done in PagerDuty
// before it.
func (a *incidentAgg) notePagerDutyClose(d journal.Delivery, at time.Time) {
	if !strings.HasPrefix(d.Integration, "pagerduty") {
		return
	}
	if a.pdClosed == nil {
		a.pdClosed = map[[2]string]time.Time{}
	}
	k := [2]string{d.Receiver, d.Integration}
	last := a.pdClosed[k]
	if d.Closed && d.Outcome == journal.OutcomeSent && at.After(last) {
		last = at
	}
	a.pdClosed[k] = last
}
