package slack

import (
	"errors"
	"log/slog"
	"sort"
	"strings"

	amslack "github.com/prometheus/alertmanager/notify/slack"
	"github.com/prometheus/alertmanager/template"
	commoncfg "github.com/prometheus/common/config"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
)

// Compat are the keys of Alertmanager's slack_configs (v0.35) beyond the
// router's own, decoded into Alertmanager's own types where it has them, so
// a receiver ports unchanged. They are inlined into Config. Which ones take
// effect is listed by Unused; check-config prints the others.
type Compat struct {
	// SendResolved false keeps resolves from Slack: the incident state
	// still closes, nothing is sent (default true).
	SendResolved *bool `yaml:"send_resolved,omitempty"`
	// HTTPConfig configures the HTTP client (proxy, TLS, authorization,
	// OAuth2).
	HTTPConfig *commoncfg.HTTPClientConfig `yaml:"http_config,omitempty"`
	// APIURLFile holds an incoming-webhook URL (Alertmanager's api_url
	// mode, see WebhookMode).
	APIURLFile string `yaml:"api_url_file,omitempty"`
	// AppToken and AppTokenFile are Alertmanager's names of the bot token
	// (token/token_file).
	AppToken     commoncfg.Secret `yaml:"app_token,omitempty"`
	AppTokenFile string           `yaml:"app_token_file,omitempty"`
	// AppURL is Alertmanager's Web API URL (chat.postMessage); the router
	// uses its base as api_url.
	AppURL string `yaml:"app_url,omitempty"`
	// Username, IconEmoji and IconURL set the poster's name and icon; each
	// is a template, rendered with the notification's data as Alertmanager
	// renders it.
	Username  string `yaml:"username,omitempty"`
	IconEmoji string `yaml:"icon_emoji,omitempty"`
	IconURL   string `yaml:"icon_url,omitempty"`
	// LinkNames links @mentions and #channels in the text.
	LinkNames bool `yaml:"link_names"`

	// Attachment keys of Alertmanager's message: accepted so a config loads
	// unchanged; the router's Block Kit message replaces the attachment
	// (see Unused). Alertmanager's `actions` (attachment buttons) shares its
	// key with the triage buttons (Config.Actions), which accepts both.
	Color               string                `yaml:"color,omitempty"`
	TitleLink           string                `yaml:"title_link,omitempty"`
	Pretext             string                `yaml:"pretext,omitempty"`
	MessageText         string                `yaml:"message_text,omitempty"`
	Fields              []*amslack.SlackField `yaml:"fields,omitempty"`
	ShortFields         bool                  `yaml:"short_fields"`
	Footer              string                `yaml:"footer,omitempty"`
	Fallback            string                `yaml:"fallback,omitempty"`
	CallbackID          string                `yaml:"callback_id,omitempty"`
	ImageURL            string                `yaml:"image_url,omitempty"`
	ThumbURL            string                `yaml:"thumb_url,omitempty"`
	MrkdwnIn            []string              `yaml:"mrkdwn_in,omitempty"`
	UpdateMessage       bool                  `yaml:"update_message"`
	PostUpdatesToThread bool                  `yaml:"post_updates_to_thread"`
}

// Resolved reports whether resolves are sent (send_resolved, default true).
func (c *Compat) Resolved() bool { return c.SendResolved == nil || *c.SendResolved }

// Unused lists the Alertmanager keys set in c that change nothing in the
// router's message (its Block Kit layout, one parent per incident edited
// on resolve and threaded updates, replaces Alertmanager's attachment).
func (c *Compat) Unused() []string {
	var out []string
	for key, set := range map[string]bool{
		"color": c.Color != "", "title_link": c.TitleLink != "", "pretext": c.Pretext != "",
		"message_text": c.MessageText != "", "fields": len(c.Fields) > 0, "short_fields": c.ShortFields,
		"footer": c.Footer != "", "fallback": c.Fallback != "", "callback_id": c.CallbackID != "",
		"image_url": c.ImageURL != "", "thumb_url": c.ThumbURL != "", "mrkdwn_in": len(c.MrkdwnIn) > 0,
	} {
		if set {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

// IsWebhookURL reports whether an api_url is a Slack incoming webhook
// (https://hooks.slack.com/services/…) rather than the Web API base.
func IsWebhookURL(apiURL string) bool { return strings.Contains(apiURL, "/services/") }

// validate checks the Alertmanager keys.
func (c *Compat) validate(apiURL string) []error {
	var errs []error
	if c.HTTPConfig != nil {
		if err := c.HTTPConfig.Validate(); err != nil {
			errs = append(errs, errors.New("http_config: "+err.Error()))
		}
	}
	return errs
}

// poster returns the poster keys (username, icon_emoji, icon_url) for one
// message: each a template, rendered with the notification's data as
// Alertmanager renders them ('{{ .CommonLabels.team }}-alerts'); a literal
// value is used as it is.
func (n *Notifier) poster(data *notify.Data) (username, iconEmoji, iconURL string) {
	return n.posterWith(n.deps.Templates, n.logger, data)
}

// posterWith is poster rendered with t, logging to logger.
func (n *Notifier) posterWith(t *notify.Templates, logger *slog.Logger, data *notify.Data) (username, iconEmoji, iconURL string) {
	render := func(field, text string) string {
		if !notify.IsTemplate(text) {
			return text
		}
		return t.Render(logger, field, text, "", data)
	}
	c := &n.cfg.Compat
	iconURL = render("icon_url", c.IconURL)
	if iconURL != "" && !notify.WebURL(iconURL) {
		// Rendered from an alert's annotation: a javascript: or data:
		// URL is no icon Slack should fetch (an audit).
		if logger != nil {
			logger.Warn("icon_url rendered to no http(s) URL: left out", "icon_url", iconURL)
		}
		iconURL = ""
	}
	return render("username", c.Username), render("icon_emoji", c.IconEmoji), iconURL
}

// postOptions are the message options of the poster keys, rendered with
// data (poster), and link_names.
func (n *Notifier) postOptions(data *notify.Data) []sl.MsgOption {
	opts := n.posterOptions(data)
	if n.cfg.LinkNames {
		opts = append(opts, sl.MsgOptionLinkNames(true))
	}
	return opts
}

// posterOptions are the message options of the poster keys, rendered with
// data (poster); a key that renders empty is left out (Slack's default
// name or icon of the app).
func (n *Notifier) posterOptions(data *notify.Data) []sl.MsgOption {
	return n.posterOptionsWith(n.deps.Templates, n.logger, data)
}

// posterOptionsWith is posterOptions rendered with t, logging to logger
// (nil: not logged).
func (n *Notifier) posterOptionsWith(t *notify.Templates, logger *slog.Logger, data *notify.Data) []sl.MsgOption {
	username, iconEmoji, iconURL := n.posterWith(t, logger, data)
	var opts []sl.MsgOption
	if username != "" {
		opts = append(opts, sl.MsgOptionUsername(username))
	}
	if iconEmoji != "" {
		opts = append(opts, sl.MsgOptionIconEmoji(iconEmoji))
	}
	if iconURL != "" {
		opts = append(opts, sl.MsgOptionIconURL(iconURL))
	}
	return opts
}

// clickData is the template data of what a triage click posts: all that
// the click knows of its incident, from the parent's buttons (st) — the
// receiver (.Receiver), the incident (.Incident) and the labels of its
// alerts (the common labels, as .CommonLabels and .GroupLabels: Alertmanager's
// group labels are among them), status "firing". A click has no
// notification: .Alerts, .CommonAnnotations and .Results are empty, and
// the labels too when they did not fit the buttons.
func clickData(st triageState) *notify.Data {
	labels := template.KV(st.Labels)
	if labels == nil {
		labels = template.KV{}
	}
	return &notify.Data{
		Data: &template.Data{Receiver: st.Receiver, Status: "firing", GroupLabels: labels, CommonLabels: labels,
			CommonAnnotations: template.KV{}, Alerts: template.Alerts{}},
		Incident: st.Incident,
	}
}

// clickPoster are the poster options of the thread reply a triage click
// posts: username, icon_emoji and icon_url rendered with clickData, so the
// reply is posted under the name and icon of the parent's other replies.
// A template that reads what a click has not (an annotation, .Alerts)
// renders empty or fails, and that key is left out: Slack shows the app's
// own name or icon.
func (n *Notifier) clickPoster(st triageState) []sl.MsgOption {
	return n.posterOptionsWith(n.deps.Templates.Uncounted(), nil, clickData(st))
}

// posterTemplates are the poster keys by YAML name, for the parse check of
// New.
func (c *Compat) posterTemplates() map[string]string {
	return map[string]string{"username": c.Username, "icon_emoji": c.IconEmoji, "icon_url": c.IconURL}
}

// alertmanagerDefaults are the keys of c that Alertmanager renders from its
// default templates when they are unset (slack.default.title …), and
// whether c leaves them unset.
func (c *Config) alertmanagerDefaults() []notify.DefaultKey {
	return []notify.DefaultKey{
		{Key: "title", Template: "slack.default.title", Unset: c.Title == "", Field: &c.Title},
		{Key: "text", Template: "slack.default.text", Unset: c.Text == "", Field: &c.Text},
		{Key: "username", Template: "slack.default.username", Unset: c.Username == "", Field: &c.Username},
		{Key: "icon_emoji", Template: "slack.default.iconemoji", Unset: c.IconEmoji == "", Field: &c.IconEmoji},
		{Key: "icon_url", Template: "slack.default.iconurl", Unset: c.IconURL == "", Field: &c.IconURL},
	}
}

// RedefinedDefaults returns the keys c leaves unset whose Alertmanager
// default template the template files of t redefine, directly or in a
// template it calls (a file defining slack.default.title, or __subject,
// which it calls; __alertmanager for the username): Alertmanager's
// message changes with them, so the router renders that default too
// instead of its own text (its built-in title and text; no username, the
// app's name). Keys left unset whose defaults nobody redefined keep the
// router's texts.
func (c *Config) RedefinedDefaults(t *notify.Templates) []notify.DefaultKey {
	return t.RedefinedDefaults(c.alertmanagerDefaults())
}
