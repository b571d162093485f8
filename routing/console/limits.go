package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// The console shares the router's process and its memory limit with the
// webhook: what a page costs must not depend on how many people look. Pages
// that read the journal take a render slot (Options.MaxRenders at once; a
// page that finds none free waits up to Options.RenderWait, then is
// answered 503 with Retry-After), and read it newest first keeping only
// what they show (scan.go). The overview, which everyone opens and which
// refreshes itself, is built once for every viewer who asks while it is
// being built, and kept for Options.CacheTTL. Explain has slots of its own
// (maxExplains), the export too (maxExports).

// Defaults of the console's bounds (Options).
const (
	// DefaultMaxRenders is how many pages are built from the journal at
	// once: one, so that on a router of two cores the console's pages
	// never take both from the webhooks (two viewers browsing made the
	// webhook's p99 ten times longer with two).
	DefaultMaxRenders = 1
	// DefaultRenderWait is how long a page waits for a render slot before
	// it is answered 503.
	DefaultRenderWait = 3 * time.Second
	// DefaultCacheTTL is how long a built overview is shared.
	DefaultCacheTTL = 5 * time.Second
)

const (
	// maxExplains bounds the explain requests decided at once: a 4 MiB
	// payload costs most of a second of CPU.
	maxExplains = 2
	// cacheMinDecisions is the smallest overview kept for CacheTTL: one
	// of fewer decisions is cheap to build again, so a quiet router's
	// console shows each decision as soon as it is written.
	cacheMinDecisions = 1000
	// buildTimeout bounds an overview build, which runs on for the other
	// viewers when the one who started it leaves.
	buildTimeout = 30 * time.Second
	// retryAfter is the Retry-After of a busy answer, in seconds.
	retryAfter = 5
)

// errBusy says every slot stayed taken for the whole wait.
var errBusy = errors.New("console busy")

// acquire takes a slot of sem, waiting up to the render wait; release
// gives it back.
func (c *Console) acquire(ctx context.Context, sem chan struct{}) (release func(), err error) {
	release = func() { <-sem }
	select {
	case sem <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(c.opts.RenderWait)
	defer t.Stop()
	select {
	case sem <- struct{}{}:
		return release, nil
	case <-t.C:
		return nil, errBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// readFailed answers a page whose journal read did not happen or failed:
// 503, with Retry-After when the console was busy.
func (c *Console) readFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, errBusy):
		c.logBusy(r.URL.Path)
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		building := fmt.Sprintf("%d pages are being built", c.opts.MaxRenders)
		if c.opts.MaxRenders == 1 {
			building = "a page is being built"
		}
		c.render(w, http.StatusServiceUnavailable, "error", page{Title: "Busy", Refresh: true, Error: fmt.Sprintf(
			"The console is busy: %s from the decision journal and this one waited %s for its turn. "+
				"To keep the router's memory and its webhooks' CPU bounded it was not started: reload in a few seconds.", building, c.opts.RenderWait)})
	case r.Context().Err() != nil:
		// The viewer left: nobody reads the answer.
		http.Error(w, "request cancelled", http.StatusServiceUnavailable)
	default:
		c.storeFailed(w, r, err)
	}
}

// busyLogEvery is how often refused pages are logged, at most.
const busyLogEvery = 10 * time.Second

// logBusy counts a refused page, and logs the count every busyLogEvery.
func (c *Console) logBusy(path string) {
	n := c.refused.Add(1)
	now := time.Now().UnixNano()
	last := c.lastBusyLog.Load()
	if now-last < int64(busyLogEvery) || !c.lastBusyLog.CompareAndSwap(last, now) {
		return
	}
	c.refused.Add(-n)
	c.opts.Logger.Warn("console busy: pages refused with 503, every render slot taken for the whole wait",
		"refused", n, "last_path", path, "max_renders", c.opts.MaxRenders, "render_wait", c.opts.RenderWait)
}

// snapshot is a built overview: the page as served, and what the
// decisions page reuses.
type snapshot struct {
	built time.Time
	// decisions counts the decisions read.
	decisions int
	html      []byte
	options   filterOptions
	// failing says the journal's writes were failing when it was built
	// (its page says so): it is not served once that changes.
	failing bool
}

// overviewCache holds the last overview built; builds share one run
// (singleflight) among the viewers that ask while it runs.
type overviewCache struct {
	mu     sync.Mutex
	last   *snapshot
	builds singleflight.Group
}

// shared reports whether s may still be served at now: recent enough, and
// built while the journal's writes were failing only if they still are,
// and the other way round, so that the banner that says so comes and goes
// with the failure.
func (c *Console) shared(s *snapshot, now time.Time) bool {
	if s == nil || s.decisions < cacheMinDecisions || c.opts.CacheTTL <= 0 || now.Sub(s.built) >= c.opts.CacheTTL {
		return false
	}
	return s.failing == c.failing()
}

// overviewSnapshot returns the overview: the one kept when it is recent
// enough, else the one being built (started now if none is). The build
// runs detached from ctx, for every viewer waiting on it; ctx bounds only
// this viewer's wait.
func (c *Console) overviewSnapshot(ctx context.Context) (*snapshot, error) {
	c.cache.mu.Lock()
	s := c.cache.last
	c.cache.mu.Unlock()
	if c.shared(s, c.opts.Now()) {
		return s, nil
	}
	build := context.WithoutCancel(ctx)
	ch := c.cache.builds.DoChan("overview", func() (any, error) { return c.buildShared(build) })
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*snapshot), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// buildShared builds the overview for every viewer waiting on it and keeps
// it. A panic becomes an error: singleflight would re-raise it in a
// goroutine of its own, where nothing recovers it.
func (c *Console) buildShared(ctx context.Context) (snap *snapshot, err error) {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("console overview build panicked", "panic", p)
			snap, err = nil, errors.New("the overview build failed")
		}
	}()
	snap, err = c.buildOverview(ctx)
	if err == nil {
		c.cache.mu.Lock()
		c.cache.last = snap
		c.cache.mu.Unlock()
	}
	return snap, err
}

// Bounds of the alert text the console shows (annotations): written by
// whoever writes rules, it is cut, not trusted to be short. Each cut is
// at a character and says so ("…").
const (
	// maxSummaryLine bounds the overview's summary line of an incident
	// (one line a card, 200 cards a page).
	maxSummaryLine = 200
	// maxSummary and maxDescription bound an alert's summary and
	// description on its incident's page, in runes.
	maxSummary     = 1000
	maxDescription = 4000
	// maxAnnotations bounds the other annotations listed per alert, and
	// maxAnnotationText each one's name and value, in runes.
	maxAnnotations    = 20
	maxAnnotationText = 500
)
