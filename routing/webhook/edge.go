package webhook

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // registers the profiles on http.DefaultServeMux
	"net/netip"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
	"github.com/alertrouter/alertrouter/routing/alert"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/time/rate"
)

// Auth checks inbound requests: webhooks (the config's `auth`) and the
// console's routes (`console.auth`). A zero Auth lets every request
// through. Bearer and basic auth may both be set; either one then suffices.
type Auth struct {
	BearerToken string
	Username    string
	Password    string
}

func (a Auth) enabled() bool { return a.BearerToken != "" || a.Username != "" }

// equal compares secrets in constant time (hashing first hides the length).
func equal(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

func (a Auth) allow(r *http.Request) bool {
	if !a.enabled() {
		return true
	}
	if a.BearerToken != "" {
		// The scheme is case-insensitive (RFC 9110 §11.1).
		if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") && equal(h[7:], a.BearerToken) {
			return true
		}
	}
	if a.Username != "" {
		if u, p, ok := r.BasicAuth(); ok && equal(u, a.Username) && equal(p, a.Password) {
			return true
		}
	}
	return false
}

func (a Auth) challenge() string {
	if a.BearerToken != "" {
		return `Bearer realm="alertrouter"`
	}
	return `Basic realm="alertrouter"`
}

// browserChallenge is the challenge of what people open in a browser (the
// console): Basic whenever basic auth is set, so the browser prompts.
func (a Auth) browserChallenge() string {
	if a.Username != "" {
		return `Basic realm="alertrouter"`
	}
	return a.challenge()
}

// Processor runs the dispatch core on one decoded webhook. A non-nil error
// that is an *alert.DeliveryError is answered 5xx (502 when no failure is
// retryable); the summary is the answer's body either way.
type Processor interface {
	Process(ctx context.Context, msg *alert.Message) (*alert.Summary, error)
}

// Pager is implemented by a Processor that can tell, before running the
// dispatch core, whether a webhook carries an alert decided page.
// routing.Pipeline implements it.
type Pager interface {
	Pages(msg *alert.Message) bool
}

// Generation is one loaded configuration as the edge sees it.
type Generation struct {
	Processor Processor
	Options   EdgeOptions
}

// Runtime is what the edge needs from the running service; cmd/router
// implements it.
type Runtime interface {
	//
	// Current returns the config generation in force; a webhook takes it
	// once and keeps it to the end, so one request never mixes two configs.
	Current() Generation
	// Ready returns nil when the config is loaded and the store answers.
	Ready(ctx context.Context) error
	// Reload re-reads the config; on error the old one keeps serving.
	Reload() error
}

// EdgeOptions are the webhook edge's settings.
type EdgeOptions struct {
	// Auth guards POST /webhook (the config's `auth`).
	Auth Auth
	// ConsoleAuth guards the console (every path it serves), Go's profiles
	// under /debug/pprof/ and the lifecycle endpoints /-/reload and
	// /-/quit (`console.auth`); zero leaves them open. /webhook, /slack/*,
	// /metrics, /-/healthy and /-/ready never ask for it.
	ConsoleAuth Auth
	// ConsoleHosts are host names (console.external_url's), lower-case and
	// without port, for which the console and the lifecycle endpoints
	// accept state-changing requests, besides localhost, IP addresses and
	// the hosts of WithKnownHosts (see KnownHost).
	ConsoleHosts []string
	// MaxBodyBytes bounds a webhook body; larger ones get 413.
	MaxBodyBytes int64
	// Timeout bounds the processing of one webhook, notifications included;
	// zero leaves only the request's own deadline.
	Timeout time.Duration
	// Interactions answers POST /slack/interactions and /slack/commands
	// (Slack's interactivity and slash command requests, which it verifies
	// itself); nil answers 404.
	Interactions http.Handler
	// MaxConcurrent caps the webhooks processed at once; beyond it a
	// webhook is answered 503 with Retry-After (Alertmanager retries it).
	// Zero means no cap.
	MaxConcurrent int
	// Orphans keeps the webhooks answered 5xx for a resolve on
	// Alertmanager's behalf (nil: none; alertmanager.url unset).
	Orphans *Orphans
}

// RetryAfter is the Retry-After of a webhook refused for overload.
const RetryAfter = "5"

// Option configures NewServer.
type Option func(*serverOptions)

type serverOptions struct {
	lifecycle bool
	quit      func()
	hosts     []string
}

// WithKnownHosts adds host names (lower-case, without port: those of
// --web.listen-address) to those the state-changing console and lifecycle
// requests are accepted for (see KnownHost).
func WithKnownHosts(hosts ...string) Option {
	return func(o *serverOptions) { o.hosts = append(o.hosts, hosts...) }
}

// WithLifecycle enables POST /-/reload and POST|PUT /-/quit (Prometheus'
// --web.enable-lifecycle); quit starts the same graceful shutdown as
// SIGTERM. Without it both answer 403.
func WithLifecycle(quit func()) Option {
	return func(o *serverOptions) { o.lifecycle, o.quit = true, quit }
}

// errorBody is every error answer of the edge.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// NewServer returns the HTTP handler of the router: POST /webhook, POST
// /slack/interactions and /slack/commands, GET /metrics (from gatherer),
// GET /-/healthy, GET /-/ready, with WithLifecycle POST /-/reload and
// /-/quit, Go's profiles under /debug/pprof/, and every other path to rt's
// Console() handler when rt has one.
//
// The console, the profiles and the lifecycle endpoints ask for the
// generation's EdgeOptions.ConsoleAuth (401 with a Basic challenge
// otherwise); a state-changing request to the console or the lifecycle
// endpoints (anything but GET, HEAD, OPTIONS and the side-effect-free POST
// /explain) must also name a known Host (KnownHost), or it is refused 403:
// a DNS-rebinding page is same-origin with the router by its own name.
func NewServer(rt Runtime, gatherer prometheus.Gatherer, m *Metrics, logger *slog.Logger, opts ...Option) http.Handler {
	var so serverOptions
	for _, o := range opts {
		o(&so)
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		code := http.StatusInternalServerError
		msg := err.Error()
		var he *echo.HTTPError
		if errors.As(err, &he) {
			code = he.Code
			if s, ok := he.Message.(string); ok {
				msg = s
			}
		}
		if !c.Response().Committed {
			_ = c.JSON(code, errorBody{Error: msg})
		}
	}
	// A panic while serving (a bug some input triggers) answers 500 with
	// the error body, so Alertmanager retries, logs its stack and, on
	// /webhook, counts it (alertrouter_webhooks_total{outcome="panic"}):
	// net/http alone would only drop the connection and print to stderr.
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		StackSize:       16 << 10,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			logger.Error("panic while serving a request (a bug: please report it with this stack); answered 500",
				"method", c.Request().Method, "path", c.Request().URL.Path, "err", err, "stack", string(stack))
			if c.Path() == "/webhook" {
				m.countPanic()
			}
			return echo.NewHTTPError(http.StatusInternalServerError, "internal error while handling this request (logged by the router); retry")
		},
	}))
	h := &webhook{rt: rt, m: m, logger: logger, refusals: rate.Sometimes{Interval: time.Second}, apiPosts: rate.Sometimes{Interval: time.Second}, oddPaths: rate.Sometimes{Interval: time.Second}}
	// guard asks for console.auth: the console, the profiles and the
	// lifecycle endpoints.
	guard := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			a := rt.Current().Options.ConsoleAuth
			if !a.allow(c.Request()) {
				c.Response().Header().Set("WWW-Authenticate", a.browserChallenge())
				return c.JSON(http.StatusUnauthorized, errorBody{Error: "missing or invalid credentials: the console, /debug/pprof/ and the lifecycle endpoints need console.auth's"})
			}
			return next(c)
		}
	}
	// knownHost reports whether a state-changing request names a Host the
	// router knows; unknownHost refuses one that does not (DNS rebinding).
	knownHost := func(c echo.Context) bool {
		host := c.Request().Host
		return KnownHost(host, rt.Current().Options.ConsoleHosts) || KnownHost(host, so.hosts)
	}
	unknownHost := func(c echo.Context) error {
		return c.JSON(http.StatusForbidden, errorBody{Error: "request for host " + strconv.Quote(c.Request().Host) +
			" refused: requests that act (replay, reload, quit) are accepted only for console.external_url's host, localhost, an IP address or a --web.listen-address host, " +
			"since a page of another site whose name points at this address (DNS rebinding) is same-origin with it; set console.external_url to the address you open the console at"})
	}
	e.POST("/webhook", h.serve)
	// A webhook URL mistyped with a trailing slash or another case is a
	// common mistake: name the endpoint in JSON, not the console's HTML
	// 404 (which Alertmanager logs as the error while it drops the page).
	misdirected := func(c echo.Context) error {
		return h.fail(c, time.Now(), "bad_input", http.StatusNotFound, errorBody{Error: "no webhook endpoint at " + strconv.Quote(c.Request().URL.Path) + ": send Alertmanager's webhooks to POST /webhook (no trailing slash)"})
	}
	e.POST("/webhook/", misdirected)
	e.POST("/Webhook", misdirected)
	e.POST("/webhooks", misdirected)
	// Prometheus' alertmanagers:, vmalert's -notifier.url and Grafana's
	// external Alertmanager post alerts to Alertmanager's API: the router
	// is a receiver behind Alertmanager, not one.
	notAlertmanager := func(c echo.Context) error {
		h.count(time.Now(), "not_alertmanager", http.StatusNotFound)
		h.apiPosts.Do(func() {
			h.logger.Warn("alerts posted to Alertmanager's alerts API at the router: a sender (Prometheus, vmalert, Grafana) points at the router as at an Alertmanager, and its alerts reach no one; point it at Alertmanager (further ones within a second are counted in alertrouter_webhooks_total{outcome=\"not_alertmanager\"}, not logged)",
				"path", c.Request().URL.Path, "remote", c.Request().RemoteAddr)
		})
		return c.JSON(http.StatusNotFound, errorBody{Error: "this is Alertmanager's webhook receiver, not an Alertmanager: " + strconv.Quote(c.Request().URL.Path) +
			" is Alertmanager's alerts API — point Prometheus (or vmalert, Grafana) at Alertmanager, and Alertmanager's webhook_configs at POST /webhook"})
	}
	e.POST("/api/v1/alerts", notAlertmanager)
	e.POST("/api/v2/alerts", notAlertmanager)
	// A webhook URL that cleans to /webhook (`//webhook` from a base URL
	// ending in a slash, `/./webhook`) is served as /webhook,
	// whether or not the console's catch-all — behind console.auth, which
	// answered such a page 401 — or its redirect is there (Alertmanager
	// follows no redirect with follow_redirects: false); the operator is
	// told to fix it. One ending in a slash (`/webhook//`), or in another
	// case (`/WEBHOOK`, `//Webhook/`), is answered the JSON 404 naming POST
	// /webhook, as `/webhook/` is — before the console's guard.
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			p := r.URL.Path
			if r.Method != http.MethodPost || p == "/webhook" && r.URL.RawPath == "" {
				return next(c)
			}
			switch clean := path.Clean(p); {
			case clean == "/webhook" && !strings.HasSuffix(p, "/"):
				// Also /web%68ook: echo routes by the raw path.
				h.oddPaths.Do(func() {
					h.logger.Warn("webhook posted at a path that is not /webhook exactly; served as POST /webhook — fix the URL in Alertmanager's webhook_configs (further ones within a second are not logged)", "path", p, "remote", r.RemoteAddr)
				})
				r.URL.Path, r.URL.RawPath = "/webhook", ""
			case strings.EqualFold(clean, "/webhook") || strings.EqualFold(clean, "/webhooks"):
				return misdirected(c)
			case clean == "/api/v1/alerts" || clean == "/api/v2/alerts":
				return notAlertmanager(c) // `/api/v2/alerts/` too
			}
			return next(c)
		}
	})
	slackHandler := func(c echo.Context) error {
		h := rt.Current().Options.Interactions
		if h == nil {
			return c.JSON(http.StatusNotFound, errorBody{Error: "Slack triage is not configured: no slack_configs entry lists actions"})
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
	e.POST("/slack/interactions", slackHandler)
	e.POST("/slack/commands", slackHandler)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})))
	healthy := func(c echo.Context) error { return c.String(http.StatusOK, "OK\n") }
	ready := func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := rt.Ready(ctx); err != nil {
			return c.JSON(http.StatusServiceUnavailable, errorBody{Error: "not ready: " + err.Error()})
		}
		return c.String(http.StatusOK, "OK\n")
	}
	// HEAD too: load balancers' health checks often use it (HAProxy's
	// "option httpchk HEAD /-/ready").
	e.GET("/-/healthy", healthy)
	e.HEAD("/-/healthy", healthy)
	e.GET("/-/ready", ready)
	e.HEAD("/-/ready", ready)
	lifecycleOff := func(c echo.Context) error {
		return c.JSON(http.StatusForbidden, errorBody{Error: "lifecycle APIs are not enabled: start the router with --web.enable-lifecycle"})
	}
	crossSite := func(c echo.Context) error {
		return c.JSON(http.StatusForbidden, errorBody{Error: "cross-site lifecycle request refused (another site's page cannot stop or reload the router)"})
	}
	quit := func(c echo.Context) error {
		if !SameOrigin(c.Request()) {
			return crossSite(c)
		}
		if !knownHost(c) {
			return unknownHost(c)
		}
		if so.quit != nil {
			so.quit()
		}
		return c.String(http.StatusOK, "Requesting termination... Goodbye!\n")
	}
	reload := func(c echo.Context) error {
		if !SameOrigin(c.Request()) {
			return crossSite(c)
		}
		if !knownHost(c) {
			return unknownHost(c)
		}
		if err := rt.Reload(); err != nil {
			return c.JSON(http.StatusInternalServerError, errorBody{Error: "reload failed, previous config still serving: " + err.Error()})
		}
		return c.String(http.StatusOK, "config reloaded\n")
	}
	if !so.lifecycle {
		quit, reload = lifecycleOff, lifecycleOff
	}
	quit, reload = guard(quit), guard(reload)
	e.POST("/-/quit", quit)
	e.PUT("/-/quit", quit)
	e.POST("/-/reload", reload)
	// Go's profiles (net/http/pprof registers them on http.DefaultServeMux:
	// the index, profile, heap, allocs, goroutine, block, mutex, trace …),
	// served as Prometheus and Alertmanager serve them, behind console.auth
	// (the command line and every goroutine's stack are in there) and the
	// web configuration (TLS, basic auth). A profile or trace costs the
	// router CPU for its seconds and a browser attaches cached console
	// credentials to another site's <img src>: a request a browser marks
	// as another site's is refused — but a link followed (a navigation:
	// the person chose it). Any Host is served, as Prometheus and
	// Alertmanager serve their profiles: `go tool pprof` and continuous
	// profilers reach the router by its Service's name (a review).
	profiles := echo.WrapHandler(http.DefaultServeMux)
	e.Any("/debug/pprof/*", guard(func(c echo.Context) error {
		if r := c.Request(); !SameOrigin(r) && !followedLink(r) {
			return c.JSON(http.StatusForbidden, errorBody{Error: "cross-site profile request refused (another site's page cannot profile the router; open the link or type the address)"})
		}
		return profiles(c)
	}))
	if c, ok := rt.(interface{ Console() http.Handler }); ok && c.Console() != nil {
		// The console's catch-all would answer its HTML 404 to a wrong
		// method on the router's own endpoints: they say 405 and which
		// method they take, as without a console.
		routed := map[string][]string{} // the router's own paths and their methods, as registered above
		for _, r := range e.Routes() {
			if !strings.Contains(r.Path, "*") {
				routed[r.Path] = append(routed[r.Path], r.Method)
			}
		}
		for path, allowed := range routed {
			slices.Sort(allowed)
			allow := strings.Join(allowed, ", ")
			var others []string // only the methods not routed above: a route of the same method would be replaced
			for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
				if !slices.Contains(allowed, m) {
					others = append(others, m)
				}
			}
			e.Match(others, path, func(c echo.Context) error {
				c.Response().Header().Set("Allow", allow)
				return c.JSON(http.StatusMethodNotAllowed, errorBody{Error: c.Request().Method + " " + path + ": method not allowed (use " + allow + ")"})
			})
		}
		console := c.Console()
		// The operations console (routing/console) at /, behind
		// console.auth; what changes state (replay) only for a known Host.
		e.Any("/*", guard(func(c echo.Context) error {
			if changesState(c.Request()) && !knownHost(c) {
				return unknownHost(c)
			}
			console.ServeHTTP(c.Response(), c.Request())
			return nil
		}))
	}
	return e
}

type webhook struct {
	rt       Runtime
	m        *Metrics
	logger   *slog.Logger
	inFlight atomic.Int64
	// inFlightBytes adds up the bodies of the webhooks in flight: pages let
	// in beyond webhook.max_concurrent stay within max_concurrent bodies
	// of max_body_bytes, the memory the cap is sized for.
	inFlightBytes atomic.Int64
	// refusals logs a webhook refused 4xx at most once a second: each
	// is a page Alertmanager will not retry, so the operator must see
	// it in the log, not only in alertrouter_webhooks_total — without a
	// sender's flood flooding the log.
	refusals rate.Sometimes
	// apiPosts logs alerts posted to Alertmanager's API path at most once
	// a second.
	apiPosts rate.Sometimes
	// oddPaths logs webhooks posted at a path cleaning to /webhook at most
	// once a second.
	oddPaths rate.Sometimes
	// inputLogs logs a group's rejected alerts and its truncation once
	// per interval: Alertmanager's retries and repeats resend them (an
	// audit: ten posts of one group, ten lines of 900 characters each);
	// alertrouter_alerts_rejected_total and _truncated_total count all.
	inputLogs logthrottle.Throttle
}

// logRejected logs the first alerts of msg rejected alone, and how many
// more, unless its group's were logged less than an interval ago (the
// first line then says how many webhooks' were left out).
func (h *webhook) logRejected(msg *alert.Message) {
	ok, left := h.inputLogs.Allow("rejected:" + msg.GroupKey)
	if !ok {
		return
	}
	for i, r := range msg.Rejected[:min(len(msg.Rejected), loggedRejections)] {
		args := []any{"group_key", msg.GroupKey, "index", r.Index, "err", r.Reason}
		if i == 0 && left > 0 {
			args = append(args, "group_webhooks_left_out", left, "throttled_to_one_per", logthrottle.DefaultEvery.String())
		}
		h.logger.Warn("alert rejected alone; the rest of the webhook is processed", args...)
	}
	if n := len(msg.Rejected) - loggedRejections; n > 0 {
		h.logger.Warn("more alerts of this webhook rejected alone, not logged one by one (alertrouter_alerts_rejected_total counts them; the answer lists the first "+strconv.Itoa(alert.ListedRejections)+")",
			"group_key", msg.GroupKey, "more", n, "rejected", len(msg.Rejected))
	}
}

func (h *webhook) fail(c echo.Context, start time.Time, outcome string, status int, body errorBody) error {
	h.count(start, outcome, status)
	if status >= 400 && status < 500 {
		h.refusals.Do(func() {
			h.logger.Warn("webhook refused; Alertmanager does not retry a 4xx, so its alerts are not notified (further refusals within a second are counted in alertrouter_webhooks_total, not logged)",
				"status", status, "outcome", outcome, "remote", c.Request().RemoteAddr, "field", body.Field, "err", body.Error)
		})
	}
	return c.JSON(status, body)
}

// bodiesOverBudget answers a webhook whose body would take the bodies in
// flight past budget: 503, retried.
func (h *webhook) bodiesOverBudget(c echo.Context, start time.Time, budget int64) error {
	c.Response().Header().Set("Retry-After", RetryAfter)
	return h.fail(c, start, "body_budget", http.StatusServiceUnavailable,
		errorBody{Error: "too many webhook bodies in flight (twice webhook.max_concurrent × webhook.max_body_bytes = " + strconv.FormatInt(budget, 10) + " bytes); retry later"})
}

// errOverBudget ends the read of a body that took the bodies in flight
// past their budget.
var errOverBudget = errors.New("webhook bodies in flight over their budget")

// budgetReader counts a body that is not read into a buffer of its
// declared size in the bodies in flight as its bytes arrive (held, given
// back by serve), and fails the read once they pass budget.
type budgetReader struct {
	r        io.Reader
	inFlight *atomic.Int64
	held     *int64
	budget   int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		*b.held += int64(n)
		if b.inFlight.Add(int64(n)) > b.budget {
			return n, errOverBudget
		}
	}
	return n, err
}

// loggedRejections bounds the alerts of one webhook whose rejection is
// logged one by one: a payload of 200,000 unreadable alerts logged 200,000
// lines (an audit); the rest are logged as one line.
const loggedRejections = 5

func (h *webhook) count(start time.Time, outcome string, status int) {
	if h.m != nil {
		h.m.webhooks.WithLabelValues(outcome, strconv.Itoa(status)).Inc()
		h.m.webhookDuration.Observe(time.Since(start).Seconds())
	}
}

// serve is the webhook edge: the one place that maps outcomes to HTTP
// statuses. 2xx only when every notification was delivered, deduplicated
// or deliberately suppressed; 5xx when a retryable failure remains or the
// body did not arrive whole (read timeout, connection broken mid-body); 4xx
// only for payloads that arrived but cannot be read as a whole.
func (h *webhook) serve(c echo.Context) error {
	start := time.Now()
	gen := h.rt.Current()
	opts := gen.Options
	req := c.Request()
	if opts.Timeout > 0 {
		// The connection's deadlines from this configuration's timeout: the
		// server's own (cmd/router's serverTimeouts) are taken at start, and a reload that
		// raised webhook.timeout had the answer of a slow webhook cut off
		// (an empty reply, counted as answered).
		rc := http.NewResponseController(c.Response())
		_ = rc.SetReadDeadline(start.Add(opts.Timeout))
		_ = rc.SetWriteDeadline(start.Add(opts.Timeout + WriteGrace))
	}
	if !opts.Auth.allow(req) {
		c.Response().Header().Set("WWW-Authenticate", opts.Auth.challenge())
		return h.fail(c, start, "unauthorized", http.StatusUnauthorized, errorBody{Error: "missing or invalid credentials"})
	}
	if ct := req.Header.Get("Content-Type"); !IsJSONContentType(ct) {
		return h.fail(c, start, "bad_input", http.StatusUnsupportedMediaType,
			errorBody{Error: "unsupported Content-Type " + strconv.Quote(ct) + ": send application/json"})
	}
	gzipped, unsupported := bodyCoding(req.Header)
	if unsupported != "" {
		c.Response().Header().Set("Accept-Encoding", "gzip")
		return h.fail(c, start, "bad_input", http.StatusUnsupportedMediaType,
			errorBody{Error: "Content-Encoding " + strconv.Quote(unsupported) + " not supported (send identity or gzip)"})
	}
	tooLarge := func(decompressed bool) error {
		counted := ""
		if decompressed {
			counted = ", counted decompressed"
		}
		return h.fail(c, start, "bad_input", http.StatusRequestEntityTooLarge,
			errorBody{Error: "body larger than the limit of " + strconv.FormatInt(opts.MaxBodyBytes, 10) + " bytes (webhook.max_body_bytes" + counted + "); lower max_alerts in Alertmanager or raise the limit"})
	}
	if req.ContentLength > opts.MaxBodyBytes {
		// Declared too large: answered at once, the body left unread, and
		// the connection closed after the answer (net/http would otherwise
		// read what it can of the body to keep the connection).
		c.Response().Header().Set("Connection", "close")
		return tooLarge(false) // the declared length: as sent
	}
	// The body's memory is held from before it is read: its declared
	// length up front (it is read into a buffer of that size), else as its
	// bytes arrive (chunked, gzip). Read first and counted after, slow
	// uploads held memory beyond every cap (an audit: 20 bodies of 30 MB
	// trickled in, 1.5 GB). Beyond twice max_concurrent bodies of
	// max_body_bytes — room for the pages let in past the cap (pageWithin)
	// — a 503 has the sender retry; an undeclared body reserving the limit
	// up front let one trickling upload refuse every page (a review).
	held, budget := int64(0), int64(0)
	if opts.MaxConcurrent > 0 && opts.MaxBodyBytes > 0 {
		budget = 2 * int64(opts.MaxConcurrent) * opts.MaxBodyBytes
	}
	defer func() { h.inFlightBytes.Add(-held) }()
	var count func(io.Reader) io.Reader
	if n := req.ContentLength; n > 0 && presized(n, opts.MaxBodyBytes, gzipped) {
		// Read into a buffer of that size, allocated at once.
		held = n
		if b := h.inFlightBytes.Add(n); budget > 0 && b > budget {
			c.Response().Header().Set("Connection", "close") // the body is left unread
			return h.bodiesOverBudget(c, start, budget)
		}
	} else if budget > 0 {
		// Grown as it arrives — decompressed, for gzip: counted so. A
		// larger declared length reserved up front refused every page for
		// memory no one held (a review: two uploads declaring 8 MB and
		// sending a byte); gzip counted as sent let 40 slow uploads of 8
		// KB inflate to 357 MB.
		count = func(r io.Reader) io.Reader {
			return &budgetReader{r: r, inFlight: &h.inFlightBytes, held: &held, budget: budget}
		}
	}
	body, err := readBody(c.Response(), req, opts.MaxBodyBytes, gzipped, count)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(gzipped)
		}
		if errors.Is(err, errOverBudget) {
			c.Response().Header().Set("Connection", "close") // the rest is left unread
			return h.bodiesOverBudget(c, start, budget)
		}
		if BodyNotReceived(err) {
			// The sender's payload may be fine: the body did not arrive in
			// time (the server's read timeout, webhook.timeout) or the
			// connection broke mid-body. 503 has Alertmanager retry it,
			// where a 4xx would drop the page (the client may be gone and
			// never read the answer: no matter).
			h.logger.Warn("webhook body not received whole; answered 503 for a retry", "remote", req.RemoteAddr, "err", err)
			c.Response().Header().Set("Connection", "close")
			msg := "request body not received within webhook.timeout; retry"
			if !IsTimeout(err) {
				msg = "request body not received whole (the connection ended or broke mid-body: " + err.Error() + "); retry"
			}
			return h.fail(c, start, "body_incomplete", http.StatusServiceUnavailable, errorBody{Error: msg})
		}
		return h.fail(c, start, "bad_input", http.StatusBadRequest, errorBody{Error: "reading body: " + err.Error()})
	}
	msg, err := Decode(body, time.Now())
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			return h.fail(c, start, "bad_input", ie.Status, errorBody{Error: ie.Msg, Field: ie.Field})
		}
		return h.fail(c, start, "bad_input", http.StatusBadRequest, errorBody{Error: err.Error()})
	}
	if len(msg.Rejected) > 0 {
		h.logRejected(msg)
	}
	if msg.TruncatedAlerts > 0 {
		h.inputLogs.Log(req.Context(), h.logger, slog.LevelWarn, "truncated:"+msg.GroupKey, "Alertmanager truncated this webhook (max_alerts): it counts the alerts it left out as notified and sends them only when their group changes or at its repeat_interval. With alertmanager.url set, the router reads the group's firing alerts from Alertmanager and processes them with it (logged next); without it, or when that fails, they wait, and this webhook's resolves close no incident (alerts it left out may still fire in it, whatever the webhook's status says): an incident they empty stays open until a webhook carrying its whole group resolves it, or someone resolves it by hand. Raise max_alerts",
			"group_key", msg.GroupKey, "group_status", msg.Status, "truncated", msg.TruncatedAlerts, "received", len(msg.Items))
	}
	size := int64(len(body))
	bytes := h.inFlightBytes.Add(size - held)
	held = size
	if n := h.inFlight.Add(1); opts.MaxConcurrent > 0 && n > int64(opts.MaxConcurrent) &&
		!pageWithin(gen.Processor, msg, n, bytes, opts.MaxConcurrent, opts.MaxBodyBytes) {
		h.inFlight.Add(-1)
		c.Response().Header().Set("Retry-After", RetryAfter)
		return h.fail(c, start, "overloaded", http.StatusServiceUnavailable,
			errorBody{Error: "too many webhooks in flight (webhook.max_concurrent = " + strconv.Itoa(opts.MaxConcurrent) + "); retry later"})
	}
	defer h.inFlight.Add(-1)
	ctx := req.Context()
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	sum, err := gen.Processor.Process(ctx, msg)
	if o := opts.Orphans; o != nil {
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orphanWriteTimeout)
		if err != nil {
			o.Record(octx, msg, body)
		} else {
			o.Forget(octx, msg) // a store call only for a group kept (Refresh)
		}
		cancel()
	}
	if err != nil {
		status := http.StatusServiceUnavailable
		var de *alert.DeliveryError
		if errors.As(err, &de) && !de.Retryable {
			status = http.StatusBadGateway
		}
		h.count(start, "failed", status)
		return c.JSON(status, sum)
	}
	h.count(start, "ok", http.StatusOK)
	return c.JSON(http.StatusOK, sum)
}

// presizeMax bounds the buffer readBody allocates on the word of a
// request's Content-Length before reading it: a client declaring the
// whole limit and sending a few bytes must not cost the limit in memory.
// Alertmanager's webhooks are far below it (100 alerts: about 120 KB).
const presizeMax = 1 << 20

// readBody reads req's whole body, at most limit bytes: into one buffer of
// the declared length when there is one up to presizeMax (Alertmanager
// always declares it; io.ReadAll grows from 512 bytes, doubling, so a
// 10-alert webhook's read allocated about twice its size). A gzipped body
// is bounded twice by limit: as sent and decompressed (a few KB of gzip
// can inflate to gigabytes); over either, the error is an
// *http.MaxBytesError. An error of the connection (timeout, hang-up) is
// returned as it is, also from under gzip; an error of the gzip data
// itself wraps neither (it is the sender's fault).
// Bytes that grow in memory as they arrive (the body read without a
// buffer of its declared size, or decompressed) are read through count
// when it is not nil.
func readBody(w http.ResponseWriter, req *http.Request, limit int64, gzipped bool, count func(io.Reader) io.Reader) ([]byte, error) {
	r := io.Reader(http.MaxBytesReader(w, req.Body, limit))
	if gzipped {
		return readGzip(w, r, limit, count)
	}
	if n := req.ContentLength; n > 0 && presized(n, limit, false) {
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	if count != nil {
		r = count(r)
	}
	return io.ReadAll(r)
}

// presized reports whether readBody reads a body of declared length n
// into a buffer of that size: not gzipped, within limit and presizeMax.
func presized(n, limit int64, gzipped bool) bool {
	return !gzipped && n <= limit && n <= presizeMax
}

// readGzip decompresses the gzip body r, at most limit bytes of it, the
// decompressed bytes read through count when it is not nil.
func readGzip(w http.ResponseWriter, r io.Reader, limit int64, count func(io.Reader) io.Reader) ([]byte, error) {
	raw := &errRecorder{r: r}
	// gzipError prefers the connection's error (a timeout surfaces from
	// the decompressor too, a hang-up as its unexpected EOF) to the
	// decompressor's, which then means bad gzip data: the sender's fault.
	gzipError := func(err error) error {
		if raw.err != nil {
			return raw.err
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || errors.Is(err, errOverBudget) {
			return err
		}
		return fmt.Errorf("decompressing the gzip body: %v", err) // %v: not the unexpected EOF of a connection
	}
	zr, err := gzip.NewReader(raw)
	if err != nil {
		return nil, gzipError(err)
	}
	defer zr.Close()
	out := io.Reader(http.MaxBytesReader(w, zr, limit))
	if count != nil {
		out = count(out)
	}
	body, err := io.ReadAll(out)
	if err != nil {
		return nil, gzipError(err)
	}
	return body, nil
}

// errRecorder remembers the first error of r other than io.EOF.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// bodyCoding reads the Content-Encoding of a request: gzipped when it is
// gzip (or x-gzip), both false and "" when absent or identity; unsupported
// is the header's value for any other coding, or several.
func bodyCoding(h http.Header) (gzipped bool, unsupported string) {
	values := h.Values("Content-Encoding")
	var codings []string
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	switch {
	case len(codings) == 0:
		return false, ""
	case len(codings) == 1 && (codings[0] == "gzip" || codings[0] == "x-gzip"):
		return true, ""
	}
	return false, strings.Join(values, ", ")
}

// BodyNotReceived reports whether err, from reading a request body, says
// the body did not arrive whole through no fault of its content: the
// server's read deadline passed (IsTimeout), or the connection ended or
// broke before the body did.
func BodyNotReceived(err error) bool {
	return IsTimeout(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// WriteGrace is how long after webhook.timeout the answer may still be
// written: processing is bounded by the timeout itself.
const WriteGrace = 5 * time.Second

// IsTimeout reports whether err is a deadline's: the server's read timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// changesState reports whether a console request may change state: any
// method but GET, HEAD and OPTIONS, except POST /explain, which decides a
// pasted payload and sends nothing.
func changesState(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return r.Method != http.MethodPost || r.URL.Path != "/explain"
}

// KnownHost reports whether host (a request's Host: a name or an IP
// address, with or without a port) is one the router may take a
// state-changing request for: an IP address, localhost, or one of known
// (lower-case names without port: console.external_url's host, the
// --web.listen-address hosts). A request without Host (HTTP/1.0) is no
// browser's and passes. A page of another site that points its own name
// at the router's address (DNS rebinding) is same-origin with the router
// by that name, so SameOrigin lets it through: its Host, that name, is
// refused here.
func KnownHost(host string, known []string) bool {
	name := HostName(host)
	if name == "" || name == "localhost" {
		return true
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	return slices.Contains(known, name)
}

// HostName is host (a Host header, a listen address or a URL's host: a
// name or an IP address, with or without a port) as KnownHost compares
// it: without port, brackets or a trailing dot, lower-case.
func HostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// followedLink reports whether r is a person following a link: a GET of a
// page navigated to by a user's gesture (Sec-Fetch-User), which another
// site's script or auto-submitted form cannot make on its own.
func followedLink(r *http.Request) bool {
	h := r.Header
	return r.Method == http.MethodGet && h.Get("Sec-Fetch-Mode") == "navigate" && h.Get("Sec-Fetch-Dest") == "document" && h.Get("Sec-Fetch-User") == "?1"
}

// SameOrigin reports whether r may change state on behalf of the browser
// that sent it: not a request another site's page made (a form posted
// cross-site carries Sec-Fetch-Site: cross-site or same-site, or an
// Origin naming another host). A request without either header is no
// browser's (curl, a script): authentication (console.auth, the web
// configuration's) is its guard. Requests a DNS-rebinding page makes pass
// it (their Origin is the Host they name): KnownHost refuses those. Browsers attach cached basic-auth credentials to cross-site
// form posts, so authentication alone does not stop them.
func SameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" {
		return s == "same-origin" || s == "none"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	return true
}

// pageWithin reports whether a webhook over webhook.max_concurrent (the
// n-th in flight, the bodies in flight adding up to bytes) is let in all
// the same: it carries an alert decided page (p is a Pager), no more than
// max more webhooks are in flight than the cap, and their bodies fit in
// max of maxBody (the memory the cap is sized for). Ticket webhooks
// holding every slot while Slack rate-limits their posts refused the pages
// behind them, which reached PagerDuty a minute late (an audit).
func pageWithin(p Processor, msg *alert.Message, n, bytes int64, max int, maxBody int64) bool {
	pg, ok := p.(Pager)
	return ok && n <= 2*int64(max) && (maxBody <= 0 || bytes <= int64(max)*maxBody) && pg.Pages(msg)
}
