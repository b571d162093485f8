package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPagesRenderTheJournal(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()

	code, body := get(t, srv, "/")
	if code != http.StatusOK || !strings.Contains(body, "No open incident") {
		t.Fatalf("empty journal: %d, want the empty state:\n%s", code, body)
	}
	e.write(t)
	code, body = get(t, srv, "/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	var page journal.Entry
	for _, d := range e.decisions {
		if d.Decision.Action == "page" && d.Status == "firing" {
			page = d
			break
		}
	}
	for _, want := range []string{`data-incident="` + page.Incident + `"`, template(page.Decision.Reasons[0]),
		`<span class="policy">` + page.Decision.Policy, "Delivery health", `id="heatmap"`,
		// The hour axes are in UTC: the page says so.
		"Decisions over 24h, per hour (UTC)", "Sector × hour (UTC)"} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	code, body = get(t, srv, console.IncidentPath(page.Incident))
	if code != http.StatusOK || !strings.Contains(body, template(page.Decision.Reasons[0])) {
		t.Fatalf("incident page %d lacks the reason", code)
	}
	code, body = get(t, srv, "/dead-letters")
	if code != http.StatusOK || !strings.Contains(body, "invalid routing key") || !strings.Contains(body, `class="replay"`) {
		t.Fatalf("dead letters page %d lacks the dead letter:\n%s", code, body)
	}
	for path, want := range map[string]int{
		"/incidents/nope":         http.StatusNotFound,
		"/no-such-page":           http.StatusNotFound,
		"/decisions?action=shout": http.StatusBadRequest,
		"/?offset=-1":             http.StatusBadRequest,
		"/?offset=400":            http.StatusOK,
		"/decisions?q=" + strings.Repeat("x", 300): http.StatusBadRequest,
		"/static/console.css":                      http.StatusOK,
	} {
		if code, _ := get(t, srv, path); code != want {
			t.Errorf("GET %s = %d, want %d", path, code, want)
		}
	}
}

// template escapes s as html/template does in text.
func template(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;")
	return r.Replace(s)
}

var rowRE = regexp.MustCompile(`<tr class="entry" data-action="(\w+)" data-sector="([^"]*)"`)

func TestExportIsWhatSimulateReads(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	code, body := get(t, srv, "/journal.jsonl?kind=decision")
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if code != http.StatusOK || len(lines) != len(e.decisions) {
		t.Fatalf("export: %d with %d lines, want %d decisions", code, len(lines), len(e.decisions))
	}
	var first journal.Entry
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Fingerprint != e.decisions[0].Fingerprint || first.ID == "" {
		t.Fatalf("first exported entry %+v, %v; want %s", first, err, e.decisions[0].Fingerprint)
	}
}

// The export streams at most limit entries and says in its trailer when it
// stopped short; another site's page cannot start one; a bad limit is a
// 400 naming it.
func TestExportIsBoundedAndRefusesOtherSites(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	export := func(path string, header http.Header) (*http.Response, []string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body) // the trailer arrives with the body's end
		return resp, strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	all := len(e.decisions)
	resp, lines := export("/journal.jsonl?kind=decision&limit=2", nil)
	if resp.StatusCode != http.StatusOK || len(lines) != 2 || resp.Trailer.Get("X-Alertrouter-Truncated") != "true" {
		t.Fatalf("limit=2 of %d: %d, %d lines, truncated %q", all, resp.StatusCode, len(lines), resp.Trailer.Get("X-Alertrouter-Truncated"))
	}
	// The whole journal is kept by no cache and tells no other site its URL.
	if cc, rp := resp.Header.Get("Cache-Control"), resp.Header.Get("Referrer-Policy"); cc != "no-store" || rp != "same-origin" {
		t.Errorf("export's Cache-Control %q, Referrer-Policy %q; want no-store, same-origin", cc, rp)
	}
	resp, lines = export(fmt.Sprintf("/journal.jsonl?kind=decision&limit=%d", all), nil)
	if len(lines) != all || resp.Trailer.Get("X-Alertrouter-Truncated") != "false" {
		t.Fatalf("limit=%d: %d lines, truncated %q; want all, false", all, len(lines), resp.Trailer.Get("X-Alertrouter-Truncated"))
	}
	if resp, _ := export("/journal.jsonl", http.Header{"Sec-Fetch-Site": {"cross-site"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-site export (an <img> on another site) answered %d, want 403", resp.StatusCode)
	}
	if resp, _ := export("/journal.jsonl", http.Header{"Sec-Fetch-Site": {"none"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("an export typed in the address bar answered %d, want 200", resp.StatusCode)
	}
	if code, body := get(t, srv, "/journal.jsonl?limit=0"); code != http.StatusBadRequest || !strings.Contains(body, "limit") {
		t.Fatalf("limit=0: %d %s", code, body)
	}
}

// heldJournal holds every read until release is closed, telling entered
// when one starts.
type heldJournal struct {
	store.Journal
	entered chan struct{}
	release chan struct{}
}

func (j heldJournal) RangeJournal(ctx context.Context, q store.JournalQuery) ([]store.JournalRecord, error) {
	select {
	case j.entered <- struct{}{}:
	default:
	}
	<-j.release
	return j.Journal.RangeJournal(ctx, q)
}

// Two exports run at once; a third is refused with 429 and Retry-After
// (each export holds a journal read open for as long as its client
// reads), and is served once one of them ends.
func TestAtMostTwoExportsRunAtOnce(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	j := heldJournal{Journal: e.journal, entered: make(chan struct{}, 16), release: make(chan struct{})}
	srv := httptest.NewServer(console.New(console.Options{Journal: j, Evaluate: e.pipeline.Evaluate, Now: func() time.Time { return e.now }}))
	defer srv.Close()
	codes := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := http.Get(srv.URL + "/journal.jsonl?kind=decision")
			if err != nil {
				codes <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	<-j.entered
	<-j.entered
	// Were it let in, it would wait for the held journal: a bound turns
	// that into a failure instead of a hung test.
	third := &http.Client{Timeout: 30 * time.Second}
	resp, err := third.Get(srv.URL + "/journal.jsonl?kind=decision")
	if err != nil {
		close(j.release)
		t.Fatalf("a third export at once was not refused: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "exports are running") {
		t.Fatalf("a third export at once: %d, Retry-After %q, %s; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(j.release)
	for range 2 {
		if code := <-codes; code != http.StatusOK {
			t.Fatalf("a running export ended %d, want 200", code)
		}
	}
	if code, _ := get(t, srv, "/journal.jsonl?kind=decision"); code != http.StatusOK {
		t.Fatalf("an export after the others ended: %d, want 200", code)
	}
}

// The console reads at most MaxEntries decisions for its lists; an
// incident's page — the one every notification links to — still finds an
// incident whose entries are older than those, and the overview says it
// shows only the newest.
func TestAnIncidentPageFindsEntriesPastTheListCap(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	capped := console.New(console.Options{Journal: e.journal, MaxEntries: 3, Now: func() time.Time { return e.now }})
	srv := httptest.NewServer(capped)
	defer srv.Close()
	recent := map[string]bool{}
	for _, d := range e.decisions[len(e.decisions)-3:] {
		recent[d.Incident] = true
	}
	old := ""
	for _, d := range e.decisions {
		if d.Incident != "" && !recent[d.Incident] {
			old = d.Incident
			break
		}
	}
	if old == "" {
		t.Fatal("the fixture has no incident outside the newest three decisions")
	}
	if code, body := get(t, srv, console.IncidentPath(old)); code != http.StatusOK || !strings.Contains(body, template(old)) {
		t.Fatalf("incident %s past the list cap: %d", old, code)
	}
	if code, body := get(t, srv, "/"); code != http.StatusOK || !strings.Contains(body, "Showing the newest 3 decisions") {
		t.Fatalf("the overview does not say it shows only the newest decisions (%d)", code)
	}
	// An incident of which the page reads only a dead letter (the newest
	// entry) still renders: before, its page crashed the handler.
	dead, err := journal.Read(t.Context(), e.journal, journal.Query{Kind: journal.KindDeadLetter, Newest: true, Limit: 1})
	if err != nil || len(dead) != 1 || dead[0].Incident == "" {
		t.Fatalf("the fixture's dead letter: %+v, %v", dead, err)
	}
	one := httptest.NewServer(console.New(console.Options{Journal: e.journal, MaxEntries: 1, Now: func() time.Time { return e.now }}))
	defer one.Close()
	if code, body := get(t, one, console.IncidentPath(dead[0].Incident)); code != http.StatusOK || !strings.Contains(body, "invalid routing key") {
		t.Fatalf("the page of an incident known by a dead letter only: %d", code)
	}
}

// The overview stays a page in a storm: an incident lists its first
// twenty alerts and says how many more its own page has.
func TestTheOverviewBoundsAnIncidentsAlerts(t *testing.T) {
	e := newEnv(t)
	for i := range 25 {
		e.writer.Write(journal.Entry{Kind: journal.KindDecision, Time: e.now.Add(-time.Minute), Fingerprint: fmt.Sprintf("fp%02d", i),
			Alertname: "GPUHot", Incident: "big/one", Status: "firing", Sector: "llm-inference-gpu",
			Decision: alert.Decision{Action: alert.ActionPage, Policy: "severity"}})
	}
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	code, body := get(t, srv, "/")
	if code != http.StatusOK || !strings.Contains(body, "…and 5 more alerts") || strings.Count(body, "<b>GPUHot</b>") != 20 {
		t.Fatalf("overview: %d, %d alert rows; want 20 and the count of the 5 others", code, strings.Count(body, "<b>GPUHot</b>"))
	}
	if _, page := get(t, srv, console.IncidentPath("big/one")); !strings.Contains(page, "fp24") || !strings.Contains(page, "fp00") {
		t.Fatal("the incident's page does not list all its alerts")
	}
	// At the boundary: one alert past the twenty, one past an incident
	// page's thousand.
	for i := range 1001 {
		e.writer.Write(journal.Entry{Kind: journal.KindDecision, Time: e.now.Add(-time.Minute), Fingerprint: fmt.Sprintf("fp%04d", i),
			Alertname: "GPUHot", Incident: "big/two", Status: "firing", Sector: "llm-inference-gpu",
			Decision: alert.Decision{Action: alert.ActionPage, Policy: "severity"}})
	}
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, page := get(t, srv, console.IncidentPath("big/two")); !strings.Contains(page, "…and 1 more alert: the 1000 most recent") {
		t.Fatal("the page of an incident of 1,001 alerts does not say the one more alert")
	}
	small := newEnv(t)
	for i := range 21 {
		small.writer.Write(journal.Entry{Kind: journal.KindDecision, Time: small.now.Add(-time.Minute), Fingerprint: fmt.Sprintf("fp%02d", i),
			Alertname: "GPUHot", Incident: "big/three", Status: "firing", Sector: "llm-inference-gpu",
			Decision: alert.Decision{Action: alert.ActionPage, Policy: "severity"}})
	}
	if err := small.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	one := httptest.NewServer(small.console)
	defer one.Close()
	if _, page := get(t, one, "/"); !strings.Contains(page, "…and 1 more alert: ") {
		t.Fatal("an incident of 21 alerts: the overview does not say the one more alert")
	}
}

func TestDecisionFiltersNarrowTheList(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	sector := e.sectors[0]
	for _, tc := range []struct {
		name  string
		query url.Values
		f     journal.Filter
	}{
		{"no filter lists every decision", url.Values{}, journal.Filter{}},
		{"action lists only pages", url.Values{"action": {"page"}}, journal.Filter{Action: "page"}},
		{"sector lists only its decisions", url.Values{"sector": {sector}}, journal.Filter{Sector: sector}},
		{"text matches an alertname", url.Values{"q": {"edgecachehit"}}, journal.Filter{Text: "edgecachehit"}},
		{"filters combine", url.Values{"action": {"ticket"}, "sector": {sector}}, journal.Filter{Action: "ticket", Sector: sector}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, srv, "/decisions?"+tc.query.Encode())
			if code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			rows := rowRE.FindAllStringSubmatch(body, -1)
			want := min(e.count(tc.f), 200)
			if len(rows) != want {
				t.Fatalf("%d rows, want %d", len(rows), want)
			}
			for _, r := range rows {
				if tc.f.Action != "" && r[1] != tc.f.Action || tc.f.Sector != "" && r[2] != tc.f.Sector {
					t.Fatalf("row %q escaped the filter %+v", r[0], tc.f)
				}
			}
		})
	}
}

func TestExplainAnswersAPastedPayload(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	payload := string(readTestdata(t, "webhook", "mixed.json"))
	resp, err := srv.Client().PostForm(srv.URL+"/explain", url.Values{"payload": {payload}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Count(string(b), `<article class="explained`) != 5 {
		t.Fatalf("explain = %d with %d alerts, want 200 with 5:\n%s", resp.StatusCode, strings.Count(string(b), `<article class="explained`), b)
	}
	for _, tc := range []struct {
		name, payload string
		want          int
	}{
		{"empty payload", "", http.StatusBadRequest},
		{"not JSON", "{", http.StatusBadRequest},
		{"webhook version 3", string(readTestdata(t, "webhook", "version-3.bad.json")), http.StatusBadRequest},
	} {
		resp, err := srv.Client().PostForm(srv.URL+"/explain", url.Values{"payload": {tc.payload}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 4 {
			t.Errorf("%s: status %d, want a 4xx", tc.name, resp.StatusCode)
		}
	}
	// A webhook sent as text/plain, or with no type, is not read as an
	// empty form ("paste a payload" for one pasted: an audit): 415 naming
	// the types it reads.
	for _, ct := range []string{"text/plain", ""} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/explain", strings.NewReader(payload))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(b), "application/json") {
			t.Errorf("explain with Content-Type %q: %d, want 415 naming application/json", ct, resp.StatusCode)
		}
	}
	huge := strings.NewReader(`{"payload":"` + strings.Repeat("x", console.DefaultMaxBodyBytes+1) + `"}`)
	resp, err = srv.Client().Post(srv.URL+"/explain", "application/json", huge)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("huge payload: %d, want 413", resp.StatusCode)
	}
	// Another site's page cannot make browsers post payloads to decide.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/explain", strings.NewReader(url.Values{"payload": {payload}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site explain: %d, want 403", resp.StatusCode)
	}
}

func TestReplayButtonSendsOnce(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	letters, err := e.replayer.List(t.Context(), e.now.AddDate(0, 0, -1))
	if err != nil || len(letters) != 1 {
		t.Fatalf("dead letters: %v, %v", letters, err)
	}
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	post := func(id string, header http.Header) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dead-letters/"+id+"/replay", nil)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	id := letters[0].ID
	if resp := post(id, http.Header{"Sec-Fetch-Site": {"cross-site"}}); resp.StatusCode != http.StatusForbidden || e.replays.Load() != 0 {
		t.Fatalf("cross-site replay: %d, %d sends", resp.StatusCode, e.replays.Load())
	}
	if resp := post(id, nil); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "replayed=") || e.replays.Load() != 1 {
		t.Fatalf("first replay: %d %s, %d sends", resp.StatusCode, resp.Header.Get("Location"), e.replays.Load())
	}
	if resp := post(id, nil); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "already=") || e.replays.Load() != 1 {
		t.Fatalf("second replay: %d %s, %d sends", resp.StatusCode, resp.Header.Get("Location"), e.replays.Load())
	}
	if resp := post("1-0", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("replay of a missing id: %d", resp.StatusCode)
	}
	if resp := post(e.firstDecisionID(t), nil); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("replay of a decision: %d", resp.StatusCode)
	}
	if _, body := get(t, srv, "/dead-letters"); !strings.Contains(body, ">replayed<") {
		t.Fatal("dead letters page does not show the replay")
	}
	// The banner shows the id the button redirected with, nothing else: a
	// crafted link cannot put its own message there.
	if _, body := get(t, srv, "/dead-letters?replayed="+id); !strings.Contains(body, "dead letter "+id+" sent again") {
		t.Fatal("the banner does not confirm the replay")
	}
	if _, body := get(t, srv, "/dead-letters?already=ALL%20SYSTEMS%20DOWN%20-%20call%20evil.example"); strings.Contains(body, "evil.example") {
		t.Fatal("a crafted link put its text in the banner")
	}
	// No directory listing of the static files.
	if code, _ := get(t, srv, "/static/"); code != http.StatusNotFound {
		t.Fatalf("GET /static/ = %d, want 404 (no listing)", code)
	}
	if code, _ := get(t, srv, "/static/console.css"); code != http.StatusOK {
		t.Fatalf("GET /static/console.css = %d", code)
	}
}

func (e *env) firstDecisionID(t *testing.T) string {
	t.Helper()
	got, err := journal.Read(t.Context(), e.journal, journal.Query{Kind: journal.KindDecision, Limit: 1})
	if err != nil || len(got) == 0 {
		t.Fatal(err)
	}
	return got[0].ID
}

func TestReadOnlyConsoleRefusesReplay(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(console.New(console.Options{Journal: e.journal}))
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/dead-letters/1-0/replay", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("replay on a read-only console: %d, want 403", resp.StatusCode)
	}
	if code, _ := get(t, srv, "/explain"); code != http.StatusNotFound {
		t.Fatalf("explain without an evaluator: %d, want 404", code)
	}
}

// serveWithWebConfig serves h the way `router serve` does, through
// exporter-toolkit with a web config requiring basic auth, and returns the
// base URL.
func serveWithWebConfig(t *testing.T, h http.Handler, user, password string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, "basic_auth_users:\n  %s: %s\n", user, hash), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	systemd := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{l.Addr().String()}, WebSystemdSocket: &systemd, WebConfigFile: &cfgFile}
	done := make(chan error, 1)
	go func() { done <- web.Serve(l, srv, flags, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("web.Serve: %v", err)
		}
	})
	return "http://" + l.Addr().String()
}

func TestWebConfigBasicAuthProtectsTheConsole(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	base := serveWithWebConfig(t, e.console, "ops", "s3cret")
	for _, tc := range []struct {
		name, user, password string
		want                 int
	}{
		{"no credentials", "", "", http.StatusUnauthorized},
		{"wrong password", "ops", "guess", http.StatusUnauthorized},
		{"right credentials", "ops", "s3cret", http.StatusOK},
	} {
		for _, path := range []string{"/", "/decisions", "/dead-letters", "/static/console.css"} {
			req, _ := http.NewRequest(http.MethodGet, base+path, nil)
			if tc.user != "" {
				req.SetBasicAuth(tc.user, tc.password)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s: GET %s = %d, want %d", tc.name, path, resp.StatusCode, tc.want)
			}
		}
	}
}

// downJournal is a journal whose store is unreachable.
type downJournal struct{ store.Journal }

func (downJournal) RangeJournal(context.Context, store.JournalQuery) ([]store.JournalRecord, error) {
	return nil, store.ErrUnavailable
}

func TestAnUnreachableJournalIsA503NotAPanic(t *testing.T) {
	srv := httptest.NewServer(console.New(console.Options{Journal: downJournal{}}))
	defer srv.Close()
	for _, path := range []string{"/", "/decisions", "/dead-letters", "/incidents/x", "/journal.jsonl"} {
		if code, _ := get(t, srv, path); code != http.StatusServiceUnavailable {
			t.Errorf("GET %s with the store down = %d, want 503", path, code)
		}
	}
}

// Every form control of the pages a person fills in has a label a screen
// reader announces (WCAG 1.3.1, 4.1.2): wrapped in <label>, or named by a
// <label for=…>, or an aria-label. The Explain page's payload box had only
// a placeholder, which is not a label.
func TestEveryFormControlHasALabel(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	control := regexp.MustCompile(`<(textarea|select|input)\b[^>]*>`)
	id := regexp.MustCompile(`\bid="([^"]+)"`)
	for _, path := range []string{"/", "/decisions", "/explain", "/dead-letters"} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := string(b)
		for _, loc := range control.FindAllStringIndex(page, -1) {
			tag := page[loc[0]:loc[1]]
			if strings.Contains(tag, `type="hidden"`) || strings.Contains(tag, `type="submit"`) || strings.Contains(tag, "aria-label=") {
				continue
			}
			before := page[:loc[0]]
			if strings.LastIndex(before, "<label") > strings.LastIndex(before, "</label>") {
				continue // inside its label
			}
			if m := id.FindStringSubmatch(tag); m != nil && strings.Contains(page, `<label for="`+m[1]+`"`) {
				continue
			}
			t.Errorf("GET %s: %s has no label", path, tag)
		}
	}
}

// Every page the console answers, an error page included: has a heading
// (the error page had none); links an icon the console serves (without one
// the browser asks for /favicon.ico, a 404 in its console on every visit);
// and is not stored by the browser (no-store), so going back to a page
// fetches it again rather than show a copy still offering a replay button
// for a dead letter replayed since.
func TestEveryPageHasAHeadingAnIconAndIsNotStored(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	icon := regexp.MustCompile(`<link rel="icon" href="([^"]+)"`)
	for path, status := range map[string]int{"/": 200, "/decisions?q=%5B%28.*": 200, "/explain": 200, "/dead-letters": 200,
		console.IncidentPath(e.decisions[0].Incident): 200, "/incidents/nope": 404, "/decisions?action=shout": 400} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := string(b)
		if resp.StatusCode != status {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, status)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("GET %s: Cache-Control %q, want no-store", path, cc)
		}
		if !strings.Contains(page, "<h1>") {
			t.Errorf("GET %s: the page has no <h1>", path)
		}
		m := icon.FindStringSubmatch(page)
		if m == nil {
			t.Errorf("GET %s links no icon: the browser asks for /favicon.ico", path)
			continue
		}
		if code, _ := get(t, srv, m[1]); code != http.StatusOK {
			t.Errorf("GET %s: its icon %s answers %d", path, m[1], code)
		}
	}
}

// Past MaxEntries the decisions search never answers a bare "0 decisions":
// it says how many it read and that older ones were not searched, and it
// looks through the whole window for an exact fingerprint or incident key,
// as the incident page does.
func TestDecisionsSearchSaysWhereItStopped(t *testing.T) {
	e := newEnv(t)
	e.write(t)
	capped := console.New(console.Options{Journal: e.journal, MaxEntries: 3, Now: func() time.Time { return e.now }})
	srv := httptest.NewServer(capped)
	defer srv.Close()
	// The journal is read newest first: the newest three are the three
	// latest-timed decisions.
	newest := slices.SortedStableFunc(slices.Values(e.decisions), func(a, b journal.Entry) int { return b.Time.Compare(a.Time) })
	recent := map[string]bool{}
	for _, d := range newest[:3] {
		recent[d.Fingerprint], recent[d.Alertname], recent[d.Incident] = true, true, true
	}
	var old journal.Entry
	for _, d := range newest[3:] {
		if d.Incident != "" && !recent[d.Fingerprint] && !recent[d.Alertname] && !recent[d.Incident] {
			old = d
			break
		}
	}
	if old.Fingerprint == "" {
		t.Fatal("the fixture has no decision outside the newest three")
	}
	shownRe := regexp.MustCompile(`id="shown">([^<]*)`)
	for _, c := range []struct{ q, want string }{
		{old.Fingerprint, "(the whole window searched for this key)"},
		{old.Incident, "(the whole window searched for this key)"},
	} {
		code, body := get(t, srv, "/decisions?q="+url.QueryEscape(c.q))
		if code != http.StatusOK || !strings.Contains(body, `<code>`+old.Fingerprint+`</code>`) {
			t.Fatalf("q=%s past the cap: %d, the decision is not listed (%q)", c.q, code, shownRe.FindStringSubmatch(body))
		}
		if !strings.Contains(body, "searched for the exact fingerprint or incident key") {
			t.Errorf("q=%s: the page does not say how far it searched", c.q)
		}
		if m := shownRe.FindStringSubmatch(body); m == nil || !strings.Contains(m[1], c.want) {
			t.Errorf("q=%s: the count says %q, want %q", c.q, m, c.want)
		}
	}
	code, body := get(t, srv, "/decisions?q="+url.QueryEscape(old.Alertname))
	m := shownRe.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("q=%s: %d", old.Alertname, code)
	}
	if !strings.Contains(m[1], "among the newest 3 searched") || !strings.Contains(body, "were <b>not searched</b>") {
		t.Fatalf("q=%s past the cap says %q without saying older decisions were not searched", old.Alertname, m[1])
	}
	// Below the cap, no such notice.
	whole := httptest.NewServer(console.New(console.Options{Journal: e.journal, Now: func() time.Time { return e.now }}))
	defer whole.Close()
	if _, body := get(t, whole, "/decisions?q="+url.QueryEscape(old.Alertname)); strings.Contains(body, `id="capped"`) {
		t.Fatal("a search of the whole window says it stopped")
	}
}

// The Explain page showed an alert's bidirectional controls raw, as every
// other page shows them not: a pasted alert named "DiskFull \u202e…"
// reversed the decision's words around it (an audit). Its alertname and
// incident show "[U+202E]".
func TestExplainShowsBidiControls(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.console)
	defer srv.Close()
	payload := `{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"DiskFull \u202eetirw-on","service":"db"},"annotations":{}}]}`
	resp, err := srv.Client().PostForm(srv.URL+"/explain", url.Values{"payload": {payload}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The pasted payload stays as pasted in its textarea; the results
	// follow it.
	_, results, _ := strings.Cut(string(b), "</textarea>")
	if resp.StatusCode != http.StatusOK || strings.ContainsRune(results, '\u202e') || strings.Count(results, "[U&#43;202E]etirw-on") != 2 {
		t.Fatalf("explain = %d; want 200, the alertname and incident showing its U+202E as [U+202E], never raw:\n%s", resp.StatusCode, results)
	}
}
