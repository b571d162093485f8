package pagerduty

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	pd "github.com/PagerDuty/go-pagerduty"
	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

var severities = map[string]bool{"critical": true, "error": true, "warning": true, "info": true}

// urgent reports whether PagerDuty severity s is one a service whose
// urgency follows severity pages for (critical, error: high urgency).
func urgent(s string) bool { return s == "critical" || s == "error" }

// derivedSeverity maps a decision to PagerDuty's severity.
func derivedSeverity(a alert.Action) string {
	switch a {
	case alert.ActionPage:
		return "critical"
	case alert.ActionTicket:
		return "warning"
	default:
		return "info"
	}
}

// buildTrigger returns the full trigger event of no, kept within 512 KB, and
// its minimal twin (summary, source, severity, dedup_key only) for the retry
// after a 400.
func (n *Notifier) buildTrigger(no *alert.Notification) (full, minimal *pd.V2Event) {
	data := notify.NewData(no)
	t := n.deps.Templates
	lead := no.Loudest()

	summary := t.Render(n.logger, "summary", firstNonEmpty(n.cfg.Summary, n.cfg.Description), notify.DefaultSummary, data)
	if summary == "" {
		summary = no.Incident
	}
	// Shown on phones and in PagerDuty's lists: an alert's bidirectional
	// controls reversed the words around them (an audit).
	summary = notify.TruncateShown(summary, maxSummary)

	severity := derivedSeverity(no.Action)
	if n.cfg.Severity != "" {
		s := strings.ToLower(t.Render(n.logger, "severity", n.cfg.Severity, "", data))
		switch {
		case !severities[s]:
			n.logger.Warn("templated severity is not one of critical, error, warning, info; using the decision's", "incident", no.Incident, "severity", s, "used", severity)
		case notify.IsTemplate(n.cfg.Severity) && urgent(s) != (no.Action == alert.ActionPage) && no.Action != alert.ActionNone:
			// The template chooses within the decision's urgency, never
			// across it: Alertmanager's common `{{ .CommonLabels.severity }}`
			// sent a page the router decided (a burn rate, a capacity over
			// its threshold, Grafana SLO's tier beating a team-wide
			// warning) as warning — low urgency where the PagerDuty
			// service's urgency follows severity: no page at 3 a.m. — and
			// a ticket of a critical label as a high-urgency page. A
			// constant is the operator's choice for the receiver (a
			// low-urgency service's pages) and is kept.
			n.severityLogs.Log(context.Background(), n.logger, slog.LevelWarn, s+"/"+string(no.Action),
				"templated severity would change the decision's urgency; using the decision's", "incident", no.Incident, "action", no.Action, "severity", s, "used", severity)
		default:
			severity = s
		}
	}

	source := ""
	if n.cfg.Source != "" {
		source = t.Render(n.logger, "source", n.cfg.Source, "", data)
	}
	if source == "" && lead.Alert != nil {
		source = notify.PageSource(lead.Alert.Labels)
	}
	if source == "" {
		source = "alertrouter"
	}
	source, _ = notify.TruncateInRunes(source, notify.MaxPageSource)

	dedup := DedupKey(no.Incident)
	minimal = &pd.V2Event{
		RoutingKey: n.routingKey,
		Action:     "trigger",
		DedupKey:   dedup,
		Payload:    &pd.V2Payload{Summary: summary, Source: source, Severity: severity},
	}

	c := lead.Classification
	payload := &pd.V2Payload{
		Summary:   summary,
		Source:    source,
		Severity:  severity,
		Component: n.orDerived(t, "component", n.cfg.Component, c.Sector, data),
		Group:     n.orDerived(t, "group", n.cfg.Group, c.PrimaryKPI(), data),
		Class:     n.orDerived(t, "class", n.cfg.Class, c.IncidentClass, data),
		Details:   n.details(no, data),
	}
	if lead.Alert != nil && !lead.Alert.StartsAt.IsZero() {
		payload.Timestamp = lead.Alert.StartsAt.UTC().Format(time.RFC3339)
	}
	alerts := AlertsURL(no, data)
	builtin := links(no, data, alerts)
	full = &pd.V2Event{
		RoutingKey: n.routingKey,
		Action:     "trigger",
		DedupKey:   dedup,
		Client:     n.clientName(data),
		Links:      append(builtin, n.configuredLinks(t, data, builtin)...),
		Images:     n.images(t, data),
		Payload:    payload,
	}
	switch {
	case data.ExternalURL == "":
	case n.cfg.ClientURL == "":
		full.ClientURL = alerts
	default:
		// The operator's template, as written (Alertmanager's
		// "pagerduty.default.clientURL" reads .Receiver, the router's
		// receiver here).
		full.ClientURL = t.Render(n.logger, "client_url", n.cfg.ClientURL, `{{ template "__alertmanagerURL" . }}`, data)
	}
	if !notify.WebURL(full.ClientURL) {
		full.ClientURL = "" // not a web page: no link rather than a script
	}
	n.shrink(full, minimal)
	return full, minimal
}

// details builds custom_details. A map keeps the JSON keys sorted, so the
// event is stable for golden files and readable in PagerDuty.
//
// The operator's keys (details, Alertmanager's; custom_details, the
// router's, which wins when both set one key) are their explicit choice and
// win over the router's own of the same name: Alertmanager's default
// details — firing and resolved as the list of instances, num_firing and
// num_resolved — kept by a receiver ported from Alertmanager read as there.
// The router's value a key displaces moves to its second name (detailName):
// the counts firing and resolved to num_firing and num_resolved,
// Alertmanager's names for them; any other key k to alertrouter_k. A key
// whose template fails is left out (logged and counted), not sent as null.
func (n *Notifier) details(no *alert.Notification, data *notify.Data) map[string]any {
	lead := no.Loudest()
	c, d := lead.Classification, lead.Decision
	kpis := make([]string, 0, len(c.KPIs))
	for _, k := range c.KPIs {
		kpis = append(kpis, k.ID+" ("+k.Name+")")
	}
	var hints []string
	seen := map[string]bool{}
	firing, resolved := no.Counts()
	alerts := make([]map[string]any, 0, min(len(no.Results), maxAlertDetails))
	for _, r := range no.Results {
		for _, h := range r.Classification.Hints {
			if !seen[h.ID] {
				seen[h.ID] = true
				hints = append(hints, h.ID+": "+h.Text)
			}
		}
		if r.Alert != nil && len(alerts) < maxAlertDetails {
			alerts = append(alerts, alertDetails(r))
		}
	}
	builtin := map[string]any{
		"incident":       no.Incident,
		"kind":           string(no.Kind),
		"sector":         c.Sector,
		"kpis":           kpis,
		"incident_class": c.IncidentClass,
		"decision": map[string]any{
			"action":  string(d.Action),
			"policy":  d.Policy,
			"tier":    d.Tier,
			"reasons": d.Reasons,
		},
		"firing":   firing,
		"resolved": resolved,
		"alerts":   alerts,
	}
	if c.SectorName != "" {
		builtin["sector_name"] = c.SectorName
	}
	if live := no.LiveSLO(lead); live != nil {
		builtin["live_slo"] = live.Details
	}
	if len(hints) > 0 {
		builtin["hints"] = hints
	}
	if omitted := len(no.Results) - len(alerts); omitted > 0 {
		builtin["alerts_omitted"] = omitted
	}
	m := make(map[string]any, len(builtin)+len(n.cfg.Details)+len(n.cfg.CustomDetails))
	for k, v := range builtin {
		if name := n.detailName(k); name != "" {
			m[name] = v
		}
	}
	for k, v := range n.cfg.Details { // Alertmanager's details
		if out, ok := n.detail(k, v, data); ok {
			m[k] = out
		}
	}
	for k, text := range n.cfg.CustomDetails {
		if out, ok := n.deps.Templates.TryRender(n.logger, "custom_details."+k, text, data); ok {
			m[k] = out
		}
	}
	return m
}

// configuresDetail reports whether the config sets custom_details key k,
// in details or custom_details.
func (n *Notifier) configuresDetail(k string) bool {
	_, inDetails := n.cfg.Details[k]
	_, inCustom := n.cfg.CustomDetails[k]
	return inDetails || inCustom
}

// detailName is the key of custom_details that holds the router's own
// detail k: k itself, or, when the config sets k, its second name —
// num_firing and num_resolved for the counts firing and resolved,
// alertrouter_k for any other —, or "" when the config sets that too.
func (n *Notifier) detailName(k string) string {
	if !n.configuresDetail(k) {
		return k
	}
	alias := "alertrouter_" + k
	switch k {
	case "firing":
		alias = "num_firing"
	case "resolved":
		alias = "num_resolved"
	}
	if n.configuresDetail(alias) {
		return ""
	}
	return alias
}

// detail renders one entry of Alertmanager's details as Alertmanager does
// (template.DeepCopyWithTemplate): every string in it, nested ones and the
// names of nested mappings included, is a template, and a rendered string
// that reads as YAML structure or a JSON string ({{ .CommonLabels | toJson }})
// is sent as that structure; nested mappings become JSON objects (YAML's
// map[interface{}]interface{} cannot be marshalled: the whole event failed
// to encode and went out as the minimal event). It reports false when a
// template of the entry fails: the entry is left out (Alertmanager fails
// the whole notification; the router still pages, and a null would read as
// a value).
func (n *Notifier) detail(k string, v any, data *notify.Data) (any, bool) {
	out, err := template.DeepCopyWithTemplate(v, func(text string) (string, error) {
		s, ok := n.deps.Templates.TryRender(n.logger, "details."+k, text, data)
		if !ok {
			return "", errDetailFailed
		}
		return s, nil
	})
	return out, err == nil
}

// errDetailFailed stops the rendering of a details entry whose template
// failed (TryRender logged it).
var errDetailFailed = errors.New("details entry failed to render")

func alertDetails(r *alert.Result) map[string]any {
	a := r.Alert
	labels := make(map[string]string, min(len(a.Labels), maxLabels))
	names := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		names = append(names, k)
	}
	notify.TellingFirst(names)
	for _, k := range names[:min(len(names), maxLabels)] {
		labels[k] = a.Labels[k]
	}
	m := map[string]any{
		"fingerprint": a.Fingerprint,
		"status":      a.Status,
		"labels":      labels,
		"decision":    string(r.Decision.Action) + " by " + r.Decision.Policy + " (" + r.Decision.Tier + ")",
		"starts_at":   a.StartsAt.UTC().Format(time.RFC3339),
	}
	if len(names) > maxLabels {
		m["labels_omitted"] = len(names) - maxLabels
	}
	if s := a.Annotations["summary"]; s != "" {
		m["summary"] = notify.TruncateText(s, maxAlertText)
	}
	// The description says what the summary does not (mixin rules: the
	// pod, the mountpoint, the % left).
	if s := a.Annotations["description"]; s != "" && s != a.Annotations["summary"] {
		m["description"] = notify.TruncateText(s, maxAlertText)
	}
	return m
}

// links collects the event's built-in links, at most maxLinks,
// deduplicated by URL: the alerts' runbook, dashboard and generator
// (Prometheus) links, then the incident's own — the alertrouter console,
// Alertmanager's list of the incident's alerts (alerts: AlertsURL) and its
// silence page. (The links of the config come after them, not counted in
// maxLinks: configuredLinks.) The incident's links always have their place:
// the alerts' take the rest, a kind at a time (a runbook, a dashboard, a
// graph, then a second of each …), so a storm of per-instance dashboards
// crowds out neither the silence nor the runbook. Several links of one kind
// are told apart by what differs between the alerts of the links kept
// (tellApart: "Dashboard (10.0.4.3:9100)"), and the last one kept says how
// many were left out. Only the links that can be kept are parsed (WebURL)
// and labelled; the rest are counted — distinct http(s):// URLs —, so a
// storm of a thousand alerts costs little more than one.
func links(no *alert.Notification, data *notify.Data, alerts string) []interface{} {
	seen := map[string]bool{}
	usable := func(href string) bool {
		return href != "" && len(href) <= maxLinkHref && !seen[href] && notify.WebURL(href)
	}
	var ibuf [3]notify.Link
	incident := ibuf[:0]
	addIncident := func(href, text string) {
		if usable(href) {
			seen[href] = true
			incident = append(incident, notify.Link{Href: href, Text: text})
		}
	}
	addIncident(data.ConsoleURL, "alertrouter console")
	if notify.WebURL(data.ExternalURL) {
		addIncident(alerts, "Alertmanager")
		addIncident(notify.SilenceURL(data), "Silence")
	}

	// The alerts' links of each kind, with the alert each came from: the
	// first room of them (no kind can keep more), and how many in all.
	kinds := [...]string{"Runbook", "Dashboard", "Prometheus"}
	type alertLink struct {
		href  string
		alert *template.Alert
	}
	room := maxLinks - len(incident)
	var buf [len(kinds) * maxLinks]alertLink
	var found [len(kinds)][]alertLink
	for k := range kinds {
		found[k] = buf[k*maxLinks : k*maxLinks : k*maxLinks+room]
	}
	var count [len(kinds)]int
	for _, r := range no.Results {
		if r.Alert == nil {
			continue
		}
		for k, href := range [len(kinds)]string{notify.RunbookURL(r.Alert.Annotations), notify.DashboardURL(r.Alert.Annotations), r.Alert.GeneratorURL} {
			if len(found[k]) < room {
				if usable(href) {
					seen[href] = true
					found[k] = append(found[k], alertLink{href: href, alert: &r.Alert.Alert})
					count[k]++
				}
			} else if href != "" && len(href) <= maxLinkHref && !seen[href] && notify.WebPrefix(href) {
				seen[href] = true
				count[k]++
			}
		}
	}
	var keep [len(kinds)]int
	for left := room; left > 0; {
		took := false
		for k := range kinds {
			if left > 0 && keep[k] < count[k] {
				keep[k]++
				left--
				took = true
			}
		}
		if !took {
			break
		}
	}

	out := make([]interface{}, 0, keep[0]+keep[1]+keep[2]+len(incident))
	for k, kind := range kinds {
		kept := found[k][:keep[k]]
		var which []string
		if len(kept) > 1 {
			owners := make([]*template.Alert, len(kept))
			for i, l := range kept {
				owners[i] = l.alert
			}
			which = tellApart(owners)
		}
		for i, l := range kept {
			text := kind
			if k == len(kinds)-1 {
				text = notify.GeneratorText(l.href) // vmalert's, Grafana's rule page
			}
			if which != nil {
				text += " (" + which[i] + ")"
			}
			if left := count[k] - keep[k]; i == len(kept)-1 && left > 0 {
				text += " · " + strconv.Itoa(left) + " more not linked"
			}
			out = append(out, notify.Link{Href: l.href, Text: text})
		}
	}
	for _, l := range incident {
		out = append(out, l)
	}
	return out
}

// maxLinkLabel bounds what tellApart takes from a label value.
const maxLinkLabel = 64

// tellApart returns, for alerts whose links share a kind, what tells each
// apart in its link's text: the value of a label that differs between all
// of them as shown, cut to maxLinkLabel runes (alertname first, then
// instance, then by name), else the values of every label that differs
// between any two, the alert's position added where that text repeats
// ("h1 #2"), else its position alone ("#2").
func tellApart(alerts []*template.Alert) []string {
	differ := notify.DifferingLabels(alerts)
	out := make([]string, len(alerts))
	value := func(a *template.Alert, name string) string {
		v, _ := notify.TruncateInRunes(a.Labels[name], maxLinkLabel)
		return v
	}
	for _, name := range differ {
		// Distinct as shown: values that differ only past maxLinkLabel
		// runes read alike.
		distinct := make(map[string]bool, len(alerts))
		for i, a := range alerts {
			out[i] = value(a, name)
			distinct[out[i]] = true
		}
		if len(distinct) == len(alerts) {
			return out
		}
	}
	times := make(map[string]int, len(alerts))
	for i, a := range alerts {
		var vs []string
		for _, name := range differ {
			if v := value(a, name); v != "" {
				vs = append(vs, v)
			}
		}
		out[i] = strings.Join(vs, ", ")
		times[out[i]]++
	}
	// A text that several alerts share ({instance=h1} and {pod=h1}, or
	// values cut alike) gets the alert's position too.
	for i := range out {
		switch {
		case out[i] == "":
			out[i] = "#" + strconv.Itoa(i+1)
		case times[out[i]] > 1:
			out[i] += " #" + strconv.Itoa(i+1)
		}
	}
	return out
}

// AlertsURL is the page of Alertmanager's UI that lists the incident's
// alerts — the default client_url, and the event's "Alertmanager" link: the
// alerts of Alertmanager's receiver that sent the webhook
// (no.AlertmanagerReceiver, matched exactly) and of the Alertmanager group
// (data.GroupLabels: Alertmanager's group labels the notification's alerts
// share). Alertmanager's own link filters by .Receiver, which in the
// router's data is the router's receiver: an empty list. "" without an
// external URL.
func AlertsURL(no *alert.Notification, data *notify.Data) string {
	if !notify.WebURL(data.ExternalURL) {
		return ""
	}
	var b strings.Builder
	b.WriteString(data.ExternalURL)
	b.WriteString("/#/alerts")
	sep := byte('?')
	if r := no.AlertmanagerReceiver; r != "" {
		b.WriteByte(sep)
		b.WriteString("receiver=")
		b.WriteString(url.QueryEscape(regexp.QuoteMeta(r))) // a regular expression in Alertmanager's API
		sep = '&'
	}
	// A label the UI cannot read is left out (notify.UIFilter): the list
	// is wider, never dropped whole.
	if f, _ := notify.UIFilter(data.GroupLabels); f != "" {
		b.WriteByte(sep)
		b.WriteString("filter=")
		b.WriteString(notify.UIQueryEscape(f))
	}
	return b.String()
}

func intOf(v any) int {
	i, _ := v.(int)
	return i
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// clientName renders the event's client name (a template, as in Alertmanager).
func (n *Notifier) clientName(data *notify.Data) string {
	if !notify.IsTemplate(n.cfg.Client) {
		return n.cfg.Client
	}
	return n.deps.Templates.Render(n.logger, "client", n.cfg.Client, "", data)
}

// escalationClient is the client of a trigger a Slack click escalates:
// its template rendered over what the click knows — no alerts —, its
// failure (a client reading .Alerts, as a redefined __alertmanager may)
// leaving the client out, uncounted: the notifications' own renders tell
// whether the template works.
func (n *Notifier) escalationClient(incident string) string {
	if !notify.IsTemplate(n.cfg.Client) {
		return n.cfg.Client
	}
	return n.deps.Templates.Uncounted().Render(nil, "client", n.cfg.Client, "", notify.NewData(&alert.Notification{Receiver: n.name, Incident: incident, Action: alert.ActionPage}))
}

// orDerived renders the template text of field, or returns derived when
// text is empty or renders empty.
func (n *Notifier) orDerived(t *notify.Templates, field, text, derived string, data *notify.Data) string {
	if text == "" {
		return derived
	}
	return firstNonEmpty(t.Render(n.logger, field, text, "", data), derived)
}

// configuredLinks renders the links of the config; a link whose href
// renders empty is dropped, as Alertmanager does, and so is one whose href
// is already linked — by builtin (the event's own links: the runbook, the
// generator URL …) or by an earlier link of the config.
func (n *Notifier) configuredLinks(t *notify.Templates, data *notify.Data, builtin []interface{}) []interface{} {
	var out []interface{}
	seen := make(map[string]bool, len(builtin)+len(n.cfg.Links))
	for _, l := range builtin {
		if l, ok := l.(notify.Link); ok {
			seen[l.Href] = true
		}
	}
	for _, l := range n.cfg.Links {
		href := t.Render(n.logger, "links.href", l.Href, "", data)
		if len(href) > maxLinkHref || !notify.WebURL(href) || seen[href] {
			continue
		}
		seen[href] = true
		out = append(out, Link{Href: href, Text: t.Render(n.logger, "links.text", l.Text, "", data)})
	}
	return out
}

// images renders the images of the config; one whose src renders empty is
// dropped.
func (n *Notifier) images(t *notify.Templates, data *notify.Data) []interface{} {
	var out []interface{}
	for _, im := range n.cfg.Images {
		src := t.Render(n.logger, "images.src", im.Src, "", data)
		if !notify.WebURL(src) {
			continue
		}
		href := t.Render(n.logger, "images.href", im.Href, "", data)
		if !notify.WebURL(href) {
			href = ""
		}
		out = append(out, Image{Src: src, Alt: t.Render(n.logger, "images.alt", im.Alt, "", data), Href: href})
	}
	return out
}
