package slack

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/alertrouter/alertrouter/internal/redact"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// DefaultAPIURL is the Slack Web API base URL.
const DefaultAPIURL = "https://slack.com/api/"

// Config is one slack_configs entry of a receiver.
//
//	slack_configs:
//	  - token_file: /etc/router/slack-token   # or token: ${SLACK_TOKEN}
//	    channel: '#triage'
//	    mirror_pages: true
//	    timeout: 10s
//	    title: '{{ template "alertrouter.title" . }}'
//	    text: '{{ template "alertrouter.text" . }}'
type Config struct {
	// APIURL is the Web API base URL, ending in "/".
	APIURL string `yaml:"api_url,omitempty"`
	// Token is the bot token (xoxb-…).
	Token commoncfg.Secret `yaml:"token,omitempty"`
	// TokenFile names a file holding the token; exclusive with Token.
	TokenFile string `yaml:"token_file,omitempty"`
	// Channel is the triage channel (a name like "#triage" or an id), or a
	// template rendered with each incident's data for its parent message
	// ('#{{ .CommonLabels.team }}-alerts', as Alertmanager renders it);
	// replies and edits go to the parent's channel.
	Channel string `yaml:"channel"`
	// MirrorPages posts pages to the channel too, with their PagerDuty
	// reference; false leaves pages to PagerDuty alone.
	MirrorPages bool `yaml:"mirror_pages"`
	// Timeout bounds one HTTP request.
	Timeout model.Duration `yaml:"timeout,omitempty"`
	// Title is the header template (default alertrouter.title), ≤ 150 chars.
	Title string `yaml:"title,omitempty"`
	// Text is the template of the text under the header (default
	// alertrouter.text).
	Text string `yaml:"text,omitempty"`

	// Triage from Slack (README, "Triage from Slack"): buttons on the
	// incident's parent message, answered at POST /slack/interactions.

	// SigningSecret is the Slack app's signing secret; interaction requests
	// whose X-Slack-Signature it does not verify are refused.
	SigningSecret commoncfg.Secret `yaml:"signing_secret,omitempty"`
	// SigningSecretFile names a file holding the signing secret; exclusive
	// with SigningSecret.
	SigningSecretFile string `yaml:"signing_secret_file,omitempty"`
	// Actions are the buttons offered: ack, silence (with unsilence),
	// escalate, resolve. Empty offers none. Alertmanager's attachment
	// buttons (a list of mappings) load too, without effect (see Unused).
	Actions TriageActions `yaml:"actions,omitempty"`
	// Authorized lists, per action, the Slack user ids (U…, W…) and
	// user-group ids (S…) allowed to take it; an action not listed is open
	// to anyone in the channel.
	Authorized map[string][]string `yaml:"authorized,omitempty"`
	// EscalateTo names the receiver whose first pagerduty_configs entry
	// Escalate pages (default: this receiver).
	EscalateTo string `yaml:"escalate_to,omitempty"`

	// Compat holds Alertmanager's keys (send_resolved, http_config,
	// app_token, username, icon_*, and the attachment keys).
	Compat `yaml:",inline"`
}

// DefaultConfig returns the defaults: Slack's API URL, pages mirrored, a
// 10s timeout.
func DefaultConfig() Config {
	return Config{APIURL: DefaultAPIURL, MirrorPages: true, Timeout: model.Duration(10 * time.Second)}
}

// UnmarshalYAML fills the defaults, then decodes the entry.
func (c *Config) UnmarshalYAML(unmarshal func(interface{}) error) error {
	*c = DefaultConfig()
	type plain Config
	return unmarshal((*plain)(c))
}

// TriageActions are the triage buttons of an entry. In YAML it is a list of
// action names; Alertmanager's `actions` — a list of attachment button
// mappings — is also accepted, so a receiver ports unchanged, and only
// counted (check-config lists it among the keys without effect).
type TriageActions struct {
	Names             []string
	AttachmentButtons int
}

// UnmarshalYAML reads a list of names, or Alertmanager's list of button
// mappings.
func (a *TriageActions) UnmarshalYAML(unmarshal func(interface{}) error) error {
	var names []string
	if err := unmarshal(&names); err == nil {
		*a = TriageActions{Names: names}
		return nil
	}
	var buttons []map[string]interface{}
	if err := unmarshal(&buttons); err != nil {
		return errors.New("actions: a list of triage action names (ack, silence, escalate, resolve) or Alertmanager's attachment buttons")
	}
	*a = TriageActions{AttachmentButtons: len(buttons)}
	return nil
}

// Unused lists the Alertmanager keys set in c that change nothing in the
// router's message, Alertmanager's attachment buttons included.
func (c *Config) Unused() []string {
	out := c.Compat.Unused()
	if c.Actions.AttachmentButtons > 0 {
		out = append(out, "actions (attachment buttons)")
	}
	return out
}

// MarshalYAML writes the names.
func (a TriageActions) MarshalYAML() (interface{}, error) { return a.Names, nil }

// WebhookMode reports whether the entry posts to an incoming webhook
// (Alertmanager's api_url / api_url_file) instead of the Web API: one
// message per notification, no thread, no parent edit, no buttons. As
// Alertmanager reads slack_configs, an api_url without any token is an
// incoming webhook whatever its host (Slack's …/services/…, or a
// Slack-compatible one: Mattermost, Rocket.Chat …); with a token it is the
// Web API base.
func (c *Config) WebhookMode() bool {
	if c.APIURLFile != "" || IsWebhookURL(c.APIURL) {
		return true
	}
	noToken := c.Token == "" && c.TokenFile == "" && c.AppToken == "" && c.AppTokenFile == ""
	return noToken && c.APIURL != "" && c.APIURL != DefaultAPIURL
}

// Validate returns every problem of the entry, each prefixed by its YAML key.
func (c *Config) Validate() error {
	var errs []error
	if c.WebhookMode() {
		return c.validateWebhookMode()
	}
	switch {
	case c.Token == "" && c.TokenFile == "" && c.AppToken == "" && c.AppTokenFile == "":
		errs = append(errs, errors.New("token: one of token or token_file is required (Alertmanager's app_token or app_token_file also do)"))
	case (c.Token != "") && (c.TokenFile != "") || (c.AppToken != "") && (c.AppTokenFile != "") || (c.Token != "" || c.TokenFile != "") && (c.AppToken != "" || c.AppTokenFile != ""):
		errs = append(errs, errors.New("token: at most one of token, token_file, app_token and app_token_file may be set"))
	}
	errs = append(errs, c.Compat.validate(c.APIURL)...)
	if c.Channel == "" {
		errs = append(errs, errors.New("channel: is required"))
	}
	if u, err := redact.HTTPURL(c.APIURL); err != nil {
		errs = append(errs, fmt.Errorf("api_url: %w", err))
	} else if err := noQuery(u); err != nil {
		errs = append(errs, fmt.Errorf("api_url: %q %w", redact.URL(c.APIURL), err))
	}
	if c.AppURL != "" {
		if u, err := url.Parse(c.AppURL); err == nil && noQuery(u) != nil {
			errs = append(errs, fmt.Errorf("app_url: %q %w", redact.URL(c.AppURL), noQuery(u)))
		}
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("timeout: must be positive"))
	}
	errs = append(errs, c.validateTriage()...)
	return errors.Join(errs...)
}

// noQuery refuses a Web API base URL with a query or a fragment: the
// methods' paths are appended to it (…/api/?token=…/chat.postMessage
// reaches no method), and a query there is often a credential that every
// error would then print.
func noQuery(u *url.URL) error {
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must not have a query or fragment: the Web API methods are appended to its path (give a token with token or token_file)")
	}
	return nil
}

// validateWebhookMode checks an incoming-webhook entry: the URL (from
// api_url or api_url_file, not both), and no Web API feature it cannot do.
func (c *Config) validateWebhookMode() error {
	var errs []error
	if c.APIURLFile != "" && c.APIURL != DefaultAPIURL && c.APIURL != "" {
		errs = append(errs, errors.New("api_url: at most one of api_url and api_url_file may be set"))
	}
	if c.APIURLFile == "" {
		if _, err := redact.HTTPURL(c.APIURL); err != nil {
			errs = append(errs, fmt.Errorf("api_url: %w", err))
		}
	}
	if c.Token != "" || c.TokenFile != "" || c.AppToken != "" || c.AppTokenFile != "" {
		errs = append(errs, errors.New("token: an incoming webhook (api_url) posts without a token; set either api_url or a token, not both"))
	}
	if len(c.Actions.Names) > 0 {
		errs = append(errs, errors.New("actions: the triage buttons need the Web API (token and channel), not an incoming webhook (api_url)"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("timeout: must be positive"))
	}
	errs = append(errs, c.Compat.validate("")...)
	return errors.Join(errs...)
}
