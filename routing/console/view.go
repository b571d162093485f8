package console

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
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
	Alerts    []journal.Entry
	KPIs      []string
	Hints     []string
	Receivers []string
	// Deliveries is the latest outcome per receiver and integration.
	Deliveries []journal.Delivery
	First      time.Time
	Last       time.Time
	// More counts the alerts the overview leaves out (its page lists them).
	More int
}

// incidents groups decision entries (newest first) by incident, keeping the
// latest entry per alert; incidents are ordered loudest, then most recent,
// first.
func incidents(entries []journal.Entry) []incidentView {
	byKey := map[string]*incidentView{}
	seen := map[string]bool{} // incident + fingerprint
	var order []string
	for _, e := range entries {
		if e.Kind != journal.KindDecision || e.Incident == "" {
			continue
		}
		inc := byKey[e.Incident]
		if inc == nil {
			inc = &incidentView{Key: e.Incident, Sector: e.Sector, Last: e.Time}
			byKey[e.Incident] = inc
			order = append(order, e.Incident)
		}
		inc.First = e.Time
		if k := e.Incident + "\x00" + e.Fingerprint; !seen[k] {
			seen[k] = true
			inc.Alerts = append(inc.Alerts, e)
		}
	}
	out := make([]incidentView, 0, len(order))
	for _, k := range order {
		inc := byKey[k]
		deliveries := map[string]journal.Delivery{}
		for _, a := range inc.Alerts {
			if a.Status == "firing" && a.Decision.Action != alert.ActionNone {
				inc.Open = true
			}
			if alert.Rank(a.Decision.Action) > alert.Rank(inc.Action) || inc.Action == "" {
				inc.Action = a.Decision.Action
			}
			inc.KPIs = union(inc.KPIs, a.KPIs)
			inc.Hints = union(inc.Hints, a.Hints)
			inc.Receivers = union(inc.Receivers, a.Receivers)
			for _, d := range a.Deliveries {
				if _, ok := deliveries[d.Receiver+"/"+d.Integration]; !ok {
					deliveries[d.Receiver+"/"+d.Integration] = d
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(deliveries)) {
			inc.Deliveries = append(inc.Deliveries, deliveries[k])
		}
		out = append(out, *inc)
	}
	slices.SortStableFunc(out, func(a, b incidentView) int {
		return cmp.Or(alert.Rank(b.Action)-alert.Rank(a.Action), b.Last.Compare(a.Last))
	})
	return out
}

// openIncidents returns the incidents with an alert still firing that
// deserved a page or a ticket.
// Bounds of the overview: the page stays a page in an alert storm (the
// audit's 625 incidents made 7 MB of HTML); each incident's own page lists
// everything.
const (
	overviewIncidents = 200
	overviewAlerts    = 20
)

// openIncidents returns the open incidents of entries for the overview: at
// most overviewIncidents, each listing at most overviewAlerts alerts (More
// counts the others), and how many open incidents there are in all.
func openIncidents(entries []journal.Entry) ([]incidentView, int) {
	open := slices.DeleteFunc(incidents(entries), func(i incidentView) bool { return !i.Open })
	total := len(open)
	if len(open) > overviewIncidents {
		open = open[:overviewIncidents]
	}
	for i := range open {
		if n := len(open[i].Alerts); n > overviewAlerts {
			open[i].More = n - overviewAlerts
			open[i].Alerts = open[i].Alerts[:overviewAlerts]
		}
	}
	return open, total
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

// newHeatMap counts decisions per sector and hour over the window: one cell
// per sector (the catalog's plus those seen) and hour, coloured by the
// loudest action in it and shaded by count.
func newHeatMap(entries []journal.Entry, catalog []string, now time.Time, window time.Duration) heatMap {
	hours := int(window / time.Hour)
	start := now.Truncate(time.Hour).Add(-time.Duration(hours-1) * time.Hour)
	rows := slices.Clone(catalog)
	for _, e := range entries {
		if s := cmp.Or(e.Sector, alert.Unknown); !slices.Contains(rows, s) {
			rows = append(rows, s)
		}
	}
	slices.Sort(rows)
	index := map[string]int{}
	for i, s := range rows {
		index[s] = i
	}
	h := heatMap{Sectors: rows, Hours: hours, Width: labelWidth + hours*(cellW+cellGap), Height: headerH + len(rows)*(cellH+cellGap)}
	h.Cells = make([]heatCell, len(rows)*hours)
	for r, s := range rows {
		h.Rows = append(h.Rows, heatRow{Sector: s, Y: headerH + r*(cellH+cellGap) + cellH*3/4})
		for hr := range hours {
			h.Cells[r*hours+hr] = heatCell{Sector: s, Hour: hr, Start: start.Add(time.Duration(hr) * time.Hour),
				X: labelWidth + hr*(cellW+cellGap), Y: headerH + r*(cellH+cellGap)}
		}
	}
	for _, e := range entries {
		hr := int(e.Time.Sub(start).Hours())
		if e.Time.Before(start) || hr >= hours {
			continue
		}
		c := &h.Cells[index[cmp.Or(e.Sector, alert.Unknown)]*hours+hr]
		c.Count++
		switch e.Decision.Action {
		case alert.ActionPage:
			c.Pages++
		case alert.ActionTicket:
			c.Tickets++
		}
		h.Max = max(h.Max, c.Count)
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

func newActionChart(entries []journal.Entry, now time.Time, window time.Duration) actionChart {
	hours := int(window / time.Hour)
	start := now.Truncate(time.Hour).Add(-time.Duration(hours-1) * time.Hour)
	ch := actionChart{Width: labelWidth + hours*(cellW+cellGap), Height: chartH + headerH}
	bars := make([]actionBar, hours)
	for _, e := range entries {
		hr := int(e.Time.Sub(start).Hours())
		if e.Time.Before(start) || hr >= hours {
			continue
		}
		switch e.Decision.Action {
		case alert.ActionPage:
			bars[hr].Page++
			ch.Page++
		case alert.ActionTicket:
			bars[hr].Ticket++
			ch.Ticket++
		default:
			bars[hr].None++
			ch.None++
		}
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

// health is the delivery health of the window.
type health struct {
	Integrations []integrationHealth
	DeadLetters  int
	Failures     int
	Retries      int
}

type integrationHealth struct {
	Receiver, Integration                   string
	Sent, Failed, DeadLetters, Deduplicated int
	Retries                                 int
	MaxLatency                              time.Duration
	LastError                               string
}

func newHealth(decisions, dead []journal.Entry) health {
	byKey := map[string]*integrationHealth{}
	get := func(d journal.Delivery) *integrationHealth {
		k := d.Receiver + "/" + d.Integration
		if byKey[k] == nil {
			byKey[k] = &integrationHealth{Receiver: d.Receiver, Integration: d.Integration}
		}
		return byKey[k]
	}
	var h health
	for _, e := range decisions {
		for _, d := range e.Deliveries {
			ih := get(d)
			switch d.Outcome {
			case journal.OutcomeSent:
				ih.Sent++
			case journal.OutcomeFailed:
				ih.Failed++
				h.Failures++
			case journal.OutcomeDeduplicated:
				ih.Deduplicated++
			}
			if d.Attempts > 1 {
				ih.Retries += d.Attempts - 1
				h.Retries += d.Attempts - 1
			}
			ih.MaxLatency = max(ih.MaxLatency, d.Latency)
			if d.Error != "" && ih.LastError == "" {
				ih.LastError = d.Error
			}
		}
	}
	for _, e := range dead {
		if e.DeadLetter == nil {
			continue
		}
		ih := get(journal.Delivery{Receiver: e.DeadLetter.Receiver, Integration: e.DeadLetter.Integration})
		ih.DeadLetters++
		h.DeadLetters++
		if ih.LastError == "" {
			ih.LastError = e.DeadLetter.Error
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		h.Integrations = append(h.Integrations, *byKey[k])
	}
	return h
}

// optionsOf lists the filter values seen in entries.
func optionsOf(entries []journal.Entry) filterOptions {
	var o filterOptions
	for _, e := range entries {
		o.Sectors = union(o.Sectors, []string{cmp.Or(e.Sector, alert.Unknown)})
		if e.Decision.Policy != "" {
			o.Policies = union(o.Policies, []string{e.Decision.Policy})
		}
		o.Receivers = union(o.Receivers, e.Receivers)
	}
	slices.Sort(o.Sectors)
	slices.Sort(o.Policies)
	slices.Sort(o.Receivers)
	return o
}
