package notify_test

import (
	"testing"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// gnmic and telegraf's gnmi input name the network device in the label
// source: the summary said "SwitchQueueDrops on namespace=trading
// interface_name=Ethernet12 queue_name=MD", and a second switch's page
// read as the first one's (an audit). A gNMI collector's alert now names
// its device first; the collector's pod, instance and service are no
// place. Other alerts' source (Loki's, promtail's) is no device and stays
// out.
func TestAGNMIAlertNamesItsDevice(t *testing.T) {
	tests := []struct {
		name string
		data *notify.Data
		want string
	}{
		{"a switch's queue drops name the switch",
			alerts("SwitchQueueDrops", alert.Unknown, 1, map[string]string{"job": "gnmic", "source": "ny4-leaf-02", "interface_name": "Ethernet12", "namespace": "trading", "queue_name": "MD", "severity": "critical"}, "Egress queue drops on market-data port"),
			"SwitchQueueDrops on namespace=trading source=ny4-leaf-02 interface_name=Ethernet12 queue_name=MD: Egress queue drops on market-data port"},
		{"an optical channel names the ROADM",
			alerts("OpticalChannelOutputPowerLow", alert.Unknown, 1, map[string]string{"job": "gnmic-optical", "source": "dwdm-nyc-01", "region": "us-east", "site": "nyc-60hudson", "component_name": "OCH-1/1/1"}, "s"),
			"OpticalChannelOutputPowerLow on source=dwdm-nyc-01 component_name=OCH-1/1/1: s"},
		{"gnmic scraped in Kubernetes names the device, not its pod",
			alerts("InterfaceDown", alert.Unknown, 1, map[string]string{"cluster": "dc1", "namespace": "monitoring", "pod": "gnmic-0", "container": "gnmic", "service": "gnmic", "endpoint": "metrics", "job": "gnmic", "instance": "10.2.0.9:9804", "source": "leaf-01", "interface_name": "Ethernet3"}, "s"),
			"InterfaceDown on cluster=dc1 source=leaf-01 interface_name=Ethernet3: s"},
		{"telegraf's gnmi input names the device, not its instance",
			alerts("InterfaceErrors", alert.Unknown, 1, map[string]string{"job": "telegraf-gnmi", "instance": "telegraf:9273", "source": "spine-02", "name": "Ethernet1"}, "s"),
			"InterfaceErrors on source=spine-02 name=Ethernet1: s"},
		{"two devices' alerts name none",
			alerts("SwitchQueueDrops", alert.Unknown, 2, map[string]string{"job": "gnmic", "source": "leaf-0%d", "interface_name": "Ethernet12"}, "s"),
			"[FIRING:2] SwitchQueueDrops on interface_name=Ethernet12: s"},
		// Unchanged: the collector's own alert has no device.
		{"the collector's own alert names its pod",
			alerts("GnmicDown", alert.Unknown, 1, map[string]string{"namespace": "monitoring", "pod": "gnmic-0", "job": "gnmic", "instance": "10.2.0.9:9804"}, "s"),
			"GnmicDown on namespace=monitoring pod=gnmic-0: s"},
		// Unchanged: source is no device outside gNMI collectors.
		{"a log alert's source is left out",
			alerts("HighErrorLogRate", alert.Unknown, 1, map[string]string{"namespace": "shop", "job": "shop/checkout", "source": "stderr", "consumergroup": "billing"}, "s"),
			"HighErrorLogRate on namespace=shop consumergroup=billing: s"},
		{"a log alert's source is no object",
			alerts("HighErrorLogRate", alert.Unknown, 1, map[string]string{"namespace": "shop", "job": "promtail", "instance": "10.2.0.3:3101", "source": "syslog"}, "s"),
			"HighErrorLogRate on namespace=shop instance=10.2.0.3:3101: s"},
	}
	tm := notify.BuiltinTemplates()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tm.Render(nil, "summary", "", notify.DefaultSummary, tt.data); got != tt.want {
				t.Errorf("summary\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	if got := notify.GNMIDevice(map[string]string{"job": "promtail", "source": "syslog"}); got != "" {
		t.Errorf("GNMIDevice of a promtail alert = %q, want none", got)
	}
}
