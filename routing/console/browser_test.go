package console_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
)

var update = flag.Bool("update", false, "write the browser test's screenshots to docs/img for the README")

// browserTimeout bounds the whole browser session; it is a deadline for a
// hung browser, not a timed assertion.
const browserTimeout = 90 * time.Second

// chromium returns the path of the Chromium binary, failing the test (never
// skipping it) when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: the console's browser tests need headless Chromium; run scripts/install-deps.sh (CI does)")
	return ""
}

// browser starts headless Chromium and returns a tab's context; header is
// sent with every request (basic auth credentials).
func browser(t *testing.T, header map[string]any) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // tests may run as root in CI containers
		chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	tab, tcancel := chromedp.NewContext(actx)
	t.Cleanup(tcancel)
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers(header)}); err != nil {
		t.Fatalf("set request headers: %v", err)
	}
	return tab
}

// screenshot captures the viewport, checks it is not blank and writes it
// under the test's temp dir (and docs/img with -update).
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	checkNotBlank(t, name, buf)
	out := filepath.Join(t.TempDir(), "console-"+name+".png")
	if err := os.WriteFile(out, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s: %s", name, out)
	if *update {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", "console-"+name+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkNotBlank asserts a screenshot has the browser's size, is not one
// colour, and has the console's page-red somewhere when it should.
func checkNotBlank(t *testing.T, name string, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", name, err)
	}
	bounds := img.Bounds()
	if bounds.Dx() < 1000 || bounds.Dy() < 700 {
		t.Fatalf("screenshot %s is %v, want the 1400×1000 window", name, bounds.Size())
	}
	colours := map[uint32]int{}
	background := 0
	total := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 4 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			c := (r>>11)<<10 | (g>>11)<<5 | b>>11
			colours[c]++
			total++
			if r>>8 > 240 && g>>8 > 240 && b>>8 > 240 {
				background++
			}
		}
	}
	if len(colours) < 8 {
		t.Fatalf("screenshot %s has %d colours: blank page?", name, len(colours))
	}
	if ink := 1 - float64(background)/float64(total); ink < 0.05 {
		t.Fatalf("screenshot %s is %.1f%% non-background: blank page?", name, 100*ink)
	}
}

func basicAuth(user, password string) map[string]any {
	return map[string]any{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
}

func evalInt(t *testing.T, tab context.Context, expr string) int {
	t.Helper()
	n, err := chromedp.Run(tab, chromedp.Evaluate[int](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return n
}

func do(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tab, steps...); err != nil {
		t.Fatal(err)
	}
}

func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// submit clicks sel and waits for the page it leads to.
func submit(t *testing.T, tab context.Context, sel string) {
	t.Helper()
	resp, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	if resp.Status != 200 {
		t.Fatalf("click %s: answered %d", sel, resp.Status)
	}
}

// navigate runs script, a navigation (location.reload(), history.back()),
// and waits for the page it fetches; a page the browser shows from its
// copy, fetched from nowhere, leaves it waiting until the browser's
// deadline.
func navigate(t *testing.T, tab context.Context, script string) {
	t.Helper()
	resp, err := chromedp.RunResponse(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](script)(ctx, tg)
		return err
	}))
	if err != nil {
		t.Fatalf("%s: %v (no page fetched: the browser showed its copy?)", script, err)
	}
	if resp.Status != 200 {
		t.Fatalf("%s: %s answered %d", script, resp.URL, resp.Status)
	}
}

// watchErrors records what the browser reports wrong on tab: a JavaScript
// exception, a console error, a resource that failed to load or answered
// 4xx or 5xx (a missing favicon included). It returns what it has so far.
func watchErrors(t *testing.T, tab context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var errs []string
	add := func(s string) {
		mu.Lock()
		errs = append(errs, s)
		mu.Unlock()
	}
	err := chromedp.Listen(tab, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			add("exception: " + e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				add("console.error")
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				add("console: " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *network.EventLoadingFailed:
			add("load failed: " + e.ErrorText)
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				add(fmt.Sprintf("%d %s", e.Response.Status, e.Response.URL))
			}
		}
	})
	if err != nil {
		t.Fatalf("listen to the browser: %v", err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}
}

func TestConsoleInABrowser(t *testing.T) {
	e := newEnv(t)
	base := serveWithWebConfig(t, e.console, "ops", "s3cret")
	tab := browser(t, basicAuth("ops", "s3cret"))
	browserErrors := watchErrors(t, tab)

	// Before any webhook the overview says nothing is open.
	do(t, tab, chromedp.Navigate(base+"/"))
	if s := text(t, tab, "#incidents"); !strings.Contains(s, "No open incident") {
		t.Fatalf("empty journal, overview says: %q", s)
	}

	e.write(t)
	t.Run("the incident appears with its decision and reasons", func(t *testing.T) {
		page := e.decisions[0]
		for _, d := range e.decisions {
			if d.Decision.Action == "page" && d.Status == "firing" {
				page = d
				break
			}
		}
		sel := fmt.Sprintf(`article.incident[data-incident=%q]`, page.Incident)
		do(t, tab, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(sel)))
		card := text(t, tab, sel)
		for _, want := range []string{"page", page.Decision.Policy, page.Decision.Reasons[0], page.Alertname, page.Sector} {
			if !strings.Contains(card, want) {
				t.Errorf("incident card lacks %q:\n%s", want, card)
			}
		}
		// Each delivery shown says the notification was sent, not the
		// deduplicated repeats of the webhooks that followed it.
		shown := evalInt(t, tab, `document.querySelectorAll("article.incident .delivery > .badge:first-child").length`)
		notSent := evalInt(t, tab, `[...document.querySelectorAll("article.incident .delivery > .badge:first-child")].filter(b => b.textContent != "sent").length`)
		if shown == 0 || notSent != 0 {
			t.Errorf("the overview shows %d deliveries, %d of them not as sent", shown, notSent)
		}
		screenshot(t, tab, "overview")
	})

	t.Run("the heat map has one cell per sector and hour", func(t *testing.T) {
		cells := evalInt(t, tab, `document.querySelectorAll("#heatmap rect.cell").length`)
		if want := len(e.sectors) * 24; cells != want {
			t.Fatalf("heat map has %d cells, want %d sectors × 24 hours = %d", cells, len(e.sectors), want)
		}
		if filled := evalInt(t, tab, `document.querySelectorAll("#heatmap rect.cell:not(.empty)").length`); filled == 0 {
			t.Fatal("heat map has no filled cell")
		}
		do(t, tab, chromedp.ScrollIntoView(chromedp.CSS("#activity")))
		screenshot(t, tab, "heatmap")
	})

	t.Run("filters narrow the list", func(t *testing.T) {
		do(t, tab, chromedp.Navigate(base+"/decisions"), chromedp.WaitVisible(chromedp.CSS("#shown")))
		all := evalInt(t, tab, `document.querySelectorAll("tr.entry").length`)
		do(t, tab, chromedp.SetValue(chromedp.CSS(`select[name=action]`), "page"))
		submit(t, tab, `form.filters button[type=submit]`)
		loc, err := chromedp.Run(tab, chromedp.Location())
		if err != nil || !strings.Contains(loc, "action=page") {
			t.Fatalf("the filter form did not submit: at %s, %v", loc, err)
		}
		pages := evalInt(t, tab, `document.querySelectorAll("tr.entry").length`)
		others := evalInt(t, tab, `document.querySelectorAll("tr.entry:not([data-action=page])").length`)
		if pages == 0 || pages >= all || others != 0 {
			t.Fatalf("action=page lists %d rows (%d not pages) of %d", pages, others, all)
		}
		screenshot(t, tab, "decisions")
		do(t, tab,
			chromedp.SetValue(chromedp.CSS(`input[name=q]`), "EdgeCacheHitRatioLow"),
			chromedp.SetValue(chromedp.CSS(`select[name=action]`), ""),
		)
		submit(t, tab, `form.filters button[type=submit]`)
		rows := evalInt(t, tab, `document.querySelectorAll("tr.entry").length`)
		matching := evalInt(t, tab, `[...document.querySelectorAll("tr.entry")].filter(r => r.textContent.includes("EdgeCacheHitRatioLow")).length`)
		if rows == 0 || rows != matching || rows >= all {
			t.Fatalf("text filter lists %d rows, %d of them matching, of %d", rows, matching, all)
		}
	})

	t.Run("explain answers a pasted payload", func(t *testing.T) {
		payload := string(readTestdata(t, "webhook", "mixed.json"))
		do(t, tab, chromedp.Navigate(base+"/explain"), chromedp.SetValue(chromedp.CSS(`#payload`), payload))
		submit(t, tab, `#explain`)
		do(t, tab, chromedp.WaitVisible(chromedp.CSS(`#results`)))
		if n := evalInt(t, tab, `document.querySelectorAll("article.explained").length`); n != 5 {
			t.Fatalf("explain shows %d alerts, want the payload's 5", n)
		}
		main := text(t, tab, "main")
		for _, want := range []string{"APIErrorBudgetBurn", "NodeFilesystemAlmostFull", "VLLMTimeToFirstTokenHigh", "receivers"} {
			if !strings.Contains(main, want) {
				t.Errorf("explain lacks %q", want)
			}
		}
		do(t, tab, chromedp.ScrollIntoView(chromedp.CSS("#results")))
		screenshot(t, tab, "explain")
	})

	t.Run("the replay button sends a dead letter once", func(t *testing.T) {
		do(t, tab, chromedp.Navigate(base+"/dead-letters"), chromedp.WaitVisible(chromedp.CSS(`button.replay`)))
		screenshot(t, tab, "dead-letters")
		submit(t, tab, `button.replay`)
		if notice := text(t, tab, `p.notice`); !strings.Contains(notice, "sent again") || e.replays.Load() != 1 {
			t.Fatalf("after replay: notice %q, %d sends", notice, e.replays.Load())
		}
		if n := evalInt(t, tab, `document.querySelectorAll("button.replay").length`); n != 0 {
			t.Fatalf("a replayed dead letter still offers %d replay buttons", n)
		}
		// The address no longer says what was sent: a reload (or the live
		// refresh) does not announce the send again.
		if loc, err := chromedp.Run(tab, chromedp.Location()); err != nil || strings.Contains(loc, "replayed=") {
			t.Fatalf("after the replay the page stays at %s (%v): a reload would announce the send again", loc, err)
		}
		navigate(t, tab, "location.reload()")
		if n := evalInt(t, tab, `document.querySelectorAll("p.notice").length`); n != 0 || e.replays.Load() != 1 {
			t.Fatalf("after a reload: %d notices, %d sends; want none and still one", n, e.replays.Load())
		}
		// Back to the page the button was clicked on: fetched again (not
		// the browser's copy), so it no longer offers the button.
		navigate(t, tab, "history.back()")
		if n := evalInt(t, tab, `document.querySelectorAll("button.replay").length`); n != 0 {
			t.Fatalf("back on the page before the replay, it still offers %d replay buttons (a stale copy)", n)
		}
	})

	t.Run("no page logged an error or failed to load a resource", func(t *testing.T) {
		if errs := browserErrors(); len(errs) > 0 {
			t.Fatalf("the browser reported:\n%s", strings.Join(errs, "\n"))
		}
	})

	t.Run("basic auth is enforced", func(t *testing.T) {
		anon := browser(t, map[string]any{"X-Test": "no-credentials"})
		// Headless Chromium answers the 401 challenge by failing the
		// navigation with ERR_INVALID_AUTH_CREDENTIALS (no prompt to show).
		resp, err := chromedp.RunResponse(anon, chromedp.Navigate(base+"/"))
		switch {
		case err != nil && strings.Contains(err.Error(), "ERR_INVALID_AUTH_CREDENTIALS"):
		case err != nil:
			t.Fatal(err)
		case resp.Status != 401:
			t.Fatalf("without credentials the browser got %d, want 401", resp.Status)
		}
		if body := text(t, anon, "body"); strings.Contains(body, "Open incidents") {
			t.Fatal("the console rendered without credentials")
		}
	})
}

// A 20,000-character label value wraps inside its cell instead of widening
// the page (it made the incident page 171,424 px wide, drawn over the
// decision column), and a bidi override in a label neither reverses what
// the console shows nor moves the text around it.
func TestHostileLabelValuesKeepTheLayout(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("A", 20000)
	for i, probe := range []struct{ name, label, value string }{
		{"LongValueProbe", "long", long},
		{"BidiProbe", "service", "pay\u202egnp.exe"},
	} {
		incident := probe.name + "/unknown/" + probe.value
		e.writer.Write(journal.Entry{Kind: journal.KindDecision, Time: e.now.Add(-time.Duration(i+1) * time.Minute),
			Fingerprint: fmt.Sprintf("%016x", i+1), Alertname: probe.name, Status: "firing",
			Labels:   map[string]string{"alertname": probe.name, "severity": "warning", probe.label: probe.value},
			Decision: alert.Decision{Action: alert.ActionTicket, Policy: "severity", Reasons: []string{`severity="warning" → ticket`}},
			Incident: incident, Receivers: []string{"slack"}})
	}
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	base := serveWithWebConfig(t, e.console, "ops", "s3cret")
	tab := browser(t, basicAuth("ops", "s3cret"))
	fits := func(page string) {
		t.Helper()
		if w, inner := evalInt(t, tab, `document.documentElement.scrollWidth`), evalInt(t, tab, `window.innerWidth`); w > inner {
			t.Errorf("%s is %d px wide in a %d px window", page, w, inner)
		}
	}

	longPage := base + console.IncidentPath("LongValueProbe/unknown/"+long)
	do(t, tab, chromedp.Navigate(longPage), chromedp.WaitVisible(chromedp.CSS("table.alerts")))
	fits("the incident page of a 20,000-character label")
	// The labels cell ends where the decision cell begins: the value is
	// not drawn over the decision and its reasons.
	if overlap := evalInt(t, tab, `(() => {
		const row = document.querySelector("table.alerts tbody tr");
		const labels = row.querySelector("td.labels").getBoundingClientRect();
		const decision = row.cells[3].getBoundingClientRect();
		let right = 0;
		for (const r of row.querySelector("td.labels").getClientRects()) right = Math.max(right, r.right);
		for (const s of row.querySelectorAll("td.labels .label-pair")) for (const r of s.getClientRects()) right = Math.max(right, r.right);
		return Math.ceil(right - decision.left);
	})()`); overlap > 0 {
		t.Errorf("the label value runs %d px into the decision cell", overlap)
	}
	if s := text(t, tab, "table.alerts tbody tr td:nth-child(4)"); !strings.Contains(s, `severity="warning" → ticket`) {
		t.Errorf("the decision cell reads %q", s)
	}
	do(t, tab, chromedp.Navigate(base+"/decisions"), chromedp.WaitVisible(chromedp.CSS("table.decisions")))
	fits("the decisions page")

	do(t, tab, chromedp.Navigate(base+console.IncidentPath("BidiProbe/unknown/pay\u202egnp.exe")), chromedp.WaitVisible(chromedp.CSS("h1 code")))
	fits("the incident page of a bidi label")
	// The override is shown, not obeyed, and the status badge stays after
	// the key.
	if s := text(t, tab, "h1 code"); s != "BidiProbe/unknown/pay[U+202E]gnp.exe" {
		t.Errorf("the incident key reads %q", s)
	}
	if after := evalInt(t, tab, `(() => {
		const rects = document.querySelector("h1 code").getClientRects();
		const code = rects[rects.length - 1];
		const badge = document.querySelector("h1 code ~ .badge").getBoundingClientRect();
		return badge.left >= code.right || badge.top >= code.bottom ? 1 : 0;
	})()`); after != 1 {
		t.Error("the status badge is drawn inside the incident key")
	}
	do(t, tab, chromedp.Navigate(base+"/decisions?q=BidiProbe"), chromedp.WaitVisible(chromedp.CSS("table.decisions")))
	if s := text(t, tab, "table.decisions tbody tr td:nth-child(5)"); !strings.Contains(s, "pay[U+202E]gnp.exe") {
		t.Errorf("the decisions page shows the incident as %q", s)
	}
}

// The overview lists 200 incidents, loudest first: it says so, and the
// ones after — newer tickets behind older pages — are a click away.
// Before, it said "the 200 most recent" and nothing reached the others.
func TestTheOpenIncidentsPastTheFirstPageAreReachable(t *testing.T) {
	e := newEnv(t)
	for i := range 200 {
		e.writer.Write(probe(e.now.Add(-2*time.Hour), fmt.Sprintf("paged/%03d", i), fmt.Sprintf("%016x", i+1), "firing", alert.ActionPage))
	}
	for i := range 5 {
		e.writer.Write(probe(e.now.Add(-5*time.Minute), fmt.Sprintf("ticketed/%d", i), fmt.Sprintf("%016x", 0x1000+i), "firing", alert.ActionTicket))
	}
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	base := serveWithWebConfig(t, e.console, "ops", "s3cret")
	tab := browser(t, basicAuth("ops", "s3cret"))
	browserErrors := watchErrors(t, tab)

	do(t, tab, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#listed")))
	if s := text(t, tab, "#listed"); !strings.Contains(s, "Listed: 1–200 of 205, pages first, then tickets, the most recently journaled first among equals") {
		t.Errorf("the overview says %q", s)
	}
	if n, tickets := evalInt(t, tab, `document.querySelectorAll("article.incident").length`), evalInt(t, tab, `document.querySelectorAll("article.incident.ticket").length`); n != 200 || tickets != 0 {
		t.Fatalf("the first page lists %d incidents, %d tickets; want the 200 pages", n, tickets)
	}
	submit(t, tab, "#next-page")
	if loc, err := chromedp.Run(tab, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/?offset=200") {
		t.Fatalf("the next page is at %s (%v)", loc, err)
	}
	if n, tickets := evalInt(t, tab, `document.querySelectorAll("article.incident").length`), evalInt(t, tab, `document.querySelectorAll("article.incident.ticket").length`); n != 5 || tickets != 5 {
		t.Fatalf("the next page lists %d incidents, %d tickets; want the 5 tickets", n, tickets)
	}
	if s := text(t, tab, "#listed"); !strings.Contains(s, "Listed: 201–205 of 205") {
		t.Errorf("the next page says %q", s)
	}
	if n := evalInt(t, tab, `document.querySelectorAll("#activity, #health, #next-page").length`); n != 0 {
		t.Errorf("the next page repeats the charts or offers a page after the last (%d elements)", n)
	}
	submit(t, tab, "#prev-page")
	if n := evalInt(t, tab, `document.querySelectorAll("article.incident.page").length`); n != 200 {
		t.Fatalf("back on the first page: %d pages listed", n)
	}
	if errs := browserErrors(); len(errs) > 0 {
		t.Fatalf("the browser reported:\n%s", strings.Join(errs, "\n"))
	}
}

// The alert's annotations and what was done in Slack are visible in a
// browser, as text: a <script> in a summary or a user name is shown, not
// run, and a javascript: link is not drawn.
func TestAnnotationsAndSlackActionsInABrowser(t *testing.T) {
	e := newEnv(t)
	e.writer.Write(annotatedProbe(e.now.Add(-30*time.Minute), "ledger/down", "00000000000000a1"))
	e.writer.Write(probe(e.now.Add(-20*time.Minute), "search/ticket", "00000000000000a2", "firing", alert.ActionTicket))
	e.writer.Write(
		triageEntry(e.now.Add(-10*time.Minute), "search/ticket", journal.Triage{Action: journal.TriageEscalate, UserID: "U1", UserName: "alice<script>x()</script>"}),
		triageEntry(e.now.Add(-5*time.Minute), "ledger/down", journal.Triage{Action: journal.TriageAck, UserID: "U2", UserName: "bob"}),
	)
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	base := serveWithWebConfig(t, e.console, "ops", "s3cret")
	tab := browser(t, basicAuth("ops", "s3cret"))
	browserErrors := watchErrors(t, tab)

	do(t, tab, chromedp.Navigate(base+console.IncidentPath("ledger/down")), chromedp.WaitVisible(chromedp.CSS("td.alert-text .summary")))
	if s := text(t, tab, "td.alert-text .summary"); s != "Ledger <script>alert(1)</script> is down in eu-1" {
		t.Errorf("the summary reads %q", s)
	}
	do(t, tab, chromedp.WaitVisible(chromedp.CSS("td.alert-text .description")), chromedp.WaitVisible(chromedp.CSS("a.runbook")), chromedp.WaitVisible(chromedp.CSS(".mark.acked")))
	if n := evalInt(t, tab, `document.querySelectorAll("main script, a[href^='javascript'], a[href^='data'], a.dashboard").length`); n != 0 {
		t.Errorf("the incident page has %d script elements or script links", n)
	}
	if s := text(t, tab, ".mark.acked"); !strings.Contains(s, "acknowledged by bob") {
		t.Errorf("the acknowledgement reads %q", s)
	}
	if s := text(t, tab, "table.triage"); !strings.Contains(s, "acknowledged in PagerDuty") {
		t.Errorf("the Slack actions read %q", s)
	}
	screenshot(t, tab, "incident")

	do(t, tab, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`article[data-incident="ledger/down"] .summary-line`)))
	if s := text(t, tab, `article[data-incident="ledger/down"] .summary-line`); s != "Ledger <script>alert(1)</script> is down in eu-1" {
		t.Errorf("the overview's summary line reads %q", s)
	}
	sel := `article.incident.page[data-incident="search/ticket"] .mark.escalated`
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(sel)))
	if s := text(t, tab, sel); !strings.Contains(s, "escalated to a page by alice<script>x()</script>") {
		t.Errorf("the escalation reads %q", s)
	}
	if n := evalInt(t, tab, `document.querySelectorAll("main script").length`); n != 0 {
		t.Errorf("the overview has %d script elements", n)
	}
	if errs := browserErrors(); len(errs) > 0 {
		t.Fatalf("the browser reported:\n%s", strings.Join(errs, "\n"))
	}
}
