package console_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// gateJournal counts the reads of a journal and how many run at once; with
// hold set, every read waits until hold is closed, telling entered when it
// starts.
type gateJournal struct {
	store.Journal
	hold    chan struct{}
	entered chan struct{}
	// onRead, when set, runs at the start of every read.
	onRead func()

	reads, inFlight, maxInFlight atomic.Int32
}

func (j *gateJournal) RangeJournal(ctx context.Context, q store.JournalQuery) ([]store.JournalRecord, error) {
	j.reads.Add(1)
	n := j.inFlight.Add(1)
	defer j.inFlight.Add(-1)
	for m := j.maxInFlight.Load(); n > m && !j.maxInFlight.CompareAndSwap(m, n); m = j.maxInFlight.Load() {
	}
	if j.onRead != nil {
		j.onRead()
	}
	if j.entered != nil {
		select {
		case j.entered <- struct{}{}:
		default:
		}
	}
	if j.hold != nil {
		select {
		case <-j.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return j.Journal.RangeJournal(ctx, q)
}

type answer struct {
	code       int
	retryAfter string
	body       string
	err        error
}

func fetch(srv *httptest.Server, path string) answer {
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
}

// await returns the next answer, failing the test when none comes in a
// minute: a bound that turns a request let through to a held journal into
// a failure instead of a hung test, not a timed assertion.
func await(t *testing.T, answers <-chan answer, what string, j *gateJournal) answer {
	t.Helper()
	select {
	case a := <-answers:
		return a
	case <-time.After(time.Minute):
		t.Fatalf("%s: no answer; %d journal reads in flight", what, j.inFlight.Load())
		return answer{}
	}
}

// Pages that read the journal take one of MaxRenders slots: with both
// slots held by reads that do not end, the other pages wait RenderWait
// and are refused with 503, Retry-After and a message saying why —
// instead of each decoding the journal at once (the audit's four
// parallel GET / took the pod over its memory limit).
func TestPagesReadTheJournalAtMostMaxRendersAtOnce(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	j := &gateJournal{Journal: e.journal, hold: make(chan struct{}), entered: make(chan struct{}, 64)}
	c := console.New(console.Options{Journal: j, Now: func() time.Time { return e.now }, MaxRenders: 2, RenderWait: 100 * time.Millisecond})
	srv := httptest.NewServer(c)
	defer srv.Close() // after the release below
	released := false
	release := func() {
		if !released {
			released = true
			close(j.hold)
		}
	}
	defer release()
	incident := console.IncidentPath(e.decisions[0].Incident)
	// (Not /decisions with /: it waits for the overview being built.)
	paths := []string{"/dead-letters", incident, "/", "/dead-letters", incident, "/dead-letters"}
	answers := make(chan answer, len(paths))
	for _, p := range paths {
		go func() { answers <- fetch(srv, p) }()
	}
	<-j.entered
	<-j.entered
	for i := range len(paths) - 2 {
		a := await(t, answers, fmt.Sprintf("refused page %d", i+1), j)
		if a.code != http.StatusServiceUnavailable || a.retryAfter == "" || !strings.Contains(a.body, "The console is busy: 2 pages are being built") {
			t.Fatalf("a page past the 2 slots: %d, Retry-After %q, %v; want 503 with Retry-After saying the console is busy:\n%s", a.code, a.retryAfter, a.err, a.body)
		}
	}
	if n := j.maxInFlight.Load(); n != 2 {
		t.Fatalf("%d journal reads ran at once, want 2 (MaxRenders)", n)
	}
	release()
	for range 2 {
		if a := await(t, answers, "a held page", j); a.code != http.StatusOK {
			t.Fatalf("a page that held a slot ended %d, %v", a.code, a.err)
		}
	}
	if n := j.maxInFlight.Load(); n != 2 {
		t.Fatalf("%d journal reads ran at once, want 2", n)
	}
}

// A page that finds the slots taken waits for one, and is served once it
// is free.
func TestAPageWaitsForARenderSlot(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	j := &gateJournal{Journal: e.journal, hold: make(chan struct{}), entered: make(chan struct{}, 64)}
	var arrived atomic.Int32
	c := console.New(console.Options{Journal: j, Now: func() time.Time { return e.now }, MaxRenders: 1, RenderWait: time.Hour})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		c.ServeHTTP(w, r)
	}))
	defer srv.Close()
	answers := make(chan answer, 3)
	for _, p := range []string{"/dead-letters", "/dead-letters", console.IncidentPath(e.decisions[0].Incident)} {
		go func() { answers <- fetch(srv, p) }()
	}
	<-j.entered
	for arrived.Load() < 3 {
		runtime.Gosched()
	}
	// A window for the others to start a read of their own, were they
	// let through (with the bound they do not: the window only passes).
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline) && j.inFlight.Load() < 2; {
		time.Sleep(time.Millisecond)
	}
	reading := j.inFlight.Load()
	close(j.hold) // before any failure below: the server's Close waits for the held pages
	if reading != 1 {
		t.Fatalf("%d pages read the journal at once with one slot", reading)
	}
	for range 3 {
		if a := await(t, answers, "a waiting page", j); a.code != http.StatusOK {
			t.Fatalf("a page that waited for its slot: %d %v", a.code, a.err)
		}
	}
	if n := j.maxInFlight.Load(); n != 1 {
		t.Fatalf("%d journal reads ran at once, want 1 (MaxRenders)", n)
	}
}

// Viewers who open the overview while it is being built share that build,
// and those who open it within CacheTTL get it as built: N viewers cost
// the journal reads of one build.
func TestTheOverviewIsBuiltOnceForAllItsViewers(t *testing.T) {
	e := newEnv(t)
	e.fill(t, 120, 10) // 1,200 decisions: an overview worth keeping
	var clock atomic.Int64
	clock.Store(e.now.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }

	probe := &gateJournal{Journal: e.journal}
	one := httptest.NewServer(console.New(console.Options{Journal: probe, Now: now}))
	if a := fetch(one, "/"); a.code != http.StatusOK {
		t.Fatalf("GET / = %d %v", a.code, a.err)
	}
	one.Close()
	perBuild := probe.reads.Load()

	j := &gateJournal{Journal: e.journal, hold: make(chan struct{}), entered: make(chan struct{}, 64)}
	var arrived atomic.Int32
	c := console.New(console.Options{Journal: j, Now: now})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		c.ServeHTTP(w, r)
	}))
	defer srv.Close()
	const viewers = 8
	answers := make(chan answer, viewers)
	for range viewers {
		go func() { answers <- fetch(srv, "/") }()
	}
	<-j.entered
	for arrived.Load() < viewers {
		runtime.Gosched()
	}
	close(j.hold) // before any failure below: the server's Close waits for the held pages
	var first string
	for i := range viewers {
		a := await(t, answers, "a viewer", j)
		if a.code != http.StatusOK {
			t.Fatalf("viewer %d: %d %v", i, a.code, a.err)
		}
		if i == 0 {
			first = a.body
		} else if a.body != first {
			t.Fatal("the viewers got different overviews")
		}
	}
	if got := j.reads.Load(); got != perBuild {
		t.Fatalf("%d viewers at once made %d journal reads; one overview makes %d", viewers, got, perBuild)
	}
	if !strings.Contains(first, "shared by every viewer for 5s") {
		t.Fatal("the overview does not say it is shared")
	}
	for range 3 {
		if a := fetch(srv, "/"); a.code != http.StatusOK || a.body != first {
			t.Fatalf("a viewer within the cache's time: %d, same page %v", a.code, a.body == first)
		}
	}
	if got := j.reads.Load(); got != perBuild {
		t.Fatalf("viewers within %v of the build read the journal again (%d reads, want %d)", console.DefaultCacheTTL, got, perBuild)
	}
	clock.Add(int64(console.DefaultCacheTTL + time.Second))
	if a := fetch(srv, "/"); a.code != http.StatusOK {
		t.Fatalf("GET / after the cache's time: %d", a.code)
	}
	if got := j.reads.Load(); got != 2*perBuild {
		t.Fatalf("after the cache's time: %d journal reads, want one more build (%d)", got, 2*perBuild)
	}
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A page keeps what it shows, not the window's entries: measured at each
// journal read (after a collection), the heap a page holds stays well
// under what the window's decisions cost decoded — which is what every
// page held before (the audit's 216 MB for one GET /).
func TestAPageHoldsWhatItShowsNotTheWindow(t *testing.T) {
	e := newEnv(t)
	incident := e.fill(t, 400, 10)
	base := heapAfterGC()
	all, err := journal.Read(t.Context(), e.journal, journal.Query{Kind: journal.KindDecision})
	whole := int64(heapAfterGC()) - int64(base)
	if err != nil || len(all) != 4000 {
		t.Fatalf("the window: %d decisions, %v", len(all), err)
	}
	runtime.KeepAlive(all)
	all = nil
	for _, path := range []string{"/", "/decisions", "/decisions?q=no-such-alert", "/decisions?q=" + url.QueryEscape(e.decisions0(t)), console.IncidentPath(incident), "/dead-letters"} {
		var peak atomic.Int64
		var base int64
		j := &gateJournal{Journal: e.journal, onRead: func() {
			if held := int64(heapAfterGC()) - base; held > peak.Load() {
				peak.Store(held)
			}
		}}
		c := console.New(console.Options{Journal: j, Now: func() time.Time { return e.now }})
		base = int64(heapAfterGC())
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, rec.Code)
		}
		t.Logf("GET %s held %.1f MB at most; the window's 4,000 decisions decoded are %.1f MB", path, float64(peak.Load())/1e6, float64(whole)/1e6)
		if peak.Load() > whole/5 {
			t.Errorf("GET %s held %.1f MB while reading the journal, over a fifth of the window's decisions decoded (%.1f MB)", path, float64(peak.Load())/1e6, float64(whole)/1e6)
		}
	}
}

// decisions0 is an alertname of the journal filled by fill, for a text
// filter that matches.
func (e *env) decisions0(t *testing.T) string {
	got, err := journal.Read(t.Context(), e.journal, journal.Query{Kind: journal.KindDecision, Newest: true, Limit: 1})
	if err != nil || len(got) == 0 {
		t.Fatal(err)
	}
	return got[0].Alertname
}

// rawPost sends a request's head and the first bytes of its body on a
// connection of its own, and reads the answer; the deadline is a bound for
// a server that waits for the rest, not a timed assertion.
func rawPost(t *testing.T, addr, contentType string, length int, body string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(conn, "POST /explain HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", addr, contentType, length, body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a POST /explain of %d bytes declared: %v", length, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// An explain request that declares a body over the limit is answered 413
// naming the limit at once, its body left unread; one whose body does not
// arrive within the server's read timeout is a 408, not a 400.
func TestExplainAnswersABodyItCannotTake(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	resp, body := rawPost(t, srv.Listener.Addr().String(), "application/json", 1<<30, "")
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "explain limit of 4 MiB") || !resp.Close {
		t.Fatalf("1 GiB declared: %d, close %v:\n%s\nwant 413 naming the limit, the connection closed", resp.StatusCode, resp.Close, body)
	}

	slow := httptest.NewUnstartedServer(e.console)
	slow.Config.ReadTimeout = 500 * time.Millisecond
	slow.Start()
	defer slow.Close()
	for _, ct := range []string{"application/json", "application/x-www-form-urlencoded"} {
		resp, body := rawPost(t, slow.Listener.Addr().String(), ct, 1000, `{"version":"4",`)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "did not arrive") {
			t.Fatalf("%s body slower than the read timeout: %d:\n%s\nwant 408", ct, resp.StatusCode, body)
		}
	}
}

// Explain decides at most two payloads at once; a third waits, then is
// refused with 503 and Retry-After.
func TestAtMostTwoExplainsAtOnce(t *testing.T) {
	e := newEnv(t)
	entered := make(chan struct{}, 8)
	hold := make(chan struct{})
	var deciding atomic.Int32
	eval := func(m *alert.Message) []*alert.Result {
		deciding.Add(1)
		defer deciding.Add(-1)
		entered <- struct{}{}
		<-hold
		return e.pipeline.Evaluate(m)
	}
	srv := httptest.NewServer(console.New(console.Options{Journal: e.journal, Evaluate: eval, RenderWait: 100 * time.Millisecond}))
	defer srv.Close()
	defer func() {
		select {
		case <-hold:
		default:
			close(hold)
		}
	}()
	payload := url.Values{"payload": {string(readTestdata(t, "webhook", "mixed.json"))}}
	answers := make(chan answer, 3)
	for range 3 {
		go func() {
			resp, err := http.PostForm(srv.URL+"/explain", payload)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
		}()
	}
	<-entered
	<-entered
	select {
	case a := <-answers:
		if a.code != http.StatusServiceUnavailable || a.retryAfter == "" || !strings.Contains(a.body, "explain requests are being decided") {
			t.Fatalf("a third explain at once: %d, Retry-After %q, %v:\n%s", a.code, a.retryAfter, a.err, a.body)
		}
	case <-time.After(time.Minute):
		t.Fatalf("a third explain at once was not refused; %d deciding", deciding.Load())
	}
	close(hold)
	for range 2 {
		if a := <-answers; a.code != http.StatusOK {
			t.Fatalf("a held explain ended %d, %v", a.code, a.err)
		}
	}
}

var deadRowRE = regexp.MustCompile(`<tr data-id="`)

// The dead-letters page lists the newest 500 and counts them all; an
// incident's page lists its newest 500 entries and counts them all.
func TestLongListsAreCut(t *testing.T) {
	e := newEnv(t)
	msg, err := webhook.Decode(readTestdata(t, "webhook", "mixed.json"), e.now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	r := e.pipeline.Evaluate(msg)[0]
	n := &alert.Notification{Receiver: "platform", Integration: "pagerduty/0", Incident: "big/one", Kind: alert.KindFiring,
		Action: alert.ActionPage, Results: []*alert.Result{r}, Data: &msg.Data}
	for i := range 510 {
		dl, err := journal.NewDeadLetter(n, errors.New("pagerduty: 400 Bad Request: invalid routing key"), 1, e.now.Add(-time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		e.writer.Write(dl)
	}
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	code, body := get(t, srv, "/dead-letters")
	if rows := len(deadRowRE.FindAllString(body, -1)); code != http.StatusOK || rows != 500 || !strings.Contains(body, "The newest 500 of 510 are listed") {
		t.Fatalf("dead letters: %d with %d rows; want the newest 500 and the count of 510", code, rows)
	}
	code, body = get(t, srv, console.IncidentPath("big/one"))
	if code != http.StatusOK || !strings.Contains(body, "The newest 500 of 510 entries") {
		t.Fatalf("the incident's page: %d, without the count of its 510 entries", code)
	}
}

// By default the console builds one page from the journal at a time: on a
// router of two cores, two viewers browsing (the overview, a search, an
// incident, the dead letters) never take both from the webhooks, which
// the audit saw slow ten times at the p99 with two pages built at once.
// The others wait for the slot, then are answered 503 with Retry-After.
func TestByDefaultOnePageReadsTheJournalAtATime(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	j := &gateJournal{Journal: e.journal, hold: make(chan struct{}), entered: make(chan struct{}, 64)}
	c := console.New(console.Options{Journal: j, Now: func() time.Time { return e.now }, RenderWait: 100 * time.Millisecond})
	srv := httptest.NewServer(c)
	defer srv.Close()
	released := false
	release := func() {
		if !released {
			released = true
			close(j.hold)
		}
	}
	defer release()
	paths := []string{"/dead-letters", console.IncidentPath(e.decisions[0].Incident), "/", "/?offset=200", "/dead-letters"}
	answers := make(chan answer, len(paths))
	for _, p := range paths {
		go func() { answers <- fetch(srv, p) }()
	}
	<-j.entered
	for i := range len(paths) - 1 {
		if n := j.maxInFlight.Load(); n != 1 {
			t.Fatalf("%d journal reads ran at once, want 1", n)
		}
		a := await(t, answers, fmt.Sprintf("refused page %d", i+1), j)
		if a.code != http.StatusServiceUnavailable || a.retryAfter == "" || !strings.Contains(a.body, "The console is busy") {
			t.Fatalf("a page past the one slot: %d, Retry-After %q, %v; want 503 with Retry-After saying the console is busy:\n%s", a.code, a.retryAfter, a.err, a.body)
		}
		if !strings.Contains(a.body, "The console is busy: a page is being built") {
			t.Errorf("the busy page does not say a page is being built:\n%s", a.body)
		}
	}
	if n := j.maxInFlight.Load(); n != 1 {
		t.Fatalf("%d journal reads ran at once, want 1", n)
	}
	release()
	if a := await(t, answers, "the page that held the slot", j); a.code != http.StatusOK {
		t.Fatalf("the page that held the slot ended %d, %v", a.code, a.err)
	}
}
