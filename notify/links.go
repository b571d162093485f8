package notify

import (
	"net/url"
	"slices"
	"strings"

	"github.com/prometheus/alertmanager/template"
	"github.com/prometheus/common/model"
)

// Link is a link a notification carries: PagerDuty's links entry.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// Escalation is a page made from a ticket in Slack (its Escalate button),
// as PagerDuty is sent it.
type Escalation struct {
	// Incident is the incident's key (PagerDuty's dedup_key is made of it).
	Incident string
	Summary  string
	Details  map[string]any
	Links    []Link
	// Source, Component, Group and Class are the payload's fields as a
	// page of the incident routed to PagerDuty carries them (PageSource,
	// sector, primary KPI, incident class): event rules keyed on them meet
	// escalated pages too. "" leaves a field out; Source "" is
	// "alertrouter".
	Source, Component, Group, Class string
}

// WebURL reports whether s is an absolute http(s) URL: the only links the
// notifiers put in front of people. Alert annotations, generator URLs and
// the webhook's externalURL come from whoever can write rules or reach the
// webhook; a javascript:, data: or vbscript: link made clickable in Slack or
// PagerDuty would run there.
func WebURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) && u.Host != ""
}

// ScriptLink reports whether v is a link of a scheme that runs or embeds
// something (javascript:, vbscript:, data:) as a browser reads it: in any
// case, with spaces around and tabs or newlines inside the scheme (which
// browsers drop), whatever follows — "javascript:alert(1)#%zz" is no URL
// url.Parse takes, and runs all the same (a review). Shown nowhere, not
// even as text an operator's template may turn into a link.
func ScriptLink(v string) bool {
	v = strings.TrimLeftFunc(v, func(r rune) bool { return r <= ' ' })
	var scheme strings.Builder
	for _, r := range v {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if r == ':' {
			switch strings.ToLower(scheme.String()) {
			case "javascript", "vbscript", "data":
				return true
			}
			return false
		}
		if scheme.Len() > len("javascript") {
			return false
		}
		scheme.WriteRune(r)
	}
	return false
}

// LinkAnnotation reports whether an annotation named name holds a link:
// one of the runbook and dashboard annotations read for links, or a name
// ending in url or link (generator_url, docs_link), in any case.
func LinkAnnotation(name string) bool {
	n := strings.ToLower(name)
	return slices.Contains(runbookAnnotations, n) || slices.Contains(dashboardAnnotations, n) ||
		strings.HasSuffix(n, "url") || strings.HasSuffix(n, "link")
}

// The annotations read for an alert's runbook and dashboard links, in
// order: runbook_url and dashboard_url (the Prometheus ecosystem's), then
// the other names real rule files write them under.
var (
	runbookAnnotations   = []string{"runbook_url", "runbook", "runbook_link", "playbook_url", "playbook"}
	dashboardAnnotations = []string{"dashboard_url", "dashboard", "grafana_url", "grafana_dashboard", "dashboard_link"}
)

// RunbookURL returns the alert's runbook: the first of runbookAnnotations
// whose value starts as an absolute http(s) URL (WebPrefix), or "".
func RunbookURL(annotations map[string]string) string {
	return firstWebURL(annotations, runbookAnnotations)
}

// DashboardURL returns the alert's dashboard: the first of
// dashboardAnnotations whose value starts as an absolute http(s) URL, or "".
func DashboardURL(annotations map[string]string) string {
	return firstWebURL(annotations, dashboardAnnotations)
}

func firstWebURL(annotations map[string]string, names []string) string {
	for _, n := range names {
		if v := annotations[n]; WebPrefix(v) {
			return v
		}
	}
	return ""
}

// GeneratorText is the text of an alert's generatorURL link: "Prometheus"
// for Prometheus' graph page (a path with /graph), else "Alert rule" —
// vmalert's and Grafana's rule pages are no Prometheus.
func GeneratorText(href string) string {
	if strings.Contains(href, "/graph") {
		return "Prometheus"
	}
	return "Alert rule"
}

// WebPrefix reports whether href starts like an absolute http(s) URL with a
// host, without parsing it: the cheap test of a link that may be shown
// (WebURL checks one that is).
func WebPrefix(href string) bool {
	for _, scheme := range [...]string{"https://", "http://"} {
		if len(href) > len(scheme) && strings.EqualFold(href[:len(scheme)], scheme) {
			c := href[len(scheme)]
			return c != '/' && c != '?' && c != '#'
		}
	}
	return false
}

// SilenceURL returns the Alertmanager page that creates a silence matching
// the notification's common labels (the first alert's labels when there are
// none in common), or "" without an external URL — or when a label name is
// one Alertmanager's UI filter cannot read (UIFilter): left out, the form
// would silence more than the alerts; kept, the UI drops the whole filter
// and opens an empty form.
func SilenceURL(data *Data) string {
	if !WebURL(data.ExternalURL) {
		return ""
	}
	labels := data.CommonLabels
	if len(labels) == 0 && len(data.Alerts) > 0 {
		labels = data.Alerts[0].Labels
	}
	f, all := UIFilter(labels)
	if f == "" || !all {
		return ""
	}
	return data.ExternalURL + "/#/silences/new?filter=" + UIQueryEscape(f)
}

// UIFilter writes labels as the matchers {name="value",…} of Alertmanager's
// UI filter, sorted by name, and reports whether every label is in it: the
// UI's filter parser (0.28's included) reads only names of letters, digits
// and _, and a name it cannot read (OpenTelemetry's service.name, a space)
// drops the whole filter, so such names are left out. "" when none is left.
func UIFilter(labels template.KV) (filter string, all bool) {
	all = true
	var ms []string
	for _, p := range labels.SortedPairs() {
		if !model.LegacyValidation.IsValidLabelName(p.Name) {
			all = false
			continue
		}
		ms = append(ms, p.Name+"="+QuoteMatcherValue(p.Value))
	}
	if len(ms) == 0 {
		return "", all
	}
	return "{" + strings.Join(ms, ",") + "}", all
}

// UIQueryEscape escapes s for a query parameter of Alertmanager's UI, a
// space as %20: the UI does not read + back as a space, and a filter whose
// matchers or values held one was dropped.
func UIQueryEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// matcherQuote escapes what Alertmanager's matcher parser unescapes in a
// double-quoted value: \\, \" and newlines.
var matcherQuote = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// QuoteMatcherValue writes a label value as a double-quoted matcher value
// of Alertmanager's UI filter and silence form, escaping only what its
// parser unescapes: json.Marshal's \u003c for <, > and & (and its other
// \u escapes) match nothing there, so a silence link of a label "a<b"
// opened a form whose matcher silenced nothing.
func QuoteMatcherValue(v string) string {
	return `"` + matcherQuote.Replace(v) + `"`
}
