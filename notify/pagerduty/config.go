package pagerduty

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/internal/redact"
	"github.com/alertrouter/alertrouter/notify"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// DefaultURL is PagerDuty's Events API v2 endpoint.
const DefaultURL = "https://events.pagerduty.com/v2/enqueue"

const enqueuePath = "/v2/enqueue"

// Config is one pagerduty_configs entry of a receiver.
//
//	pagerduty_configs:
//	  - routing_key_file: /etc/router/pd-key   # or routing_key: ${PD_KEY}
//	    url: https://events.pagerduty.com/v2/enqueue
//	    severity: '{{ if eq .Action "page" }}critical{{ else }}warning{{ end }}'
//	    summary: '{{ template "alertrouter.summary" . }}'
//	    timeout: 10s
//	    custom_details:
//	      team: '{{ .CommonLabels.team }}'
type Config struct {
	// RoutingKey is the integration key of the PagerDuty service.
	RoutingKey commoncfg.Secret `yaml:"routing_key,omitempty"`
	// RoutingKeyFile names a file holding the routing key (trailing space
	// trimmed); exclusive with RoutingKey.
	RoutingKeyFile string `yaml:"routing_key_file,omitempty"`
	// URL is the Events API v2 enqueue URL; it must end in /v2/enqueue.
	URL string `yaml:"url,omitempty"`
	// Client is the event's client name shown in PagerDuty, a template (as
	// in Alertmanager).
	Client string `yaml:"client,omitempty"`
	// ClientURL is a template for the event's client_url (default:
	// Alertmanager's alerts page of the incident, AlertsURL).
	ClientURL string `yaml:"client_url,omitempty"`
	// Severity is a template; empty derives it from the decision (page →
	// critical, ticket → warning, none → info). A rendered value outside
	// critical/error/warning/info falls back to the derived one.
	Severity string `yaml:"severity,omitempty"`
	// Summary is a template (default alertrouter.summary), cut to 1024.
	Summary string `yaml:"summary,omitempty"`
	// Source is a template (default: the first alert's instance or job).
	Source string `yaml:"source,omitempty"`
	// Timeout bounds one HTTP request.
	Timeout model.Duration `yaml:"timeout,omitempty"`
	// CustomDetails are extra templated entries of custom_details.
	CustomDetails map[string]string `yaml:"custom_details,omitempty"`

	// Compat holds Alertmanager's keys (send_resolved, http_config,
	// description, details, links, images, class, component, group …).
	Compat `yaml:",inline"`

	// clientSet is true when the entry sets client, DefaultClient included.
	clientSet bool
}

// DefaultClient is the event's client name when client is unset.
const DefaultClient = "alertrouter"

// DefaultConfig returns the defaults: PagerDuty's URL, client
// "alertrouter", a 10s timeout.
func DefaultConfig() Config {
	return Config{URL: DefaultURL, Client: DefaultClient, Timeout: model.Duration(10 * time.Second)}
}

// UnmarshalYAML fills the defaults, then decodes the entry.
func (c *Config) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultConfig()
	type plain Config
	if err := unmarshal((*plain)(c)); err != nil {
		return err
	}
	var keys map[string]interface{}
	if unmarshal(&keys) == nil {
		_, c.clientSet = keys["client"]
	}
	return nil
}

// alertmanagerDefaults are the keys of c that Alertmanager renders from its
// default templates when they are unset (pagerduty.default.description
// …), and whether c leaves them unset: description with summary (the
// router's name of it), client when it is the router's default.
func (c *Config) alertmanagerDefaults() []notify.DefaultKey {
	return []notify.DefaultKey{
		{Key: "description", Template: "pagerduty.default.description", Unset: c.Summary == "" && c.Description == "", Field: &c.Description},
		{Key: "client", Template: "pagerduty.default.client", Unset: c.Client == DefaultClient && !c.clientSet, Field: &c.Client},
		{Key: "client_url", Template: "pagerduty.default.clientURL", Unset: c.ClientURL == "", Field: &c.ClientURL},
	}
}

// RedefinedDefaults returns the keys c leaves unset whose Alertmanager
// default template the template files of t redefine, directly or in a
// template it calls (a file defining pagerduty.default.description, or
// __subject, which it calls; __alertmanager for the client,
// __alertmanagerURL for the client URL): Alertmanager's event changes with
// them, so the router renders that default too instead of its own
// (alertrouter.summary, client "alertrouter", the incident's alerts page).
// Keys left unset whose defaults nobody redefined keep the router's.
func (c *Config) RedefinedDefaults(t *notify.Templates) []notify.DefaultKey {
	return t.RedefinedDefaults(c.alertmanagerDefaults())
}

// Validate returns every problem of the entry, each prefixed by its YAML key.
func (c *Config) Validate() error {
	var errs []error
	switch {
	case c.RoutingKey == "" && c.RoutingKeyFile == "" && c.ServiceKey == "" && c.ServiceKeyFile == "":
		errs = append(errs, errors.New("routing_key: one of routing_key or routing_key_file is required"))
	case c.RoutingKey != "" && c.RoutingKeyFile != "":
		errs = append(errs, errors.New("routing_key: at most one of routing_key and routing_key_file may be set"))
	case notify.IsTemplate(string(c.RoutingKey)):
		errs = append(errs, errors.New("routing_key: "+TemplatedRoutingKey))
	}
	if _, err := endpointBase(c.URL); err != nil {
		errs = append(errs, fmt.Errorf("url: %w", err))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("timeout: must be positive"))
	}
	errs = append(errs, c.Compat.validate()...)
	return errors.Join(errs...)
}

// TemplatedRoutingKey says why a templated routing key is refused and
// what to do instead. Alertmanager renders routing_key (and the content of
// routing_key_file) with each notification's data; the router does not:
// an incident's trigger and resolve, Slack triage's Acknowledge and
// Resolve, and Escalate's page and its resolve must all reach the
// PagerDuty service that holds the incident, and the later ones have no
// notification to render a key from. A templated key imported as it was
// would fail every send (PagerDuty answers 400 to the template's text).
const TemplatedRoutingKey = "a template ({{ … }}): the router sends an incident's trigger, its resolve and the acknowledge and resolve clicked in Slack with one fixed key per pagerduty_configs entry, and does not render it as Alertmanager does. " +
	"Route by the label instead: one receiver per PagerDuty service, each with its own fixed routing_key (or routing_key_file), and a route per value of the label sending to it (matchers: ['pd_key=\"<value>\"'])"

// endpointBase turns the enqueue URL into the base go-pagerduty wants (it
// appends /v2/enqueue itself).
func endpointBase(raw string) (string, error) {
	u, err := redact.HTTPURL(raw)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(u.Path, enqueuePath) || u.RawQuery != "" {
		return "", fmt.Errorf("%q must end in %s (the Events API v2 enqueue URL)", redact.URL(raw), enqueuePath)
	}
	return strings.TrimSuffix(raw, enqueuePath), nil
}
