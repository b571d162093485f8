package slack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// The silences of an incident (the Silence button, /alertrouter silence)
// mute the incident's firing alerts and no other alert. amsilence.Pin pins
// the alerts' label names and values, but a silence also matches an alert
// carrying extra labels besides those it pins: another team's alert routed
// to its own channel ({…, team="b"}), another incident's under a group_by
// that adds a label. Those are spared with name="" matchers (Alertmanager
// reads an absent label as ""), from what the journal says of the incident
// (exclude) and then from what Alertmanager holds (spareOthers).

// maxSilences bounds the silences made for one incident: their ids are
// kept in the Unsilence button's value (Slack allows 2000 characters).
const maxSilences = 20

// refusal is an action not taken for a reason the user is told as is,
// counted with outcome.
type refusal struct{ msg, outcome string }

func (r *refusal) Error() string { return r.msg }

// silencePlan is what a silence of an incident is made of.
type silencePlan struct {
	incident string
	// sets are the matchers of the silences, one silence each.
	sets [][]amsilence.Matcher
	// own are the label sets of the alerts being silenced.
	own []map[string]string
	// drawn, when the message's labels are silenced without the journal
	// knowing their alerts (its fallback), are those labels: an alert
	// Alertmanager holds with them is taken as the message's own.
	drawn map[string]string
	// held are the label sets (labelsKey) of the alerts being silenced
	// that Alertmanager, asked which alerts the silences would mute
	// (spareOthers), holds; owned how many distinct label sets own has.
	held  map[string]bool
	owned int
}

// heldNote warns, when the Alertmanager the router asked holds none of the
// alerts being silenced, that the silence mutes nothing there now: the
// router's alertmanager.url may name another Alertmanager than the one
// that sent them (another cluster's, another tenant's) — a silence said to
// be made there must not read as the incident silenced.
func heldNote(p silencePlan) string {
	switch n := len(p.held); {
	case n == 0:
		return " :warning: The Alertmanager that alertrouter silences in (`alertmanager.url`) holds none of these alerts now: the silence mutes them only if they are sent to it. Is it the Alertmanager that sends them (the same cluster, the same tenant)? Check that they are muted."
	case n < p.owned:
		// An incident fed by several Alertmanagers: the others' alerts
		// fire on, unmuted.
		return fmt.Sprintf(" :warning: The Alertmanager that alertrouter silences in (`alertmanager.url`) holds %d of the %d alerts silenced: the others have resolved since, or are sent by another Alertmanager (another cluster, another tenant) and are not muted there — silence them in it.", n, p.owned)
	}
	return ""
}

// incidentSilences returns the silences that mute the firing alerts of
// incident (own: label sets read from the journal) and no other alert
// (amsilence.Pin), none matching an alert of others (label sets of the
// incident's firing alerts the silence must spare: routed to other
// receivers); each has two matchers at least, not on generic labels only
// (amsilence.CheckSafe). drawn are the labels the message was drawn with
// (nil for the slash command): when own is empty (the journal is off,
// unreadable, or the alerts fire since longer than it reaches) they make
// the one silence, if they name an alertname, and when no alert of own
// has them, they are silenced beside it — the caller passes no drawn labels
// when the journal shows their alerts resolved (drawnResolved). A *refusal
// says why no safe silence can be made.
func incidentSilences(incident string, own, others []map[string]string, drawn map[string]string) (silencePlan, error) {
	p := silencePlan{incident: incident, own: own}
	if len(own) > 0 && drawn["alertname"] != "" && !slices.ContainsFunc(own, func(l map[string]string) bool { return holds(l, drawn) }) {
		// The alerts the message was drawn with fire since longer than the
		// journal reaches (Alertmanager's repeats of them are not journaled
		// again): the journal holds only those that joined since. They are
		// silenced too — the message shows them.
		p.own = append(slices.Clip(own), drawn)
		p.drawn = drawn
	}
	p.sets = amsilence.Pin(p.own)
	if len(p.sets) == 0 {
		if drawn == nil {
			return p, &refusal{noFiringAlert(incident), OutcomeUnknown}
		}
		if drawn["alertname"] == "" {
			return p, &refusal{fmt.Sprintf("Nothing was silenced: the journal has none of incident %s's firing alerts, and the labels this message was drawn with (%s) name no alertname: a silence on them could mute other incidents' alerts. Silence the alerts in Alertmanager.", code(incident), code(amsilence.Text(amsilence.Equal(drawn)))), OutcomeFailed}
		}
		p.sets = [][]amsilence.Matcher{amsilence.Equal(drawn)}
		p.own, p.drawn = []map[string]string{drawn}, drawn
	}
	if len(p.sets) > maxSilences {
		return p, &refusal{fmt.Sprintf("Nothing was silenced: incident %s's firing alerts differ too much to be muted by at most %d silences that match no other alert. Silence them in Alertmanager.", code(incident), maxSilences), OutcomeFailed}
	}
	for _, ms := range p.sets {
		if err := amsilence.CheckSafe(ms); err != nil {
			return p, &refusal{fmt.Sprintf("Nothing was silenced for incident %s: %s. Silence its alerts in Alertmanager.", code(incident), esc(err.Error())), OutcomeFailed}
		}
	}
	for i, ms := range p.sets {
		narrowed, clash := exclude(ms, p.own, others)
		if clash != nil {
			return p, &refusal{fmt.Sprintf("Nothing was silenced: a silence of incident %s's alerts would also mute %s, an alert of the incident routed to another receiver or to none (theirs to silence), and no label tells them apart. Silence the alerts in Alertmanager.", code(incident), code(amsilence.Text(amsilence.Equal(clash)))), OutcomeFailed}
		}
		p.sets[i] = narrowed
	}
	return p, nil
}

// drawnResolved reports whether entries, an incident's decisions in the
// journal (newest first), show the alerts the message was drawn with
// (drawn, its labels) resolved: an alert holding those labels whose newest
// decision is its resolve, and none whose newest is a firing. The journal
// then reaches back to them, and they are not among the incident's firing
// alerts: a silence of the drawn labels would mute them when they fire
// again — a page lost —, so incidentSilences is given no drawn labels. With
// no alert of the journal holding them (they fire since longer than it
// reaches, or it is off or unreadable), false: the drawn labels are
// silenced as before.
//
// Limit: drawn labels common to several alerts (the first notification's
// common labels) are taken as resolved when every alert of the journal
// holding them is; one of those alerts firing since longer than the
// journal reaches, beside one that resolved within it, is not silenced.
func drawnResolved(entries []*journal.Entry, drawn map[string]string) bool {
	if len(drawn) == 0 {
		return false
	}
	seen := map[string]bool{}
	resolved := false
	for _, e := range entries {
		if seen[e.Fingerprint] {
			continue
		}
		seen[e.Fingerprint] = true
		if len(e.Labels) == 0 || !holds(e.Labels, drawn) {
			continue
		}
		if e.Status != "resolved" {
			return false
		}
		resolved = true
	}
	return resolved
}

// drawnResolvedNote says, in a Silence's thread reply, that the alerts the
// message was drawn with were not silenced: the journal shows them
// resolved.
const drawnResolvedNote = " The alerts this message was first drawn with have resolved since (the journal says so): they are not silenced, and are notified as usual if they fire again."

// sparedNote says that n firing alerts of the incident were left out of
// its silence: routed to other receivers (another team's channel), or to
// none (muted by a time interval, or decided none) — theirs to silence.
// "" when n is 0.
func sparedNote(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " 1 firing alert of the incident was not silenced: it is routed to another receiver, or to none (muted, or decided none) — theirs to silence."
	}
	return fmt.Sprintf(" %d firing alerts of the incident were not silenced: they are routed to other receivers, or to none (muted, or decided none) — theirs to silence.", n)
}

// noFiringAlert answers a silence of an incident with no firing alert in
// the journal: nothing would be silenced.
func noFiringAlert(incident string) string {
	return fmt.Sprintf("No firing alert of incident %s in the last %s: nothing to silence. See `/alertrouter incidents`.", code(incident), commandLookback)
}

// exclude narrows the silence ms so that it matches no alert of others
// (label sets of alerts it must spare) while it still matches the alerts
// of own it matched: for every alert of others it matches, in order, a
// name="" matcher of each label that alert carries and none of those own
// alerts does (Alertmanager reads an absent label as "", so the silenced
// alerts still match and that alert no longer does). An alert of others
// with the label set of one of own is that alert, not another. When an
// alert of others carries no such label (every label it has is on a
// silenced alert too) no matcher of that kind spares it: exclude returns
// its labels as clash.
func exclude(ms []amsilence.Matcher, own, others []map[string]string) (narrowed []amsilence.Matcher, clash map[string]string) {
	ownKeys := map[string]bool{}
	carried := map[string]bool{}
	// ms compiled once (its regex may hold thousands of values); the
	// name="" matchers added below are tested as absent labels.
	matches := amsilence.Compile(ms)
	var absent []string
	for _, l := range own {
		ownKeys[labelsKey(l)] = true
		if matches(l) {
			for k, v := range l {
				if v != "" {
					carried[k] = true
				}
			}
		}
	}
	narrowed = ms
	for _, o := range others {
		if ownKeys[labelsKey(o)] || !matches(o) || slices.ContainsFunc(absent, func(k string) bool { return o[k] != "" }) {
			continue
		}
		var extra []string
		for _, k := range slices.Sorted(maps.Keys(o)) {
			if o[k] != "" && !carried[k] {
				extra = append(extra, k)
			}
		}
		if len(extra) == 0 {
			return ms, o
		}
		narrowed = append(slices.Clip(narrowed), amsilence.Absent(extra)...)
		absent = append(absent, extra...)
	}
	slices.SortStableFunc(narrowed, func(a, b amsilence.Matcher) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(narrowed, func(a, b amsilence.Matcher) bool { return a == b }), nil
}

// labelsKey identifies a label set (its labels with a value, sorted).
func labelsKey(l map[string]string) string {
	kept := make(map[string]string, len(l))
	for k, v := range l {
		if v != "" {
			kept[k] = v
		}
	}
	return amsilence.Text(amsilence.Equal(kept))
}

// planSilences is incidentSilences spared, then, of what Alertmanager holds
// besides (spareOthers): the silences the button and the slash command
// create.
func (t *Triage) planSilences(ctx context.Context, incident string, own, others []map[string]string, drawn map[string]string) (silencePlan, error) {
	p, err := incidentSilences(incident, own, others, drawn)
	if err == nil {
		err = t.spareOthers(ctx, &p)
	}
	return p, err
}

// spareOthers asks Alertmanager which alerts each silence of p would match
// (active, silenced, inhibited or unprocessed) and narrows the silence, as
// exclude does, so that it mutes none but the alerts being silenced (p.own,
// compared by label set, and with p.drawn the alerts holding those labels):
// the journal does not know every alert — another incident's, one it
// dropped, one older than it reaches. An alert no matcher of that kind
// spares, or Alertmanager not answering, is a *refusal: nothing is
// created, as a silence that may mute someone else's page is worse than
// none.
func (t *Triage) spareOthers(ctx context.Context, p *silencePlan) error {
	ownKeys := map[string]bool{}
	for _, l := range p.own {
		ownKeys[labelsKey(l)] = true
	}
	p.held, p.owned = map[string]bool{}, len(ownKeys)
	for i, ms := range p.sets {
		alerts, err := t.o.Silences.Alerts(ctx, ms)
		if err != nil {
			return &refusal{fmt.Sprintf("Nothing was silenced: alertrouter could not ask Alertmanager which alerts a silence of incident %s would mute (%s), and a silence that may mute another team's alerts is worse than none. Try again in a moment.", code(p.incident), esc(errText(err))), OutcomeFailed}
		}
		own := p.own
		var others []map[string]string
		for _, a := range alerts {
			switch k := labelsKey(a.Labels); {
			case ownKeys[k]:
				p.held[k] = true
			case p.drawn != nil && holds(a.Labels, p.drawn):
				// The message's own alert, which the journal does not hold.
				own = append(slices.Clip(own), a.Labels)
				p.held[k] = true
			default:
				others = append(others, a.Labels)
			}
		}
		narrowed, clash := exclude(ms, own, others)
		if clash != nil {
			return &refusal{fmt.Sprintf("Nothing was silenced: a silence of incident %s's alerts would also mute %s, an alert firing in Alertmanager that is not one of them, and no label tells them apart. Silence the alerts in Alertmanager.", code(p.incident), code(amsilence.Text(amsilence.Equal(clash)))), OutcomeFailed}
		}
		p.sets[i] = narrowed
	}
	return nil
}

// silencesText lists silences and their matchers for a message.
func silencesText(ids []string, sets [][]amsilence.Matcher) string {
	if len(ids) == 1 {
		return fmt.Sprintf("silence %s matching %s", code(ids[0]), code(shownMatchers(sets[0])))
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s matching %s", code(id), code(shownMatchers(sets[i])))
	}
	return fmt.Sprintf("%d silences, one per group of alerts so that no other alert matches: %s", len(ids), strings.Join(parts, "; "))
}

// maxShownMatchers bounds the matchers of one silence as a reply shows
// them: a silence of an incident of thousands of instances is one regex
// of thousands of values (20 KB at 1,000), and 20 of them passed Slack's
// 40,000 characters (an audit). The silence's id finds it whole in
// Alertmanager.
const maxShownMatchers = 600

// shownMatchers is ms as a reply shows them, cut at maxShownMatchers runes.
func shownMatchers(ms []amsilence.Matcher) string {
	t, _ := notify.TruncateInRunes(amsilence.Text(ms), maxShownMatchers)
	return t
}

// code writes s as a mrkdwn code span. A code span cannot hold a backtick
// (it would end the span, and the rest would be read as mrkdwn): each is
// shown as ˋ (U+02CB, modifier letter grave accent), which looks alike.
// For display only: the silences match the real values.
func code(s string) string {
	return "`" + showTicks(esc(s)) + "`"
}

// showTicks shows each backtick of s as ˋ (U+02CB), which closes no code
// span: in a code span (code), and beside one (an alert's line, before its
// fingerprint's).
func showTicks(s string) string { return strings.ReplaceAll(s, "`", "ˋ") }

// Silencing hides the resolve: Alertmanager does not notify muted alerts,
// their resolve included — and a real Alertmanager never sent the resolve
// of an alert that cleared while silenced, even after the silence ended —,
// so the incident stays open (firing here, open in PagerDuty) after the
// trouble clears. The Silence's line on the parent and its thread reply say
// so, and what to do about it.

// silencedLineNote ends the parent's line of a Silence of an incident in
// state st: short, as the line sits among the others on the parent.
func silencedLineNote(st triageState) string {
	if st.Paged && !st.Resolved {
		return " — Alertmanager sends no resolve while silenced: Resolve here once the trouble clears, or Unsilence"
	}
	return " — Alertmanager sends no resolve while silenced: this stays firing after the trouble clears unless you Unsilence first"
}

// silencedThreadNote ends the thread reply of a Silence of an incident in
// state st.
// silencedCommandNote is silencedThreadNote for the slash command's
// silence, which does not know whether the incident paged.
const silencedCommandNote = " Alertmanager sends no resolve of silenced alerts, not even after the silence ends: the incident stays open after the trouble clears — resolve it by hand (Resolve, or in PagerDuty) once it has cleared, or unsilence while its alerts still fire."

func silencedThreadNote(st triageState) string {
	if st.Paged && !st.Resolved {
		return " Alertmanager sends no resolve of silenced alerts, not even after the silence ends: PagerDuty and this message stay open after the trouble clears. Resolve the incident here (Resolve) once it has cleared, or Unsilence while its alerts still fire."
	}
	return " Alertmanager sends no resolve of silenced alerts, not even after the silence ends: this message stays firing after the trouble clears. Unsilence while its alerts still fire to get their resolve."
}
