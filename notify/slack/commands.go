package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// commandUsage answers /alertrouter without (or with an unknown)
// subcommand.
const commandUsage = "Usage: `/alertrouter explain <fingerprint>` · `/alertrouter incidents` · `/alertrouter silence <incident> <duration, e.g. 2h> [comment]`"

// Slash command bounds.
const (
	// commandLookback is how far back the journal is read.
	commandLookback = model.Duration(24 * time.Hour)
	// minCommandSilence and maxCommandSilence bound a silence made with
	// /alertrouter silence.
	minCommandSilence  = time.Minute
	maxCommandSilence  = 7 * 24 * time.Hour
	maxIncidentsListed = 20
	// maxCommandComment bounds the comment of /alertrouter silence, in
	// characters.
	maxCommandComment = 500
)

// command handles one /alertrouter invocation (form fields of Slack's
// slash command request), answering through its response_url.
func (t *Triage) command(ctx context.Context, form url.Values, secret string) {
	cmd := sl.SlashCommand{
		TeamDomain: form.Get("team_domain"), ChannelID: form.Get("channel_id"), UserID: form.Get("user_id"),
		UserName: form.Get("user_name"), Command: form.Get("command"), Text: form.Get("text"),
		ResponseURL: form.Get("response_url"), TriggerID: form.Get("trigger_id"),
	}
	reply := func(text string) {
		t.ephemeral(ctx, &sl.InteractionCallback{ResponseURL: cmd.ResponseURL}, text)
	}
	args := strings.Fields(cmd.Text)
	sub := ""
	if len(args) > 0 {
		sub = strings.ToLower(args[0])
	}
	if t.o.Journal == nil && (sub == "explain" || sub == "incidents" || sub == "silence") {
		reply("The decision journal is not available: nothing to look up.")
		return
	}
	switch {
	case sub == "explain" && len(args) == 2:
		reply(t.explain(ctx, unquote(args[1])))
	case sub == "incidents" && len(args) == 1:
		reply(t.incidents(ctx))
	case sub == "silence" && len(args) >= 3:
		// Words after the duration are the silence's comment.
		t.silenceCommand(ctx, cmd, unquote(args[1]), args[2], strings.Join(args[3:], " "), secret)
	case sub == "help" || sub == "":
		reply(commandUsage)
	default:
		t.o.Metrics.count("command", OutcomeUnknown)
		reply(commandUsage)
	}
}

// unquote strips the backticks around an argument copied from an answer
// (the incidents list writes `inc/1`).
func unquote(arg string) string {
	if s := strings.Trim(arg, "`"); s != "" {
		return s
	}
	return arg
}

// maxJournalRead bounds the decision entries one look-up reads (newest
// first, within commandLookback); past it the answer says it read only the
// newest ones. A variable for the tests.
var maxJournalRead = 100_000

// errScanned ends a journal scan early.
var errScanned = errors.New("scanned enough")

// scan calls fn with the decision entries of the last commandLookback that
// f matches, newest first, reading the journal a page at a time, until fn
// returns false or maxJournalRead entries were read; truncated reports the
// latter with older entries left unread.
func (t *Triage) scan(ctx context.Context, f journal.Filter, fn func(*journal.Entry) bool) (truncated bool, err error) {
	n := 0
	err = journal.Each(ctx, t.o.Journal, journal.Query{
		Since: t.o.Now().Add(-time.Duration(commandLookback)), Kind: journal.KindDecision,
		Filter: f, Newest: true, Limit: maxJournalRead + 1,
	}, func(e *journal.Entry) error {
		if n++; n > maxJournalRead {
			truncated = true
			return errScanned
		}
		if !fn(e) {
			return errScanned
		}
		return nil
	})
	if errors.Is(err, errScanned) {
		err = nil
	}
	return truncated, err
}

// incidentView is what the journal says of one incident: the labels of its
// alerts firing now (the newest decision of each), and the Slack targets
// (receiver/integration) that were or would have been notified of it.
type incidentView struct {
	firing []map[string]string
	// others are the labels of the incident's alerts firing now that
	// routes send to other receivers only (with readIncident's receiver).
	others  []map[string]string
	targets []string
}

// readIncident reads incident's decisions of the last commandLookback.
// With receiver set, the firing alerts are only those routed to it: one
// router incident may hold alerts that routes send to other receivers
// (another team's channel), which a click on this receiver's message must
// not silence; those are the view's others. An alert's newest decision
// says where it is routed.
func (t *Triage) readIncident(ctx context.Context, incident, receiver string) (incidentView, error) {
	var v incidentView
	seen, targets := map[string]bool{}, map[string]bool{}
	_, err := t.scan(ctx, journal.Filter{Incident: incident}, func(e *journal.Entry) bool {
		// An entry naming no receiver is kept.
		mine := receiver == "" || len(e.Receivers) == 0 || slices.Contains(e.Receivers, receiver)
		if mine {
			for _, d := range e.Deliveries {
				targets[d.Receiver+"/"+d.Integration] = true
			}
			for _, r := range e.Receivers {
				for k := range t.targets {
					if strings.HasPrefix(k, r+"/") {
						targets[k] = true
					}
				}
			}
		}
		if !seen[e.Fingerprint] {
			seen[e.Fingerprint] = true
			if e.Status == "firing" && len(e.Labels) > 0 {
				if mine {
					v.firing = append(v.firing, e.Labels)
				} else {
					v.others = append(v.others, e.Labels)
				}
			}
		}
		return true
	})
	v.targets = slices.Sorted(maps.Keys(targets))
	return v, err
}

// createSilences creates one silence per matcher set, all alike otherwise,
// and returns their ids; when one fails, those already made are expired.
func (t *Triage) createSilences(ctx context.Context, sets [][]amsilence.Matcher, s amsilence.Silence) ([]string, error) {
	var ids []string
	for _, ms := range sets {
		s.Matchers = ms
		id, err := t.o.Silences.Create(ctx, s)
		if err != nil {
			if len(ids) > 0 {
				if xerr := t.expireSilences(context.WithoutCancel(ctx), ids); xerr != nil {
					t.o.Logger.Warn("expire the silences made before one failed (they end on their own)", "silences", ids, "err", xerr)
				}
			}
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// expireSilences expires every silence of ids (all of them, whatever one
// answers).
func (t *Triage) expireSilences(ctx context.Context, ids []string) error {
	var errs []error
	for _, id := range ids {
		if err := t.o.Silences.Expire(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// silenceIDs splits the silence ids kept in a message's state.
func silenceIDs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}

// explain describes the newest decision about the alert with fingerprint fp.
func (t *Triage) explain(ctx context.Context, fp string) string {
	var found *journal.Entry
	_, err := t.scan(ctx, journal.Filter{Text: fp}, func(e *journal.Entry) bool {
		if e.Fingerprint != fp {
			return true
		}
		c := *e
		found = &c
		return false
	})
	if err != nil {
		return "Reading the journal failed: " + err.Error()
	}
	if found == nil {
		return fmt.Sprintf("No decision about fingerprint `%s` in the last %s.", esc(fp), commandLookback)
	}
	e := found
	var b strings.Builder
	fmt.Fprintf(&b, "*%s* `%s` (%s, %s)\n", esc(e.Alertname), esc(e.Fingerprint), esc(e.Status), e.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "*Decision:* %s", esc(string(e.Decision.Action)))
	if e.Decision.Policy != "" {
		fmt.Fprintf(&b, " (%s, %s)", esc(e.Decision.Policy), esc(e.Decision.Tier))
	}
	if identified(e.Sector) {
		fmt.Fprintf(&b, "\n*Sector:* %s ·", esc(e.Sector))
	} else {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, " *Incident:* `%s`", esc(e.Incident))
	for _, r := range e.Decision.Reasons {
		b.WriteString("\n• " + esc(r))
	}
	for _, d := range e.Deliveries {
		fmt.Fprintf(&b, "\n→ %s/%s: %s", esc(d.Receiver), esc(d.Integration), esc(d.Outcome))
	}
	if e.Suppressed {
		fmt.Fprintf(&b, "\nSuppressed by %s", esc(e.SuppressedBy))
	}
	return b.String()
}

// incidents lists the incidents with an alert whose newest decision is
// firing and notified: decisions of none, and alerts suppressed or muted,
// were never sent anywhere and make no incident of their own.
func (t *Triage) incidents(ctx context.Context) string {
	type inc struct {
		key    string
		action string
		firing int
		names  map[string]bool
	}
	byKey := map[string]*inc{}
	var order []string
	seen := map[string]bool{}
	truncated, err := t.scan(ctx, journal.Filter{}, func(e *journal.Entry) bool {
		if seen[e.Fingerprint] {
			return true
		}
		seen[e.Fingerprint] = true
		if e.Incident == "" || e.Status != "firing" || e.Decision.Action == alert.ActionNone || e.Decision.Action == "" || e.Suppressed || e.Muted {
			return true
		}
		i := byKey[e.Incident]
		if i == nil {
			i = &inc{key: e.Incident, names: map[string]bool{}}
			byKey[e.Incident] = i
			order = append(order, e.Incident)
		}
		i.firing++
		i.names[e.Alertname] = true
		if i.action == "" || e.Decision.Action == alert.ActionPage {
			i.action = string(e.Decision.Action)
		}
		return true
	})
	if err != nil {
		return "Reading the journal failed: " + err.Error()
	}
	span := fmt.Sprintf("last %s", commandLookback)
	if truncated {
		// Older decisions were not read: an incident whose alerts were
		// all decided before them is missing.
		span = fmt.Sprintf("newest %d decisions only, of the last %s", maxJournalRead, commandLookback)
	}
	if len(order) == 0 {
		return fmt.Sprintf("No firing incident (%s).", span)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*Firing incidents* (%s):", span)
	for n, k := range order {
		if n == maxIncidentsListed {
			fmt.Fprintf(&b, "\n…and %d more", len(order)-n)
			break
		}
		i := byKey[k]
		fmt.Fprintf(&b, "\n• `%s` · %s · %d firing · %s", esc(k), esc(i.action), i.firing, esc(strings.Join(slices.Sorted(maps.Keys(i.names)), ", ")))
	}
	return b.String()
}

// silenceCommand silences the firing alerts of incident for dur, and no
// other alert (incidentSilences), once per invocation (its trigger_id is
// claimed), comment (the words after the duration; may be empty) added to
// the silences' comment. The user must be allowed to silence by every Slack
// target the journal says the incident was notified through (their
// authorized.silence); when none of them is known, by every target of the
// same signing secret that offers silence. An incident with no firing alert
// in the journal is said so before that check: nothing would be silenced.
func (t *Triage) silenceCommand(ctx context.Context, cmd sl.SlashCommand, incident, durText, comment, secret string) {
	cb := &sl.InteractionCallback{ResponseURL: cmd.ResponseURL, User: sl.User{ID: cmd.UserID}}
	log := t.o.Logger.With("action", "silence", "command", true, "incident", incident, "user", cmd.UserID)
	dur, err := model.ParseDuration(durText)
	if err != nil || time.Duration(dur) < minCommandSilence || time.Duration(dur) > maxCommandSilence {
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		t.ephemeral(ctx, cb, fmt.Sprintf("%q is no duration between 1m and %s (e.g. 2h).", durText, model.Duration(maxCommandSilence)))
		return
	}
	var offering []string // receiver/integration
	for _, k := range slices.Sorted(maps.Keys(t.targets)) {
		if c := t.targets[k]; c.secret == secret && c.n.cfg.offers(ActionSilence) {
			offering = append(offering, k)
		}
	}
	if len(offering) == 0 || t.o.Silences == nil {
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		t.ephemeral(ctx, cb, "Silencing is not enabled for this Slack app (actions: [silence] and the alertmanager block).")
		return
	}
	won, err := dedup.Leases{Store: t.o.Store, TTL: t.o.ClaimTTL}.Acquire(ctx, []string{store.Key(t.o.KeyPrefix, "slack-command", incident, cmd.TriggerID)}, dedup.NewToken())
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		log.Error("claim the slash command", "err", err)
		t.ephemeral(ctx, cb, answerStoreDown)
		return
	}
	if !won[0] {
		t.o.Metrics.count(ActionSilence, OutcomeDuplicate)
		log.Info("slash command already handled")
		return
	}
	v, err := t.readIncident(ctx, incident, "")
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		t.ephemeral(ctx, cb, "Reading the journal failed: "+err.Error())
		return
	}
	if len(v.firing) == 0 {
		// Nothing would be silenced, whoever asks: said before the
		// authorization, so that a mistyped id is not answered "not
		// allowed" (and the answer is the same for an incident that does
		// not exist and one that stopped firing: it tells nobody which
		// incidents exist).
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		log.Info("action not taken", "reason", "no firing alert")
		t.ephemeral(ctx, cb, noFiringAlert(incident))
		return
	}
	if !t.commandAllowed(ctx, cb, log, incident, v.targets, offering) {
		return
	}
	p, err := t.planSilences(ctx, incident, v.firing, nil, nil)
	if err != nil {
		r := &refusal{err.Error(), OutcomeFailed}
		errors.As(err, &r)
		t.o.Metrics.count(ActionSilence, r.outcome)
		log.Info("action not taken", "reason", r.msg)
		t.ephemeral(ctx, cb, r.msg)
		return
	}
	sets := p.sets
	now := t.o.Now()
	comment, _ = notify.TruncateInRunes(comment, maxCommandComment)
	why := fmt.Sprintf("Silenced from Slack with /alertrouter for %s (incident %s)", model.Duration(dur), incident)
	if comment != "" {
		why += ": " + comment
	}
	ids, err := t.createSilences(ctx, sets, amsilence.Silence{
		StartsAt: now, EndsAt: now.Add(time.Duration(dur)),
		CreatedBy: createdBy(sl.User{ID: cmd.UserID, Name: cmd.UserName}),
		Comment:   why,
	})
	// The answers follow on a deadline of their own: a slow Alertmanager
	// may have spent the command's.
	fctx, cancel := afterAction(ctx)
	defer cancel()
	if errors.Is(err, amsilence.ErrUnconfirmed) {
		t.o.Metrics.count(ActionSilence, OutcomeUnconfirmed)
		log.Warn(logUnconfirmed, "err", err)
		t.ephemeral(fctx, cb, unconfirmedAnswer(ActionSilence, incident, err, false))
		return
	}
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		log.Error("action failed", "err", err)
		t.ephemeral(fctx, cb, answerFailed("Silence", err))
		return
	}
	t.o.Metrics.count(ActionSilence, OutcomeDone)
	log.Info("action taken from Slack", "silences", ids)
	said := ""
	if comment != "" {
		said = fmt.Sprintf(" (comment: %s)", esc(comment))
	}
	msg := &sl.WebhookMessage{ResponseType: sl.ResponseTypeInChannel,
		Text: fmt.Sprintf("<@%s> silenced incident %s in Alertmanager for %s%s: %s.%s", cmd.UserID, code(incident), model.Duration(dur), said, silencesText(ids, sets), silencedCommandNote)}
	if err := sl.PostWebhookCustomHTTPContext(fctx, cmd.ResponseURL, t.http, msg); err != nil {
		log.Warn("answer through response_url", "err", err)
	}
}

// commandAllowed reports whether the slash command's user may silence
// incident, answering them when not: the targets that posted the incident
// (targets, as the journal says) decide, as their buttons would; unknown,
// the strictest: every target of the Slack app offering silence.
func (t *Triage) commandAllowed(ctx context.Context, cb *sl.InteractionCallback, log *slog.Logger, incident string, targets, offering []string) bool {
	var judges []string
	for _, k := range targets {
		if slices.Contains(offering, k) {
			judges = append(judges, k)
		}
	}
	if len(judges) == 0 {
		judges = offering
	}
	lookups := groupLookups{}
	for _, k := range judges {
		ok, err := t.authorized(ctx, t.targets[k], ActionSilence, cb.User.ID, lookups)
		if ok {
			continue
		}
		if err != nil {
			t.o.Metrics.count(ActionSilence, OutcomeFailed)
			log.Error("action not taken: the user-group lookup failed", "err", err)
			t.ephemeral(ctx, cb, answerLookupFailed("silence incidents", err))
			return false
		}
		t.o.Metrics.count(ActionSilence, OutcomeRefused)
		log.Warn("action refused: user not authorized", "target", k)
		receiver, integration, _ := strings.Cut(k, "/")
		t.ephemeral(ctx, cb, fmt.Sprintf("You are not allowed to silence incident %s: %s.", code(incident), whoMay(t.targets[k], receiver, integration, ActionSilence)))
		return false
	}
	return true
}
