// Package config loads the router's single YAML configuration file: strict
// (unknown keys are errors), defaults filled in each section's UnmarshalYAML,
// whole-file invariants (receiver names, the route tree) checked in Load,
// every error prefixed by its YAML path.
//
// Secrets come from `*_file` keys (relative paths resolved against the
// config file's directory) or from `${ENV}` references, which Load expands
// inside the parsed string values, never in the raw text, so a value is
// always data (an undefined variable is an error; write `$$` for a literal
// dollar sign). No secret is ever printed: errors hide expanded values,
// inline secrets and URL credentials.
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/prometheus/alertmanager/timeinterval"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"
	yaml3 "go.yaml.in/yaml/v3"

	"github.com/alertrouter/alertrouter/enrich"
	"github.com/alertrouter/alertrouter/enrich/slolive"
	"github.com/alertrouter/alertrouter/internal/redact"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/store"
)

//go:embed default.yml
var defaultYAML []byte

// DefaultYAML returns the embedded default configuration file.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Config is the whole configuration file.
type Config struct {
	Auth       AuthConfig      `yaml:"auth,omitempty"`
	Webhook    WebhookConfig   `yaml:"webhook,omitempty"`
	Store      store.Config    `yaml:"store,omitempty"`
	Dedup      DedupConfig     `yaml:"dedup,omitempty"`
	Incidents  IncidentsConfig `yaml:"incidents,omitempty"`
	Classifier enrich.Config   `yaml:"classifier,omitempty"`
	Policies   policies.Config `yaml:"policies,omitempty"`
	// Prometheus is where live SLO context is read at decision time; nil
	// (no `prometheus:` section) decides from the alerts' labels alone.
	Prometheus *slolive.Config `yaml:"prometheus,omitempty"`
	// Flap tunes flap damping (on by default: threshold 4, window 1h,
	// cool_down 10m).
	Flap flap.Config `yaml:"flap,omitempty"`
	// Templates are glob patterns of Alertmanager-language template files.
	Templates []string       `yaml:"templates,omitempty"`
	Route     *routing.Route `yaml:"route"`
	Receivers []*Receiver    `yaml:"receivers"`
	// Console configures the operations console served at /.
	Console ConsoleConfig `yaml:"console,omitempty"`
	// Alertmanager is where the Slack Silence buttons create silences.
	Alertmanager *amsilence.Config `yaml:"alertmanager,omitempty"`
	// TimeIntervals are named time intervals for the routes'
	// mute_time_intervals and active_time_intervals (Alertmanager's).
	TimeIntervals []TimeInterval `yaml:"time_intervals,omitempty"`
	// MuteTimeIntervals is Alertmanager's deprecated name of
	// time_intervals, which it still reads: the same, its names shared
	// with time_intervals'.
	MuteTimeIntervals []TimeInterval `yaml:"mute_time_intervals,omitempty"`

	// Source is where the config came from: a path, or "embedded defaults".
	Source string `yaml:"-"`

	// secrets are the values never to print: every ${ENV} expansion and
	// every inline secret.
	secrets redact.Secrets
}

// ConsoleConfig is the `console` section. The console is read-only unless
// EnableReplay lets it re-send dead letters (the same as `router
// dead-letters replay`).
type ConsoleConfig struct {
	// EnableReplay lets the console re-send dead letters. It needs the
	// console protected: Auth, or basic_auth_users (or required TLS client
	// certificates) in the web configuration (CheckWebConfig).
	EnableReplay bool `yaml:"enable_replay,omitempty"`
	// ProtectedByProxy says that the console is reached only through an
	// authenticating proxy (oauth2-proxy, an Ingress with auth): replay is
	// then allowed without Auth. The router cannot check it.
	ProtectedByProxy bool `yaml:"protected_by_proxy,omitempty"`
	// ExternalURL is the router's address as people reach it; when set,
	// every PagerDuty and Slack notification links to its incident's page,
	// and its host is one the console and the lifecycle endpoints accept
	// state-changing requests for (see ExternalHost).
	ExternalURL string `yaml:"external_url,omitempty"`
	// Auth guards the console (every page, /explain, /journal.jsonl,
	// /dead-letters and its replay, /static), Go's profiles under
	// /debug/pprof/ and the lifecycle endpoints /-/reload and /-/quit; nil
	// leaves them open. It leaves /webhook (guarded by the top-level auth),
	// /slack/* (Slack's signatures), /metrics, /-/healthy and /-/ready as
	// they are, so it combines with both. basic_auth is what browsers
	// prompt for; bearer_token serves scripts.
	Auth *AuthConfig `yaml:"auth,omitempty"`
}

// ExternalHost returns the host name of ExternalURL, lower-cased and
// without its port; "" when ExternalURL is unset or invalid.
func (c ConsoleConfig) ExternalHost() string {
	u, err := url.Parse(c.ExternalURL)
	if c.ExternalURL == "" || err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// AuthConfig is an inbound authentication: the top-level `auth` (POST
// /webhook) and `console.auth`. With neither a bearer token nor basic auth
// set, requests are accepted unauthenticated; with both, either suffices.
type AuthConfig struct {
	BearerToken     commoncfg.Secret `yaml:"bearer_token,omitempty"`
	BearerTokenFile string           `yaml:"bearer_token_file,omitempty"`
	BasicAuth       *BasicAuth       `yaml:"basic_auth,omitempty"`
}

// Bearer reports whether a bearer token is set (inline or from a file).
func (a AuthConfig) Bearer() bool { return a.BearerToken != "" || a.BearerTokenFile != "" }

// Enabled reports whether the authentication asks for anything.
func (a AuthConfig) Enabled() bool { return a.Bearer() || a.BasicAuth != nil }

// validate returns the problems of the block at YAML path path.
func (a AuthConfig) validate(path string) []error {
	var errs []error
	if a.BearerToken != "" && a.BearerTokenFile != "" {
		errs = append(errs, fmt.Errorf("%s: at most one of bearer_token and bearer_token_file may be set", path))
	}
	if ba := a.BasicAuth; ba != nil {
		if ba.Username == "" {
			errs = append(errs, fmt.Errorf("%s.basic_auth.username: required", path))
		}
		if (ba.Password == "") == (ba.PasswordFile == "") {
			errs = append(errs, fmt.Errorf("%s.basic_auth: exactly one of password and password_file must be set", path))
		}
	}
	return errs
}

func (a *AuthConfig) resolvePaths(dir string) {
	a.BearerTokenFile = resolve(dir, a.BearerTokenFile)
	if a.BasicAuth != nil {
		a.BasicAuth.PasswordFile = resolve(dir, a.BasicAuth.PasswordFile)
	}
}

// BasicAuth is a username and password for inbound basic auth.
type BasicAuth struct {
	Username     string           `yaml:"username"`
	Password     commoncfg.Secret `yaml:"password,omitempty"`
	PasswordFile string           `yaml:"password_file,omitempty"`
}

// WebhookConfig bounds one webhook.
type WebhookConfig struct {
	// MaxBodyBytes bounds the body (default 64 MiB: 100k small alerts fit).
	MaxBodyBytes int64 `yaml:"max_body_bytes,omitempty"`
	// Timeout bounds processing, notifications included (default 25s). Keep
	// it below the webhook timeout of Alertmanager's webhook_config.
	Timeout model.Duration `yaml:"timeout,omitempty"`
	// MaxConcurrent caps the webhooks processed at once (default 128);
	// beyond it a webhook is answered 503 with Retry-After and Alertmanager
	// retries it. The HTTP server's read, write and idle timeouts derive
	// from Timeout (README.md, "Command line").
	MaxConcurrent int `yaml:"max_concurrent,omitempty"`
}

// ShortClaimTTL says, when dedup.claim_ttl is not longer than
// webhook.timeout, what follows: a send slower than claim_ttl (PagerDuty
// answering late, within the webhook's timeout) leaves its transition
// unclaimed while it is in flight, so another replica sends it too. ""
// otherwise. A warning, not an error: tests and small setups shorten
// claim_ttl on purpose (docs/architecture.md, step 5).
func (c *Config) ShortClaimTTL() string {
	if c.Dedup.ClaimTTL > c.Webhook.Timeout {
		return ""
	}
	return fmt.Sprintf("dedup.claim_ttl (%s) is not longer than webhook.timeout (%s): a send slower than claim_ttl is no longer claimed while in flight, and another replica may send it again (PagerDuty folds a second trigger; Slack may post the parent twice)",
		c.Dedup.ClaimTTL, c.Webhook.Timeout)
}

// LongSendTimeouts says, for each PagerDuty or Slack entry whose timeout
// (one request's bound) is not shorter than webhook.timeout, what follows:
// an answer slower than the webhook's deadline leaves the send's outcome
// unknown when the webhook must answer, so it is answered 5xx and
// Alertmanager's retry sends it again although it may have arrived.
// Warnings, not errors: PagerDuty folds a repeated trigger (one dedup_key).
// prometheus.timeout too: a webhook's live lookups wait one timeout and a
// quarter, at most half of the webhook's time left, so a longer timeout
// is cut short by the webhook's deadline.
func (c *Config) LongSendTimeouts() []string {
	var out []string
	if p := c.Prometheus; p != nil && time.Duration(p.Timeout)*5/4 > time.Duration(c.Webhook.Timeout)/2 {
		out = append(out, fmt.Sprintf("prometheus.timeout (%s) and a quarter is longer than half of webhook.timeout (%s): a webhook's live SLO lookups are cut at half of its time left, and a Prometheus that slow reads as too slow for its SLOs (their alerts decided from their labels)",
			p.Timeout, c.Webhook.Timeout))
	}
	for _, r := range c.Receivers {
		for i, pd := range r.PagerdutyConfigs {
			if pd.Timeout >= c.Webhook.Timeout {
				out = append(out, fmt.Sprintf("receiver %q pagerduty_configs[%d].timeout (%s) is not shorter than webhook.timeout (%s): a PagerDuty answer slower than the webhook's deadline is answered 5xx though the event may have been taken, and Alertmanager's retry sends it again (PagerDuty folds a repeated trigger with the same dedup_key)",
					r.Name, i, pd.Timeout, c.Webhook.Timeout))
			}
		}
		for i, sl := range r.SlackConfigs {
			if sl.Timeout >= c.Webhook.Timeout {
				out = append(out, fmt.Sprintf("receiver %q slack_configs[%d].timeout (%s) is not shorter than webhook.timeout (%s): a Slack answer slower than the webhook's deadline is answered 5xx though the message may have been posted, and Alertmanager's retry may post it again",
					r.Name, i, sl.Timeout, c.Webhook.Timeout))
			}
		}
	}
	return out
}

// UnmarshalYAML fills the defaults, then decodes the section.
func (c *WebhookConfig) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultWebhook()
	type plain WebhookConfig
	return unmarshal((*plain)(c))
}

// DefaultWebhook returns the webhook defaults.
func DefaultWebhook() WebhookConfig {
	return WebhookConfig{MaxBodyBytes: 64 << 20, Timeout: model.Duration(25 * time.Second), MaxConcurrent: 128}
}

// DedupConfig tunes exactly-once delivery; see routing.DedupOptions.
type DedupConfig struct {
	ClaimTTL       model.Duration `yaml:"claim_ttl,omitempty"`
	NotifiedTTL    model.Duration `yaml:"notified_ttl,omitempty"`
	RepeatInterval model.Duration `yaml:"repeat_interval,omitempty"`
	InFlightWait   model.Duration `yaml:"in_flight_wait,omitempty"`
}

// DefaultDedup returns the dedup defaults: a 1m claim (how long a crashed
// replica can hold a transition), 7d memory of notified transitions
// (outlives any sane repeat_interval), a 4h reminder (Alertmanager's
// default repeat_interval) and 2s of waiting for a concurrent replica.
func DefaultDedup() DedupConfig {
	return DedupConfig{
		ClaimTTL:       model.Duration(time.Minute),
		NotifiedTTL:    model.Duration(7 * 24 * time.Hour),
		RepeatInterval: model.Duration(4 * time.Hour),
		InFlightWait:   model.Duration(2 * time.Second),
	}
}

// UnmarshalYAML fills the defaults, then decodes the section.
func (c *DedupConfig) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultDedup()
	type plain DedupConfig
	return unmarshal((*plain)(c))
}

// IncidentsConfig says which labels make alerts one incident, and how
// long updates of an open incident wait for each other.
type IncidentsConfig struct {
	// GroupBy defaults to routing.DefaultGroupBy (sector, service, kpi).
	GroupBy []string `yaml:"group_by,omitempty"`
	// UpdateWindow is how long, at most, an update of an open incident (new
	// members, members resolving while others fire) waits for other
	// webhooks' updates of it, to go out as one thread reply; the wait ends
	// early once the webhooks in flight for the incident have arrived. 0
	// sends each at once.
	// Openings and resolutions (pages) never wait. See
	// routing.Pipeline.UpdateWindow.
	UpdateWindow model.Duration `yaml:"update_window"`
	// RetriggerInterval is how often, at most, new alerts joining an open
	// incident send PagerDuty its trigger again, per incident across
	// replicas, less a twentieth (at most 30 s) for Alertmanager's flush
	// cadence (folded while PagerDuty's incident is open; a new page when
	// it was resolved there). 0 never. See routing.Pipeline.RetriggerInterval.
	RetriggerInterval model.Duration `yaml:"retrigger_interval"`
}

// DefaultIncidents returns the incidents defaults: the built-in grouping, a
// 5ms update window (docs/architecture.md, step 6, "Send") and a 5m
// retrigger interval (Alertmanager's default group_interval, at which its
// own PagerDuty integration triggers a changed group again).
func DefaultIncidents() IncidentsConfig {
	return IncidentsConfig{UpdateWindow: model.Duration(5 * time.Millisecond), RetriggerInterval: model.Duration(5 * time.Minute)}
}

// UnmarshalYAML fills the defaults, then decodes the section.
func (c *IncidentsConfig) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultIncidents()
	type plain IncidentsConfig
	return unmarshal((*plain)(c))
}

// TimeInterval is one named entry of time_intervals, as in Alertmanager.
type TimeInterval struct {
	Name          string                      `yaml:"name"`
	TimeIntervals []timeinterval.TimeInterval `yaml:"time_intervals"`
}

// Receiver is a named set of integrations, as in Alertmanager.
type Receiver struct {
	Name             string              `yaml:"name"`
	PagerdutyConfigs []*pagerduty.Config `yaml:"pagerduty_configs,omitempty"`
	SlackConfigs     []*slack.Config     `yaml:"slack_configs,omitempty"`
	// LogConfigs print each notification as a JSON line on stdout.
	LogConfigs []*LogConfig `yaml:"log_configs,omitempty"`
}

// LogConfig is the embedded `log` integration; it has no settings yet.
type LogConfig struct{}

// Default returns a Config with every section's defaults and no receivers.
func Default() *Config {
	return &Config{Webhook: DefaultWebhook(), Dedup: DefaultDedup(), Incidents: DefaultIncidents(), Store: store.DefaultConfig(),
		Classifier: enrich.DefaultConfig(), Policies: policies.DefaultConfig(), Flap: flap.DefaultConfig()}
}

// Load reads, expands, parses and validates the file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config %q: %w", path, err)
	}
	c, err := Parse(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("config %q: %w", path, err)
	}
	c.Source = path
	return c, nil
}

// LoadDefault returns the embedded default configuration.
func LoadDefault() *Config {
	c, err := Parse(defaultYAML, ".")
	if err != nil {
		panic("embedded default config is invalid: " + err.Error())
	}
	c.Source = "embedded defaults"
	return c
}

// Parse parses a config file's content; every relative path (each
// `*_file`, TLS files, template globs) is resolved against dir, the config
// file's directory.
func Parse(b []byte, dir string) (*Config, error) {
	b, doc, expanded, err := expandEnv(b)
	if err != nil {
		return nil, err
	}
	c := Default()
	c.secrets.Add(expanded...)
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		// Say where: the YAML path and line of each problem (the nodes
		// of an expanded document keep the lines as written).
		if doc == nil {
			var n yaml3.Node
			if yaml3.Unmarshal(b, &n) == nil {
				doc = &n
			}
		}
		if located := locateError(doc, reflect.TypeOf(Config{}), len(b)); located != nil {
			err = located
		}
		return nil, c.Redact(fmt.Errorf("parse YAML: %w", err))
	}
	c.restoreNullSections(b)
	c.collectSecrets()
	c.resolvePaths(dir)
	if err := c.Validate(); err != nil {
		return nil, c.Redact(err)
	}
	return c, nil
}

func resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func (c *Config) resolvePaths(dir string) {
	c.Auth.resolvePaths(dir)
	if c.Console.Auth != nil {
		c.Console.Auth.resolvePaths(dir)
	}
	for i, t := range c.Templates {
		c.Templates[i] = resolve(dir, t)
	}
	if c.Alertmanager != nil {
		c.Alertmanager.HTTPConfig.SetDirectory(dir)
	}
	if c.Prometheus != nil {
		c.Prometheus.HTTPConfig.SetDirectory(dir)
	}
	if c.Store.Redis != nil {
		c.Store.Redis.SetDirectory(dir)
	}
	for _, r := range c.Receivers {
		if r == nil {
			continue
		}
		for _, pd := range r.PagerdutyConfigs {
			if pd != nil {
				pd.RoutingKeyFile = resolve(dir, pd.RoutingKeyFile)
				pd.ServiceKeyFile = resolve(dir, pd.ServiceKeyFile)
				pd.HTTPConfig.SetDirectory(dir)
			}
		}
		for _, s := range r.SlackConfigs {
			if s != nil {
				s.TokenFile = resolve(dir, s.TokenFile)
				s.AppTokenFile = resolve(dir, s.AppTokenFile)
				s.APIURLFile = resolve(dir, s.APIURLFile)
				s.HTTPConfig.SetDirectory(dir)
				s.SigningSecretFile = resolve(dir, s.SigningSecretFile)
			}
		}
	}
}

func prefix(section string, err error) []error {
	if err == nil {
		return nil
	}
	var out []error
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			out = append(out, prefix(section, e)...)
		}
		return out
	}
	return []error{fmt.Errorf("%s.%w", section, err)}
}

// Validate checks every section and the whole-file invariants, returning
// every problem found (errors.Join), each prefixed by its YAML path.
func (c *Config) Validate() error {
	var errs []error
	errs = append(errs, prefix("store", c.Store.Validate())...)
	errs = append(errs, prefix("classifier", c.Classifier.Validate())...)
	errs = append(errs, prefix("policies", c.Policies.Validate())...)
	if u := c.Console.ExternalURL; u != "" {
		if pu, err := redact.HTTPURL(u); err != nil {
			errs = append(errs, fmt.Errorf("console.external_url: %w", err))
		} else if pu.User != nil {
			errs = append(errs, fmt.Errorf("console.external_url: %q holds credentials, which every PagerDuty and Slack notification would carry in its link: remove them (protect the console with console.auth)", redact.URL(u)))
		}
	}
	if a := c.Console.Auth; a != nil {
		if !a.Enabled() {
			errs = append(errs, errors.New("console.auth: set basic_auth (username, password or password_file) or bearer_token(_file); remove the block to leave the console open"))
		}
		errs = append(errs, a.validate("console.auth")...)
	}
	errs = append(errs, c.Flap.Validate())
	if c.Prometheus != nil {
		errs = append(errs, c.Prometheus.Validate())
	}
	errs = append(errs, c.Auth.validate("auth")...)
	if c.Webhook.MaxBodyBytes <= 0 {
		errs = append(errs, errors.New("webhook.max_body_bytes: must be positive"))
	}
	if c.Webhook.Timeout <= 0 {
		errs = append(errs, errors.New("webhook.timeout: must be positive"))
	}
	if c.Webhook.MaxConcurrent <= 0 {
		errs = append(errs, errors.New("webhook.max_concurrent: must be positive"))
	}
	d := c.Dedup
	if d.ClaimTTL <= 0 {
		errs = append(errs, errors.New("dedup.claim_ttl: must be positive"))
	}
	if d.NotifiedTTL <= d.RepeatInterval || d.NotifiedTTL <= d.ClaimTTL {
		errs = append(errs, fmt.Errorf("dedup.notified_ttl: %s must be longer than repeat_interval (%s) and claim_ttl (%s), or notified alerts would be sent again", d.NotifiedTTL, d.RepeatInterval, d.ClaimTTL))
	}
	if d.InFlightWait < 0 || d.RepeatInterval < 0 {
		errs = append(errs, errors.New("dedup: durations must not be negative"))
	}
	if w := c.Incidents.UpdateWindow; w < 0 || w >= c.Webhook.Timeout {
		errs = append(errs, fmt.Errorf("incidents.update_window: %s must be at least 0 and shorter than webhook.timeout (%s)", w, c.Webhook.Timeout))
	}
	for i, t := range c.Templates {
		if _, err := filepath.Glob(t); err != nil {
			errs = append(errs, fmt.Errorf("templates[%d]: %w", i, err))
		}
	}
	known, blackholes := map[string]bool{}, map[string]bool{}
	for i, r := range c.Receivers {
		path := fmt.Sprintf("receivers[%d]", i)
		if r == nil {
			errs = append(errs, fmt.Errorf("%s: empty receiver", path))
			continue
		}
		if r.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: required", path))
		} else if known[r.Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate receiver name %q", path, r.Name))
		}
		known[r.Name] = true
		if len(r.PagerdutyConfigs)+len(r.SlackConfigs)+len(r.LogConfigs) == 0 {
			// Alertmanager's blackhole: what routes here is recorded, not
			// sent (routing.Route.SetBlackholes).
			blackholes[r.Name] = true
		}
		for j, pd := range r.PagerdutyConfigs {
			if pd == nil {
				errs = append(errs, fmt.Errorf("%s.pagerduty_configs[%d]: empty", path, j))
				continue
			}
			errs = append(errs, prefix(fmt.Sprintf("%s.pagerduty_configs[%d]", path, j), pd.Validate())...)
		}
		for j, s := range r.SlackConfigs {
			if s == nil {
				errs = append(errs, fmt.Errorf("%s.slack_configs[%d]: empty", path, j))
				continue
			}
			errs = append(errs, prefix(fmt.Sprintf("%s.slack_configs[%d]", path, j), s.Validate())...)
		}
	}
	if c.Route == nil {
		errs = append(errs, errors.New("route: required (the root route names the default receiver)"))
	} else if err := c.Route.Compile(known); err != nil {
		errs = append(errs, err)
	} else {
		named := map[string][]timeinterval.TimeInterval{}
		for _, l := range []struct {
			key  string
			list []TimeInterval
		}{{"time_intervals", c.TimeIntervals}, {"mute_time_intervals", c.MuteTimeIntervals}} {
			for i, ti := range l.list {
				if ti.Name == "" || named[ti.Name] != nil {
					errs = append(errs, fmt.Errorf("%s[%d].name: missing or duplicate name %q", l.key, i, ti.Name))
					continue
				}
				named[ti.Name] = append([]timeinterval.TimeInterval{}, ti.TimeIntervals...)
			}
		}
		if err := c.Route.SetTimeIntervals(named); err != nil {
			errs = append(errs, err)
		}
		c.Route.SetBlackholes(blackholes)
	}
	errs = append(errs, c.validateTriage()...)
	return errors.Join(errs...)
}

// String renders the config as YAML with every secret hidden.
func (c *Config) String() string {
	b, err := yaml.Marshal(c)
	if err != nil {
		return "<config: " + err.Error() + ">"
	}
	return string(b)
}
