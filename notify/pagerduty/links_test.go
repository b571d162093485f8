package pagerduty

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// storm is a page of n NodeFilesystemAlmostOutOfSpace alerts, one per
// instance, sharing a runbook and a rule (generator URL), each with its own
// Grafana dashboard (var-instance=…, the common pattern), with an external
// URL and a console.
func storm(n int) (*alert.Notification, *notify.Data) {
	no := &alert.Notification{Incident: "node/fs", Action: alert.ActionPage, ConsoleURL: "https://alertrouter.example.com/incidents/node%2Ffs"}
	for i := range n {
		a := &alert.Alert{Alert: template.Alert{Status: "firing",
			Labels: template.KV{"alertname": "NodeFilesystemAlmostOutOfSpace", "severity": "critical",
				"instance": fmt.Sprintf("10.0.4.%d:9100", i), "mountpoint": "/"},
			Annotations: template.KV{"runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/node/nodefilesystemalmostoutofspace",
				"dashboard_url": fmt.Sprintf("https://grafana.example.com/d/rYdddlPWk/node-exporter-full?orgId=1&var-instance=10.0.4.%d:9100", i)},
			GeneratorURL: "http://prometheus.example.com/graph?g0.expr=node_filesystem_avail_bytes"}}
		no.Results = append(no.Results, &alert.Result{Alert: a, Decision: alert.Decision{Action: alert.ActionPage}})
	}
	data := notify.NewData(no)
	data.ExternalURL = "http://alertmanager.example.com"
	data.CommonLabels = template.KV{"alertname": "NodeFilesystemAlmostOutOfSpace", "severity": "critical", "mountpoint": "/"}
	return no, data
}

func linksOf(no *alert.Notification, data *notify.Data) []notify.Link {
	var out []notify.Link
	for _, l := range links(no, data, AlertsURL(no, data)) {
		out = append(out, l.(notify.Link))
	}
	return out
}

// A page whose alerts each carry their own dashboard keeps the incident's
// links — Silence, Alertmanager, the console — within maxLinks; before,
// twelve per-instance dashboards took every place: Runbook, then nine
// links all labelled "Dashboard", and no Silence. The dashboards kept are
// told apart by their instance, and the last says how many were left out.
func TestAStormKeepsTheIncidentsLinks(t *testing.T) {
	no, data := storm(12)
	got := linksOf(no, data)
	if len(got) > maxLinks {
		t.Fatalf("%d links, more than %d: %v", len(got), maxLinks, got)
	}
	texts := map[string]int{}
	hrefs := map[string]bool{}
	dashboards := 0
	for _, l := range got {
		texts[l.Text]++
		if hrefs[l.Href] {
			t.Errorf("link %s twice", l.Href)
		}
		hrefs[l.Href] = true
		if strings.HasPrefix(l.Text, "Dashboard") {
			dashboards++
		}
	}
	for _, want := range []string{"Silence", "Alertmanager", "alertrouter console", "Runbook", "Prometheus"} {
		if texts[want] != 1 {
			t.Errorf("links %v: %q %d times, want once", got, want, texts[want])
		}
	}
	for text, n := range texts {
		if n > 1 {
			t.Errorf("%d links read %q: on-call cannot tell them apart", n, text)
		}
	}
	if dashboards != maxLinks-5 {
		t.Errorf("%d dashboards, want the %d places left", dashboards, maxLinks-5)
	}
	var all []string
	for _, l := range got {
		all = append(all, l.Text)
	}
	if !strings.Contains(strings.Join(all, "\n"), "Dashboard (10.0.4.0:9100)\nDashboard (10.0.4.1:9100)") {
		t.Errorf("the dashboards are not labelled by instance: %v", got)
	}
	// The runbook, the dashboards, the graph, then the incident's links.
	if got[len(got)-4].Text != "Prometheus" {
		t.Fatalf("links in order %v, want the runbooks, dashboards, graphs, then the incident's", got)
	}
	if want := fmt.Sprintf("Dashboard (10.0.4.4:9100) · %d more not linked", 12-dashboards); got[len(got)-5].Text != want {
		t.Errorf("last dashboard reads %q, want %q", got[len(got)-5].Text, want)
	}
}

// One alert's links are as before: one of each kind, plainly labelled,
// then the incident's.
func TestOneAlertsLinks(t *testing.T) {
	no, data := storm(1)
	var texts []string
	for _, l := range linksOf(no, data) {
		texts = append(texts, l.Text)
	}
	if got, want := strings.Join(texts, ", "), "Runbook, Dashboard, Prometheus, alertrouter console, Alertmanager, Silence"; got != want {
		t.Fatalf("links %s, want %s", got, want)
	}
}

// Links of one kind are labelled with what differs between their alerts:
// the alert name first (a runbook per rule), the instance, another label,
// several labels, or the position when the labels are the same.
func TestTellApart(t *testing.T) {
	al := func(kv ...string) *template.Alert {
		a := &template.Alert{Labels: template.KV{}}
		for i := 0; i < len(kv); i += 2 {
			a.Labels[kv[i]] = kv[i+1]
		}
		return a
	}
	for _, tc := range []struct {
		name   string
		alerts []*template.Alert
		want   string
	}{
		{"alertname first", []*template.Alert{al("alertname", "A", "instance", "h1"), al("alertname", "B", "instance", "h2")}, "A|B"},
		{"instance", []*template.Alert{al("alertname", "A", "instance", "h1", "pod", "p1"), al("alertname", "A", "instance", "h2", "pod", "p2")}, "h1|h2"},
		{"the one label that tells all apart", []*template.Alert{al("instance", "h1", "device", "sda"), al("instance", "h1", "device", "sdb"), al("instance", "h2", "device", "sdc")}, "sda|sdb|sdc"},
		{"several labels", []*template.Alert{al("instance", "h1", "device", "sda"), al("instance", "h1", "device", "sdb"), al("instance", "h2", "device", "sda")}, "h1, sda|h1, sdb|h2, sda"},
		{"same labels", []*template.Alert{al("alertname", "A"), al("alertname", "A")}, "#1|#2"},
		{"long value", []*template.Alert{al("model", strings.Repeat("m", 200)), al("model", "x")}, strings.Repeat("m", maxLinkLabel-1) + "…|x"},
		// Distinct as shown: values alike in their first maxLinkLabel runes
		// are not told apart by them; then the position tells them apart.
		{"long values alike when cut", []*template.Alert{al("pod", strings.Repeat("p", 70)+"-abcde"), al("pod", strings.Repeat("p", 70)+"-fghij")},
			strings.Repeat("p", maxLinkLabel-1) + "… #1|" + strings.Repeat("p", maxLinkLabel-1) + "… #2"},
		{"same value, other label", []*template.Alert{al("alertname", "A", "instance", "h1"), al("alertname", "A", "pod", "h1"), al("alertname", "A", "instance", "h1", "pod", "h1")}, "h1 #1|h1 #2|h1, h1"},
	} {
		if got := strings.Join(tellApart(tc.alerts), "|"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A storm's links cost about what a few alerts' do: only the links that can
// be kept are parsed and labelled, the rest counted. Before, every alert's
// dashboard was parsed and labelled: 1,078 allocations for 1,000 alerts.
func TestAStormsLinksCostLittle(t *testing.T) {
	no, data := storm(1000)
	alerts := AlertsURL(no, data)
	if n := testing.AllocsPerRun(5, func() { links(no, data, alerts) }); n > 150 {
		t.Errorf("%v allocations for the links of 1,000 alerts", n)
	}
	got := linksOf(no, data)
	if want := "Dashboard (10.0.4.4:9100) · 995 more not linked"; got[len(got)-5].Text != want {
		t.Errorf("last dashboard reads %q, want %q", got[len(got)-5].Text, want)
	}
}

// BenchmarkLinks collects the links of a page of n alerts, each with its
// own dashboard (a storm: one link kind with n owners) or all sharing one.
func BenchmarkLinks(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		for _, perAlert := range []bool{true, false} {
			b.Run(fmt.Sprintf("alerts=%d/perAlertDashboard=%v", n, perAlert), func(b *testing.B) {
				no, data := storm(n)
				if !perAlert {
					for _, r := range no.Results {
						r.Alert.Annotations["dashboard_url"] = "https://grafana.example.com/d/rYdddlPWk/node-exporter-full"
					}
				}
				alerts := AlertsURL(no, data)
				b.ReportAllocs()
				for b.Loop() {
					links(no, data, alerts)
				}
			})
		}
	}
}

// Rule files write their runbook and dashboard under other names —
// runbook, runbook_link, playbook_url; dashboard, grafana_url — which no
// link was made of. The first absolute http(s) one of each kind is linked;
// a relative runbook (GitLab's docs/… paths) is not a link.
func TestRunbookAndDashboardUnderOtherNames(t *testing.T) {
	for _, tc := range []struct {
		ann  template.KV
		want string
	}{
		{template.KV{"runbook": "https://wiki.example.com/x", "grafana_url": "https://grafana.example.com/d/x"}, "Runbook, Dashboard, Prometheus"},
		{template.KV{"playbook_url": "https://wiki.example.com/p", "dashboard": "https://grafana.example.com/d/y"}, "Runbook, Dashboard, Prometheus"},
		{template.KV{"runbook": "docs/pgbouncer/README.md", "runbook_link": "https://wiki.example.com/r"}, "Runbook, Prometheus"},
		{template.KV{"runbook": "docs/pgbouncer/README.md"}, "Prometheus"},
	} {
		no, data := storm(1)
		no.Results[0].Alert.Annotations = tc.ann
		var texts []string
		for _, l := range linksOf(no, data) {
			if l.Text != "alertrouter console" && l.Text != "Alertmanager" && l.Text != "Silence" {
				texts = append(texts, l.Text)
			}
		}
		if got := strings.Join(texts, ", "); got != tc.want {
			t.Errorf("annotations %v: links %s, want %s", tc.ann, got, tc.want)
		}
	}
}

// vmalert's and Grafana's generatorURLs are their rule pages, not
// Prometheus': the link said "Prometheus".
func TestAGeneratorLinkIsNamedForWhatItOpens(t *testing.T) {
	for href, want := range map[string]string{
		"http://prometheus.example.com/graph?g0.expr=up":                      "Prometheus",
		"http://vmalert.example.com/vmalert/alert?group_id=1&alert_id=2":      "Alert rule",
		"https://grafana.example.com/alerting/grafana/1afz29v7z/view?orgId=1": "Alert rule",
	} {
		no, data := storm(1)
		no.Results[0].Alert.GeneratorURL = href
		var got string
		for _, l := range linksOf(no, data) {
			if l.Href == href {
				got = l.Text
			}
		}
		if got != want {
			t.Errorf("%s: link %q, want %q", href, got, want)
		}
	}
}
