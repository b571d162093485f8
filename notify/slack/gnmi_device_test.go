package slack_test

import (
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// A second switch's alert joins the first one's incident: its thread
// update read "*SwitchQueueDrops* · namespace=trading, job=gnmic,
// interface_name=Ethernet12, queue_name=MD", byte for byte the first
// one's (an audit). A gNMI collector's alert line now names its device
// (notify.GNMIDevice); another alert's source label stays off its line.
func TestAGNMIAlertLineNamesItsDevice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"gnmic's switch alert",
			map[string]string{"alertname": "SwitchQueueDrops", "job": "gnmic", "source": "ny4-leaf-02", "interface_name": "Ethernet12", "namespace": "trading", "queue_name": "MD", "severity": "critical"},
			"*SwitchQueueDrops* · source=ny4-leaf-02, namespace=trading, interface_name=Ethernet12, queue_name=MD · "},
		// Scraped with the collector's own instance, pod and namespace, the
		// line names the device and its interface, not the collector (a
		// review).
		{"gnmic's alert with its own instance and pod",
			map[string]string{"alertname": "SwitchQueueDrops", "job": "gnmic", "instance": "10.0.0.5:7890", "pod": "gnmic-0", "namespace": "monitoring", "source": "ny4-leaf-02", "interface_name": "Ethernet12", "severity": "critical"},
			"*SwitchQueueDrops* · source=ny4-leaf-02, interface_name=Ethernet12 · "},
		{"a log alert's source is no device",
			map[string]string{"alertname": "HighErrorLogRate", "job": "promtail", "namespace": "shop", "source": "syslog", "consumergroup": "billing", "severity": "critical"},
			"*HighErrorLogRate* · namespace=shop, job=promtail, consumergroup=billing · "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := notifytest.Result(tc.labels["alertname"], "fp1", "firing", alert.ActionPage)
			r.Alert.Labels = template.KV(tc.labels)
			no := notifytest.Notification("triage", alert.KindFiring, alert.ActionPage, r)
			no.Opening = true
			var card []string
			for _, b := range slack.Blocks(no, notify.NewData(no), "title", "", "") {
				if s, ok := b.(*sl.SectionBlock); ok && strings.HasPrefix(s.BlockID, "alert-") {
					card = append(card, s.Text.Text)
				}
			}
			update, _ := slack.UpdateBlocks(no)
			digest := strings.Split(update[0].(*sl.SectionBlock).Text.Text, "\n")[1:]
			for what, lines := range map[string][]string{"card": card, "thread update": digest} {
				if len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
					t.Errorf("%s lines = %q, want one saying %q", what, lines, tc.want)
				}
			}
		})
	}
}
