// Package slack delivers alertrouter notifications to a Slack triage
// channel through slack-go: one parent message per incident (kept with the
// incident's state by the dispatch core, so every replica threads under
// it), later notifications in its thread, the parent edited when the
// incident resolves, Block Kit within Slack's limits.
package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	amnotify "github.com/prometheus/alertmanager/notify"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// Integration is the integration label of the metrics.
const Integration = "slack"

// permanentErrors are Slack error codes a retry cannot fix (the errors of
// chat.postMessage and chat.update in Slack's method reference that are
// about the token, the app, the channel or the message, not about Slack's
// state): answered at once as permanent (502 to Alertmanager, a dead
// letter) instead of retried as an outage.
var permanentErrors = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
	"token_expired": true, "no_permission": true, "missing_scope": true, "channel_not_found": true,
	"not_in_channel": true, "is_archived": true, "invalid_blocks": true, "invalid_blocks_format": true,
	"msg_too_long": true, "msg_blocks_too_long": true, "no_text": true, "invalid_arguments": true,
	"restricted_action": true, "thread_not_found": true, "message_not_found": true, "cant_update_message": true,
	"access_denied": true, "team_access_not_granted": true, "ekm_access_denied": true,
	"two_factor_setup_required": true, "not_allowed_token_type": true, "enterprise_is_restricted": true,
	"team_not_found": true, "as_user_not_supported": true, "cannot_reply_to_message": true, "edit_window_closed": true,
	"restricted_action_read_only_channel": true, "restricted_action_thread_only_channel": true,
	"restricted_action_non_threadable_channel": true, "restricted_action_thread_locked": true,
	"invalid_form_data": true, "invalid_post_type": true, "invalid_charset": true, "missing_post_type": true,
}

// errorHints say what an operator does about a permanent Slack error: the
// bare code ("not_in_channel") was all the log, the dead letter and the
// console said.
var errorHints = map[string]string{
	"invalid_auth":              "the token is not valid for this workspace: check token / token_file",
	"not_authed":                "no token reached Slack: check token / token_file",
	"account_inactive":          "the token's app or user was deactivated: reinstall the app and update token / token_file",
	"token_revoked":             "the token was revoked, the app uninstalled or its token rotated: reinstall the app and update token / token_file",
	"token_expired":             "the token expired (token rotation is on for the app): update token / token_file",
	"missing_scope":             "the token lacks a scope the router needs, chat:write (usergroups:read for authorized groups): add it and reinstall the app",
	"no_permission":             "the token may not post here: check the app's scopes and the channel's posting permissions",
	"channel_not_found":         "the channel does not exist, or the app cannot see it — a private channel: invite the app to it; check channel",
	"not_in_channel":            "the app is not a member of the channel: invite it (/invite @app), or add the chat:write.public scope",
	"is_archived":               "the channel is archived: unarchive it or set another channel",
	"restricted_action":         "the workspace's settings do not let the app post in this channel",
	"access_denied":             "the token may not reach this workspace or channel",
	"team_access_not_granted":   "the token was not granted access to this workspace, an Enterprise Grid org app: grant it",
	"ekm_access_denied":         "the workspace's Enterprise Key Management denies access to this channel",
	"two_factor_setup_required": "the token's user must set up two-factor authentication",
	"not_allowed_token_type":    "the token is of the wrong type: use the app's bot token (xoxb-…)",
}

// permanentError is a permanent Slack error with what to do about it.
func permanentError(err error, code string) error {
	if hint := errorHints[code]; hint != "" {
		return alert.Permanent(fmt.Errorf("call Slack: %w — %s", err, hint))
	}
	return alert.Permanent(fmt.Errorf("call Slack: %w", err))
}

// refusedMessage are Slack error codes that refuse the message the router
// drew (its blocks or its length): sent once more as the minimal message.
var refusedMessage = map[string]bool{
	"invalid_blocks": true, "invalid_blocks_format": true, "msg_too_long": true, "msg_blocks_too_long": true,
}

// Notifier posts notifications to one Slack channel. Safe for concurrent
// use.
type Notifier struct {
	name    string
	cfg     Config
	api     *sl.Client
	deps    notify.Deps
	metrics *notify.IntegrationMetrics
	logger  *slog.Logger
	// webhookURL is set in incoming-webhook mode (webhook.go), where api
	// is nil; webhookSecrets are what of it an answer quoted must not
	// show (webhookSecrets, once per notifier, not per post).
	webhookURL     string
	webhookSecrets []string
	// unknownLogs throttles the lines of posts with an unknown outcome;
	// refusedLogs those of messages Slack refused, sent again minimal
	// (each of Alertmanager's retries logged it: 38 lines for one alert in
	// 87 s in an audit).
	unknownLogs, refusedLogs logthrottle.Throttle
	// httpClient is the client of the entry's http_config (proxy, TLS):
	// slack-go's in Web API mode, the incoming webhook's, and the one the
	// triage answers response_urls with (Triage.Add).
	httpClient *http.Client
	// workspace names the Slack workspace and app api calls reach (API URL
	// and token), for the user-group lookups notifiers of one app share.
	workspace string
	// channelTemplated says cfg.Channel is a template, rendered for each
	// new parent message (channelFor).
	channelTemplated bool
	// triage, set by Triage.Add, is the triage of this notifier's parent
	// messages (nil: it offers no action). It learns of each edit of an
	// incident's parent that resolves it or opens it again (a click on the
	// message of a resolved incident must not act, nor draw the firing
	// message back over the resolved one), resolves in PagerDuty an
	// incident escalated from its message, forgets the acknowledgement and
	// resolve of an incident paged again, and keeps the triage lines and
	// the state of the buttons on every edit.
	triage *triageLink
	// marks, set by Triage.Add with or without actions, keeps in the store
	// whether each parent is drawn resolved: a partial resolve reaching
	// Slack after the incident's resolve is not posted under it, and a
	// resolved drawing Slack refused is drawn again later only while its
	// parent is still marked resolved (redrawLater). nil: no store.
	marks *Triage
}

var _ alert.Notifier = (*Notifier)(nil)

// New builds the notifier of receiver name from cfg. It reads the token
// file and checks the templates parse. Errors name the entry's YAML key
// (e.g. "summary: …"); the caller prefixes the entry's path.
func New(cfg *Config, name string, deps notify.Deps) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	// Keys left unset whose Alertmanager default the template files
	// redefine render that default, as in Alertmanager.
	cfg = notify.FollowRedefined(deps.Templates, deps.Logger.With("integration", Integration, "receiver", name), cfg, (*Config).alertmanagerDefaults)
	if cfg.WebhookMode() {
		return newWebhook(cfg, name, deps)
	}
	token, err := notify.ReadSecret(cfg.Token, cfg.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("token_file: %w", err)
	}
	if token == "" {
		if token, err = notify.ReadSecret(cfg.AppToken, cfg.AppTokenFile); err != nil {
			return nil, fmt.Errorf("app_token_file: %w", err)
		}
	}
	if err := checkTemplates(cfg, name, deps); err != nil {
		return nil, err
	}
	apiURL := cfg.APIURL
	if cfg.AppURL != "" {
		apiURL = strings.TrimSuffix(cfg.AppURL, "chat.postMessage")
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	httpClient, err := httpClient(cfg)
	if err != nil {
		return nil, err
	}
	api := sl.New(token, sl.OptionAPIURL(apiURL), sl.OptionHTTPClient(httpClient))
	return &Notifier{
		name:             name,
		cfg:              *cfg,
		api:              api,
		httpClient:       httpClient,
		workspace:        apiURL + " " + token,
		deps:             deps,
		metrics:          deps.Metrics.Integration(name, Integration),
		logger:           deps.Logger.With("integration", Integration, "receiver", name),
		channelTemplated: notify.IsTemplate(cfg.Channel),
	}, nil
}

// checkTemplates checks that every template of cfg parses, naming its key,
// and creates the render-failure series of the receiver's rendered fields
// at zero (notify.Metrics.PrecreateRenderFailures).
func checkTemplates(cfg *Config, name string, deps notify.Deps) error {
	texts := cfg.posterTemplates()
	texts["title"], texts["text"], texts["channel"] = cfg.Title, cfg.Text, cfg.Channel
	fields := []string{"title", "text"} // rendered always: the built-in texts when unset
	for field, text := range texts {
		if err := deps.Templates.Check(text); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		if field != "title" && field != "text" && notify.IsTemplate(text) {
			fields = append(fields, field)
		}
	}
	deps.Metrics.PrecreateRenderFailures(name, fields...)
	return nil
}

// Check calls auth.test, for readiness and check-config; a bad token is
// permanent.
func (n *Notifier) Check(ctx context.Context) error {
	if n.api == nil {
		return nil // an incoming webhook has no call that checks it without posting
	}
	return n.call(ctx, func(ctx context.Context) error {
		_, err := n.api.AuthTestContext(ctx)
		return err
	})
}

// Notify posts n: as the incident's parent message when it has none, in the
// parent's thread otherwise, and edits the parent when the incident
// resolves. A page is skipped when mirror_pages is false. Errors are
// retryable unless alert.Permanent.
func (n *Notifier) Notify(ctx context.Context, no *alert.Notification) error {
	if no.Action == alert.ActionPage && !n.cfg.MirrorPages {
		// A page is not mirrored here — but the resolve of an incident
		// whose card is here (a ticket whose alert escalated to a page,
		// resolving decided page) resolves that card: it was dropped,
		// and the ticket stayed firing for good (a review).
		if _, drawn := parseParent(no.Ref); no.Kind != alert.KindResolved || !drawn {
			return nil
		}
	}
	start := time.Now()
	defer n.metrics.ObserveSince(start)
	deliver := n.deliver
	if n.webhookURL != "" {
		deliver = n.deliverWebhook
	}
	if err := deliver(ctx, no); err != nil {
		n.metrics.Outcome(notify.OutcomeFailure)
		if notify.IsOutcomeUnknown(err) {
			// The one line that says a stray message may be in the
			// channel: the post is not made again within this webhook.
			// Throttled per cause: a Slack that hangs leaves every post
			// so (a review: 783 lines a second at 50 webhooks/s).
			msg := "Slack post with an unknown outcome: Slack may have made it; not posted again now, Alertmanager's retry posts it (a duplicate message if Slack did make it)"
			if notify.HoldsClaims(err) {
				msg = "Slack post with an unknown outcome: Slack most likely made it; not posted again until the webhook's claims expire (dedup.claim_ttl: Alertmanager's retries wait until then), then posted again (a duplicate message if Slack did make it)"
			}
			n.unknownLogs.Log(ctx, n.logger, slog.LevelWarn, logthrottle.ErrorClass(err), msg, "incident", no.Incident, "err", err)
		}
		return fmt.Errorf("slack receiver %q, incident %q: %w", n.name, no.Incident, err)
	}
	n.metrics.Outcome(notify.OutcomeSuccess)
	return nil
}

type message struct {
	blocks []sl.Block
	text   string
	// minimal is what is sent when Slack refuses blocks (refusedMessage):
	// the header, the decision and the incident, without the alerts.
	minimal []sl.Block
	// data is the template data the message was rendered with (nil for a
	// thread reply's digest).
	data *notify.Data
}

// withActions is m with the triage lines and the buttons st offers on its
// blocks and its minimal blocks (Notifier.withActions).
func (m message) withActions(n *Notifier, no *alert.Notification, lines []string, st triageState) message {
	return message{blocks: n.withActions(no, m.blocks, lines, st), text: m.text, minimal: n.withActions(no, m.minimal, lines, st), data: m.data}
}

// render draws the incident's card (the parent message). The operator's
// title and text are Slack mrkdwn, as in Alertmanager: they render over
// escapedData, so their own links and mentions (<url|Graph>, <!here>)
// reach Slack while a "<!channel>" from an alert is shown, not obeyed; the
// built-in texts are escaped whole. The header is plain text: the title as
// rendered over the data as it is (an operator's title is rendered once,
// over escapedData, for the fallback text, and unescaped for the header).
// With link_names on, no "@" of the alert data links a name (mentionSafe):
// the card and the built-in texts are drawn from the data with each "@"
// made inert, and the escaped data has it too; the operator's own mentions
// keep working.
func (n *Notifier) render(no *alert.Notification) message {
	return n.renderWith(no, nil)
}

// renderWith is render with the operator's templates (title, text, and
// the message's data: channel, username, icons) rendered over group
// instead of the notification's own data (nil: over that):
// notify.GroupData, for an incoming webhook. The card and the built-in
// texts still draw the notification's own alerts.
func (n *Notifier) renderWith(no *alert.Notification, group *notify.Data) message {
	data := notify.NewData(no)
	t := n.deps.Templates
	shown, sdata := no, data // what the card and the built-in texts print
	if n.cfg.LinkNames {
		shown, sdata = mentionSafe(no, data)
	}
	udata, msgData := sdata, data // what the operator's templates read
	if group != nil {
		udata, msgData = group, group
		if n.cfg.LinkNames {
			udata = (&escaper{mentions: true}).data(group)
		}
	}
	safe := sdata
	if n.cfg.Title != "" || n.cfg.Text != "" {
		// Over the mention-safe data: its "@"s already made inert (with
		// link_names on); udata itself when nothing needs escaping.
		safe = escapedData(udata)
	}
	// The title is rendered once. The built-in one over the data as it is:
	// the header shows it, the fallback text escapes it whole. An
	// operator's over the escaped data, as mrkdwn: the fallback text is
	// that, and the header, plain text, that unescaped — the title as
	// rendered over the data as it is.
	var title, fallback string
	if n.cfg.Title == "" {
		title = t.Render(n.logger, "title", "", notify.DefaultTitle, sdata)
	} else {
		fallback = t.Render(n.logger, "title", n.cfg.Title, notify.DefaultTitle, safe)
		title = unescMrkdwn(fallback)
	}
	var text string // mrkdwn
	if n.cfg.Text == "" {
		text = esc(t.Render(n.logger, "text", "", notify.DefaultText, sdata))
	} else {
		text = t.Render(n.logger, "text", n.cfg.Text, notify.DefaultText, safe)
	}
	pdRef := ""
	if no.ShownAction() == alert.ActionPage && no.Paged {
		// Only a page that went to PagerDuty names its incident there.
		pdRef = pagerduty.DedupKey(no.Incident)
		if n.cfg.LinkNames {
			pdRef = mentionSafeText(pdRef)
		}
	}
	if title == "" {
		title = shown.Incident
	}
	if fallback == "" {
		fallback = fallbackText(title)
	} else {
		fallback = truncateMrkdwn(fallback, maxText) // mrkdwn: no link or escape cut in half
	}
	// The links are built from data as it is: a silence's matchers must
	// match the labels (and URLs are never changed: atIndex).
	return message{blocks: cardBlocks(shown, data, title, text, pdRef), text: fallback, minimal: MinimalBlocks(shown, title, pdRef), data: msgData}
}

// updateBlocks is UpdateBlocks of no, its alert data's "@" made inert
// with link_names on (mentionSafe).
func (n *Notifier) updateBlocks(no *alert.Notification) ([]sl.Block, string) {
	if n.cfg.LinkNames {
		no, _ = mentionSafe(no, notify.NewData(no))
	}
	return UpdateBlocks(no)
}

// channelFor returns the channel a new message of data is posted to: the
// configured channel, rendered with the notification's data when it is a
// template (Alertmanager's '#{{ .CommonLabels.team }}-alerts'). Replies
// and edits go to their parent's channel instead, from its Ref. A template
// that renders nothing fails the notification, permanently: Slack needs a
// channel (an incoming webhook, optional, posts to its own).
func (n *Notifier) channelFor(data *notify.Data, optional bool) (string, error) {
	if !n.channelTemplated {
		return n.cfg.Channel, nil
	}
	ch := n.deps.Templates.Render(n.logger, "channel", n.cfg.Channel, "", data)
	if ch == "" && !optional {
		return "", alert.Permanent(errors.New("channel: the template rendered an empty channel for this notification, or failed to render (the log names the error)"))
	}
	return ch, nil
}

// parentRef is an incident's parent message, kept by the dispatch core as
// the notification's Ref: "channel ts", then the decision the parent was
// drawn with when it is quieter than a page ("C0123 1700000000.000100
// ticket"). A Ref without it is a page's, or was written by an older
// router, which wrote no decision (read as a page: no redraw). Writing none
// for a page keeps a page's Ref readable by those routers during a rolling
// upgrade.
type parentRef struct {
	channel, ts string
	drawn       alert.Action
}

func parseParent(v string) (parentRef, bool) {
	ch, rest, ok := strings.Cut(v, " ")
	ts, drawn, _ := strings.Cut(rest, " ")
	return parentRef{channel: ch, ts: ts, drawn: alert.Action(drawn)}, ok && ch != "" && ts != ""
}

func (p parentRef) String() string {
	if p.drawn == "" || p.drawn == alert.ActionPage {
		return p.channel + " " + p.ts
	}
	return p.channel + " " + p.ts + " " + string(p.drawn)
}

// drawnAs returns the Ref of the parent redrawn with decision a.
func (p parentRef) drawnAs(a alert.Action) parentRef {
	p.drawn = a
	return p
}

// quieterThan reports whether the parent was drawn with a decision quieter
// than a (a Ref without one reads as a page).
func (p parentRef) quieterThan(a alert.Action) bool {
	drawn := p.drawn
	if drawn == "" {
		drawn = alert.ActionPage
	}
	return alert.Rank(a) > alert.Rank(drawn)
}

var _ alert.UnsentResolves = (*Notifier)(nil)

// DrawsIncidents implements alert.DrawsIncidents: an incident is drawn in
// its parent message (or, posting by incoming webhook, each notification
// in a message of its own).
func (n *Notifier) DrawsIncidents() bool { return true }

// ThreadsUpdates implements alert.ThreadsUpdates: through the Web API an
// update replies in its parent's thread; an incoming webhook posts every
// notification as a message of its own.
func (n *Notifier) ThreadsUpdates() bool { return n.webhookURL == "" }

// ResolvedUnsent implements alert.UnsentResolves: an incident escalated
// from its parent message (Escalate) is resolved in PagerDuty when it
// resolves, also at an entry that sends no resolves (send_resolved: false).
func (n *Notifier) ResolvedUnsent(ctx context.Context, no *alert.Notification) error {
	p, ok := parseParent(no.Ref)
	if !ok || !no.IncidentResolved || n.triage == nil {
		return nil
	}
	if err := n.triage.resolveEscalation(ctx, no, p); err != nil {
		return err
	}
	// The parent is not redrawn, but its incident resolved: a click on it
	// is answered so, and an Escalate whose trigger raced this resolve
	// reads it (resolveRacedEscalation). Firing again under this parent
	// clears it (editParent).
	n.triage.t.parentEdited(ctx, no.Incident, p, true)
	return nil
}

// deliver posts the incident's parent when it has none (and hands it back
// in no.Ref for the dispatch core to keep), or replies in its thread; the
// parent is edited when the incident resolves, opens again, escalates or is
// paged again. An incident escalated from its parent (the Escalate button)
// is resolved in PagerDuty first when it resolves (resolveEscalation).
func (n *Notifier) deliver(ctx context.Context, no *alert.Notification) error {
	var replaced *parentRef // the parent a new one replaces
	if p, ok := parseParent(no.Ref); ok {
		silenced := "" // the resolve's word on a silence still in force
		if no.IncidentResolved && n.triage != nil {
			// What was done on the parent, read once for both.
			m, readErr := n.triage.t.readMessage(ctx, no.Incident, p.channel, p.ts)
			if err := n.triage.resolveEscalationOf(ctx, no, p, m, readErr); err != nil {
				return err
			}
			if readErr == nil {
				silenced = n.triage.silencedNote(ctx, m)
			}
		}
		update := !no.IncidentResolved && !no.Opening
		if update && n.marks != nil && allResolved(no) && n.marks.parentResolved(ctx, no.Incident, p) {
			// A partial resolve that reached Slack after the incident's
			// resolve (another webhook's, sent at once while this one
			// waited in the update window or behind Slack's pacing, or
			// another replica's): "N resolved" after "[RESOLVED]" in the
			// thread (an audit: in 51 of 80 bursts). The resolve said it
			// all: nothing is posted.
			n.logger.Debug("partial resolve after the incident's resolve: not posted", "incident", no.Incident)
			return nil
		}
		msg := n.threadMessage(no)
		if silenced != "" {
			msg.blocks = append(slices.Clip(msg.blocks), section(silenced))
		}
		if no.Repaged && !no.IncidentResolved {
			// PagerDuty was triggered again for this update (the incident
			// was resolved there by hand while it fired), or for this
			// opening (an alert of it firing again after its resolve was
			// lost: routing's handResolvedEpisode): the thread says so,
			// and the parent, which says resolved in PagerDuty, is redrawn
			// with Acknowledge and Resolve (by the opening's edit, or
			// below for an update). An opening said nothing of it (a
			// review).
			who := "by hand"
			if n.triage != nil {
				who = n.triage.repaged(ctx, no, p)
			}
			what := " while its alerts still fired, and a new alert joined it"
			if no.Opening {
				what = ", and an alert of it fired again (its resolve was lost)"
			}
			note := section("*PagerDuty paged again:* the incident was resolved there " + who + what +
				": PagerDuty was triggered again (a new PagerDuty incident).")
			msg.blocks = append([]sl.Block{note}, msg.blocks...)
			msg.minimal = []sl.Block{note}
			msg.text = "PagerDuty paged again. " + msg.text
		}
		if update && (no.Escalated || no.Repaged || p.quieterThan(no.Action)) {
			// The parent's header says the quieter decision it was drawn
			// with — a ticket whose alert now pages (Escalated), or a
			// ticket's incident that a new alert paging joined (its Ref
			// says ticket) —, or its buttons a PagerDuty incident resolved:
			// redraw it as this one, and keep in the Ref what it says now.
			// Drawn from this update, with the incident's earlier alerts
			// Alertmanager sent again with it, still firing: the parent
			// listed some of them, and the redraw replaces it (an audit:
			// a ticket's alert, still firing, shown nowhere once its
			// parent was redrawn as the page of another).
			redraw := n.render(no.WithStillFiring())
			note := sl.NewContextBlock("", sl.NewTextBlockObject(sl.MarkdownType, n.redrawnNote(ctx, no), false, false))
			redraw.blocks = append(slices.Clip(redraw.blocks), note)
			if n.editParent(ctx, no, p, redraw, false) {
				p = p.drawnAs(no.Action)
				no.Ref = p.String()
			}
		}
		err := n.reply(ctx, no, p, msg)
		var se sl.SlackErrorResponse
		if !errors.As(err, &se) {
			return err
		}
		switch se.Err {
		case "thread_not_found", "message_not_found":
			// The parent was deleted: this notification becomes the new parent.
			n.logger.Warn("parent message is gone, posting a new parent", "incident", no.Incident)
		case "channel_not_found", "is_archived", "not_in_channel":
			// The parent's channel was deleted or archived, or the app
			// removed from it — the triage moved to another channel: the
			// incident's thread cannot go on, so this notification becomes
			// a parent in the channel configured now. Still that channel,
			// the post fails as the reply did.
			n.logger.Warn("the incident's Slack parent is in a channel the app can no longer post to: posting a new parent in the configured channel",
				"incident", no.Incident, "parent_channel", p.channel, "slack_error", se.Err)
		default:
			return err
		}
		replaced = &p
	} else if !no.Opening {
		// An update or a resolve of an incident whose parent the store does
		// not know: lost with its state (restarted empty, a failover that
		// dropped the last writes), or posted with an unknown outcome. The
		// message becomes a parent of its own; an earlier parent, if there
		// is one, is not edited and keeps saying what it said.
		n.logger.Warn("the incident's Slack parent is not known to the store: posting a message of its own (an earlier parent, if any, is left as drawn)",
			"incident", no.Incident, "resolved", no.IncidentResolved)
	}
	msg := n.render(no)
	channel, err := n.channelFor(msg.data, false)
	if err != nil {
		return err
	}
	lines, st := []string(nil), newTriageState(no)
	if replaced != nil && n.triage != nil {
		won, next, err := n.triage.claimReplacement(ctx, no.Incident, *replaced)
		if err != nil {
			return err
		}
		if !won {
			if np, ok := parseParent(next); ok && next != no.Ref {
				// Another replica replaced it: this notification goes on
				// in the new parent's thread.
				no.Ref = next
				return n.deliverUnder(ctx, no, np)
			}
			return fmt.Errorf("the incident's Slack parent is being replaced by another replica: retried")
		}
		// The new parent is drawn with what was done on the old one.
		lines, st = n.triage.view(ctx, no, *replaced, st)
	}
	p, err := n.post(ctx, no, msg.withActions(n, no, lines, st), channel, "")
	if err != nil {
		return err
	}
	if replaced != nil && n.triage != nil {
		n.triage.replaced(ctx, no.Incident, *replaced, p.drawnAs(no.Action))
	}
	if !no.IncidentResolved {
		no.Ref = p.drawnAs(no.Action).String()
		if n.triage != nil {
			// The slash command finds the incident's parent here (its
			// channel, its thread): the dispatch core keeps the Ref out
			// of the triage's reach.
			n.triage.t.parentPosted(ctx, no.Incident, no.Receiver+"/"+no.Integration, p)
		}
	}
	return nil
}

// deliverUnder delivers no in parent p's thread, which another replica
// posted to replace its earlier parent: a reply, the parent edited on a
// resolve (no's Ref names p).
func (n *Notifier) deliverUnder(ctx context.Context, no *alert.Notification, p parentRef) error {
	return n.reply(ctx, no, p, n.threadMessage(no))
}

// threadMessage is no's reply in its parent's thread: an update's digest,
// or the whole card of an opening or a resolve.
func (n *Notifier) threadMessage(no *alert.Notification) message {
	if no.IncidentResolved || no.Opening {
		return n.render(no)
	}
	var msg message
	msg.blocks, msg.text = n.updateBlocks(no)
	msg.minimal = msg.blocks[:1:1]
	return msg
}

// allResolved reports whether no carries no firing alert.
func allResolved(no *alert.Notification) bool {
	firing, _ := no.Counts()
	return firing == 0
}

// redrawnNoteGeneral ends a parent redrawn for an update (escalated, paged again)
// when the store cannot say what it leaves out (redrawnNote):
// its counts and alert lines are the update's and those of the incident's
// earlier alerts that came with it, still firing (alert.Notification's
// WithStillFiring).
const redrawnNoteGeneral = "Redrawn for the update that changed the incident: it lists that update's alerts and the incident's earlier ones Alertmanager sent again with it, still firing; an earlier alert of another Alertmanager group is not listed (its updates are in the thread): `/alertrouter incidents` counts the incident's firing alerts."

// redrawnNote is the note under a parent redrawn for update no: how many
// of the incident's alerts notified here and still firing the redraw does
// not list — members of its incident at this integration (the store's)
// that no's webhook did not carry, sent in another Alertmanager group (a
// review: a ticket's alert vanished from its parent redrawn as another
// group's page, the header "1 firing") —, or, when the store cannot say,
// redrawnNoteGeneral.
func (n *Notifier) redrawnNote(ctx context.Context, no *alert.Notification) string {
	unlisted, ok := n.unlisted(ctx, no)
	switch {
	case !ok:
		return redrawnNoteGeneral
	case unlisted == 0:
		return "Redrawn for the update that changed the incident: it lists that update's alerts and the incident's earlier ones still firing that it notifies here."
	}
	alerts, are := "alerts", "are"
	if unlisted == 1 {
		alerts, are = "alert", "is"
	}
	return fmt.Sprintf("Redrawn for the update that changed the incident: it lists that update's alerts and the incident's earlier ones Alertmanager sent again with it, still firing. *%d earlier %s of the incident still firing %s not listed* (not in this update: another Alertmanager group's, or muted in Alertmanager since; the header counts the listed ones): `/alertrouter incidents` counts them, and their updates are in the thread.", unlisted, alerts, are)
}

// unlisted counts the members of no's incident at this integration (the
// store's, read within a second) that no's webhook did not carry; ok
// false without a store that reads them, or when the read fails.
func (n *Notifier) unlisted(ctx context.Context, no *alert.Notification) (int, bool) {
	if n.marks == nil {
		return 0, false
	}
	r, ok := n.marks.o.Store.(store.IncidentJoinsReader)
	if !ok {
		return 0, false
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	joins, err := r.IncidentJoins(rctx, []string{store.IncidentKey(n.marks.o.KeyPrefix, no.Incident, no.Receiver+"/"+no.Integration)})
	if err != nil || len(joins) != 1 {
		return 0, false
	}
	count := 0
	carried := alert.Fingerprints(no.Webhook, no.Results)
	for fp := range joins[0] {
		if !carried[fp] {
			count++
		}
	}
	return count, true
}

// reply posts msg in p's thread, in p's channel (a templated channel is
// rendered once, for the parent), and edits the parent when the incident
// resolves or fires again; firing again, the Ref says the decision the
// parent is now drawn with.
func (n *Notifier) reply(ctx context.Context, no *alert.Notification, p parentRef, msg message) error {
	if no.IncidentResolved && n.marks != nil {
		// Marked resolved before the resolve is posted: a partial resolve
		// checking the mark meanwhile (deliver) is not posted after it (a
		// review: marked once the parent was redrawn, four came between).
		// Should the post fail, Alertmanager's retry posts it.
		n.marks.parentEdited(ctx, no.Incident, p, true)
	}
	if _, err := n.post(ctx, no, msg, p.channel, p.ts); err != nil {
		return err
	}
	if no.IncidentResolved || no.Opening {
		if n.editParent(ctx, no, p, msg, true) && !no.IncidentResolved {
			no.Ref = p.drawnAs(no.Action).String()
		}
	}
	return nil
}

// editParent redraws the incident's parent message as msg, with the
// triage lines kept for it (who acknowledged, escalated… — the resolved
// parent keeps them too) and the buttons that apply; tell says whether the
// triage hears of it (firing again; a resolve reply marked before posting
// it). The news is in
// the thread; editing the parent is cosmetic, so a failure is logged rather
// than making Alertmanager resend the reply; editParent reports whether the
// parent was edited.
func (n *Notifier) editParent(ctx context.Context, no *alert.Notification, p parentRef, msg message, tell bool) bool {
	lines, st := []string(nil), newTriageState(no)
	if n.triage != nil {
		lines, st = n.triage.view(ctx, no, p, st)
	}
	drawn := msg.withActions(n, no, lines, st)
	if tell && !no.IncidentResolved && n.marks != nil {
		// Whether or not Slack takes the edit: the incident fires again,
		// which a click on the parent must hear (its resolve was marked
		// before it was posted: reply) — before the edit, so that another
		// replica's resolved drawing waiting for its turn (redrawLater)
		// reads it and is not sent over this one (a review: cleared after
		// the edit, a later redraw read the old mark and painted the
		// firing incident resolved).
		n.marks.parentEdited(ctx, no.Incident, p, false)
	}
	release := n.holdRedraw(p)
	defer release()
	err := n.callRefusable(ctx, no, drawn, nil, func(ctx context.Context, blocks []sl.Block) error {
		_, _, _, err := n.api.UpdateMessageContext(ctx, p.channel, p.ts, sl.MsgOptionBlocks(blocks...), sl.MsgOptionText(msg.text, false))
		return err
	})
	if err != nil {
		// The resolved drawing Slack refused for now — rate limited
		// (Tier 3), or failing (5xx, the connection cut) on every attempt
		// within the webhook — is drawn again later: the webhook is
		// answered, its resolve posted in the thread, and the parent would
		// say firing for good (an audit: a burst of 500s and resets).
		if wait, ok := laterWait(err); ok && tell && no.IncidentResolved && n.marks != nil && n.redrawLater(no, p, msg, wait) {
			n.logger.Warn("edit parent message refused for now (rate limited, Retry-After, or Slack failing): drawn again later", "incident", no.Incident, "retry_after", wait, "err", err)
			return false
		}
		n.logger.Warn("edit parent message failed", "incident", no.Incident, "err", err)
		return false
	}
	n.redrawn(p)
	return true
}

// post posts msg to channel, in the thread of threadTS when set.
func (n *Notifier) post(ctx context.Context, no *alert.Notification, msg message, channel, threadTS string) (parentRef, error) {
	var p parentRef
	data := msg.data
	if data == nil {
		data = notify.NewData(no) // a thread reply's digest renders no template but the poster's
	}
	poster := n.postOptions(data)
	pace := &paced{Pacer: pacerOf(n.cfg.APIURL, channel), page: no.Action == alert.ActionPage}
	err := n.callRefusable(ctx, no, msg, pace, func(ctx context.Context, blocks []sl.Block) error {
		opts := append([]sl.MsgOption{sl.MsgOptionBlocks(blocks...), sl.MsgOptionText(msg.text, false)}, poster...)
		if threadTS != "" {
			opts = append(opts, sl.MsgOptionTS(threadTS))
		}
		ch, ts, err := n.api.PostMessageContext(ctx, channel, opts...)
		if err == nil && ts == "" {
			// slack-go takes `{}` (no "ok", no "error") for a success: a
			// 2xx that posted nothing (a review).
			err = errNoMessage
		}
		p = parentRef{channel: ch, ts: ts}
		if err == nil && ch != "" && ch != channel {
			// Parents go to the channel's name, their replies to the id
			// Slack answered: one channel, one pace.
			alias(n.cfg.APIURL, ch, pace.Pacer)
		}
		return err
	})
	var se sl.SlackErrorResponse
	if errors.As(err, &se) && channelErrors[se.Err] {
		// The hint says "check channel": which one, when the channel
		// is a template (an audit of the logs).
		err = fmt.Errorf("%w (channel %s)", err, channel)
	}
	return p, err
}

// channelErrors are Slack's error codes about the channel posted to.
var channelErrors = map[string]bool{"channel_not_found": true, "not_in_channel": true, "is_archived": true, "no_permission": true,
	"restricted_action": true, "restricted_action_read_only_channel": true, "restricted_action_thread_only_channel": true,
	"restricted_action_non_threadable_channel": true, "ekm_access_denied": true}

// errNoMessage is a post answered without the message it made (no ts).
var errNoMessage = errors.New("the answer names no message posted")

// callRefusable runs send (callWith: retries, timeouts; a pace says send
// is a chat.postMessage to its channel) with msg's blocks and, when Slack
// refuses them (refusedMessage: a limit the router's drawing missed), once
// more with msg's minimal blocks: a ticket that says less is better than
// none. A second refusal is permanent.
func (n *Notifier) callRefusable(ctx context.Context, no *alert.Notification, msg message, pace *paced, send func(ctx context.Context, blocks []sl.Block) error) error {
	err := n.callWith(ctx, pace, func(ctx context.Context) error { return send(ctx, msg.blocks) })
	var se sl.SlackErrorResponse
	if !errors.As(err, &se) || !refusedMessage[se.Err] || len(msg.minimal) == 0 {
		return err
	}
	n.refusedLogs.Log(ctx, n.logger, slog.LevelWarn, "refused:"+se.Err, "Slack refused the message, sending it once more as a minimal message", "incident", no.Incident, "slack_error", se.Err)
	return n.callWith(ctx, pace, func(ctx context.Context) error { return send(ctx, msg.minimal) })
}

// call runs one idempotent API call (callWith).
func (n *Notifier) call(ctx context.Context, f func(ctx context.Context) error) error {
	return n.callWith(ctx, nil, f)
}

// oneAttemptKey marks a context whose calls make one attempt, not the
// retry policy's (a later redraw: its next try is its retry).
type oneAttemptKey struct{}

// callWith runs one API call with retries, a per-attempt timeout and the
// classification of its failures. A pace says the call is a
// chat.postMessage to its channel, paced once Slack rate-limited it
// (pace.go), and not idempotent (Slack takes no idempotency
// key): an attempt that sent its request and got no answer saying what
// became of it (a timeout, the connection lost after the request was
// written, an answer cut off, a proxy's 502, 503 or 504: proxyAnswer) may
// have posted, so it is not retried here (notify.OutcomeUnknown) — every
// retry that completed late was one more parent message, never resolved —
// and fails retryable: the webhook is answered 5xx and Alertmanager's
// retry posts it again, at most one duplicate per Alertmanager attempt.
// So is a post Slack answers fatal_error or internal_error (mayHaveActed).
// Failures known to have posted nothing (a connection refused, an answer
// from Slack: rate limited, another 5xx, another error code) are retried
// as for any call; so is every failure of a call that is no post (chat.update is
// idempotent).
func (n *Notifier) callWith(ctx context.Context, pace *paced, f func(ctx context.Context) error) error {
	posts := pace != nil
	var turn time.Time // the turn a 429 kept for this post's retry
	policy := n.deps.Retry
	if ctx.Value(oneAttemptKey{}) != nil {
		policy.MaxAttempts = 1
	}
	return notify.Retry(ctx, policy, func(ctx context.Context) error {
		if posts {
			err := n.awaitTurn(ctx, pace, turn)
			turn = time.Time{} // kept for the retry after its 429 only
			if err != nil {
				return err
			}
		}
		actx, cancel := context.WithTimeout(ctx, time.Duration(n.cfg.Timeout))
		defer cancel()
		var post postTrace
		if posts {
			actx = post.trace(actx)
		}
		n.metrics.Attempt()
		began := time.Now()
		err := f(actx)
		if err == nil {
			return nil
		}
		var (
			rl *sl.RateLimitedError
			se sl.SlackErrorResponse
			sc sl.StatusCodeError
		)
		switch {
		case errors.As(err, &rl) || posts && post.status.Load() == http.StatusTooManyRequests:
			// slack-go reads a Retry-After in seconds only: given as a date,
			// or unreadable, its parse error read as an unknown outcome —
			// claims held, the pace never engaged, posts in bursts (a
			// review). A 429 posted nothing: the trace's reading of the
			// wait (0 when unreadable: the pace's interval).
			wait, why := time.Duration(post.retryAfter.Load()), "call Slack: Slack rate-limited it (429, a Retry-After slack-go could not read: %w)"
			if rl != nil {
				wait, why = rl.RetryAfter, "call Slack: %w"
			}
			err = fmt.Errorf(why, err)
			n.metrics.Failure(notify.ReasonRateLimited)
			if posts {
				turn = pace.Limit(time.Now(), wait)
			}
			return notify.RetryAfter(err, wait)
		case errors.As(err, &se):
			if se.Err == "ratelimited" || se.Err == "rate_limited" {
				n.metrics.Failure(notify.ReasonRateLimited)
				if posts {
					turn = pace.Limit(time.Now(), 0)
				}
				// No Retry-After: the backoff's wait (RetryAfter 0), and a
				// parent's redraw is tried again later (redrawLater).
				return notify.RetryAfter(fmt.Errorf("call Slack: %w", err), 0)
			}
			if permanentErrors[se.Err] {
				n.metrics.Failure(notify.ReasonClientError)
				return permanentError(err, se.Err)
			}
			n.metrics.Failure(notify.ReasonServerError)
			if posts && mayHaveActed[se.Err] {
				return notify.OutcomeUnknownHeld(fmt.Errorf("call Slack: %w (Slack says the post may have been made before it failed: not posted again before Alertmanager's retry)", err))
			}
			return fmt.Errorf("call Slack: %w", err)
		case errors.As(err, &sc):
			n.metrics.Failure(notify.ReasonForStatus(sc.Code))
			err = fmt.Errorf("call Slack: %w", err)
			if posts && proxyAnswer(sc.Code, &post) {
				return proxyOutcome(sc.Code, fmt.Errorf("%w (a proxy's answer, or Slack's gateway's: the post may have reached Slack and been made; not posted again before Alertmanager's retry)", err))
			}
			return post.retryAfterOf(err)
		}
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || errors.Is(err, errNoMessage) {
			// An answer that is no Slack JSON — an HTML page answered 200
			// by a proxy, a captive portal or a wrong api_url — was
			// counted and told as no answer, sending the operator after
			// the network (an audit). It may have come after Slack took a
			// post: not posted again before Alertmanager's retry.
			n.metrics.Failure(notify.ReasonServerError)
			err = fmt.Errorf("call Slack: the answer is not Slack's JSON (an HTML page? a proxy's, a captive portal's or a wrong api_url's): check api_url and the egress proxy: %w", err)
			if posts {
				return notify.OutcomeUnknownHeld(err)
			}
			return err
		}
		// No answer from Slack (or a proxy refusing the tunnel to it).
		err = notify.ProxyRefused(err, notify.Proxied(n.cfg.HTTPConfig))
		err = n.metrics.NoAnswer(ctx, actx, began, time.Duration(n.cfg.Timeout), "call Slack", err)
		if posts && post.mayHavePosted(err) {
			return notify.OutcomeUnknownHeld(fmt.Errorf("%w (the post was sent and Slack may have made it: not posted again before Alertmanager's retry)", err))
		}
		return err
	})
}

// awaitTurn waits for the post's turn on its channel: kept (the turn a 429
// of its own kept for its retry: the Retry-After its retry waited), or the
// next (notify.Pacer.Turn), at most maxPaceWait away (a ticket's: a postInterval
// less, so the last turn within reach is left to the mirror of a page) and
// half of what is left of ctx; a turn further off fails the attempt,
// retryable after it, sending nothing.
func (n *Notifier) awaitTurn(ctx context.Context, pace *paced, kept time.Time) error {
	reach := maxPaceWait
	if !pace.page {
		reach -= postInterval
	}
	wait, limit, ok := pace.TurnWithin(ctx, kept, reach)
	switch {
	case !ok && !kept.IsZero():
		n.metrics.Failure(notify.ReasonRateLimited)
		return notify.Later(fmt.Errorf("Slack rate-limited the channel (429): this post's retry is due in %s, past half of the webhook's time left; not posted (retried later)", wait.Round(time.Millisecond)))
	case !ok:
		n.metrics.Failure(notify.ReasonRateLimited)
		return notify.Later(fmt.Errorf("Slack rate-limited the channel: its posts are paced to one a second, and this one's turn is %s away, past the %s a post waits (a page's mirror %s; at most half of the webhook's time left); not posted (retried later)",
			wait.Round(time.Millisecond), limit.Round(time.Millisecond), maxPaceWait))
	case wait <= 0:
		return nil
	}
	return notify.Sleep(ctx, wait)
}

// mayHaveActed are the Slack error codes its Web API reference says of
// that "some aspect of the operation [may have] succeeded before the error
// was raised": a post they answer may have been made.
var mayHaveActed = map[string]bool{"fatal_error": true, "internal_error": true}

// postTrace follows one post on the wire: whether the request went out
// whole, whether an answer began to arrive, and the Retry-After of the
// answer (recorded by retryAfterTransport: slack-go drops the headers of
// an error status).
type postTrace struct {
	wrote, answered atomic.Bool
	// retryAfter is the answer's Retry-After, as a duration; hasRetryAfter
	// says it had one (even one that did not parse).
	retryAfter    atomic.Int64
	hasRetryAfter atomic.Bool
	// status is the last answer's status code.
	status atomic.Int32
	// keepAnswer (set before the request) asks for the answer's status,
	// Content-Type and the start of its body in answer: slack-go drops an
	// incoming webhook's body, Slack's error code ("channel_not_found",
	// "no_service") or the text of a 2xx that is not Slack's "ok".
	keepAnswer bool
	answer     atomic.Pointer[webhookAnswer]
}

// webhookAnswer is what postTrace.keepAnswer keeps of an answer.
type webhookAnswer struct {
	status      int
	contentType string
	body        []byte // at most maxKeptAnswer bytes
	// cut: the body ended before its end (a connection lost mid-body).
	cut bool
}

// maxKeptAnswer bounds the body kept of an incoming webhook's answer.
const maxKeptAnswer = 4 << 10

// postTraceKey keys a postTrace in the context of the request it follows,
// for retryAfterTransport.
type postTraceKey struct{}

// trace returns ctx with p following the request made with it. Every
// request made with ctx adds to p: once one wrote or was answered, p says
// so.
func (p *postTrace) trace(ctx context.Context) context.Context {
	ctx = context.WithValue(ctx, postTraceKey{}, p)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(w httptrace.WroteRequestInfo) {
			if w.Err == nil {
				p.wrote.Store(true)
			}
		},
		GotFirstResponseByte: func() { p.answered.Store(true) },
	})
}

// mayHavePosted reports whether the post that failed with err (no full
// answer from Slack) may have been made all the same: an answer began to
// arrive (a status line came, and was then cut: the request was taken), or
// the request went out whole. End of file after the request was written,
// also on a kept-alive connection, is such a case: a proxy that forwarded
// the post and then closed the connection looks the same as Slack closing
// an idle connection as the request arrived. Go's transport itself sends a
// request again, on a new connection, when the connection proved closed
// before any of it was written (its nothingWrittenError: slack-go's and
// the incoming webhook's requests can be rewound, GetBody); what reaches
// here as end of file was written, and the transport does not retry a
// POST then, as it cannot tell either. Its "server closed idle connection"
// is a connection it had closed before the request could be written:
// nothing was sent.
func (p *postTrace) mayHavePosted(err error) bool {
	if p.answered.Load() {
		return true
	}
	return p.wrote.Load() && !strings.Contains(err.Error(), "server closed idle connection")
}

// proxyAnswer reports whether an error status code answering a post
// leaves its outcome unknown: a 502 or a 504 — what a proxy (an egress
// proxy, a TLS-inspecting one, Slack's own load balancers) answers when
// the server behind it failed or was slow, after it may have forwarded the
// request — or a 503 without Retry-After (a 503 with one asks that the
// request be sent again later: it was not taken). Slack's own errors come
// with 200 (ok: false), 429, or another status.
func proxyAnswer(code int, p *postTrace) bool {
	switch code {
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	case http.StatusServiceUnavailable:
		return !p.hasRetryAfter.Load()
	}
	return false
}

// proxyOutcome is the unknown outcome of a post a proxy answered code
// (proxyAnswer): a 502 or a 504 came back from a proxy that handed the post
// on — the upstream answered badly or late, most likely after Slack made it
// — so its claims are held (notify.OutcomeUnknownHeld: a review counted 38
// posts in 70 s of Alertmanager retries when they were released); a 503
// without Retry-After most likely forwarded nothing ("no healthy
// upstream"), and is released for Alertmanager's retry.
func proxyOutcome(code int, err error) error {
	if code == http.StatusServiceUnavailable {
		return notify.OutcomeUnknown(err)
	}
	return notify.OutcomeUnknownHeld(err)
}

// retryAfterOf is err with the wait the answer's Retry-After asked for
// (notify.RetryAfter), when it had one.
func (p *postTrace) retryAfterOf(err error) error {
	if !p.hasRetryAfter.Load() {
		return err
	}
	return notify.RetryAfter(err, time.Duration(p.retryAfter.Load()))
}

// retryAfterTransport records the Retry-After of every answer to a request
// a postTrace follows (postTraceKey) in it.
type retryAfterTransport struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if p, ok := req.Context().Value(postTraceKey{}).(*postTrace); ok && err == nil {
		// One that does not parse is a wait of 0: the policy's backoff.
		p.status.Store(int32(resp.StatusCode))
		p.hasRetryAfter.Store(resp.Header.Get("Retry-After") != "")
		p.retryAfter.Store(int64(amnotify.ParseRetryAfter(resp.Header, time.Now())))
		if p.keepAnswer {
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxKeptAnswer))
			p.answer.Store(&webhookAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body, cut: rerr != nil})
			// What was read is read again by the client.
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		}
	}
	return resp, err
}

// CloseIdleConnections closes the idle keep-alive connections of n's
// client (pagerduty.Notifier.CloseIdleConnections: a reload replaces every
// notifier). A later post, redraw or triage answer of n dials again.
func (n *Notifier) CloseIdleConnections() { n.httpClient.CloseIdleConnections() }

// CloseIdleConnections closes the base transport's idle connections
// (http.Client.CloseIdleConnections reaches them through it).
func (t retryAfterTransport) CloseIdleConnections() { notify.CloseIdleConnections(t.base) }

// httpClient builds the client of cfg's http_config (notify.HTTPClient),
// its answers' Retry-After recorded for the posts (retryAfterTransport).
func httpClient(cfg *Config) (*http.Client, error) {
	hc, err := notify.HTTPClient(cfg.HTTPConfig, "slack", time.Duration(cfg.Timeout))
	if err != nil {
		return nil, err
	}
	hc.Transport = retryAfterTransport{base: hc.Transport}
	return hc, nil
}
