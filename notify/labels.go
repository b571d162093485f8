package notify

import (
	"slices"
	"strings"
	"unicode"
)

// TellingLabels are the labels that say where an alert fires, the most
// telling first: Slack's alert lines and PagerDuty's details show them
// before the others.
var TellingLabels = []string{"instance", "pod", "k8s.pod.name", "namespace", "k8s.namespace.name", "node", "k8s.node.name", "mountpoint", "device", "container", "cluster", "k8s.cluster.name", "job", "service", "service.name"}

// TellingFirst sorts label names as an alert's details list them when they
// cannot list them all: alertname and severity, TellingLabels in their
// order, then the others by name. By name alone, an alert of 200 labels
// kept alertname and 29 others, and lost its service, pod and namespace
// (an audit).
func TellingFirst(names []string) {
	rank := func(name string) int {
		switch name {
		case "alertname":
			return -2
		case "severity":
			return -1
		}
		if i := slices.Index(TellingLabels, name); i >= 0 {
			return i
		}
		return len(TellingLabels)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
}

// notSubject are the labels that say nothing of what an alert is about:
// its name and severity, the policies' inputs and the classification's
// (README, "Alert labels and annotations"), the scrape job and the
// Prometheus that evaluated it, who owns it, and the scope labels.
var notSubject = map[string]bool{
	"alertname": true, "severity": true, "grafana_slo_severity": true, "severity_level": true, "priority": true,
	"level": true, "urgency": true, "pager": true, "page": true, "sector": true, "kpi": true, "incident_class": true,
	"decision": true, "long": true, "short": true, "slo": true, "slo_period": true, "exhaustion": true,
	"utilization": true, "latency_above_slo": true, "baseline_ratio": true, "value": true, "baseline": true,
	"sensitivity": true, "regression_direction": true, "budget_remaining": true, "job": true, "prometheus": true,
	"prometheus_replica": true, "replica": true, "rule_replica": true, "receiver": true, "team": true, "owner": true,
	"alertgroup": true, "alertstate": true, "endpoint": true, "metrics_path": true, "scheme": true, "monitor": true,
	"env": true, "environment": true, "region": true, "zone": true, "datacenter": true, "dc": true, "site": true,
	"uid": true,
}

// maxSubjectLabels bounds the labels SubjectLabels returns.
const maxSubjectLabels = 3

// SubjectLabels returns the names of at most three labels of l that say
// what its alert is about where no pod, node or instance does — a rule
// aggregating them away (`sum by (consumergroup, topic)`), a network
// device's interface: those not in notSubject (nor "__"-prefixed, nor
// Sloth's, Pyrra's or a burn rate's, nor skip's), with a value of one word,
// TellingFirst's order. An alert whose place was its cluster alone
// ("KafkaConsumerGroupLagHigh on cluster=prod-eu1") lost its consumer group
// and topic, which Alertmanager's default subject shows (an audit).
func SubjectLabels(l map[string]string, skip func(string) bool) []string {
	var names []string
	for name, v := range l {
		if v == "" || notSubject[name] || strings.HasPrefix(name, "__") || strings.HasPrefix(name, "sloth_") ||
			strings.HasPrefix(name, "pyrra_") || strings.HasPrefix(name, "burn_rate") || strings.HasPrefix(name, "slo_") ||
			strings.ContainsFunc(v, unicode.IsSpace) || skip != nil && skip(name) {
			continue
		}
		names = append(names, name)
	}
	TellingFirst(names)
	return names[:min(len(names), maxSubjectLabels)]
}
