package slolive

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/template"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redact"
)

// Config is the `prometheus` section of the router's configuration: where
// live SLO context is read from. Decode it with yaml.UnmarshalStrict:
// UnmarshalYAML fills the defaults first and validates the result.
type Config struct {
	// URL is the Prometheus to query, e.g. "http://prometheus:9090".
	// Required unless FromGeneratorURL is set.
	URL string `yaml:"url"`
	// Timeout bounds one lookup, all of its queries together. Default
	// 300ms: a decision never waits longer for Prometheus.
	Timeout model.Duration `yaml:"timeout"`
	// HTTPConfig configures authentication and TLS towards Prometheus.
	HTTPConfig commoncfg.HTTPClientConfig `yaml:"http_config"`
	// CacheTTL is how long the answer for one SLO is reused, however many
	// alerts ask. Default 15s.
	CacheTTL model.Duration `yaml:"cache_ttl"`
	// FromGeneratorURL, when true, queries the Prometheus named by each
	// alert's generatorURL (scheme and host) instead of URL, URL being the
	// fallback for alerts without one. Off by default: the generatorURL
	// comes from whoever can post alerts, and following it would let them
	// point the router at any host (SSRF).
	FromGeneratorURL bool `yaml:"from_generator_url"`
	// Expr holds the expression templates for hand-rolled SLOs (neither
	// Sloth nor Pyrra).
	Expr ExprConfig `yaml:"expr"`
	// ExemplarQuery is a template of the selector whose exemplars are read
	// for the burn-exemplars hint, e.g.
	// `http_request_duration_seconds_bucket{job={{quote .Labels.job}}}`.
	// Empty: derived from Pyrra's recording rules where possible, else no
	// exemplars.
	ExemplarQuery string `yaml:"exemplar_query"`
	// TraceURLTemplate builds a link from a trace id, e.g.
	// "https://tempo.example/trace/{{.TraceID}}". Empty: ids without links.
	TraceURLTemplate string `yaml:"trace_url_template"`
}

// ExprConfig holds PromQL templates for SLOs that no generator made. Each
// is a Go text/template over TemplateData; {{quote .X}} renders a PromQL
// string literal. Both empty: such SLOs get no live context.
type ExprConfig struct {
	// BurnRate renders the burn rate of one window (a factor of the
	// error budget, 1 = the whole budget over the SLO period), e.g.
	// `slo:burn_rate{{.Window}}{slo={{quote .SLO}}}`.
	BurnRate string `yaml:"burn_rate"`
	// BudgetRemaining renders the remaining error budget as a ratio (1 =
	// untouched, 0 = spent, negative = overspent).
	BudgetRemaining string `yaml:"budget_remaining"`
}

// TemplateData is what the expression templates see.
type TemplateData struct {
	// SLO is the alert's SLO identity (sloth_id, or the slo label).
	SLO string
	// Window is a Prometheus duration such as "5m" or "1d" (BurnRate only).
	Window string
	// Labels are the alert's labels.
	Labels map[string]string
}

// DefaultConfig returns timeout 300ms, cache_ttl 15s, no URL.
func DefaultConfig() Config {
	return Config{
		Timeout:    model.Duration(300 * time.Millisecond),
		CacheTTL:   model.Duration(15 * time.Second),
		HTTPConfig: commoncfg.DefaultHTTPClientConfig,
	}
}

// UnmarshalYAML fills the defaults, decodes the section over them and
// validates it.
func (c *Config) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultConfig()
	type plain Config
	if err := unmarshal((*plain)(c)); err != nil {
		// A proxy_url that does not parse is printed whole by its decoder:
		// its credentials hidden.
		return fmt.Errorf("decode prometheus: %s", redact.Text(err.Error()))
	}
	return c.Validate()
}

// Validate reports every invalid field, each error prefixed with its key.
func (c *Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case c.URL == "" && !c.FromGeneratorURL:
		add("prometheus.url: required (or set prometheus.from_generator_url)")
	case c.URL != "":
		if _, err := baseURL(c.URL); err != nil {
			add("prometheus.url: %v", err)
		}
	}
	if c.Timeout <= 0 {
		add("prometheus.timeout: must be positive, got %s", c.Timeout)
	}
	if c.CacheTTL < 0 {
		add("prometheus.cache_ttl: must not be negative, got %s", c.CacheTTL)
	}
	if err := c.HTTPConfig.Validate(); err != nil {
		add("prometheus.http_config: %s", redact.Text(err.Error())) // a proxy_url's credentials hidden
	}
	for _, f := range []struct{ key, text string }{
		{"prometheus.expr.burn_rate", c.Expr.BurnRate},
		{"prometheus.expr.budget_remaining", c.Expr.BudgetRemaining},
		{"prometheus.exemplar_query", c.ExemplarQuery},
		{"prometheus.trace_url_template", c.TraceURLTemplate},
	} {
		if _, err := parseTemplate(f.key, f.text); err != nil {
			add("%s: %v", f.key, err)
		}
	}
	if c.Expr.BudgetRemaining != "" && c.Expr.BurnRate == "" {
		add("prometheus.expr.budget_remaining: needs prometheus.expr.burn_rate too")
	}
	return errors.Join(errs...)
}

// parseTemplate parses one template; an empty text is a nil template.
func parseTemplate(name, text string) (*template.Template, error) {
	if text == "" {
		return nil, nil
	}
	return template.New(name).Option("missingkey=error").Funcs(template.FuncMap{"quote": promQuote, "label": label}).Parse(text)
}

// label is the templates' reading of a label by name, the dotted ones
// (OpenTelemetry's service.name) included: an alert without it fails the
// template, so there is no lookup — index would give "", and a selector
// `svc=""` matches the series without the label (an all-services
// aggregate), deciding the alert on another SLO's numbers.
func label(labels map[string]string, name string) (string, error) {
	v, ok := labels[name]
	if !ok {
		return "", fmt.Errorf("the alert has no label %q", name)
	}
	return v, nil
}

// baseURL checks a Prometheus URL (http or https, a host, no query) and
// returns it without a trailing slash, its credentials kept (user:password@
// is sent as basic auth, as for alertmanager.url: they were dropped, and
// every lookup answered 401). Its errors print the URL with its
// credentials hidden (redact.URL): they reach check-config, the logs and
// the answer of POST /-/reload.
func baseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL%s", redact.URL(raw), redact.IPv6Hint(raw)) // url.Parse's error would print raw whole
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q: scheme must be http or https", redact.URL(raw))
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q: no host", redact.URL(raw))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: must not have a query or fragment", redact.URL(raw))
	}
	userinfo := ""
	if u.User != nil {
		userinfo = u.User.String() + "@"
	}
	return strings.TrimSuffix(u.Scheme+"://"+userinfo+u.Host+u.Path, "/"), nil
}

// promQuote renders s as a PromQL double-quoted string literal.
func promQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
