package routing_test

import (
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
