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
	"unicode"
	"unicode/utf8"

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
const commandUsage = "Usage: `/alertrouter explain <fingerprint> [all]` · `/alertrouter incidents [all]` · `/alertrouter silence <incident> <duration, e.g. 2h> [comment]`. " +
	"Each acts on this channel's alerts: those routed to the receivers posting here. With `all`, explain and incidents read every channel's."

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
		t.ephemeral(ctx, secret, &sl.InteractionCallback{ResponseURL: cmd.ResponseURL}, text)
	}
	// Slack sends the text with &, < and > escaped as in a message:
	// an incident key or a comment holding them (a `group_by: []` route's
	// matcher `owner="R&D"`) must be read as shown (an audit: "no firing
	// alert of incident …R&amp;amp;D…").
	args := commandArgs(unescMrkdwn(cmd.Text))
	sub := ""
	if len(args) > 0 {
		sub = strings.ToLower(args[0])
	}
	if t.o.Journal == nil && (sub == "explain" || sub == "incidents" || sub == "silence") {
		reply("The decision journal is not available: nothing to look up.")
		return
	}
	if sub == "explain" || sub == "incidents" || sub == "silence" {
		release, ok := t.commandSlot(ctx)
		if !ok {
			reply("Busy: another `/alertrouter` command is reading the decision journal on this replica. Try again in a few seconds.")
			return
		}
		defer release()
	}
	ch := commandChannel{id: cmd.ChannelID, name: form.Get("channel_name")}
	switch {
	case sub == "explain" && (len(args) == 2 || len(args) == 3 && strings.EqualFold(args[2], "all")):
		var scope *channelScope // nil: every channel's
		if len(args) == 2 {
			scope = t.channelScope(ch, secret)
		}
		reply(t.explain(ctx, unquote(args[1]), scope))
	case sub == "incidents" && (len(args) == 1 || len(args) == 2 && strings.EqualFold(args[1], "all")):
		var scope *channelScope
		if len(args) == 1 {
			scope = t.channelScope(ch, secret)
		}
		reply(t.incidents(ctx, scope))
	case sub == "silence" && len(args) >= 3:
		// Words after the duration are the silence's comment.
		t.silenceCommand(ctx, cmd, ch, unquote(args[1]), args[2], strings.Join(args[3:], " "), secret)
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

// commandSlotWait is how long a command waits for the journal-reading
// slot before it is answered busy. A variable for the tests.
var commandSlotWait = 5 * time.Second

// commandSlot takes the slot of the commands that read the journal: one
// at a time per replica, as the console builds one page at a time, so the
// webhooks keep a core. It waits up to commandSlotWait; ok false: busy.
func (t *Triage) commandSlot(ctx context.Context) (release func(), ok bool) {
	timer := time.NewTimer(commandSlotWait)
	defer timer.Stop()
	select {
	case t.reads <- struct{}{}:
		return func() { <-t.reads }, true
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, false
}

// errScanned ends a journal scan early.
var errScanned = errors.New("scanned enough")

// scan calls fn with the decision entries of the last commandLookback that
// f matches, newest first, reading the journal a page at a time, until fn
// returns false or maxJournalRead entries were read; truncated reports the
// latter with older entries left unread.
func (t *Triage) scan(ctx context.Context, f journal.Filter, fn func(*journal.Entry) bool) (truncated bool, err error) {
	n := 0
	// The filter is applied here, after the count: given to Each, which
	// counts the entries it matches, a filtered look-up (explain, an
	// incident's silence) read the whole window however large.
	err = journal.Each(ctx, t.o.Journal, journal.Query{
		Since: t.o.Now().Add(-time.Duration(commandLookback)), Kind: journal.KindDecision,
		Newest: true, Limit: maxJournalRead + 1,
	}, func(e *journal.Entry) error {
		if n++; n > maxJournalRead {
			truncated = true
			return errScanned
		}
		if !f.Match(e) {
			return nil
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
	// routes send to other receivers only, or to none (with viewOf's
	// receivers).
	others  []map[string]string
	targets []string
}

// incidentEntries are the decision entries of incident in the journal's
// last commandLookback, newest first.
func (t *Triage) incidentEntries(ctx context.Context, incident string) ([]*journal.Entry, error) {
	var entries []*journal.Entry
	_, err := t.scan(ctx, journal.Filter{Incident: incident}, func(e *journal.Entry) bool {
		entries = append(entries, e)
		return true
	})
	return entries, err
}

// viewOf is what entries (an incident's decisions of the last
// commandLookback, newest first: incidentEntries) say of it. With
// receivers set, the firing alerts are only those routed to one of them:
// one router incident may hold alerts that routes send to other receivers
// (another team's channel), which a click on this receiver's message must
// not silence, and alerts sent to no receiver at all (muted by a time
// interval, or decided none) — another team's as likely as this one's,
// theirs to silence; both are the view's others. With no receivers (nil)
// every alert is the view's. An alert's newest decision says where it is
// routed.
func (t *Triage) viewOf(entries []*journal.Entry, receivers []string) incidentView {
	var v incidentView
	seen, targets := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		mine := receivers == nil || slices.ContainsFunc(e.Receivers, func(r string) bool { return slices.Contains(receivers, r) })
		if mine {
			for _, d := range e.Deliveries {
				targets[d.Receiver+"/"+d.Integration] = true
			}
			for _, r := range e.Receivers {
				for k := range t.targets {
					if kr, _ := splitTarget(k); kr == r {
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
	}
	v.targets = slices.Sorted(maps.Keys(targets))
	return v
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
// answers). One Alertmanager does not know is over already (deleted, or
// lost with a restart without its data): an Unsilence retried on it could
// never succeed (an audit).
func (t *Triage) expireSilences(ctx context.Context, ids []string) error {
	var errs []error
	for _, id := range ids {
		if err := t.o.Silences.Expire(ctx, id); err != nil && !errors.Is(err, amsilence.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// commandArgs splits a command's text into words: at ASCII white space
// first — an incident key may hold a no-break space, shown as it is (a
// review) —, else, when that reads as no command (a subcommand, argument
// count or duration that does not parse), at any white space: Slack
// clients put no-break spaces in pasted text (a review: "incidents all"
// pasted answered the usage).
func commandArgs(text string) []string {
	args := strings.FieldsFunc(text, func(r rune) bool { return r < utf8.RuneSelf && unicode.IsSpace(r) })
	if validCommand(args) {
		return args
	}
	return strings.Fields(text)
}

// validCommand reports whether args read as one of the commands.
func validCommand(args []string) bool {
	if len(args) == 0 {
		return true
	}
	all := func(i int) bool { return len(args) == i || len(args) == i+1 && strings.EqualFold(args[i], "all") }
	switch strings.ToLower(args[0]) {
	case "help":
		return true
	case "explain":
		// A fingerprint is ASCII: "fp\u00a0all" is two words.
		return all(2) && !strings.ContainsFunc(args[1], func(r rune) bool { return r >= utf8.RuneSelf })
	case "incidents":
		return all(1)
	case "silence":
		if len(args) < 3 {
			return false
		}
		_, err := model.ParseDuration(args[2])
		return err == nil
	}
	return false
}

// silenceIDs splits the silence ids kept in a message's state.
func silenceIDs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}

// explain describes the newest decision about the alert with fingerprint
// fp: when scope is set, only an alert it holds (another team's alert, and
// where it went, is theirs to look up).
func (t *Triage) explain(ctx context.Context, fp string, scope *channelScope) string {
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
	if scope != nil {
		parents := t.scopeParents(ctx, scope, []*journal.Entry{found})
		if !scope.holds(found, parents) {
			return fmt.Sprintf("Fingerprint `%s` is not an alert of this channel (its newest decision routes it to %s). Run the command in that channel, or `/alertrouter explain %s all`.", esc(fp), t.routedText(found, parents), esc(fp))
		}
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
	b.WriteString(" *Incident:* " + code(e.Incident))
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
// were never sent anywhere and make no incident of their own. With scope
// set, only the alerts it holds are listed and counted.
func (t *Triage) incidents(ctx context.Context, scope *channelScope) string {
	type inc struct {
		key    string
		action string
		firing int
		names  map[string]bool
	}
	byKey := map[string]*inc{}
	var order []string
	seen := map[string]bool{}
	var kept []*journal.Entry
	truncated, err := t.scan(ctx, journal.Filter{}, func(e *journal.Entry) bool {
		if seen[e.Fingerprint] {
			return true
		}
		seen[e.Fingerprint] = true
		if e.Incident == "" || e.Status != "firing" || e.Decision.Action == alert.ActionNone || e.Decision.Action == "" || e.Suppressed || e.Muted {
			return true
		}
		c := *e
		kept = append(kept, &c)
		return true
	})
	if err == nil && scope != nil {
		parents := t.scopeParents(ctx, scope, kept)
		kept = slices.DeleteFunc(kept, func(e *journal.Entry) bool { return !scope.holds(e, parents) })
	}
	for _, e := range kept {
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
	}
	if err != nil {
		return "Reading the journal failed: " + err.Error()
	}
	span := fmt.Sprintf("last %s", commandLookback)
	if truncated {
		// Older decisions were not read: an incident whose alerts were
		// all decided before them is missing.
		span = fmt.Sprintf("newest %d decisions only, of the last %s", maxJournalRead, commandLookback)
	}
	where, none, hint := "", "No firing incident", ""
	if scope != nil {
		where, none, hint = " of this channel", "No firing incident in this channel", " — `/alertrouter incidents all` lists every channel's"
	}
	if len(order) == 0 {
		return fmt.Sprintf("%s (%s)%s.", none, span, hint)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*Firing incidents%s* (%s)%s:", where, span, hint)
	for n, k := range order {
		if n == maxIncidentsListed {
			fmt.Fprintf(&b, "\n…and %d more", len(order)-n)
			break
		}
		i := byKey[k]
		fmt.Fprintf(&b, "\n• %s · %s · %d firing · %s", code(k), esc(i.action), i.firing, esc(strings.Join(slices.Sorted(maps.Keys(i.names)), ", ")))
	}
	return b.String()
}

// silenceCommand silences the firing alerts of incident for dur, and no
// other alert (incidentSilences), once per invocation (its trigger_id is
// claimed), comment (the words after the duration; may be empty) added to
// the silences' comment. It acts for the Slack targets (receiver/
// integration, of the same signing secret, offering silence) that post in
// the command's channel (here): the incident's alerts routed to their
// receivers are silenced, the user must be allowed by their
// authorized.silence as by their buttons, and each of their parents of the
// incident is told in its thread. The incident's other alerts — another
// team's, posted in its own channel, or sent nowhere — are spared, and the
// answer names the channels left alone. An incident with no firing alert
// in the journal is said so before any other check: nothing would be
// silenced.
func (t *Triage) silenceCommand(ctx context.Context, cmd sl.SlashCommand, ch commandChannel, incident, durText, comment, secret string) {
	cb := &sl.InteractionCallback{ResponseURL: cmd.ResponseURL, User: sl.User{ID: cmd.UserID}}
	log := t.o.Logger.With("action", "silence", "command", true, "incident", incident, "user", cmd.UserID, "channel", cmd.ChannelID)
	dur, err := model.ParseDuration(durText)
	if err != nil || time.Duration(dur) < minCommandSilence || time.Duration(dur) > maxCommandSilence {
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		// Escaped: the text was unescaped to be read, and a typed
		// <!channel> must not come back live (a review).
		t.ephemeral(ctx, secret, cb, fmt.Sprintf("%s is no duration between 1m and %s (e.g. 2h).", code(durText), model.Duration(maxCommandSilence)))
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
		t.ephemeral(ctx, secret, cb, "Silencing is not enabled for this Slack app (actions: [silence] and the alertmanager block).")
		return
	}
	won, err := dedup.Leases{Store: t.o.Store, TTL: t.o.ClaimTTL}.Acquire(ctx, []string{store.Key(t.o.KeyPrefix, "slack-command", incident, cmd.TriggerID)}, dedup.NewToken())
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		log.Error("claim the slash command", "err", err)
		t.ephemeral(ctx, secret, cb, answerStoreDown)
		return
	}
	if !won[0] {
		t.o.Metrics.count(ActionSilence, OutcomeDuplicate)
		log.Info("slash command already handled")
		return
	}
	// The journal is read once: the whole incident's view, then the
	// channel's receivers' view of the same entries.
	entries, err := t.incidentEntries(ctx, incident)
	if alt := notify.UnshowBidi(strings.ReplaceAll(incident, "ˋ", "`")); err == nil && len(entries) == 0 && alt != incident {
		// Slack shows a key's backtick as ˋ (code) and its bidirectional
		// controls as [U+202E] (notify.ShowBidi): a key copied from a
		// message names the incident with the backtick and the controls
		// — after the key as typed, which may hold ˋ itself (a review).
		if more, err2 := t.incidentEntries(ctx, alt); err2 != nil || len(more) > 0 {
			entries, err, incident = more, err2, alt
		}
	}
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		t.ephemeral(ctx, secret, cb, "Reading the journal failed: "+err.Error())
		return
	}
	all := t.viewOf(entries, nil)
	if len(all.firing) == 0 {
		// Nothing would be silenced, whoever asks: said before the
		// authorization, so that a mistyped id is not answered "not
		// allowed" (and the answer is the same for an incident that does
		// not exist and one that stopped firing: it tells nobody which
		// incidents exist).
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		log.Info("action not taken", "reason", "no firing alert")
		t.ephemeral(ctx, secret, cb, noFiringAlert(incident))
		return
	}
	sc := t.scopeIncident(ctx, incident, ch, offering, all.targets)
	var v incidentView
	if len(sc.receivers) > 0 {
		v = t.viewOf(entries, sc.receivers)
	}
	if len(v.firing) == 0 {
		// The incident is another channel's (another team's): theirs to
		// silence, from their channel, by their authorized list.
		t.o.Metrics.count(ActionSilence, OutcomeRefused)
		log.Warn("action refused: the incident is not posted in the command's channel", "posted_in", sc.elsewhere)
		t.ephemeral(ctx, secret, cb, fmt.Sprintf("Nothing was silenced: incident %s has no firing alert posted in this channel%s. Run the command in the channel the incident is posted in: the silence is for its team to make.", code(incident), elsewhereText(sc.elsewhere, " (it is posted in %s)")))
		return
	}
	if !t.commandAllowed(ctx, secret, cb, log, incident, v.targets, sc.here) {
		return
	}
	p, err := t.planSilences(ctx, incident, v.firing, v.others, nil)
	if err != nil {
		r := &refusal{err.Error(), OutcomeFailed}
		errors.As(err, &r)
		t.o.Metrics.count(ActionSilence, r.outcome)
		log.Info("action not taken", "reason", r.msg)
		t.ephemeral(ctx, secret, cb, r.msg)
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
		StartsAt: amsilence.StartNow(now), EndsAt: now.Add(time.Duration(dur)),
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
		t.ephemeral(fctx, secret, cb, unconfirmedAnswer(ActionSilence, incident, err, false))
		return
	}
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		log.Error("action failed", "err", err)
		t.ephemeral(fctx, secret, cb, answerFailed("Silence", err))
		return
	}
	t.o.Metrics.count(ActionSilence, OutcomeDone)
	log.Info("action taken from Slack", "silences", ids, "left_alone", sc.elsewhere)
	t.journalSilenceCommand(incident, cmd.UserID, cmd.UserName, ids, now, time.Duration(dur))
	said := ""
	if comment != "" {
		said = fmt.Sprintf(" (comment: %s)", esc(comment))
	}
	done := fmt.Sprintf("<@%s> silenced incident %s in Alertmanager for %s%s: %s.%s%s", cmd.UserID, code(incident), model.Duration(dur), said, silencesText(ids, sets), sparedNote(len(v.others)), heldNote(p))
	left := elsewhereText(sc.elsewhere, " Left alone: the incident as posted in %s — theirs to silence from there.")
	msg := &sl.WebhookMessage{ResponseType: sl.ResponseTypeInChannel, Text: done + left + silencedCommandNote}
	if err := sl.PostWebhookCustomHTTPContext(fctx, cmd.ResponseURL, t.answerClient(secret), msg); err != nil {
		log.Warn("answer through response_url", "err", err)
	}
	until := now.Add(time.Duration(dur)).UTC().Format("2006-01-02 15:04 MST")
	for _, k := range sc.here {
		if pr, ok := sc.parents[k]; ok && slices.Contains(v.targets, k) {
			t.silencedByCommand(fctx, k, incident, pr, cmd.UserID, ids, time.Duration(dur), until, done, log)
		}
	}
}

// commandChannel is the channel a slash command was run in: its id and,
// as Slack sends it, its name without "#".
type commandChannel struct{ id, name string }

// nameHidden reports whether Slack sent a placeholder for the channel's
// name: "privategroup" for a private channel, "directmessage" for a DM,
// "mpdm-…" for a group DM. A configured channel name cannot be matched
// against it: only the id tells such a channel.
func (ch commandChannel) nameHidden() bool {
	return ch.name == "privategroup" || ch.name == "directmessage" || strings.HasPrefix(ch.name, "mpdm-")
}

// postsIn reports whether target tg posts in channel ch: its parent of the
// incident is there (p, when known), else its configured channel is ch's
// id or name. A templated channel whose parent is not known is not.
func (tg *triageTarget) postsIn(ch commandChannel, p parentRef, known bool) bool {
	if known {
		return p.channel == ch.id
	}
	c := tg.n.cfg.Channel
	if tg.n.channelTemplated || c == "" {
		return false
	}
	return c == ch.id || ch.name != "" && !ch.nameHidden() && strings.EqualFold(strings.TrimPrefix(c, "#"), ch.name)
}

// channelText names target k's channel for a message: its parent's
// channel when known (a link Slack draws with the channel's name), else
// its configured channel.
func (t *Triage) channelText(k string, p parentRef, known bool) string {
	if known {
		return "<#" + p.channel + ">"
	}
	if tg := t.targets[k]; tg != nil && !tg.n.channelTemplated {
		return esc(tg.n.cfg.Channel)
	}
	receiver, _ := splitTarget(k)
	return fmt.Sprintf("receiver %q's channel", receiver)
}

// channelScope is what a slash command that reads the journal shows: the
// alerts routed to the receivers whose Slack targets post in its channel.
type channelScope struct {
	ch commandChannel
	// receivers are those of the targets whose configured channel is ch;
	// templated are the targets whose channel is a template — or a name,
	// in a private channel, whose name Slack hides — which post in ch for
	// an incident when its parent is there.
	receivers, templated []string
}

// channelScope is the scope of a slash command run in ch with the Slack
// app of secret.
func (t *Triage) channelScope(ch commandChannel, secret string) *channelScope {
	sc := &channelScope{ch: ch}
	for _, k := range slices.Sorted(maps.Keys(t.targets)) {
		tg := t.targets[k]
		if tg.secret != secret {
			continue
		}
		r, _ := splitTarget(k)
		switch {
		case tg.n.channelTemplated:
			sc.templated = append(sc.templated, k)
		case tg.postsIn(ch, parentRef{}, false):
			if !slices.Contains(sc.receivers, r) {
				sc.receivers = append(sc.receivers, r)
			}
		case ch.nameHidden():
			// A private channel: Slack sends "privategroup" for its name,
			// so a channel configured by name is known here by the
			// channel id its parents were posted in.
			sc.templated = append(sc.templated, k)
		}
	}
	return sc
}

// entryReceivers are the receivers entry e was routed or delivered to.
func entryReceivers(e *journal.Entry) []string {
	rs := slices.Clone(e.Receivers)
	for _, d := range e.Deliveries {
		if !slices.Contains(rs, d.Receiver) {
			rs = append(rs, d.Receiver)
		}
	}
	return rs
}

// incidentTarget is one incident at one target (receiver/integration).
type incidentTarget struct{ incident, target string }

// scopeParents reads, in one round trip, the parents that sc's templated
// targets recorded for the incidents of entries routed to them (none when
// sc has no templated target).
func (t *Triage) scopeParents(ctx context.Context, sc *channelScope, entries []*journal.Entry) map[incidentTarget]parentRef {
	out := map[incidentTarget]parentRef{}
	if len(sc.templated) == 0 {
		return out
	}
	var its []incidentTarget
	for _, e := range entries {
		rs := entryReceivers(e)
		for _, k := range sc.templated {
			r, _ := splitTarget(k)
			if it := (incidentTarget{e.Incident, k}); slices.Contains(rs, r) && !slices.Contains(its, it) {
				its = append(its, it)
			}
		}
	}
	if len(its) == 0 {
		return out
	}
	keys := make([]string, len(its))
	for i, it := range its {
		keys[i] = t.parentKey(it.incident, it.target)
	}
	vals, found, err := t.o.Store.Get(ctx, keys)
	if err != nil {
		t.o.Logger.Warn("read the parents of templated channels (their incidents are left out of the channel's)", "err", err)
		return out
	}
	for i, it := range its {
		if p, ok := parseParent(vals[i]); found[i] && ok {
			out[it] = p
		}
	}
	return out
}

// holds reports whether the alert of entry e is sc's: routed to a
// receiver posting in its channel, or to a templated target whose parent of
// the incident is there (parents, from scopeParents).
func (sc *channelScope) holds(e *journal.Entry, parents map[incidentTarget]parentRef) bool {
	rs := entryReceivers(e)
	if slices.ContainsFunc(rs, func(r string) bool { return slices.Contains(sc.receivers, r) }) {
		return true
	}
	for _, k := range sc.templated {
		r, _ := splitTarget(k)
		if p, ok := parents[incidentTarget{e.Incident, k}]; ok && slices.Contains(rs, r) && p.channel == sc.ch.id {
			return true
		}
	}
	return false
}

// routedText names, for an answer, where the alert of entry e went: the
// channels of its receivers' Slack targets (parents: scopeParents'), else
// its receivers.
func (t *Triage) routedText(e *journal.Entry, parents map[incidentTarget]parentRef) string {
	rs := entryReceivers(e)
	if len(rs) == 0 {
		return "no receiver"
	}
	var names []string
	for _, k := range slices.Sorted(maps.Keys(t.targets)) {
		r, _ := splitTarget(k)
		if !slices.Contains(rs, r) {
			continue
		}
		p, known := parents[incidentTarget{e.Incident, k}]
		if name := t.channelText(k, p, known); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		quoted := make([]string, len(rs))
		for i, r := range rs {
			quoted[i] = fmt.Sprintf("%q", r)
		}
		return "receivers " + esc(strings.Join(quoted, ", ")) + ", with no Slack channel of this app"
	}
	return strings.Join(names, ", ")
}

// incidentScope is where a slash command may act on an incident.
type incidentScope struct {
	// here are the targets offering the action that post in the command's
	// channel; receivers their receivers.
	here, receivers []string
	// elsewhere names the channels of the incident's other Slack targets
	// (the journal's), left alone.
	elsewhere []string
	// parents are the incident's parents the targets recorded.
	parents map[string]parentRef
}

// scopeIncident splits incident's Slack targets between the command's
// channel ch (among offering) and the others (among notified: the
// journal's targets of the incident).
func (t *Triage) scopeIncident(ctx context.Context, incident string, ch commandChannel, offering, notified []string) incidentScope {
	var keys []string
	for _, k := range notified {
		if t.targets[k] != nil {
			keys = append(keys, k)
		}
	}
	for _, k := range offering {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	sc := incidentScope{parents: t.parents(ctx, incident, keys)}
	var names []string
	for _, k := range keys {
		p, known := sc.parents[k]
		if slices.Contains(offering, k) && t.targets[k].postsIn(ch, p, known) {
			sc.here = append(sc.here, k)
			if r, _ := splitTarget(k); !slices.Contains(sc.receivers, r) {
				sc.receivers = append(sc.receivers, r)
			}
			continue
		}
		if slices.Contains(notified, k) && !t.targets[k].postsIn(ch, p, known) {
			if name := t.channelText(k, p, known); !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	sc.elsewhere = names
	return sc
}

// elsewhereText is format with the channels of elsewhere, "" when none.
func elsewhereText(elsewhere []string, format string) string {
	if len(elsewhere) == 0 {
		return ""
	}
	return fmt.Sprintf(format, strings.Join(elsewhere, ", "))
}

// splitTarget splits a target's key, receiver + "/" + integration, where
// the integration is its last two segments ("slack/0"): a receiver's name
// may hold "/" (the Prometheus Operator names its receivers
// "namespace/name/receiver").
func splitTarget(k string) (receiver, integration string) {
	i := strings.LastIndexByte(k, '/')
	if i < 0 {
		return k, ""
	}
	j := strings.LastIndexByte(k[:i], '/')
	if j < 0 {
		return k, ""
	}
	return k[:j], k[j+1:]
}

// parentKey is where the parent message of incident posted by target
// (receiver/integration) is recorded (parentPosted), for the slash command
// to find it.
func (t *Triage) parentKey(incident, target string) string {
	return store.Key(t.o.KeyPrefix, "slack-parent", incident, target)
}

// parentPosted records p, the parent message of incident that target
// (receiver/integration) posted. A failure is logged: the slash command
// then knows the target's channel from its configuration only, and tells
// no thread.
func (t *Triage) parentPosted(ctx context.Context, incident, target string, p parentRef) {
	e := store.Entry{Key: t.parentKey(incident, target), Value: p.channel + " " + p.ts, TTL: messageStateTTL}
	if err := t.o.Store.Set(ctx, []store.Entry{e}); err != nil {
		t.o.Logger.Warn("record the incident's parent message (the slash command will not tell its thread)", "incident", incident, "target", target, "err", err)
	}
}

// parents reads the parents of incident that targets recorded, by target;
// an unreadable store knows none.
func (t *Triage) parents(ctx context.Context, incident string, targets []string) map[string]parentRef {
	out := map[string]parentRef{}
	if len(targets) == 0 {
		return out
	}
	keys := make([]string, len(targets))
	for i, k := range targets {
		keys[i] = t.parentKey(incident, k)
	}
	vals, found, err := t.o.Store.Get(ctx, keys)
	if err != nil {
		t.o.Logger.Warn("read the incident's parent messages (their channels are taken from the configuration)", "incident", incident, "err", err)
		return out
	}
	for i, k := range targets {
		if p, ok := parseParent(vals[i]); found[i] && ok {
			out[k] = p
		}
	}
	return out
}

// silencedByCommand records on target k's parent p of incident the silence
// the slash command made (ids, for dur, by user): its state (Unsilence
// expires them, a Silence click finds it done), a triage line, and a reply
// in its thread (text). The parent itself is drawn again with them at its
// next edit: redrawing it now would need its blocks, which only a click
// carries. Failures are logged: the silence is made.
func (t *Triage) silencedByCommand(ctx context.Context, k, incident string, p parentRef, user string, ids []string, dur time.Duration, until, text string, log *slog.Logger) {
	tg := t.targets[k]
	receiver, integration := splitTarget(k)
	log = log.With("target", k, "message_ts", p.ts)
	state := store.Entry{Key: t.messageKey(incident, p.channel, p.ts) + ":" + ActionSilence, Value: "d " + user + " " + strings.Join(ids, ","), TTL: dur}
	if won, err := t.o.Store.SetNX(ctx, []store.Entry{state}); err != nil || !won[0] {
		// A silence of the message's own (its Unsilence expires that one).
		log.Info("the parent keeps its own silence's Unsilence", "err", err)
	}
	line := fmt.Sprintf("Silenced with /alertrouter for %s by <@%s> (until %s)", shortDuration(dur), user, until)
	if err := t.addLine(ctx, incident, p, line); err != nil {
		log.Warn("keep the silence's line for the parent", "err", err)
	}
	st := triageState{Receiver: receiver, Integration: integration, Incident: incident}
	when := t.o.Now().UTC().Format("2006-01-02 15:04 MST")
	if err := tg.n.call(ctx, func(ctx context.Context) error {
		opts := append([]sl.MsgOption{sl.MsgOptionText(text+" ("+when+")", false), sl.MsgOptionTS(p.ts)}, tg.n.clickPoster(st)...)
		_, _, err := tg.n.api.PostMessageContext(ctx, p.channel, opts...)
		return err
	}); err != nil {
		log.Warn("record the silence in the parent's thread", "err", err)
	}
}

// commandAllowed reports whether the slash command's user may silence
// incident, answering them when not (with the client of secret's Slack
// app: answerClient): the targets of offering (those posting in the
// command's channel) that posted the incident (targets, as the journal
// says) decide, as their buttons would; none of them known, every target
// of offering.
func (t *Triage) commandAllowed(ctx context.Context, secret string, cb *sl.InteractionCallback, log *slog.Logger, incident string, targets, offering []string) bool {
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
			t.ephemeral(ctx, secret, cb, answerLookupFailed("silence incidents", err))
			return false
		}
		t.o.Metrics.count(ActionSilence, OutcomeRefused)
		log.Warn("action refused: user not authorized", "target", k)
		receiver, integration := splitTarget(k)
		t.ephemeral(ctx, secret, cb, fmt.Sprintf("You are not allowed to silence incident %s: %s.", code(incident), whoMay(t.targets[k], receiver, integration, ActionSilence)))
		return false
	}
	return true
}
