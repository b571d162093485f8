package routing_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// A configured incidents.group_by that groups by service leads the key of
// an alert naming no service with its alertname, as the default does —
// whatever other listed label (cluster) it carries: the README's own
// example list merged a GPU's XID and ECC pages again. A list without
// service is taken as written.
func TestConfiguredGroupByLeadsAServicelessKeyWithTheAlertname(t *testing.T) {
	labels := func(name string) routing.LabelFunc {
		l := map[string]string{"alertname": name, "sector": "llm-inference-gpu", "cluster": "prod-a", "Hostname": "gpu-node-7"}
		return func(k string) string { return l[k] }
	}
	r := &alert.Result{Classification: alert.Classification{Sector: "llm-inference-gpu"}}
	for _, tc := range []struct {
		groupBy []string
		want    [2]string
	}{
		{[]string{"sector", "service", "kpi", "cluster", "namespace"},
			[2]string{"GPUXidError/llm-inference-gpu///prod-a/", "GPUDoubleBitECC/llm-inference-gpu///prod-a/"}},
		{[]string{"sector", "kpi"}, [2]string{"llm-inference-gpu/", "llm-inference-gpu/"}},
	} {
		for i, name := range []string{"GPUXidError", "GPUDoubleBitECC"} {
			if got := routing.IncidentKey(r, tc.groupBy, nil, labels(name)); got != tc.want[i] {
				t.Errorf("group_by %v, %s: key %q, want %q", tc.groupBy, name, got, tc.want[i])
			}
		}
	}
}

// Review R12b: an exporter that is no service still scopes the key with a
// configured group_by (two snmp jobs' SnmpTargetDown were one key there, a
// page lost), and is named by its own Service when it has one (two
// snmp_exporter Services under Prometheus Operator's jobLabel share the job
// snmp-exporter); an Istio destination named by its Service's host name is
// the service its short name names (one outage, two series, two pages).
func TestExportersAndIstioHostNamesKeepTheirIncidents(t *testing.T) {
	r := &alert.Result{Classification: alert.Classification{Sector: "llm-inference-network"}}
	key := func(groupBy, scope []string, kv ...string) string {
		l := map[string]string{"alertname": "SnmpTargetDown", "sector": "llm-inference-network"}
		for i := 0; i < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return routing.IncidentKey(r, groupBy, scope, func(k string) string { return l[k] })
	}
	configured := []string{"sector", "service", "kpi", "cluster", "namespace"}
	if a, b := key(configured, nil, "job", "snmp_if_mib", "cluster", "prod"), key(configured, nil, "job", "snmp_apcups", "cluster", "prod"); a == b {
		t.Errorf("two snmp jobs share the key %q under a configured group_by", a)
	}
	if a, b := key(routing.DefaultGroupBy, routing.DefaultScope, "job", "snmp-exporter", "service", "snmp-exporter-dc1"),
		key(routing.DefaultGroupBy, routing.DefaultScope, "job", "snmp-exporter", "service", "snmp-exporter-dc2"); a == b || !strings.Contains(a, "snmp-exporter-dc1") {
		t.Errorf("two exporter Services of one job: keys %q and %q, want them apart by the Service", a, b)
	}
	// Review R13b: one Service under two teams' jobs; two Services with no
	// job, or under a job naming no exporter.
	for _, pair := range [][2][]string{
		{{"job", "blackbox-team0", "service", "prometheus-blackbox-exporter"}, {"job", "blackbox-team1", "service", "prometheus-blackbox-exporter"}},
		{{"service", "snmp-exporter-dc1"}, {"service", "snmp-exporter-dc2"}},
		{{"job", "network-devices", "service", "snmp-exporter-dc1"}, {"job", "network-devices", "service", "snmp-exporter-dc2"}},
		{{"job", "kubernetes-service-endpoints", "service", "snmp-exporter-dc1"}, {"job", "kubernetes-service-endpoints", "service", "snmp-exporter-dc2"}},
	} {
		for _, groupBy := range [][]string{routing.DefaultGroupBy, configured} {
			scope := routing.DefaultScope
			if len(groupBy) != len(routing.DefaultGroupBy) {
				scope = nil
			}
			if a, b := key(groupBy, scope, pair[0]...), key(groupBy, scope, pair[1]...); a == b {
				t.Errorf("%v and %v share the key %q (group_by %v)", pair[0], pair[1], a, groupBy)
			}
		}
	}
	a := key(routing.DefaultGroupBy, routing.DefaultScope, "alertname", "IstioHigh5xxRate", "destination_canonical_service", "payments", "destination_service_name", "payments")
	b := key(routing.DefaultGroupBy, routing.DefaultScope, "alertname", "IstioHigh5xxRate", "destination_canonical_service", "unknown", "destination_service_name", "payments.shop.svc.cluster.local")
	if a != b || !strings.Contains(a, "/payments/") {
		t.Errorf("one Istio service's two series: keys %q and %q, want one naming payments", a, b)
	}
	// A namespace named svc-prod; external hosts holding a "svc" label.
	a = key(routing.DefaultGroupBy, routing.DefaultScope, "alertname", "IstioHigh5xxRate", "destination_canonical_service", "checkout")
	b = key(routing.DefaultGroupBy, routing.DefaultScope, "alertname", "IstioHigh5xxRate", "destination_canonical_service", "unknown", "destination_service_name", "checkout.svc-prod.svc.cluster.local")
	if a != b {
		t.Errorf("checkout in namespace svc-prod: keys %q and %q, want one", a, b)
	}
	a = key(routing.DefaultGroupBy, routing.DefaultScope, "alertname", "EgressHighErrorRate", "destination_canonical_service", "unknown", "destination_service_name", "orders.eu.svc.partner-api.com")
	b = key(routing.DefaultGroupBy, routing.DefaultScope, "alertname", "EgressHighErrorRate", "destination_canonical_service", "unknown", "destination_service_name", "orders.us.svc.partner-api.com")
	if a == b {
		t.Errorf("two external hosts share the key %q", a)
	}
}
