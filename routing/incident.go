package routing

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// DefaultGroupBy are the labels whose values form an incident when the alert
// has no SLO identity: alerts of one sector, service and KPI are one problem.
// "service" falls back to serviceOf when the alert has no service label.
var DefaultGroupBy = []string{"sector", "service", "kpi"}

// serviceOf is the value "service" reads, and the exporter that scopes the
// key of an alert naming no service (collectorJob): the alert's service
// label, unless it names an exporter; else serviceFallback. A service label
// naming an exporter scopes the key beside the exporter found.
func serviceOf(get LabelFunc) (service, exporter string) {
	label := get("service")
	if label != "" && !collectorJob(label, get) {
		return label, ""
	}
	// An alert on the scrape itself (KPI UP: TargetDown, an exporter's
	// up == 0) is about the exporter: its job names what is down, and
	// node-exporter's and dcgm-exporter's TargetDown stay apart.
	scrape := get("kpi") == "UP"
	if label != "" && scrape {
		return label, ""
	}
	service, exporter = serviceFallback(get, scrape)
	if label != "" {
		// An exporter's own Service scopes the key too, beside the job
		// when they differ: two Services under Prometheus Operator's
		// jobLabel (job="snmp-exporter"), one Service under two teams'
		// jobs, a Service and a job naming no exporter — each a page of
		// its own.
		service = ""
		if exporter == "" {
			exporter = label
		} else if exporter != label {
			exporter += "," + label
		}
	}
	return service, exporter
}

// serviceFallback names the service of an alert whose service label is
// none or an exporter's: OpenTelemetry's service.name (Prometheus 3's
// UTF-8 label names: rules written `sum by ("service.name")` carry neither service nor job)
// or service_name (the same attribute through Prometheus 2's OTLP name
// translation); else the job — but for a job that scrapes every annotated
// pod or endpoint (Prometheus' example kubernetes-pods and
// kubernetes-service-endpoints jobs, the community chart's -slow twins,
// Wikimedia's k8s-pods), or no job, the application the pod's labels name
// (app.kubernetes.io/name, copied by the usual `labelmap:
// __meta_kubernetes_pod_label_(.+)` as app_kubernetes_io_name, and app):
// grouped by such a job, two services' pages folded into one incident, the
// second an update PagerDuty is sent nothing for. Only there: elsewhere a
// job names its service, and the app of its pods (checkout and
// checkout-canary, a chart's name shared by two releases) would split it or
// merge two. Without a job or an application, GitLab's `type` (beside
// its `tier`). scrape: the alert is on the scrape itself, whose exporter
// is the service.
func serviceFallback(get LabelFunc, scrape bool) (service, exporter string) {
	for _, f := range [...]string{"service.name", "service_name"} {
		if v := get(f); v != "" {
			return v, ""
		}
	}
	// Istio's destination, but its placeholders: "unknown" for every
	// destination it cannot tell (egress, passthrough), named in each
	// such alert alike.
	for _, f := range [...]string{"destination_canonical_service", "destination_service_name", "destination_workload"} {
		if v := get(f); v != "" && !istioPlaceholder(v) {
			return kubernetesServiceName(v), ""
		}
	}
	job := get("job")
	collector := !scrape && collectorJob(job, get)
	if job == "" || catchAllJob(job) || collector {
		for _, f := range [...]string{"app.kubernetes.io/name", "app_kubernetes_io_name", "app"} {
			if v := get(f); v != "" {
				if !scrape && collectorJob(v, get) {
					return "", v // an exporter scraped by a catch-all job
				}
				return v, ""
			}
		}
	}
	if collector {
		return "", job
	}
	if job == "" && get("tier") != "" {
		// GitLab's rules name the service `type`, beside its `tier`, and
		// keep no job: redis-cache's and redis-sessions'
		// RedisMasterMissing pages were one incident. Only with `tier`:
		// elsewhere `type` is no service (Ceph's mixin writes
		// type="ceph_default" on every rule, and its aggregated alerts
		// would be one incident).
		return get("type"), ""
	}
	return job, ""
}

// kubernetesServiceName returns the Service a Kubernetes Service host
// name names (payments.shop.svc, payments.shop.svc.cluster.local →
// payments), else host: a request that reached no server sidecar names its
// destination so, beside Istio's placeholder, and one outage paged twice.
func kubernetesServiceName(host string) string {
	parts := strings.Split(host, ".")
	if len(parts) >= 3 && parts[2] == "svc" && (len(parts) == 3 || strings.HasSuffix(host, ".cluster.local")) {
		return parts[0]
	}
	return host
}

// istioPlaceholder reports whether v is a value Istio writes for a
// destination it cannot tell, not a service.
func istioPlaceholder(v string) bool {
	return v == "unknown" || v == "PassthroughCluster" || v == "BlackHoleCluster" || v == "InboundPassthroughClusterIpv4" || v == "InboundPassthroughClusterIpv6"
}

// collectorJob reports whether job (or a service or application label:
// kube-prometheus writes the exporter's Kubernetes Service as `service`)
// is an exporter that reports on other
// things — nodes (node-exporter, dcgm-exporter, windows-exporter), probed
// targets (blackbox), network devices (snmp, gnmi/gnmic), BMCs (ipmi):
// its name says what collected the alert, not whose problem it is. Two
// routers' different BGP failures under Wikimedia's job="gnmi" were one
// incident, the second router's page an update PagerDuty was sent nothing
// for; without a service the alertname leads the key, as for a rule that
// aggregated its job away — and the exporter (its job, or its app under a
// catch-all job) scopes the key, so that two fleets' exporters (an
// snmp_if_mib job's switches, an snmp_apcups job's UPSes) stay apart.
//
// Prometheus' node exporter guide names its job plain `node` (and Grafana
// Alloy's integration `integrations/unix`): taken as node-exporter's when
// the alert names no pod (a Node.js application's job may be `node` too).
func collectorJob(job string, get LabelFunc) bool {
	if (job == "node" || strings.HasSuffix(job, "/unix")) && get("pod") == "" {
		return true
	}
	for _, w := range [...]string{"node-exporter", "node_exporter", "dcgm", "windows-exporter", "windows_exporter", "blackbox", "snmp", "gnmi", "ipmi"} {
		if strings.Contains(job, w) {
			return true
		}
	}
	return false
}

// catchAllJob reports whether job scrapes whatever pods or endpoints ask to
// be (the prometheus.io/scrape annotation): a discovery job, not a service.
func catchAllJob(job string) bool {
	return strings.HasPrefix(job, "kubernetes-pods") || strings.HasPrefix(job, "kubernetes-service-endpoints") || strings.HasPrefix(job, "k8s-pods")
}

// DefaultScope are the labels that, with the default grouping, keep apart
// the incidents of one service and KPI in different places: a page for
// another cluster is a problem of its own, never an update folded into the
// first (PagerDuty sends nothing for updates of an open incident). Each is
// written "/name=value" after the grouping's values, only when the alert
// has it, so keys of alerts without them are as before.
// kubernetes_namespace (Prometheus' example Kubernetes scrape configs
// write it), OpenTelemetry's k8s.cluster.name and k8s.namespace.name, and
// namespace_name (Knative's autoscaler and activator name the revision's
// namespace so, the scrape's own namespace being knative-serving: three
// tenants' scale-from-zero pages were one incident) count as well; so
// do alert.SiteLabels, which name another environment, region or tenant
// when several Prometheus/Alertmanager pairs feed one router (a second
// region's page joined the first's incident as an update PagerDuty was
// sent nothing for), and Grafana's rulename, which names the rule of its
// DatasourceNoData alerts (one alertname for every rule's), and Grafana's
// rule UID when the alertname leads the key (grafanaRuleUID). Not
// prometheus: kube-prometheus writes the same "monitoring/k8s" in every
// cluster.
var DefaultScope = slices.Concat([]string{"cluster", "namespace", "kubernetes_namespace", "k8s.cluster.name", "k8s.namespace.name", "namespace_name"},
	systemClusterLabels,
	alert.SiteLabels, []string{"rulename", grafanaRuleUID})

// systemClusterLabels name which cluster of one system an alert is about,
// where exporters and mixins write it beside (or instead of) Kubernetes'
// cluster: Kafka's (Grafana's kafka observability library, Wikimedia's
// kafka_cluster; Strimzi's strimzi_io_cluster), Redis Enterprise's,
// Aerospike's and vCenter's. Two Kafka clusters' under-replicated
// partitions were one incident. Not cluster_name: Envoy's and Istio's
// metrics name an upstream cluster by it (one per port and subset), and one
// service's outage paged once per upstream.
var systemClusterLabels = []string{"kafka_cluster", "strimzi_io_cluster", "redis_cluster", "aerospike_cluster", "vcenter_cluster_name"}

// grafanaRuleUID is the label a Grafana-managed alert carries naming its
// rule. A Grafana rule's title is its alertname, free text that teams
// reuse across folders and organisations ("High error rate",
// "Latency SLO breached"): alerts naming no service were keyed by that
// title, and two teams' rules of one title were one incident, the second
// team's page an update PagerDuty was sent nothing for. The UID keeps them
// apart there, and only there: alerts that name their service group by
// sector, service and KPI whichever rule fired them.
const grafanaRuleUID = "__alert_rule_uid__"

// grafanaRuleUIDOf returns the rule UID of a Grafana rule's page
// (…/alerting/grafana/<uid>/view), "" for any other URL: Grafana's webhook
// contact point drops the labels written __like_this__, the rule's UID
// among them, and keeps its generatorURL.
func grafanaRuleUIDOf(u string) string {
	_, rest, ok := strings.Cut(u, "/alerting/grafana/")
	if !ok {
		return ""
	}
	uid, tail, ok := strings.Cut(rest, "/")
	if !ok || uid == "" || !strings.HasPrefix(tail, "view") {
		return ""
	}
	return uid
}

// grafanaRuleUIDOfAlert is the Grafana rule UID of r: its label, else
// read from its generatorURL (grafanaRuleUIDOf).
func grafanaRuleUIDOfAlert(r *alert.Result, get LabelFunc) string {
	if v := get(grafanaRuleUID); v != "" || r.Alert == nil {
		return v
	}
	return grafanaRuleUIDOf(r.Alert.GeneratorURL)
}

// datasourceErrorScope reports the datasource a Grafana DatasourceError
// alert names: its datasource_uid in the Grafana organisation it came from
// (the host of its generatorURL, the rule's page there, and the orgId of
// that URL or of Grafana's __orgId__ annotation) — a datasource's UID is
// unique within one Grafana organisation only, and every
// kube-prometheus-stack Grafana calls its Prometheus "prometheus". One
// unreachable datasource fails every rule that queries it at once, and
// Grafana raises a DatasourceError per rule, each carrying the rule's
// labels: keyed by rule, a datasource outage paged once per rule (a
// hundred rules, a hundred pages). Keyed by the datasource, the first
// pages and the others join it as updates. "" — keyed by rule, as before —
// for any other alert, and where the generatorURL names no Grafana apart
// from others (grafanaHostShared: none, Grafana's default root_url,
// localhost, an in-cluster name — every cluster's Grafana left at it
// writes the same): extra pages, none hidden.
func datasourceErrorScope(r *alert.Result, alertname string, get LabelFunc) string {
	if alertname != "DatasourceError" || r.Alert == nil {
		return ""
	}
	uid := get("datasource_uid")
	if uid == "" {
		return ""
	}
	grafana := grafanaOf(r.Alert.GeneratorURL, r.Alert.Annotations["__orgId__"])
	if grafana == "" {
		return ""
	}
	return uid + grafana
}

// grafanaOf names the Grafana organisation of a Grafana rule's page u,
// "@<host><root path>/<orgId>" — the address Grafana serves from (its
// root_url: host, and the path before /alerting/grafana/, as Grafanas
// served from sub-paths of one host are), and the orgId of u, else org
// (Grafana's __orgId__ annotation), else 1, Grafana's first — or "" when
// u does not tell one Grafana from another (grafanaHostShared).
func grafanaOf(u, org string) string {
	parsed, err := url.Parse(u)
	if err != nil || grafanaHostShared(strings.ToLower(parsed.Host)) {
		return ""
	}
	root, _, _ := strings.Cut(parsed.Path, "/alerting/grafana/")
	if v := parsed.Query().Get("orgId"); v != "" {
		org = v
	}
	if org == "" {
		org = "1"
	}
	return "@" + strings.ToLower(parsed.Host) + strings.TrimSuffix(root, "/") + "/" + org
}

// grafanaHostShared reports whether host (lower case, with its port) may
// be one many Grafanas write alike, so that it tells none apart — anything
// but a domain name of three labels or more outside a cluster's own
// domains: none, an address (Grafana's default root_url is localhost; the
// Helm chart without an ingress leaves the domain empty; private addresses
// repeat across clusters), or a name that resolves inside a cluster only
// (grafana, grafana.monitoring, *.svc…, *.cluster.local, *.local,
// *.localdomain, *.internal, Consul's *.consul) or an address written into
// a name (*.nip.io). A Grafana whose root_url is a public or company name
// (grafana.example.com) is told apart by it.
func grafanaHostShared(host string) bool {
	if strings.HasPrefix(host, "[") {
		return true // an IPv6 address
	}
	name, _, _ := strings.Cut(host, ":")
	name = strings.TrimSuffix(name, ".")
	if strings.Count(name, ".") < 2 || strings.Trim(name, "0123456789.") == "" {
		return true // one or two labels, or an IPv4 address
	}
	for _, suffix := range [...]string{".svc", ".cluster.local", ".local", ".localdomain", ".internal", ".consul", ".nip.io", ".sslip.io"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return strings.Contains(name, ".svc.") || strings.HasPrefix(name, "localhost.") || holdsIPv4(name)
}

// holdsIPv4 reports whether four of name's labels in a row are numbers —
// an address written into a name (grafana.10.0.0.5.nip.io, AWS'
// ip-10-0-1-5… is caught by .internal): private addresses repeat.
func holdsIPv4(name string) bool {
	run := 0
	for _, label := range strings.Split(name, ".") {
		if label != "" && strings.Trim(label, "0123456789") == "" {
			run++
			if run == 4 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// writeScope writes "/name=value" to b.
func writeScope(b *strings.Builder, name, value string) {
	b.WriteByte('/')
	b.WriteString(name)
	b.WriteByte('=')
	b.WriteString(value)
}

// maxReadableKey bounds incident keys kept readable; longer ones are hashed
// so that PagerDuty's 255-character dedup_key limit always holds.
const maxReadableKey = 160

// IncidentKey returns the stable key of the incident an alert belongs to:
// "slo/<identity>" when the decision names an SLO, otherwise the values of
// groupBy joined with "/" (prefixed by the alertname when the sector is
// unknown, or when groupBy groups by service and the alert names none —
// no service, OpenTelemetry service name, job or catch-all job's app: an
// aggregated rule's `sum by (model)` keeps none, and what is measured or
// where says nothing of whose problem it is; two unrelated pages of one
// sector, a Triton failure and a GPU's XID error, or GitLab's burn-rate
// pages of two services, would be one incident, the second an update
// PagerDuty is sent nothing for —, so unrelated alerts stay apart; a
// configured groupBy without service is taken as written), then
// "/name=value" for
// each label of scope the alert has (Grafana's rule UID only for an alert
// naming no service; a Grafana DatasourceError by its Grafana and
// datasource instead of its rule: datasourceErrorScope). Characters that would break a Redis
// hash tag are replaced; over-long keys are hashed.
func IncidentKey(r *alert.Result, groupBy, scope []string, get LabelFunc) string {
	var b strings.Builder
	if r.Decision.SLO != "" {
		b.Grow(len("slo/") + len(r.Decision.SLO)) // one allocation
		b.WriteString("slo/")
		b.WriteString(r.Decision.SLO)
	} else {
		var buf [8]string
		values, noService, exporter := buf[:0], false, ""
		for _, name := range groupBy {
			var v string
			if name == "service" {
				v, exporter = serviceOf(get)
				noService = v == ""
			} else {
				v = get(name)
			}
			values = append(values, v)
		}
		alertname := get("alertname")
		if r.Classification.Sector == alert.Unknown || r.Classification.Sector == "" || noService {
			b.WriteString(alertname)
			b.WriteByte('/')
		}
		for i, v := range values {
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(v)
		}
		if exporter != "" {
			// With a configured grouping too: the exporter was the
			// service there before, and two fleets' pages stayed apart.
			writeScope(&b, "exporter", exporter)
		}
		datasource := ""
		if len(scope) > 0 {
			datasource = datasourceErrorScope(r, alertname, get)
		}
		for _, name := range scope {
			var v string
			switch {
			case datasource != "" && (name == "rulename" || name == grafanaRuleUID):
				// The datasource, not the rule, keys a DatasourceError.
			case name == grafanaRuleUID:
				if noService {
					v = grafanaRuleUIDOfAlert(r, get)
				}
			default:
				v = get(name)
			}
			if v != "" {
				writeScope(&b, name, v)
			}
		}
		if datasource != "" {
			writeScope(&b, "datasource_uid", datasource)
		}
	}
	key := strings.Map(func(r rune) rune {
		switch r {
		case '{', '}', ' ', '\n', '\r', '\t':
			return '_'
		}
		return r
	}, b.String())
	if len(key) > maxReadableKey {
		sum := sha256.Sum256([]byte(key))
		key = strings.ToValidUTF8(key[:64], "") + "~" + hex.EncodeToString(sum[:12])
	}
	return key
}
