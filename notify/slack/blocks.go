package slack

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Slack's Block Kit limits, and the router's own bounds within them.
const (
	maxBlocks      = 50
	maxHeader      = 150
	maxSectionText = 3000
	maxListItems   = 10
	// maxText bounds a message's fallback text (notifications, screen
	// readers) as Alertmanager bounds a Slack title: long ones are refused
	// (msg_too_long).
	maxText = 1024
	// maxMessageText bounds the text of all of a message's blocks: Slack
	// refuses larger messages (msg_blocks_too_long) at about 13,000
	// characters, a limit it does not document. The alert sections stop
	// there with "…and N more".
	maxMessageText = 12000
	// maxLinkText bounds one link, escaped, in the links' context block
	// (each element of a context block holds at most 3000 characters).
	maxLinkText = 2900
)

// Block IDs the triage redraw relies on: each alert's section is
// alertBlockPrefix+index, and the "…and N more" line moreBlockPrefix+N.
const (
	alertBlockPrefix = "alert-"
	moreBlockPrefix  = "more-"
)

var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// esc escapes text for mrkdwn, its bidirectional controls shown
// (notify.ShowBidi): the router's own words around it keep their order.
func esc(s string) string { return mrkdwnEscaper.Replace(notify.ShowBidi(s)) }

var mrkdwnUnescaper = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// unescMrkdwn undoes esc: text escaped for mrkdwn as plain text (a
// header).
func unescMrkdwn(s string) string { return mrkdwnUnescaper.Replace(s) }

// section is a section of mrkdwn text, cut to maxSectionText runes at a
// point that splits no link, escape or code block, the cut saying how much
// it left out (truncateNoted).
func section(text string) *sl.SectionBlock {
	text = truncateNoted(text, maxSectionText)
	return sl.NewSectionBlock(sl.NewTextBlockObject(sl.MarkdownType, text, false, false), nil, nil)
}

// maxTextSections bounds the sections a long text is split over: the rest
// of the message's room is the alerts'.
const maxTextSections = 3

// A long text leaves room for the lines of the first reservedLines
// alerts, reservedLine characters each.
const (
	reservedLines = 3
	reservedLine  = 600
)

// Blocks builds the Block Kit message of a notification: a header with the
// title, the classification and decision, the text (plain text, escaped
// here; a long one split over up to maxTextSections sections, at line
// breaks where it can, within the message's size), the reasons and hints,
// links, then one section per alert (alertLine: what tells it apart from
// the message's other alerts), cut with "…and N more" to stay within 50
// blocks. Every cut splits no link, escape, name or character and leaves
// no code block open (cut.go). pdRef, when set, is the PagerDuty dedup_key
// of a page.
func Blocks(no *alert.Notification, data *notify.Data, title, text, pdRef string) []sl.Block {
	return cardBlocks(no, data, title, esc(text), pdRef)
}

// cardBlocks is Blocks with text already mrkdwn: an operator's text rendered
// over escapedData, which keeps its own links and mentions, or the
// built-in text escaped whole.
func cardBlocks(no *alert.Notification, data *notify.Data, title, text, pdRef string) []sl.Block {
	if title == "" {
		title = no.Incident
	}
	title = notify.TruncateShown(title, maxHeader)
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
	if a, pt, ok := strings.Cut(no.NotifiedTier, ":"); ok && alert.Action(a) == no.ShownAction() && a != string(no.Action) {
		// A resolve says how its firings were notified (ShownAction),
		// not what its last annotations decide again.
		d.Policy, d.Tier, _ = strings.Cut(pt, ":")
	}

	var b strings.Builder
	b.WriteString("*Decision:* " + esc(string(no.ShownAction())))
	if d.Policy != "" {
		b.WriteString(" (" + esc(d.Policy) + ", " + esc(d.Tier) + ")")
	}
	if no.IncidentResolved {
		b.WriteString(" · *resolved*")
		if _, resolved := no.Counts(); resolved > 0 {
			// The alerts listed below are the last notification's: those
			// that resolved in earlier webhooks are in the thread.
			b.WriteString(": no alert of the incident fires; " + lastResolved(resolved) + " (below)")
		}
	}
	// An alert no sector matched has no Sector (nor Class) line: "unknown"
	// says nothing the card's absence of one does not, as the title and
	// PagerDuty's summary drop it too (alertrouter.sector).
	if identified(c.Sector) {
		sector := c.Sector
		if c.SectorName != "" {
			sector = c.SectorName + " (`" + c.Sector + "`)"
		}
		b.WriteString("\n*Sector:* " + esc(sector))
	}
	if len(c.KPIs) > 0 {
		kpis := make([]string, 0, len(c.KPIs))
		for _, k := range c.KPIs {
			kpis = append(kpis, k.ID+" ("+k.Name+")")
		}
		b.WriteString("\n*KPIs:* " + esc(strings.Join(kpis, ", ")))
	}
	if identified(c.IncidentClass) {
		b.WriteString("\n*Class:* " + esc(c.IncidentClass))
	}
	if live := no.LiveSLO(lead); live != nil && live.Summary != "" {
		b.WriteString("\n*Live SLO:* " + esc(live.Summary))
	}
	b.WriteString("\n*Incident:* " + code(no.Incident))
	if pdRef != "" {
		b.WriteString(pagerDutyLine(pdRef))
	}
	blocks = append(blocks, section(b.String()))

	textAt := len(blocks) // the text's sections go here, once the room the other blocks leave is known
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
	if links := links(no, data); len(links) > 0 {
		// One element per link: each element holds 3000 characters, a
		// line of five long links would not.
		elems := make([]sl.MixedElement, len(links))
		for i, l := range links {
			elems[i] = sl.NewTextBlockObject(sl.MarkdownType, l, false, false)
		}
		blocks = append(blocks, sl.NewContextBlock("", elems...))
	}
	blocks = append(blocks, sl.NewDividerBlock())

	switch {
	case text == "":
	case len(text) <= maxSectionText:
		blocks = slices.Insert(blocks, textAt, sl.Block(section(text)))
	default:
		// A long text is split over sections (at line breaks where it
		// can), within the message's size less the room of "…and N more".
		room := maxMessageText - len("…and 9999 more")
		for _, b := range blocks {
			room -= blockText(b)
		}
		// And within the room of the first alerts' lines: given it all, a
		// 10 KB description left a parent that listed none of its alerts
		// (an audit).
		room -= min(len(withAlert(no.Results)), reservedLines) * reservedLine
		parts := splitMrkdwn(text, maxTextSections, room)
		secs := make([]sl.Block, len(parts))
		for i, p := range parts {
			secs[i] = section(p)
		}
		blocks = slices.Insert(blocks, textAt, secs...)
	}
	return alertSections(blocks, no.Results)
}

// identified reports whether a sector or incident class was identified: set,
// and not alert.Unknown.
func identified(v string) bool { return v != "" && v != alert.Unknown }

// alertSections appends one section per alert of results to blocks, cut
// with "…and N more" to stay within 50 blocks and maxMessageText
// characters.
func alertSections(blocks []sl.Block, results []*alert.Result) []sl.Block {
	used := 0
	for _, b := range blocks {
		used += blockText(b)
	}
	alerts := withAlert(results)
	tell := tellApart(alerts)
	for i, r := range alerts {
		sec := section(alertLine(r, tell, "\n", 0, 0))
		sec.BlockID = alertBlockPrefix + strconv.Itoa(i)
		last := i == len(alerts)-1
		// Room for this one, and for "…and N more" after it unless it is
		// the last.
		fits := len(blocks) < maxBlocks-1 || last && len(blocks) < maxBlocks
		n := blockText(sec)
		if left := maxMessageText - len("…and 9999 more") - used; fits && n > left && left >= reservedLine/2 {
			// Cut to the room left rather than left out whole: a line of
			// a 5,000-character summary took the room of many.
			sec = section(alertLine(r, tell, "\n", left, 0))
			sec.BlockID = alertBlockPrefix + strconv.Itoa(i)
			n = blockText(sec)
		}
		if !fits || used+n > maxMessageText-len("…and 9999 more") {
			blocks = append(blocks, moreBlock(len(alerts)-i))
			break
		}
		used += n
		blocks = append(blocks, sec)
	}
	return blocks
}

// moreBlock is the "…and n more" line after the alerts a message left out.
func moreBlock(n int) *sl.ContextBlock {
	return sl.NewContextBlock(moreBlockPrefix+strconv.Itoa(n), sl.NewTextBlockObject(sl.MarkdownType, fmt.Sprintf("…and %d more", n), false, false))
}

// blockText is the number of characters of text in b (header, section,
// context): what Slack counts against a message's size.
func blockText(b sl.Block) int {
	n := 0
	count := func(t *sl.TextBlockObject) {
		if t != nil {
			n += utf8.RuneCountInString(t.Text)
		}
	}
	switch b := b.(type) {
	case *sl.HeaderBlock:
		count(b.Text)
	case *sl.SectionBlock:
		count(b.Text)
		for _, f := range b.Fields {
			count(f)
		}
	case *sl.ContextBlock:
		for _, e := range b.ContextElements.Elements {
			if t, ok := e.(*sl.TextBlockObject); ok {
				count(t)
			}
		}
	}
	return n
}

// withAlert returns the results of results that carry an alert.
func withAlert(results []*alert.Result) []*alert.Result {
	alerts := make([]*alert.Result, 0, len(results))
	for _, r := range results {
		if r.Alert != nil {
			alerts = append(alerts, r)
		}
	}
	return alerts
}

// What an alert's line shows of its labels and annotations.
const (
	// maxLineLabels bounds the labels on an alert's line.
	maxLineLabels = 4
	// maxLineLabel bounds a label's name and its value on an alert's line,
	// in runes as escaped (escTruncated).
	maxLineLabel = 64
	// maxLineDescription bounds a description shown on an alert's line of
	// the card, in runes as escaped: alerts sharing one summary show their
	// descriptions, which run long.
	maxLineDescription = 300
)

// lineDetail is what the lines of one message show besides each alert's
// name, status, decision and fingerprint, chosen for the message as a
// whole (tellApart).
type lineDetail struct {
	// labels are the names of the labels whose values each line shows.
	labels []string
	// description says the alerts share one summary while their
	// descriptions differ: each line shows its description instead.
	description bool
}

// tellApart returns what the lines of alerts (each with an Alert) show:
// the labels whose values differ between them (notify.DifferingLabels),
// alertname left out (it is each line's title), notify.TellingLabels
// first, at most maxLineLabels — or, when none differs (one alert, or
// alerts told apart by name alone), the first maxLineLabels of
// notify.TellingLabels they carry, which say where (but an instance of
// kube-state-metrics, the exporter's address, not the object's); and the
// description rather than the summary when the alerts share one summary
// (or none) but not one description.
func tellApart(alerts []*alert.Result) lineDetail {
	var d lineDetail
	if len(alerts) == 0 {
		return d
	}
	all := make([]*template.Alert, len(alerts))
	for i, r := range alerts {
		all[i] = &r.Alert.Alert
	}
	differ := slices.DeleteFunc(notify.DifferingLabels(all), func(name string) bool { return name == "alertname" })
	if len(differ) > 0 {
		slices.SortStableFunc(differ, func(a, b string) int { return notify.TellingRank(a) - notify.TellingRank(b) })
		d.labels = differ[:min(len(differ), maxLineLabels)]
	} else {
		// No label differs: every alert carries the first one's.
		l := all[0].Labels
		// A gNMI collector's alert is about the device it names as
		// source; its instance and pod are the collector's, and named
		// the same collector on every switch's line (an audit).
		gnmi := notify.GNMIDevice(l) != ""
		if gnmi {
			d.labels = append(d.labels, "source")
		}
		for _, name := range notify.TellingLabels {
			if len(d.labels) < maxLineLabels && l[name] != "" && (name != "instance" || l["job"] != "kube-state-metrics") && !(gnmi && notify.GNMICollectorLabel(l, name)) {
				d.labels = append(d.labels, name)
			}
		}
		// What the alerts are about where no pod, node or instance says
		// (a consumer group and topic): Kafka's line showed its cluster
		// alone. Lines naming their object stay as they were (a review).
		if !slices.ContainsFunc(d.labels, isObjectLabel) {
			for _, name := range notify.SubjectLabels(l, func(name string) bool {
				return slices.Contains(d.labels, name) || gnmi && notify.GNMICollectorLabel(l, name)
			}) {
				if len(d.labels) < maxLineLabels {
					d.labels = append(d.labels, name)
				}
			}
		}
	}
	sum, desc := all[0].Annotations["summary"], all[0].Annotations["description"]
	sameSum, sameDesc := true, true
	for _, a := range all[1:] {
		sameSum = sameSum && a.Annotations["summary"] == sum
		sameDesc = sameDesc && a.Annotations["description"] == desc
	}
	d.description = sameSum && !sameDesc
	return d
}

// isObjectLabel reports whether name names the object an alert fires on:
// a pod, a node, an instance.
func isObjectLabel(name string) bool {
	switch name {
	case "pod", "k8s.pod.name", "node", "k8s.node.name", "instance":
		return true
	}
	return false
}

// alertLine is one alert in a message: its name, the values of d's labels
// it carries (labelPairs), its status, action and fingerprint, then sep and
// its summary annotation, if any — its description instead when d says so
// and it has one, cut to maxLineDescription runes. maxText > 0 bounds the
// summary (or description) and maxLine > 0 the line, the labels taking at
// most a third of it; a bound of 0 is none (a card's line is bounded by its
// section).
func alertLine(r *alert.Result, d lineDetail, sep string, maxLine, maxText int) string {
	a := r.Alert
	s := "*" + showTicks(esc(a.Labels["alertname"])) + "*"
	if pairs := labelPairs(a, d.labels, maxLine/3); pairs != "" {
		s += " · " + pairs
	}
	s += " · " + esc(a.Status) + " · " + esc(string(r.Decision.Action)) + " · `" + esc(a.Fingerprint) + "`"
	text := a.Annotations["summary"]
	if desc := a.Annotations["description"]; d.description && desc != "" {
		text = desc
		if maxText == 0 || maxText > maxLineDescription {
			maxText = maxLineDescription
		}
	}
	if maxLine > 0 {
		room := maxLine - utf8.RuneCountInString(s) - utf8.RuneCountInString(sep)
		if maxText == 0 || maxText > room {
			maxText = room
		}
		if maxText < minLineText {
			return s // the labels and the name fill the line
		}
	}
	if text == "" {
		return s
	}
	if maxText > 0 {
		// A code block the cut (or the text) leaves open is closed, within
		// maxText: the rest of the reply would render as code.
		cut := escTruncated(text, maxText)
		if openFence(cut) {
			if cut = escTruncated(text, maxText-len(fence)); openFence(cut) {
				cut += fence
			}
		}
		return s + sep + cut
	}
	return s + sep + esc(text) // the section's cut keeps escapes whole
}

// minLineText is the fewest runes of its summary an alert's line shows:
// with less room, none.
const minLineText = 10

// minLabelValue is the fewest runes of a label's value labelPairs shows:
// with less room, the label is left out, and those after it.
const minLabelValue = 8

// labelPairs is "pod=api-7d9f, namespace=shop": the values of the labels
// names that a carries, each name and value cut to maxLineLabel runes and
// escaped, in at most room runes when room > 0 (a value cut shorter to fit,
// the labels that do not fit left out).
func labelPairs(a *alert.Alert, names []string, room int) string {
	var b strings.Builder
	w := 0 // runes written
	for _, name := range names {
		v := a.Labels[name]
		if v == "" {
			continue
		}
		sep := ""
		if w > 0 {
			sep = ", "
		}
		k := escTruncated(name, maxLineLabel) + "="
		n := maxLineLabel
		if room > 0 {
			if n = min(n, room-w-len(sep)-utf8.RuneCountInString(k)); n < minLabelValue {
				break
			}
		}
		// A backtick shown as ˋ (as code() does): it would pair with the
		// fingerprint's code span after the labels (a review).
		pair := sep + showTicks(k+escTruncated(v, n))
		b.WriteString(pair)
		w += utf8.RuneCountInString(pair)
	}
	return b.String()
}

// escTruncated is esc(s) in at most n runes: s is cut as written, after
// its last word that fits when that keeps more than half of what fits (a
// summary cut "…on the llama-3-70b schedule…" read as a word of its own),
// else at a character (notify.ClusterStart: no accent, emoji sequence or
// flag split; one character longer than n is cut at a code point), and
// then escaped, "…" marking the cut — a cut of the escaped text could
// split an "&amp;" and leave a raw "&". An "&" counts five runes, a "<"
// or ">" four and a bidirectional control eight ("[U+202E]"), as escaped.
func escTruncated(s string, n int) string {
	w, cut := 0, -1
	for i, r := range s {
		c := 1
		switch r {
		case '&':
			c = len("&amp;")
		case '<', '>':
			c = len("&lt;")
		default:
			if notify.IsBidiControl(r) {
				c = len("[U+202E]") // as esc shows it (notify.ShowBidi)
			}
		}
		if cut < 0 && w+c > n-1 {
			cut = i // s[:cut] and "…" fit
		}
		if w += c; w > n {
			if p := notify.ClusterStart(s, cut); p > 0 {
				cut = p
			}
			if sp := strings.LastIndexAny(s[:cut], " \n\t"); sp > cut/2 {
				cut = sp
			}
			return esc(s[:cut]) + "…"
		}
	}
	return esc(s)
}

// maxDigestLine bounds each alert's line in an update's digest, and
// maxDigestSummary its summary (or description), so that its lines and
// "…and N more" stay within one section's 3000 characters.
const (
	maxDigestLine    = 270
	maxDigestSummary = 200
)

// UpdateBlocks builds the thread reply of an update of an open incident
// (members joining, or resolving while others still fire): the parent
// message already carries the incident's card — title, decision, sector,
// KPIs, text, reasons, hints and links —, so the reply says what changed,
// in one section: a line with the counts and the loudest decision, then a
// line per alert of the update (alertLine, within maxDigestLine), the
// first maxListItems and "…and N more"
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
	head := "*" + label + ":* " + what + " · *Decision:* " + esc(string(no.ShownAction())) + " · *Incident:* " + code(no.Incident)
	alerts := withAlert(no.Results)
	tell := tellApart(alerts)
	lines := list(len(alerts), func(i int) string { return alertLine(alerts[i], tell, " — ", maxDigestLine, maxDigestSummary) })
	blocks = []sl.Block{section(head + "\n" + lines)}
	if no.HeldOpen && resolved > 0 {
		blocks = append(blocks, sl.NewContextBlock("", sl.NewTextBlockObject(sl.MarkdownType, heldOpenNote, false, false)))
	}
	return blocks, fallbackText(label + " of " + no.Incident + ": " + what)
}

// heldOpenNote explains an update whose resolves close nothing
// (alert.Notification.HeldOpen).
const heldOpenNote = ":warning: Alertmanager left some alerts of this group out of its webhook (`max_alerts`), so these resolves do not close the incident: " +
	"it stays open until a webhook carrying the whole group resolves it. If every alert has resolved in Alertmanager, resolve the incident by hand; raise `max_alerts` to avoid this."

// fallbackText is a message's text (what notifications and screen readers
// show): escaped, since Slack reads it as mrkdwn — a label value of
// "<!channel>" must not notify a channel —, in at most maxText runes as
// escaped (escTruncated: an "&" counts five).
func fallbackText(s string) string {
	return escTruncated(s, maxText)
}

// pagerDutyLine names the PagerDuty incident of a page whose route reached
// PagerDuty: the page is sent there beside this message, not confirmed by
// it — a PagerDuty refusing it is answered 5xx to Alertmanager (a dead
// letter when permanent, AlertrouterDeadLetters), so the line does not say
// "paged".
func pagerDutyLine(pdRef string) string {
	return "\n*PagerDuty:* page routed there, dedup_key " + code(pdRef)
}

// MinimalBlocks is the message sent when Slack refuses the full one (a
// limit the drawing missed): the header, then the decision, the incident,
// the PagerDuty dedup_key of a page (pdRef, when set) and the number of
// alerts, without the text, hints, links or alerts.
func MinimalBlocks(no *alert.Notification, title, pdRef string) []sl.Block {
	// Bidi controls shown as [U+202E] before the cut, as cardBlocks does:
	// shown after it, a title of RLMs passed 150 characters and Slack
	// refused the minimal message too (invalid_blocks: a lost ticket).
	title = notify.TruncateShown(title, maxHeader)
	firing, resolved := no.Counts()
	paged := ""
	if pdRef != "" {
		paged = pagerDutyLine(pdRef)
	}
	counts := fmt.Sprintf("%d firing, %d resolved", firing, resolved)
	if no.IncidentResolved {
		counts = "Resolved: no alert of the incident fires; " + lastResolved(resolved)
	}
	return []sl.Block{
		sl.NewHeaderBlock(sl.NewTextBlockObject(sl.PlainTextType, title, false, false)),
		section(fmt.Sprintf("*Decision:* %s · *Incident:* %s%s\n%s. Slack refused the full message; the alerts are in the router's console and journal.",
			esc(string(no.ShownAction())), code(no.Incident), paged, counts)),
	}
}

// lastResolved says how many alerts the last notification of a resolved
// incident resolved: its alerts only, not those that resolved in earlier
// webhooks (posted in the thread), so not the incident's count.
func lastResolved(n int) string {
	if n == 1 {
		return "the last notification resolved 1 alert"
	}
	return "the last notification resolved " + strconv.Itoa(n) + " alerts"
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

// links are the runbook, dashboard, Prometheus, Alertmanager silence and
// console links, in mrkdwn, each at most maxLinkText characters (a longer
// one is left out: a cut URL would lead nowhere).
func links(no *alert.Notification, data *notify.Data) []string {
	var links []string
	seen := map[string]bool{}
	add := func(href, text string) {
		if seen[text] || len(href) > maxLinkText || !notify.WebURL(href) {
			return
		}
		// A URL cannot relabel its link ("https://evil/|Runbook (official)").
		l := "<" + linkSafe(esc(href)) + "|" + text + ">"
		if utf8.RuneCountInString(l) > maxLinkText {
			return
		}
		seen[text] = true
		links = append(links, l)
	}
	for _, r := range no.Results {
		if r.Alert != nil {
			add(notify.RunbookURL(r.Alert.Annotations), "Runbook")
			add(notify.DashboardURL(r.Alert.Annotations), "Dashboard")
			add(r.Alert.GeneratorURL, notify.GeneratorText(r.Alert.GeneratorURL))
		}
	}
	add(notify.SilenceURL(data), "Silence")
	add(data.ConsoleURL, "Console")
	return links
}
