package slolive

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/internal/redact"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The errors of Lookup that callers may branch on; every error of Lookup
// means "decide from the alert's labels".
var (
	// ErrTimeout: Prometheus did not answer within the timeout.
	ErrTimeout = errors.New("prometheus did not answer within the timeout")
	// ErrUnavailable: Prometheus could not be reached or answered an error.
	ErrUnavailable = errors.New("prometheus unavailable")
	// ErrBreakerOpen: the circuit breaker of that Prometheus is open after
	// repeated failures; it was not queried.
	ErrBreakerOpen = errors.New("prometheus circuit breaker open")
	// ErrNoData: Prometheus answered but has no recording rules for the SLO.
	ErrNoData = errors.New("no live data for the SLO")
)

// LookupError is every error of Lookup: the cause, which wraps one of the
// errors above (test with errors.Is), and Reason, what the notification
// says about the live context it lacks.
type LookupError struct {
	Err error
	// Reason says in a few words why the alert has no live context, for
	// the on-call: "Prometheus timed out", "Prometheus unreachable",
	// "Prometheus answered an error (server_error)", "Prometheus refused the
	// query (bad_data)", "Prometheus refused the credentials (401)", "no
	// data: …". Empty
	// for ErrNotSLO: an alert with nothing to look up lacks nothing.
	Reason string
	// unwell: the failure is Prometheus' own (PrometheusUnwell).
	unwell bool
}

func (e *LookupError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *LookupError) Unwrap() error { return e.Err }

// LiveUnavailable returns Reason: the router shows it in the notification
// of the alert (routing.LiveLookup).
func (e *LookupError) LiveUnavailable() string { return e.Reason }

// PrometheusUnwell reports whether the failure is Prometheus' (timed out,
// unreachable, its breaker open, an error answer, the credentials refused):
// every lookup of the moment would meet it. Those of the alert's own
// lookup — its template lacks a label, no data for its series, the query
// refused, no Prometheus its generatorURL names, not an SLO — are not: the
// next alert's lookup may succeed (routing.LiveUnwell).
func (e *LookupError) PrometheusUnwell() bool { return e.unwell }

// The reasons of LookupError, telling "Prometheus has nothing for this
// SLO" apart from "Prometheus did not answer".
const (
	ReasonNoData   = "no data: Prometheus has no recording rules or samples for this SLO"
	ReasonNoBudget = "no error budget: the SLO's objective is 100 %, so no burn rate can be computed"
	// ReasonNoObjective: Pyrra's burn-rate series are there, its
	// pyrra_objective (written with --generic-rules) is not.
	ReasonNoObjective = "no data: Prometheus has this SLO's burn-rate series but no pyrra_objective (Pyrra writes it with --generic-rules)"
	// ReasonNoFiniteBurn: the burn-rate series are all NaN or infinite.
	ReasonNoFiniteBurn = "no data: every burn-rate series of this SLO is NaN or infinite (no traffic in the window?)"
	ReasonNoLabel      = "the prometheus.expr template does not render for this alert (a label it lacks: read dotted label names with label, as {{quote (label .Labels \"service.name\")}})"
	ReasonTimeout      = "Prometheus timed out"
	ReasonBreakerOpen  = "Prometheus failing: not queried for 30s after repeated failures"
	ReasonUnreachable  = "Prometheus unreachable"
	ReasonNoServer     = "no Prometheus to ask (no generatorURL and no prometheus.url)"
	// ReasonNotFound: the query API answered 404, a URL with a wrong path.
	ReasonNotFound = "check the path of that URL — prometheus.url's, or the generatorURL's with from_generator_url (a route prefix such as /prometheus belongs in it; /graph does not)"
)

// lookupError wraps err, an error of Lookup, with its reason.
func lookupError(err error) error {
	var apiErr *v1.Error
	var credErr *credentialsError
	var notFound *notFoundError
	var redirect *redirectError
	var certErr *tls.CertificateVerificationError
	var reason string
	var unwell bool
	switch {
	case errors.Is(err, ErrNotSLO):
	case errors.Is(err, errNoBudget):
		reason = ReasonNoBudget
	case errors.Is(err, errNoObjective):
		reason = ReasonNoObjective
	case errors.Is(err, errNoFiniteBurn):
		reason = ReasonNoFiniteBurn
	case errors.Is(err, ErrNoData):
		reason = ReasonNoData
	case errors.Is(err, ErrTimeout):
		reason, unwell = ReasonTimeout, true
	case errors.Is(err, ErrBreakerOpen):
		reason, unwell = ReasonBreakerOpen, true
	case errors.Is(err, errAnswerTooLarge):
		// This SLO's query, not Prometheus.
		reason = errAnswerTooLarge.Error()
	case errors.As(err, &redirect):
		// Every query meets it: prometheus.url is not where Prometheus
		// answers (an http→https redirect, a sign-in page).
		reason, unwell = redirect.Error(), true
	case errors.As(err, &certErr):
		// Every query meets it: the CA or name prometheus.http_config
		// trusts is not the certificate's.
		reason, unwell = "Prometheus' TLS certificate is not trusted (prometheus.http_config.tls_config: ca_file, server_name): "+certErr.Err.Error(), true
	case errors.As(err, &notFound):
		// Every query meets it: the URL asked names no query API.
		reason, unwell = "Prometheus answered 404 at "+notFound.url+": "+ReasonNotFound, true
	case errors.As(err, &credErr):
		// Prometheus, or the proxy in front of it, refused the router's
		// credentials: prometheus.http_config is wrong, not Prometheus.
		reason, unwell = fmt.Sprintf("Prometheus refused the credentials (%d)", credErr.status), true
	case refused(err) && errors.As(err, &apiErr):
		// Prometheus is well: it refused this SLO's query.
		reason = "Prometheus refused the query (" + string(apiErr.Type) + ")"
	case errors.As(err, &apiErr):
		// Prometheus (or a proxy in front of it) answered, with an error.
		reason, unwell = "Prometheus answered an error ("+string(apiErr.Type)+")", true
	case errors.Is(err, errNoServer):
		reason = ReasonNoServer
	case errors.Is(err, ErrUnavailable):
		reason, unwell = ReasonUnreachable, true
	default:
		// makePlan: a template that cannot render for this alert.
		reason = ReasonNoLabel + " (" + err.Error() + ")"
	}
	return &LookupError{Err: err, Reason: reason, unwell: unwell}
}

// refused reports whether err is Prometheus refusing a query (400
// bad_data, 422 execution: a query that does not parse, a regex matcher
// over a label value that is no regex, a many-to-many match), whatever its
// errorType when answered 400 or 422 (Prometheus 3's cost_limit, a query
// over its series limit; other backends' own types), or answering more
// than maxAnswer: a fault of that SLO's query, not of Prometheus, which
// answers every other query.
func refused(err error) bool {
	var apiErr *v1.Error
	var qe *queryRefusedError
	return errors.As(err, &qe) || errors.Is(err, errAnswerTooLarge) || errors.As(err, &apiErr) && (apiErr.Type == v1.ErrBadData || apiErr.Type == v1.ErrExec)
}

// maxAnswer bounds the body of one answer: an SLO's queries answer a few
// kilobytes; a selector matching far more (a hand-rolled template, a
// label missing from it) answered 51 MB and took the router from 41 MB to
// 498 MB while it decoded — 16 such lookups at once would outgrow the
// deploy files' 512Mi.
const maxAnswer = 8 << 20

// errAnswerTooLarge: an answer longer than maxAnswer, left unread.
var errAnswerTooLarge = fmt.Errorf("Prometheus' answer is over %d MiB (the query matches too many series)", maxAnswer>>20)

// boundedAnswers is a RoundTripper whose answers fail reading past
// maxAnswer.
type boundedAnswers struct{ http.RoundTripper }

func (b boundedAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.RoundTripper.RoundTrip(req)
	if err == nil {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxAnswer}
	}
	return resp, err
}

// boundedBody reads at most left more bytes, then fails with
// errAnswerTooLarge.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells an answer of exactly maxAnswer from a
		// longer one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, errAnswerTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// redirectError is a query answered with a redirect that would lose it:
// client_golang POSTs a query's form, and Go follows a 301, 302 or 303 as a
// GET without it, so Prometheus answered "no expression found in input" —
// read as that SLO's query refused (bad_data), and an http→https redirect
// in front of prometheus.url turned every hand-rolled SLO's live page
// into a ticket with advice to mend its query. A 307 or 308 keeps the
// POST and is followed.
type redirectError struct{ to string }

func (e *redirectError) Error() string {
	return "Prometheus answered a redirect to " + e.to + " (set prometheus.url to the address Prometheus answers at)"
}

// checkRedirect returns the query clients' redirect policy: redirectError
// for every redirect when http_config's follow_redirects is false, and for
// one that turns the query's POST into a GET; Go's default (at most 10)
// otherwise.
func checkRedirect(follow bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !follow || len(via) > 0 && via[0].Method != req.Method {
			return &redirectError{to: redact.URL(req.URL.String())}
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// notFoundError is a query answered 404: no query API at url (the base
// asked, without credentials).
type notFoundError struct {
	url string
	err error
}

func (e *notFoundError) Error() string { return e.err.Error() }
func (e *notFoundError) Unwrap() error { return e.err }

// queryRefusedError is an API error Prometheus answered 400 or 422: it
// refused this query (query).
type queryRefusedError struct{ err error }

func (e *queryRefusedError) Error() string { return e.err.Error() }
func (e *queryRefusedError) Unwrap() error { return e.err }

// credentialsError is a query Prometheus answered 401 or 403: the API
// client's error says only client_error ("client error: 401" in its
// message), so statusClient keeps the status for lookupError.
type credentialsError struct {
	status int
	err    error
}

func (e *credentialsError) Error() string { return e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

// answerKey is the context key of a query's *answerMeta (statusClient).
type answerKey struct{}

// answerMeta is what statusClient saw of the last answer to a query: its
// HTTP status, and whether it said it was partial (VictoriaMetrics'
// top-level "isPartial": true, which v1.API does not read).
type answerMeta struct {
	status  int
	partial bool
}

// statusClient is an api.Client that writes what it saw of each answer to
// the *answerMeta its request's context carries: v1.API hands the error
// back without the response, and drops fields it does not know.
type statusClient struct{ api.Client }

// isPartialKey is VictoriaMetrics' mark of an answer some vmstorage nodes
// did not contribute to ("isPartial": true).
var isPartialKey = []byte(`"isPartial"`)

// isPartial reports whether body says "isPartial": true, spaces
// around the colon allowed (a proxy re-encoding the JSON).
func isPartial(body []byte) bool {
	for {
		i := bytes.Index(body, isPartialKey)
		if i < 0 {
			return false
		}
		rest := bytes.TrimLeft(body[i+len(isPartialKey):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			if bytes.HasPrefix(bytes.TrimLeft(rest[1:], " \t\r\n"), []byte("true")) {
				return true
			}
		}
		body = body[i+len(isPartialKey):]
	}
}

func (c statusClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, body, err := c.Client.Do(ctx, req)
	if m, ok := ctx.Value(answerKey{}).(*answerMeta); ok && resp != nil {
		m.status = resp.StatusCode // the last answer: v1 retries a POST refused 403 as a GET
		m.partial = isPartial(body)
	}
	return resp, body, err
}

// partialWarning is the warning a partial answer without warnings of its
// own is read with.
const partialWarning = "the answer is partial (isPartial: some storage nodes did not answer)"

// query runs one instant query; an answer of 401 or 403 fails it with a
// *credentialsError, an API error answered 400 or 422 with a
// *queryRefusedError; an answer marked partial (isPartial) carries a
// warning, as Thanos' partial answers do.
func (t *target) query(ctx context.Context, expr string, at time.Time) (model.Value, v1.Warnings, error) {
	var m answerMeta
	v, warns, _, err := t.api.Query(context.WithValue(ctx, answerKey{}, &m), expr, at)
	var apiErr *v1.Error
	switch {
	case err != nil && (m.status == http.StatusUnauthorized || m.status == http.StatusForbidden):
		err = &credentialsError{status: m.status, err: err}
	case err != nil && m.status == http.StatusNotFound:
		err = &notFoundError{url: redact.URL(t.base), err: err}
	case (m.status == http.StatusBadRequest || m.status == http.StatusUnprocessableEntity) && errors.As(err, &apiErr) &&
		apiErr.Type != v1.ErrClient && apiErr.Type != v1.ErrBadResponse:
		// Prometheus' JSON error, its errorType named: a proxy's plain
		// 400 (prom-label-proxy's "the namespace parameter must be
		// provided") is client_error, refusing every query alike.
		err = &queryRefusedError{err: err}
	case err == nil && m.partial && len(warns) == 0:
		warns = v1.Warnings{partialWarning}
	}
	if _, ok := v.(model.Vector); err == nil && !ok {
		// An instant query answers a vector: another type (a proxy's or a
		// stand-in's broken answer) read as no series, "no recording
		// rules", and sent on-call looking for rules that were there (an
		// audit); it is Prometheus answering wrong, counted as a failure.
		typ := "nothing"
		if v != nil {
			typ = v.Type().String()
		}
		err = &v1.Error{Type: v1.ErrBadResponse, Msg: "the instant query answered a " + typ + ", not a vector"}
	}
	return v, warns, err
}

// errNoServer: neither a usable generatorURL nor prometheus.url.
var errNoServer = errors.New("no Prometheus to ask")

// maxTargets bounds the Prometheus servers one Client keeps clients and
// breakers for (more than one only with from_generator_url).
const maxTargets = 32

// maxCache bounds the SLOs whose answers are cached.
const maxCache = 4096

// Options are a Client's collaborators.
type Options struct {
	// Registerer registers the metrics; nil registers nothing.
	Registerer prometheus.Registerer
	// Logger logs failed lookups; nil discards.
	Logger *slog.Logger
	// Now is the clock of the cache and the circuit breaker; nil is
	// time.Now.
	Now func() time.Time
}

// Client reads live SLO context. It is safe for concurrent use.
type Client struct {
	cfg Config
	tpl *templates
	rt  http.RoundTripper
	// anon is rt without http_config's credentials (authorization, basic
	// auth, OAuth2, client certificates, headers): for the hosts an
	// alert's generatorURL names (from_generator_url), which anyone who can
	// send the router an alert chooses — the credentials go to
	// prometheus.url's origin only.
	anon    http.RoundTripper
	metrics *metrics
	log     *slog.Logger
	now     func() time.Time
	flights singleflight.Group
	// templateLogs throttles the log of a prometheus.expr template that
	// fails to render (once per error text and interval).
	templateLogs logthrottle.Throttle

	mu      sync.Mutex
	targets map[string]*target
	cache   map[string]cached
}

// target is one Prometheus server.
type target struct {
	base    string // the URL asked, below which /api/v1/query is
	api     v1.API
	breaker breaker
}

type cached struct {
	ctx     *Context
	expires time.Time
}

// New builds a Client from a validated Config.
func New(cfg Config, o Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tpl, err := parseTemplates(&cfg)
	if err != nil {
		return nil, err
	}
	rt, err := commoncfg.NewRoundTripperFromConfig(cfg.HTTPConfig, "alertrouter-slolive")
	if err != nil {
		return nil, fmt.Errorf("prometheus.http_config: %w", err)
	}
	anon, err := commoncfg.NewRoundTripperFromConfig(withoutCredentials(cfg.HTTPConfig), "alertrouter-slolive")
	if err != nil {
		return nil, fmt.Errorf("prometheus.http_config: %w", err)
	}
	c := &Client{
		cfg: cfg, tpl: tpl, rt: boundedAnswers{rt}, anon: boundedAnswers{anon},
		metrics: newMetrics(o.Registerer),
		log:     o.Logger,
		now:     o.Now,
		targets: map[string]*target{},
		cache:   map[string]cached{},
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Timeout is how long one lookup takes at most (the config's timeout).
func (c *Client) Timeout() time.Duration { return time.Duration(c.cfg.Timeout) }

// Lookup returns the live context of a's SLO. It returns within the
// configured timeout (sooner when ctx ends); an error means the caller
// decides from the alert's labels: ErrNotSLO, ErrTimeout, ErrUnavailable,
// ErrBreakerOpen or ErrNoData, wrapped (test with errors.Is). Concurrent
// lookups of one SLO share one query set, and its answer is reused for
// cache_ttl. The returned Context is shared: do not modify it. Every error
// is a *LookupError, whose Reason the notification shows.
func (c *Client) Lookup(ctx context.Context, a *alert.Alert) (*Context, error) {
	lc, err := c.lookup(ctx, a)
	if err != nil {
		return nil, lookupError(err)
	}
	return lc, nil
}

func (c *Client) lookup(ctx context.Context, a *alert.Alert) (*Context, error) {
	p, err := makePlan(a, c.tpl)
	if errors.Is(err, ErrNotSLO) {
		c.metrics.lookups.WithLabelValues(resultNotSLO).Inc()
		return nil, err
	}
	if err != nil {
		// A template of prometheus.expr (or exemplar_query) that does not
		// render for this SLO's alert: the operator's to mend, so it is
		// counted (result="template") and logged, not taken for an alert
		// that is no SLO's — nor for a failing Prometheus.
		c.metrics.lookups.WithLabelValues(resultTemplate).Inc()
		c.templateLogs.Log(ctx, c.log, slog.LevelWarn, err.Error(), "live SLO query template does not render for this alert; deciding from alert labels", "alertname", a.Labels["alertname"], "err", err)
		return nil, err
	}
	if p.exemplarsErr != nil {
		c.templateLogs.Log(ctx, c.log, slog.LevelWarn, p.exemplarsErr.Error(), "live SLO exemplar query does not render for this alert; burn and budget read without traces", "alertname", a.Labels["alertname"], "err", p.exemplarsErr)
	}
	base, err := c.baseFor(a)
	if err != nil {
		c.metrics.lookups.WithLabelValues(resultError).Inc()
		return nil, err
	}
	key := base + "\x00" + p.key
	if lc := c.cached(key); lc != nil {
		c.metrics.lookups.WithLabelValues(resultCached).Inc()
		return lc, nil
	}
	t, err := c.target(base)
	if err != nil {
		c.metrics.lookups.WithLabelValues(resultError).Inc()
		return nil, err
	}
	if !t.breaker.allow(c.now()) {
		c.metrics.lookups.WithLabelValues(resultBreakerOpen).Inc()
		return nil, fmt.Errorf("live SLO %q: %w", p.slo, ErrBreakerOpen)
	}
	// The query set runs detached from ctx, bounded by the timeout alone,
	// so that the first caller giving up does not fail the others.
	ch := c.flights.DoChan(key, func() (any, error) {
		return c.fetch(context.WithoutCancel(ctx), key, t, p, a)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*Context), nil
	case <-ctx.Done():
		c.metrics.lookups.WithLabelValues(resultTimeout).Inc()
		return nil, fmt.Errorf("live SLO %q: %w: %w", p.slo, ErrTimeout, ctx.Err())
	}
}

// fetch runs one query set, records its outcome in the breaker, the
// metrics, the log and the cache.
func (c *Client) fetch(ctx context.Context, key string, t *target, p *plan, a *alert.Alert) (*Context, error) {
	// A flight that started just after another one finished finds its
	// answer here instead of asking again.
	if lc := c.cached(key); lc != nil {
		c.metrics.lookups.WithLabelValues(resultCached).Inc()
		return lc, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(c.cfg.Timeout))
	defer cancel()
	start := time.Now()
	at := c.now()
	lc, err := c.run(ctx, t, p, a, at)
	c.metrics.queryLatency.Observe(time.Since(start).Seconds())
	// Neither no data nor a refused query says that Prometheus is failing:
	// they must not open the breaker on every other SLO's lookups.
	failed := err != nil && !errors.Is(err, ErrNoData) && !refused(err)
	opened, closed := t.breaker.record(!failed, c.now())
	if opened {
		c.metrics.breakerOpen.Inc()
		c.log.Warn("prometheus circuit breaker opened; live SLO context off for 30s, deciding from alert labels",
			"slo", p.slo, "err", err)
	}
	if closed {
		c.metrics.breakerOpen.Dec()
	}
	switch {
	case err == nil:
		c.metrics.lookups.WithLabelValues(resultOK).Inc()
		c.store(key, lc)
		return lc, nil
	case errors.Is(err, ErrNoData):
		c.metrics.lookups.WithLabelValues(resultNoData).Inc()
	case errors.Is(err, ErrTimeout):
		c.metrics.lookups.WithLabelValues(resultTimeout).Inc()
	case refused(err):
		// The SLO's query, not Prometheus (AlertrouterLiveSLOUnavailable
		// counts error and timeout only).
		c.metrics.lookups.WithLabelValues(resultRefused).Inc()
	default:
		c.metrics.lookups.WithLabelValues(resultError).Inc()
	}
	if err != nil && !errors.Is(err, ErrNoData) && !opened {
		c.log.Warn("live SLO lookup failed; deciding from alert labels", "slo", p.slo, "err", err)
	}
	return nil, err
}

// run sends the plan's queries in parallel, then reads exemplars with the
// time left.
func (c *Client) run(ctx context.Context, t *target, p *plan, a *alert.Alert, at time.Time) (*Context, error) {
	res := make(results, len(p.queries))
	var warnings []string
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, q := range p.queries {
		g.Go(func() error {
			v, warns, err := t.query(gctx, q.expr, at.Add(-q.ago))
			if err != nil {
				c.metrics.queries.WithLabelValues("failure").Inc()
				return c.classify(ctx, p, q, err)
			}
			c.metrics.queries.WithLabelValues("success").Inc()
			vec, _ := v.(model.Vector)
			mu.Lock()
			res[q.name] = vec
			for _, w := range warns {
				if !slices.Contains(warnings, w) {
					warnings = append(warnings, w)
				}
			}
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	lc, err := p.assemble(res, at)
	if err != nil {
		return nil, err
	}
	// A partial answer (Thanos or a federated Prometheus missing a store,
	// each saying so in a warning) may lack the series that burn.
	slices.Sort(warnings)
	lc.Warnings = warnings
	sel := p.exemplars
	if sel == "" && p.kind == KindPyrra {
		sel = pyrraExemplarSelector(res[qBurn], agreeing(res[qBurn], "", pyrraBurnInfix, p.labels))
	}
	if sel != "" {
		lc.Exemplars = c.exemplars(ctx, t, sel, a, at)
	}
	return lc, nil
}

// classify wraps a query error of plan p's query q with ErrTimeout or
// ErrUnavailable (queryFailed).
func (c *Client) classify(ctx context.Context, p *plan, q query, err error) error {
	return fmt.Errorf("live SLO %q: %w", p.slo, queryFailed(ctx, fmt.Errorf("query %s: %w", q.name, err)))
}

// queryFailed wraps a query error with ErrTimeout when ctx's deadline
// passed, else with ErrUnavailable.
func queryFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// exemplarWindowMax bounds how far back exemplars are read.
const exemplarWindowMax = 6 * time.Hour

// exemplars reads the exemplars of sel over the alert's window (from its
// start, at most exemplarWindowMax, at least 5m) and returns up to
// MaxExemplars with distinct trace ids, highest value first. Failures only
// mean no exemplars.
func (c *Client) exemplars(ctx context.Context, t *target, sel string, a *alert.Alert, at time.Time) []Exemplar {
	from := a.StartsAt
	if from.IsZero() || at.Sub(from) > exemplarWindowMax {
		from = at.Add(-exemplarWindowMax)
	}
	if at.Sub(from) < 5*time.Minute {
		from = at.Add(-5 * time.Minute)
	}
	rs, err := t.api.QueryExemplars(ctx, sel, from, at)
	if err != nil {
		c.metrics.queries.WithLabelValues("failure").Inc()
		c.log.Debug("exemplar query failed; hint without traces", "query", sel, "err", err)
		return nil
	}
	c.metrics.queries.WithLabelValues("success").Inc()
	var all []Exemplar
	for _, r := range rs {
		for _, e := range r.Exemplars {
			id := traceID(e.Labels)
			if id == "" {
				continue
			}
			all = append(all, Exemplar{TraceID: id, Value: float64(e.Value), At: e.Timestamp.Time().UTC()})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Value != all[j].Value {
			return all[i].Value > all[j].Value
		}
		return all[i].At.After(all[j].At)
	})
	seen := map[string]bool{}
	out := make([]Exemplar, 0, MaxExemplars)
	for _, e := range all {
		if seen[e.TraceID] {
			continue
		}
		seen[e.TraceID] = true
		if c.tpl.traceURL != nil {
			if u, err := render(c.tpl.traceURL, e); err == nil {
				e.URL = u
			}
		}
		out = append(out, e)
		if len(out) == MaxExemplars {
			break
		}
	}
	return out
}

// traceLabels are the exemplar labels that carry a trace id, by convention.
var traceLabels = []model.LabelName{"trace_id", "traceID", "traceId", "trace"}

func traceID(ls model.LabelSet) string {
	for _, n := range traceLabels {
		if v := ls[n]; v != "" {
			return string(v)
		}
	}
	return ""
}

// baseFor returns the Prometheus to ask about a: the configured URL, or the
// scheme and host of its generatorURL when from_generator_url is set.
func (c *Client) baseFor(a *alert.Alert) (string, error) {
	if c.cfg.FromGeneratorURL && a.GeneratorURL != "" {
		u, err := url.Parse(a.GeneratorURL)
		if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			// Prometheus serves its API beside /graph, under any prefix
			// of its external URL. A generatorURL without /graph is
			// another rule evaluator's page (vmalert's
			// /vmalert/alert?…, Grafana's /alerting/grafana/…/view), with
			// no query API under its path: prometheus.url, else its
			// scheme://host.
			prefix, _, graph := strings.Cut(u.Path, "/graph")
			if graph {
				return strings.TrimSuffix(u.Scheme+"://"+u.Host+prefix, "/"), nil
			}
			if c.cfg.URL == "" {
				return u.Scheme + "://" + u.Host, nil
			}
		}
		if c.cfg.URL == "" {
			return "", fmt.Errorf("%w: %w: generatorURL %q is not an http(s) URL", ErrUnavailable, errNoServer, a.GeneratorURL)
		}
	}
	if c.cfg.URL == "" {
		return "", fmt.Errorf("%w: %w: alert has no generatorURL and prometheus.url is not set", ErrUnavailable, errNoServer)
	}
	return baseURL(c.cfg.URL)
}

// target returns the client and breaker of one Prometheus.
func (c *Client) target(base string) (*target, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.targets[base]; ok {
		return t, nil
	}
	if len(c.targets) >= maxTargets {
		return nil, fmt.Errorf("%w: more than %d Prometheus servers named by generatorURLs", ErrUnavailable, maxTargets)
	}
	rt := c.anon
	if c.cfg.URL != "" && sameOrigin(base, c.cfg.URL) {
		rt = c.rt
	}
	cl, err := api.NewClient(api.Config{Address: base, Client: &http.Client{Transport: rt, CheckRedirect: checkRedirect(c.cfg.HTTPConfig.FollowRedirects)}})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	t := &target{base: base, api: v1.NewAPI(statusClient{cl})}
	c.targets[base] = t
	return t, nil
}

// Probe asks prometheus.url, through prometheus.http_config, for
// vector(1) (check-config --probe): a wrong path, refused credentials or an
// unknown CA show before the first SLO page reads "unavailable". Without a
// url there is nothing to ask.
func (c *Client) Probe(ctx context.Context) (string, error) {
	if c.cfg.URL == "" {
		return "no url: only the alerts' generatorURLs are asked", nil
	}
	base, err := baseURL(c.cfg.URL)
	if err != nil {
		return "", err
	}
	t, err := c.target(base)
	if err != nil {
		return "", err
	}
	if _, _, err := t.query(ctx, "vector(1)", c.now()); err != nil {
		err = queryFailed(ctx, err)
		return "", fmt.Errorf("%s: %w", lookupError(err).(*LookupError).Reason, err)
	}
	return "its query API (/api/v1/query) answered", nil
}

func (c *Client) cached(key string) *Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cache[key]
	if !ok || !c.now().Before(e.expires) {
		return nil
	}
	return e.ctx
}

func (c *Client) store(key string, lc *Context) {
	if c.cfg.CacheTTL <= 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cache) >= maxCache {
		for k, e := range c.cache {
			if !now.Before(e.expires) {
				delete(c.cache, k)
			}
		}
		if len(c.cache) >= maxCache {
			clear(c.cache)
		}
	}
	c.cache[key] = cached{ctx: lc, expires: now.Add(time.Duration(c.cfg.CacheTTL))}
}

// withoutCredentials returns a copy of hc that proves nothing about the
// router: no authorization, basic auth, OAuth2, client certificate or
// extra headers; its TLS trust (CA, server name, insecure_skip_verify) and
// proxy settings stay.
func withoutCredentials(hc commoncfg.HTTPClientConfig) commoncfg.HTTPClientConfig {
	hc.BasicAuth, hc.Authorization, hc.OAuth2 = nil, nil, nil
	hc.BearerToken, hc.BearerTokenFile = "", ""
	hc.HTTPHeaders = nil
	hc.TLSConfig.Cert, hc.TLSConfig.CertFile, hc.TLSConfig.CertRef = "", "", ""
	hc.TLSConfig.Key, hc.TLSConfig.KeyFile, hc.TLSConfig.KeyRef = "", "", ""
	return hc
}

// sameOrigin reports whether the URLs a and b have the same scheme and
// host (port included).
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}
