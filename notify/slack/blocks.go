package slack

import (
	"fmt"
	"strconv"
	"strings"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Slack's Block Kit limits.
const (
	maxBlocks      = 50
	maxHeader      = 150
	maxSectionText = 3000
	maxListItems   = 10
)

var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// esc escapes text for mrkdwn.
func esc(s string) string { return mrkdwnEscaper.Replace(s) }

func section(text string) *sl.SectionBlock {
	text, _ = notify.TruncateInRunes(text, maxSectionText)
	return sl.NewSectionBlock(sl.NewTextBlockObject(sl.MarkdownType, text, false, false), nil, nil)
}

// Blocks builds the Block Kit message of a notification: a header with the
// title, the classification and decision, the text, the reasons and hints,
// links, then one section per alert, cut with "…and N more" to stay within
// 50 blocks. pdRef, when set, is the PagerDuty dedup_key of a page.
func Blocks(no *alert.Notification, data *notify.Data, title, text, pdRef string) []sl.Block {
	if title == "" {
		title = no.Incident
	}
	title, _ = notify.TruncateInRunes(title, maxHeader)
	blocks := []sl.Block{sl.NewHeaderBlock(sl.NewTextBlockObject(sl.PlainTextType, title, false, false))}

	lead := &alert.Result{}
	for _, r := range no.Results {
		if r.Decision.Action == no.Action {
			lead = r
			break
		}
	}
	if lead.Alert == nil && len(no.Results) > 0 {
		lead = no.Results[0]
	}
	c, d := lead.Classification, lead.Decision

	var b strings.Builder
	b.WriteString("*Decision:* " + esc(string(no.Action)))
	if d.Policy != "" {
		b.WriteString(" (" + esc(d.Policy) + ", " + esc(d.Tier) + ")")
	}
	if no.IncidentResolved {
		b.WriteString(" · *resolved*")
	}
	sector := c.Sector
	if c.SectorName != "" {
		sector = c.SectorName + " (`" + c.Sector + "`)"
	}
	b.WriteString("\n*Sector:* " + esc(sector))
	if len(c.KPIs) > 0 {
		kpis := make([]string, 0, len(c.KPIs))
		for _, k := range c.KPIs {
			kpis = append(kpis, k.ID+" ("+k.Name+")")
		}
		b.WriteString("\n*KPIs:* " + esc(strings.Join(kpis, ", ")))
	}
	if c.IncidentClass != "" {
		b.WriteString("\n*Class:* " + esc(c.IncidentClass))
	}
	if live := no.LiveSLO(lead); live != nil && live.Summary != "" {
		b.WriteString("\n*Live SLO:* " + esc(live.Summary))
	}
	b.WriteString("\n*Incident:* `" + esc(no.Incident) + "`")
	if pdRef != "" {
		b.WriteString("\n*PagerDuty:* paged, dedup_key `" + esc(pdRef) + "`")
	}
	blocks = append(blocks, section(b.String()))

	if text != "" {
		blocks = append(blocks, section(esc(text)))
	}
	if items := bullets(d.Reasons, nil); items != "" {
		blocks = append(blocks, section("*Why:*\n"+items))
	}
	var hints []string
	seen := map[string]bool{}
	for _, r := range no.Results {
		for _, h := range r.Classification.Hints {
			if !seen[h.ID] {
				seen[h.ID] = true
				hints = append(hints, "*"+esc(h.ID)+"*: "+esc(h.Text))
			}
		}
	}
	if items := bullets(hints, func(s string) string { return s }); items != "" {
		blocks = append(blocks, section("*Hints:*\n"+items))
	}
	if l := linkLine(no, data); l != "" {
		blocks = append(blocks, sl.NewContextBlock("", sl.NewTextBlockObject(sl.MarkdownType, l, false, false)))
	}
	blocks = append(blocks, sl.NewDividerBlock())

	return alertSections(blocks, no.Results)
}

// alertSections appends one section per alert of results to blocks, cut
// with "…and N more" to stay within 50 blocks.
func alertSections(blocks []sl.Block, results []*alert.Result) []sl.Block {
	room := maxBlocks - len(blocks)
	for i, r := range results {
		if r.Alert == nil {
			continue
		}
		if i >= room-1 && len(results)-i > 1 {
			blocks = append(blocks, sl.NewContextBlock("", sl.NewTextBlockObject(sl.MarkdownType, fmt.Sprintf("…and %d more", len(results)-i), false, false)))
			break
		}
		blocks = append(blocks, section(alertLine(r, "\n", 0)))
	}
	return blocks
}

// alertLine is one alert in a message: its name, status, action and
// fingerprint, then sep and its summary annotation, if any, cut to
// maxSummary runes when maxSummary > 0.
func alertLine(r *alert.Result, sep string, maxSummary int) string {
	a := r.Alert
	s := "*" + esc(a.Labels["alertname"]) + "* · " + esc(a.Status) + " · " + esc(string(r.Decision.Action)) + " · `" + esc(a.Fingerprint) + "`"
	if sum := esc(a.Annotations["summary"]); sum != "" {
		if maxSummary > 0 {
			sum, _ = notify.TruncateInRunes(sum, maxSummary)
		}
		s += sep + sum
	}
	return s
}

// maxDigestSummary bounds each alert's summary in an update's digest, so
// that its lines and "…and N more" stay within one section's 3000
// characters.
const maxDigestSummary = 200

// UpdateBlocks builds the thread reply of an update of an open incident
// (members joining, or resolving while others still fire): the parent
// message already carries the incident's card — title, decision, sector,
// KPIs, text, reasons, hints and links —, so the reply says what changed,
// in one section: a line with the counts and the loudest decision, then a
// line per alert of the update, the first maxListItems and "…and N more"
// ("Reminder" instead of "Update" for a reminder). The update window
// gathers many webhooks' alerts into one reply, which stays a short digest
// whatever their number. text is the message's fallback text
// (notifications, screen readers).
func UpdateBlocks(no *alert.Notification) (blocks []sl.Block, text string) {
	firing, resolved := no.Counts()
	var counts []string
	if firing > 0 {
		counts = append(counts, strconv.Itoa(firing)+" firing")
	}
	if resolved > 0 {
		counts = append(counts, strconv.Itoa(resolved)+" resolved")
	}
	what := strings.Join(counts, ", ")
	label := "Update"
	if no.Kind == alert.KindReminder {
		label = "Reminder"
	}
	head := "*" + label + ":* " + what + " · *Decision:* " + esc(string(no.Action)) + " · *Incident:* `" + esc(no.Incident) + "`"
	alerts := make([]*alert.Result, 0, len(no.Results))
	for _, r := range no.Results {
		if r.Alert != nil {
			alerts = append(alerts, r)
		}
	}
	lines := list(len(alerts), func(i int) string { return alertLine(alerts[i], " — ", maxDigestSummary) })
	return []sl.Block{section(head + "\n" + lines)}, label + " of " + no.Incident + ": " + what
}

func bullets(items []string, escape func(string) string) string {
	if escape == nil {
		escape = esc
	}
	return list(len(items), func(i int) string { return escape(items[i]) })
}

// list is a bulleted list of n items, item(i) rendering the i-th: the first
// maxListItems, then "…and N more" (the rest are not rendered).
func list(n int, item func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i == maxListItems {
			fmt.Fprintf(&b, "…and %d more\n", n-i)
			break
		}
		b.WriteString("• " + item(i) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// linkLine joins the runbook, dashboard, Prometheus and Alertmanager links.
func linkLine(no *alert.Notification, data *notify.Data) string {
	var links []string
	seen := map[string]bool{}
	add := func(href, text string) {
		if seen[text] || len(href) > 1000 || !notify.WebURL(href) {
			return
		}
		seen[text] = true
		// "|" ends a link's URL in Slack's mrkdwn: escaped, a URL cannot
		// relabel its link ("https://evil/|Runbook (official)").
		links = append(links, "<"+strings.ReplaceAll(esc(href), "|", "%7C")+"|"+text+">")
	}
	for _, r := range no.Results {
		if r.Alert != nil {
			add(r.Alert.Annotations["runbook_url"], "Runbook")
			add(r.Alert.Annotations["dashboard_url"], "Dashboard")
			add(r.Alert.GeneratorURL, "Prometheus")
		}
	}
	add(notify.SilenceURL(data), "Silence")
	add(data.ConsoleURL, "Console")
	return strings.Join(links, " · ")
}
