package slack

import (
	"fmt"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// amText is an Alertmanager-style text: Slack links and a mention of its
// own, and alert values.
const amText = `*<{{ (index .Alerts 0).GeneratorURL }}|Graph>* <!here> {{ range .Alerts }}*{{ .Labels.alertname }}* {{ .Annotations.summary }} <{{ .Annotations.runbook_url }}|Runbook>
{{ end }}`

// BenchmarkRender draws the parent message of a notification of n alerts:
// with the built-in title and text, and with an operator's Alertmanager
// templates over clean alert values and over values Slack's escaping
// changes (a "<" in each alert's summary).
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{1, 100} {
		for _, c := range []struct {
			name        string
			title, text string
			dirty       bool
		}{
			{name: "builtin"},
			{name: "operator", title: `[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}`, text: amText},
			{name: "operator-escaped", title: `[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}`, text: amText, dirty: true},
		} {
			b.Run(fmt.Sprintf("%s/alerts=%d", c.name, n), func(b *testing.B) {
				cfg := DefaultConfig()
				cfg.Token, cfg.Channel, cfg.APIURL = "xoxb-bench", "#triage", "http://127.0.0.1:1/api/"
				cfg.Title, cfg.Text = c.title, c.text
				nf, err := New(&cfg, "triage", notify.Deps{})
				if err != nil {
					b.Fatal(err)
				}
				var rs []*alert.Result
				for i := range n {
					r := notifytest.Result("TTFTHigh", fmt.Sprint("fp", i), "firing", alert.ActionTicket)
					if c.dirty {
						r.Alert.Annotations["summary"] = "TTFT p99 > 2.4s <queue & compute>"
					}
					rs = append(rs, r)
				}
				no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, rs...)
				no.Opening = true
				b.ReportAllocs()
				for b.Loop() {
					nf.render(no)
				}
			})
		}
	}
}
