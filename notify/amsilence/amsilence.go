// Package amsilence creates, lists and expires silences in Alertmanager
// through its API v2 (POST /api/v2/silences, GET /api/v2/silences, DELETE
// /api/v2/silence/{id}), and lists the alerts a silence would match (GET
// /api/v2/alerts). It is what the Slack triage buttons use; the JSON
// shapes are Alertmanager's PostableSilence, GettableSilence and
// GettableAlert.
package amsilence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redact"
	"github.com/alertrouter/alertrouter/notify"
)

// Config is the top-level `alertmanager:` block of the router's config:
// where silences are created.
//
//	alertmanager:
//	  url: http://alertmanager:9093
//	  http_config:
//	    basic_auth: {username: router, password_file: /etc/router/am-password}
type Config struct {
	// URL is Alertmanager's base URL (its --web.external-url, without
	// /api/v2).
	URL string `yaml:"url"`
	// HTTPConfig is the client configuration (auth, TLS, proxy), as in
	// Alertmanager's and Prometheus's own configs.
	HTTPConfig commoncfg.HTTPClientConfig `yaml:"http_config,omitempty"`
	// Timeout bounds one request (default 10s).
	Timeout time.Duration `yaml:"-"`
	// ResolveUnsentAfter is how long a webhook the router answered 5xx
	// that carried a firing alert goes without a retry from Alertmanager
	// before the router asks whether its alerts still fire, and resolves
	// on Alertmanager's behalf those it no longer holds (webhook.Orphans):
	// Alertmanager sends no resolve of a firing it never counted notified.
	// Unset: 5m; 0 turns it off.
	ResolveUnsentAfter *model.Duration `yaml:"resolve_unsent_after,omitempty"`
}

// UnmarshalYAML decodes the section over prometheus/common's client
// defaults (follow_redirects and enable_http2 on), as Alertmanager's and
// Prometheus' http_config read: a section without http_config got Go's
// zero values, and its client followed no redirect (an audit: an
// alertmanager.url answering 307 failed every silence and every question
// to Alertmanager while the other clients followed).
func (c *Config) UnmarshalYAML(unmarshal func(any) error) error {
	*c = Config{HTTPConfig: commoncfg.DefaultHTTPClientConfig}
	type plain Config
	return unmarshal((*plain)(c))
}

// DefaultResolveUnsentAfter is ResolveUnsentAfter when unset.
const DefaultResolveUnsentAfter = 5 * time.Minute

// ResolveUnsent returns ResolveUnsentAfter, or its default when unset.
func (c *Config) ResolveUnsent() time.Duration {
	if c.ResolveUnsentAfter == nil {
		return DefaultResolveUnsentAfter
	}
	return time.Duration(*c.ResolveUnsentAfter)
}

// Validate returns the problems of the block, each prefixed by its YAML key.
func (c *Config) Validate() error {
	var errs []error
	if u, err := redact.HTTPURL(c.URL); err != nil {
		errs = append(errs, fmt.Errorf("url: %w", err)) // its credentials hidden
	} else if u.RawQuery != "" || u.Fragment != "" {
		// The API paths are appended to it (…?token=…/api/v2/silences
		// reaches no API), and a query there is often a credential every
		// error would then print: give credentials in http_config.
		errs = append(errs, fmt.Errorf("url: %q must not have a query or fragment: the API paths are appended to it (give credentials in http_config)", redact.URL(c.URL)))
	}
	if d := c.ResolveUnsentAfter; d != nil && *d < 0 {
		errs = append(errs, fmt.Errorf("resolve_unsent_after: %s is negative (0 turns it off)", d))
	}
	if err := c.HTTPConfig.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("http_config: %s", redact.Text(err.Error()))) // a proxy_url's credentials hidden
	}
	return errors.Join(errs...)
}

// Matcher is one label matcher of a silence.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// Silence is a silence as Alertmanager returns it; ID, Status and
// UpdatedAt are empty in a silence to create.
type Silence struct {
	ID        string    `json:"id,omitempty"`
	Matchers  []Matcher `json:"matchers"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
	Status    *Status   `json:"status,omitempty"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// Status is a silence's state: "active", "pending" or "expired".
type Status struct {
	State string `json:"state"`
}

// Equal returns equality matchers for labels, sorted by name.
func Equal(labels map[string]string) []Matcher {
	out := make([]Matcher, 0, len(labels))
	for n, v := range labels {
		out = append(out, Matcher{Name: n, Value: v, IsEqual: true})
	}
	slices.SortFunc(out, func(a, b Matcher) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Client talks to one Alertmanager. Safe for concurrent use.
type Client struct {
	base string
	http *http.Client
}

// New builds the client of cfg.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("alertmanager: %w", err)
	}
	hc, err := commoncfg.NewClientFromConfig(cfg.HTTPConfig, "alertrouter-silences")
	if err != nil {
		return nil, fmt.Errorf("alertmanager: http_config: %s", redact.Text(err.Error()))
	}
	if cfg.HTTPConfig.FollowRedirects {
		hc.CheckRedirect = notify.KeepCredentialsHome
	}
	hc.Timeout = cfg.Timeout
	if hc.Timeout <= 0 {
		hc.Timeout = 10 * time.Second
	}
	return &Client{base: strings.TrimSuffix(cfg.URL, "/") + "/api/v2", http: hc}, nil
}

// ErrUnconfirmed marks a create whose request went out whole and got no
// answer (the connection lost after it was written, a timeout), and whose
// silence a look-up did not find: Alertmanager may have made it.
var ErrUnconfirmed = errors.New("Alertmanager may have made the silence: the request went out and no answer came")

// lookupTimeout bounds the look-up of a silence whose create got no
// answer; it runs on a deadline of its own (the create's may be spent).
const lookupTimeout = 5 * time.Second

// Create creates s and returns its id.
//
// A create is not idempotent, and its request may be taken with no answer
// coming back: Alertmanager (or a proxy before it) closing the connection
// after reading it, or answering after the timeout. Then Create looks for
// the silence in Alertmanager (GET /api/v2/silences: not expired, the same
// createdBy, comment, matchers and end — the router's comments name the
// message or the command, so they tell its silences apart) and, found,
// returns its id as if it had been answered. Not found, or the look-up
// failing, the error wraps ErrUnconfirmed: the silence may exist, and
// creating it again may make a second one. An error without
// ErrUnconfirmed means nothing was made: the request was not sent whole,
// went onto a kept-alive connection the server had closed while idle, or
// Alertmanager answered with an error status (but 504, a proxy's before
// it: the request may have reached Alertmanager).
func (c *Client) Create(ctx context.Context, s Silence) (string, error) {
	s.ID, s.Status, s.UpdatedAt = "", nil, time.Time{}
	var out struct {
		SilenceID string `json:"silenceID"`
	}
	var wrote atomic.Bool
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
		if w.Err == nil {
			wrote.Store(true)
		}
	}})
	err := c.do(tctx, http.MethodPost, "/silences", s, &out)
	if err == nil && out.SilenceID != "" {
		return out.SilenceID, nil
	}
	if err == nil {
		return "", errors.New("create silence: Alertmanager answered no silenceID")
	}
	var he *HTTPError
	// A proxy's 502, 503 or 504: Alertmanager may have taken the silence
	// and not answered it (a dropped connection behind nginx or Envoy).
	answered := errors.As(err, &he) && he.Status != http.StatusBadGateway && he.Status != http.StatusServiceUnavailable && he.Status != http.StatusGatewayTimeout
	if answered || !wrote.Load() || strings.Contains(err.Error(), "server closed idle connection") {
		return "", fmt.Errorf("create silence: %w", err)
	}
	// Sent, and no answer said what became of it.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
	defer cancel()
	id, lerr := c.find(lctx, s)
	switch {
	case lerr != nil:
		return "", fmt.Errorf("create silence: %w (%w; looking it up failed: %w)", ErrUnconfirmed, err, lerr)
	case id == "":
		return "", fmt.Errorf("create silence: %w (%w; not found in Alertmanager's silences yet)", ErrUnconfirmed, err)
	}
	return id, nil
}

// find returns the id of a silence Alertmanager holds, not expired, made
// as s (createdBy, comment, matchers, end), or "" when there is none.
func (c *Client) find(ctx context.Context, s Silence) (string, error) {
	list, err := c.List(ctx)
	if err != nil {
		return "", err
	}
	want := Text(s.Matchers)
	for _, g := range list {
		if g.Status != nil && g.Status.State == "expired" {
			continue
		}
		// Alertmanager answers times to the millisecond.
		if g.CreatedBy == s.CreatedBy && g.Comment == s.Comment && Text(g.Matchers) == want && g.EndsAt.Sub(s.EndsAt).Abs() < time.Second {
			return g.ID, nil
		}
	}
	return "", nil
}

// Expire ends the silence id now. Expiring a silence that is already
// expired succeeds.
func (c *Client) Expire(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodDelete, "/silence/"+url.PathEscape(id), nil, nil)
	var he *HTTPError
	if errors.As(err, &he) && strings.Contains(he.Body, "already expired") {
		// "already expired" answers 200 on current versions and 500
		// ("silence already expired") on older ones.
		return nil
	}
	if errors.As(err, &he) && he.Status == http.StatusNotFound && he.Body == "" {
		// Alertmanager v0.35 answers the expiry of a silence it does not
		// know 404 with no body, as a proxy may answer a path it does not
		// serve: the silences' list, when it answers, tells them apart
		// (an audit: every Unsilence of a silence lost with Alertmanager's
		// data failed, the button left for good).
		if list, lerr := c.List(ctx); lerr == nil && !slices.ContainsFunc(list, func(g Silence) bool { return g.ID == id }) {
			return fmt.Errorf("expire silence %s: %w (%w: not in its list of silences)", id, err, ErrNotFound)
		}
	}
	if err != nil {
		return fmt.Errorf("expire silence %s: %w", id, err)
	}
	return nil
}

// Get returns the silence id.
func (c *Client) Get(ctx context.Context, id string) (Silence, error) {
	var s Silence
	if err := c.do(ctx, http.MethodGet, "/silence/"+url.PathEscape(id), nil, &s); err != nil {
		return s, fmt.Errorf("get silence %s: %w", id, err)
	}
	return s, nil
}

// List returns every silence Alertmanager knows (expired ones included).
func (c *Client) List(ctx context.Context) ([]Silence, error) {
	var out []Silence
	if err := c.do(ctx, http.MethodGet, "/silences", nil, &out); err != nil {
		return nil, fmt.Errorf("list silences: %w", err)
	}
	return out, nil
}

// HTTPError is a non-2xx answer of Alertmanager.
type HTTPError struct {
	Status int
	Body   string
	// Method is the request's (GET, POST, DELETE).
	Method string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("Alertmanager answered HTTP %d: %s", e.Status, e.Body)
}

// startLead is how far before now a silence created now says it starts:
// more than the skew a Slack click tolerates (5 minutes) between this
// clock and Alertmanager's.
const startLead = 10 * time.Minute

// StartNow is the start of a silence meant to begin at now: a start in the
// past, which Alertmanager moves to its own now (it takes no silence
// starting before it), so that a clock behind Alertmanager's never makes
// the silence pending, muting nothing for minutes (an audit: a replica 4
// minutes ahead created a silence that muted nothing for 4 minutes).
func StartNow(now time.Time) time.Time { return now.Add(-startLead) }

// ErrNotFound is what errors.Is finds in the error of a request about a
// silence Alertmanager does not know: deleted, or lost when Alertmanager
// restarted without its data directory.
var ErrNotFound = errors.New("no such silence in Alertmanager")

// Is reports whether e is ErrNotFound: Alertmanager's answer about a
// silence it does not know — "silence not found" (0.25 answers it 500 to
// expiring one, later versions 404), or a 404 without a body to reading
// one (0.25's). A 404 with another body is not, nor an empty one to an
// expiry (v0.35's answer to an unknown silence: Expire asks the list
// then): a path Alertmanager does not serve ("404 page not found":
// alertmanager.url missing a route prefix, a proxy's), which says nothing
// of the silence (a review: an Unsilence said the silence had ended while
// it still muted the alerts).
func (e *HTTPError) Is(target error) bool {
	return target == ErrNotFound && (strings.Contains(e.Body, "silence not found") ||
		e.Status == http.StatusNotFound && e.Body == "" && e.Method == http.MethodGet)
}

// maxAnswer bounds what is read of an answer of Alertmanager's.
const maxAnswer = 4 << 20

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return err
	}
	if len(b) > maxAnswer {
		// A cut answer would read as malformed JSON: say what it is (a
		// truncated webhook's group of thousands of alerts).
		return fmt.Errorf("Alertmanager's answer is over %d MiB: not read", maxAnswer>>20)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(string(b)), Method: method}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode Alertmanager's answer: %w", err)
		}
	}
	return nil
}
