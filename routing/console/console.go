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
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/notify"
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
	// DefaultWindow is how far back the pages look.
	DefaultWindow = 24 * time.Hour
	// DefaultMaxEntries is how many of the newest decisions the overview
	// and the decisions page read, and how many entries of one incident
	// its page reads.
	DefaultMaxEntries = 20_000
	// DefaultMaxBodyBytes bounds an Explain request's body.
	DefaultMaxBodyBytes = 4 << 20
	// maxText bounds the text filter, so a query string cannot make every
	// entry scan a huge needle.
	maxText = 256
	// recentLimit is how many decisions the decisions page lists.
	recentLimit = 200
	// incidentAlerts and incidentHistory bound an incident's page: the
	// alerts listed (the latest entry of each) and the history lines.
	incidentAlerts  = 1000
	incidentHistory = 500
	// deadLetterList is how many dead letters their page lists, newest
	// first (`router dead-letters list` lists them all).
	deadLetterList = 500
)

// DeadLetters replays dead letters; *journal.Replayer implements it.
type DeadLetters interface {
	// Replay sends the dead letter with the given id again; sent is false
	// when it had already been replayed.
	Replay(ctx context.Context, id string) (sent bool, err error)
	// Marks reports, for each id, whether it was replayed and whether a
	// replay is sending it.
	Marks(ctx context.Context, ids []string) (replayed, replaying []bool, err error)
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
	// MaxBodyBytes bounds an Explain request's body (DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxRenders bounds the pages built from the journal at once — the
	// overview, decisions, an incident's page, dead letters
	// (DefaultMaxRenders when 0). Explain has slots of its own.
	MaxRenders int
	// RenderWait is how long a page that finds every render slot taken
	// (or an explain request, every explain slot) waits for one before it
	// is answered 503 with Retry-After (DefaultRenderWait when 0).
	RenderWait time.Duration
	// CacheTTL is how long a built overview is served to the viewers who
	// ask for it after it (DefaultCacheTTL when 0; negative: not kept,
	// though the viewers who ask while it is being built still share
	// it). An overview of fewer than 1,000 decisions is not kept: it is
	// cheap to build again.
	CacheTTL time.Duration
	// Began says when the store holding the journal began its current
	// state (dedup.Epoch): the overview says when that is inside its
	// window — a new store has no older entries, and a Redis restarted
	// empty, or a router without Redis restarted, lost them, so "no open
	// incident" could mislead. nil: not said.
	Began func(ctx context.Context) (time.Time, error)
	// WriteFailure reports the journal writer's current run of failed
	// appends (journal.Writer.Failure): while there is one, every page but
	// Explain says that the journal is incomplete, since when and why, and
	// the overview does not blame the store's beginning (Began) for what
	// is missing. nil: not said.
	WriteFailure func() (journal.AppendFailure, bool)
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
	// renders holds a token per page being built from the journal
	// (MaxRenders), explains one per explain being decided (maxExplains).
	renders, explains chan struct{}
	cache             overviewCache
	// refused counts the pages refused busy since lastBusyLog (unix ns),
	// so that a flood of them logs a line every busyLogEvery.
	refused, lastBusyLog atomic.Int64
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
	if opts.MaxRenders <= 0 {
		opts.MaxRenders = DefaultMaxRenders
	}
	if opts.RenderWait <= 0 {
		opts.RenderWait = DefaultRenderWait
	}
	if opts.CacheTTL == 0 {
		opts.CacheTTL = DefaultCacheTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Console{opts: opts, pages: parsePages(), mux: http.NewServeMux(), exports: make(chan struct{}, maxExports),
		renders: make(chan struct{}, opts.MaxRenders), explains: make(chan struct{}, maxExplains)}
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
	// Incident keys and label values are in the console's URLs: no page
	// of another site it links to (a runbook, a dashboard) is told them.
	// same-origin, not no-referrer: under no-referrer a browser posts the
	// console's own forms (Explain, Replay) over plain HTTP with Origin
	// "null", which the same-origin check refuses (a review).
	w.Header().Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

var funcs = template.FuncMap{
	"bidi":     notify.ShowBidi, // a label cannot display as something it is not; the CSS isolates every value besides
	"weburl":   notify.WebURL,   // only an http(s) link is drawn: not javascript:, data:
	"join":     strings.Join,
	"incident": IncidentPath,
	"did":      actionText,
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
	// JournalFailure says that the journal's writes are failing (set by
	// execute): what the page shows is incomplete.
	JournalFailure string
}

// render executes a page into a buffer first, so a template error becomes a
// clean 500 rather than half a page.
func (c *Console) render(w http.ResponseWriter, status int, name string, p page) {
	b, err := c.execute(name, p, c.opts.Now())
	if err != nil {
		http.Error(w, "console page failed to render", http.StatusInternalServerError)
		return
	}
	writeHTML(w, status, b)
}

// execute renders a page as of now.
func (c *Console) execute(name string, p page, now time.Time) ([]byte, error) {
	p.Now = now
	p.Window = c.opts.Window
	p.Explain = c.opts.Evaluate != nil
	p.Replayer = c.opts.DeadLetters != nil
	if f, failing := c.writeFailure(); failing && name != "explain" && p.JournalFailure == "" {
		p.JournalFailure = writeFailureBanner(f, now)
	}
	var buf bytes.Buffer
	if err := c.pages[name].Execute(&buf, p); err != nil {
		c.opts.Logger.Error("console page failed to render", "page", name, "err", err)
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFailure returns the journal writer's current run of failed appends
// (Options.WriteFailure); failing is false when there is none.
func (c *Console) writeFailure() (f journal.AppendFailure, failing bool) {
	if c.opts.WriteFailure == nil {
		return f, false
	}
	return c.opts.WriteFailure()
}

// failing reports whether the journal's writes are failing now.
func (c *Console) failing() bool {
	_, failing := c.writeFailure()
	return failing
}

// writeFailureBanner says, at now, that the journal's writes have been
// failing since f.Since and what was lost: the pages read a journal with
// holes, while delivery goes on.
func writeFailureBanner(f journal.AppendFailure, now time.Time) string {
	lost := plural(f.Decisions, "decision")
	if f.DeadLetters > 0 {
		lost += " and " + plural(f.DeadLetters, "dead letter")
	}
	verb := "were"
	if f.Decisions+f.DeadLetters == 1 {
		verb = "was"
	}
	return fmt.Sprintf("This router's journal writes are failing since %s UTC, %s ago (%s): %s %s not recorded; this view is incomplete — pages and tickets are still delivered.",
		f.Since.UTC().Format("2006-01-02 15:04:05"), elapsed(now.Sub(f.Since)), f.Err, lost, verb)
}

// plural says n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// writeHTML answers a page. Pages are not stored by the browser
// (no-store): back and forward fetch them again, so a page left for a
// replay does not come back from the cache still offering the button.
func writeHTML(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
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

// since is the start of the window.
func (c *Console) since() time.Time { return c.opts.Now().Add(-c.opts.Window) }

// overview answers GET / and, with ?offset=N, the incidents the overview
// lists from the N+1th on (moreIncidents).
func (c *Console) overview(w http.ResponseWriter, r *http.Request) {
	offset := 0
	if s := r.URL.Query().Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			c.fail(w, r, http.StatusBadRequest, fmt.Sprintf("offset %q: want a whole number from 0", s))
			return
		}
		offset = n
	}
	if offset > 0 {
		c.moreIncidents(w, r, offset)
		return
	}
	snap, err := c.overviewSnapshot(r.Context())
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	writeHTML(w, http.StatusOK, snap.html)
}

// moreIncidents lists the overview's incidents from offset on, read
// afresh (a render slot, as the overview): the pages past the first are
// rarely asked for, so no build keeps every incident for them.
func (c *Console) moreIncidents(w http.ResponseWriter, r *http.Request, offset int) {
	release, err := c.acquire(r.Context(), c.renders)
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	defer release()
	now := c.opts.Now()
	sc, err := c.scanOverview(r.Context(), now)
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	body := overviewBody{incidentsPage: sc.incidentPages(offset)}
	body.JournalBegan = c.journalBegan(r.Context(), now)
	c.render(w, http.StatusOK, "overview", page{Title: "Open incidents", Nav: "overview", Refresh: true,
		Notice: c.overviewNotice(r.Context(), sc, now, c.failing()), Body: body})
}

// overviewTail bounds, as a multiple of MaxEntries, the decisions the
// overview reads past its newest MaxEntries for the incidents it lists.
const overviewTail = 5

// overviewScan is what the overview reads of the window's decisions.
type overviewScan struct {
	incidents *incidentSet
	act       *activity
	health    *healthAgg
	options   *optionSet
	sent      deliveredSince
	// n counts the decisions read into every aggregate (up to MaxEntries),
	// tail those read past them for the incidents met; complete says the
	// read reached the window's start, at oldest.
	n, tail, maxTail int
	complete         bool
	oldest           time.Time
	since            time.Time
}

// scanOverview reads the newest MaxEntries decisions of the window, one
// at a time, into the overview's aggregates. Past MaxEntries it reads on,
// through the window, up to overviewTail × MaxEntries more decisions, for
// the incidents already met only: an alert whose latest entry is older
// than the newest MaxEntries (one still firing, whose repeats Alertmanager
// sends are not journaled again) must not leave its incident shown
// closed. When that read stops before the window's start, an incident
// none of whose alerts read is firing is of unknown state, never closed.
func (c *Console) scanOverview(ctx context.Context, now time.Time) (*overviewScan, error) {
	sc := &overviewScan{incidents: newIncidentSet(overviewAlerts, now), act: newActivity(now, c.opts.Window), health: newHealthAgg(),
		options: newOptionSet(), sent: deliveredSince{}, maxTail: overviewTail * c.opts.MaxEntries, complete: true,
		since: now.Add(-c.opts.Window)}
	err := c.scan(ctx, journal.KindDecision, sc.since, func(r *record, i int, e *journal.Entry) error {
		if e.Kind != journal.KindDecision {
			return nil
		}
		if sc.n < c.opts.MaxEntries {
			sc.n++
			sc.oldest = e.Time
			sc.incidents.add(e)
			sc.incidents.noteSummary(e, r.summary(i, e))
			sc.act.add(e)
			sc.health.decision(e)
			sc.options.add(e)
			sc.sent.add(r, e)
			return nil
		}
		if sc.tail == sc.maxTail {
			sc.complete = false
			return errStop
		}
		sc.tail++
		sc.oldest = e.Time
		if sc.incidents.addKnown(e) || sc.incidents.addFound(e) {
			sc.incidents.noteSummary(e, r.summary(i, e))
			sc.sent.add(r, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !sc.complete {
		sc.incidents.markUnknown()
	}
	if err := c.scanOthers(ctx, sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// scanOthers reads, in one pass over the window, its entries other than
// decisions, the decisions read first: the dead letters (delivery health,
// up to MaxEntries), and for the incidents listed what was done from
// Slack (journal.KindTriage: the markers) and the dead letters' replays
// (journal.KindReplay: beside the dead letter), up to MaxEntries.
func (c *Console) scanOthers(ctx context.Context, sc *overviewScan) error {
	dead, actions := 0, 0
	return c.scanKinds(ctx, sc.since, otherKinds, func(r *record, i int, e *journal.Entry) error {
		switch e.Kind {
		case journal.KindDeadLetter:
			if dead < c.opts.MaxEntries {
				dead++
				sc.health.deadLetter(e, sc.sent.superseded(e))
			}
		case journal.KindTriage, journal.KindReplay:
			if actions < c.opts.MaxEntries {
				actions++
				if full, ok := r.entry(i); ok {
					sc.incidents.addAction(full, false)
				}
			}
		}
		if dead == c.opts.MaxEntries && actions == c.opts.MaxEntries {
			return errStop
		}
		return nil
	})
}

// otherKinds are the kinds scanOthers reads.
var otherKinds = []journal.Kind{journal.KindDeadLetter, journal.KindTriage, journal.KindReplay}

// incidentPages returns the incidents listed from offset on.
func (sc *overviewScan) incidentPages(offset int) incidentsPage {
	listed, open, unknown := openIncidents(sc.incidents)
	paged, ticketed := sc.incidents.closed()
	p := newIncidentsPage(listed, open, unknown, paged, ticketed, offset)
	if !sc.complete {
		p.ReadBackTo = sc.oldest
	}
	return p
}

// overviewNotice says what the overview read when it stopped at
// MaxEntries before the window's start, or when the journal began inside
// the window — unless failing (the journal's writes are failing): the
// entries missing are then those not written, which the page's banner
// says (writeFailureBanner), not a store that began afresh.
func (c *Console) overviewNotice(ctx context.Context, sc *overviewScan, now time.Time, failing bool) string {
	read := c.readNotice(sc)
	if c.opts.Began != nil && !failing {
		if began, err := c.opts.Began(ctx); err == nil && began.After(sc.since) {
			return strings.TrimSpace(beganNotice(began, now) + " " + read)
		}
	}
	return read
}

// readNotice says what the overview read when it stopped at MaxEntries
// before the window's start ("" when it read the whole window).
func (c *Console) readNotice(sc *overviewScan) string {
	switch {
	case sc.tail > 0 && sc.complete:
		return fmt.Sprintf("Showing the newest %d decisions of the last %s (the charts and delivery health count these). The older decisions were read too, back to the window's start, for the incidents' state: an incident is listed when one of its alerts still fires, however old its decisions, and each alert listed shows its latest state.", c.opts.MaxEntries, model.Duration(c.opts.Window))
	case sc.tail > 0:
		return fmt.Sprintf("Showing the newest %d decisions of the last %s (the charts and delivery health count these). The older decisions were read for the incidents' state for %d more, back to %s only: an incident whose decisions are all older is not listed here, open or not — check PagerDuty and Slack, or open its page from its notifications, which reads all its entries; an incident listed none of whose alerts read is firing is marked \"state unknown\".", c.opts.MaxEntries, model.Duration(c.opts.Window), sc.maxTail, sc.oldest.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return ""
}

// buildOverview reads the window's decisions, then its dead letters,
// Slack actions and replays (scanOverview), one at a time, into the
// overview's aggregates, and renders the page.
func (c *Console) buildOverview(ctx context.Context) (*snapshot, error) {
	release, err := c.acquire(ctx, c.renders)
	if err != nil {
		return nil, err
	}
	defer release()
	now := c.opts.Now()
	sc, err := c.scanOverview(ctx, now)
	if err != nil {
		return nil, err
	}
	var sectors []string
	if c.opts.Sectors != nil {
		sectors = c.opts.Sectors()
	}
	// The banner is the one the snapshot is kept for (shared).
	f, failing := c.writeFailure()
	snap := &snapshot{built: now, decisions: sc.n, options: sc.options.options(), failing: failing}
	body := overviewBody{
		incidentsPage: sc.incidentPages(0),
		Heat:          newHeatMap(sc.act, sectors),
		Actions:       newActionChart(sc.act),
		Health:        sc.health.health(),
	}
	body.JournalBegan = c.journalBegan(ctx, now)
	if c.shared(snap, now) {
		body.SharedFor = c.opts.CacheTTL
	}
	p := page{Title: "Overview", Nav: "overview", Refresh: true, Notice: c.overviewNotice(ctx, sc, now, failing), Body: body}
	if failing {
		p.JournalFailure = writeFailureBanner(f, now)
	}
	snap.html, err = c.execute("overview", p, now)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// journalBegan returns when the store holding the journal began its current
// state, when that is inside the window ending now (zero otherwise, and
// while the journal's writes fail: the entries missing are then those not
// written, which the page's banner says).
func (c *Console) journalBegan(ctx context.Context, now time.Time) time.Time {
	if c.opts.Began == nil || c.failing() {
		return time.Time{}
	}
	began, err := c.opts.Began(ctx)
	if err != nil || !began.After(now.Add(-c.opts.Window)) {
		return time.Time{}
	}
	return began
}

// beganNoticeNow is beganNotice when the journal begins inside the window,
// "" otherwise.
func (c *Console) beganNoticeNow(ctx context.Context) string {
	now := c.opts.Now()
	if began := c.journalBegan(ctx, now); !began.IsZero() {
		return beganNotice(began, now)
	}
	return ""
}

// beganNotice says that the journal begins at began, inside the window,
// now. It does not say why: a store new, restarted or failed over empty,
// and a router without Redis restarted, all look the same from here.
func beganNotice(began, now time.Time) string {
	return fmt.Sprintf("The journal begins at %s UTC, %s ago, when the store's current state began (a new store, a Redis restarted or failed over empty, or a router without Redis restarted): incidents opened and dead letters kept before then are not shown here. If the router ran before then, check PagerDuty and Slack for incidents still open.",
		began.UTC().Format("2006-01-02 15:04:05"), elapsed(now.Sub(began)))
}

// elapsed says d to the second under a minute, to the minute above.
func elapsed(d time.Duration) string {
	if d < time.Minute {
		return model.Duration(d.Truncate(time.Second)).String()
	}
	return model.Duration(d.Truncate(time.Minute)).String()
}

// newIncidentsPage returns the page of listed, the incidents an
// overview lists in its order (views), from offset on; open and unknown
// count them, paged and ticketed the closed ones whose loudest decision
// was a page, a ticket.
func newIncidentsPage(listed []incidentView, open, unknown, paged, ticketed, offset int) incidentsPage {
	ip := incidentsPage{OpenTotal: open, UnknownTotal: unknown, Paged: paged, Ticketed: ticketed,
		Listed: len(listed), Offset: offset, PerPage: overviewIncidents}
	if offset < len(listed) {
		ip.Incidents = listed[offset:min(offset+overviewIncidents, len(listed))]
	}
	ip.From, ip.To = offset+1, offset+len(ip.Incidents)
	if offset+overviewIncidents < len(listed) {
		ip.Next = offset + overviewIncidents
		ip.NextCount = min(overviewIncidents, len(listed)-ip.Next)
	}
	ip.Prev = max(offset-overviewIncidents, 0)
	return ip
}

// incidentsPage is the overview's list of incidents, or one of its pages
// past the first (Offset > 0: the page shows the list alone).
type incidentsPage struct {
	Incidents []incidentView
	// OpenTotal counts the open incidents, listed or not; UnknownTotal
	// those of unknown state (incidentView.Unknown); Listed both.
	OpenTotal, UnknownTotal, Listed int
	// Offset is the index of the first incident listed, From and To the
	// rank of the first and last (1-based), Next the offset of the page
	// after (0: none) and NextCount how many it lists, Prev the offset of
	// the page before, PerPage how many a page lists.
	Offset, From, To, Next, NextCount, Prev, PerPage int
	// Paged and Ticketed count the window's incidents no longer open whose
	// loudest decision was a page, a ticket.
	Paged, Ticketed int
	// ReadBackTo, when set, is the oldest decision the overview read: it
	// stopped there, before the window's start, so an incident whose
	// decisions are all older is not listed, open or not.
	ReadBackTo time.Time
	// JournalBegan, when set, is when the journal begins, inside the
	// window (Console.journalBegan): what was paged before is not known.
	JournalBegan time.Time
}

type overviewBody struct {
	incidentsPage
	Heat    heatMap
	Actions actionChart
	Health  health
	// SharedFor is how long this page is served to every viewer (0: it
	// is built for each).
	SharedFor time.Duration
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
	// Scanned is how many decisions were read; Capped says the read
	// stopped at MaxEntries before the window's start, at Oldest (the
	// oldest decision read), so older ones were not searched.
	Scanned int
	Capped  bool
	Oldest  time.Time
	// Exact is set when the text is an exact fingerprint or incident key
	// searched past MaxEntries, through the whole window: ExactScanned
	// decisions were read for it.
	Exact        bool
	ExactScanned int
	Window       string
}

// filterOptions are the values offered by the filter form's selects.
type filterOptions struct {
	Sectors, Policies, Receivers []string
}

// exactTarget reports whether text may be a fingerprint (16 hex digits) or
// an incident key (it holds a slash), which the decisions page keeps
// looking for, past MaxEntries, through the whole window, as the incident
// page does: matching them needs no record decoded whole.
func exactTarget(text string) bool {
	if strings.Contains(text, "/") {
		return true
	}
	if len(text) != 16 {
		return false
	}
	for _, c := range strings.ToLower(text) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// decisions lists the newest recentLimit decisions that match the
// filters, among the newest MaxEntries, and says so when it stops there
// before the window's start. A text that is an exact fingerprint or
// incident key is looked for past MaxEntries, through the whole window
// (as the incident page does). The filter's options are the overview's
// (the values seen in the same decisions).
func (c *Console) decisions(w http.ResponseWriter, r *http.Request) {
	f, err := filterFrom(r.URL.Query())
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, "bad filter: "+err.Error())
		return
	}
	snap, err := c.overviewSnapshot(r.Context())
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	release, err := c.acquire(r.Context(), c.renders)
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	defer release()
	// The summaries have every field a filter reads but the labels: the
	// text filter decodes whole the records where the others match.
	byFields := f
	byFields.Text = ""
	lower := strings.ToLower(f.Text)
	exact := exactTarget(f.Text)
	body := decisionsBody{Filter: f, Options: snap.options, Limit: recentLimit, Window: model.Duration(c.opts.Window).String()}
	var shown []journal.Entry
	n := 0
	err = c.scan(r.Context(), journal.KindDecision, c.since(), func(rec *record, i int, e *journal.Entry) error {
		if e.Kind != journal.KindDecision {
			return nil
		}
		if !body.Capped && n == c.opts.MaxEntries {
			// A decision past MaxEntries: the search stops here, or looks
			// on for the exact fingerprint or incident only.
			body.Capped, body.Exact = true, exact
			if !exact {
				return errStop
			}
		}
		if body.Capped {
			body.ExactScanned++
			if byFields.Match(e) && (strings.EqualFold(e.Fingerprint, f.Text) || e.Incident == f.Text) {
				shown = append(shown, *e)
				if len(shown) == recentLimit {
					return errStop
				}
			}
			return nil
		}
		n++
		body.Oldest = e.Time
		switch {
		case !byFields.Match(e):
		case f.Text == "":
			shown = append(shown, *e)
		case !rec.mayContain(lower):
		default:
			if full, ok := rec.entry(i); ok && f.Match(full) {
				shown = append(shown, summarize(full))
			}
		}
		if len(shown) == recentLimit {
			return errStop
		}
		return nil
	})
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	body.Scanned, body.Entries = n, shown
	c.render(w, http.StatusOK, "decisions", page{Title: "Decisions", Nav: "decisions", Refresh: true, Body: body, Notice: c.beganNoticeNow(r.Context())})
}

type incidentBody struct {
	Incident incidentView
	History  []journal.Entry
	// Entries counts the incident's entries read, listed in History or
	// not.
	Entries int
}

// incident shows one incident: its own entries of the window, however
// many others there are (the page every notification links to), so it
// reads the whole window; it decodes whole only the records that hold
// entries of the incident.
func (c *Console) incident(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	release, err := c.acquire(r.Context(), c.renders)
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	defer release()
	set := newIncidentSet(incidentAlerts, c.opts.Now())
	var history []journal.Entry
	// actions are the incident's entries, of which addAction keeps the
	// Slack actions and replays once its decisions made the incident.
	var actions []*journal.Entry
	n := 0
	capped := false
	err = c.scan(r.Context(), "", c.since(), func(rec *record, i int, e *journal.Entry) error {
		if e.Incident != key {
			return nil
		}
		if n == c.opts.MaxEntries {
			capped = true // an older entry not read
			return errStop
		}
		full, ok := rec.entry(i)
		if !ok {
			return nil
		}
		set.add(full)
		if full.Kind == journal.KindTriage || full.Kind == journal.KindReplay {
			actions = append(actions, full) // counted once the decisions are
		}
		if len(history) < incidentHistory {
			history = append(history, summarize(full))
		}
		n++
		return nil
	})
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	if n == 0 {
		msg := "no incident " + key + " in the journal of the last " + c.opts.Window.String()
		if began := c.journalBegan(r.Context(), c.opts.Now()); !began.IsZero() {
			msg += ". " + beganNotice(began, c.opts.Now())
		}
		c.fail(w, r, http.StatusNotFound, msg)
		return
	}
	if capped {
		set.markUnknown() // an alert read resolved may have a firing one older
	}
	for _, e := range actions {
		set.addAction(e, true)
	}
	view := incidentView{Key: key} // only dead letters of it in the window
	if inc := set.views(false); len(inc) > 0 {
		view = inc[0]
	}
	c.render(w, http.StatusOK, "incident", page{Title: "Incident " + key, Nav: "overview", Refresh: true,
		Body: incidentBody{Incident: view, History: history, Entries: n}})
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
	if r.ContentLength > c.opts.MaxBodyBytes {
		// Declared too large: answered at once, the body left unread, and
		// the connection closed after the answer (net/http would otherwise
		// read what it can of the body to keep the connection).
		c.bodyError(w, r, &http.MaxBytesError{Limit: c.opts.MaxBodyBytes})
		return
	}
	// The slot is taken before the body is read: a payload costs its
	// size in memory as it arrives, and most of a second of CPU at 4 MiB.
	release, err := c.acquire(r.Context(), c.explains)
	if err != nil {
		if errors.Is(err, errBusy) {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
			c.fail(w, r, http.StatusServiceUnavailable, fmt.Sprintf("%d explain requests are being decided: try again in a few seconds", maxExplains))
			return
		}
		c.readFailed(w, r, err)
		return
	}
	defer release()
	r.Body = http.MaxBytesReader(w, r.Body, c.opts.MaxBodyBytes)
	var payload string
	if webhook.IsJSONContentType(r.Header.Get("Content-Type")) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			c.bodyError(w, r, err)
			return
		}
		payload = string(b)
	} else if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/x-www-form-urlencoded" {
		if err := r.ParseForm(); err != nil {
			c.bodyError(w, r, err)
			return
		}
		payload = r.PostForm.Get("payload")
	} else {
		// JSON sent as text/plain (or with no type) read as an empty form:
		// "paste a payload" for one pasted (an audit).
		c.render(w, http.StatusUnsupportedMediaType, "explain", page{Title: "Explain", Nav: "explain",
			Error: fmt.Sprintf("Content-Type %q: send the payload as application/json, or as the form's payload field (application/x-www-form-urlencoded)", r.Header.Get("Content-Type")), Body: explainBody{}})
		return
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

// bodyError answers an explain request whose body was not read whole: 413
// naming the limit when it is larger, 408 when it did not arrive (slower
// than the server's read timeout, or the connection broke mid-body), 400
// otherwise. The connection is closed after the answer but for a 400: what
// is left of the body is not worth reading.
func (c *Console) bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		w.Header().Set("Connection", "close")
		c.fail(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("payload larger than the explain limit of %s: paste a smaller webhook payload (fewer alerts)", byteSize(c.opts.MaxBodyBytes)))
	case webhook.IsTimeout(err):
		w.Header().Set("Connection", "close")
		c.fail(w, r, http.StatusRequestTimeout, "the payload did not arrive within the server's read timeout: send it again")
	case webhook.BodyNotReceived(err):
		w.Header().Set("Connection", "close")
		c.fail(w, r, http.StatusRequestTimeout, "the payload did not arrive whole (the connection ended or broke mid-body): send it again")
	default:
		c.fail(w, r, http.StatusBadRequest, "reading the form: "+err.Error())
	}
}

// byteSize says n bytes in MiB or KiB when it is a whole number of them.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB (%d bytes)", n>>20, n)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB (%d bytes)", n>>10, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

type deadLettersBody struct {
	Letters []deadLetterRow
	// Total counts the dead letters of the window, listed or not.
	Total int
}

// deadLetterRow is a dead letter listed, with whether it was replayed and
// whether it is superseded: a later notification of its incident was
// delivered to its integration since, so the replay refuses to send it
// (journal.ErrDeliveredSince) and the page offers no button.
type deadLetterRow struct {
	journal.Status
	Superseded bool
	// ResolvedSince: a firing dead letter whose alerts all resolved since
	// (journal.ErrResolvedSince): the replay refuses to send it too.
	ResolvedSince bool
	// FiredSince: a resolve's dead letter whose incident fires again since
	// (journal.ErrFiredSince): the replay refuses to send it too.
	FiredSince bool
	// check reads the decisions since it (journal.SinceCheck, built before
	// summarize drops its results).
	check *journal.SinceCheck
}

// deadLetters lists the newest deadLetterList dead letters of the window
// and counts the others (up to MaxEntries). It reads the decisions since
// the oldest listed for the deliveries that superseded them.
func (c *Console) deadLetters(w http.ResponseWriter, r *http.Request) {
	release, err := c.acquire(r.Context(), c.renders)
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	defer release()
	var letters []deadLetterRow
	total := 0
	err = c.scan(r.Context(), journal.KindDeadLetter, c.since(), func(rec *record, i int, e *journal.Entry) error {
		if e.Kind != journal.KindDeadLetter {
			return nil
		}
		if len(letters) < deadLetterList {
			full, ok := rec.entry(i)
			if !ok {
				return nil
			}
			row := deadLetterRow{Status: journal.Status{Entry: summarize(full)}}
			if full.DeadLetter != nil {
				row.check = journal.NewSinceCheck(full.DeadLetter, full.Time)
			}
			letters = append(letters, row)
		}
		if total++; total == c.opts.MaxEntries {
			return errStop
		}
		return nil
	})
	if err != nil {
		c.readFailed(w, r, err)
		return
	}
	if err := c.supersede(r.Context(), letters); err != nil {
		c.readFailed(w, r, err)
		return
	}
	ids := make([]string, len(letters))
	for i := range letters {
		ids[i] = letters[i].ID
	}
	if c.opts.DeadLetters != nil && len(ids) > 0 {
		replayed, replaying, err := c.opts.DeadLetters.Marks(r.Context(), ids)
		if err != nil {
			c.storeFailed(w, r, err)
			return
		}
		for i := range letters {
			letters[i].Replayed, letters[i].Replaying = replayed[i], replaying[i]
		}
	}
	p := page{Title: "Dead letters", Nav: "dead-letters", Refresh: true, Body: deadLettersBody{Letters: letters, Total: total}, Notice: c.beganNoticeNow(r.Context())}
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

// supersede marks the letters (newest first) a later delivery superseded,
// reading the decisions of the window since the oldest of them.
func (c *Console) supersede(ctx context.Context, letters []deadLetterRow) error {
	if len(letters) == 0 {
		return nil
	}
	wanted := map[[3]string]struct{}{}
	incidents := map[string]bool{}
	for _, l := range letters {
		if d := l.DeadLetter; d != nil && d.Incident != "" {
			wanted[[3]string{d.Incident, d.Receiver, d.Integration}] = struct{}{}
			incidents[d.Incident] = true
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	// From SinceLookback before the oldest, as the replay reads (a resolve
	// decided before its firing's dead letter was written counts).
	since := letters[len(letters)-1].Time.Truncate(time.Millisecond).Add(-journal.SinceLookback)
	if w := c.since(); since.Before(w) {
		since = w
	}
	sent := deliveredSince{}
	later := map[string][]journal.Entry{} // the dead letters' incidents' decisions, newest first
	kept := 0
	err := c.scan(ctx, journal.KindDecision, since, func(rec *record, _ int, e *journal.Entry) error {
		if e.Kind != journal.KindDecision {
			return nil
		}
		if incidents[e.Incident] && kept < c.opts.MaxEntries {
			kept++
			later[e.Incident] = append(later[e.Incident], journal.Entry{Time: e.Time, Incident: e.Incident, Fingerprint: e.Fingerprint,
				Status: e.Status, StartsAt: e.StartsAt, Decision: alert.Decision{Action: e.Decision.Action}, Receivers: slices.Clone(e.Receivers)})
		}
		for _, d := range e.Deliveries {
			if _, ok := wanted[[3]string{e.Incident, d.Receiver, d.Integration}]; ok {
				sent.add(rec, e)
				break
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range letters {
		l := &letters[i]
		l.Superseded = sent.superseded(&l.Entry)
		if l.check == nil || l.Superseded {
			continue
		}
		own := later[l.DeadLetter.Incident]
		for j := len(own) - 1; j >= 0; j-- { // oldest first
			l.check.Observe(&own[j])
		}
		l.ResolvedSince, l.FiredSince = l.check.Resolved(), l.check.Refired()
	}
	return nil
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
	case errors.Is(err, journal.ErrDeliveredSince), errors.Is(err, journal.ErrResolvedSince), errors.Is(err, journal.ErrFiredSince),
		errors.Is(err, journal.ErrInFlight):
		c.fail(w, r, http.StatusConflict, err.Error())
	case sent && err != nil:
		// Sent; a mark of it was not written (its journaled replay keeps
		// it from being sent again).
		c.opts.Logger.Warn("dead letter sent again, not all marked replayed", "id", id, "err", err)
		http.Redirect(w, r, "/dead-letters?replayed="+url.QueryEscape(id), http.StatusSeeOther)
	case errors.Is(err, store.ErrUnavailable):
		c.opts.Logger.Warn("dead letter replay failed; it stays replayable", "id", id, "err", err)
		c.fail(w, r, http.StatusServiceUnavailable, "the state store is unavailable, nothing sent; the dead letter stays replayable: "+err.Error())
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
	if kind != "" && kind != journal.KindDecision && kind != journal.KindDeadLetter && kind != journal.KindTriage && kind != journal.KindReplay {
		http.Error(w, fmt.Sprintf("kind %q: want decision, dead_letter, triage or replay", kind), http.StatusBadRequest)
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
	// The whole journal: no cache (a browser's, a proxy's) keeps a copy.
	w.Header().Set("Cache-Control", "no-store")
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
