package notify

import (
	_ "embed"
	"fmt"
	"log/slog"
	"strings"
	"sync"

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
		d = &template.Data{Receiver: n.Receiver}
		for _, r := range n.Results {
			if r.Alert != nil {
				d.Alerts = append(d.Alerts, r.Alert.Alert)
			}
		}
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

// Templates renders notification text in Alertmanager's template language:
// Alertmanager's default templates, alertrouter's built-in ones
// (default.tmpl) and the user's template files, in that order, so user
// files can redefine any of them. Safe for concurrent use.
type Templates struct {
	user    *template.Template
	builtin *template.Template
}

var (
	builtinOnce sync.Once
	builtin     *template.Template
)

func builtinTemplate() *template.Template {
	builtinOnce.Do(func() {
		t, err := template.FromGlobs(nil)
		if err == nil {
			err = t.Parse(strings.NewReader(defaultTemplates))
		}
		if err != nil {
			panic(fmt.Sprintf("parse built-in templates: %v", err)) // a build defect, caught by every test
		}
		builtin = t
	})
	return builtin
}

// LoadTemplates parses the user's template files (globs, as Alertmanager's
// `templates:`; a glob matching nothing is not an error) on top of the
// built-in templates. A parse error is returned naming the files, so
// check-config can show it.
func LoadTemplates(globs []string) (*Templates, error) {
	user, err := template.FromGlobs(nil)
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
	return &Templates{user: user, builtin: builtinTemplate()}, nil
}

// BuiltinTemplates returns Templates with the built-in templates only.
func BuiltinTemplates() *Templates {
	b := builtinTemplate()
	return &Templates{user: b, builtin: b}
}

// Check reports whether text parses as a template against the loaded
// files, for config validation. Errors that only show when rendering real
// data (a missing field) are not reported: Render falls back on those.
func (t *Templates) Check(text string) error {
	_, err := t.user.ExecuteTextString(text, &Data{Data: &template.Data{}})
	// text/template reports execution errors as "template: NAME:LINE:COL:
	// executing ..."; every other error is a parse error.
	if err != nil && !strings.Contains(err.Error(), "executing") {
		return err
	}
	return nil
}

// Render renders text with data. An empty text renders fallback. When text
// fails to parse or execute, Render logs the error (field names what was
// being rendered) and renders fallback with the built-in templates only, so
// a broken user template never costs a notification; if even that fails it
// returns "" and the caller uses its own plain text.
func (t *Templates) Render(logger *slog.Logger, field, text, fallback string, data *Data) string {
	if text == "" {
		text = fallback
	}
	s, err := t.user.ExecuteTextString(text, data)
	if err == nil {
		return strings.TrimSpace(s)
	}
	if logger != nil {
		logger.Warn("template render failed, using the built-in text", "field", field, "receiver", data.Receiver, "err", err)
	}
	s, err = t.builtin.ExecuteTextString(fallback, data)
	if err != nil {
		if logger != nil {
			logger.Error("built-in template render failed, using plain text", "field", field, "receiver", data.Receiver, "err", err)
		}
		return ""
	}
	return strings.TrimSpace(s)
}
