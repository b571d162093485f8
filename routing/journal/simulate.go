package journal

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Evaluator decides every alert of a message: classify, decide, route,
// incident, without side effects. routing.Pipeline.Evaluate is one.
type Evaluator func(msg *alert.Message) []*alert.Result

// Options are what Simulate knows of the candidate configuration beyond
// its evaluator. The zero value compares decisions, receivers, incidents
// and suppression only.
type Options struct {
	// Integrations are the candidate's receivers' integrations by receiver
	// name (nil: what each alert reaches is not compared, and the
	// PagerDuty counts are not made).
	Integrations map[string][]Integration
	// Flap is the candidate's flap damping (nil: damping is not
	// simulated): the transitions of every fingerprint are replayed in
	// webhook order and damped with the flap package's rules.
	Flap *flap.Config
	// Route routes r again, at now, through the candidate's route tree
	// after its action changed (flap damping, a carried live decision).
	// Nil: such an alert keeps the receivers of its first decision.
	Route func(r *alert.Result, now time.Time)
	// Live says the candidate reads live SLO burn rates from Prometheus
	// (a prometheus section): a decision the journal says the live burn
	// rates raised is carried, since the simulator does not query
	// Prometheus.
	Live bool
}

// Integration is one integration of a candidate receiver.
type Integration struct {
	// Type is the integration's kind: "pagerduty", "slack", "log".
	Type string
	// SendResolved: resolves are sent to it (send_resolved).
	SendResolved bool
}

// Outcome is what the router concluded about one alert.
type Outcome struct {
	Action     alert.Action `json:"action"`
	Policy     string       `json:"policy"`
	Tier       string       `json:"tier,omitempty"`
	Receivers  []string     `json:"receivers,omitempty"`
	Incident   string       `json:"incident,omitempty"`
	Suppressed bool         `json:"suppressed,omitempty"`
	// Integrations are what the alert reached (before: its deliveries;
	// after: the candidate's integrations of its receivers, resolves only
	// where send_resolved), as "receiver/type" ("pagerduty/pagerduty").
	Integrations []string `json:"integrations,omitempty"`
	// Flapping is flap damping's reason, when it damped the alert.
	Flapping string `json:"flapping,omitempty"`
}

// Change is one alert whose outcome differs under the candidate config.
type Change struct {
	Fingerprint string    `json:"fingerprint"`
	Alertname   string    `json:"alertname"`
	Sector      string    `json:"sector"`
	Time        time.Time `json:"time"`
	// Status ("firing" or "resolved") and StartsAt tell the alert's
	// occurrences apart.
	Status   string    `json:"status"`
	StartsAt time.Time `json:"starts_at"`
	// Kinds lists what changed: "page→ticket" (any action pair),
	// "receivers", "integrations" (same receivers, other integrations
	// reached), "incident", "suppressed", "unsuppressed", "flap" (damped
	// before and not after, or the reverse).
	Kinds  []string `json:"kinds"`
	Before Outcome  `json:"before"`
	After  Outcome  `json:"after"`
	// Reasons are the candidate decision's reasons.
	Reasons []string `json:"reasons,omitempty"`
}

// Report is what a candidate config would change over a journal.
type Report struct {
	// Alerts is how many firings and resolves were decided again: one per
	// fingerprint, status and start time (an alert Alertmanager re-sent
	// several times counts once, at its latest decision; an alert that
	// fired and resolved three times, six).
	Alerts int `json:"alerts"`
	// Fingerprints is how many distinct alerts those are.
	Fingerprints int `json:"fingerprints"`
	// Changed is how many of them changed in any way.
	Changed int `json:"changed"`
	// Counts counts the changes by kind ("page→ticket": 3, "receivers": 1).
	Counts map[string]int `json:"counts"`
	// ByStatus splits Counts by the alert's status: "firing" and
	// "resolved" to the counts by kind.
	ByStatus map[string]map[string]int `json:"by_status"`
	// IntegrationsCompared: what each alert reaches was compared (the
	// candidate's integrations were known), and the PagerDuty counts made.
	IntegrationsCompared bool `json:"integrations_compared"`
	// PagesLostToPagerDuty counts the firing pages that reached a
	// PagerDuty integration and would not under the candidate (decided
	// otherwise, routed elsewhere, another integration, muted).
	PagesLostToPagerDuty int `json:"pages_no_longer_reaching_pagerduty"`
	// PagesNewToPagerDuty counts the firing pages that would reach a
	// PagerDuty integration under the candidate and did not.
	PagesNewToPagerDuty int `json:"pages_newly_reaching_pagerduty"`
	// BySector and ByPolicy count the changes by kind per sector and per
	// the policy that decided before.
	BySector map[string]map[string]int `json:"by_sector"`
	ByPolicy map[string]map[string]int `json:"by_policy"`
	Changes  []Change                  `json:"changes"`
	// AssumedSuppressed counts the tickets suppressed by a page the
	// entries read do not hold (it paged before the period): they are
	// assumed still suppressed under the candidate.
	AssumedSuppressed int `json:"assumed_suppressed,omitempty"`
}

// episode identifies one alert occurrence in the journal.
type episode struct {
	fingerprint, status string
	startsAt            time.Time
}

// Simulate decides the journal's decision entries again with evaluate and
// reports what changes. Every webhook as journaled (same GroupKey and
// ReceivedAt) is decided again whole, in journal order, as the pipeline
// decided it, so that in-payload SLO suppression is reproduced; an alert
// journaled several times (Alertmanager's repeats, an hourly re-journaled
// suppression, each replica of an HA pair) is reported once, at its latest
// decision. An entry without received_at (a hand-made or foreign export)
// is decided at its time, and one without group_key alone.
//
// SLO suppression across webhooks is reproduced too: the pipeline
// suppresses a ticket while a page of the same SLO, notified by an earlier
// webhook at any replica, still fires. A replica whose copy of that page
// was deduplicated journals the suppressed ticket without the page, and so
// does a replica re-journaling an unchanged suppression an hour later;
// deciding such a record alone would report a phantom "unsuppressed". So
// Simulate keeps, per SLO, the pages the candidate decided firing in the
// webhooks before (and forgets them when they resolve), and suppresses a
// later ticket of that SLO as the pipeline would. A ticket suppressed by a
// page the entries do not hold at all (it paged before the period read) is
// assumed still suppressed and counted in Report.AssumedSuppressed.
//
// opts adds what the evaluator alone does not decide: live SLO decisions
// (carried from the journal), flap damping (replayed) and the integrations
// each alert reaches (compared). Simulate does not model dedup, retries,
// or an incident already open before the period.
func Simulate(entries []Entry, evaluate Evaluator, opts Options) *Report {
	latest := map[episode]int{}
	// The fingerprints of pages the entries hold firing: a ticket whose
	// suppressor is not among them was suppressed by a page that fired
	// before the period read (its resolve, in the period, says nothing of
	// when the ticket was decided).
	seen := map[string]bool{}
	// What every entry of an episode delivered: Alertmanager's retry of a
	// webhook one integration of failed journals only the integration it
	// delivered again (the other is deduplicated), and so does the replica
	// of an HA pair whose copy was deduplicated. Compared against the
	// latest entry's alone, an unchanged configuration showed a phantom
	// "integrations" change after every partial failure.
	// Only the entries decided as the latest one was: a page delivered
	// before the same firing was decided none (or suppressed) is not what
	// the latest decision reached — merged, the configuration in force
	// showed an "integrations" change there (a review: 14 in 546 entries).
	delivered := map[episode][]Delivery{}
	for i := range entries {
		e := &entries[i]
		if e.Kind != KindDecision {
			continue
		}
		if e.Decision.Action == alert.ActionPage && e.Status != "resolved" {
			seen[e.Fingerprint] = true
		}
		k := episode{e.Fingerprint, e.Status, e.StartsAt}
		if j, ok := latest[k]; !ok || !entries[j].Time.After(e.Time) {
			latest[k] = i
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Kind != KindDecision {
			continue
		}
		k := episode{e.Fingerprint, e.Status, e.StartsAt}
		if l := &entries[latest[k]]; e.Decision.Action == l.Decision.Action && e.Suppressed == l.Suppressed {
			delivered[k] = append(delivered[k], e.Deliveries...)
		}
	}
	report := make(map[int]bool, len(latest))
	for _, i := range latest {
		report[i] = true
	}
	// Group every decision entry by webhook, in journal order.
	type webhookKey struct {
		groupKey string
		at       time.Time
		entry    int // the entry's index when it has no group key: alone
	}
	groups := map[webhookKey][]int{}
	var order []webhookKey
	for i := range entries {
		e := &entries[i]
		if e.Kind != KindDecision {
			continue
		}
		at := e.ReceivedAt
		if at.IsZero() {
			at = e.Time
		}
		k := webhookKey{e.GroupKey, at, -1}
		if e.GroupKey == "" {
			k.entry = i
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	// The pipeline decides webhooks as they arrive: order them by arrival
	// (stable, so one replica's journal order is kept).
	slices.SortStableFunc(order, func(a, b webhookKey) int { return a.at.Compare(b.at) })
	pages := sloPages{}
	reached := firedTo{}
	var flaps *flapSim
	if opts.Flap != nil {
		flaps = &flapSim{cfg: *opts.Flap, recs: map[string]*flapRec{}, route: opts.Route}
	}
	rep := &Report{Counts: map[string]int{}, ByStatus: map[string]map[string]int{}, BySector: map[string]map[string]int{},
		ByPolicy: map[string]map[string]int{}, IntegrationsCompared: opts.Integrations != nil}
	fps := map[string]bool{}
	for _, k := range order {
		idx := groups[k]
		msg := &alert.Message{GroupKey: k.groupKey, ReceivedAt: k.at, Items: make([]alert.Alert, len(idx))}
		for j, i := range idx {
			msg.Items[j] = entries[i].Alert()
		}
		results := evaluate(msg)
		for j, i := range idx {
			if j < len(results) && results[j] != nil && results[j].Alert != nil {
				opts.live(&entries[i], results[j], k.at)
			}
		}
		pages.suppress(results)
		if flaps != nil {
			flaps.damp(results, k.at)
		}
		for j, i := range idx {
			if !report[i] {
				if j < len(results) && opts.Integrations != nil {
					reached.of(results[j], opts.Integrations) // a firing's, for its resolve
				}
				continue
			}
			rep.Alerts++
			if !fps[entries[i].Fingerprint] {
				fps[entries[i].Fingerprint] = true
				rep.Fingerprints++
			}
			if j < len(results) {
				e := &entries[i]
				rep.add(e, delivered[episode{e.Fingerprint, e.Status, e.StartsAt}], results[j], seen, opts.Integrations, reached)
			}
		}
		pages.note(results)
	}
	slices.SortStableFunc(rep.Changes, func(a, b Change) int { return a.Time.Compare(b.Time) })
	return rep
}

// live carries the journaled decision of e to r when the live burn rates
// raised it and the candidate reads them too (the simulator does not query
// Prometheus: it cannot know the live burn would differ), and otherwise
// says why r lacks it.
func (opts Options) live(e *Entry, r *alert.Result, now time.Time) {
	if e.Decision.Tier != routing.LiveTier || !r.Alert.Firing() || alert.Rank(r.Decision.Action) >= alert.Rank(e.Decision.Action) {
		return
	}
	if !opts.Live {
		r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons),
			"the journaled "+string(e.Decision.Action)+" came from live burn rates; the candidate has no prometheus section: decided from the alert's labels")
		return
	}
	d := e.Decision
	d.Reasons = append(slices.Clone(d.Reasons), "live SLO decision carried from the journal (the simulator does not query Prometheus)")
	r.Decision = d
	if opts.Route != nil {
		opts.Route(r, now)
	}
}

// sloPages holds, per SLO, the page-tier alerts firing (fingerprint to
// alertname) as the simulation decided them so far: the simulated
// counterpart of the store's SLO page sets.
type sloPages map[string]map[string]string

// suppress suppresses the firing ticket-tier alerts of SLOs with a page
// firing from an earlier webhook, as the pipeline's cross-payload
// suppression does.
func (p sloPages) suppress(results []*alert.Result) {
	for _, r := range results {
		if r == nil || r.Alert == nil || r.SuppressedBy != "" || r.Decision.SLO == "" ||
			r.Decision.Action != alert.ActionTicket || !r.Alert.Firing() {
			continue
		}
		if fps := p[r.Decision.SLO]; len(fps) > 0 {
			fp := slices.Min(slices.Collect(maps.Keys(fps)))
			r.SuppressedBy = "page " + fps[fp] + " (" + fp + ") of SLO " + r.Decision.SLO
		}
	}
}

// note remembers the pages of results that fire and forgets those that
// resolved.
func (p sloPages) note(results []*alert.Result) {
	for _, r := range results {
		if r == nil || r.Alert == nil || r.Decision.SLO == "" {
			continue
		}
		slo, fp := r.Decision.SLO, r.Alert.Fingerprint
		switch {
		case !r.Alert.Firing():
			delete(p[slo], fp)
		case r.Decision.Action == alert.ActionPage && r.MutedBy == "" && len(r.Receivers) > 0:
			// A page sent somewhere: the pipeline keeps only those (a
			// muted page, a blackhole's, was notified nowhere).
			if p[slo] == nil {
				p[slo] = map[string]string{}
			}
			p[slo][fp] = r.Alert.Labels["alertname"]
		}
	}
}

// flapSim replays flap damping under the candidate's flap section: per
// fingerprint, the transitions of the alerts as decided so far and when a
// firing last went out as a page, as the store's flap records hold them
// (routing's damp). The counting rule is the flap package's own
// (History.Record, Config.Judge, HeldAsTicket, TransitionTime), as
// routing/flap.go reads them.
type flapSim struct {
	cfg   flap.Config
	recs  map[string]*flapRec
	route func(*alert.Result, time.Time)
}

type flapRec struct {
	h     flap.History
	paged time.Time // the start of the last firing that went out as a page
}

// undamped reports whether flap damping leaves r alone: suppressed, or a
// firing decided none (as routing's undamped).
func undamped(r *alert.Result) bool {
	return r == nil || r.Alert == nil || r.SuppressedBy != "" || (r.Alert.Firing() && r.Decision.Action == alert.ActionNone)
}

// damp records the transitions of one webhook's results, decided at now,
// and damps them.
func (f *flapSim) damp(results []*alert.Result, now time.Time) {
	byFP := map[string][]*alert.Result{}
	var order []string
	for _, r := range results {
		if undamped(r) {
			continue
		}
		fp := r.Alert.Fingerprint
		if _, ok := byFP[fp]; !ok {
			order = append(order, fp)
		}
		byFP[fp] = append(byFP[fp], r)
	}
	for _, fp := range order {
		rs := byFP[fp]
		rec := f.recs[fp]
		if rec == nil {
			rec = &flapRec{}
			f.recs[fp] = rec
		}
		a := rs[0].Alert
		firing := a.Firing()
		h, change := rec.h.Record(flap.Transition{At: flap.TransitionTime(a, now), Firing: firing}, time.Duration(f.cfg.Window))
		changed := change != flap.Unchanged
		cur := h[len(h)-1]
		at := now
		if cur.At.After(at) {
			at = cur.At
		}
		held := !firing && flap.HeldAsTicket(h, rec.paged, a)
		pagedBefore := rec.paged
		for _, r := range rs {
			v := f.cfg.Judge(r.Decision.Action, h, firing, at, rec.paged, pagedBefore)
			if held && r.Decision.Action == alert.ActionPage {
				r.Decision.Action = alert.ActionTicket
				r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons),
					"flapping: its firing went out as a ticket (held by flap damping): resolved as one, where it went")
				f.reroute(r, now)
			}
			if v.Flapping {
				fl := &alert.Flap{Transitions: v.Transitions, Reason: v.Reason, StableAt: v.StableAt}
				r.Flap = fl
				r.Decision.Reasons = append(slices.Clip(r.Decision.Reasons), fl.Reason)
				if firing && v.Action != r.Decision.Action {
					fl.Downgraded = true
					r.Decision.Action = v.Action
					f.reroute(r, now)
				}
			}
			if firing && r.Decision.Action == alert.ActionPage {
				switch {
				case changed:
					rec.paged = cur.At
				case rec.paged.Before(cur.At):
					rec.paged = at.Truncate(time.Second)
				}
			}
		}
		rec.h = h
	}
}

func (f *flapSim) reroute(r *alert.Result, now time.Time) {
	if f.route != nil {
		f.route(r, now)
	}
}

// suppressorFingerprint returns the fingerprint of the page a journaled
// suppressed_by names ("page <alertname> (<fingerprint>) of SLO <slo>"),
// "" when it names none.
func suppressorFingerprint(suppressedBy string) string {
	i := strings.LastIndex(suppressedBy, ") of SLO ")
	if i < 0 {
		return ""
	}
	j := strings.LastIndex(suppressedBy[:i], "(")
	if j < 0 {
		return ""
	}
	return suppressedBy[j+1 : i]
}

func outcomeOf(e *Entry) Outcome {
	return Outcome{Action: e.Decision.Action, Policy: e.Decision.Policy, Tier: e.Decision.Tier,
		Receivers: e.Receivers, Incident: e.Incident, Suppressed: e.Suppressed, Flapping: e.Flapping}
}

func outcomeOfResult(r *alert.Result) Outcome {
	o := Outcome{Action: r.Decision.Action, Policy: r.Decision.Policy, Tier: r.Decision.Tier,
		Receivers: r.Receivers, Incident: r.Incident, Suppressed: r.SuppressedBy != ""}
	if r.Flap != nil {
		o.Flapping = r.Flap.Reason
	}
	return o
}

// integrationType is the kind of a journaled integration name
// ("pagerduty/0" → "pagerduty").
func integrationType(name string) string {
	t, _, _ := strings.Cut(name, "/")
	return t
}

// reachedBefore returns what e's episode reached (deliveries: those of
// every entry of it), as "receiver/type", and the integrations whose
// outcome says nothing of the configuration (a resolve folded or skipped,
// "suppressed": send_resolved: false or an update of an incident PagerDuty
// keeps open — the entry does not say which). ok is false when the entries
// do not say: routed, but no deliveries journaled.
func reachedBefore(e *Entry, deliveries []Delivery) (reached, unknown []string, ok bool) {
	if len(deliveries) == 0 {
		return nil, nil, len(e.Receivers) == 0
	}
	for _, d := range deliveries {
		key := d.Receiver + "/" + integrationType(d.Integration)
		if d.Outcome == alert.DeliverySuppressed && e.Status == "resolved" {
			unknown = append(unknown, key)
			continue
		}
		reached = append(reached, key)
	}
	return reached, unknown, true
}

// firedTo holds, per firing (fingerprint and start), the receivers the
// candidate would have notified it to: its resolve goes there (where the
// firing went, as the pipeline's markers send it), not where the resolve
// alone would route.
type firedTo map[episode][]string

// of returns what r would reach under the candidate's integrations, as
// "receiver/type": a firing nothing when decided none, suppressed or
// muted; a resolve where its firing was routed (else where it routes) —
// that of a ticket an SLO's page suppressed too, as the pipeline sends it —,
// only to integrations with send_resolved.
func (f firedTo) of(r *alert.Result, integrations map[string][]Integration) []string {
	if r == nil || r.Alert == nil {
		return nil
	}
	firing := r.Alert.Firing()
	receivers := r.Receivers
	if r.Decision.Action == alert.ActionNone || r.MutedBy != "" {
		receivers = []string{}
	}
	k := episode{r.Alert.Fingerprint, "firing", r.Alert.StartsAt}
	if firing {
		// Every receiver a decision of the firing reached: each holds its
		// marker, and the resolve goes to them all (a page decided a
		// ticket later resolves at PagerDuty too).
		f[k] = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(f[k]), receivers...))))
		if r.SuppressedBy != "" {
			receivers = nil
		}
	} else if went, ok := f[k]; ok {
		receivers = went
	}
	var out []string
	for _, name := range receivers {
		for _, in := range integrations[name] {
			if firing || in.SendResolved {
				out = append(out, name+"/"+in.Type)
			}
		}
	}
	return out
}

// uniq returns s sorted without duplicates, and without those in drop.
func uniq(s, drop []string) []string {
	out := slices.Compact(slices.Sorted(slices.Values(s)))
	return slices.DeleteFunc(out, func(x string) bool { return slices.Contains(drop, x) })
}

// hasType reports whether one of reached ("receiver/type") is of type t.
func hasType(reached []string, t string) bool {
	return slices.ContainsFunc(reached, func(s string) bool { return strings.HasSuffix(s, "/"+t) })
}

// damped reports whether a flap reason says a page was downgraded.
func damped(reason string) bool { return strings.Contains(reason, "page downgraded to ticket") }

// diff lists what changed between two outcomes (empty: nothing).
func diff(before, after Outcome) []string {
	var kinds []string
	if before.Action != after.Action {
		kinds = append(kinds, string(before.Action)+"→"+string(after.Action))
	}
	if !slices.Equal(sortedCopy(before.Receivers), sortedCopy(after.Receivers)) {
		kinds = append(kinds, "receivers")
	}
	if before.Incident != after.Incident {
		kinds = append(kinds, "incident")
	}
	switch {
	case !before.Suppressed && after.Suppressed:
		kinds = append(kinds, "suppressed")
	case before.Suppressed && !after.Suppressed:
		kinds = append(kinds, "unsuppressed")
	}
	if damped(before.Flapping) != damped(after.Flapping) {
		kinds = append(kinds, "flap")
	}
	return kinds
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func (rep *Report) add(e *Entry, deliveries []Delivery, r *alert.Result, seen map[string]bool, integrations map[string][]Integration, fired firedTo) {
	before, after := outcomeOf(e), outcomeOfResult(r)
	if before.Suppressed && !after.Suppressed && after.Action == alert.ActionTicket && r.Alert != nil && r.Alert.Firing() {
		// Suppressed by a page the entries do not hold: nothing says it
		// stopped firing, so the ticket is assumed still suppressed.
		if fp := suppressorFingerprint(e.SuppressedBy); fp != "" && !seen[fp] {
			after.Suppressed = true
			r.SuppressedBy = e.SuppressedBy
			rep.AssumedSuppressed++
		}
	}
	kinds := diff(before, after)
	if integrations != nil {
		afterReached := fired.of(r, integrations)
		if reached, unknown, ok := reachedBefore(e, deliveries); ok {
			before.Integrations = uniq(reached, unknown)
			after.Integrations = uniq(afterReached, unknown)
			if before.Action == after.Action && !slices.Contains(kinds, "receivers") && !slices.Equal(before.Integrations, after.Integrations) {
				kinds = append(kinds, "integrations")
			}
			if e.Status != "resolved" {
				pdBefore := before.Action == alert.ActionPage && hasType(before.Integrations, "pagerduty")
				pdAfter := after.Action == alert.ActionPage && hasType(after.Integrations, "pagerduty")
				switch {
				case pdBefore && !pdAfter:
					rep.PagesLostToPagerDuty++
				case !pdBefore && pdAfter:
					rep.PagesNewToPagerDuty++
				}
			}
		}
	}
	if len(kinds) == 0 {
		return
	}
	rep.Changed++
	rep.Changes = append(rep.Changes, Change{
		Fingerprint: e.Fingerprint, Alertname: e.Alertname, Sector: e.Sector, Time: e.Time,
		Status: e.Status, StartsAt: e.StartsAt,
		Kinds: kinds, Before: before, After: after, Reasons: r.Decision.Reasons,
	})
	for _, k := range kinds {
		rep.Counts[k]++
		bump(rep.ByStatus, statusOf(e), k)
		bump(rep.BySector, cmp.Or(e.Sector, alert.Unknown), k)
		bump(rep.ByPolicy, cmp.Or(e.Decision.Policy, "none"), k)
	}
}

// statusOf is e's status as the report counts it: resolved, or firing.
func statusOf(e *Entry) string {
	if e.Status == "resolved" {
		return "resolved"
	}
	return "firing"
}

func bump(m map[string]map[string]int, key, kind string) {
	if m[key] == nil {
		m[key] = map[string]int{}
	}
	m[key][kind]++
}

// Markdown writes the report as a Markdown document: a summary (with the
// pages that would no longer, or newly, reach PagerDuty), the counts per
// kind (firing and resolved apart), per sector and per policy, and the
// changed alerts.
func (rep *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# What changes under the candidate configuration\n\n")
	alerts := "alerts"
	if rep.Fingerprints == 1 {
		alerts = "alert"
	}
	fmt.Fprintf(&b, "%d firings and resolves of %d %s decided again, %d changed.\n\n", rep.Alerts, rep.Fingerprints, alerts, rep.Changed)
	if rep.IntegrationsCompared {
		fmt.Fprintf(&b, "**Pages that would no longer reach PagerDuty: %d**\n\nPages that would newly reach PagerDuty: %d\n\n", rep.PagesLostToPagerDuty, rep.PagesNewToPagerDuty)
	}
	if rep.AssumedSuppressed > 0 {
		fmt.Fprintf(&b, "%d suppressed tickets name a page that is not in the entries read (it paged earlier): they are assumed still suppressed.\n\n", rep.AssumedSuppressed)
	}
	if rep.Changed == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	kinds := slices.Sorted(maps.Keys(rep.Counts))
	b.WriteString("| change | total | firing | resolved |\n|---|---:|---:|---:|\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", k, rep.Counts[k], rep.ByStatus["firing"][k], rep.ByStatus["resolved"][k])
	}
	table(&b, "sector", rep.BySector, kinds)
	table(&b, "policy (before)", rep.ByPolicy, kinds)
	b.WriteString("\n## Changed alerts\n\n| time | alert | status | starts at | sector | change | before | after |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range rep.Changes {
		fmt.Fprintf(&b, "| %s | %s `%s` | %s | %s | %s | %s | %s | %s |\n", c.Time.UTC().Format(time.RFC3339), mdEscape(c.Alertname), mdEscape(c.Fingerprint),
			mdEscape(c.Status), c.StartsAt.UTC().Format(time.RFC3339), mdEscape(c.Sector), strings.Join(c.Kinds, ", "), outcomeText(c.Before), outcomeText(c.After))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func table(b *strings.Builder, name string, m map[string]map[string]int, kinds []string) {
	fmt.Fprintf(b, "\n## By %s\n\n| %s | %s |\n|---|%s\n", name, name, strings.Join(kinds, " | "), strings.Repeat("---:|", len(kinds)))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		cells := make([]string, len(kinds))
		for i, k := range kinds {
			cells[i] = fmt.Sprint(m[key][k])
		}
		fmt.Fprintf(b, "| %s | %s |\n", mdEscape(key), strings.Join(cells, " | "))
	}
}

func outcomeText(o Outcome) string {
	s := string(o.Action) + " (" + o.Policy
	if o.Tier != "" {
		s += " " + o.Tier
	}
	s += ")"
	if len(o.Receivers) > 0 {
		s += " → " + strings.Join(o.Receivers, ", ")
	}
	if len(o.Integrations) > 0 {
		s += " [" + strings.Join(o.Integrations, ", ") + "]"
	}
	if o.Suppressed {
		s += ", suppressed"
	}
	if damped(o.Flapping) {
		s += ", damped (" + o.Flapping + ")"
	}
	return mdEscape(s)
}

// mdEscape makes s one inert Markdown table cell: control characters
// (newlines included) shown escaped (TerminalSafe), and |, backticks and
// the HTML characters <, > and & escaped, so that an alert's text can
// neither end the row nor inject markup.
func mdEscape(s string) string { return mdReplacer.Replace(TerminalSafe(s)) }

var mdReplacer = strings.NewReplacer("|", `\|`, "`", "\\`", "<", "&lt;", ">", "&gt;", "&", "&amp;")

// TerminalSafe returns s with what a terminal would obey rather than show
// escaped: C0 and C1 control characters (ESC, BEL, newlines, tabs), DEL,
// the bidirectional controls U+200E, U+200F, U+061C, U+202A–202E and
// U+2066–2069, as Go escapes them (\x1b, \n, \u202e); bytes that are not
// UTF-8 as \xNN. The CLI prints alerts' text through it.
func TerminalSafe(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
				continue
			}
			b.WriteRune(r)
		case unsafeRune(r):
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f || r == utf8.RuneError || notify.IsBidiControl(r)
}
