package notify

import (
	"context"
	_ "embed"
	"fmt"
	tmplhtml "html/template"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	tmpltext "text/template"
	"text/template/parse"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// defaultTemplates defines alertrouter.title, alertrouter.summary,
// alertrouter.text and their helpers.
//
//go:embed default.tmpl
var defaultTemplates string

// The built-in template texts integrations use when the config sets none.
const (
	DefaultTitle   = `{{ template "alertrouter.title" . }}`
	DefaultSummary = `{{ template "alertrouter.summary" . }}`
	DefaultText    = `{{ template "alertrouter.text" . }}`
)

// Data is what notification templates render: Alertmanager's template.Data
// (so .Alerts, .CommonLabels, .ExternalURL and Alertmanager's own default
// templates work as in Alertmanager) plus the router's view of the
// notification. .Results lines up with the notification's alerts and
// carries each alert's classification and decision, e.g.
//
//	{{ range .Results }}{{ .Classification.Sector }} {{ .Decision.Action }}{{ end }}
type Data struct {
	*template.Data
	// Incident is the incident key (PagerDuty's dedup_key before hashing).
	Incident string
	// Kind is "firing", "reminder" or "resolved".
	Kind string
	// Action is the loudest decision: "page", "ticket" or "none".
	Action string
	// IncidentResolved is true when no alert of the incident still fires.
	IncidentResolved bool
	// ConsoleURL is the incident's page in the router's console ("" when
	// console.external_url is not set).
	ConsoleURL string
	// Results are the alerts of the notification with their classification.
	Results []*alert.Result
}

// NewData builds the template data of n. It never returns a nil
// *template.Data inside, so templates can read .CommonLabels of a
// notification that came without webhook data.
func NewData(n *alert.Notification) *Data {
	d := n.Data
	if d == nil {
		// No webhook (a replayed dead letter, a test): the alerts' common
		// labels and annotations computed as Alertmanager does, so the
		// texts that read them say what the alerts share.
		d = &template.Data{Receiver: n.Receiver}
		for _, r := range n.Results {
			if r.Alert != nil {
				d.Alerts = append(d.Alerts, r.Alert.Alert)
			}
		}
		alert.SetCommon(d)
	}
	return &Data{
		Data:             d,
		Incident:         n.Incident,
		Kind:             string(n.Kind),
		Action:           string(n.Action),
		IncidentResolved: n.IncidentResolved,
		Results:          n.Results,
		ConsoleURL:       n.ConsoleURL,
	}
}

// groupKey is the context key of WithGroup.
type groupKey struct{}

// WithGroup returns ctx carrying group, the template data of a
// notification's incident as the webhook that brought it held it: every
// alert of the incident routed to the notification's receiver, those that
// changed and those that did not (a firing already notified, which
// Alertmanager sends again with the group), in the webhook's order, with
// their status, common labels and annotations. The dispatch core sets it
// for the notifiers that read it (GroupData); nil leaves ctx as it is.
func WithGroup(ctx context.Context, group *template.Data) context.Context {
	if group == nil {
		return ctx
	}
	return context.WithValue(ctx, groupKey{}, group)
}

// GroupData is the template data of n for a notifier whose every
// notification is a message of its own (Slack's incoming webhook: no
// parent message or thread holds the incident's earlier alerts): NewData
// with .Alerts, .Status, .CommonLabels, .CommonAnnotations and
// .GroupLabels those of the group ctx carries (WithGroup), so that the
// user's templates read the group as Alertmanager renders it
// ([FIRING:{{ .Alerts.Firing | len }}] counts every alert still firing,
// not only the new ones). .Results are still the notification's own
// alerts, those that changed. Without a group in ctx (a dead letter
// replayed, a test) it is NewData(n).
func GroupData(ctx context.Context, n *alert.Notification) *Data {
	d := NewData(n)
	if g, ok := ctx.Value(groupKey{}).(*template.Data); ok && g != nil {
		d.Data = g
	}
	return d
}

// exporterName reports whether name (a pod, a job, an application)
// names an exporter that reports on something else than itself — the
// node (node-exporter, NVIDIA's dcgm-exporter) or a probed target
// (blackbox-exporter).
func exporterName(name string) bool {
	return strings.Contains(name, "node-exporter") || strings.Contains(name, "node_exporter") || strings.Contains(name, "dcgm-exporter") ||
		strings.Contains(name, "blackbox-exporter") || strings.Contains(name, "windows-exporter") || strings.Contains(name, "windows_exporter")
}

// kubeStateMetrics reports whether labels l are those of a
// kube-state-metrics target, under any job name (Grafana's k8s-monitoring
// writes integrations/kubernetes/kube-state-metrics; the community chart
// scrapes it as kubernetes-service-endpoints): its instance is the
// exporter's, not the object's.
func kubeStateMetrics(l template.KV) bool {
	return strings.Contains(l["job"], "kube-state-metrics") || l["app.kubernetes.io/name"] == "kube-state-metrics" ||
		l["app_kubernetes_io_name"] == "kube-state-metrics" || l["app"] == "kube-state-metrics" || strings.Contains(l["service"], "kube-state-metrics")
}

// exporterTarget reports whether labels l are those of such an exporter's
// target, whose pod and namespace are the exporter's (node-exporter-05abc
// in monitoring), not the alert's place: the pod's name says so, or —
// with no pod in common (alerts of several nodes grouped; a
// kubernetes-service-endpoints job, which writes none) — the job or the
// application does (Prometheus' example `node` job only without a pod: a
// Node.js application's job may be called node). Not for
// kube-state-metrics' or the kubelet's alerts, which are about the
// exporter's pod itself (crash looping, throttled), nor for a pod that is
// not the exporter's (DCGM's pod mapping kept with honorLabels: the GPU
// workload's pod is the place), nor for an alert with no job — a rule
// aggregating the job away (kubernetes-mixin's KubePodNotReady,
// CPUThrottlingHigh) is about the pod it names.
func exporterTarget(l template.KV, pod string) bool {
	job := l["job"]
	if job == "" || kubeStateMetrics(l) || strings.Contains(job, "kubelet") || strings.Contains(job, "cadvisor") || strings.Contains(l["service"], "kubelet") {
		return false
	}
	if pod != "" {
		return exporterName(pod)
	}
	return job == "node" || exporterName(job) || exporterName(l["app.kubernetes.io/name"]) || exporterName(l["app_kubernetes_io_name"]) || exporterName(l["app"])
}

// locationNames are the labels Location reads for the cluster, the
// namespace and the object (the instance, the exporter's Hostname).
var locationNames = []string{"cluster", "k8s.cluster.name", "namespace", "kubernetes_namespace", "k8s.namespace.name", "namespace_name",
	"pod", "k8s.pod.name", "node", "k8s.node.name", "instance", "Hostname"}

// exporterLabels are the labels a scrape target adds that name the
// exporter, not what its metrics are about.
var exporterLabels = []string{"container", "service", "endpoint", "app", "app_kubernetes_io_name", "app.kubernetes.io/name"}

// maxLocationValue bounds the runes Location takes from a label value.
const maxLocationValue = 64

// Location says where the notification's alerts fire, from the labels they
// all share (.CommonLabels): cluster and namespace, then the object — the
// pod, else the node, else the instance — as "cluster=prod namespace=shop
// pod=api-7f9c", each value cut to 64 runes; OpenTelemetry's
// k8s.cluster.name, k8s.namespace.name, k8s.pod.name and k8s.node.name
// stand in for a classic label the alerts lack. The instance is left out for
// kube-state-metrics (kubeStateMetrics): it is the exporter's, not the object's;
// for an exporter's target (exporterTarget: node-exporter, dcgm-exporter,
// blackbox-exporter) the pod and namespace are the exporter's, and the
// node (DCGM's Hostname, else the instance) is the object. Where no label
// names the object, up to three labels that say what the alerts are about
// follow (SubjectLabels: "cluster=prod consumergroup=billing topic=orders");
// for a gNMI collector's alert naming its device (GNMIDevice) none does —
// the pod, instance and the pod's namespace are the collector's — and the
// device leads them: "source=leaf-01 interface_name=Ethernet12".
// For one alert these are its own labels; "" when the alerts share none.
// The built-in summary (alertrouter.summary) uses it: {{ .Location }}.
func (d *Data) Location() string {
	if d == nil || d.Data == nil {
		return ""
	}
	l := d.CommonLabels
	first := func(names ...string) string {
		for _, n := range names {
			if l[n] != "" {
				return n
			}
		}
		return ""
	}
	object := first("pod", "k8s.pod.name", "node", "k8s.node.name")
	if object == "" && l["instance"] != "" && !kubeStateMetrics(l) {
		object = "instance"
	}
	namespace := first("namespace", "kubernetes_namespace", "k8s.namespace.name", "namespace_name")
	if exporterTarget(l, l[first("pod", "k8s.pod.name")]) {
		// The alert is about the node (kube-prometheus writes it as the
		// node-exporter's instance; DCGM's Hostname) or the probed target
		// (the instance).
		object, namespace = first("node", "k8s.node.name", "Hostname", "instance"), ""
	}
	gnmi := GNMIDevice(l) != ""
	if gnmi {
		// A gNMI collector's alert is about the device it names as
		// source (SubjectLabels puts it first): the pod and instance are
		// the collector's, and so is the namespace of its pod.
		if GNMICollectorLabel(l, "namespace") {
			namespace = ""
		}
		object = ""
	}
	// OpenTelemetry's names (Prometheus 3's UTF-8 labels) where the
	// classic ones are missing.
	names := []string{first("cluster", "k8s.cluster.name"), namespace, object}
	if namespace != "" && namespace != "namespace_name" && l["namespace_name"] != "" && l["namespace_name"] != l[namespace] {
		// Knative's autoscaler names the tenant's namespace so, beside
		// the namespace of its own pod (knative-serving) the scrape
		// gave: the tenant follows it (a review).
		names = slices.Insert(names, 2, "namespace_name")
	}
	if object == "" {
		// Nothing names the object: the labels that say what the alerts
		// are about (a consumer group and topic, a device's interface).
		// kube-state-metrics' container, service and application are
		// the exporter's, not the object's; a gNMI collector's are the
		// collector's.
		collector := kubeStateMetrics(l) || gnmi
		names = append(names, SubjectLabels(l, func(name string) bool {
			return slices.Contains(locationNames, name) || collector && slices.Contains(exporterLabels, name)
		})...)
	}
	var b strings.Builder
	for _, name := range names {
		v := l[name]
		if name == "" || v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		v, _ = TruncateInRunes(v, maxLocationValue)
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// Templates renders notification text in Alertmanager's template language:
// Alertmanager's default templates, alertrouter's built-in ones
// (default.tmpl) and the user's template files, in that order, so user
// files can redefine any of them. Safe for concurrent use.
type Templates struct {
	user    *template.Template
	builtin *template.Template
	// userTexts and builtinTexts render like user's and builtin's
	// ExecuteTextString, with each text parsed once instead of on every call.
	userTexts    *compiledTexts
	builtinTexts *compiledTexts
	// metrics counts the failed and empty renders (nil: not counted).
	metrics *Metrics
	// emptyLogged holds the receiver and field ("receiver\x00field") of
	// every empty render already logged at warn; later ones are logged at
	// debug (the counter tells how often). Shared by WithMetrics copies.
	emptyLogged *sync.Map
	// failLogs throttles the lines of failed renders to one per receiver,
	// field and error every 30 s (the counter counts each): a template
	// failing on every notification wrote a line each, 40 a second under
	// load (an audit). Shared by WithMetrics copies.
	failLogs *logthrottle.Throttle
	// userDefined are the names of the templates the user's files define
	// (parsed apart from Alertmanager's and the built-in ones).
	userDefined map[string]bool
}

// WithMetrics returns t counting its failed renders, and its empty ones a
// built-in text stood in for, in m's
// alertrouter_template_render_failures_total (labelled by the data's
// receiver and the field rendered). The copy shares t's parsed templates.
// A nil m returns t.
func (t *Templates) WithMetrics(m *Metrics) *Templates {
	if m == nil {
		return t
	}
	c := *t
	c.metrics = m
	return &c
}

// Uncounted returns t without its metrics: for renders over data that
// lacks what templates may read by design — what a Slack triage click
// knows has no .Alerts — whose failures leave a key out as documented and
// are no defect of the configuration for AlertrouterTemplatesFailing to
// report.
func (t *Templates) Uncounted() *Templates {
	if t.metrics == nil {
		return t
	}
	c := *t
	c.metrics = nil
	return &c
}

var (
	builtinOnce  sync.Once
	builtin      *template.Template
	builtinTexts *compiledTexts
)

func builtinTemplate() (*template.Template, *compiledTexts) {
	builtinOnce.Do(func() {
		t, texts, err := newTemplate()
		if err == nil {
			err = t.Parse(strings.NewReader(defaultTemplates))
		}
		if err != nil {
			panic(fmt.Sprintf("parse built-in templates: %v", err)) // a build defect, caught by every test
		}
		builtin, builtinTexts = t, texts
	})
	return builtin, builtinTexts
}

// newTemplate returns Alertmanager's default templates and a cache of
// compiled texts sharing the definitions they will hold: Alertmanager's
// text template is captured through its Option hook (Parse and ParseGlob
// add to that same *text/template.Template).
func newTemplate() (*template.Template, *compiledTexts, error) {
	var text *tmpltext.Template
	t, err := template.FromGlobs(nil, func(tt *tmpltext.Template, _ *tmplhtml.Template) { text = tt })
	if err != nil {
		return nil, nil, err
	}
	return t, &compiledTexts{base: text}, nil
}

// maxCompiledTexts bounds the cache: the texts rendered come from the
// configuration, so a handful; past the bound a text is parsed per call.
const maxCompiledTexts = 256

// compiledTexts renders template texts as Alertmanager's
// Template.ExecuteTextString does (a clone of the loaded definitions, a new
// unnamed template with missingkey=zero and the routeLabels function,
// parsed from the text) but keeps each text's parsed template: cloning and
// parsing on every call was most of the cost of building a notification.
// Executing a parsed text/template is safe for concurrent use.
type compiledTexts struct {
	base *tmpltext.Template
	m    sync.Map // text → *compiledText
	n    atomic.Int32
}

type compiledText struct {
	t   *tmpltext.Template
	err error
	// routeLabels: the text or a template it may call uses routeLabels, so
	// it is executed on a clone bound to the data's route labels.
	routeLabels bool
}

// noRouteLabels is routeLabels for data without route labels: every route
// label renders as "", as in Alertmanager.
func noRouteLabels(string) (string, error) { return "", nil }

// routeLabelsOf returns the route labels of template data: those
// Alertmanager (v0.35 and later) rendered for the route that sent the
// webhook, in its routeLabels field.
func routeLabelsOf(data any) template.KV {
	switch d := data.(type) {
	case *Data:
		if d != nil && d.Data != nil {
			return d.RouteLabels
		}
	case *template.Data:
		if d != nil {
			return d.RouteLabels
		}
	}
	return nil
}

// usesRouteLabels reports whether any template of t's set mentions
// routeLabels (a mention in plain text only costs the slower path).
func usesRouteLabels(t *tmpltext.Template) bool {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Root != nil && strings.Contains(tt.Root.String(), "routeLabels") {
			return true
		}
	}
	return false
}

func (c *compiledTexts) compile(text string) *compiledText {
	if v, ok := c.m.Load(text); ok {
		return v.(*compiledText)
	}
	t, err := c.base.Clone()
	if err == nil {
		t, err = t.New("").Option("missingkey=zero").Funcs(tmpltext.FuncMap{"routeLabels": noRouteLabels}).Parse(text)
	}
	ct := &compiledText{t: t, err: err}
	if err == nil {
		ct.routeLabels = usesRouteLabels(t)
	}
	if c.n.Load() >= maxCompiledTexts {
		return ct
	}
	v, loaded := c.m.LoadOrStore(text, ct)
	if !loaded {
		c.n.Add(1)
	}
	return v.(*compiledText)
}

// execute renders text with data as Template.ExecuteTextString renders
// Alertmanager's notifications: routeLabels "name" is the value of the
// route label Alertmanager sent with the webhook (already rendered, so
// returned verbatim; "" when there is none).
func (c *compiledTexts) execute(text string, data any) (string, error) {
	if text == "" {
		return "", nil
	}
	ct := c.compile(text)
	if ct.err != nil {
		return "", ct.err
	}
	t := ct.t
	if rl := routeLabelsOf(data); ct.routeLabels && len(rl) > 0 {
		// A clone per call: functions are bound to a template set, not to
		// one execution. Only texts that use routeLabels pay for it.
		clone, err := t.Clone()
		if err != nil {
			return "", err
		}
		t = clone.Funcs(tmpltext.FuncMap{"routeLabels": func(name string) (string, error) { return rl[name], nil }})
	}
	var b strings.Builder
	err := t.Execute(&b, data)
	return b.String(), err
}

// LoadTemplates parses the user's template files (globs, as Alertmanager's
// `templates:`; a glob matching nothing is not an error) on top of the
// built-in templates. A parse error is returned naming the files, so
// check-config can show it.
func LoadTemplates(globs []string) (*Templates, error) {
	user, texts, err := newTemplate()
	if err != nil {
		return nil, fmt.Errorf("load Alertmanager default templates: %w", err)
	}
	if err := user.Parse(strings.NewReader(defaultTemplates)); err != nil {
		return nil, fmt.Errorf("parse built-in templates: %w", err)
	}
	before := map[string]*parse.Tree{}
	for _, tt := range texts.base.Templates() {
		before[tt.Name()] = tt.Tree
	}
	for _, g := range globs {
		if err := user.FromGlob(g); err != nil {
			return nil, fmt.Errorf("parse template files %q: %w", g, err)
		}
	}
	b, bt := builtinTemplate()
	return &Templates{user: user, builtin: b, userTexts: texts, builtinTexts: bt, emptyLogged: &sync.Map{}, failLogs: &logthrottle.Throttle{}, userDefined: definedSince(texts.base, before)}, nil
}

// definedSince returns the names of the templates of set whose definition
// is not the one before held: those the user's files define. text/template
// keeps an earlier definition over an empty one, so an empty redefinition
// is none, as in Alertmanager.
func definedSince(set *tmpltext.Template, before map[string]*parse.Tree) map[string]bool {
	defined := map[string]bool{}
	for _, tt := range set.Templates() {
		if tt.Tree != nil && tt.Tree != before[tt.Name()] && !parse.IsEmptyTree(tt.Root) {
			defined[tt.Name()] = true
		}
	}
	return defined
}

// Redefines reports whether name, one of Alertmanager's default templates
// (slack.default.title, pagerduty.default.client …), renders differently
// in Alertmanager because the user's template files redefine it or a
// template it calls, directly or not (slack.default.title calls
// __subject; pagerduty.default.client calls __alertmanager).
func (t *Templates) Redefines(name string) bool {
	if len(t.userDefined) == 0 {
		return false
	}
	if t.userDefined[name] {
		return true
	}
	start := t.userTexts.base.Lookup(name)
	if start == nil || start.Tree == nil || start.Root == nil {
		return false
	}
	found := false
	walkCalls(t.userTexts.base, start.Root, map[string]bool{name: true}, func(called string, _ *tmpltext.Template) bool {
		found = t.userDefined[called]
		return found
	})
	return found
}

// TemplateText is the text that renders the template name, as
// Alertmanager renders its default templates for a key left unset:
// {{ template "name" . }}.
func TemplateText(name string) string { return `{{ template "` + name + `" . }}` }

// RedefinedDefaults returns, for each key of keys (its YAML name and the
// Alertmanager default template it renders when unset, in order) whose
// value is unset and whose default the user's files redefine (Redefines),
// the key and the text it takes (TemplateText). Set that text on the key
// to render it as Alertmanager does.
func (t *Templates) RedefinedDefaults(keys []DefaultKey) []DefaultKey {
	var out []DefaultKey
	for _, k := range keys {
		if k.Unset && t.Redefines(k.Template) {
			out = append(out, k)
		}
	}
	return out
}

// DefaultKey is a configuration key and the Alertmanager default template
// that Alertmanager renders when the key is unset.
type DefaultKey struct {
	// Key is the YAML key (title, client_url …).
	Key string
	// Template is the default template (slack.default.title …).
	Template string
	// Unset is true when the configuration leaves the key to its default.
	Unset bool
	// Field is the configuration's value of the key, which
	// FollowRedefined sets.
	Field *string
}

// FollowRedefined returns a copy of cfg, an integration's configuration,
// whose keys (keys lists them, with their fields in the copy) that
// t.RedefinedDefaults returns are set to their TemplateText, so that each
// renders its Alertmanager default as Alertmanager does, and says so at
// info on logger (which names the integration); cfg itself when there are
// none.
func FollowRedefined[C any](t *Templates, logger *slog.Logger, cfg *C, keys func(*C) []DefaultKey) *C {
	c := *cfg
	followed := t.RedefinedDefaults(keys(&c))
	if len(followed) == 0 {
		return cfg
	}
	texts := make([]string, len(followed))
	for i, k := range followed {
		if k.Field != nil {
			*k.Field = TemplateText(k.Template)
		}
		texts[i] = k.String()
	}
	if logger != nil {
		logger.Info("keys left unset render Alertmanager's defaults, which your template files redefine, as Alertmanager does (not the router's built-in texts)",
			"keys", strings.Join(texts, "; "))
	}
	return &c
}

// String is the key as a configuration would set it:
// `title: {{ template "slack.default.title" . }}`.
func (k DefaultKey) String() string { return k.Key + ": " + TemplateText(k.Template) }

// BuiltinTemplates returns Templates with the built-in templates only.
func BuiltinTemplates() *Templates {
	b, bt := builtinTemplate()
	return &Templates{user: b, builtin: b, userTexts: bt, builtinTexts: bt, emptyLogged: &sync.Map{}, failLogs: &logthrottle.Throttle{}}
}

// Check reports whether text parses as a template against the loaded
// files, and whether every template it calls ({{ template "name" . }},
// directly or through the templates it calls) is defined, for config
// validation. Errors that only show when rendering real data (a missing
// field) are not reported: Render falls back on those.
func (t *Templates) Check(text string) error {
	_, err := t.user.ExecuteTextString(text, &Data{Data: &template.Data{}})
	// text/template reports execution errors as "template: NAME:LINE:COL:
	// executing ..."; every other error is a parse error.
	if err != nil && !strings.Contains(err.Error(), "executing") {
		return err
	}
	if text == "" {
		return nil
	}
	ct := t.userTexts.compile(text)
	if ct.err != nil {
		return ct.err
	}
	// An undefined template is an execution error too, but one no data
	// avoids: every notification would fall back to the built-in text.
	if name, ok := undefinedTemplate(ct.t); ok {
		return fmt.Errorf("template %q is not defined: every notification would fail to render it and fall back to the built-in text; define it in a file listed under templates:", name)
	}
	return nil
}

// undefinedTemplate returns the first template that t, or a template it
// calls, calls by a name its set does not define.
func undefinedTemplate(t *tmpltext.Template) (string, bool) {
	if t.Tree == nil {
		return "", false
	}
	undefined := ""
	walkCalls(t, t.Root, map[string]bool{t.Name(): true}, func(name string, called *tmpltext.Template) bool {
		if called == nil || called.Tree == nil || called.Root == nil {
			undefined = name
			return true
		}
		return false
	})
	return undefined, undefined != ""
}

// walkCalls calls visit with every template that root, or a template it
// calls, calls ({{ template "name" . }}), each once (seen holds those
// already visited), with its definition in set (nil when set has none),
// until visit returns true.
func walkCalls(set *tmpltext.Template, root *parse.ListNode, seen map[string]bool, visit func(name string, called *tmpltext.Template) bool) {
	var walk func(n parse.Node) bool
	walkList := func(l *parse.ListNode) bool {
		if l == nil {
			return false
		}
		for _, c := range l.Nodes {
			if walk(c) {
				return true
			}
		}
		return false
	}
	walkBranch := func(b *parse.BranchNode) bool { return walkList(b.List) || walkList(b.ElseList) }
	walk = func(n parse.Node) bool {
		switch n := n.(type) {
		case *parse.ListNode:
			return walkList(n)
		case *parse.IfNode:
			return walkBranch(&n.BranchNode)
		case *parse.RangeNode:
			return walkBranch(&n.BranchNode)
		case *parse.WithNode:
			return walkBranch(&n.BranchNode)
		case *parse.TemplateNode:
			if seen[n.Name] {
				return false
			}
			seen[n.Name] = true
			called := set.Lookup(n.Name)
			if visit(n.Name, called) {
				return true
			}
			if called != nil && called.Tree != nil && called.Root != nil {
				return walk(called.Root)
			}
		}
		return false
	}
	walkList(root)
}

// Render renders text with data. An empty text renders fallback. When text
// fails to parse or execute, Render logs the error (field names what was
// being rendered) and renders fallback with the built-in templates only, so
// a broken user template never costs a notification; if even that fails it
// returns "" and the caller uses its own plain text. When text renders
// empty (white space only) and there is a fallback, Render renders the
// fallback with the built-in templates too — '{{ .CommonAnnotations.summary }}'
// is empty whenever the alerts' summaries differ — and logs it at warn the
// first time for the receiver and field, at debug after that. Without a
// fallback an empty result is returned as it is: empty means something
// there (no severity, no class). Failed renders, and empty ones the
// fallback stood in for, are counted (WithMetrics).
func (t *Templates) Render(logger *slog.Logger, field, text, fallback string, data *Data) string {
	if text == "" {
		text = fallback
	}
	s, err := t.userTexts.execute(text, data)
	if err == nil {
		if s = strings.TrimSpace(s); s != "" || fallback == "" {
			return s
		}
	} else if fallback == "" {
		t.logFailure(logger, slog.LevelWarn, data, field, err, "template render failed, leaving the field empty")
	} else {
		t.logFailure(logger, slog.LevelWarn, data, field, err, "template render failed, using the built-in text")
	}
	b, berr := t.builtinTexts.execute(fallback, data)
	if berr != nil {
		t.metrics.renderFailure(receiverOf(data), field, RenderError)
		t.logFailure(logger, slog.LevelError, data, field, berr, "built-in template render failed, using plain text")
		return ""
	}
	b = strings.TrimSpace(b)
	if err == nil {
		if b == "" {
			return "" // the built-in text is empty too: nothing was lost
		}
		t.renderedEmpty(logger, field, text, data)
	} else {
		t.metrics.renderFailure(receiverOf(data), field, RenderError)
	}
	return b
}

// logFailure logs a failed render of field, at most once per receiver,
// field and error every 30 s (failLogs, which every constructor sets).
func (t *Templates) logFailure(logger *slog.Logger, level slog.Level, data *Data, field string, err error, msg string) {
	if logger == nil {
		return
	}
	key, _ := TruncateInRunes(receiverOf(data)+"\x00"+field+"\x00"+err.Error(), 300)
	t.failLogs.Log(context.Background(), logger, level, key, msg, "field", field, "err", err)
}

// renderedEmpty counts and logs a text of field that rendered empty, the
// built-in text used instead.
func (t *Templates) renderedEmpty(logger *slog.Logger, field, text string, data *Data) {
	receiver := receiverOf(data)
	t.metrics.renderFailure(receiver, field, RenderEmpty)
	if logger == nil {
		return
	}
	level := slog.LevelWarn
	if t.emptyLogged != nil {
		if _, logged := t.emptyLogged.LoadOrStore(receiver+"\x00"+field, true); logged {
			level = slog.LevelDebug
		}
	}
	shown, _ := TruncateInRunes(text, 200)
	logger.Log(context.Background(), level, "template rendered empty, using the built-in text (logged at warn once per receiver and field, counted in alertrouter_template_render_failures_total)",
		"field", field, "template", shown)
}

// TryRender renders text with data, for a field that is left out when its
// template fails: it returns false when text fails to parse or execute,
// after logging the error and counting it (WithMetrics). An empty text
// renders "".
func (t *Templates) TryRender(logger *slog.Logger, field, text string, data *Data) (string, bool) {
	s, err := t.userTexts.execute(text, data)
	if err != nil {
		t.metrics.renderFailure(receiverOf(data), field, RenderError)
		t.logFailure(logger, slog.LevelWarn, data, field, err, "template render failed, leaving the field out")
		return "", false
	}
	return strings.TrimSpace(s), true
}

// receiverOf is the receiver of template data ("" for none).
func receiverOf(data *Data) string {
	if data == nil || data.Data == nil {
		return ""
	}
	return data.Receiver
}

// IsTemplate reports whether a configuration value is a template (holds
// "{{"): Alertmanager renders such a value with each notification's data.
func IsTemplate(s string) bool { return strings.Contains(s, "{{") }
