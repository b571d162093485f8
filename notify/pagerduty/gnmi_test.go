package pagerduty_test

import (
	"context"
	"testing"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// gnmic names the network device in the label source: the page said
// "SwitchQueueDrops on namespace=trading interface_name=Ethernet12
// queue_name=MD" from source "gnmic", and did not say which switch (an
// audit). A gNMI collector's page now names the device in its summary and
// as its source, before the collector's instance and job; another alert's
// source label (a log pipeline's) changes neither.
func TestAGNMIPageNamesItsDevice(t *testing.T) {
	for _, tc := range []struct {
		name            string
		labels          map[string]string
		summary, source string
	}{
		{"gnmic's switch alert",
			map[string]string{"alertname": "SwitchQueueDrops", "job": "gnmic", "source": "ny4-leaf-01", "interface_name": "Ethernet12", "namespace": "trading", "queue_name": "MD", "severity": "critical"},
			"SwitchQueueDrops on namespace=trading source=ny4-leaf-01 interface_name=Ethernet12 queue_name=MD: Egress queue drops on market-data port", "ny4-leaf-01"},
		{"gnmic scraped with its own instance",
			map[string]string{"alertname": "OpticalChannelOutputPowerLow", "job": "gnmic-optical", "instance": "10.2.0.9:9804", "source": "dwdm-nyc-01", "component_name": "OCH-1/1/1", "severity": "critical"},
			"OpticalChannelOutputPowerLow on source=dwdm-nyc-01 component_name=OCH-1/1/1: Egress queue drops on market-data port", "dwdm-nyc-01"},
		{"a log alert's source is no device",
			map[string]string{"alertname": "HighErrorLogRate", "job": "promtail", "instance": "10.2.0.3:3101", "namespace": "shop", "source": "syslog", "severity": "critical"},
			"HighErrorLogRate on namespace=shop instance=10.2.0.3:3101: Egress queue drops on market-data port", "10.2.0.3:3101"},
		{"a log alert without an instance keeps its job",
			map[string]string{"alertname": "HighErrorLogRate", "job": "promtail", "namespace": "shop", "source": "syslog", "severity": "critical"},
			"HighErrorLogRate on namespace=shop: Egress queue drops on market-data port", "promtail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			r := notifytest.Result(tc.labels["alertname"], "fp1", "firing", alert.ActionPage)
			r.Alert.Labels = template.KV(tc.labels)
			r.Alert.Annotations = template.KV{"summary": "Egress queue drops on market-data port"}
			r.Classification.Sector, r.Classification.KPIs = alert.Unknown, nil
			no := notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage, r)
			no.Opening = true
			alert.SetCommon(no.Data)
			if err := h.n.Notify(context.Background(), no); err != nil {
				t.Fatal(err)
			}
			evs := h.srv.Events()
			if len(evs) != 1 {
				t.Fatalf("events = %d, want 1", len(evs))
			}
			if got := evs[0].Payload.Summary; got != tc.summary {
				t.Errorf("summary\n got %q\nwant %q", got, tc.summary)
			}
			if got := evs[0].Payload.Source; got != tc.source {
				t.Errorf("source = %q, want %q", got, tc.source)
			}
		})
	}
}
