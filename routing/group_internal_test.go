package routing

import (
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"
)

// Coalesced updates of one incident go out as one message: its group is
// every alert of their webhooks' groups once — the latest webhook's copy of
// each —, firing when one fires, with the group labels they share.
func TestMergedGroupOfCoalescedUpdates(t *testing.T) {
	a := func(fp, status, pod string) template.Alert {
		return template.Alert{Fingerprint: fp, Status: status, Labels: template.KV{"alertname": "X", "pod": pod}}
	}
	g1 := &template.Data{Receiver: "slack", Alerts: template.Alerts{a("0", "firing", "api-0"), a("1", "firing", "api-1")}, GroupLabels: template.KV{"alertname": "X", "zone": "a"}}
	g2 := &template.Data{Receiver: "slack", Alerts: template.Alerts{a("1", "resolved", "api-1"), a("2", "resolved", "api-2")}, GroupLabels: template.KV{"alertname": "X"}}
	g := mergedGroup([]*batch{{group: g1}, {group: g2}})
	var got []string
	for _, x := range g.Alerts {
		got = append(got, x.Labels["pod"]+" "+x.Status)
	}
	if want := "api-0 firing,api-1 resolved,api-2 resolved"; strings.Join(got, ",") != want {
		t.Errorf("alerts %s, want %s", strings.Join(got, ","), want)
	}
	if g.Status != "firing" || g.CommonLabels["alertname"] != "X" || g.CommonLabels["pod"] != "" || len(g.GroupLabels) != 1 || g.GroupLabels["alertname"] != "X" {
		t.Errorf("status %q, common labels %v, group labels %v", g.Status, g.CommonLabels, g.GroupLabels)
	}
	if g1.Alerts[1].Status != "firing" {
		t.Error("the first batch's group was changed")
	}
	if mergedGroup([]*batch{{}, {}}) != nil {
		t.Error("a group for an integration that reads none")
	}
}
