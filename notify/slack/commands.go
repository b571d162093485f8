package slack

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// commandUsage answers /alertrouter without (or with an unknown)
// subcommand.
const commandUsage = "Usage: `/alertrouter explain <fingerprint>` · `/alertrouter incidents` · `/alertrouter silence <incident> <duration, e.g. 2h>`"

// Slash command bounds.
const (
	// commandLookback is how far back the journal is read.
	commandLookback = model.Duration(24 * time.Hour)
	// minCommandSilence and maxCommandSilence bound a silence made with
	// /alertrouter silence.
	minCommandSilence  = time.Minute
	maxCommandSilence  = 7 * 24 * time.Hour
	maxIncidentsListed = 20
	maxJournalRead     = 5000
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
		reply(t.explain(ctx, args[1]))
	case sub == "incidents" && len(args) == 1:
		reply(t.incidents(ctx))
	case sub == "silence" && len(args) == 3:
		t.silenceCommand(ctx, cmd, args[1], args[2], secret)
	case sub == "help" || sub == "":
		reply(commandUsage)
	default:
		t.o.Metrics.count("command", OutcomeUnknown)
		reply(commandUsage)
	}
}

// recent reads the decision entries of the last commandLookback, newest
// first, matching text.
func (t *Triage) recent(ctx context.Context, text string) ([]journal.Entry, error) {
	return journal.Read(ctx, t.o.Journal, journal.Query{
		Since: t.o.Now().Add(-time.Duration(commandLookback)), Kind: journal.KindDecision,
		Filter: journal.Filter{Text: text}, Newest: true, Limit: maxJournalRead,
	})
}

// firingLabels returns the labels every alert of incident that fires in
// the journal's recent decisions has in common — starting from base when
// given, so only base's labels can stay — or nil when none fires there.
func (t *Triage) firingLabels(ctx context.Context, incident string, base map[string]string) (map[string]string, error) {
	entries, err := t.recent(ctx, incident)
	if err != nil {
		return nil, err
	}
	labels, found := maps.Clone(base), false
	for _, e := range latestPerAlert(entries) {
		if e.Incident != incident || e.Status != "firing" {
			continue
		}
		if labels == nil {
			labels = maps.Clone(e.Labels)
		}
		found = true
		maps.DeleteFunc(labels, func(k, v string) bool { return e.Labels[k] != v })
	}
	if !found {
		return nil, nil
	}
	return labels, nil
}

// explain describes the newest decision about the alert with fingerprint fp.
func (t *Triage) explain(ctx context.Context, fp string) string {
	entries, err := t.recent(ctx, fp)
	if err != nil {
		return "Reading the journal failed: " + err.Error()
	}
	for _, e := range entries {
		if e.Fingerprint != fp {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "*%s* `%s` (%s, %s)\n", esc(e.Alertname), esc(e.Fingerprint), esc(e.Status), e.Time.UTC().Format(time.RFC3339))
		fmt.Fprintf(&b, "*Decision:* %s", esc(string(e.Decision.Action)))
		if e.Decision.Policy != "" {
			fmt.Fprintf(&b, " (%s, %s)", esc(e.Decision.Policy), esc(e.Decision.Tier))
		}
		fmt.Fprintf(&b, "\n*Sector:* %s · *Incident:* `%s`", esc(e.Sector), esc(e.Incident))
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
	return fmt.Sprintf("No decision about fingerprint `%s` in the last %s.", esc(fp), commandLookback)
}

// incidents lists the incidents whose newest alert decision is firing.
func (t *Triage) incidents(ctx context.Context) string {
	entries, err := t.recent(ctx, "")
	if err != nil {
		return "Reading the journal failed: " + err.Error()
	}
	newest := latestPerAlert(entries)
	type inc struct {
		key    string
		action string
		firing int
		names  map[string]bool
	}
	byKey := map[string]*inc{}
	var order []string
	for _, e := range newest {
		if e.Incident == "" || e.Status != "firing" {
			continue
		}
		i := byKey[e.Incident]
		if i == nil {
			i = &inc{key: e.Incident, names: map[string]bool{}}
			byKey[e.Incident] = i
			order = append(order, e.Incident)
		}
		i.firing++
		i.names[e.Alertname] = true
		if i.action == "" || e.Decision.Action == "page" {
			i.action = string(e.Decision.Action)
		}
	}
	if len(order) == 0 {
		return fmt.Sprintf("No firing incident in the last %s.", commandLookback)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*Firing incidents* (last %s):", commandLookback)
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

// latestPerAlert keeps the newest entry of each fingerprint (entries come
// newest first).
func latestPerAlert(entries []journal.Entry) []journal.Entry {
	seen := map[string]bool{}
	var out []journal.Entry
	for _, e := range entries {
		if seen[e.Fingerprint] {
			continue
		}
		seen[e.Fingerprint] = true
		out = append(out, e)
	}
	return out
}

// silenceCommand silences the firing alerts of incident for dur: equality
// matchers on the labels they share, once per invocation (its trigger_id
// is claimed), authorized as the silence button of a target verified by the
// same signing secret.
func (t *Triage) silenceCommand(ctx context.Context, cmd sl.SlashCommand, incident, durText, secret string) {
	cb := &sl.InteractionCallback{ResponseURL: cmd.ResponseURL}
	log := t.o.Logger.With("action", "silence", "command", true, "incident", incident, "user", cmd.UserID)
	dur, err := model.ParseDuration(durText)
	if err != nil || time.Duration(dur) < minCommandSilence || time.Duration(dur) > maxCommandSilence {
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		t.ephemeral(ctx, cb, fmt.Sprintf("%q is no duration between 1m and %s (e.g. 2h).", durText, model.Duration(maxCommandSilence)))
		return
	}
	var tg *triageTarget
	for _, k := range slices.Sorted(maps.Keys(t.targets)) {
		if c := t.targets[k]; c.secret == secret && c.n.cfg.offers(ActionSilence) {
			tg = c
			break
		}
	}
	if tg == nil || t.o.Silences == nil {
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		t.ephemeral(ctx, cb, "Silencing is not enabled for this Slack app (actions: [silence] and the alertmanager block).")
		return
	}
	c := &click{b: button{action: ActionSilence, silence: time.Duration(dur)}, tg: tg, user: cmd.UserID, channel: cmd.ChannelID, cb: cb}
	won, err := dedup.Leases{Store: t.o.Store, TTL: t.o.ClaimTTL}.Acquire(ctx, []string{store.Key(t.o.KeyPrefix, "slack-command", incident, cmd.TriggerID)}, dedup.NewToken())
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		log.Error("claim the slash command", "err", err)
		t.ephemeral(ctx, cb, "alertrouter could not reach its store; nothing was done. Try again.")
		return
	}
	if !won[0] {
		t.o.Metrics.count(ActionSilence, OutcomeDuplicate)
		log.Info("slash command already handled")
		return
	}
	if ok, err := t.authorized(ctx, c); !ok {
		if err != nil {
			t.o.Metrics.count(ActionSilence, OutcomeFailed)
			log.Error("action not taken: the user-group lookup failed", "err", err)
			t.ephemeral(ctx, cb, fmt.Sprintf("alertrouter could not check whether you may silence incidents (Slack's user-group lookup failed: %v); nothing was done. Try again.", err))
			return
		}
		t.o.Metrics.count(ActionSilence, OutcomeRefused)
		log.Warn("action refused: user not authorized")
		t.ephemeral(ctx, cb, "You are not allowed to silence incidents.")
		return
	}
	labels, err := t.firingLabels(ctx, incident, nil)
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		t.ephemeral(ctx, cb, "Reading the journal failed: "+err.Error())
		return
	}
	if len(labels) == 0 {
		t.o.Metrics.count(ActionSilence, OutcomeUnknown)
		t.ephemeral(ctx, cb, fmt.Sprintf("No firing alert of incident `%s` in the last %s (or they share no label): nothing to silence. See `/alertrouter incidents`.", esc(incident), commandLookback))
		return
	}
	now := t.o.Now()
	s := amsilence.Silence{
		Matchers: amsilence.Equal(labels), StartsAt: now, EndsAt: now.Add(time.Duration(dur)),
		CreatedBy: createdBy(sl.User{ID: cmd.UserID, Name: cmd.UserName}),
		Comment:   fmt.Sprintf("Silenced from Slack with /alertrouter for %s (incident %s)", model.Duration(dur), incident),
	}
	id, err := t.o.Silences.Create(ctx, s)
	if err != nil {
		t.o.Metrics.count(ActionSilence, OutcomeFailed)
		log.Error("action failed", "err", err)
		t.ephemeral(ctx, cb, "Silence failed, nothing changed: "+err.Error())
		return
	}
	t.o.Metrics.count(ActionSilence, OutcomeDone)
	log.Info("action taken from Slack", "silence", id)
	msg := &sl.WebhookMessage{ResponseType: sl.ResponseTypeInChannel,
		Text: fmt.Sprintf("<@%s> silenced incident `%s` in Alertmanager for %s: silence `%s` matching `%s`.", cmd.UserID, esc(incident), model.Duration(dur), id, matcherText(s.Matchers))}
	if err := sl.PostWebhookCustomHTTPContext(ctx, cmd.ResponseURL, t.http, msg); err != nil {
		log.Warn("answer through response_url", "err", err)
	}
}
