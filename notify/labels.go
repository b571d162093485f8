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

// TellingRank is name's place among TellingLabels, len(TellingLabels)
// for any other label: sorting by it puts the labels that say where an
// alert fires first.
func TellingRank(name string) int {
	if i := slices.Index(TellingLabels, name); i >= 0 {
		return i
	}
	return len(TellingLabels)
}

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
		return TellingRank(name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
}

// subjectNames are the labels that name what an alert is about, in the
// order SubjectLabels prefers them: a service or component, a workload, a
// pipeline's consumer group and topic, a store's database and table, a
// model, a device and its interface or port, a GPU, a pipeline, a
// training run, a serving pool, an exchange venue, a route, an ingress, a
// proxy, a point of presence, a switch and its fabric, a host, a name
// (a value "default" names nothing). Any other
// label is as likely to repeat the alertname (`phase=Failed`,
// `condition=true`), to route it (`routing_key`, `slack_channel`) or to be
// noise (`le`, `code`, `version`, a replica's name, a UUID): an audit of a
// first build that took every label but a few found those before the
// labels that named the object.
var subjectNames = []string{
	"service_name", "service.name", "service", "component", "deployment", "statefulset", "daemonset", "cronjob",
	"job_name", "persistentvolumeclaim", "consumergroup", "consumer_group", "topic", "queue", "database", "datname",
	"db", "table", "bucket", "model_name", "model", "model_id", "device", "interface", "ifName", "ifDescr", "port",
	"span", "link", "circuit", "gpu", "pipeline", "run", "pool", "venue", "route", "ingress", "proxy", "pop", "switch",
	"fabric", "mountpoint", "container", "host", "hostname", "target", "name",
}

// gnmiCollector reports whether labels l are those of a gNMI collector's
// target (gnmic, telegraf's gnmi input): its job, pod or application
// names gnmi. Such a collector reports on network devices, each named by
// the label source, not on itself.
func gnmiCollector(l map[string]string) bool {
	for _, name := range []string{"job", "pod", "k8s.pod.name", "app", "app_kubernetes_io_name", "app.kubernetes.io/name"} {
		if strings.Contains(strings.ToLower(l[name]), "gnmi") {
			return true
		}
	}
	return false
}

// GNMIDevice returns the network device a gNMI collector's alert is about
// — its label source (gnmic's and telegraf's gnmi input's name for the
// device: source="leaf-01") — or "" for any other alert: source is a
// generic name elsewhere (Loki's, promtail's), not a device.
func GNMIDevice(l map[string]string) string {
	if !gnmiCollector(l) {
		return ""
	}
	return l["source"]
}

// MaxPageSource is the most of a page source PagerDuty is sent, in runes.
const MaxPageSource = 255

// PageSource is PagerDuty's source of a page about an alert of labels l:
// a gNMI collector's device before the instance and job, which are the
// collector's ("gnmic" named no switch: an audit); "" when l names none.
func PageSource(l map[string]string) string {
	if d := GNMIDevice(l); d != "" {
		return d
	}
	if i := l["instance"]; i != "" {
		return i
	}
	return l["job"]
}

// GNMICollectorLabel reports whether label name of a gNMI collector's alert
// (GNMIDevice not "") is the collector's own rather than its device's: its
// instance, pod, job and Service's labels, and its pod's namespace — what
// Location leaves out for such an alert, and Slack's alert lines too (a
// review: a line named namespace=monitoring job=gnmic, and lost the
// interface).
func GNMICollectorLabel(l map[string]string, name string) bool {
	switch name {
	case "instance", "pod", "k8s.pod.name", "job":
		return true
	case "namespace", "k8s.namespace.name":
		return strings.Contains(strings.ToLower(l["pod"]+l["k8s.pod.name"]), "gnmi")
	}
	return slices.Contains(exporterLabels, name)
}

// maxSubjectLabels bounds the labels SubjectLabels returns.
const maxSubjectLabels = 3

// SubjectLabels returns the names of at most three labels of l that name
// what its alert is about where no pod, node or instance does — a rule
// aggregating them away (`sum by (consumergroup, topic)`), a network
// device's interface: those of subjectNames it carries, in that order,
// then those named "…_name" or "….name" (OpenTelemetry's
// k8s.deployment.name, ceph's or envoy's …_name; not otel_scope_name nor
// Grafana's), by name; a value of one word, none of skip's. An alert
// whose place was its cluster alone ("KafkaConsumerGroupLagHigh on
// cluster=prod-eu1") lost its consumer group and topic, which
// Alertmanager's default subject shows (an audit). A gNMI collector's
// alert names its device first (GNMIDevice: source): a second switch's
// page read as the first one's (an audit).
func SubjectLabels(l map[string]string, skip func(string) bool) []string {
	ok := func(name string) bool {
		v := l[name]
		return v != "" && v != "default" && !strings.ContainsFunc(v, unicode.IsSpace) && (skip == nil || !skip(name))
	}
	var names []string
	if GNMIDevice(l) != "" && ok("source") {
		names = append(names, "source")
	}
	for _, name := range subjectNames {
		if len(names) < maxSubjectLabels && ok(name) {
			names = append(names, name)
		}
	}
	if len(names) == maxSubjectLabels {
		return names
	}
	var named []string
	for name := range l {
		if (strings.HasSuffix(name, "_name") || strings.HasSuffix(name, ".name")) && !slices.Contains(subjectNames, name) &&
			!strings.HasPrefix(name, "otel_") && !strings.HasPrefix(name, "grafana_") && !strings.HasPrefix(name, "__") && ok(name) {
			named = append(named, name)
		}
	}
	slices.Sort(named)
	return append(names, named[:min(len(named), maxSubjectLabels-len(names))]...)
}
