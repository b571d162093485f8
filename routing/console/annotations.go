package console

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// annotated is what an incident's page shows of an alert's annotations:
// the text an on-call engineer following the console link from PagerDuty
// or Slack reads first, and where to go next. Text is escaped by
// html/template and cut to the limits (limits.go); only http(s) links are
// drawn (notify.WebURL, as for the generator URL).
type annotated struct {
	Summary, Description string
	// Runbook and Dashboard are the runbook and dashboard links
	// (notify.RunbookURL, DashboardURL), "" when there is none or it is
	// not an http(s) URL.
	Runbook, Dashboard string
	// Annotations are the others, sorted by name, at most maxAnnotations
	// (MoreAnnotations counts those left out).
	Annotations     []annotationView
	MoreAnnotations int
}

// annotationView is one annotation listed as text.
type annotationView struct{ Name, Value string }

// The annotations annotated shows apart: the text, and the names the
// runbook and dashboard links are read from (notify/links.go), which are
// not listed again — a javascript: runbook_url is dropped, not shown.
var (
	textAnnotations = []string{"summary", "description"}
	linkAnnotations = []string{"runbook_url", "runbook", "runbook_link", "playbook_url", "playbook",
		"dashboard_url", "dashboard", "grafana_url", "grafana_dashboard", "dashboard_link"}
)

// annotationsOf returns what the page shows of annotations; nil when
// there are none (the summaries the overview reads have none).
func annotationsOf(ann map[string]string) *annotated {
	if len(ann) == 0 {
		return nil
	}
	a := &annotated{}
	a.Summary = notify.TruncateText(ann["summary"], maxSummary)
	if d := ann["description"]; d != ann["summary"] {
		a.Description = notify.TruncateText(d, maxDescription)
	}
	a.Runbook = webLink(notify.RunbookURL(ann))
	a.Dashboard = webLink(notify.DashboardURL(ann))
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		v := ann[k]
		if v == "" || slices.Contains(textAnnotations, k) || slices.Contains(linkAnnotations, k) || notify.ScriptLink(v) {
			continue
		}
		if len(a.Annotations) == maxAnnotations {
			a.MoreAnnotations++
			continue
		}
		a.Annotations = append(a.Annotations, annotationView{Name: notify.TruncateText(k, maxAnnotationText), Value: notify.TruncateText(v, maxAnnotationText)})
	}
	return a
}

// webLink is href when it is an absolute http(s) URL, else "".
func webLink(href string) string {
	if !notify.WebURL(href) {
		return ""
	}
	return href
}

// summarize makes s, the summary annotation of e (an entry fed newest
// first), the incident's summary line when it has none yet, or only a
// resolved alert's while e fires.
func (a *incidentAgg) summarize(e *journal.Entry, s string) {
	if s == "" || e.Kind != journal.KindDecision {
		return
	}
	firing := e.Status == "firing"
	if a.view.Summary != "" && (a.summaryFiring || !firing) {
		return
	}
	// A copy: s may share the bytes of the whole record it was decoded
	// from.
	a.view.Summary, a.summaryFiring = strings.Clone(notify.TruncateText(s, maxSummaryLine)), firing
}

// noteSummary gives the incident of e, when it is one of the set's, the
// summary annotation s of e (the overview's summaries leave the
// annotations out: scan reads it apart).
func (s *incidentSet) noteSummary(e *journal.Entry, summary string) {
	if a := s.byKey[e.Incident]; a != nil {
		a.summarize(e, summary)
	}
}

// addAction counts e, a triage or replay entry fed newest first, for its
// incident when the set has it (the overview lists the incidents of its
// decisions; an action on another is not shown). withList keeps the
// triage entries for the incident's page's list.
func (s *incidentSet) addAction(e *journal.Entry, withList bool) {
	a := s.byKey[e.Incident]
	if a == nil {
		return
	}
	switch {
	case e.Kind == journal.KindReplay && e.Replay != nil && len(e.Deliveries) > 0:
		d := e.Deliveries[0]
		a.notePagerDutyClose(d, e.Time)
		k := [2]string{d.Receiver, d.Integration}
		if a.replays == nil {
			a.replays = map[[2]string]*replayView{}
		}
		if a.replays[k] == nil {
			a.replays[k] = &replayView{deliveryAt: deliveryAt{Delivery: d, At: e.Time}, Replica: e.Replica, Replay: *e.Replay}
		}
	case e.Kind == journal.KindTriage && e.Triage != nil:
		if a.view.Slack == nil {
			a.view.Slack = &slackView{}
		}
		a.triage(e, s.now)
		if withList && len(a.view.Slack.Triage) < incidentHistory {
			a.view.Slack.Triage = append(a.view.Slack.Triage, *e)
		}
	}
}

// triage notes a Slack action, fed newest first: the newest of each kind
// makes the incident's marker.
func (a *incidentAgg) triage(e *journal.Entry, now time.Time) {
	t := e.Triage
	m := &triageMark{By: t.By(), At: e.Time, Until: t.Until, Unconfirmed: t.Unconfirmed}
	v := a.view.Slack
	switch t.Action {
	case journal.TriageAck:
		if v.Acked == nil {
			v.Acked = m
		}
	case journal.TriageEscalate:
		if v.Escalated == nil {
			v.Escalated = m
		}
	case journal.TriageResolve:
		if v.HandResolved == nil {
			v.HandResolved = m
		}
	case journal.TriageUnsilence:
		// Newer than the silences it expired (fed newest first).
		if a.unsilenced == nil {
			a.unsilenced = map[string]bool{}
		}
		for id := range strings.SplitSeq(t.Silence, ",") {
			a.unsilenced[id] = true
		}
	case journal.TriageSilence:
		// The newest silence still lasting, none of its ids expired: an
		// unsilence of the message's silence leaves the slash command's.
		if v.Silenced != nil || !now.IsZero() && !t.Until.After(now) {
			return
		}
		for id := range strings.SplitSeq(t.Silence, ",") {
			if a.unsilenced[id] {
				return
			}
		}
		v.Silenced = m
	}
}

// actionText says what a triage entry did, for the incident's list.
func actionText(t *journal.Triage) string {
	switch t.Action {
	case journal.TriageAck:
		return "acknowledged in PagerDuty"
	case journal.TriageEscalate:
		if t.Unconfirmed {
			return "escalated to a page (PagerDuty did not confirm it in time: check it there)"
		}
		return "escalated to a page"
	case journal.TriageSilence:
		return "silenced in Alertmanager"
	case journal.TriageUnsilence:
		return "unsilenced (its silence expired, or had already ended in Alertmanager)"
	case journal.TriageResolve:
		return "resolved in PagerDuty by hand (the alerts keep firing until their rule clears)"
	}
	return t.Action
}
