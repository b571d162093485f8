package console

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Defaults of Options.
const (
	DefaultWindow       = 24 * time.Hour
	DefaultMaxEntries   = 20_000
	DefaultMaxBodyBytes = 4 << 20
	// maxText bounds the text filter, so a query string cannot make every
	// entry scan a huge needle.
	maxText = 256
	// recentLimit is how many decisions the decisions page lists.
	recentLimit = 200
)

// DeadLetters replays dead letters; *journal.Replayer implements it.
type DeadLetters interface {
	// Replay sends the dead letter with the given id again; sent is false
	// when it had already been replayed.
	Replay(ctx context.Context, id string) (sent bool, err error)
	// Replayed reports, for each id, whether it was replayed.
	Replayed(ctx context.Context, ids []string) ([]bool, error)
}

// Options are the console's dependencies.
type Options struct {
	// Journal is read for every page. Required.
	Journal store.Journal
	// Evaluate decides a pasted payload under the current configuration
	// (routing.Pipeline.Evaluate of the config in force); nil disables the
	// Explain page.
	Evaluate journal.Evaluator
	// DeadLetters, when set, adds the replay button; nil keeps the console
	// read-only.
	DeadLetters DeadLetters
	// Sectors returns the sector catalog's ids, the heat map's rows (sectors
	// seen in the journal are added); nil: only the sectors seen.
	Sectors func() []string
	// Window is how far back the overview looks (DefaultWindow when 0).
	Window time.Duration
	// MaxEntries caps the entries read for one page (DefaultMaxEntries).
	MaxEntries int
	// MaxBodyBytes bounds an Explain payload (DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// Console is the console's HTTP handler.
type Console struct {
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
	// exports holds a token per export in progress (maxExports).
	exports chan struct{}
}

// Bounds of GET /journal.jsonl: entries streamed by one export (unless
// limit= asks for fewer or more, up to maxExportLimit), and exports at once.
const (
	DefaultExportLimit = 100_000
	maxExportLimit     = 1_000_000
	maxExports         = 2
)

// IncidentPath returns the path of an incident's page, for links from
// notifications: the console's external URL plus this path.
func IncidentPath(incident string) string { return "/incidents/" + url.PathEscape(incident) }

// New returns the console. It panics only if the embedded templates do not
// parse, which the package's tests rule out.
func New(opts Options) *Console {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Console{opts: opts, pages: parsePages(), mux: http.NewServeMux(), exports: make(chan struct{}, maxExports)}
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	c.mux.HandleFunc("GET /static/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") { // no directory listing
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
	c.mux.HandleFunc("GET /{$}", c.overview)
	c.mux.HandleFunc("GET /decisions", c.decisions)
	c.mux.HandleFunc("GET /incidents/{key}", c.incident)
	c.mux.HandleFunc("GET /explain", c.explainForm)
	c.mux.HandleFunc("POST /explain", c.explain)
	c.mux.HandleFunc("GET /journal.jsonl", c.export)
	c.mux.HandleFunc("GET /dead-letters", c.deadLetters)
	c.mux.HandleFunc("POST /dead-letters/{id}/replay", c.replay)
	c.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, http.StatusNotFound, "no such page: "+r.URL.Path)
	})
	return c
}

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	c.mux.ServeHTTP(w, r)
}

var funcs = template.FuncMap{
	"join":     strings.Join,
	"incident": IncidentPath,
	"ago": func(now, t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return now.Sub(t).Truncate(time.Second).String() + " ago"
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"dur": func(d time.Duration) string {
		s := d.String() // "24h0m0s" → "24h", "1h30m0s" → "1h30m"
		if strings.HasSuffix(s, "h0m0s") {
			return strings.TrimSuffix(s, "0m0s")
		}
		if strings.HasSuffix(s, "m0s") {
			return strings.TrimSuffix(s, "0s")
		}
		return s
	},
	"ms": func(d time.Duration) string {
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	},
}

// parsePages parses each page with the shared layout.
func parsePages() map[string]*template.Template {
	names := []string{"overview", "decisions", "incident", "explain", "deadletters", "error"}
	pages := make(map[string]*template.Template, len(names))
	for _, n := range names {
		pages[n] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+n+".html"))
	}
	return pages
}

// page is what every page's layout needs.
type page struct {
	Title    string
	Nav      string
	Now      time.Time
	Window   time.Duration
	Explain  bool
	Refresh  bool
	Error    string
	Notice   string
	Body     any
	Replayer bool
}

// render executes a page into a buffer first, so a template error becomes a
// clean 500 rather than half a page.
func (c *Console) render(w http.ResponseWriter, status int, name string, p page) {
	p.Now = c.opts.Now()
	p.Window = c.opts.Window
	p.Explain = c.opts.Evaluate != nil
	p.Replayer = c.opts.DeadLetters != nil
	var buf bytes.Buffer
	if err := c.pages[name].Execute(&buf, p); err != nil {
		c.opts.Logger.Error("console page failed to render", "page", name, "err", err)
		http.Error(w, "console page failed to render", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, status, "error", page{Title: http.StatusText(status), Error: msg})
}

// storeFailed answers a journal that cannot be read: 503, the router itself
// keeps routing.
func (c *Console) storeFailed(w http.ResponseWriter, r *http.Request, err error) {
	c.opts.Logger.Warn("console could not read the journal", "path", r.URL.Path, "err", err)
	c.fail(w, r, http.StatusServiceUnavailable, "the decision journal cannot be read right now: "+err.Error())
}

// recent reads the decision and dead-letter entries of the window, newest
// first.
func (c *Console) recent(ctx context.Context, kind journal.Kind, f journal.Filter, limit int) ([]journal.Entry, error) {
	return journal.Read(ctx, c.opts.Journal, journal.Query{
		Since: c.opts.Now().Add(-c.opts.Window), Kind: kind, Filter: f, Newest: true, Limit: limit,
	})
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	entries, err := c.recent(r.Context(), journal.KindDecision, journal.Filter{}, c.opts.MaxEntries)
	if err != nil {
		c.storeFailed(w, r, err)
		return
	}
	dead, err := c.recent(r.Context(), journal.KindDeadLetter, journal.Filter{}, c.opts.MaxEntries)
	if err != nil {
		c.storeFailed(w, r, err)
		return
	}
	var sectors []string
	if c.opts.Sectors != nil {
		sectors = c.opts.Sectors()
	}
	now := c.opts.Now()
	open, openTotal := openIncidents(entries)
	notice := ""
	if len(entries) == c.opts.MaxEntries {
		notice = fmt.Sprintf("Showing the newest %d decisions of the last %s: an incident whose decisions are all older is not listed here (its page, linked from its notifications, still is).", c.opts.MaxEntries, model.Duration(c.opts.Window))
	}
	c.render(w, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", Refresh: true, Notice: notice, Body: overviewBody{
		Incidents: open, OpenTotal: openTotal,
		Heat:    newHeatMap(entries, sectors, now, c.opts.Window),
		Actions: newActionChart(entries, now, c.opts.Window),
		Health:  newHealth(entries, dead),
	}})
}

type overviewBody struct {
	Incidents []incidentView
	// OpenTotal counts the open incidents, listed or not.
	OpenTotal int
	Heat      heatMap
	Actions   actionChart
	Health    health
}

// filterFrom reads and checks the decisions page's query parameters.
func filterFrom(q url.Values) (journal.Filter, error) {
	f := journal.Filter{
		Sector: q.Get("sector"), Action: q.Get("action"), Policy: q.Get("policy"),
		Receiver: q.Get("receiver"), Text: strings.TrimSpace(q.Get("q")),
	}
	switch alert.Action(f.Action) {
	case "", alert.ActionPage, alert.ActionTicket, alert.ActionNone:
	default:
		return f, fmt.Errorf("action %q: want page, ticket or none", f.Action)
	}
	if len(f.Text) > maxText {
		return f, fmt.Errorf("text filter longer than %d bytes", maxText)
	}
	return f, nil
}

type decisionsBody struct {
	Filter  journal.Filter
	Entries []journal.Entry
	Options filterOptions
	Limit   int
}

// filterOptions are the values offered by the filter form's selects.
type filterOptions struct {
	Sectors, Policies, Receivers []string
}

func (c *Console) decisions(w http.ResponseWriter, r *http.Request) {
	f, err := filterFrom(r.URL.Query())
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, "bad filter: "+err.Error())
		return
	}
	all, err := c.recent(r.Context(), journal.KindDecision, journal.Filter{}, c.opts.MaxEntries)
	if err != nil {
		c.storeFailed(w, r, err)
		return
	}
	var shown []journal.Entry
	for i := range all {
		if f.Match(&all[i]) {
			shown = append(shown, all[i])
			if len(shown) == recentLimit {
				break
			}
		}
	}
	c.render(w, http.StatusOK, "decisions", page{Title: "Decisions", Nav: "decisions", Refresh: true,
		Body: decisionsBody{Filter: f, Entries: shown, Options: optionsOf(all), Limit: recentLimit}})
}

type incidentBody struct {
	Incident incidentView
	History  []journal.Entry
}

func (c *Console) incident(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	// The incident's own entries, however many others the window holds:
	// this is the page every notification links to.
	history, err := c.recent(r.Context(), "", journal.Filter{Incident: key}, c.opts.MaxEntries)
	if err != nil {
		c.storeFailed(w, r, err)
		return
	}
	if len(history) == 0 {
		c.fail(w, r, http.StatusNotFound, "no incident "+key+" in the journal of the last "+c.opts.Window.String())
		return
	}
	view := incidentView{Key: key} // only dead letters of it in the window
	if inc := incidents(history); len(inc) > 0 {
		view = inc[0]
	}
	c.render(w, http.StatusOK, "incident", page{Title: "Incident " + key, Nav: "overview", Refresh: true,
		Body: incidentBody{Incident: view, History: history}})
}

type explainBody struct {
	Payload string
	Results []*alert.Result
	Flags   []alert.Rejection
}

func (c *Console) explainForm(w http.ResponseWriter, r *http.Request) {
	if c.opts.Evaluate == nil {
		c.fail(w, r, http.StatusNotFound, "explain is not enabled on this router")
		return
	}
	c.render(w, http.StatusOK, "explain", page{Title: "Explain", Nav: "explain", Body: explainBody{}})
}

// explain decides a pasted payload: a form field "payload", or a JSON body.
func (c *Console) explain(w http.ResponseWriter, r *http.Request) {
	if c.opts.Evaluate == nil {
		c.fail(w, r, http.StatusNotFound, "explain is not enabled on this router")
		return
	}
	if !webhook.SameOrigin(r) {
		// Nothing changes, but a decision over a 4 MiB payload costs the
		// router: another site's page must not have browsers post them.
		c.fail(w, r, http.StatusForbidden, "cross-site explain request refused")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, c.opts.MaxBodyBytes)
	var payload string
	if webhook.IsJSONContentType(r.Header.Get("Content-Type")) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			c.bodyError(w, r, err)
			return
		}
		payload = string(b)
	} else {
		if err := r.ParseForm(); err != nil {
			c.bodyError(w, r, err)
			return
		}
		payload = r.PostForm.Get("payload")
	}
	body := explainBody{Payload: payload}
	if strings.TrimSpace(payload) == "" {
		c.render(w, http.StatusBadRequest, "explain", page{Title: "Explain", Nav: "explain", Error: "paste an Alertmanager webhook payload (JSON)", Body: body})
		return
	}
	msg, err := webhook.Decode([]byte(payload), c.opts.Now())
	if err != nil {
		status := http.StatusBadRequest
		var ie *webhook.InputError
		if errors.As(err, &ie) {
			status = ie.Status
		}
		c.render(w, status, "explain", page{Title: "Explain", Nav: "explain", Error: "payload rejected: " + err.Error(), Body: body})
		return
	}
	body.Results = c.opts.Evaluate(msg)
	body.Flags = msg.Rejected
	c.render(w, http.StatusOK, "explain", page{Title: "Explain", Nav: "explain", Body: body})
}

func (c *Console) bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		c.fail(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("payload larger than %d bytes", c.opts.MaxBodyBytes))
		return
	}
	c.fail(w, r, http.StatusBadRequest, "reading the form: "+err.Error())
}

type deadLettersBody struct {
	Letters []journal.Status
}

func (c *Console) deadLetters(w http.ResponseWriter, r *http.Request) {
	entries, err := c.recent(r.Context(), journal.KindDeadLetter, journal.Filter{}, c.opts.MaxEntries)
	if err != nil {
		c.storeFailed(w, r, err)
		return
	}
	letters := make([]journal.Status, len(entries))
	ids := make([]string, len(entries))
	for i, e := range entries {
		letters[i].Entry = e
		ids[i] = e.ID
	}
	if c.opts.DeadLetters != nil && len(ids) > 0 {
		replayed, err := c.opts.DeadLetters.Replayed(r.Context(), ids)
		if err != nil {
			c.storeFailed(w, r, err)
			return
		}
		for i := range letters {
			letters[i].Replayed = replayed[i]
		}
	}
	p := page{Title: "Dead letters", Nav: "dead-letters", Refresh: true, Body: deadLettersBody{Letters: letters}}
	// The replay button redirects here with the id: only an id is shown, so
	// a crafted link cannot put a message of its own in the banner.
	switch q := r.URL.Query(); {
	case journal.ValidID(q.Get("replayed")):
		p.Notice = "dead letter " + q.Get("replayed") + " sent again"
	case journal.ValidID(q.Get("already")):
		p.Notice = "dead letter " + q.Get("already") + " had already been replayed: nothing sent"
	}
	c.render(w, http.StatusOK, "deadletters", p)
}

func (c *Console) replay(w http.ResponseWriter, r *http.Request) {
	if c.opts.DeadLetters == nil {
		c.fail(w, r, http.StatusForbidden, "this console is read-only: replay with `router dead-letters replay ID`")
		return
	}
	if !webhook.SameOrigin(r) {
		c.fail(w, r, http.StatusForbidden, "cross-site replay request refused")
		return
	}
	id := r.PathValue("id")
	sent, err := c.opts.DeadLetters.Replay(r.Context(), id)
	switch {
	case errors.Is(err, journal.ErrNotFound):
		c.fail(w, r, http.StatusNotFound, err.Error())
	case errors.Is(err, journal.ErrNotDeadLetter):
		c.fail(w, r, http.StatusBadRequest, err.Error())
	case errors.Is(err, journal.ErrDeliveredSince):
		c.fail(w, r, http.StatusConflict, err.Error())
	case err != nil:
		c.opts.Logger.Warn("dead letter replay failed; it stays replayable", "id", id, "err", err)
		c.fail(w, r, http.StatusBadGateway, "replay failed, the dead letter stays replayable: "+err.Error())
	case sent:
		http.Redirect(w, r, "/dead-letters?replayed="+url.QueryEscape(id), http.StatusSeeOther)
	default:
		http.Redirect(w, r, "/dead-letters?already="+url.QueryEscape(id), http.StatusSeeOther)
	}
}

// export answers GET /journal.jsonl?since=24h&kind=decision&limit=N: the
// journal as JSON lines, oldest first, the format `router simulate --from`
// reads. It streams a page of records at a time (the journal is never
// whole in memory), stops at limit entries (DefaultExportLimit) and then
// sets the trailer X-Alertrouter-Truncated: true; at most maxExports run
// at once (429 beyond); another site's page cannot start one (an <img>
// pointing here would make every on-call browser pull the journal).
func (c *Console) export(w http.ResponseWriter, r *http.Request) {
	if !webhook.SameOrigin(r) {
		http.Error(w, "cross-site export request refused", http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	limit := DefaultExportLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > maxExportLimit {
			http.Error(w, fmt.Sprintf("limit %q: want a whole number from 1 to %d", s, maxExportLimit), http.StatusBadRequest)
			return
		}
		limit = n
	}
	since := c.opts.Window
	if s := q.Get("since"); s != "" {
		d, err := model.ParseDuration(s)
		if err != nil || d <= 0 {
			http.Error(w, fmt.Sprintf("since %q: want a positive duration such as 24h or 7d", s), http.StatusBadRequest)
			return
		}
		since = time.Duration(d)
	}
	kind := journal.Kind(q.Get("kind"))
	if kind != "" && kind != journal.KindDecision && kind != journal.KindDeadLetter {
		http.Error(w, fmt.Sprintf("kind %q: want decision or dead_letter", kind), http.StatusBadRequest)
		return
	}
	select {
	case c.exports <- struct{}{}:
		defer func() { <-c.exports }()
	default:
		w.Header().Set("Retry-After", "10")
		http.Error(w, fmt.Sprintf("%d journal exports are running: try again shortly", maxExports), http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Trailer", "X-Alertrouter-Truncated")
	enc := json.NewEncoder(w)
	n := 0 // entries seen, the one past the limit included
	errWrite := errors.New("the client went away")
	err := journal.Each(r.Context(), c.opts.Journal, journal.Query{Since: c.opts.Now().Add(-since), Kind: kind, Limit: limit + 1}, func(e *journal.Entry) error {
		if n++; n > limit {
			return nil // the one past the limit: there is more
		}
		if err := enc.Encode(e); err != nil {
			return errWrite
		}
		return nil
	})
	switch {
	case errors.Is(err, errWrite):
		return
	case err != nil && n == 0:
		http.Error(w, "the decision journal cannot be read right now: "+err.Error(), http.StatusServiceUnavailable)
		return
	case err != nil:
		// Entries were sent: the answer cannot turn into an error. Cut the
		// stream so the client sees it is incomplete.
		c.opts.Logger.Warn("journal export cut short: the journal could not be read further", "err", err)
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("X-Alertrouter-Truncated", strconv.FormatBool(n > limit))
}
