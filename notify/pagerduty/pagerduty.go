// Package pagerduty delivers alertrouter notifications to PagerDuty's Events
// API v2 through go-pagerduty: one trigger per open incident (dedup_key =
// incident key), a resolve when the incident resolves, events kept within
// PagerDuty's limits, and a 400 answered by one retry as a minimal event.
package pagerduty

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	amnotify "github.com/prometheus/alertmanager/notify"

	pd "github.com/PagerDuty/go-pagerduty"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/internal/redact"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Integration is the integration label of the metrics.
const Integration = "pagerduty"

// PagerDuty's limits.
const (
	maxSummary  = 1024
	maxDedupKey = 255
	maxEvent    = 512000 // bytes, as Alertmanager (maxEventSize) and Grafana read PagerDuty's "512 KB"
)

// Caps that keep an event readable.
const (
	maxAlertDetails = 20
	maxLabels       = 30
	maxLinks        = 10
	maxLinkHref     = 2048
	// maxAlertText bounds, in runes, each alert's summary and description
	// in custom_details.alerts.
	maxAlertText = 1024
)

// Notifier sends notifications to one PagerDuty service. Safe for
// concurrent use.
type Notifier struct {
	name       string
	cfg        Config
	routingKey string
	// ref is keyRef of the events URL and routing key: the Ref an
	// incident triggered here keeps.
	ref    string
	client *pd.Client
	// httpClient is client's (CloseIdleConnections).
	httpClient *http.Client
	deps       notify.Deps
	metrics    *notify.IntegrationMetrics
	logger     *slog.Logger
	// severityLogs throttles the warning of a templated severity across
	// the decision's urgency (buildTrigger).
	severityLogs logthrottle.Throttle
	// rejectedLogs throttles the warning of an event PagerDuty rejected,
	// sent again minimal (each of Alertmanager's retries logged it).
	rejectedLogs logthrottle.Throttle
}

var _ alert.Notifier = (*Notifier)(nil)

// New builds the notifier of receiver name from cfg. It reads the routing
// key file and checks the templates parse. Errors name the entry's YAML key
// (e.g. "summary: …"); the caller prefixes the entry's path.
func New(cfg *Config, name string, deps notify.Deps) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps = deps.WithDefaults()
	// Keys left unset whose Alertmanager default the template files
	// redefine render that default, as in Alertmanager.
	cfg = notify.FollowRedefined(deps.Templates, deps.Logger.With("integration", Integration, "receiver", name), cfg, (*Config).alertmanagerDefaults)
	key, err := notify.ReadSecret(cfg.RoutingKey, cfg.RoutingKeyFile)
	if err != nil {
		return nil, fmt.Errorf("routing_key_file: %w", err)
	}
	if notify.IsTemplate(key) {
		// Alertmanager renders the file's content too.
		return nil, errors.New("routing_key_file: holds " + TemplatedRoutingKey)
	}
	for field, text := range map[string]string{"severity": cfg.Severity, "summary": cfg.Summary, "source": cfg.Source, "client": cfg.Client, "client_url": cfg.ClientURL} {
		if err := deps.Templates.Check(text); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
	}
	for field, text := range cfg.Compat.templates() {
		if err := deps.Templates.Check(text); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
	}
	for k, text := range cfg.CustomDetails {
		if err := deps.Templates.Check(text); err != nil {
			return nil, fmt.Errorf("custom_details.%s: %w", k, err)
		}
	}
	deps.Templates = deps.Templates.WithMetrics(deps.Metrics)
	deps.Metrics.PrecreateRenderFailures(name, renderedFields(cfg)...)
	base, _ := endpointBase(cfg.URL) // checked by Validate
	httpClient, err := notify.HTTPClient(cfg.HTTPConfig, "pagerduty", time.Duration(cfg.Timeout))
	if err != nil {
		return nil, err
	}
	httpClient.Transport = &capturingTransport{base: httpClient.Transport}
	client := pd.NewClient("", pd.WithV2EventsAPIEndpoint(base))
	client.HTTPClient = httpClient
	n := &Notifier{
		name:       name,
		cfg:        *cfg,
		routingKey: key,
		ref:        keyRef(cfg.URL, key),
		client:     client,
		httpClient: httpClient,
		deps:       deps,
		metrics:    deps.Metrics.Integration(name, Integration),
		logger:     deps.Logger.With("integration", Integration, "receiver", name),
	}
	keyring.Store(n.ref, n)
	return n, nil
}

// CloseIdleConnections closes the idle keep-alive connections of n's
// client. A reload replaces every notifier: the old ones' connections
// would otherwise stay open (two goroutines and their buffers each) until
// the transport's idle timeout, hundreds per reload with hundreds of
// receivers (an audit). A later send of n dials again.
func (n *Notifier) CloseIdleConnections() { n.httpClient.CloseIdleConnections() }

// keyRef is the reference an incident keeps of the PagerDuty endpoint its
// trigger went to (alert.Notification.Ref, which the dispatch core keeps
// with the incident's state at the integration): a digest of the events
// URL and the routing key, never the key itself.
func keyRef(url, key string) string {
	sum := sha256.Sum256([]byte(url + "\x00" + key))
	return refPrefix + hex.EncodeToString(sum[:8])
}

const refPrefix = "pd:"

// keyring holds every notifier this process built, by its ref (keyRef):
// after a reload changed an integration's routing key or URL (a rotated
// routing_key_file, a team moved to another PagerDuty service), an
// incident triggered under the old one keeps receiving its retriggers,
// reminders and resolve there — PagerDuty opens a separate incident for a
// dedup_key sent to another integration, and a resolve sent to the new
// key left the old incident open, paging on (an audit). Entries live as
// long as the process: one per routing key and URL it was configured with.
var keyring sync.Map

// RoutingKeyChanged reports whether next sends what was, under prev, sent
// to another PagerDuty endpoint (its routing key or events URL changed):
// the reload's warning.
func RoutingKeyChanged(prev, next *Notifier) bool { return prev.ref != next.ref }

// target is the notifier holding the endpoint of no's incident: n, or the
// one its Ref names when a reload changed the key since the incident was
// triggered. A Ref this process never knew (it started after the change,
// or another replica triggered under a key it was never given) leaves n,
// and says so: the incident opened under that key is not reached.
func (n *Notifier) target(no *alert.Notification, action string) *Notifier {
	return n.targetOf(no.Incident, no.Ref, action)
}

// targetOf is target for incident whose Ref is ref, sending action.
func (n *Notifier) targetOf(incident, ref, action string) *Notifier {
	if ref == "" || ref == n.ref || !strings.HasPrefix(ref, refPrefix) {
		return n
	}
	if t, ok := keyring.Load(ref); ok {
		return t.(*Notifier)
	}
	n.logger.Warn("the incident was triggered through a PagerDuty routing key or events URL this router does not hold (changed before this process started, or on another replica only): sending to the configured one, where PagerDuty keeps a separate incident; resolve the old incident in PagerDuty by hand",
		"incident", incident, "event_action", action)
	return n
}

// renderedFields are the fields of cfg whose renders
// alertrouter_template_render_failures_total counts: the summary (the
// built-in one when unset) and every template the config sets.
func renderedFields(cfg *Config) []string {
	fields := []string{"summary"}
	for field, text := range map[string]string{"severity": cfg.Severity, "source": cfg.Source, "client_url": cfg.ClientURL,
		"class": cfg.Class, "component": cfg.Component, "group": cfg.Group} {
		if text != "" {
			fields = append(fields, field)
		}
	}
	if notify.IsTemplate(cfg.Client) {
		fields = append(fields, "client")
	}
	for k := range cfg.Details {
		fields = append(fields, "details."+k)
	}
	for k := range cfg.CustomDetails {
		fields = append(fields, "custom_details."+k)
	}
	if len(cfg.Links) > 0 {
		fields = append(fields, "links.href", "links.text")
	}
	if len(cfg.Images) > 0 {
		fields = append(fields, "images.src", "images.alt", "images.href")
	}
	return fields
}

// Notify triggers the incident of n when n opens it, resolves it when n
// closes it, and sends nothing otherwise: PagerDuty tracks the incident,
// not its alerts, so later members of an open incident and resolves of
// some of its alerts are folded into it (the dispatch core elects exactly
// one opener per incident across replicas). A reminder (alerts still
// firing after dedup.repeat_interval) triggers again with the same
// dedup_key, as Alertmanager re-sends at its repeat_interval: PagerDuty
// folds it into the incident while it is open, and opens a new one when
// the old was resolved outside the router (in PagerDuty, by its
// auto-resolve) — otherwise an incident still firing would never page
// again. For the same reason the dispatch core sends an update that brings
// new alerts as an opening once per incidents.retrigger_interval
// (routing/retrigger.go). Errors are retryable unless alert.Permanent.
func (n *Notifier) Notify(ctx context.Context, no *alert.Notification) error {
	start := time.Now()
	defer n.metrics.ObserveSince(start)
	var err error
	switch {
	case no.IncidentResolved:
		t := n.target(no, "resolve")
		err = t.sendWithFallback(ctx, no, &pd.V2Event{RoutingKey: t.routingKey, Action: "resolve", DedupKey: DedupKey(no.Incident)}, nil)
	case no.Opening && no.Kind != alert.KindResolved, no.Kind == alert.KindReminder:
		full, minimal := n.buildTrigger(no)
		t := n.target(no, "trigger")
		full.RoutingKey, minimal.RoutingKey = t.routingKey, t.routingKey
		if err = t.sendWithFallback(ctx, no, full, minimal); err == nil {
			// The dispatch core keeps the endpoint the incident is
			// triggered at with its state.
			no.Ref = t.ref
		}
	default:
		n.metrics.Outcome(notify.OutcomeDeduplicated)
		return nil
	}
	if err != nil {
		n.metrics.Outcome(notify.OutcomeFailure)
		return fmt.Errorf("pagerduty receiver %q, incident %q: %w", n.name, no.Incident, err)
	}
	n.metrics.Outcome(notify.OutcomeSuccess)
	return nil
}

var _ alert.SilentUpdates = (*Notifier)(nil)

// SilentUpdates reports that Notify sends nothing for an update of an open
// incident (PagerDuty's incident is already triggered), so the dispatch
// core never holds PagerDuty updates in its update window.
func (n *Notifier) SilentUpdates() bool { return true }

// sendWithFallback sends ev with retries. A refused event (400, or 413/422
// from PagerDuty or a proxy before it) is logged with PagerDuty's error
// text and answered by sending minimal once (when given), which counts as
// an attempt of its own (alert.Retried): a dead letter then says the two
// requests PagerDuty received. A second refusal is permanent.
func (n *Notifier) sendWithFallback(ctx context.Context, no *alert.Notification, ev, minimal *pd.V2Event) error {
	var kept time.Time
	return notify.Retry(ctx, n.deps.Retry, func(ctx context.Context) error {
		err := n.send(ctx, ev, &kept, maxPaceWait)
		var bad *badRequestError
		if !errors.As(err, &bad) {
			return err
		}
		if minimal == nil || ev == minimal {
			return alert.Permanent(err)
		}
		n.rejectedLogs.Log(ctx, n.logger, slog.LevelWarn, "rejected:"+bad.text, "PagerDuty rejected the event, retrying once as a minimal event", "incident", no.Incident, "pd_error", bad.text)
		ev = minimal
		alert.Retried(ctx)
		err = n.send(ctx, ev, &kept, maxPaceWait)
		if errors.As(err, &bad) {
			return alert.Permanent(err)
		}
		return err
	})
}

// badRequestError is PagerDuty refusing the event itself (400, 413, 422)
// with the error text it gave.
type badRequestError struct {
	status int
	text   string
	err    error
}

func (e *badRequestError) Error() string {
	return fmt.Sprintf("PagerDuty rejected the event (%d): %s", e.status, e.text)
}
func (e *badRequestError) Unwrap() error { return e.err }

// PagerDuty's Events API takes about 120 events a minute per routing key,
// counted over the last minute, and answers 429 beyond it with no
// Retry-After (its rate-limit reference). Every event retried on its own
// backoff, a storm's webhooks sent hundreds of requests a second to a
// throttled key (an audit: 12,728 refused triggers to deliver 300 pages; with
// refused requests counted against the limit the throttle never cleared and
// 30 pages never went out). Once PagerDuty has throttled a key, its events
// are paced (notify.Pacer): one per eventInterval, for paceFor after the last
// 429; an event whose turn is further than maxPaceWait (or half what is
// left of its webhook) is not sent — its webhook fails retryable, and
// Alertmanager's retry sends it later.
const (
	eventInterval = 500 * time.Millisecond
	paceFor       = time.Minute
	maxPaceWait   = 2 * time.Second
	// clickPaceWait is how long a person's Acknowledge or Resolve (Slack)
	// waits its turn, at most half its time: nothing retries a click that
	// failed (a review: one failed at once behind a storm's events).
	clickPaceWait = 15 * time.Second
)

// pacers paces the events to each events URL and routing key (keyRef).
var pacers = notify.NewPacers(eventInterval, paceFor)

// awaitTurn waits for the event's turn at its routing key (pacers): kept,
// the turn a 429 of its own kept for its retry, or the next within reach
// (either within half of what is left of ctx: notify.Pacer.TurnWithin),
// failing sending nothing when that is further off.
func (n *Notifier) awaitTurn(ctx context.Context, ev *pd.V2Event, kept time.Time, reach time.Duration) error {
	pace := pacers.Of(n.ref)
	wait, limit, ok := pace.TurnWithin(ctx, kept, reach)
	if !ok {
		n.metrics.Failure(notify.ReasonRateLimited)
		return notify.Later(fmt.Errorf("send %s event: PagerDuty throttled this routing key (429): its events are paced (one per %s now, slower while it still refuses, for %s after the last 429), and this one's turn is %s away, past the %s it may wait (at most half of its time left); not sent",
			ev.Action, pace.Interval(), paceFor, wait.Round(time.Millisecond), limit.Round(time.Millisecond)))
	}
	if wait <= 0 {
		return nil
	}
	return notify.Sleep(ctx, wait)
}

// send makes one attempt, in its turn at a throttled routing key
// (awaitTurn: at most reach away), and classifies its failure. kept
// carries, from one attempt of ev to the next, the turn a 429 kept for its
// retry.
func (n *Notifier) send(ctx context.Context, ev *pd.V2Event, kept *time.Time, reach time.Duration) error {
	turn := *kept
	*kept = time.Time{}
	if err := n.awaitTurn(ctx, ev, turn, reach); err != nil {
		return err
	}
	c := &capture{}
	actx, cancel := context.WithTimeout(context.WithValue(ctx, captureKey{}, c), time.Duration(n.cfg.Timeout))
	defer cancel()
	n.metrics.Attempt()
	began := time.Now()
	res, err := n.client.ManageEventWithContext(actx, ev)
	if err == nil && (c.status == http.StatusAccepted || res.Status == "success") {
		return nil
	}
	if err == nil {
		// A 2xx whose JSON is not PagerDuty's answer: see below.
		err = fmt.Errorf("an answer that is not PagerDuty's (status %q)", res.Status)
	}
	if c.status == 0 {
		// No response: go-pagerduty flattens the transport error to text,
		// the capture kept the original.
		cause := err
		if c.err != nil {
			cause = c.err
		}
		// A proxy refusing the tunnel says so, not "Forbidden" as if
		// PagerDuty had.
		cause = notify.ProxyRefused(cause, notify.Proxied(n.cfg.HTTPConfig))
		return n.metrics.NoAnswer(ctx, actx, began, time.Duration(n.cfg.Timeout), "send "+ev.Action+" event", cause)
	}
	if c.status == http.StatusAccepted {
		// PagerDuty accepted the event (202); only its answer's body could
		// not be read (empty, not JSON, cut off). Retrying would page twice.
		n.logger.Warn("PagerDuty accepted the event but its answer was unreadable", "status", c.status, "event_action", ev.Action, "err", err)
		return nil
	}
	if c.status >= 200 && c.status < 300 {
		// PagerDuty answers 202 with its JSON. Another 2xx without it is
		// something between: an egress proxy's or firewall's block page, a
		// login page reached through a redirect (the POST followed as a
		// GET). Taken as delivered, the page was lost and Alertmanager told
		// it was sent: it is retried, and fails the webhook if it lasts.
		n.metrics.Failure(notify.ReasonServerError)
		return fmt.Errorf("send %s event: HTTP %d (%s) from %s is not PagerDuty's answer (202 with its JSON): a proxy, firewall or redirect took the event; not delivered: %w",
			ev.Action, c.status, c.header.Get("Content-Type"), c.url, err)
	}
	n.metrics.Failure(notify.ReasonForStatus(c.status))
	// An answer may echo the request (a proxy's error page): the routing
	// key is a secret.
	// (Hidden before errorText cuts the body: a cut key was left whole
	// enough to read — a review.)
	text := errorText([]byte(redact.Values(string(c.body), ev.RoutingKey)))
	switch {
	case c.status == http.StatusBadRequest || c.status == http.StatusRequestEntityTooLarge || c.status == http.StatusUnprocessableEntity:
		// The event itself is refused (invalid, too large): the minimal
		// event may pass where it did not.
		return &badRequestError{status: c.status, text: text, err: err}
	case c.status == http.StatusTooManyRequests || c.status == http.StatusRequestTimeout || c.status >= 500:
		err = fmt.Errorf("send %s event: HTTP %d: %s", ev.Action, c.status, text)
		d := amnotify.ParseRetryAfter(c.header, time.Now())
		if c.status == http.StatusTooManyRequests {
			// The key is throttled: its events are paced from now on,
			// this one's retry in the turn it keeps.
			*kept = pacers.Of(n.ref).Limit(time.Now(), d)
			d = max(d, time.Until(*kept))
		}
		if d > 0 {
			return notify.RetryAfter(err, d)
		}
		return err
	default:
		return alert.Permanent(fmt.Errorf("send %s event: HTTP %d: %s", ev.Action, c.status, text))
	}
}

// errorText renders PagerDuty's error body ({"status","message","errors"})
// as one line, or the raw body when it has another shape.
func errorText(body []byte) string {
	var e struct {
		Status  string   `json:"status"`
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Message != "" || len(e.Errors) > 0) {
		s := e.Message
		if len(e.Errors) > 0 {
			s += ": " + strings.Join(e.Errors, "; ")
		}
		return s
	}
	s, _ := notify.TruncateInRunes(strings.TrimSpace(string(body)), 512)
	if s == "" {
		return "(empty body)"
	}
	return s
}

// captureKey keys the per-request capture in the request context: the only
// way to hand the response details go-pagerduty drops (the 400 body, the
// Retry-After header, the transport error) back to the one attempt that
// made the request.
type captureKey struct{}

type capture struct {
	status int
	header http.Header
	url    string // the URL that answered (after redirects), redacted
	body   []byte
	err    error
}

// capturingTransport records, for requests carrying a capture, the status,
// Retry-After and body of non-2xx responses (the body is put back for
// go-pagerduty to read) and transport errors.
type capturingTransport struct{ base http.RoundTripper }

// CloseIdleConnections closes the base transport's idle connections
// (http.Client.CloseIdleConnections reaches them through it).
func (t *capturingTransport) CloseIdleConnections() { notify.CloseIdleConnections(t.base) }

func (t *capturingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	c, _ := req.Context().Value(captureKey{}).(*capture)
	if c == nil {
		return resp, err
	}
	if err != nil {
		c.err = err
		return resp, err
	}
	c.status = resp.StatusCode
	c.header = resp.Header
	c.url = req.URL.Redacted()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if rerr != nil {
			c.err = rerr
		}
		c.body = body
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return resp, nil
}

// DedupKey returns the dedup_key of an incident: the key itself, or, past
// PagerDuty's 255 characters, its first 180 characters, "~" and the SHA-256
// of the whole key, so distinct long keys stay distinct.
func DedupKey(incident string) string {
	if len(incident) <= maxDedupKey {
		return incident
	}
	sum := sha256.Sum256([]byte(incident))
	cut := 180
	for cut > 0 && !isRuneStart(incident[cut]) {
		cut--
	}
	return incident[:cut] + "~" + hex.EncodeToString(sum[:])
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
