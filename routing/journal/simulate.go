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

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Evaluator decides every alert of a message: classify, decide, route,
// incident, without side effects. routing.Pipeline.Evaluate is one.
type Evaluator func(msg *alert.Message) []*alert.Result

// Outcome is what the router concluded about one alert.
type Outcome struct {
	Action     alert.Action `json:"action"`
	Policy     string       `json:"policy"`
	Tier       string       `json:"tier,omitempty"`
	Receivers  []string     `json:"receivers,omitempty"`
	Incident   string       `json:"incident,omitempty"`
	Suppressed bool         `json:"suppressed,omitempty"`
}

// Change is one alert whose outcome differs under the candidate config.
type Change struct {
	Fingerprint string    `json:"fingerprint"`
	Alertname   string    `json:"alertname"`
	Sector      string    `json:"sector"`
	Time        time.Time `json:"time"`
	// Kinds lists what changed: "page→ticket" (any action pair),
	// "receivers", "incident", "suppressed", "unsuppressed".
	Kinds  []string `json:"kinds"`
	Before Outcome  `json:"before"`
	After  Outcome  `json:"after"`
	// Reasons are the candidate decision's reasons.
	Reasons []string `json:"reasons,omitempty"`
}

// Report is what a candidate config would change over a journal.
type Report struct {
	// Alerts is how many alerts were decided again: one per fingerprint,
	// status and start time (an alert Alertmanager re-sent several times
	// counts once, at its latest decision).
	Alerts int `json:"alerts"`
	// Changed is how many of them changed in any way.
	Changed int `json:"changed"`
	// Counts counts the changes by kind ("page→ticket": 3, "receivers": 1).
	Counts map[string]int `json:"counts"`
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
// decision.
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
func Simulate(entries []Entry, evaluate Evaluator) *Report {
	latest := map[episode]int{}
	// The fingerprints of pages the entries hold firing: a ticket whose
	// suppressor is not among them was suppressed by a page that fired
	// before the period read (its resolve, in the period, says nothing of
	// when the ticket was decided).
	seen := map[string]bool{}
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
	report := make(map[int]bool, len(latest))
	for _, i := range latest {
		report[i] = true
	}
	// Group every decision entry by webhook, in journal order.
	type webhookKey struct {
		groupKey string
		at       time.Time
	}
	groups := map[webhookKey][]int{}
	var order []webhookKey
	for i := range entries {
		if entries[i].Kind != KindDecision {
			continue
		}
		k := webhookKey{entries[i].GroupKey, entries[i].ReceivedAt}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	// The pipeline decides webhooks as they arrive: order them by arrival
	// (stable, so one replica's journal order is kept).
	slices.SortStableFunc(order, func(a, b webhookKey) int { return a.at.Compare(b.at) })
	pages := sloPages{}
	rep := &Report{Counts: map[string]int{}, BySector: map[string]map[string]int{}, ByPolicy: map[string]map[string]int{}}
	for _, k := range order {
		idx := groups[k]
		msg := &alert.Message{GroupKey: k.groupKey, ReceivedAt: k.at, Items: make([]alert.Alert, len(idx))}
		for j, i := range idx {
			msg.Items[j] = entries[i].Alert()
		}
		results := evaluate(msg)
		pages.suppress(results)
		for j, i := range idx {
			if !report[i] {
				continue
			}
			rep.Alerts++
			if j < len(results) {
				rep.add(&entries[i], results[j], seen)
			}
		}
		pages.note(results)
	}
	slices.SortStableFunc(rep.Changes, func(a, b Change) int { return a.Time.Compare(b.Time) })
	return rep
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
		Receivers: e.Receivers, Incident: e.Incident, Suppressed: e.Suppressed}
}

func outcomeOfResult(r *alert.Result) Outcome {
	return Outcome{Action: r.Decision.Action, Policy: r.Decision.Policy, Tier: r.Decision.Tier,
		Receivers: r.Receivers, Incident: r.Incident, Suppressed: r.SuppressedBy != ""}
}

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
	return kinds
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

func (rep *Report) add(e *Entry, r *alert.Result, seen map[string]bool) {
	before, after := outcomeOf(e), outcomeOfResult(r)
	if before.Suppressed && !after.Suppressed && after.Action == alert.ActionTicket && r.Alert != nil && r.Alert.Firing() {
		// Suppressed by a page the entries do not hold: nothing says it
		// stopped firing, so the ticket is assumed still suppressed.
		if fp := suppressorFingerprint(e.SuppressedBy); fp != "" && !seen[fp] {
			after.Suppressed = true
			rep.AssumedSuppressed++
		}
	}
	kinds := diff(before, after)
	if len(kinds) == 0 {
		return
	}
	rep.Changed++
	rep.Changes = append(rep.Changes, Change{
		Fingerprint: e.Fingerprint, Alertname: e.Alertname, Sector: e.Sector, Time: e.Time,
		Kinds: kinds, Before: before, After: after, Reasons: r.Decision.Reasons,
	})
	for _, k := range kinds {
		rep.Counts[k]++
		bump(rep.BySector, cmp.Or(e.Sector, alert.Unknown), k)
		bump(rep.ByPolicy, cmp.Or(e.Decision.Policy, "none"), k)
	}
}

func bump(m map[string]map[string]int, key, kind string) {
	if m[key] == nil {
		m[key] = map[string]int{}
	}
	m[key][kind]++
}

// Markdown writes the report as a Markdown document: a summary, the counts
// per sector and per policy, and the changed alerts.
func (rep *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# What changes under the candidate configuration\n\n")
	fmt.Fprintf(&b, "%d alerts decided again, %d changed.\n\n", rep.Alerts, rep.Changed)
	if rep.AssumedSuppressed > 0 {
		fmt.Fprintf(&b, "%d suppressed tickets name a page that is not in the entries read (it paged earlier): they are assumed still suppressed.\n\n", rep.AssumedSuppressed)
	}
	if rep.Changed == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	kinds := slices.Sorted(maps.Keys(rep.Counts))
	b.WriteString("| change | alerts |\n|---|---:|\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "| %s | %d |\n", k, rep.Counts[k])
	}
	table(&b, "sector", rep.BySector, kinds)
	table(&b, "policy (before)", rep.ByPolicy, kinds)
	b.WriteString("\n## Changed alerts\n\n| time | alert | sector | change | before | after |\n|---|---|---|---|---|---|\n")
	for _, c := range rep.Changes {
		fmt.Fprintf(&b, "| %s | %s `%s` | %s | %s | %s | %s |\n", c.Time.UTC().Format(time.RFC3339), mdEscape(c.Alertname), mdEscape(c.Fingerprint),
			mdEscape(c.Sector), strings.Join(c.Kinds, ", "), outcomeText(c.Before), outcomeText(c.After))
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
	if o.Suppressed {
		s += ", suppressed"
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
	return r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f || r == utf8.RuneError || IsBidiControl(r)
}

// IsBidiControl reports whether r is a bidirectional-text control (the
// embeddings, overrides and isolates, and the marks LRM, RLM and ALM):
// shown as written, it reorders what follows it.
func IsBidiControl(r rune) bool {
	return '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069' || r == '\u200e' || r == '\u200f' || r == '\u061c'
}
