package notify_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/notify"
)

// The silence link prefills Alertmanager's silence form with the common
// labels as its matcher parser reads them: a value holding <, > or & is
// written as it is (json.Marshal's \u003c matched nothing, so the form's
// silence silenced nothing), quotes, backslashes and newlines escaped.
func TestTheSilenceLinkQuotesValuesAsAlertmanagerReadsThem(t *testing.T) {
	d := &notify.Data{Data: &template.Data{ExternalURL: "http://am.example", CommonLabels: template.KV{"team": `a<b>&c "d" \e`, "alertname": "X"}}}
	u := notify.SilenceURL(d)
	_, q, _ := strings.Cut(u, "?")
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.Get("filter"), `{alertname="X",team="a<b>&c \"d\" \\e"}`; got != want {
		t.Errorf("filter = %s, want %s", got, want)
	}
	if strings.Contains(u, "+") {
		t.Errorf("silence link %s writes a space as +, which Alertmanager's UI does not read back (it drops the filter)", u)
	}
}

// Alertmanager's UI reads only classic label names in its filter; one it
// cannot read (OpenTelemetry's service.name) drops the whole filter — an
// empty silence form, or the alerts of every group. The silence link is
// then left out (without the label, the form would silence more than the
// alerts); the alerts list's filter leaves the label out (a wider list).
func TestUILinksLeaveOutWhatAlertmanagersUICannotRead(t *testing.T) {
	otel := template.KV{"alertname": "HighErrorRate", "service.name": "checkout", "severity": "critical"}
	if u := notify.SilenceURL(&notify.Data{Data: &template.Data{ExternalURL: "http://am.example", CommonLabels: otel}}); u != "" {
		t.Errorf("silence link %s for labels the UI cannot read, want none", u)
	}
	if f, all := notify.UIFilter(otel); f != `{alertname="HighErrorRate",severity="critical"}` || all {
		t.Errorf("UIFilter = %s, %v; want the classic names only, not all", f, all)
	}
	if f, all := notify.UIFilter(template.KV{"k8s.pod.name": "p"}); f != "" || all {
		t.Errorf("UIFilter of an OpenTelemetry name alone = %q, %v; want none", f, all)
	}
}

// ScriptLink reads a scheme as a browser does: a "javascript:" value url.Parse
// refuses ("…#%zz") or with a tab inside the scheme still runs (a review).
func TestScriptLinkReadsTheSchemeAsABrowserDoes(t *testing.T) {
	for v, want := range map[string]bool{
		"javascript:alert(1)":       true,
		"javascript:alert(1)#%zz":   true,
		"java\tscript:alert(1)":     true,
		" \n JavaScript:fetch(x)":   true,
		"VBScript:msgbox":           true,
		"data:text/html,<script>":   true,
		"https://runbooks.example":  false,
		"datacenter: eu-west-1":     false,
		"see javascript: the docs":  false,
		"":                          false,
		"javascriptjavascript:x":    false,
		"Data: 3 of 5 shards ready": true, // scheme-like: operator templates keep it as text (notify/slack linkValue)
	} {
		if got := notify.ScriptLink(v); got != want {
			t.Errorf("ScriptLink(%q) = %v, want %v", v, got, want)
		}
	}
}
