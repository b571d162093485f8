package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	amnotify "github.com/prometheus/alertmanager/notify"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/internal/redact"
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
		webhookSecrets:   webhookSecrets(u),
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
	pace := &paced{Pacer: pacerOf(n.webhookURL, ""), page: no.Action == alert.ActionPage}
	err = n.postWebhook(ctx, wm, pace)
	var sc sl.StatusCodeError
	if errors.As(err, &sc) && sc.Code == http.StatusBadRequest {
		// Refused as drawn (the webhook answers 400 invalid_blocks …):
		// once more as the minimal message.
		n.refusedLogs.Log(ctx, n.logger, slog.LevelWarn, "refused:400", "Slack refused the message, sending it once more as a minimal message", "incident", no.Incident, "err", err)
		minimal := *wm
		minimal.Blocks = &sl.Blocks{BlockSet: msg.minimal}
		err = n.postWebhook(ctx, &minimal, pace)
	}
	return err
}

// postWebhook posts one message to the incoming webhook, with retries
// (its channel "": the webhook's own). An attempt that may have posted —
// sent, and no answer said what became of it, or a proxy's 502, 503 or 504
// (proxyAnswer) — is not retried (notify.OutcomeUnknown), as a Web API
// post (callWith). Once the webhook answered 429, its posts are paced as
// a Web API channel's (awaitTurn), the webhook URL their key: an audit saw
// 80 posts a second against a webhook answering 429. Errors carry the
// start of Slack's answer (channel_not_found, no_service: slack-go drops
// it), and a 2xx whose answer is not Slack's "ok" (JSON: "ok": true) fails,
// permanent, as Alertmanager reads it: a proxy's page answered 200 was
// counted delivered (an audit).
func (n *Notifier) postWebhook(ctx context.Context, wm *sl.WebhookMessage, pace *paced) error {
	var turn time.Time // the turn a 429 kept for this post's retry
	return notify.Retry(ctx, n.deps.Retry, func(ctx context.Context) error {
		err := n.awaitTurn(ctx, pace, turn)
		turn = time.Time{}
		if err != nil {
			return err
		}
		actx, cancel := context.WithTimeout(ctx, time.Duration(n.cfg.Timeout))
		defer cancel()
		post := postTrace{keepAnswer: true}
		actx = post.trace(actx)
		n.metrics.Attempt()
		began := time.Now()
		err = sl.PostWebhookCustomHTTPContext(actx, n.webhookURL, n.httpClient, wm)
		answer := n.hidden(post.answer.Load())
		var sc sl.StatusCodeError
		if err == nil || errors.As(err, &sc) && sc.Code >= 200 && sc.Code < 300 { // slack-go takes 200 alone
			if err := notOK(answer); err != nil {
				// A 2xx may have posted it: permanent (a retry cannot mend
				// the answer), and not posted again before the claims
				// expire (a review: each of Alertmanager's retries of the
				// 502 posted it again, 61 times in 100 s).
				n.metrics.Failure(notify.ReasonClientError)
				return alert.Permanent(notify.OutcomeUnknownHeld(fmt.Errorf("post to the incoming webhook: %w", err)))
			}
			return nil
		}
		// The webhook URL is a secret: keep it out of errors and logs.
		err = amnotify.RedactURL(err)
		var rl *sl.RateLimitedError
		switch {
		case errors.As(err, &rl) || answer != nil && answer.status == http.StatusTooManyRequests:
			// (slack-go cannot read a Retry-After given as a date: the
			// trace's reading of it is the wait.)
			wait := time.Duration(post.retryAfter.Load())
			if rl != nil {
				wait = rl.RetryAfter
			}
			n.metrics.Failure(notify.ReasonRateLimited)
			turn = pace.Limit(time.Now(), wait)
			return notify.RetryAfter(fmt.Errorf("post to the incoming webhook: Slack rate-limited it (429)%s", saying(answer)), wait)
		case errors.As(err, &sc) && (sc.Code == http.StatusBadRequest || sc.Code == http.StatusForbidden || sc.Code == http.StatusNotFound || sc.Code == http.StatusGone):
			n.metrics.Failure(notify.ReasonClientError)
			return alert.Permanent(fmt.Errorf("post to the incoming webhook: %w%s", err, saying(answer)))
		case errors.As(err, &sc):
			n.metrics.Failure(notify.ReasonForStatus(sc.Code))
			err = fmt.Errorf("post to the incoming webhook: %w%s", err, saying(answer))
			if proxyAnswer(sc.Code, &post) {
				return proxyOutcome(sc.Code, fmt.Errorf("%w (a proxy's answer, or Slack's gateway's: the post may have reached Slack and been made; not posted again before Alertmanager's retry)", err))
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
				return notify.OutcomeUnknownHeld(fmt.Errorf("%w (sent, and Slack may have posted it: not posted again before Alertmanager's retry)", err))
			}
			return err
		}
	})
}

// notOK is the error of a 2xx answer of an incoming webhook that is not
// Slack's success, as Alertmanager's Slack integration reads it: a status
// other than 200, a JSON body (Content-Type application/json) without
// "ok": true, or any other body than "ok". nil for a success, when the
// answer was not kept, or when its body was cut: the status said Slack
// posted it.
func notOK(a *webhookAnswer) error {
	if a == nil {
		return nil
	}
	if a.status != http.StatusOK {
		return fmt.Errorf("answered %d, not Slack's 200 \"ok\": nothing says the message was posted", a.status)
	}
	if a.cut {
		return nil
	}
	if strings.HasPrefix(a.contentType, "application/json") {
		var r struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if json.Unmarshal(a.body, &r) == nil && r.OK {
			return nil
		}
		return fmt.Errorf("answered %d without Slack's \"ok\": true: %s", a.status, quoteAnswer(a.body))
	}
	if string(a.body) == "ok" {
		return nil
	}
	return fmt.Errorf("answered %d with %s, not Slack's \"ok\" (a proxy's or a firewall's page? check api_url and the egress proxy): nothing says the message was posted", a.status, quoteAnswer(a.body))
}

// saying is ": " and the start of a's body, quoted ("" when none was kept).
func saying(a *webhookAnswer) string {
	if a == nil || len(bytes.TrimSpace(a.body)) == 0 {
		return ""
	}
	return ": Slack said " + quoteAnswer(a.body)
}

// hidden is a with the incoming webhook's credential hidden from its body:
// an error page may echo the request's URL ("Cannot POST
// /services/T0/B0/…"), whose path is the webhook's secret, and the body is
// quoted in errors, logs and the journal (an audit).
func (n *Notifier) hidden(a *webhookAnswer) *webhookAnswer {
	if a == nil {
		return nil
	}
	body := redact.Values(string(a.body), n.webhookSecrets...)
	if body == string(a.body) {
		return a
	}
	c := *a
	c.body = []byte(body)
	return &c
}

// webhookSecrets are what an answer of the incoming webhook at u must not
// show: what follows /services/ or /hooks/ in its path (the webhook's
// credential; the whole path when neither is there), as written, escaped
// for JSON ("\/") and for a query ("%2F"), and each of its segments of 12
// characters or more (Slack's token, Mattermost's hook id), which an answer
// may quote alone ("invalid token …" — a review). A shorter segment
// (`/hooks/alerts`) would hide ordinary words.
func webhookSecrets(u string) []string {
	p, err := url.Parse(u)
	if err != nil {
		return []string{u}
	}
	tail := p.Path
	if i := redact.WebhookSecretStart(tail); i >= 0 {
		tail = tail[i:]
	}
	secrets := []string{tail, strings.ReplaceAll(tail, "/", `\/`), url.QueryEscape(tail), url.PathEscape(tail)}
	for seg := range strings.SplitSeq(tail, "/") {
		if len(seg) >= 12 {
			secrets = append(secrets, seg)
		}
	}
	return secrets
}

// quoteAnswer quotes the start of an answer's body (200 bytes at most),
// as it came: "ok\n" is not "ok".
func quoteAnswer(b []byte) string {
	if len(b) > 200 {
		return strconv.Quote(string(b[:200])) + "…"
	}
	return strconv.Quote(string(b))
}

// ReadsGroup reports whether n posts to an incoming webhook: each
// notification is a message of its own, so the dispatch core hands it the
// incident's alerts as the webhook held them (notify.WithGroup) for the
// operator's templates to read, as Alertmanager renders its group.
func (n *Notifier) ReadsGroup() bool { return n.webhookURL != "" }
