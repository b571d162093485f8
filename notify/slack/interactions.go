package slack

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/amsilence"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// Pager is what triage needs from PagerDuty; *pagerduty.Notifier
// implements it.
type Pager interface {
	Acknowledge(ctx context.Context, incident string) error
	Resolve(ctx context.Context, incident string) error
	Escalate(ctx context.Context, e notify.Escalation) error
}

// RefPager is a Pager that acts at the PagerDuty routing key an incident's
// Ref names (the dispatch core keeps it with the incident's state at the
// integration): the key its trigger went to, which a reload may have
// changed since. *pagerduty.Notifier implements it.
type RefPager interface {
	AcknowledgeAt(ctx context.Context, incident, ref string) error
	ResolveAt(ctx context.Context, incident, ref string) error
}

// Silencer creates and expires Alertmanager silences, and lists the alerts
// a silence would match (checked before creating it); *amsilence.Client
// implements it. Create's errors wrapping amsilence.ErrUnconfirmed say the
// silence may have been made.
type Silencer interface {
	Create(ctx context.Context, s amsilence.Silence) (string, error)
	Expire(ctx context.Context, id string) error
	Alerts(ctx context.Context, ms []amsilence.Matcher) ([]amsilence.Alert, error)
}

// The outcomes of alertrouter_slack_actions_total.
const (
	OutcomeDone      = "done"
	OutcomeDuplicate = "duplicate"
	OutcomeRefused   = "refused"
	OutcomeFailed    = "failed"
	OutcomeUnknown   = "unknown"
	// OutcomeUnconfirmed: the action's request went out and got no answer
	// in time (PagerDuty or Alertmanager slower than the click's timeout):
	// it may have been done.
	OutcomeUnconfirmed  = "unconfirmed"
	OutcomeBadSignature = "bad_signature"
	OutcomeStale        = "stale"
	OutcomePanic        = "panic"
)

// TriageMetrics count the triage actions taken from Slack.
type TriageMetrics struct {
	actions            *prometheus.CounterVec
	escalationResolves *prometheus.CounterVec
}

// NewTriageMetrics creates alertrouter_slack_actions_total{action,outcome}
// and registers it on reg (nil: not registered).
func NewTriageMetrics(reg prometheus.Registerer) *TriageMetrics {
	m := &TriageMetrics{actions: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "alertrouter_slack_actions_total",
		Help: "Triage actions requested from Slack, by action (ack, silence, unsilence, escalate, resolve; command for an unknown slash command, none before the signature is verified) and outcome (done, duplicate, refused, failed, unknown, unconfirmed: sent and not answered in time, it may have been done; bad_signature, stale; panic for a bug, logged with its stack).",
	}, []string{"action", "outcome"}),
		escalationResolves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "alertrouter_slack_escalation_resolves_total",
			Help: "Resolves sent to PagerDuty for incidents escalated from Slack (the Escalate button) whose alerts resolved, by outcome (done; failed: retryable, the Slack notification failed with it and Alertmanager retries; refused: PagerDuty refused it, or no PagerDuty to send it to — resolve the page by hand).",
		}, []string{"outcome"}),
	}
	// The panic outcome of every action at zero, so that increase() (the
	// self-monitoring alert AlertrouterPanicked) sees the first panic: a
	// counter that appears at 1 has no earlier sample to increase from.
	for _, a := range []string{"none", "command", ActionAck, ActionSilence, ActionUnsilence, ActionEscalate, ActionResolve} {
		m.actions.WithLabelValues(a, OutcomePanic)
	}
	if reg != nil {
		reg.MustRegister(m.actions, m.escalationResolves)
	}
	return m
}

// countEscalationResolve counts a resolve of an escalated incident.
func (m *TriageMetrics) countEscalationResolve(outcome string) {
	if m == nil {
		return
	}
	m.escalationResolves.WithLabelValues(outcome).Inc()
}

func (m *TriageMetrics) count(action, outcome string) {
	if m == nil {
		return
	}
	if action == "" {
		action = "none"
	}
	m.actions.WithLabelValues(action, outcome).Inc()
}

// TriageOptions are the shared parts of a Triage handler.
type TriageOptions struct {
	// Store holds the claims that make every click exactly-once across
	// replicas.
	Store store.Store
	// KeyPrefix prefixes the store keys (the store's key_prefix).
	KeyPrefix string
	// Silences creates the silences; nil answers Silence clicks with an
	// error.
	Silences Silencer
	// Journal is the decision journal the /alertrouter slash command reads
	// (nil: it answers that there is nothing to look up).
	Journal store.Journal
	// Metrics counts the actions; nil counts nothing.
	Metrics *TriageMetrics
	// Logger receives the log of every action; nil discards it.
	Logger *slog.Logger
	// Timeout bounds the work of one click (default 30s).
	Timeout time.Duration
	// Now is the clock of the "who did what and when" lines (default
	// time.Now).
	Now func() time.Time
	// ClaimTTL is how long a click's claim lives (default 15m: longer than
	// Slack's 5-minute signature window, so a replayed or retried request
	// always finds it).
	ClaimTTL time.Duration
	// PageWait bounds how long an Acknowledge or Resolve waits for the
	// dispatch core's trigger of its page to be confirmed (PagedThrough),
	// within half of what is left of the click's timeout (default 5s).
	PageWait time.Duration
	// Recorder journals each action a click took (journal.KindTriage), for
	// the console (interactions_journal.go); nil records nothing.
	// *journal.Writer implements it.
	Recorder Recorder
}

// Triage answers Slack's interaction requests (POST /slack/interactions)
// and the /alertrouter slash command (POST /slack/commands, commands.go):
// it verifies the signature, answers at once, and then, in the background,
// claims the click in the store, checks who may act, acts (PagerDuty
// acknowledge/trigger/resolve, Alertmanager silence/expire), updates the
// parent message and records the action in its thread. Safe for concurrent
// use.
type Triage struct {
	o       TriageOptions
	targets map[string]*triageTarget
	// markLogs throttles the failures to record a parent's resolved mark
	// (one per message else: a store down logs one line per resolve).
	markLogs logthrottle.Throttle
	// refusalLogs throttles the refused requests' lines per outcome: 200
	// forged requests logged 200 lines (an audit).
	refusalLogs logthrottle.Throttle
	// pagers are the receivers' PagerDuty integrations by receiver name
	// (AddPager): an escalation recorded with a receiver that escalate_to
	// no longer names is acknowledged and resolved there while it exists.
	pagers map[string]Pager
	// pagerAt are the "receiver/integration" of those integrations
	// (PagesAt), where the dispatch core keeps the incidents they page.
	pagerAt map[string]string
	secrets []string
	// answers are the clients the response_url answers are posted with,
	// by signing secret (answerClient).
	answers map[string]*http.Client
	wg      sync.WaitGroup
	// reads holds the one slot of the slash commands that read the
	// journal (commandSlot): a scan of a large journal takes seconds of
	// CPU, and twenty at once took both cores from the webhooks (p99
	// 773 ms) and ran each past its deadline.
	reads chan struct{}
}

type triageTarget struct {
	n      *Notifier
	secret string
	// pager pages the receiver's own incidents (ack, resolve); escalation
	// pages escalations (ack and resolve of escalated ones too).
	pager, escalation Pager
	// escalationTo names escalation's receiver (escalate_to, else the
	// receiver's own): recorded with an escalation, so that its resolve is
	// not sent to another PagerDuty after a reload changed escalate_to.
	escalationTo string
	// pagedThrough is the "receiver/integration" of the PagerDuty
	// integration pager acts on, where the dispatch core keeps the state
	// of the incident's page (PagedThrough); "" when unknown.
	// pagedReceiver is its receiver.
	pagedThrough, pagedReceiver string
}

// NewTriage returns a handler with no target yet (every click is answered
// "unknown").
func NewTriage(o TriageOptions) *Triage {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ClaimTTL <= 0 {
		o.ClaimTTL = 15 * time.Minute
	}
	if o.PageWait <= 0 {
		o.PageWait = 5 * time.Second
	}
	return &Triage{o: o, targets: map[string]*triageTarget{}, pagers: map[string]Pager{}, pagerAt: map[string]string{}, answers: map[string]*http.Client{}, reads: make(chan struct{}, 1)}
}

// AddPager names receiver's PagerDuty integration (its first
// pagerduty_configs entry): an escalation that paged it is acknowledged and
// resolved through it even after a reload points escalate_to elsewhere.
func (t *Triage) AddPager(receiver string, p Pager) {
	if p != nil {
		t.pagers[receiver] = p
	}
}

// PagesAt names the integration of receiver's PagerDuty (AddPager),
// "pagerduty/0": the escalation of an incident whose page the dispatch
// core holds open there (another team's alerts of the same incident key,
// routed to it) is not resolved with the escalated ticket.
func (t *Triage) PagesAt(receiver, integration string) {
	if receiver != "" && integration != "" {
		t.pagerAt[receiver] = receiver + "/" + integration
	}
}

// escalationPager is the PagerDuty holding tg's escalation recorded as
// extra (escalatedExtra and the receiver it paged), and that receiver: tg's
// escalation when it pages the same receiver (or none was recorded), else
// the recorded receiver's while the configuration still has one (nil: none).
func (t *Triage) escalationPager(tg *triageTarget, extra string) (Pager, string) {
	to, recorded := strings.CutPrefix(extra, escalatedExtra)
	if !recorded || to == tg.escalationTo {
		return tg.escalation, tg.escalationTo
	}
	return t.pagers[to], to
}

// Add makes the parent messages of notifier n (receiver's integration, as
// in alert.Notification.Integration) actionable. pager is the receiver's
// PagerDuty (nil: escalation's — a ticket receiver whose pages go to the
// escalate_to receiver acks and resolves them there), escalation the one
// that pages escalations (nil: pager); with neither, ack and resolve answer
// an error. An n that offers no action gets no buttons, but keeps its
// parents' resolved marks in t's store all the same (Notifier.marks).
func (t *Triage) Add(receiver, integration string, n *Notifier, pager, escalation Pager) error {
	n.marks = t // with or without actions: the parents' resolved marks
	if len(n.cfg.Actions.Names) == 0 {
		return nil
	}
	secret, err := notify.ReadSecret(n.cfg.SigningSecret, n.cfg.SigningSecretFile)
	if err != nil {
		return fmt.Errorf("slack receiver %q: signing_secret_file: %w", receiver, err)
	}
	if escalation == nil {
		escalation = pager
	}
	if pager == nil {
		pager = escalation
	}
	to := n.cfg.EscalateTo
	if to == "" {
		to = receiver
	}
	tg := &triageTarget{n: n, secret: secret, pager: pager, escalation: escalation, escalationTo: to}
	n.triage = &triageLink{t: t, tg: tg}
	t.targets[receiver+"/"+integration] = tg
	if !slices.Contains(t.secrets, secret) {
		t.secrets = append(t.secrets, secret)
		t.answers[secret] = n.answerClient()
	}
	return nil
}

// answerClient is the client that answers a request signed with secret
// through its response_url: the http_config (proxy, TLS) of the first
// Slack entry added with that secret — the Slack app the request came
// from —, so that answers leave as its posts do (behind an egress proxy a
// bare client reaches no Slack, and the channel never heard of a silence
// made). An unknown secret gets a client with the defaults.
func (t *Triage) answerClient(secret string) *http.Client {
	if hc := t.answers[secret]; hc != nil {
		return hc
	}
	return &http.Client{Timeout: answerTimeout}
}

// answerTimeout bounds one response_url answer.
const answerTimeout = 10 * time.Second

// answerClient is n's client (its http_config) with answerTimeout, for
// the triage's response_url answers.
func (n *Notifier) answerClient() *http.Client {
	if n.httpClient == nil {
		return &http.Client{Timeout: answerTimeout}
	}
	hc := *n.httpClient
	hc.Timeout = answerTimeout
	return &hc
}

// PagedThrough names the PagerDuty integration that Acknowledge and
// Resolve of target receiver's integration (added with Add) act on:
// pdReceiver's integration pdIntegration (as alert.Notification.Integration
// names it). The dispatch core keeps the state of the incident's page there
// (store.IncidentStates): while its trigger is still being sent ("opening"
// — the Slack parent is posted at once, beside it), PagerDuty would drop an
// acknowledge or resolve of a dedup_key it does not hold yet, and the late
// trigger would then page on-call for an incident Slack says was handled.
// Such a click waits for the page (PageWait) and, still unconfirmed, does
// nothing and says so. Without it, clicks act at once.
func (t *Triage) PagedThrough(receiver, integration, pdReceiver, pdIntegration string) {
	if tg := t.targets[receiver+"/"+integration]; tg != nil && pdReceiver != "" && pdIntegration != "" {
		tg.pagedThrough, tg.pagedReceiver = pdReceiver+"/"+pdIntegration, pdReceiver
	}
}

// pagedAt is the "receiver/integration" of receiver's PagerDuty
// integration that Acknowledge and Resolve act on, as PagedThrough named
// it for a target paging through receiver ("" when none does).
func (t *Triage) pagedAt(receiver string) string {
	for _, tg := range t.targets {
		if tg.pagedReceiver == receiver && tg.pagedThrough != "" {
			return tg.pagedThrough
		}
	}
	return ""
}

// Enabled reports whether any target was added.
func (t *Triage) Enabled() bool { return len(t.targets) > 0 }

// Wait blocks until the background work of every answered click is done.
func (t *Triage) Wait() { t.wg.Wait() }

// maxInteractionBody bounds an interaction request (Slack's are a few KiB;
// a parent message of 50 blocks stays far below).
const maxInteractionBody = 1 << 20

// ServeHTTP answers one interaction request: 401 for a bad or stale
// signature (nothing done), 400 for a body that is no interaction, 200 at
// once otherwise, the work continuing in the background.
func (t *Triage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInteractionBody+1))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxInteractionBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if sslCheck(body) {
		// Slack checking the URL's certificate (slash command URLs): an
		// unsigned request that asks nothing; answered 200, nothing done.
		w.WriteHeader(http.StatusOK)
		return
	}
	secret, outcome := t.verify(r.Header, body)
	if outcome == OutcomeStale {
		// Slack signs the time it sent the request: more than 5 minutes
		// from this replica's clock either way. A request from the future
		// is this replica's clock behind (a broken NTP): every click and
		// command it gets is refused so, while other replicas take them.
		t.o.Metrics.count("", outcome)
		ts, _ := strconv.ParseInt(r.Header.Get("X-Slack-Request-Timestamp"), 10, 64)
		offset := time.Until(time.Unix(ts, 0)).Round(time.Second)
		why := "the request's timestamp is more than 5 minutes old (a replay, or this server's clock ahead)"
		if offset > 0 {
			why = "the request's timestamp is " + offset.String() + " ahead of this server's clock: check the clock (NTP) of this host"
		}
		t.refusalLogs.Log(r.Context(), t.o.Logger, slog.LevelWarn, outcome, "slack interaction refused", "reason", outcome, "remote", r.RemoteAddr, "request_time", time.Unix(ts, 0).UTC(), "offset", offset, "why", why)
		http.Error(w, "stale request timestamp: "+why, http.StatusUnauthorized)
		return
	}
	if outcome != "" {
		t.o.Metrics.count("", outcome)
		t.refusalLogs.Log(r.Context(), t.o.Logger, slog.LevelWarn, outcome, "slack interaction refused", "reason", outcome, "remote", r.RemoteAddr)
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "form body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if form.Get("command") != "" {
		// A slash command: answered through its response_url.
		w.WriteHeader(http.StatusOK)
		t.background(func(ctx context.Context) { t.command(ctx, form, secret) })
		return
	}
	if form.Get("payload") == "" && strings.HasSuffix(r.URL.Path, "/commands") {
		// /slack/commands: what is missing is the command.
		http.Error(w, "no command parameter", http.StatusBadRequest)
		return
	}
	cb, err := parseInteraction(form)
	if err != nil {
		t.o.Logger.Info("slack interaction refused: not an interaction payload", "err", err, "remote", r.RemoteAddr)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Other interaction types (a shortcut, a modal's submission: the
	// router's app offers none) are answered 200, and nothing is done:
	// Slack would show the user an error for anything else.
	w.WriteHeader(http.StatusOK)
	if cb.Type != sl.InteractionTypeBlockActions {
		return
	}
	for _, act := range cb.ActionCallback.BlockActions {
		t.background(func(ctx context.Context) { t.act(ctx, cb, act, secret) })
	}
}

// sslCheck reports whether body is Slack's certificate check of a slash
// command URL (ssl_check=1, and neither a command nor a payload).
func sslCheck(body []byte) bool {
	if !bytes.Contains(body, []byte("ssl_check=1")) {
		return false
	}
	form, err := url.ParseQuery(string(body))
	return err == nil && form.Get("ssl_check") == "1" && form.Get("command") == "" && form.Get("payload") == ""
}

// background runs f after the answer, within the handler's timeout. A
// panic in f (a bug some click triggers) is logged with its stack and
// counted (outcome "panic"), and ends that click only: in its own goroutine
// it would crash the router and every page in flight with it.
func (t *Triage) background(f func(ctx context.Context)) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				t.o.Metrics.count("", OutcomePanic)
				t.o.Logger.Error("Slack triage panicked after answering Slack (a bug: please report it with this stack); the click did nothing more",
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), t.o.Timeout)
		defer cancel()
		f(ctx)
	}()
}

// verify checks X-Slack-Signature against every configured signing secret
// and returns the one that verified, or the outcome of the refusal.
func (t *Triage) verify(h http.Header, body []byte) (string, string) {
	for _, secret := range t.secrets {
		sv, err := sl.NewSecretsVerifier(h, secret)
		if errors.Is(err, sl.ErrExpiredTimestamp) {
			// slack-go refuses the time before it reads the signature: a
			// forged request with any time looked like this host's clock
			// wrong (an audit). Stale only when Slack signed it.
			if signedWith(h, body, secret) {
				return "", OutcomeStale
			}
			continue
		}
		if err != nil {
			return "", OutcomeBadSignature
		}
		_, _ = sv.Write(body)
		if sv.Ensure() == nil {
			return secret, ""
		}
	}
	return "", OutcomeBadSignature
}

// signedWith reports whether the request carries Slack's v0 signature of
// body by secret, whatever its timestamp says: slack-go's verifier checks
// the signature of a request within its 5 minutes only.
func signedWith(h http.Header, body []byte, secret string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	_, _ = io.WriteString(mac, "v0:"+h.Get("X-Slack-Request-Timestamp")+":")
	_, _ = mac.Write(body)
	return hmac.Equal([]byte("v0="+hex.EncodeToString(mac.Sum(nil))), []byte(h.Get("X-Slack-Signature")))
}

// parseInteraction reads the interaction in form's payload parameter. Its
// errors name the problem for a 400, in words, not Go's type names: no
// payload, not valid UTF-8 (Slack sends none such: Go's decoder would
// swap the bytes for U+FFFD and act on the rest), not a JSON object, no
// type, block_actions without actions or with one that is not an object
// (null), a field of the wrong JSON type.
func parseInteraction(form url.Values) (*sl.InteractionCallback, error) {
	payload := form.Get("payload")
	if payload == "" {
		return nil, errors.New("no payload parameter")
	}
	if !utf8.ValidString(payload) {
		return nil, errors.New("payload is not valid UTF-8")
	}
	if !json.Valid([]byte(payload)) {
		return nil, errors.New("payload is not valid JSON")
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal([]byte(payload), &head); err != nil || head == nil {
		return nil, errors.New("payload is not a JSON object")
	}
	var typ string
	if err := json.Unmarshal(head["type"], &typ); err != nil || typ == "" {
		return nil, errors.New("payload has no type (a string)")
	}
	if sl.InteractionType(typ) == sl.InteractionTypeBlockActions {
		var actions []json.RawMessage
		if err := json.Unmarshal(head["actions"], &actions); err != nil || len(actions) == 0 {
			return nil, errors.New("payload: block_actions without actions (a non-empty array)")
		}
		for i, a := range actions {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(a, &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("payload: actions[%d] is not an object", i)
			}
		}
	}
	cb := &sl.InteractionCallback{}
	if err := json.Unmarshal([]byte(payload), cb); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// slack-go decodes through a type named alias, which Go's
			// decoder puts in the path.
			return nil, fmt.Errorf("payload: %s is a JSON %s, not what Slack sends there", strings.TrimPrefix(te.Field, "alias."), te.Value)
		}
		return nil, errors.New("payload is not a Slack interaction: a field has a shape Slack does not send")
	}
	return cb, nil
}

// click is one button press being handled.
type click struct {
	cb      *sl.InteractionCallback
	act     *sl.BlockAction
	b       button
	st      triageState
	tg      *triageTarget
	channel string
	ts      string
	user    string
	// held are the PagerDuty integrations ("receiver/integration") whose
	// page of the incident the dispatch core holds open (pageConfirmed):
	// Acknowledge and Resolve act on each.
	held []string
	// at is when a Resolve click arrived, on the store's clock (zero:
	// not read).
	at time.Time
}

func (c *click) logAttrs() []any {
	return []any{"action", c.b.action, "incident", c.st.Incident, "receiver", c.st.Receiver, "user", c.user, "channel", c.channel, "message_ts", c.ts}
}

// act handles one button press: claim, authorize, act, record.
func (t *Triage) act(ctx context.Context, cb *sl.InteractionCallback, act *sl.BlockAction, secret string) {
	c := &click{cb: cb, act: act, user: cb.User.ID, channel: cb.Container.ChannelID, ts: cb.Container.MessageTs}
	if c.channel == "" {
		c.channel = cb.Channel.ID
	}
	if c.ts == "" {
		c.ts = cb.Message.Timestamp
	}
	b, ok := parseActionID(act.ActionID)
	if !ok {
		t.o.Metrics.count("", OutcomeUnknown)
		t.ephemeral(ctx, secret, cb, fmt.Sprintf("Unknown action %q.", act.ActionID))
		return
	}
	c.b = b
	st, err := decodeTriageState(act.Value)
	if err != nil {
		t.o.Metrics.count(b.action, OutcomeUnknown)
		t.ephemeral(ctx, secret, cb, "This button carries no incident alertrouter knows: "+err.Error())
		return
	}
	c.st = st
	tg := t.targets[st.Receiver+"/"+st.Integration]
	if tg == nil || tg.secret != secret || !tg.n.cfg.offers(b.action) {
		t.o.Metrics.count(b.action, OutcomeUnknown)
		t.ephemeral(ctx, secret, cb, fmt.Sprintf("Incident %s of receiver %q is unknown here, or %s is not offered for it (the configuration changed?).", code(st.Incident), st.Receiver, b.action))
		return
	}
	c.tg = tg
	if b.action == ActionResolve {
		// On the clock the store stamps joins with, before the click
		// claims, authorizes and reads anything, less the time Slack takes
		// to deliver a click (joinedAsClicked).
		c.at = t.storeTime(ctx, store.IncidentKey(t.o.KeyPrefix, st.Incident, st.Receiver+"/"+st.Integration)).Add(-joinMargin)
	}
	log := t.o.Logger.With(c.logAttrs()...)

	// Exactly once per request: Slack's retries and a second replica
	// receiving the same click find the claim and do nothing.
	leases := dedup.Leases{Store: t.o.Store, TTL: t.o.ClaimTTL}
	token := dedup.NewToken()
	reqKey := store.Key(t.o.KeyPrefix, "slack-click", st.Incident, act.ActionTs+":"+c.user+":"+act.ActionID)
	won, err := leases.Acquire(ctx, []string{reqKey}, token)
	if err != nil {
		t.o.Metrics.count(b.action, OutcomeFailed)
		log.Error("claim the click", "err", err)
		t.ephemeral(ctx, secret, cb, answerStoreDown)
		return
	}
	if !won[0] {
		t.o.Metrics.count(b.action, OutcomeDuplicate)
		log.Info("click already handled (Slack retry or another replica)")
		return
	}

	if ok, err := t.authorizedClick(ctx, c); !ok {
		if err != nil {
			// Slack did not say whether the user is in an allowed group
			// (rate limited, a missing scope): not a refusal.
			t.release(reqKey, token)
			t.o.Metrics.count(b.action, OutcomeFailed)
			log.Error("action not taken: the user-group lookup failed", "err", err)
			t.ephemeral(ctx, secret, cb, answerLookupFailed(b.action+" this incident", err))
			return
		}
		t.o.Metrics.count(b.action, OutcomeRefused)
		log.Warn("action refused: user not authorized")
		t.ephemeral(ctx, secret, cb, fmt.Sprintf("You are not allowed to %s this incident: %s.", b.action, whoMay(tg, st.Receiver, st.Integration, b.action)))
		return
	}

	// The incident resolved since the message was drawn (its parent now
	// says so): acting on it — silencing, paging — would act on a stale
	// view. Expiring a silence still makes sense. The store says so, and
	// so does Slack's copy of the message in the click when the store lost
	// it (restarted empty): a resolved parent is drawn without buttons, and
	// a button taken away no longer applies.
	if b.action != ActionUnsilence {
		stale := ""
		switch {
		case t.resolvedMessage(ctx, c):
			stale = fmt.Sprintf("Incident %s has resolved since this message was drawn (its alerts stopped firing): nothing was done.", code(st.Incident))
		case !hasActionsBlock(cb):
			stale = fmt.Sprintf("Incident %s has resolved since this message was drawn (the message offers no action any more): nothing was done.", code(st.Incident))
		case !offersButton(cb, act.ActionID):
			stale = fmt.Sprintf("Incident %s has changed since this message was drawn (it no longer offers this button: the action was taken, or the incident resolved): nothing was done.", code(st.Incident))
		}
		if stale != "" {
			t.o.Metrics.count(b.action, OutcomeStale)
			log.Info("click on a stale message", "why", stale)
			t.ephemeral(ctx, secret, cb, stale)
			return
		}
	}

	// PagerDuty drops an acknowledge or resolve of a page it does not hold
	// yet: while the dispatch core's trigger is in flight, wait for it.
	// (An escalation's page was triggered by its click, and confirmed.)
	if (b.action == ActionAck || b.action == ActionResolve) && !st.Escalated {
		if confirmed, held := t.pageConfirmed(ctx, c); !confirmed || !held {
			why, answer := "the incident's page is still being sent to PagerDuty",
				fmt.Sprintf("PagerDuty has not confirmed the page of incident %s yet (alertrouter is still sending it): nothing was done. Try again in a few seconds.", code(st.Incident))
			if confirmed {
				// The trigger failed (a refused routing key: a dead
				// letter) or the incident closed: PagerDuty drops an
				// acknowledge or resolve of a page it does not hold, and
				// Slack would say the page was handled — a replay of the
				// dead letter then paged on-call for it.
				why, answer = "alertrouter delivered no open page of the incident to PagerDuty",
					fmt.Sprintf("alertrouter holds no open PagerDuty page of incident %s: its trigger failed (Alertmanager retries it; a permanent failure is listed in the dead letters, in the console or `router dead-letters list`: once it is replayed, this button acts) or the incident closed. Nothing was done; if PagerDuty shows the page, act there.", code(st.Incident))
			}
			t.release(reqKey, token)
			t.o.Metrics.count(b.action, OutcomeFailed)
			log.Warn("action not taken: " + why)
			t.ephemeral(ctx, secret, cb, answer)
			return
		}
	} else if (b.action == ActionAck || b.action == ActionResolve) && len(st.PagedAt) > 0 {
		// An escalated ticket a page then joined (the parent redrawn for
		// it): the page's integrations PagerDuty holds are acted on with
		// the escalation's (a review: only the escalation was).
		for _, at := range st.PagedAt {
			if ok, h := t.pageHeld(ctx, c, at); ok && h {
				c.held = append(c.held, at)
			}
		}
	}

	// Exactly once per message: a double click (another action_ts) finds
	// the action's claim on the message.
	stateKey := t.stateKey(c, c.b.action)
	if b.action == ActionUnsilence {
		if st.Silence == "" {
			t.o.Metrics.count(b.action, OutcomeUnknown)
			t.ephemeral(ctx, secret, cb, "This message has no silence to expire.")
			return
		}
		stateKey += ":" + st.Silence
	}
	stateTTL := messageStateTTL
	if b.action == ActionSilence {
		stateTTL = b.silence
	}
	// The claim lives as long as the action may take; once done, its
	// record keeps stateTTL. A replica that dies mid-action (a rollout, an
	// OOM kill) leaves the button usable again within minutes, not a week.
	won, err = dedup.Leases{Store: t.o.Store, TTL: min(actionClaimTTL(t.o.Timeout), stateTTL)}.Acquire(ctx, []string{stateKey}, token)
	if err != nil {
		t.release(reqKey, token)
		t.o.Metrics.count(b.action, OutcomeFailed)
		log.Error("claim the action", "err", err)
		t.ephemeral(ctx, secret, cb, answerStoreDown)
		return
	}
	if !won[0] {
		t.o.Metrics.count(b.action, OutcomeDuplicate)
		if vals, found, err := t.o.Store.Get(ctx, []string{stateKey}); err == nil && found[0] && !strings.HasPrefix(vals[0], "d ") {
			log.Info("action in progress on this message")
			t.ephemeral(ctx, secret, cb, fmt.Sprintf("Someone's %q on this incident is in progress: nothing more was done. If the thread says nothing within %s, try again.", b.action, shortDuration(actionClaimTTL(t.o.Timeout))))
			return
		}
		log.Info("action already taken on this message")
		t.ephemeral(ctx, secret, cb, fmt.Sprintf("Already done: someone took %q on this incident (see the thread).", b.action))
		return
	}

	// The trace tells whether a request of the action went out: a timeout
	// after that leaves its outcome unknown.
	var sent postTrace
	rec, err := t.perform(sent.trace(ctx), c)
	// What follows may outlive the click's deadline, spent by a slow
	// PagerDuty or Alertmanager: the user still hears of the click, and
	// what was done is still recorded.
	fctx, cancel := afterAction(ctx)
	defer cancel()
	if r := (*refusal)(nil); errors.As(err, &r) {
		// Not done, and nothing failed: said as is.
		t.release(reqKey, token)
		t.release(stateKey, token)
		t.o.Metrics.count(b.action, r.outcome)
		log.Warn("action not taken", "reason", r.msg)
		t.ephemeral(fctx, secret, cb, r.msg)
		return
	}
	unconfirmed := err != nil && unknownOutcome(ctx, &sent, err)
	if b.action == ActionSilence {
		// amsilence.Client.Create tells: it looks up a silence whose
		// create got no answer.
		unconfirmed = errors.Is(err, amsilence.ErrUnconfirmed)
	}
	if unconfirmed && b.action == ActionEscalate {
		// PagerDuty may hold the page (it took the trigger and answered
		// late): the escalation is recorded as taken, so that its resolve
		// is sent when the alerts resolve — a resolve of a dedup_key
		// PagerDuty never opened is a no-op there.
		t.o.Metrics.count(b.action, OutcomeUnconfirmed)
		log.Warn("escalation not confirmed by PagerDuty (it may have paged): recorded as taken, so that its page is resolved with the alerts", "err", err)
		t.ephemeral(fctx, secret, cb, unconfirmedAnswer(ActionEscalate, st.Incident, err, true))
		t.done(fctx, c, reqKey, stateKey, stateTTL, rec, log)
		t.journalClick(c, rec, true)
		t.resolveRacedEscalation(fctx, c, rec, log)
		return
	}
	if unconfirmed {
		t.release(reqKey, token)
		t.release(stateKey, token)
		t.o.Metrics.count(b.action, OutcomeUnconfirmed)
		log.Warn(logUnconfirmed, "err", err)
		t.ephemeral(fctx, secret, cb, unconfirmedAnswer(b.action, st.Incident, err, true))
		return
	}
	if err != nil {
		t.release(reqKey, token)
		t.release(stateKey, token)
		t.o.Metrics.count(b.action, OutcomeFailed)
		log.Error("action failed", "err", err)
		t.ephemeral(fctx, secret, cb, answerFailed(b.action, err))
		return
	}
	t.o.Metrics.count(b.action, OutcomeDone)
	log.Info("action taken from Slack", "detail", rec.thread)
	t.done(fctx, c, reqKey, stateKey, stateTTL, rec, log)
	t.journalClick(c, rec, false)
	if b.action == ActionEscalate {
		t.resolveRacedEscalation(fctx, c, rec, log)
	}
}

// resolveRacedEscalation resolves in PagerDuty the page c's Escalate has
// just made when the incident resolved while its trigger was on its way:
// the dispatch core's resolve read the message before the escalation was
// recorded (triageLink.resolveEscalation), so it sent none, and the page
// would stay open for a cleared incident. It acts on the dispatch core's
// own word only, read now that the escalation is recorded: the incident's
// state at the message's Slack integration closed (store.IncidentStates
// "", read again while it is "resolving", at most PageWait) and the
// parent marked resolved by that resolve (parentEdited) — a mark the click
// did not find before it acted (a click on a resolved message stops
// there). A firing again reopens both (an opening under the parent
// removes the mark; under a new parent the state is open), a resolve
// whose post failed leaves the incident open for Alertmanager's retry
// (which reads the escalation and resolves it), and a store that lost its
// state has no mark: in each the page stays, as the alerts may fire.
func (t *Triage) resolveRacedEscalation(ctx context.Context, c *click, rec record, log *slog.Logger) {
	if c.st.Receiver == "" || c.st.Integration == "" {
		return
	}
	state, settled, err := t.stateAfter(ctx, store.IncidentKey(t.o.KeyPrefix, c.st.Incident, c.st.Receiver+"/"+c.st.Integration), "resolving")
	switch {
	case err != nil:
		log.Warn("could not read whether the incident resolved while it was escalated: if its parent reads resolved, resolve the escalated page in PagerDuty by hand", "err", err)
		return
	case !settled:
		log.Warn("the incident was still resolving when the escalation was recorded: if its parent reads resolved and PagerDuty still holds the escalated page, resolve it there by hand")
		return
	case state != "":
		return // open: its resolve reads the escalation and resolves the page
	}
	m, err := t.readMessage(ctx, c.st.Incident, c.channel, c.ts)
	if err != nil {
		log.Warn("could not read whether the incident resolved while it was escalated: if its parent reads resolved, resolve the escalated page in PagerDuty by hand", "err", err)
		return
	}
	_, _, handResolved := m.by(ActionResolve)
	_, _, sent := m.by(escalationResolvedState)
	if !m.resolved {
		// Closed in the store, and no resolve of this parent recorded: a
		// store that lost the incident's state (or an older build's
		// resolve). The alerts may fire: the page stays.
		log.Warn("the incident reads closed but no resolve of its message is recorded: the escalated page stays open; if the alerts resolved, resolve it in PagerDuty by hand")
		return
	}
	if handResolved || sent {
		return
	}
	p := parentRef{channel: c.channel, ts: c.ts}
	line := "Resolved in PagerDuty: the alerts resolved while this escalation was on its way"
	if done, refused, err := t.resolveEscalated(ctx, c.st.Incident, p, c.tg, rec.extra, log.With("escalated_by", c.user)); errors.Is(refused, errLeftOpen) {
		line = leftOpenLine
	} else if !done {
		if err == nil {
			err = refused
		}
		log.Error("the alerts resolved while this escalation was on its way, and resolving its page in PagerDuty failed: resolve it there by hand", "err", err)
		line = fmt.Sprintf("The alerts resolved while this escalation was on its way, and resolving its page in PagerDuty failed (%s): resolve it there by hand", esc(errText(err)))
	}
	if err := t.addLine(ctx, c.st.Incident, p, line); err != nil {
		log.Warn("keep the resolve's line on the parent message", "err", err)
	}
	if err := t.threadReply(ctx, c, line); err != nil {
		log.Warn("say in the thread that the escalated page was resolved", "err", err)
	}
}

// threadReply posts text in the thread of c's message, as the clicking
// receiver's poster (clickPoster).
func (t *Triage) threadReply(ctx context.Context, c *click, text string) error {
	n := c.tg.n
	return n.call(ctx, func(ctx context.Context) error {
		opts := append([]sl.MsgOption{sl.MsgOptionText(text, false), sl.MsgOptionTS(c.ts)}, n.clickPoster(c.st)...)
		_, _, err := n.api.PostMessageContext(ctx, c.channel, opts...)
		return err
	})
}

// done records c's action as taken: its claims hold "done" (the state key
// keeps who and what), and the parent and its thread say so (record).
func (t *Triage) done(ctx context.Context, c *click, reqKey, stateKey string, stateTTL time.Duration, rec record, log *slog.Logger) {
	now := t.o.Now()
	done := []store.Entry{{Key: reqKey, Value: dedup.Done, TTL: t.o.ClaimTTL}, {Key: stateKey, Value: "d " + c.user + " " + rec.extra, TTL: stateTTL}}
	if c.b.action == ActionUnsilence {
		// The message may be silenced again.
		if err := t.o.Store.DeleteIfEqual(ctx, []store.Entry{{Key: t.stateKey(c, ActionSilence), Value: "d " + rec.silencedBy + " " + c.st.Silence}}); err != nil {
			log.Warn("forget the expired silence", "err", err)
		}
	}
	if err := t.o.Store.Set(ctx, done); err != nil {
		log.Warn("confirm the action in the store (the claim expires on its own)", "err", err)
	}
	t.record(ctx, c, rec, now)
}

// afterAction is the context of what follows a click's action (answering
// the user, recording the action): the rest of the click's deadline, and
// graceTimeout at least.
func afterAction(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(graceTimeout)
	if d, ok := ctx.Deadline(); ok && d.After(deadline) {
		deadline = d
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

// unknownOutcome reports whether the action that failed with err may have
// been taken all the same: a request of it went out whole (sent) and no
// answer said what became of it — the click's deadline (ctx) or a
// request's own timeout cut it short, or the connection broke after it was
// written — as notify.OutcomeUnknown marks a Slack post.
func unknownOutcome(ctx context.Context, sent *postTrace, err error) bool {
	if notify.IsOutcomeUnknown(err) {
		return true
	}
	if !sent.mayHavePosted(err) {
		return false
	}
	var ne net.Error
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.As(err, &ne) && ne.Timeout() || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// The answers the buttons and the slash command share.

// answerStoreDown answers an action the store's failure stopped before
// anything was done.
const answerStoreDown = "alertrouter could not reach its store; nothing was done. Try again."

// answerLookupFailed answers an action stopped because Slack's user-group
// lookup failed (what: "silence incidents", "ack this incident").
func answerLookupFailed(what string, err error) string {
	var se sl.SlackErrorResponse
	if errors.As(err, &se) && (se.Err == "no_such_subteam" || se.Err == "subteam_not_found") {
		// A configuration error: trying again never helps.
		return fmt.Sprintf("alertrouter could not check whether you may %s: a user group of the receiver's authorized list does not exist in this workspace (%v); nothing was done. Ask the router's operators to fix the authorized list.", what, err)
	}
	return fmt.Sprintf("alertrouter could not check whether you may %s (Slack's user-group lookup failed: %v); nothing was done. Try again.", what, err)
}

// answerFailed answers an action that failed with nothing changed, saying
// "Try again" when a retry may pass.
func answerFailed(action string, err error) string {
	msg := fmt.Sprintf("%s failed, nothing changed: %v", action, err)
	if mayRetry(err) {
		msg += ". Try again in a moment."
	}
	return msg
}

// unconfirmedAnswer tells the user that action on incident may have been
// taken (unknownOutcome), what to check, and whether a second click is
// safe. onMessage says the action came from the incident's message (a
// button), not from the slash command.
func unconfirmedAnswer(action, incident string, err error, onMessage bool) string {
	why := esc(errText(err))
	switch action {
	case ActionSilence:
		s := fmt.Sprintf("Silence may have been done: Alertmanager did not confirm it (%s). Check Alertmanager's silences for incident %s before silencing again", why, code(incident))
		if onMessage {
			return s + ": a silence it made now is not on this message (no Unsilence button for it), expire it in Alertmanager."
		}
		return s + "."
	case ActionUnsilence:
		return fmt.Sprintf("Unsilence may have been done: Alertmanager did not answer in time (%s). Check Alertmanager's silences; clicking again is safe.", why)
	case ActionEscalate:
		return fmt.Sprintf("Escalate may have been done: PagerDuty did not answer in time (%s). Check PagerDuty for incident %s: if it has none, page from PagerDuty. The escalation is recorded here, so PagerDuty gets its resolve when the alerts resolve.", why, code(incident))
	}
	return fmt.Sprintf("%s may have been done: PagerDuty did not answer in time (%s). Check PagerDuty for incident %s; clicking again is safe (PagerDuty takes it once).", action, why, code(incident))
}

// logUnconfirmed is the log line of an action that may have been done.
const logUnconfirmed = "action not confirmed: its request went out and got no answer in time (it may have been done)"

// errText is err's text for an answer to the user, bounded: its start and
// its end, where a wrapped error's cause is ("connection refused" after a
// long URL, which cut at 300 runes left the user no cause).
func errText(err error) string {
	s := err.Error()
	if _, cut := notify.TruncateInRunes(s, 300); !cut {
		return s
	}
	r := []rune(s)
	return string(r[:150]) + " … " + string(r[len(r)-147:])
}

// mayRetry reports whether an action that failed with err may succeed when
// clicked again: not a refusal of PagerDuty (alert.Permanent) nor an
// Alertmanager answer refusing the request (4xx but 429).
func mayRetry(err error) bool {
	var he *amsilence.HTTPError
	if errors.As(err, &he) {
		return he.Status >= 500 || he.Status == http.StatusTooManyRequests || he.Status == http.StatusRequestTimeout
	}
	return alert.Retryable(err)
}

func (t *Triage) stateKey(c *click, action string) string {
	return t.messageKey(c.st.Incident, c.channel, c.ts) + ":" + action
}

// messageKey is the prefix of the keys of a parent message's state.
func (t *Triage) messageKey(incident, channel, ts string) string {
	return store.Key(t.o.KeyPrefix, "slack-triage", incident, channel+":"+ts)
}

// resolvedState is the suffix of the key that marks a parent message whose
// incident has resolved (parentEdited).
const resolvedState = "resolved"

// messageStateTTL is how long what was done on a parent message is kept:
// its actions, its incident resolved, a hand resolve's mark.
const messageStateTTL = 7 * 24 * time.Hour

// parentEdited records that the notifier edited an incident's parent
// message to resolved (marked) or opened it again (unmarked).
func (t *Triage) parentEdited(ctx context.Context, incident string, p parentRef, resolved bool) {
	mark := store.Entry{Key: t.messageKey(incident, p.channel, p.ts) + ":" + resolvedState, Value: dedup.Done, TTL: messageStateTTL}
	var err error
	if resolved {
		err = t.o.Store.Set(ctx, []store.Entry{mark})
	} else {
		err = t.o.Store.DeleteIfEqual(ctx, []store.Entry{mark})
	}
	if err != nil {
		t.markLogs.Log(ctx, t.o.Logger, slog.LevelWarn, logthrottle.ErrorClass(err),
			"record whether the parent message is drawn resolved (a click on it may act as if it still fired; a partial resolve may be posted after its resolve; a later redraw may not be sent)", "incident", incident, "resolved", resolved, "err", err)
	}
}

// parentResolved reports whether incident's parent message p was edited
// to resolved (parentEdited); a store that cannot tell says no.
func (t *Triage) parentResolved(ctx context.Context, incident string, p parentRef) bool {
	_, found, err := t.o.Store.Get(ctx, []string{t.messageKey(incident, p.channel, p.ts) + ":" + resolvedState})
	return err == nil && found[0]
}

// resolvedMessage reports whether c's message belongs to an incident that
// has resolved (its parent was edited so).
func (t *Triage) resolvedMessage(ctx context.Context, c *click) bool {
	return t.parentResolved(ctx, c.st.Incident, parentRef{channel: c.channel, ts: c.ts})
}

// hasActionsBlock reports whether Slack's copy of the clicked message (in
// the click's payload) carries the triage buttons' block.
func hasActionsBlock(cb *sl.InteractionCallback) bool {
	return actionsOf(cb) != nil
}

// offersButton reports whether Slack's copy of the clicked message carries
// a triage button with actionID.
func offersButton(cb *sl.InteractionCallback, actionID string) bool {
	ab := actionsOf(cb)
	if ab == nil || ab.Elements == nil {
		return false
	}
	for _, e := range ab.Elements.ElementSet {
		if b, ok := e.(*sl.ButtonBlockElement); ok && b.ActionID == actionID {
			return true
		}
	}
	return false
}

// actionsOf returns the triage buttons' block of Slack's copy of the
// clicked message, or nil.
func actionsOf(cb *sl.InteractionCallback) *sl.ActionBlock {
	for _, b := range cb.Message.Blocks.BlockSet {
		if ab, ok := b.(*sl.ActionBlock); ok && ab.BlockID == actionsBlockID {
			return ab
		}
	}
	return nil
}

// pagePoll is how often a click waiting for its page reads its state.
const pagePoll = 200 * time.Millisecond

// pageConfirmed reports whether c's incident's page is not being sent to
// PagerDuty any more (PagedThrough): it waits while the dispatch core holds
// the page's opening lease, at most PageWait and half of what is left of
// the click's deadline. held reports whether the dispatch core then holds
// the page open there — no state is a trigger that failed (its opening
// aborted, a dead letter written) or an incident closed, unless the store
// began its state (dedup.Epoch: restarted empty, failed over) after the
// message was posted, or deletes keys when full and did (mayHaveEvicted)
// while the journal shows no failed trigger: the page's state may have
// been lost with it, and the click acts. A store that cannot be read, or a
// target without PagedThrough, says yes to both: the click acts, as it
// did before.
func (t *Triage) pageConfirmed(ctx context.Context, c *click) (confirmed, held bool) {
	through := c.pagedThrough()
	if len(through) == 0 {
		return true, true
	}
	confirmed = true
	for _, at := range through {
		ok, h := t.pageHeld(ctx, c, at)
		confirmed = confirmed && ok
		if ok && h {
			c.held = append(c.held, at)
		}
	}
	return confirmed, len(c.held) > 0
}

// pageHeld is pageConfirmed for the page at one PagerDuty integration
// ("receiver/integration").
func (t *Triage) pageHeld(ctx context.Context, c *click, through string) (confirmed, held bool) {
	state, settled, err := t.stateAfter(ctx, store.IncidentKey(t.o.KeyPrefix, c.st.Incident, through), store.OutcomeOpening)
	if err != nil || !settled || state != "" {
		return err != nil || settled, true
	}
	posted, err := strconv.ParseFloat(c.ts, 64)
	if err != nil {
		return true, true
	}
	at := time.UnixMilli(int64(posted * 1000))
	epoch, err := dedup.Epoch(ctx, t.o.Store, t.o.KeyPrefix, t.o.Now())
	return true, err != nil || epoch.After(at) || t.replayHeld(ctx, c.st.Incident, through, at) ||
		t.mayHaveEvicted(ctx) && !t.triggerFailed(ctx, c.st.Incident, through, at)
}

// resolveMemberKeys are the incident state keys whose members a Resolve
// of c at pages checks (joinedAsClicked): the incident at each
// PagerDuty integration it resolves — where a joining alert is folded into
// the page —, else (none known: an escalation's) at the message's own.
func (t *Triage) resolveMemberKeys(c *click, pages []pageAt) []string {
	var keys []string
	for _, p := range pages {
		if k := store.IncidentKey(t.o.KeyPrefix, c.st.Incident, p.at); p.at != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		keys = append(keys, store.IncidentKey(t.o.KeyPrefix, c.st.Incident, c.st.Receiver+"/"+c.st.Integration))
	}
	return keys
}

// joinMargin is how long before a Resolve click reached the router an
// alert that became a member of its incident counts as joined as it was
// clicked (joinedAsClicked): Slack's delivery of a click, from the user's
// press to the router, takes about that much at most (a review: an alert
// joining in that time was folded into the resolve).
const joinMargin = 2 * time.Second

// handMarkKey is the key of the hand-resolve mark of incident's page p: of
// its PagerDuty integration (dedup.HandResolvedAtKey), or the incident's
// (dedup.HandResolvedKey) when that integration is unknown.
func (t *Triage) handMarkKey(incident string, p pageAt) string {
	if p.at != "" {
		return dedup.HandResolvedAtKey(t.o.KeyPrefix, incident, p.at)
	}
	return dedup.HandResolvedKey(t.o.KeyPrefix, incident)
}

// resolvedByHand refuses an Acknowledge of a page a Resolve has resolved
// in PagerDuty, or is resolving: the acknowledge would reach PagerDuty
// after the resolve, and the thread say the incident acknowledged (an
// audit: Ack racing Resolve across replicas, the acknowledge 1 ms after
// the resolve). Refused when c's message records a Resolve — done, or its
// claim held by a click resolving — that no page since forgot (a page
// again, or a firing again under the message, clears it), or when a
// hand-resolve mark of the pages says a Resolve is on its way (from
// another message of the page). A mark that says resolved alone refuses
// nothing: it outlives the page it resolved until PagerDuty is paged
// through its integration again, and an escalation pages through none (a
// review: a new escalation's Acknowledge was refused for a week). A store
// that cannot be read refuses nothing.
func (t *Triage) resolvedByHand(ctx context.Context, c *click, pages []pageAt) *refusal {
	keys := []string{t.stateKey(c, ActionResolve)}
	for _, p := range pages {
		keys = append(keys, t.handMarkKey(c.st.Incident, p))
	}
	vals, found, err := t.o.Store.Get(ctx, keys)
	if err != nil {
		return nil
	}
	refuse := func(what string) *refusal {
		return &refusal{fmt.Sprintf("Incident %s %s in PagerDuty: nothing was acknowledged.", code(c.st.Incident), what), OutcomeStale}
	}
	if found[0] {
		if user, _, ok := doneBy(vals[0]); ok {
			return refuse("was resolved by <@" + user + ">")
		}
		return refuse("is being resolved")
	}
	for i, v := range vals[1:] {
		if found[i+1] && dedup.IsHandResolving(v) {
			if resolving, _ := dedup.ReadHandResolving(v, t.o.Now()); resolving {
				return refuse("is being resolved")
			}
		}
	}
	return nil
}

// storeTime is the store's clock where key lives (Redis' TIME: the clock
// its incident script stamps joins with), else the triage's
// (TriageOptions.Now).
func (t *Triage) storeTime(ctx context.Context, key string) time.Time {
	if r, ok := t.o.Store.(store.IncidentJoinsReader); ok {
		if now, err := r.TimeAt(ctx, key); err == nil {
			return now
		}
	}
	return t.o.Now()
}

// joinedAsClicked counts the alerts that became members of the incidents
// at keys (store.IncidentJoinsReader: added, or fired anew — not repeated
// by Alertmanager; one an earlier build joined, by its last join) from
// joinMargin before c reached the router on (the store's clock), read once
// c's Resolve wrote its "resolving" marks: such an alert, folded into the
// page the resolve closes, was never paged nor seen by the user who
// clicked (reviews: joins 0–10 ms after a click, in the hundreds of ms a
// click spends claiming, authorizing and reading before it acts, and in
// Slack's delivery of it). Both times are the store's own, whatever the
// clocks of Slack and the hosts say (a review: a Redis 5 s behind the
// hosts let such an alert through). A Join after this read sees the marks
// (the dispatch core reads them again with its Join: handMarksAfterJoin).
// Each incident's members count apart: one already in another PagerDuty
// integration's incident joins this one anew. A store that cannot be read
// counts none.
func (t *Triage) joinedAsClicked(ctx context.Context, c *click, keys []string) int {
	r, ok := t.o.Store.(store.IncidentJoinsReader)
	if !ok || c.at.IsZero() {
		return 0
	}
	joins, err := r.IncidentJoins(ctx, keys)
	if err != nil {
		return 0
	}
	n := 0
	for _, members := range joins {
		for _, at := range members {
			if !at.Before(c.at) {
				n++
			}
		}
	}
	return n
}

// restoreMarks puts back, where each of marks (a Resolve's "resolving"
// marks) is still there, what its key held before (prior, found: nothing
// when not found, or unknown), once nothing was resolved there.
func (t *Triage) restoreMarks(ctx context.Context, incident string, marks []store.Entry, prior []string, found []bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := t.o.Store.DeleteIfEqual(ctx, marks); err != nil {
		t.o.Logger.Warn("clear the marks of a resolve not made (alerts joining the incident wait "+dedup.HandResolvingGrace.String()+", then trigger it again)", "incident", incident, "err", err)
		return
	}
	var back []store.Entry
	for i, m := range marks {
		if i < len(found) && found[i] && !dedup.IsHandResolving(prior[i]) {
			back = append(back, store.Entry{Key: m.Key, Value: prior[i], TTL: dedup.HandResolvedTTL})
		}
	}
	if err := t.o.Store.Set(ctx, back); err != nil {
		t.o.Logger.Warn("put back the hand resolve an earlier Resolve recorded (the next alert joining the incident may not page)", "incident", incident, "err", err)
	}
}

// mayHaveEvicted reports whether the store deleted keys when full (Redis'
// maxmemory-policy other than noeviction, which deploy/README.md says not
// to run and the router warns of, and keys evicted since it started): the
// page's state may have been evicted while PagerDuty holds the page — an
// audit saw half the incidents' state go, and a click told a false reason
// and did nothing. Read only when a click finds no state; a store that
// cannot say evicted nothing.
func (t *Triage) mayHaveEvicted(ctx context.Context) bool {
	r, ok := t.o.Store.(interface {
		MemoryPolicy(ctx context.Context) (store.MemoryPolicy, error)
		EvictedKeys(ctx context.Context) (int64, error)
	})
	if !ok {
		return false
	}
	if m, err := r.MemoryPolicy(ctx); err != nil || !m.Evicts() {
		return false
	}
	n, err := r.EvictedKeys(ctx)
	return err == nil && n > 0
}

// triggerFailed reports whether the journal's newest delivery through the
// PagerDuty integration through ("receiver/integration") of incident since
// posted failed (retried, or kept as a dead letter): the state is missing
// because the trigger never took, not because it was evicted (a review: an
// evicting Redis made a click on such a page acknowledge it, and a later
// replay of its dead letter paged an incident Slack showed as handled).
func (t *Triage) triggerFailed(ctx context.Context, incident, through string, posted time.Time) bool {
	_, d, ok := t.newestDelivery(ctx, incident, through, posted, journal.OutcomeSent, journal.OutcomeFailed, journal.OutcomeDeadLetter)
	return ok && d.Outcome != journal.OutcomeSent
}

// newestDelivery is the journal's newest delivery of incident through the
// integration through ("receiver/integration") since posted whose outcome
// is one of outcomes, with its entry (a decision or a replay); false when
// none, or the journal cannot be read.
func (t *Triage) newestDelivery(ctx context.Context, incident, through string, posted time.Time, outcomes ...string) (*journal.Entry, journal.Delivery, bool) {
	if t.o.Journal == nil {
		return nil, journal.Delivery{}, false
	}
	var entry *journal.Entry
	var found journal.Delivery
	err := journal.Each(ctx, t.o.Journal, journal.Query{Since: posted, Newest: true, Limit: maxJournalRead}, func(e *journal.Entry) error {
		if e.Incident != incident || (e.Kind != journal.KindDecision && e.Kind != journal.KindReplay) {
			return nil
		}
		for _, d := range e.Deliveries {
			if d.Receiver+"/"+d.Integration == through && slices.Contains(outcomes, d.Outcome) {
				entry, found = e, d
				return errScanned
			}
		}
		return nil
	})
	return entry, found, entry != nil && (err == nil || errors.Is(err, errScanned))
}

// receiverOf is the receiver of "receiver/integration", whose integration
// is "<type>/<index>" (a receiver's name may hold a "/").
func receiverOf(at string) string {
	i := strings.LastIndexByte(at, '/')
	if i <= 0 {
		return at
	}
	if j := strings.LastIndexByte(at[:i], '/'); j >= 0 {
		return at[:j]
	}
	return at
}

// pagedThrough are the "receiver/integration" of the PagerDuty
// integrations c's page went to: the message's own record of them
// (triageState.PagedAt), else its target's (PagedThrough; none when
// unknown) — an escalation's is the escalation's.
func (c *click) pagedThrough() []string {
	if len(c.st.PagedAt) > 0 && !c.st.Escalated {
		return c.st.PagedAt
	}
	if c.tg.pagedThrough == "" {
		return nil
	}
	return []string{c.tg.pagedThrough}
}

// pageAt is one PagerDuty integration a click acts on.
type pageAt struct {
	pager Pager
	at    string // "receiver/integration" ("" unknown)
}

// pagesOf are the pages c's Acknowledge or Resolve acts on: each held
// page of those the message records (pageConfirmed), else the one its
// target pages through (pager, pagedAt). An error names a page whose
// PagerDuty the configuration no longer has.
func (t *Triage) pagesOf(c *click, pager Pager, pagedAt, noPager string) ([]pageAt, error) {
	var out []pageAt
	if len(c.held) == 0 || c.st.Escalated {
		if pager == nil {
			return nil, alert.Permanent(errors.New(noPager))
		}
		out = append(out, pageAt{pager, pagedAt})
		if !c.st.Escalated {
			return out, nil
		}
	}
	for _, at := range c.held {
		if at == pagedAt && c.st.Escalated {
			continue // the escalation's own integration
		}
		p := c.tg.pager
		if at != c.tg.pagedThrough {
			p = t.pagers[receiverOf(at)]
		}
		if p == nil {
			return nil, alert.Permanent(fmt.Errorf("the page went to receiver %q's PagerDuty, which the configuration no longer has: %s it there by hand", receiverOf(at), c.b.action))
		}
		out = append(out, pageAt{p, at})
	}
	return out, nil
}

// where names the receivers of pages when there are several (" (a, b)").
func where(pages []pageAt) string {
	if len(pages) < 2 {
		return ""
	}
	names := make([]string, len(pages))
	for i, p := range pages {
		if names[i] = receiverOf(p.at); names[i] == "" {
			names[i] = "the escalation's"
		}
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// replayHeld reports whether the journal shows incident's page sent again
// through the PagerDuty integration through ("receiver/integration") from
// its dead letter after posted, with nothing sent through it since that
// closed the incident: PagerDuty holds that page open, while the dispatch
// core's state learns it only at the alert's next webhook (an audit: after
// a replay, Acknowledge was refused until then).
func (t *Triage) replayHeld(ctx context.Context, incident, through string, posted time.Time) bool {
	// The newest send through the integration tells: a close (a resolve,
	// a replayed resolve) ends the page, a replayed trigger holds it.
	e, d, ok := t.newestDelivery(ctx, incident, through, posted, journal.OutcomeSent)
	return ok && !d.Closed && e.Kind == journal.KindReplay && e.Replay != nil && e.Replay.Kind == alert.KindFiring
}

// stateAfter reads the dispatch core's state of the incident at key
// (store.IncidentStates) again every pagePoll while it is busy (a lease:
// "opening", "resolving"), at most PageWait and half of what is left of
// ctx's deadline. It returns the last state read and whether it left busy
// in time (false when the wait or ctx ended first), or the store's error.
func (t *Triage) stateAfter(ctx context.Context, key, busy string) (state string, settled bool, err error) {
	wait := t.o.PageWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d)/2)
	}
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		s, err := t.o.Store.IncidentStates(ctx, []string{key})
		if err == nil && len(s) != 1 {
			err = fmt.Errorf("%d states read for one incident", len(s))
		}
		if err != nil {
			return "", false, err
		}
		if s[0] != busy {
			return s[0], true, nil
		}
		poll := time.NewTimer(pagePoll)
		select {
		case <-timeout.C:
			poll.Stop()
			return s[0], false, nil
		case <-ctx.Done():
			poll.Stop()
			return s[0], false, nil
		case <-poll.C:
		}
	}
}

// graceTimeout bounds what follows a click's action on a deadline of its
// own — releasing a claim, answering the user, recording the action — when
// the action outlived the click's timeout.
const graceTimeout = 5 * time.Second

// release frees a claim after a failure, on its own short deadline (the
// click's may be spent).
func (t *Triage) release(key, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), graceTimeout)
	defer cancel()
	if err := t.o.Store.DeleteIfEqual(ctx, dedup.Releases([]string{key}, token)); err != nil {
		t.o.Logger.Warn("release a triage claim (it expires on its own)", "key", key, "err", err)
	}
}

// authorizedClick reports whether c's user may take c's action on c's
// target (authorized).
func (t *Triage) authorizedClick(ctx context.Context, c *click) (bool, error) {
	return t.authorized(ctx, c.tg, c.b.action, c.user, nil)
}

// groupLookups keeps the user-group lookups of one request, by workspace
// and group id, for a request judged by several targets (a slash command):
// their lists often name the same groups, read from Slack once.
type groupLookups map[groupLookup][]string

type groupLookup struct{ workspace, id string }

// authorized reports whether user may take action on target tg's messages:
// the action's list in its Config.Authorized (unsilence falls back to
// silence's), user ids compared directly, user groups asked from Slack. No
// list: anyone. A refusal with an error means a group could not be read:
// the user may be allowed. lookups, when not nil, keeps the groups read for
// the rest of the request.
func (t *Triage) authorized(ctx context.Context, tg *triageTarget, action, user string, lookups groupLookups) (bool, error) {
	cfg := &tg.n.cfg
	_, ids, ok := authorizedList(cfg, action)
	if !ok {
		return true, nil
	}
	if slices.Contains(ids, user) {
		return true, nil
	}
	var errs []error
	for _, id := range ids {
		if !strings.HasPrefix(id, "S") {
			continue
		}
		members, read := lookups[groupLookup{tg.n.workspace, id}]
		if !read {
			var err error
			members, err = tg.n.api.GetUserGroupMembersContext(ctx, id)
			if err != nil {
				errs = append(errs, fmt.Errorf("user group %s: %w", id, err))
				continue
			}
			if lookups != nil {
				lookups[groupLookup{tg.n.workspace, id}] = members
			}
		}
		if slices.Contains(members, user) {
			return true, nil
		}
	}
	return false, errors.Join(errs...)
}

// authorizedList is the list of cfg.Authorized that decides who may take
// action, and its key: unsilence falls back to silence's. ok is false when
// there is none (anyone may).
func authorizedList(cfg *Config, action string) (key string, ids []string, ok bool) {
	if ids, ok = cfg.Authorized[action]; ok || action != ActionUnsilence {
		return action, ids, ok
	}
	ids, ok = cfg.Authorized[ActionSilence]
	return ActionSilence, ids, ok
}

// whoMay says, for a refusal, which list of the configuration decides who
// may take action on target tg (receiver's integration): its key in the
// receiver's slack_configs entry, and its user groups (their ids; users it
// lists are counted, not named).
func whoMay(tg *triageTarget, receiver, integration, action string) string {
	key, ids, _ := authorizedList(&tg.n.cfg, action)
	var groups []string
	users := 0
	for _, id := range ids {
		if strings.HasPrefix(id, "S") {
			groups = append(groups, "`"+id+"`")
		} else {
			users++
		}
	}
	var who []string
	if len(groups) > 0 {
		who = append(who, "the members of user group "+strings.Join(groups, ", "))
	}
	switch users {
	case 0:
	case 1:
		who = append(who, "1 user it names")
	default:
		who = append(who, fmt.Sprintf("%d users it names", users))
	}
	if len(who) == 0 {
		who = append(who, "nobody")
	}
	return fmt.Sprintf("`authorized.%s` of receiver %q's Slack entry (%s) decides who may: %s", key, receiver, integration, strings.Join(who, " and "))
}

// record is what an action leaves: a line on the parent, a thread reply,
// and the state the buttons are drawn from.
type record struct {
	line, thread string
	// extra is kept with the action's claim (the silence id).
	extra string
	// silencedBy is, for an unsilence, the user recorded with the silence.
	silencedBy string
	st         triageState
}

// perform takes the action.
func (t *Triage) perform(ctx context.Context, c *click) (record, error) {
	st := c.st
	mention := "<@" + c.user + ">"
	// pagedAt is the "receiver/integration" pager acts on ("" unknown).
	pager, pagedAt, noPager := c.tg.pager, c.tg.pagedThrough, "the receiver has no PagerDuty integration"
	if st.Escalated && (c.b.action == ActionAck || c.b.action == ActionResolve) {
		// The page went to the receiver the escalation recorded, which a
		// reload may have taken out of escalate_to since.
		pager, pagedAt = c.tg.escalation, t.pagedAt(c.tg.escalationTo)
		if m, err := t.readMessage(ctx, st.Incident, c.channel, c.ts); err == nil {
			if _, extra, ok := m.by(ActionEscalate); ok {
				var to string
				if pager, to = t.escalationPager(c.tg, extra); pager == nil {
					noPager = fmt.Sprintf("the escalation paged receiver %q's PagerDuty, which the configuration no longer has: %s it there by hand", to, c.b.action)
				}
				pagedAt = t.pagedAt(to)
			}
		}
	}
	switch c.b.action {
	case ActionAck:
		// Each page the message records that PagerDuty holds — a page
		// routed to a team's PagerDuty and a platform's, mirrored in one
		// channel, is acknowledged at both; never escalate_to's for a page
		// that went elsewhere (an audit: a click in a channel shared by
		// teams acknowledged another team's page, or nothing).
		pages, err := t.pagesOf(c, pager, pagedAt, noPager)
		if err != nil {
			return record{}, err
		}
		if r := t.resolvedByHand(ctx, c, pages); r != nil {
			return record{}, r
		}
		for _, p := range pages {
			if err := t.acknowledge(ctx, p.pager, st.Incident, p.at); err != nil {
				return record{}, err
			}
		}
		st.Acked = true
		return record{st: st, line: "Acknowledged in PagerDuty" + where(pages) + " by " + mention,
			thread: mention + " acknowledged the incident in PagerDuty" + where(pages) + "."}, nil
	case ActionResolve:
		pages, err := t.pagesOf(c, pager, pagedAt, noPager)
		if err != nil {
			return record{}, err
		}
		// While its alerts fire, the router's incident stays open and
		// PagerDuty hears nothing of its updates: the mark makes the next
		// alert that joins it trigger PagerDuty again (routing's
		// reopenHandResolved), instead of never paging. It names the
		// PagerDuty integration resolved: the incident key holds the
		// alerts of every team they were routed to, and this click
		// resolved one team's page only. Where that integration is unknown
		// (an escalation's PagerDuty no message pages through), the
		// incident's mark pages the next PagerDuty the incident updates.
		// The mark says "resolving" before the resolve is sent: an alert
		// joining meanwhile is answered 5xx and paged by Alertmanager's
		// retry once the resolve is done, not folded into the page the
		// resolve closes (an audit: such an alert was never paged).
		// The marks as they were, put back should nothing be resolved: a
		// Resolve clicked on another message of the page left one saying
		// resolved, and deleting it left later alerts joining unpaged (a
		// review).
		who, now := createdBy(c.cb.User), t.o.Now()
		resolving := make([]store.Entry, len(pages))
		keys := make([]string, len(pages))
		for i, p := range pages {
			key := t.handMarkKey(st.Incident, p)
			resolving[i] = store.Entry{Key: key, Value: dedup.HandResolving(who, now), TTL: dedup.HandResolvedTTL}
			keys[i] = key
		}
		prior, priorFound, priorErr := t.o.Store.Get(ctx, keys)
		if priorErr != nil {
			prior, priorFound = nil, nil
		}
		if err := t.o.Store.Set(ctx, resolving); err != nil {
			t.o.Logger.Warn("record that the incident is being resolved by hand (an alert joining it before PagerDuty takes the resolve is not paged)", "incident", st.Incident, "paged_through", where(pages), "err", err)
		} else if n := t.joinedAsClicked(ctx, c, t.resolveMemberKeys(c, pages)); n > 0 {
			t.restoreMarks(ctx, st.Incident, resolving, prior, priorFound)
			what, them := "A new alert", "it"
			if n > 1 {
				what, them = fmt.Sprintf("%d new alerts", n), "them"
			}
			return record{}, &refusal{fmt.Sprintf("%s joined incident %s as you clicked Resolve (see the thread): nothing was resolved, PagerDuty's page stays as it was. Read %s, then resolve again.",
				what, code(st.Incident), them), OutcomeStale}
		}
		// Once the resolves are done the marks say resolved; a resolve that
		// failed otherwise than by PagerDuty's refusal (no answer in time, a
		// connection lost, a 5xx after every attempt) may have reached
		// PagerDuty: its mark says resolved too — deleted, a resolve that
		// did land left the alerts joining after it unpaged (a review) —,
		// while one PagerDuty refused (a 4xx: permanent; and those not tried
		// after it) is cleared: nothing changed there (a review: a 400 left
		// Slack saying the incident was paged again). Written with a
		// context of their own: the click's may have ended.
		settle := func(resolved int) {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			marks := make([]store.Entry, resolved)
			for i := range marks {
				marks[i] = store.Entry{Key: resolving[i].Key, Value: dedup.HandResolved(who, now), TTL: dedup.HandResolvedTTL}
			}
			if err := t.o.Store.Set(wctx, marks); err != nil {
				t.o.Logger.Warn("record the hand resolve (alerts joining the incident wait "+dedup.HandResolvingGrace.String()+" before they trigger PagerDuty again)", "incident", st.Incident, "paged_through", where(pages), "err", err)
			}
			if resolved < len(resolving) {
				var p []string
				var f []bool
				if priorFound != nil {
					p, f = prior[resolved:], priorFound[resolved:]
				}
				t.restoreMarks(wctx, st.Incident, resolving[resolved:], p, f)
			}
		}
		for i, p := range pages {
			if err := t.resolve(ctx, p.pager, st.Incident, p.at); err != nil {
				if alert.Retryable(err) {
					i++ // when unsure, the next alert pages
				}
				settle(i)
				return record{}, err
			}
		}
		settle(len(pages))
		st.Resolved = true
		return record{st: st, line: "Resolved in PagerDuty" + where(pages) + " by " + mention + " — the alerts keep firing in Alertmanager until their rule clears",
			thread: mention + " resolved the incident in PagerDuty" + where(pages) + ". The alerts themselves keep firing in Alertmanager until their rule clears; silence them to stop the notifications. A new alert joining the incident triggers PagerDuty again."}, nil
	case ActionEscalate:
		if c.tg.escalation == nil {
			return record{}, alert.Permanent(errors.New("no PagerDuty integration to page (set escalate_to, or add pagerduty_configs to the receiver)"))
		}
		// What the ticket said goes with the page: its text, the
		// incident's labels and its links. The page reached PagerDuty
		// with none of them, and the engineer it woke had to find the
		// ticket first (an audit).
		text, links := ticketContext(c)
		details := map[string]any{"escalated_by": c.user, "slack_message": permalink(c), "incident": st.Incident, "receiver": st.Receiver}
		if text != "" {
			details["ticket"] = text
		}
		if len(st.Labels) > 0 {
			details["labels"] = st.Labels
		}
		st.Paged, st.Escalated, st.Acked, st.Resolved = true, true, false, false
		rec := record{st: st, extra: escalatedExtra + c.tg.escalationTo, line: "Escalated to a page by " + mention,
			thread: mention + " escalated the ticket to a page: PagerDuty was triggered."}
		e := notify.Escalation{Incident: st.Incident, Summary: escalationSummary(c), Details: details, Links: links, Source: notify.PageSource(st.Labels)}
		if len(st.Derived) >= 3 {
			e.Component, e.Group, e.Class = st.Derived[0], st.Derived[1], st.Derived[2]
		}
		if len(st.Derived) >= 4 && st.Derived[3] != "" {
			e.Source = st.Derived[3]
		}
		if err := c.tg.escalation.Escalate(ctx, e); err != nil {
			// Kept for an escalation PagerDuty may have taken (act).
			rec.line = "Escalated to a page by " + mention + " — PagerDuty did not confirm it in time: check it there"
			rec.thread = mention + " escalated the ticket to a page, but PagerDuty did not answer in time: it may not have paged — check PagerDuty. The escalation is recorded: PagerDuty gets its resolve when the alerts resolve."
			return rec, err
		}
		return rec, nil
	case ActionSilence:
		if t.o.Silences == nil {
			return record{}, alert.Permanent(errors.New("no alertmanager is configured to create silences in"))
		}
		// The button was drawn with the labels of the incident's first
		// alerts; alerts that joined since may differ (an instance, an
		// alertname). The alerts firing now are read from the journal when
		// there is one, and silenced so that no other alert matches: those
		// routed to other receivers or to none (muted, decided none), and
		// any other Alertmanager holds, are spared (spareOthers).
		var v incidentView
		var entries []*journal.Entry
		if t.o.Journal != nil {
			// A read cut short would leave alerts out: none is used then.
			var err error
			var receivers []string // none: every alert of the incident
			if st.Receiver != "" {
				receivers = []string{st.Receiver}
			}
			if entries, err = t.incidentEntries(ctx, st.Incident); err != nil {
				t.o.Logger.Warn("read the incident's alerts from the journal; silencing the labels the message was drawn with", "incident", st.Incident, "err", err)
				entries = nil
			}
			v = t.viewOf(entries, receivers)
		}
		drawn := st.Labels
		if drawn == nil {
			drawn = map[string]string{}
		}
		// The message's own alerts resolved since (the journal reaches
		// back to them): they are not the incident's firing alerts, and a
		// silence of their labels would mute them when they fire again.
		note := ""
		if drawnResolved(entries, drawn) {
			drawn, note = nil, drawnResolvedNote
		}
		p, err := t.planSilences(ctx, st.Incident, v.firing, v.others, drawn)
		if err != nil {
			return record{}, err
		}
		sets := p.sets
		now := t.o.Now()
		s := amsilence.Silence{
			StartsAt:  amsilence.StartNow(now),
			EndsAt:    now.Add(c.b.silence),
			CreatedBy: createdBy(c.cb.User),
			Comment:   fmt.Sprintf("Silenced from Slack for %s (incident %s): %s", shortDuration(c.b.silence), st.Incident, permalink(c)),
		}
		ids, err := t.createSilences(ctx, sets, s)
		if err != nil {
			return record{}, err
		}
		// Several ids are kept comma-separated (Unsilence expires them all).
		st.Silence = strings.Join(ids, ",")
		which := "silence `" + ids[0] + "`"
		if len(ids) > 1 {
			which = fmt.Sprintf("%d silences `%s`", len(ids), strings.Join(ids, "`, `"))
		}
		// A silence hides the alerts' resolve: the line and the reply say
		// so, and how to close the incident (silencedLineNote).
		return record{st: st, extra: st.Silence, line: fmt.Sprintf("Silenced for %s by %s (until %s, %s)%s", shortDuration(c.b.silence), mention, s.EndsAt.UTC().Format("2006-01-02 15:04 MST"), which, silencedLineNote(st)),
			thread: fmt.Sprintf("%s silenced the incident's alerts in Alertmanager for %s: %s.%s%s%s", mention, shortDuration(c.b.silence), silencesText(ids, sets), sparedNote(len(v.others)), note+heldNote(p), silencedThreadNote(st))}, nil
	case ActionUnsilence:
		if t.o.Silences == nil {
			return record{}, alert.Permanent(errors.New("no alertmanager is configured"))
		}
		by := t.silencedBy(ctx, c)
		ids := silenceIDs(st.Silence)
		ended := t.silencesEnded(ctx, ids)
		if err := t.expireSilences(ctx, ids); err != nil {
			return record{}, err
		}
		id := st.Silence
		st.Silence = ""
		which := "silence `" + id + "`"
		if len(ids) > 1 {
			which = fmt.Sprintf("silences `%s`", strings.Join(ids, "`, `"))
		}
		if ended {
			// Expired in Alertmanager, or over on its own: the alerts were
			// notified again already.
			return record{st: st, extra: id, silencedBy: by, line: "Unsilenced by " + mention + " (" + which + " had already ended)",
				thread: fmt.Sprintf("%s unsilenced the incident: %s had already ended in Alertmanager (expired there, over, or no longer known to it: one restarted without its data loses its silences), nothing was left to expire.", mention, which)}, nil
		}
		return record{st: st, extra: id, silencedBy: by, line: "Unsilenced by " + mention + " (" + which + " expired)",
			thread: fmt.Sprintf("%s expired %s: Alertmanager notifies the incident's alerts again, unless another silence (one made in Alertmanager, or with the slash command) still mutes them.", mention, which)}, nil
	}
	return record{}, fmt.Errorf("unknown action %q", c.b.action)
}

// silenceReader reads a silence; *amsilence.Client implements it.
type silenceReader interface {
	Get(ctx context.Context, id string) (amsilence.Silence, error)
}

// silencesEnded reports whether the silencer says every silence of ids
// had ended already (expired, or unknown to it): an Unsilence then expires nothing, and the
// thread says so rather than that the alerts are notified again. A
// silencer that cannot tell (no Get, an error) says no.
func (t *Triage) silencesEnded(ctx context.Context, ids []string) bool {
	r, ok := t.o.Silences.(silenceReader)
	if !ok || len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		if !silenceEnded(ctx, r, id) {
			return false
		}
	}
	return true
}

// silenceEnded reports whether r says silence id has ended: expired, or
// unknown to it (deleted, or lost when Alertmanager restarted without its
// data); an error says no.
func silenceEnded(ctx context.Context, r silenceReader, id string) bool {
	s, err := r.Get(ctx, id)
	if errors.Is(err, amsilence.ErrNotFound) {
		return true
	}
	return err == nil && s.Status != nil && s.Status.State == "expired"
}

// silencedBy reads who made the message's silence (the value its claim
// holds), so that unsilencing can forget exactly that claim: the silence's
// key alone, not the message's whole state (readMessage).
func (t *Triage) silencedBy(ctx context.Context, c *click) string {
	vals, found, err := t.o.Store.Get(ctx, []string{t.stateKey(c, ActionSilence)})
	if err != nil || !found[0] {
		return ""
	}
	user, _, _ := doneBy(vals[0])
	return user
}

// record updates the parent message (the action's line, the buttons that
// still apply) and replies in its thread. Both are cosmetic once the
// action is done: failures are logged.
//
// Every action's line is kept in the store beside the message's state, and
// the parent is drawn from them rather than from the click's copy of it:
// two clicks on one message at once (an acknowledgement and a silence by two
// people) each start from the message as it was before either, and the
// later edit would otherwise draw the other's line away. After an edit the
// lines and state are read again, and drawn again if another click added to
// them meanwhile: the last edit Slack applies holds every line.
func (t *Triage) record(ctx context.Context, c *click, rec record, now time.Time) {
	log := t.o.Logger.With(c.logAttrs()...)
	when := now.UTC().Format("2006-01-02 15:04 MST")
	line := rec.line + " · " + when
	logKey := t.stateKey(c, logState)
	shared := true
	if err := t.o.Store.AddMembers(ctx, logKey, messageStateTTL, fmt.Sprintf("%020d %s", now.UnixNano(), line)); err != nil {
		log.Warn("keep the action's line in the store (a concurrent click may draw it away)", "err", err)
		shared = false
	}
	n := c.tg.n
	drawn := ""
	var parentErr error
	for i := 0; ; i++ {
		st, resolved := t.currentState(ctx, c, rec.st)
		lines := t.logLines(ctx, c, logKey, line, shared)
		enc, _ := json.Marshal(st)
		sig := string(enc) + "\n" + strings.Join(lines, "\n")
		if i > 0 && sig == drawn {
			break
		}
		if resolved {
			// The incident resolved while the action was taken: the parent
			// says so, and the click's copy of it would draw it firing again.
			// The thread records the action.
			log.Info("the incident resolved meanwhile: its parent is left as it is")
			if c.b.action == ActionSilence && rec.st.Silence != "" {
				rec.thread = t.undoRacedSilence(ctx, c, rec, log)
			}
			break
		}
		if i == maxRedraws {
			log.Warn("the parent message kept changing under concurrent clicks; its last edit may miss a line (the thread has them all)")
			break
		}
		if err := n.call(ctx, func(ctx context.Context) error {
			_, _, _, err := n.api.UpdateMessageContext(ctx, c.channel, c.ts, sl.MsgOptionBlocks(t.parentBlocks(c, st, lines)...), sl.MsgOptionText(c.parentText(st), false))
			return err
		}); err != nil {
			log.Warn("update the parent message after the action", "err", err)
			parentErr = err
			break
		}
		if !shared {
			break
		}
		drawn = sig
	}
	if err := t.threadReply(ctx, c, rec.thread+" ("+when+")"); err != nil {
		log.Warn("record the action in the thread", "err", err)
		// The action was taken, but the channel does not say so (Slack
		// rate limited, or down): the user who clicked hears it here,
		// or a second click would be told "see the thread" of an empty one.
		if c.cb != nil {
			msg := "Done, but Slack did not take the thread's record of it (" + esc(errText(err)) + "): " + rec.thread
			if parentErr != nil {
				msg += " The incident's message could not be redrawn either: it still shows the buttons as they were."
			}
			t.ephemeral(ctx, c.tg.secret, c.cb, msg)
		}
	} else if parentErr != nil && c.cb != nil {
		// The thread says it, but the message still offers what was done
		// (an Acknowledge button after the acknowledgement) and nobody was
		// told why (an audit).
		t.ephemeral(ctx, c.tg.secret, c.cb, "Done, but Slack did not take the edit of the incident's message ("+esc(errText(parentErr))+"): it still shows the buttons as they were. The thread records it: "+rec.thread)
	}
}

// undoRacedSilence expires the silences of a Silence click on an incident
// that resolved while it was taken, and forgets them on the message, and
// returns what the thread says. Drawn resolved, the parent offers no
// Unsilence, and the silence would mute the alerts' next firing unseen for
// its whole length (an audit: a 1h silence left, and a reply pointing at
// buttons that were gone). A silence Alertmanager would not expire stays,
// and the reply names it.
func (t *Triage) undoRacedSilence(ctx context.Context, c *click, rec record, log *slog.Logger) string {
	mention := "<@" + c.user + ">"
	ids := silenceIDs(rec.st.Silence)
	which := "`" + strings.Join(ids, "`, `") + "`"
	if err := t.expireSilences(ctx, ids); err != nil {
		log.Warn("expire the silence of an incident that resolved as it was silenced", "silences", rec.st.Silence, "err", err)
		return fmt.Sprintf("%s silenced the incident's alerts as the incident resolved: the silence (%s) could not be expired (%s) and mutes them if they fire again before it ends — expire it in Alertmanager if that is not wanted.", mention, which, esc(errText(err)))
	}
	if err := t.o.Store.DeleteIfEqual(ctx, []store.Entry{{Key: t.stateKey(c, ActionSilence), Value: "d " + c.user + " " + rec.extra}}); err != nil {
		log.Warn("forget the expired silence", "err", err)
	}
	return fmt.Sprintf("%s clicked Silence as the incident resolved: the silence (%s) was expired at once, so that a new firing is notified and can be silenced from its own message.", mention, which)
}

// logState is the suffix of the key of the set of a parent message's triage
// lines, each "<unix nanoseconds, 20 digits> <line>".
const logState = "log"

// maxRedraws bounds the edits of one click's record.
const maxRedraws = 4

// logLines are the triage lines to draw on c's parent, oldest first: those
// its copy of the message carries that the store does not hold (drawn
// before the store kept them, or kept past their TTL), then the store's.
// With no shared log, the copy's lines and this click's own.
func (t *Triage) logLines(ctx context.Context, c *click, key, own string, shared bool) []string {
	var kept []string
	if shared {
		kept, _ = t.storedLines(ctx, key)
	}
	if len(kept) == 0 {
		kept = []string{own}
	}
	var lines []string
	for _, b := range c.cb.Message.Blocks.BlockSet {
		cb, ok := b.(*sl.ContextBlock)
		if !ok || !strings.HasPrefix(cb.BlockID, logBlockPrefix) || len(cb.ContextElements.Elements) == 0 {
			continue
		}
		if tb, ok := cb.ContextElements.Elements[0].(*sl.TextBlockObject); ok && !slices.Contains(kept, tb.Text) {
			lines = append(lines, tb.Text)
		}
	}
	return append(lines, kept...)
}

// parentBlocks is c's parent message with the triage lines and the buttons
// st still offers in place of its copy's, its header saying so when st was
// escalated from Slack (escalatedHeader).
func (t *Triage) parentBlocks(c *click, st triageState, lines []string) []sl.Block {
	var blocks []sl.Block
	for _, b := range c.cb.Message.Blocks.BlockSet {
		if !isTriageBlock(b) {
			blocks = append(blocks, b)
		}
	}
	if st.Escalated {
		blocks = escalatedHeader(blocks)
	}
	blocks = append(blocks, logBlocks(lines)...)
	if ab := actionsBlock(&c.tg.n.cfg, st); ab != nil {
		blocks = append(blocks, ab)
	}
	return fitBlocks(blocks)
}

// parentText is the parent's notification text (the incident when the
// click's copy carries none), as the page it was escalated to when st was
// escalated from Slack.
func (c *click) parentText(st triageState) string {
	text := c.cb.Message.Text
	if text == "" {
		text = c.st.Incident
	}
	if st.Escalated && !pagesAlready(text) {
		text = escalatedTitle(text, escalatedNote, maxText, truncateMrkdwn)
	}
	return text
}

// maxPDSummary is PagerDuty's limit on an event's summary, in runes.
const maxPDSummary = 1024

// escalationSummary is the summary of the PagerDuty incident c's Escalate
// triggers: the parent's title as a page, saying it was escalated from a
// ticket and by whom ("[PAGE] CheckoutErrorsHigh 1 firing (escalated from a
// ticket in Slack by @jdoe)") — not that the alerts' decision changed.
func escalationSummary(c *click) string {
	title := c.st.Incident
	if c.cb.Message.Text != "" {
		title = unescMrkdwn(c.cb.Message.Text)
	}
	if bs := c.cb.Message.Blocks.BlockSet; len(bs) > 0 {
		if h, ok := bs[0].(*sl.HeaderBlock); ok && h.Text != nil && h.Text.Text != "" {
			title = h.Text.Text // plain text, as PagerDuty shows it
		}
	}
	who := c.user
	if name := cmp.Or(c.cb.User.Username, c.cb.User.Name); name != "" {
		who = "@" + name
	}
	return escalatedTitle(title, " (escalated from a ticket in Slack by "+who+")", maxPDSummary, notify.TruncateText)
}

// maxTicketText bounds the ticket's text an escalation's page carries, in
// runes: PagerDuty keeps an event's custom_details to 512 KB in all.
const maxTicketText = 4000

// slackLink is a link of mrkdwn, "<https://…|Runbook>".
var slackLink = regexp.MustCompile(`<(https?://[^|>\s]+)\|([^>]+)>`)

// ticketContext is what c's ticket message says, for the page its Escalate
// triggers: the text of its sections (the decision, the description, the
// reasons and hints, the alerts' lines; mrkdwn unescaped), cut to
// maxTicketText runes, and its links — the message itself first (when the
// click names the workspace), then the runbook, dashboard, Prometheus,
// silence and console links of its context blocks, as the card drew them.
// The triage blocks (the log lines, the buttons) are not the ticket's.
func ticketContext(c *click) (text string, links []notify.Link) {
	if u := permalink(c); notify.WebURL(u) {
		links = append(links, notify.Link{Href: u, Text: "Slack ticket"})
	}
	seen := map[string]bool{}
	var texts []string
	for _, b := range c.cb.Message.Blocks.BlockSet {
		if isTriageBlock(b) {
			continue
		}
		switch b := b.(type) {
		case *sl.SectionBlock:
			if b.Text != nil && b.Text.Text != "" {
				texts = append(texts, unescMrkdwn(b.Text.Text))
			}
		case *sl.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				tb, ok := e.(*sl.TextBlockObject)
				if !ok {
					continue
				}
				for _, m := range slackLink.FindAllStringSubmatch(tb.Text, -1) {
					href := unescMrkdwn(m[1])
					if !seen[href] && notify.WebURL(href) {
						seen[href] = true
						links = append(links, notify.Link{Href: href, Text: unescMrkdwn(m[2])})
					}
				}
			}
		}
	}
	return notify.TruncateText(strings.Join(texts, "\n\n"), maxTicketText), links
}

// currentState merges what the store says was done on the message (by any
// replica, any click) into st, so concurrent actions draw the same buttons,
// and reports whether the incident has resolved (its parent edited so).
func (t *Triage) currentState(ctx context.Context, c *click, st triageState) (triageState, bool) {
	m, err := t.readMessage(ctx, c.st.Incident, c.channel, c.ts)
	if err != nil {
		return st, false
	}
	own := st
	st = m.apply(st, c.b.action != ActionUnsilence)
	// The click's own Acknowledge or Resolve, done, holds even when the
	// store did not take its record and says the message paged again (a
	// review: Acknowledge offered again after it was done).
	switch c.b.action {
	case ActionAck:
		st.Acked = st.Acked || own.Acked
	case ActionResolve:
		st.Resolved = st.Resolved || own.Resolved
	}
	return st, m.resolved
}

// messageState is what the store says was done on a parent message.
type messageState struct {
	// done holds the value of each action's claim on the message once the
	// action is done ("d <user> <extra>"), by action (ack, escalate,
	// resolve, silence, escalationResolvedState).
	done map[string]string
	// resolved: the incident resolved since (resolvedState).
	resolved bool
	// repaged: PagerDuty was paged again since the message was posted
	// (repagedState): its acknowledgement and resolve records were
	// forgotten then, and are all that says whether it is acknowledged or
	// resolved — a click's copy of the message may be older (apply).
	repaged bool
}

// repagedState is the suffix of the key marking a parent message whose
// incident PagerDuty was paged again (triageLink.repaged).
const repagedState = "repaged"

// actionClaimTTL is how long the claim of an action on a message lives
// while the action runs: its work is bounded by timeout, and the margin
// covers recording it. A click whose replica died leaves the claim to
// expire after that.
func actionClaimTTL(timeout time.Duration) time.Duration {
	return 2*timeout + time.Minute
}

// escalatedExtra starts the record of an escalation, followed by the
// receiver it paged (triageTarget.escalationTo).
const escalatedExtra = "escalated "

// messageStates are the states readMessage reads.
var messageStates = []string{ActionAck, ActionEscalate, ActionResolve, ActionSilence, escalationResolvedState}

// readMessage reads, in one round trip, what was done on the parent message
// (channel, ts) of incident.
func (t *Triage) readMessage(ctx context.Context, incident, channel, ts string) (messageState, error) {
	prefix := t.messageKey(incident, channel, ts) + ":"
	keys := make([]string, 0, len(messageStates)+1)
	for _, k := range messageStates {
		keys = append(keys, prefix+k)
	}
	keys = append(keys, prefix+resolvedState, prefix+repagedState)
	vals, found, err := t.o.Store.Get(ctx, keys)
	if err != nil {
		return messageState{}, err
	}
	m := messageState{done: map[string]string{}, resolved: found[len(messageStates)], repaged: found[len(messageStates)+1]}
	for i, k := range messageStates {
		if _, _, ok := doneBy(vals[i]); found[i] && ok {
			m.done[k] = vals[i]
		}
	}
	return m, nil
}

// doneBy reads the value of an action's claim on a message: who took the
// action and what the claim keeps (extra: the silence ids), when it is
// done ("d <user> <extra>"); a claim still held by a click in progress
// holds its token.
func doneBy(v string) (user, extra string, ok bool) {
	f := strings.Fields(v)
	if len(f) < 2 || f[0] != "d" {
		return "", "", false
	}
	return f[1], strings.Join(f[2:], " "), true
}

// by reports who took action on the message and what its claim keeps
// (extra: the silence ids), when the action is done.
func (m messageState) by(action string) (user, extra string, ok bool) {
	return doneBy(m.done[action])
}

// apply merges m into st: acknowledged, escalated (paged), resolved, and
// with silence its silence. On a message paged again (m.repaged) the store
// alone says whether it is acknowledged and resolved: st may come from a
// click's copy of the message drawn before the page, whose Resolve would
// hide Acknowledge and Resolve from the new page for good (an audit).
func (m messageState) apply(st triageState, silence bool) triageState {
	if m.repaged {
		st.Acked, st.Resolved = false, false
	}
	if _, _, ok := m.by(ActionAck); ok {
		st.Acked = true
	}
	if _, _, ok := m.by(ActionEscalate); ok {
		st.Paged, st.Escalated = true, true
	}
	if _, _, ok := m.by(ActionResolve); ok {
		st.Resolved = true
	}
	if _, id, ok := m.by(ActionSilence); ok && silence {
		st.Silence = id
	}
	return st
}

// storedLines are the triage lines kept for a parent message (the set at
// key), oldest first.
func (t *Triage) storedLines(ctx context.Context, key string) ([]string, error) {
	members, err := t.o.Store.Members(ctx, key)
	if err != nil {
		return nil, err
	}
	slices.Sort(members)
	var lines []string
	for _, m := range members {
		if _, l, ok := strings.Cut(m, " "); ok {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// addLine adds line, stamped with the time, to the triage lines of the
// parent message p of incident.
func (t *Triage) addLine(ctx context.Context, incident string, p parentRef, line string) error {
	now := t.o.Now()
	member := fmt.Sprintf("%020d %s · %s", now.UnixNano(), line, now.UTC().Format("2006-01-02 15:04 MST"))
	return t.o.Store.AddMembers(ctx, t.messageKey(incident, p.channel, p.ts)+":"+logState, messageStateTTL, member)
}

// triageLink ties a Notifier to the triage of its parent messages
// (Triage.Add): when the dispatch core has the notifier resolve, open
// again, escalate or page again an incident, the notifier reads and
// updates what was done on the incident's parent message.
type triageLink struct {
	t  *Triage
	tg *triageTarget
}

// replacedState is the suffix of the key on a parent message that a new
// parent replaces (its message deleted, its channel archived): "pending"
// while a replica posts the new parent, then the new parent's Ref.
const replacedState = "replaced"

// replacementPending starts replacedState's value while the new parent is
// being posted, followed by the posting attempt's own token: a claim the
// store reads as won only by the attempt that holds that value (a review:
// one value for every replica let each win while a post was in flight).
const replacementPending = "pending "

// replacesState is the suffix of the key on a new parent naming the parent
// it replaced ("channel ts"): a click on the old one (Escalate) is read
// from there when the incident resolves.
const replacesState = "replaces"

// claimReplacement claims the replacement of incident's parent old: won,
// this replica posts the new parent; lost, next is the parent another
// replica posted ("" while it is still posting it). Two replicas replacing
// one parent posted two, one left drawn firing for good (a review). The
// claim lives twice the Slack entry's timeout (at least 10 seconds): a
// winner that died mid-post keeps the incident's updates failing (for
// Alertmanager's retry) no longer than that.
func (l *triageLink) claimReplacement(ctx context.Context, incident string, old parentRef) (won bool, next string, err error) {
	key := l.t.messageKey(incident, old.channel, old.ts) + ":" + replacedState
	ttl := max(2*time.Duration(l.tg.n.cfg.Timeout), 10*time.Second)
	ok, err := l.t.o.Store.SetNX(ctx, []store.Entry{{Key: key, Value: replacementPending + dedup.NewToken(), TTL: ttl}})
	if err != nil || len(ok) != 1 {
		return false, "", fmt.Errorf("claim the replacement of the incident's Slack parent: %w", err)
	}
	if ok[0] {
		return true, "", nil
	}
	vals, found, err := l.t.o.Store.Get(ctx, []string{key})
	if err != nil {
		return false, "", err
	}
	if !found[0] || strings.HasPrefix(vals[0], replacementPending) {
		return false, "", nil
	}
	return false, vals[0], nil
}

// replaced records that parent next replaced old (claimReplacement) and
// carries old's triage — what was done on it (acknowledged, escalated:
// an escalation's resolve reads it there), its lines — to next. Failures
// are logged.
func (l *triageLink) replaced(ctx context.Context, incident string, old, next parentRef) {
	t := l.t
	from, to := t.messageKey(incident, old.channel, old.ts)+":", t.messageKey(incident, next.channel, next.ts)+":"
	keys := make([]string, 0, len(messageStates))
	for _, k := range messageStates {
		keys = append(keys, from+k)
	}
	entries := []store.Entry{{Key: from + replacedState, Value: next.String(), TTL: messageStateTTL},
		{Key: to + replacesState, Value: old.channel + " " + old.ts, TTL: messageStateTTL}}
	vals, found, err := t.o.Store.Get(ctx, keys)
	if err == nil {
		for i, k := range messageStates {
			// Done actions only: a click in progress on the old parent
			// would lock its button on the new one.
			if _, _, done := doneBy(vals[i]); found[i] && done {
				entries = append(entries, store.Entry{Key: to + k, Value: vals[i], TTL: messageStateTTL})
			}
		}
		err = t.o.Store.Set(ctx, entries)
	}
	if err == nil {
		var lines []string
		if lines, err = t.o.Store.Members(ctx, from+logState); err == nil && len(lines) > 0 {
			err = t.o.Store.AddMembers(ctx, to+logState, messageStateTTL, lines...)
		}
	}
	if err != nil {
		t.o.Logger.Warn("carry the replaced Slack parent's triage to the new one (an escalation's resolve, its lines may be missed)", "incident", incident, "err", err)
	}
}

// escalatedBefore follows the parents p replaced (replacesState, at most
// three) to the first one escalated: that parent, what was done on it, and
// true; else false.
func (t *Triage) escalatedBefore(ctx context.Context, incident string, p parentRef) (parentRef, messageState, bool) {
	for range 3 {
		vals, found, err := t.o.Store.Get(ctx, []string{t.messageKey(incident, p.channel, p.ts) + ":" + replacesState})
		if err != nil || !found[0] {
			return p, messageState{}, false
		}
		old, ok := parseParent(vals[0])
		if !ok {
			return p, messageState{}, false
		}
		m, err := t.readMessage(ctx, incident, old.channel, old.ts)
		if err != nil {
			return p, messageState{}, false
		}
		if _, _, escalated := m.by(ActionEscalate); escalated {
			return old, m, true
		}
		p = old
	}
	return p, messageState{}, false
}

// escalationResolvedState is the suffix of the key that marks a parent
// message whose escalation (the Escalate button) was resolved in PagerDuty
// when its alerts resolved: a retry of that notification sends it no more.
const escalationResolvedState = "escalation-resolved"

// resolveEscalation resolves in PagerDuty an incident escalated from its
// parent message p (the Escalate button: a trigger through the escalation
// pager) that no has resolved. The dispatch core sends a resolve only to
// the integrations the firing reached — here this Slack channel, not the
// PagerDuty the button triggered —, so without this PagerDuty would page
// on-call for it forever, and the resolved parent offers no button left to
// resolve it. Nothing is sent when the message was not escalated, or
// someone resolved it there by hand (Resolve). It runs before the
// notification is posted.
//
// A failure a retry may fix (PagerDuty unreachable) is returned,
// retryable (a store that cannot be read is logged instead: fail open, as
// the rest of the notification is sent): it fails this Slack notification, the webhook is
// answered 5xx and Alertmanager's retry sends the resolve again — the
// dispatch core releases the claims of a failed notification and aborts
// the incident's closing, so the retry is the same resolve. Returning it
// before anything is posted keeps that retry from posting the thread reply
// and editing the parent twice; and a resolve is cheaper to retry than a
// page left open, while a retry in the background would end with the
// replica that holds it. A failure no retry fixes (PagerDuty refusing the
// event, no PagerDuty to send it to) is logged, counted, and said on the
// parent; the notification goes on.
//
// The resolve goes out when the incident resolves at this integration,
// unless the dispatch core holds a page of the incident open at the
// escalation's PagerDuty integration (another team's alerts routed there:
// one dedup_key), which resolves with its own alerts. Limit: a page sent
// to the same PagerDuty service through another integration sharing its
// routing key (check-config warns of shared keys) is resolved with it.
func (l *triageLink) resolveEscalation(ctx context.Context, no *alert.Notification, p parentRef) error {
	m, err := l.t.readMessage(ctx, no.Incident, p.channel, p.ts)
	return l.resolveEscalationOf(ctx, no, p, m, err)
}

// resolveEscalationOf is resolveEscalation with what was done on p read
// (m, or the read's err).
func (l *triageLink) resolveEscalationOf(ctx context.Context, no *alert.Notification, p parentRef, m messageState, err error) error {
	t, tg := l.t, l.tg
	if err != nil {
		// The store is down: the resolve goes out as every other
		// notification does then (fail open). Failing it would hold every
		// Slack resolve of a triage channel — and resend the webhook's
		// other notifications, undeduplicated — for the rare incident
		// escalated from Slack, which is logged and counted instead.
		t.o.Metrics.countEscalationResolve(OutcomeFailed)
		t.o.Logger.Error("could not read whether this incident was escalated from Slack (store down): if it was, resolve its page in PagerDuty by hand",
			"incident", no.Incident, "receiver", no.Receiver, "channel", p.channel, "message_ts", p.ts, "err", err)
		return nil
	}
	by, extra, escalated := m.by(ActionEscalate)
	if !escalated {
		// A parent replaced since (deleted, its channel archived) may have
		// been escalated by a click after the replacement copied its state
		// (a review: that page was never resolved).
		if p, m, escalated = t.escalatedBefore(ctx, no.Incident, p); escalated {
			by, extra, _ = m.by(ActionEscalate)
		}
	}
	_, _, handResolved := m.by(ActionResolve)
	_, _, sent := m.by(escalationResolvedState)
	if !escalated || handResolved || sent {
		return nil
	}
	log := t.o.Logger.With("incident", no.Incident, "receiver", no.Receiver, "integration", no.Integration, "escalated_by", by, "channel", p.channel, "message_ts", p.ts)
	done, refused, err := t.resolveEscalated(ctx, no.Incident, p, tg, extra, log)
	if errors.Is(refused, errLeftOpen) {
		if err := t.addLine(ctx, no.Incident, p, leftOpenLine); err != nil {
			log.Warn("keep the resolve's line on the parent message", "err", err)
		}
		return nil
	}
	if err != nil {
		log.Error("resolve in PagerDuty of an incident escalated from Slack failed: the Slack notification fails with it, for Alertmanager to retry", "err", err)
		return fmt.Errorf("resolve in PagerDuty the incident escalated from Slack by %s: %w", by, err)
	}
	line := "Resolved in PagerDuty: the alerts resolved"
	if !done {
		line = fmt.Sprintf("The alerts resolved, but resolving the escalated page in PagerDuty failed (%s): resolve it there by hand", esc(errText(refused)))
	}
	if err := t.addLine(ctx, no.Incident, p, line); err != nil {
		log.Warn("keep the resolve's line on the parent message", "err", err)
	}
	return nil
}

// resolveEscalated sends the resolve of incident's escalation from parent
// p, recorded with extra, where the escalation paged — even when a reload
// has pointed escalate_to elsewhere since; escalations recorded before the
// receiver was (extra "escalated") go to the current one — and counts it.
// Done, it marks p's escalation resolved (a retry sends it no more);
// refused (PagerDuty refusing the event, no PagerDuty to send it to), it
// logs and returns the refusal; a failure a retry may fix is returned as
// err, nothing recorded.
func (t *Triage) resolveEscalated(ctx context.Context, incident string, p parentRef, tg *triageTarget, extra string, log *slog.Logger) (done bool, refused, err error) {
	pager, to := t.escalationPager(tg, extra)
	mark := store.Entry{Key: t.messageKey(incident, p.channel, p.ts) + ":" + escalationResolvedState, Value: "d alertrouter", TTL: messageStateTTL}
	if pager != nil && t.pageOpenAt(ctx, incident, to, log) {
		// A page of the same incident routed to that PagerDuty (another
		// team's alerts, still firing) shares the escalation's dedup_key:
		// resolving the escalation would resolve that page (a review).
		// Its own alerts' resolve closes it.
		log.Info("the escalation's resolve is not sent: the router holds a page of the incident open at the same PagerDuty integration (alerts routed there still fire), which resolves with them", "escalated_to", to)
		if err := t.o.Store.Set(ctx, []store.Entry{mark}); err != nil {
			log.Warn("record the escalation's resolve as not needed (a retry of this notification reads the page again)", "err", err)
		}
		return false, errLeftOpen, nil
	}
	switch {
	case pager == nil && to == tg.escalationTo:
		err = alert.Permanent(errors.New("no PagerDuty integration to send it to (escalate_to changed?)"))
	case pager == nil:
		err = alert.Permanent(fmt.Errorf("escalated to receiver %q's PagerDuty, which the configuration no longer has (a reload since)", to))
	default:
		err = pager.Resolve(ctx, incident)
	}
	if alert.Retryable(err) {
		t.o.Metrics.countEscalationResolve(OutcomeFailed)
		return false, nil, err
	}
	if err != nil {
		t.o.Metrics.countEscalationResolve(OutcomeRefused)
		log.Error("resolve in PagerDuty of an incident escalated from Slack refused: resolve it there by hand", "err", err)
		return false, err, nil
	}
	t.o.Metrics.countEscalationResolve(OutcomeDone)
	log.Info("incident escalated from Slack resolved in PagerDuty: its alerts resolved")
	if err := t.o.Store.Set(ctx, []store.Entry{mark}); err != nil {
		log.Warn("record the escalation's resolve (a retry of this notification sends it again)", "err", err)
	}
	return true, nil, nil
}

// pageOpenAt reports whether the dispatch core holds a page of incident
// open at receiver's PagerDuty integration (PagesAt). A store that cannot
// be read says no: the escalation is resolved, as before.
func (t *Triage) pageOpenAt(ctx context.Context, incident, receiver string, log *slog.Logger) bool {
	at := t.pagerAt[receiver]
	if at == "" {
		return false
	}
	states, err := t.o.Store.IncidentStates(ctx, []string{store.IncidentKey(t.o.KeyPrefix, incident, at)})
	if err != nil || len(states) != 1 {
		log.Warn("read whether a page of the incident is open at the escalation's PagerDuty; resolving the escalation", "err", err)
		return false
	}
	return states[0] != ""
}

// errLeftOpen is resolveEscalated's refusal to resolve an escalation that
// shares its PagerDuty incident with a page the router holds open there.
var errLeftOpen = errors.New("a page of the incident is open at the same PagerDuty integration")

// leftOpenLine is the parent's line for an escalation errLeftOpen kept.
const leftOpenLine = "The alerts resolved; the escalated page stays open in PagerDuty with the incident's other alerts paged there, and resolves with them"

// repaged records on the parent message p that the dispatch core paged
// PagerDuty again for no's incident (alert.Notification.Repaged): someone
// resolved it there by hand (Resolve) while its alerts still fired, and a
// new alert joined it. The message's acknowledgement and resolve are
// forgotten — they were the closed PagerDuty incident's —, so the parent is
// drawn with Acknowledge and Resolve again; a line says what happened. It
// returns who had resolved it ("by <@U…>", "by hand" when the store does
// not say). Store failures are logged: the thread reply still says it.
func (l *triageLink) repaged(ctx context.Context, no *alert.Notification, p parentRef) string {
	t := l.t
	log := t.o.Logger.With("incident", no.Incident, "receiver", no.Receiver, "integration", no.Integration, "channel", p.channel, "message_ts", p.ts)
	who := "by hand"
	m, err := t.readMessage(ctx, no.Incident, p.channel, p.ts)
	if err != nil {
		log.Warn("read the parent message's triage state (its Acknowledge and Resolve may stay hidden)", "err", err)
		return who
	}
	if user, _, ok := m.by(ActionResolve); ok {
		who = "by <@" + user + ">"
	}
	// Marked first: a click reading the message from here on takes its
	// acknowledgement and resolve from the store, not from its copy.
	if err := t.o.Store.Set(ctx, []store.Entry{{Key: t.messageKey(no.Incident, p.channel, p.ts) + ":" + repagedState, Value: dedup.Done, TTL: messageStateTTL}}); err != nil {
		log.Warn("mark the parent message paged again (a click on an older copy of it may hide Acknowledge and Resolve)", "err", err)
	}
	var clear []store.Entry
	for _, a := range []string{ActionAck, ActionResolve} {
		if v, ok := m.done[a]; ok {
			clear = append(clear, store.Entry{Key: t.messageKey(no.Incident, p.channel, p.ts) + ":" + a, Value: v})
		}
	}
	if len(clear) > 0 {
		if err := t.o.Store.DeleteIfEqual(ctx, clear); err != nil {
			log.Warn("forget the message's acknowledgement and resolve (its Acknowledge and Resolve may stay hidden)", "err", err)
		}
	}
	line := "Paged again in PagerDuty: a new alert joined the incident resolved there " + who + " while its alerts still fired"
	if no.Opening {
		line = "Paged again in PagerDuty: an alert of the incident resolved there " + who + " fired again, its resolve lost (an Alertmanager restarted, or the alert cleared while silenced)"
	}
	if err := t.addLine(ctx, no.Incident, p, line); err != nil {
		log.Warn("keep the page's line on the parent message", "err", err)
	}
	log.Info("incident paged again in PagerDuty after a hand resolve: Acknowledge and Resolve offered again")
	return who
}

// silencedNote is what an incident's resolve says of a silence made from
// its parent, m what was done on it, still in force (its record lives as
// long as the silence, Unsilence deletes it): the parent drawn resolved
// offers no Unsilence, and the silence mutes the alerts' next firing until
// it ends (an audit: the resolve said nothing of it). It is kept — the
// user silenced a firing incident knowingly (a Silence racing the resolve
// is expired: undoRacedSilence) —; "" when there is none.
func (l *triageLink) silencedNote(ctx context.Context, m messageState) string {
	user, extra, ok := m.by(ActionSilence)
	if !ok || extra == "" {
		return ""
	}
	// Only those Alertmanager does not say ended (expired there by hand,
	// or lost): the record lives the silence's planned length (a review).
	ids := silenceIDs(extra)
	if r, ok := l.t.o.Silences.(silenceReader); ok {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		ids = slices.DeleteFunc(ids, func(id string) bool { return silenceEnded(rctx, r, id) })
	}
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("Still silenced: the silence <@%s> made from this message (`%s`) mutes the alerts' next firing until it ends — expire it in Alertmanager to be told of it.", user, strings.Join(ids, "`, `"))
}

// view returns the triage lines of no's parent message p and the state its
// buttons are drawn from: st merged with what was done on the message,
// except on a resolve (drawn without buttons) and an opening (the incident
// firing again: drawn afresh, but for an escalation still open, reopened).
// Store failures are logged: the parent is drawn from st, without lines.
func (l *triageLink) view(ctx context.Context, no *alert.Notification, p parentRef, st triageState) ([]string, triageState) {
	t := l.t
	lines, err := t.storedLines(ctx, t.messageKey(no.Incident, p.channel, p.ts)+":"+logState)
	if err != nil {
		t.o.Logger.Warn("read the parent message's triage lines (the edit draws none)", "incident", no.Incident, "err", err)
	}
	if no.IncidentResolved {
		return lines, st
	}
	var m messageState
	if no.Opening {
		m, err = l.reopened(ctx, no, p)
	} else {
		m, err = t.readMessage(ctx, no.Incident, p.channel, p.ts)
	}
	if err != nil {
		t.o.Logger.Warn("read the parent message's triage state (the edit draws the buttons of a fresh message)", "incident", no.Incident, "err", err)
		return lines, st
	}
	return lines, m.apply(st, !no.Opening)
}

// reopened forgets, when no's incident fires again under its parent
// message p (an opening: the earlier firing resolved, or its resolve never
// reached the router), what was done on the message for the earlier
// firing — its acknowledgement, resolve, escalation and the escalation's
// resolve —, so that the new firing's buttons act again: their claims on
// the message answered "Already done" for the week they are kept. An
// escalation still open (escalated, and resolved neither by hand nor with
// its alerts) is kept, with its acknowledgement: PagerDuty still holds its
// page, which is this firing's too, and the escalation's resolve must
// still be sent when the alerts resolve (resolveEscalation). It returns
// what stays done on the message (its silence included, which the opening
// does not draw).
func (l *triageLink) reopened(ctx context.Context, no *alert.Notification, p parentRef) (messageState, error) {
	t := l.t
	m, err := t.readMessage(ctx, no.Incident, p.channel, p.ts)
	if err != nil {
		return m, err
	}
	_, _, escalated := m.by(ActionEscalate)
	_, _, handResolved := m.by(ActionResolve)
	_, _, resolvedWithAlerts := m.by(escalationResolvedState)
	if escalated && !handResolved && !resolvedWithAlerts {
		t.o.Logger.Info("incident firing again under its parent while its escalation is still open in PagerDuty: the escalation is kept (resolved with the alerts)", "incident", no.Incident, "channel", p.channel, "message_ts", p.ts)
		return m, nil
	}
	var clear []store.Entry
	for _, a := range []string{ActionAck, ActionResolve, ActionEscalate, escalationResolvedState} {
		if v, ok := m.done[a]; ok {
			clear = append(clear, store.Entry{Key: t.messageKey(no.Incident, p.channel, p.ts) + ":" + a, Value: v})
			delete(m.done, a)
		}
	}
	if len(clear) > 0 {
		// Only the records read: a click taking an action meanwhile holds
		// a claim of its own.
		if err := t.o.Store.DeleteIfEqual(ctx, clear); err != nil {
			t.o.Logger.Warn("forget what was done on the parent message for the incident's earlier firing (its buttons may answer \"Already done\")", "incident", no.Incident, "err", err)
		}
	}
	return m, nil
}

// ephemeral answers the clicking user only, through the response_url, on
// its own short deadline: the click's may be spent by an action that
// outlived it, and the user must still hear what became of the click. It
// posts with the client of the Slack app whose signing secret the request
// verified with (answerClient).
func (t *Triage) ephemeral(ctx context.Context, secret string, cb *sl.InteractionCallback, text string) {
	if cb.ResponseURL == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), graceTimeout)
	defer cancel()
	msg := &sl.WebhookMessage{Text: text, ResponseType: sl.ResponseTypeEphemeral, ReplaceOriginal: false}
	if err := sl.PostWebhookCustomHTTPContext(ctx, cb.ResponseURL, t.answerClient(secret), msg); err != nil {
		t.o.Logger.Warn("answer the user through response_url", "err", err)
	}
}

// holds reports whether labels has every label of want, with its value.
func holds(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// createdBy names the Slack user in a silence: "name (U…) via Slack".
func createdBy(u sl.User) string {
	name := u.Username
	if name == "" {
		name = u.Name
	}
	if name == "" {
		return u.ID + " via Slack"
	}
	return name + " (" + u.ID + ") via Slack"
}

// permalink links to the parent message in the team's workspace.
func permalink(c *click) string {
	domain := c.cb.Team.Domain
	if domain == "" {
		return "channel " + c.channel + ", message " + c.ts
	}
	return "https://" + domain + ".slack.com/archives/" + c.channel + "/p" + strings.ReplaceAll(c.ts, ".", "")
}

// pageRef is the Ref the dispatch core keeps with incident's page at
// pagedAt ("receiver/integration"): the PagerDuty key its trigger went to
// ("" when unknown: the store reads none, or the page was Slack's
// escalation).
func (t *Triage) pageRef(ctx context.Context, incident, pagedAt string) string {
	rr, ok := t.o.Store.(store.IncidentRefReader)
	if !ok || pagedAt == "" {
		return ""
	}
	ref, err := rr.IncidentRef(ctx, store.IncidentKey(t.o.KeyPrefix, incident, pagedAt))
	if err != nil {
		t.o.Logger.Warn("read the page's PagerDuty key; acting at the configured one", "incident", incident, "err", err)
		return ""
	}
	return ref
}

// acknowledge acknowledges incident through pager, at the key its
// trigger went to (RefPager) — a reload that rotated the routing key sent
// the click to the new key, where PagerDuty dropped it, and the page went
// on while Slack said it was acknowledged (an audit).
func (t *Triage) acknowledge(ctx context.Context, pager Pager, incident, pagedAt string) error {
	if rp, ok := pager.(RefPager); ok {
		return rp.AcknowledgeAt(ctx, incident, t.pageRef(ctx, incident, pagedAt))
	}
	return pager.Acknowledge(ctx, incident)
}

// resolve resolves incident through pager, at the key its trigger went
// to (acknowledge).
func (t *Triage) resolve(ctx context.Context, pager Pager, incident, pagedAt string) error {
	if rp, ok := pager.(RefPager); ok {
		return rp.ResolveAt(ctx, incident, t.pageRef(ctx, incident, pagedAt))
	}
	return pager.Resolve(ctx, incident)
}
