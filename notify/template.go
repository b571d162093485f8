package notify

import (
	"context"
	_ "embed"
	"fmt"
	tmplhtml "html/template"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	tmpltext "text/template"
	"text/template/parse"

	"github.com/prometheus/alertmanager/template"

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

// maxLocationValue bounds the runes Location takes from a label value.
const maxLocationValue = 64

// Location says where the notification's alerts fire, from the labels they
// all share (.CommonLabels): cluster and namespace, then the object — the
// pod, else the node, else the instance — as "cluster=prod namespace=shop
// pod=api-7f9c", each value cut to 64 runes; OpenTelemetry's
// k8s.cluster.name, k8s.namespace.name, k8s.pod.name and k8s.node.name
// stand in for a classic label the alerts lack. The instance is left out when
// the job is kube-state-metrics: it is the exporter's, not the object's.
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
	if object == "" && l["instance"] != "" && l["job"] != "kube-state-metrics" {
		object = "instance"
	}
	var b strings.Builder
	// OpenTelemetry's names (Prometheus 3's UTF-8 labels) where the
	// classic ones are missing.
	for _, name := range [...]string{first("cluster", "k8s.cluster.name"), first("namespace", "kubernetes_namespace", "k8s.namespace.name"), object} {
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
	for _, g := range globs {
		if err := user.FromGlob(g); err != nil {
			return nil, fmt.Errorf("parse template files %q: %w", g, err)
		}
	}
	b, bt := builtinTemplate()
	return &Templates{user: user, builtin: b, userTexts: texts, builtinTexts: bt, emptyLogged: &sync.Map{}}, nil
}

// BuiltinTemplates returns Templates with the built-in templates only.
func BuiltinTemplates() *Templates {
	b, bt := builtinTemplate()
	return &Templates{user: b, builtin: b, userTexts: bt, builtinTexts: bt, emptyLogged: &sync.Map{}}
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
	seen := map[string]bool{t.Name(): true}
	var walk func(n parse.Node) (string, bool)
	walk = func(n parse.Node) (string, bool) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return "", false
			}
			for _, c := range n.Nodes {
				if name, ok := walk(c); ok {
					return name, true
				}
			}
		case *parse.IfNode:
			return walkBranch(walk, &n.BranchNode)
		case *parse.RangeNode:
			return walkBranch(walk, &n.BranchNode)
		case *parse.WithNode:
			return walkBranch(walk, &n.BranchNode)
		case *parse.TemplateNode:
			if seen[n.Name] {
				return "", false
			}
			seen[n.Name] = true
			called := t.Lookup(n.Name)
			if called == nil || called.Tree == nil || called.Root == nil {
				return n.Name, true
			}
			return walk(called.Root)
		}
		return "", false
	}
	if t.Tree == nil {
		return "", false
	}
	return walk(t.Root)
}

// walkBranch walks the lists of an if, range or with action.
func walkBranch(walk func(parse.Node) (string, bool), b *parse.BranchNode) (string, bool) {
	if name, ok := walk(b.List); ok {
		return name, true
	}
	if b.ElseList != nil {
		return walk(b.ElseList)
	}
	return "", false
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
	} else if logger != nil {
		logger.Warn("template render failed, using the built-in text", "field", field, "err", err)
	}
	b, berr := t.builtinTexts.execute(fallback, data)
	if berr != nil {
		t.metrics.renderFailure(receiverOf(data), field, RenderError)
		if logger != nil {
			logger.Error("built-in template render failed, using plain text", "field", field, "err", berr)
		}
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
		if logger != nil {
			logger.Warn("template render failed, leaving the field out", "field", field, "err", err)
		}
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
