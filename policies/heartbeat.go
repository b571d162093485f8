package policies

import (
	"strconv"
	"strings"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// PolicyHeartbeat names the decision of an always-firing alert.
const PolicyHeartbeat = "heartbeat"

// heartbeatExpr returns the expression of an alert whose rule always fires
// — a constant vector (`vector(1)`): a heartbeat, the dead man's switch
// that proves the alerting pipeline works (kube-prometheus' Watchdog, Open
// Data Hub's DeadManSnitch) — or "" for any other alert. Such a rule is
// labelled critical by teams whose Alertmanager forwards it to a heartbeat
// monitor; paged, it would open an incident that never resolves and remind
// every repeat interval.
func heartbeatExpr(a *alert.Alert) string {
	if !strings.Contains(a.GeneratorURL, "vector") {
		return ""
	}
	expr := strings.TrimSpace(alert.GeneratorExpr(a.GeneratorURL))
	inner := expr
	for len(inner) > 1 && inner[0] == '(' && inner[len(inner)-1] == ')' { // (vector(1)), as some rule files write it
		inner = strings.TrimSpace(inner[1 : len(inner)-1])
	}
	inner, ok := strings.CutPrefix(inner, "vector")
	if !ok {
		return ""
	}
	inner = strings.TrimSpace(inner)
	inner, ok = strings.CutPrefix(inner, "(")
	if !ok {
		return ""
	}
	inner, ok = strings.CutSuffix(inner, ")")
	if !ok {
		return ""
	}
	if _, err := strconv.ParseFloat(strings.TrimSpace(inner), 64); err != nil {
		return ""
	}
	return expr
}

// decideHeartbeat decides an always-firing alert none, whatever its
// severity says, naming why and what to do instead.
func (e *Engine) decideHeartbeat(st *decision) (alert.Decision, bool) {
	expr := heartbeatExpr(st.a)
	if expr == "" {
		return alert.Decision{}, false
	}
	return alert.Decision{Action: alert.ActionNone, Policy: PolicyHeartbeat, Tier: "heartbeat", Reasons: []string{
		"the rule always fires (" + expr + "): a heartbeat that proves the alerting pipeline works, not a problem — " +
			"paged, it would open an incident that never resolves; recorded as the router's heartbeat " +
			"(alertrouter_heartbeat_last_received_timestamp_seconds, AlertrouterHeartbeatMissing) and sent nowhere: " +
			"route it in Alertmanager to a heartbeat monitor too (dead man's switch)",
	}}, true
}
