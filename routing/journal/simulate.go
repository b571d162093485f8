package journal

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

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
}

// episode identifies one alert occurrence in the journal.
type episode struct {
	fingerprint, status string
	startsAt            time.Time
}

// Simulate decides the journal's decision entries again with evaluate and
// reports what changes. Entries of one webhook (same GroupKey and
// ReceivedAt) are decided together, as the pipeline decided them, so that
// in-payload SLO suppression is reproduced.
func Simulate(entries []Entry, evaluate Evaluator) *Report {
	latest := map[episode]int{}
	for i := range entries {
		e := &entries[i]
		if e.Kind != KindDecision {
			continue
		}
		k := episode{e.Fingerprint, e.Status, e.StartsAt}
		if j, ok := latest[k]; !ok || !entries[j].Time.After(e.Time) {
			latest[k] = i
		}
	}
	// Regroup the kept entries by webhook, in journal order.
	type webhookKey struct {
		groupKey string
		at       time.Time
	}
	groups := map[webhookKey][]int{}
	var order []webhookKey
	for _, i := range slices.Sorted(maps.Values(latest)) {
		k := webhookKey{entries[i].GroupKey, entries[i].ReceivedAt}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	rep := &Report{Counts: map[string]int{}, BySector: map[string]map[string]int{}, ByPolicy: map[string]map[string]int{}}
	for _, k := range order {
		idx := groups[k]
		msg := &alert.Message{GroupKey: k.groupKey, ReceivedAt: k.at, Items: make([]alert.Alert, len(idx))}
		for j, i := range idx {
			msg.Items[j] = entries[i].Alert()
		}
		results := evaluate(msg)
		for j, i := range idx {
			rep.Alerts++
			if j < len(results) {
				rep.add(&entries[i], results[j])
			}
		}
	}
	slices.SortStableFunc(rep.Changes, func(a, b Change) int { return a.Time.Compare(b.Time) })
	return rep
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

func (rep *Report) add(e *Entry, r *alert.Result) {
	before, after := outcomeOf(e), outcomeOfResult(r)
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
		fmt.Fprintf(&b, "| %s | %s `%s` | %s | %s | %s | %s |\n", c.Time.UTC().Format(time.RFC3339), mdEscape(c.Alertname), c.Fingerprint,
			c.Sector, strings.Join(c.Kinds, ", "), outcomeText(c.Before), outcomeText(c.After))
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

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
