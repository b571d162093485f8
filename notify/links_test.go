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
	if got, want := v.Get("filter"), `{alertname="X", team="a<b>&c \"d\" \\e"}`; got != want {
		t.Errorf("filter = %s, want %s", got, want)
	}
}
