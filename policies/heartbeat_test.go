package policies

import (
	"net/url"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// withExpr is a firing alert whose generatorURL carries expr, URL-encoded
// as Prometheus writes it.
func withExpr(labels map[string]string, expr string) *alert.Alert {
	a := firing(labels)
	a.GeneratorURL = "http://prometheus:9090/graph?g0.expr=" + url.QueryEscape(expr) + "&g0.tab=1"
	return a
}

// An always-firing rule is a heartbeat (Open Data Hub's DeadManSnitch,
// `vector(1)` labelled critical so that Alertmanager forwards it to a
// heartbeat monitor): it paged, an incident that never resolves, reminded
// every repeat interval. It is decided none whatever its severity says;
// a rule that only falls back to a constant (`or vector(0)`) is not one.
func TestAnAlwaysFiringHeartbeatIsNotPaged(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct {
		name   string
		labels map[string]string
		expr   string
		want   alert.Action
		policy string
	}{
		{"DeadManSnitch critical", map[string]string{"alertname": "DeadManSnitch", "severity": "critical", "namespace": "redhat-ods-monitoring"}, "vector(1)", alert.ActionNone, PolicyHeartbeat},
		{"Watchdog none", map[string]string{"alertname": "Watchdog", "severity": "none"}, "vector(1)", alert.ActionNone, PolicyHeartbeat},
		{"spaced", map[string]string{"alertname": "Heartbeat", "severity": "page"}, " vector ( 1.0 ) ", alert.ActionNone, PolicyHeartbeat},
		{"parenthesized", map[string]string{"alertname": "DeadMansSwitch", "severity": "critical"}, "(vector(1))", alert.ActionNone, PolicyHeartbeat},
		{"two constants", map[string]string{"alertname": "Odd", "severity": "critical"}, "(vector(1)) + (vector(2))", alert.ActionPage, PolicySeverity},
		{"fallback to a constant", map[string]string{"alertname": "ErrorsHigh", "severity": "critical"}, "sum(rate(errors_total[5m])) > 1 or vector(0) > 0", alert.ActionPage, PolicySeverity},
		{"vector of a series", map[string]string{"alertname": "Up", "severity": "critical"}, "vector(time()) - last_success > 3600", alert.ActionPage, PolicySeverity},
		{"no generator URL", map[string]string{"alertname": "DeadManSnitch", "severity": "critical"}, "", alert.ActionPage, PolicySeverity},
		// The Loki ruler's link is always Grafana Explore's (its ruler's
		// grafanaLinkForExpression), and vmalert's when its
		// -external.alert.source points there (VictoriaMetrics' docs):
		// the expression is the first query's expr of the left JSON, or
		// of a pane in Grafana 10's panes.
		{"Loki ruler", map[string]string{"alertname": "LokiDeadMansSwitch", "severity": "critical"},
			"explore:/explore?" + url.Values{"left": {`{"queries":[{"expr":"vector(1)","queryType":"range","datasource":{"type":"loki","uid":"P8E80F9AEF21F6940"}}]}`}}.Encode(), alert.ActionNone, PolicyHeartbeat},
		{"vmalert to Grafana", map[string]string{"alertname": "DeadMansSwitch", "severity": "critical"},
			"explore:/explore?orgId=1&left=" + url.QueryEscape(`{"datasource":"VictoriaMetrics","queries":[{"expr":"vector(1)","refId":"A"}],"range":{"from":"1700000000000","to":"now"}}`), alert.ActionNone, PolicyHeartbeat},
		{"Grafana 10 panes", map[string]string{"alertname": "Heartbeat", "severity": "critical"},
			"explore:/explore?schemaVersion=1&panes=" + url.QueryEscape(`{"x1y":{"datasource":"loki","queries":[{"refId":"A","expr":"vector(1)"}],"range":{"from":"now-1h","to":"now"}}}`), alert.ActionNone, PolicyHeartbeat},
		// Only a query's own expression counts: not one under the
		// datasource, not one that is no string, not a hidden query's.
		{"Explore, expr under the datasource", map[string]string{"alertname": "Odd", "severity": "critical"},
			"explore:/explore?left=" + url.QueryEscape(`{"datasource":{"uid":"x","expr":"vector(1)"},"queries":[{"refId":"A"}]}`), alert.ActionPage, PolicySeverity},
		{"Explore, expr no string", map[string]string{"alertname": "Odd", "severity": "critical"},
			"explore:/explore?left=" + url.QueryEscape(`{"queries":[{"expr":{"expr":"vector(1)"}}]}`), alert.ActionPage, PolicySeverity},
		{"Explore, a hidden query first", map[string]string{"alertname": "ErrorsHigh", "severity": "critical"},
			"explore:/explore?left=" + url.QueryEscape(`{"queries":[{"expr":"vector(1)","hide":true},{"expr":"sum(rate(errors_total[5m])) > 1"}]}`), alert.ActionPage, PolicySeverity},
		{"Explore, the older array form", map[string]string{"alertname": "Heartbeat", "severity": "critical"},
			"explore:/explore?left=" + url.QueryEscape(`["now-1h","now","Loki",{"expr":"vector(1)"}]`), alert.ActionNone, PolicyHeartbeat},
		{"Loki ruler, a real rule", map[string]string{"alertname": "VLLMCudaOOM", "severity": "critical"},
			"explore:/explore?" + url.Values{"left": {`{"queries":[{"expr":"sum(count_over_time({app=\"vllm\"} |= \"CUDA out of memory\" [5m])) > 0 or vector(0)","queryType":"range"}]}`}}.Encode(), alert.ActionPage, PolicySeverity},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := firing(c.labels)
			if u, ok := strings.CutPrefix(c.expr, "explore:"); ok {
				a.GeneratorURL = "http://grafana:3000" + u
			} else if c.expr != "" {
				a = withExpr(c.labels, c.expr)
			}
			d := e.Decide(a, nil, testNow)
			if d.Action != c.want || d.Policy != c.policy {
				t.Fatalf("decision %s by %s (%v), want %s by %s", d.Action, d.Policy, d.Reasons, c.want, c.policy)
			}
			if c.policy == PolicyHeartbeat && (len(d.Reasons) == 0 || !strings.Contains(d.Reasons[0], "always fires") || !strings.Contains(d.Reasons[0], "heartbeat monitor")) {
				t.Errorf("reasons %q: want why and what to do instead", d.Reasons)
			}
		})
	}
}
