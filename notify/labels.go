package notify

import (
	"slices"
	"strings"
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
