package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	amnotify "github.com/prometheus/alertmanager/notify"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Incoming-webhook mode (Alertmanager's api_url / api_url_file): each
// notification is one message posted to the webhook URL, with the same
// Block Kit content. An incoming webhook cannot read back what it posted,
// so there is no incident parent, no thread, no edit on resolve and no
// triage buttons; check-config says so. Use token and channel (the Web API)
// for those.

// newWebhook builds the notifier of an incoming-webhook entry.
func newWebhook(cfg *Config, name string, deps notify.Deps) (*Notifier, error) {
	u := cfg.APIURL
	if cfg.APIURLFile != "" {
		var err error
		if u, err = notify.ReadSecret("", cfg.APIURLFile); err != nil {
			return nil, fmt.Errorf("api_url_file: %w", err)
		}
		if !notify.WebURL(u) {
			return nil, errors.New("api_url_file: does not hold an absolute http(s) incoming-webhook URL")
		}
	}
	if err := checkTemplates(cfg, name, deps); err != nil {
		return nil, err
	}
	hc, err := httpClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Notifier{
		name:             name,
		cfg:              *cfg,
		deps:             deps,
		metrics:          deps.Metrics.Integration(name, Integration),
		logger:           deps.Logger.With("integration", Integration, "receiver", name, "mode", "incoming-webhook"),
		webhookURL:       u,
		httpClient:       hc,
		channelTemplated: notify.IsTemplate(cfg.Channel),
	}, nil
}

// deliverWebhook posts n as one message to the incoming webhook. A 400,
// 403, 404 or 410 (bad payload, revoked or deleted webhook, archived
// channel) is permanent; a post that may have been made (postWebhook) is
// not made again before Alertmanager's retry; anything else is retried.
func (n *Notifier) deliverWebhook(ctx context.Context, no *alert.Notification) error {
	// No parent message or thread holds the incident's earlier alerts:
	// the operator's templates read the incident as the webhook held it
	// (notify.GroupData), as Alertmanager renders its group.
	msg := n.renderWith(no, notify.GroupData(ctx, no))
	channel, err := n.channelFor(msg.data, true)
	if err != nil {
		return err
	}
	username, iconEmoji, iconURL := n.poster(msg.data)
	wm := &sl.WebhookMessage{Text: msg.text, Blocks: &sl.Blocks{BlockSet: msg.blocks}, Channel: channel,
		Username: username, IconEmoji: iconEmoji, IconURL: iconURL}
	err = n.postWebhook(ctx, wm)
	var sc sl.StatusCodeError
	if errors.As(err, &sc) && sc.Code == http.StatusBadRequest {
		// Refused as drawn (the webhook answers 400 invalid_blocks …):
		// once more as the minimal message.
		n.logger.Warn("Slack refused the message, sending it once more as a minimal message", "incident", no.Incident)
		minimal := *wm
		minimal.Blocks = &sl.Blocks{BlockSet: msg.minimal}
		err = n.postWebhook(ctx, &minimal)
	}
	return err
}

// postWebhook posts one message to the incoming webhook, with retries
// (its channel "": the webhook's own). An attempt that may have posted —
// sent, and no answer said what became of it, or a proxy's 502, 503 or 504
// (proxyAnswer) — is not retried (notify.OutcomeUnknown), as a Web API
// post (callWith).
func (n *Notifier) postWebhook(ctx context.Context, wm *sl.WebhookMessage) error {
	return notify.Retry(ctx, n.deps.Retry, func(ctx context.Context) error {
		actx, cancel := context.WithTimeout(ctx, time.Duration(n.cfg.Timeout))
		defer cancel()
		var post postTrace
		actx = post.trace(actx)
		n.metrics.Attempt()
		began := time.Now()
		err := sl.PostWebhookCustomHTTPContext(actx, n.webhookURL, n.httpClient, wm)
		if err == nil {
			return nil
		}
		// The webhook URL is a secret: keep it out of errors and logs.
		err = amnotify.RedactURL(err)
		var sc sl.StatusCodeError
		var rl *sl.RateLimitedError
		switch {
		case errors.As(err, &rl):
			n.metrics.Failure(notify.ReasonRateLimited)
			return notify.RetryAfter(fmt.Errorf("post to the incoming webhook: %w", err), rl.RetryAfter)
		case errors.As(err, &sc) && (sc.Code == http.StatusBadRequest || sc.Code == http.StatusForbidden || sc.Code == http.StatusNotFound || sc.Code == http.StatusGone):
			n.metrics.Failure(notify.ReasonClientError)
			return alert.Permanent(fmt.Errorf("post to the incoming webhook: %w", err))
		case errors.As(err, &sc):
			n.metrics.Failure(notify.ReasonForStatus(sc.Code))
			err = fmt.Errorf("post to the incoming webhook: %w", err)
			if proxyAnswer(sc.Code, &post) {
				return notify.OutcomeUnknown(fmt.Errorf("%w (a proxy's answer, or Slack's gateway's: the post may have reached Slack and been made; not posted again before Alertmanager's retry)", err))
			}
			return post.retryAfterOf(err)
		default:
			// No answer (or a proxy refusing the tunnel to Slack).
			err = notify.ProxyRefused(err, notify.Proxied(n.cfg.HTTPConfig))
			err = n.metrics.NoAnswer(ctx, actx, began, time.Duration(n.cfg.Timeout), "post to the incoming webhook", err)
			if post.mayHavePosted(err) {
				// Sent, and no answer (a timeout, a connection lost): Slack
				// may have posted it. Not posted again before Alertmanager's
				// retry, as a Web API post (callWith).
				return notify.OutcomeUnknown(fmt.Errorf("%w (sent, and Slack may have posted it: not posted again before Alertmanager's retry)", err))
			}
			return err
		}
	})
}

// ReadsGroup reports whether n posts to an incoming webhook: each
// notification is a message of its own, so the dispatch core hands it the
// incident's alerts as the webhook held them (notify.WithGroup) for the
// operator's templates to read, as Alertmanager renders its group.
func (n *Notifier) ReadsGroup() bool { return n.webhookURL != "" }
