package notify

import (
	"net/url"
	"strings"
)

// WebURL reports whether s is an absolute http(s) URL: the only links the
// notifiers put in front of people. Alert annotations, generator URLs and
// the webhook's externalURL come from whoever can write rules or reach the
// webhook; a javascript:, data: or vbscript: link made clickable in Slack or
// PagerDuty would run there.
func WebURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) && u.Host != ""
}

// SilenceURL returns the Alertmanager page that creates a silence matching
// the notification's common labels (the first alert's labels when there are
// none in common), or "" without an external URL.
func SilenceURL(data *Data) string {
	if !WebURL(data.ExternalURL) {
		return ""
	}
	labels := data.CommonLabels
	if len(labels) == 0 && len(data.Alerts) > 0 {
		labels = data.Alerts[0].Labels
	}
	if len(labels) == 0 {
		return ""
	}
	pairs := labels.SortedPairs()
	ms := make([]string, 0, len(pairs))
	for _, p := range pairs {
		ms = append(ms, p.Name+"="+QuoteMatcherValue(p.Value))
	}
	return data.ExternalURL + "/#/silences/new?filter=" + url.QueryEscape("{"+strings.Join(ms, ", ")+"}")
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
