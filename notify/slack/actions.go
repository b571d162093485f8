package slack

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The triage actions a slack_configs entry may offer (Config.Actions).
const (
	ActionAck      = "ack"
	ActionSilence  = "silence"
	ActionEscalate = "escalate"
	ActionResolve  = "resolve"
	// ActionUnsilence comes with ActionSilence; it is authorized as silence
	// unless listed on its own in Config.Authorized.
	ActionUnsilence = "unsilence"
)

var knownActions = []string{ActionAck, ActionSilence, ActionEscalate, ActionResolve}

// SilenceDurations are the Silence buttons' durations.
var SilenceDurations = []time.Duration{time.Hour, 4 * time.Hour, 24 * time.Hour}

// Block ids of the blocks triage adds to a parent message.
const (
	actionsBlockID = "alertrouter-actions"
	logBlockPrefix = "alertrouter-log-"
	// actionIDPrefix starts every button's action_id: "alertrouter:ack",
	// "alertrouter:silence:4h".
	actionIDPrefix = "alertrouter:"
	// maxButtonValue is Slack's limit on a button's value.
	maxButtonValue = 2000
)

func (c *Config) validateTriage() []error {
	var errs []error
	if c.SigningSecret != "" && c.SigningSecretFile != "" {
		errs = append(errs, errors.New("signing_secret: at most one of signing_secret and signing_secret_file may be set"))
	}
	for _, a := range c.Actions.Names {
		if !slices.Contains(knownActions, a) {
			errs = append(errs, fmt.Errorf("actions: unknown action %q (known: %s)", a, strings.Join(knownActions, ", ")))
		}
	}
	if len(c.Actions.Names) > 0 && c.SigningSecret == "" && c.SigningSecretFile == "" {
		errs = append(errs, errors.New("actions: need signing_secret or signing_secret_file (interactions are verified with it)"))
	}
	for a, ids := range c.Authorized {
		if a != ActionUnsilence && !slices.Contains(knownActions, a) {
			errs = append(errs, fmt.Errorf("authorized: unknown action %q", a))
		}
		for _, id := range ids {
			if id == "" || !strings.ContainsAny(id[:1], "UWS") {
				errs = append(errs, fmt.Errorf("authorized.%s: %q is not a Slack user id (U…, W…) or user-group id (S…)", a, id))
			}
		}
	}
	return errs
}

// offers reports whether the entry offers action (unsilence with silence).
func (c *Config) offers(action string) bool {
	if action == ActionUnsilence {
		action = ActionSilence
	}
	return slices.Contains(c.Actions.Names, action)
}

// triageState is what the buttons of a parent message carry in their value
// (Slack hands it back on a click): which receiver and integration posted
// the message, the incident, what has been done, and the labels a silence
// matches. It stays within Slack's 2000 characters; past that the labels are
// dropped and the Silence buttons are not offered (Alertmanager's own
// Silence link stays in the message).
type triageState struct {
	Receiver    string `json:"r"`
	Integration string `json:"g"`
	Incident    string `json:"i"`
	// Paged is true when PagerDuty holds an incident (a page, or escalated).
	Paged bool `json:"p,omitempty"`
	// PagedAt are the "receiver/integration" of the PagerDuty
	// integrations the page went to (alert.Notification.PagedAt):
	// Acknowledge and Resolve act there. Empty in messages of earlier
	// builds and for an escalation.
	PagedAt []string `json:"d,omitempty"`
	// Escalated is true when the page came from Escalate (acknowledge and
	// resolve then go to the escalation's PagerDuty).
	Escalated bool `json:"e,omitempty"`
	Acked     bool `json:"a,omitempty"`
	Resolved  bool `json:"x,omitempty"`
	// Silence is the id of the active silence made from this message.
	Silence string `json:"s,omitempty"`
	// Labels are the incident's alerts' common labels (the first alert's
	// labels when none are common), the silence's equality matchers.
	Labels map[string]string `json:"l,omitempty"`
	// Derived are the incident's sector, primary KPI, incident class and
	// page source — the component, group, class and source PagerDuty's
	// built-in derivation gives a page of it (notify.PageSource of its
	// loudest alert: a gNMI collector's device, its instance, its job) —
	// for the event of an escalation (Escalate), drawn when the message
	// is: the labels it keeps may be dropped to fit a button. Empty in
	// messages of earlier builds.
	Derived []string `json:"c,omitempty"`
}

// newTriageState is the state of a freshly posted parent message.
func newTriageState(no *alert.Notification) triageState {
	st := triageState{Receiver: no.Receiver, Integration: no.Integration, Incident: no.Incident, Paged: no.Action == alert.ActionPage && no.Paged}
	if st.Paged {
		st.PagedAt = slices.Clone(no.PagedAt)
	}
	lead := no.Loudest()
	source := ""
	if lead.Alert != nil {
		// Cut as PagerDuty's event is (an instance of thousands of
		// characters took every button off the message: REVIEWV).
		source, _ = notify.TruncateInRunes(notify.PageSource(lead.Alert.Labels), notify.MaxPageSource)
	}
	if c := lead.Classification; c.Sector != "" || c.IncidentClass != "" || source != "" {
		st.Derived = []string{c.Sector, c.PrimaryKPI(), c.IncidentClass, source}
	}
	if no.Data != nil {
		labels := no.Data.CommonLabels
		if len(labels) == 0 && len(no.Data.Alerts) > 0 {
			labels = no.Data.Alerts[0].Labels
		}
		if len(labels) > 0 {
			st.Labels = map[string]string(labels)
		}
	}
	return st
}

func (st triageState) encode() (string, bool) {
	b, err := json.Marshal(st)
	if err != nil || len(b) > maxButtonValue {
		return "", false
	}
	return string(b), true
}

func decodeTriageState(v string) (triageState, error) {
	var st triageState
	if len(v) > maxButtonValue {
		// Slack's limit: no button of Slack's carries more (a forged
		// click of a megabyte was decoded and logged whole: an audit).
		return st, fmt.Errorf("button value: %d bytes, over Slack's %d", len(v), maxButtonValue)
	}
	if err := json.Unmarshal([]byte(v), &st); err != nil {
		return st, fmt.Errorf("button value: %w", err)
	}
	if st.Receiver == "" || st.Integration == "" || st.Incident == "" {
		return st, errors.New("button value: receiver, integration or incident missing")
	}
	return st, nil
}

// button is one parsed action_id.
type button struct {
	action string
	// silence is the duration of a Silence button.
	silence time.Duration
}

func (b button) id() string {
	if b.action == ActionSilence {
		return actionIDPrefix + ActionSilence + ":" + shortDuration(b.silence)
	}
	return actionIDPrefix + b.action
}

func parseActionID(id string) (button, bool) {
	rest, ok := strings.CutPrefix(id, actionIDPrefix)
	if !ok {
		return button{}, false
	}
	name, dur, _ := strings.Cut(rest, ":")
	switch name {
	case ActionAck, ActionEscalate, ActionResolve, ActionUnsilence:
		return button{action: name}, dur == ""
	case ActionSilence:
		for _, d := range SilenceDurations {
			if shortDuration(d) == dur {
				return button{action: name, silence: d}, true
			}
		}
	}
	return button{}, false
}

// shortDuration writes whole hours as "4h", other durations as Go does.
func shortDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// actionsBlock returns the buttons that apply to st among those cfg offers,
// or nil when none does: Acknowledge while paged and neither acknowledged
// nor resolved, Escalate while not paged, Resolve while paged and not
// resolved, Silence while not silenced (and the labels fit), Unsilence
// while silenced.
func actionsBlock(cfg *Config, st triageState) sl.Block {
	value, ok := st.encode()
	if !ok {
		// Too large with the labels: offer what needs no labels, then
		// what needs neither (an escalation then names no component,
		// group or class, as from an earlier build's message).
		st.Labels = nil
		if value, ok = st.encode(); !ok {
			st.Derived = nil
			if value, ok = st.encode(); !ok {
				return nil
			}
		}
	}
	var els []sl.BlockElement
	add := func(b button, label string, style sl.Style) {
		if !cfg.offers(b.action) {
			return
		}
		e := sl.NewButtonBlockElement(b.id(), value, sl.NewTextBlockObject(sl.PlainTextType, label, false, false))
		if style != "" {
			e = e.WithStyle(style)
		}
		els = append(els, e)
	}
	if st.Paged && !st.Acked && !st.Resolved {
		add(button{action: ActionAck}, "Acknowledge", sl.StylePrimary)
	}
	if !st.Paged {
		add(button{action: ActionEscalate}, "Escalate to page", sl.StyleDanger)
	}
	if st.Silence == "" && len(st.Labels) > 0 {
		for _, d := range SilenceDurations {
			add(button{action: ActionSilence, silence: d}, "Silence "+shortDuration(d), "")
		}
	}
	if st.Silence != "" {
		add(button{action: ActionUnsilence}, "Unsilence", "")
	}
	if st.Paged && !st.Resolved {
		add(button{action: ActionResolve}, "Resolve", "")
	}
	if len(els) == 0 {
		return nil
	}
	return sl.NewActionBlock(actionsBlockID, els...)
}

// Titles of a ticket escalated to a page from Slack (Escalate). The
// alerts' decision stays a ticket (the card's Decision line says so): the
// title says the incident now pages, and why.
const (
	ticketPrefix = "[TICKET] "
	pagePrefix   = "[PAGE] "
	// escalatedNote ends the parent's header.
	escalatedNote = " (escalated from a ticket)"
)

// escalatedTitle is title (a parent's header, or its fallback text) as the
// page it was escalated to: "[PAGE] " in place of "[TICKET] " (or before
// a title without it), note after, in at most max runes with note kept
// whole: the rest is cut with cut (notify.TruncateText for plain text,
// truncateMrkdwn for mrkdwn).
func escalatedTitle(title, note string, max int, cut func(string, int) string) string {
	rest := strings.TrimPrefix(title, ticketPrefix)
	if !strings.HasPrefix(rest, pagePrefix) {
		rest = pagePrefix + rest
	}
	return cut(rest, max-utf8.RuneCountInString(note)) + note
}

// pagesAlready reports whether a parent's title already says it pages (a
// page's, or escalated: escalatedTitle) or that the incident resolved:
// escalatedHeader leaves it as it is.
func pagesAlready(title string) bool {
	return strings.HasPrefix(title, strings.TrimSpace(pagePrefix)) || strings.HasPrefix(title, "[RESOLVED]")
}

// escalatedHeader returns blocks with their header saying the incident
// was escalated to a page (escalatedTitle), for the parent of a ticket
// escalated from Slack: it kept saying [TICKET] while PagerDuty paged.
// A header already saying [PAGE] or [RESOLVED] is kept; blocks is not
// modified.
func escalatedHeader(blocks []sl.Block) []sl.Block {
	if len(blocks) == 0 {
		return blocks
	}
	h, ok := blocks[0].(*sl.HeaderBlock)
	if !ok || h.Text == nil || pagesAlready(h.Text.Text) {
		return blocks
	}
	text := *h.Text
	text.Text = escalatedTitle(text.Text, escalatedNote, maxHeader, notify.TruncateText)
	header := *h
	header.Text = &text
	out := slices.Clone(blocks)
	out[0] = &header
	return out
}

// withActions appends to a parent message's blocks its triage lines (who
// did what, kept by the triage) and the buttons st offers (none when the
// entry offers no action or the incident is resolved), keeping Slack's
// 50-block limit by dropping the last alert line.
func (n *Notifier) withActions(no *alert.Notification, blocks []sl.Block, lines []string, st triageState) []sl.Block {
	if st.Escalated && !no.IncidentResolved && no.Action != alert.ActionPage {
		blocks = escalatedHeader(blocks)
	}
	var ab sl.Block
	if len(n.cfg.Actions.Names) > 0 && !no.IncidentResolved {
		ab = actionsBlock(&n.cfg, st)
	}
	if ab == nil && len(lines) == 0 {
		return blocks
	}
	out := append(slices.Clone(blocks), logBlocks(lines)...)
	if ab != nil {
		out = append(out, ab)
	}
	return fitBlocks(out)
}

// logBlocks draws a parent message's triage lines, one context block each.
func logBlocks(lines []string) []sl.Block {
	blocks := make([]sl.Block, len(lines))
	for i, l := range lines {
		blocks[i] = sl.NewContextBlock(fmt.Sprintf("%s%d", logBlockPrefix, i+1), sl.NewTextBlockObject(sl.MarkdownType, l, false, false))
	}
	return blocks
}

// fitBlocks keeps at most maxBlocks blocks by removing, as often as needed,
// the last alert section and counting it in "…and N more" (added when
// missing); without alert sections, the block just before the triage
// blocks. The header, the triage log and the buttons stay.
func fitBlocks(blocks []sl.Block) []sl.Block {
	for len(blocks) > maxBlocks {
		last, more, n := -1, -1, 0
		for i, b := range blocks {
			switch id := b.ID(); {
			case strings.HasPrefix(id, alertBlockPrefix):
				last = i
			case strings.HasPrefix(id, moreBlockPrefix):
				more = i
				n, _ = strconv.Atoi(strings.TrimPrefix(id, moreBlockPrefix))
			}
		}
		if last >= 0 {
			if more >= 0 {
				blocks[more] = moreBlock(n + 1)
				blocks = slices.Delete(blocks, last, last+1)
			} else {
				blocks[last] = moreBlock(1)
			}
			continue
		}
		i := len(blocks) - 1
		for i > 1 && isTriageBlock(blocks[i-1]) {
			i--
		}
		if i <= 1 {
			return blocks[:maxBlocks]
		}
		blocks = slices.Delete(blocks, i-1, i)
	}
	return blocks
}

func isTriageBlock(b sl.Block) bool {
	id := b.ID()
	return id == actionsBlockID || strings.HasPrefix(id, logBlockPrefix)
}
