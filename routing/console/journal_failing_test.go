package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/console"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

var bannerRE = regexp.MustCompile(`<p class="error" id="journal-failing" role="alert">([^<]*)</p>`)

// banner returns the journal-failure banner of a page, unescaped ("" when
// none).
func banner(body string) string {
	if m := bannerRE.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// switchedFailure is a WriteFailure that the test turns on and off.
type switchedFailure struct {
	f atomic.Pointer[journal.AppendFailure]
}

func (s *switchedFailure) get() (journal.AppendFailure, bool) {
	if f := s.f.Load(); f != nil {
		return *f, true
	}
	return journal.AppendFailure{}, false
}

// While the journal's writes fail (a full noeviction Redis, an ACL user
// without XADD, a read-only replica), the pages read a journal with holes:
// the overview said "Open incidents 1" with a page of 2 s before missing,
// or "No open incident … None paged or ticketed", and blamed the store's
// beginning ("a Redis restarted …"). Every page that reads the journal now
// says since when writes fail, why and how many decisions were lost, and
// the beginning is not blamed; once writes succeed again, both go.
func TestEveryJournalPageSaysWhenTheJournalCannotBeWritten(t *testing.T) {
	e := newEnv(t)
	s := writeStory(t, e, false)
	e.writer.Write(journal.Entry{Kind: journal.KindDeadLetter, Time: e.now.Add(-time.Minute), Incident: s.incident,
		DeadLetter: &journal.DeadLetter{Receiver: "oncall", Integration: "pagerduty/0", Incident: s.incident, Error: "invalid routing key"}})
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	var failure switchedFailure
	began := e.now.Add(-20 * time.Minute)
	c := console.New(console.Options{Journal: e.journal, Evaluate: e.pipeline.Evaluate, Now: func() time.Time { return e.now },
		Began:        func(context.Context) (time.Time, error) { return began, nil },
		WriteFailure: failure.get})
	srv := httptest.NewServer(c)
	defer srv.Close()
	pages := []string{"/", "/?offset=20", "/decisions", "/decisions?receiver=oncall", console.IncidentPath(s.incident),
		console.IncidentPath("not/journaled"), "/dead-letters"}

	for _, path := range pages {
		if _, body := get(t, srv, path); banner(body) != "" {
			t.Errorf("GET %s while the journal is written: a failure banner %q", path, banner(body))
		}
	}
	if _, body := get(t, srv, "/"); !strings.Contains(body, "The journal begins at") {
		t.Fatalf("the overview does not say when the journal began, which this test needs said before the failure")
	}

	failure.f.Store(&journal.AppendFailure{Since: e.now.Add(-90 * time.Second), Err: "redis journal append: OOM command not allowed when used memory > 'maxmemory'.",
		Decisions: 7, DeadLetters: 1})
	want := "This router's journal writes are failing since " + e.now.Add(-90*time.Second).UTC().Format("2006-01-02 15:04:05") +
		" UTC, 1m ago (redis journal append: OOM command not allowed when used memory > 'maxmemory'.): 7 decisions and 1 dead letter were not recorded; this view is incomplete — pages and tickets are still delivered."
	for _, path := range pages {
		_, body := get(t, srv, path)
		if got := banner(body); got != want {
			t.Errorf("GET %s while the journal's writes fail: banner %q, want %q", path, got, want)
		}
		if strings.Contains(body, "The journal begins at") || strings.Contains(body, "Redis restarted") {
			t.Errorf("GET %s while the journal's writes fail blames the store's beginning:\n%s", path, body)
		}
	}
	if _, body := get(t, srv, "/explain"); banner(body) != "" {
		t.Errorf("the explain page, which reads no journal, shows the banner")
	}

	failure.f.Store(&journal.AppendFailure{Since: e.now.Add(-30 * time.Second), Err: "NOPERM", Decisions: 1})
	if _, body := get(t, srv, "/"); !strings.Contains(banner(body), "30s ago (NOPERM): 1 decision was not recorded;") {
		t.Errorf("one decision lost: banner %q", banner(body))
	}

	failure.f.Store(nil)
	for _, path := range pages {
		if _, body := get(t, srv, path); banner(body) != "" {
			t.Errorf("GET %s once writes succeed again: banner %q still shown", path, banner(body))
		}
	}
	if _, body := get(t, srv, "/"); !strings.Contains(body, "The journal begins at") {
		t.Errorf("once writes succeed again the overview no longer says when the journal began")
	}
}

// An overview shared by every viewer (CacheTTL, 1,000 decisions or more)
// is not served past a change of the journal's write state: the banner
// comes and goes with the failure, not a cache period later.
func TestASharedOverviewFollowsTheJournalsWriteState(t *testing.T) {
	e := newEnv(t)
	entries := make([]journal.Entry, 0, 1200)
	for i := range 1200 {
		entries = append(entries, probe(e.now.Add(-time.Duration(i)*time.Second), fmt.Sprintf("probe/%d", i%40), fmt.Sprintf("%016x", i), "firing", alert.ActionTicket))
	}
	e.writer.Write(entries...)
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	var failure switchedFailure
	srv := httptest.NewServer(console.New(console.Options{Journal: e.journal, Now: func() time.Time { return e.now },
		CacheTTL: time.Hour, WriteFailure: failure.get}))
	defer srv.Close()
	if _, body := get(t, srv, "/"); !strings.Contains(body, `id="shared"`) || banner(body) != "" {
		t.Fatalf("the first overview is not shared, or has a banner: %q", banner(body))
	}
	failure.f.Store(&journal.AppendFailure{Since: e.now.Add(-time.Second), Err: "NOPERM", Decisions: 3})
	if _, body := get(t, srv, "/"); !strings.Contains(banner(body), "3 decisions were not recorded") {
		t.Errorf("the overview shared from before the failure is served without its banner: %q", banner(body))
	}
	failure.f.Store(nil)
	if _, body := get(t, srv, "/"); banner(body) != "" {
		t.Errorf("the overview shared during the failure is served after it: %q", banner(body))
	}
}

// redisJournalEnv is a console over a journal in a real Redis, written by
// a journal.Writer through the ACL user "router", wired as cmd/router
// wires them (WriteFailure is the writer's Failure).
type redisJournalEnv struct {
	srv    *redistest.Server
	writer *journal.Writer
	http   *httptest.Server
	now    time.Time
	n      int
}

func newRedisJournalEnv(t *testing.T) *redisJournalEnv {
	t.Helper()
	srv := redistest.Start(t)
	if _, err := redistest.Do(srv.Addr(), "ACL", "SETUSER", "router", "on", ">secret", "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}
	cfg := store.DefaultRedisConfig()
	cfg.Addrs, cfg.Username, cfg.Password = []string{srv.Addr()}, "router", "secret"
	cfg.MaxRetries = -1
	cfg.DialTimeout = model.Duration(time.Second)
	st, err := store.NewRedis(cfg, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	j := store.OpenJournal(st, journal.StreamKey("alertrouter:"), store.DefaultJournalRetention)
	m, err := journal.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &redisJournalEnv{srv: srv, now: time.Now()}
	e.writer = journal.NewWriter(j, m, journal.WriterOptions{Replica: "router-0", Now: func() time.Time { return e.now }})
	t.Cleanup(func() { _ = e.writer.Close(context.Background()) })
	e.http = httptest.NewServer(console.New(console.Options{Journal: j, Now: func() time.Time { return e.now }, WriteFailure: e.writer.Failure}))
	t.Cleanup(e.http.Close)
	return e
}

// page writes a page decision of a fresh incident and waits until the
// writer has appended it (or failed to); it returns the incident.
func (e *redisJournalEnv) page(t *testing.T) string {
	t.Helper()
	e.n++
	incident := fmt.Sprintf("checkout/%d", e.n)
	e.writer.Write(journal.Entry{Kind: journal.KindDecision, Time: e.now, Fingerprint: fmt.Sprintf("%016x", e.n), Alertname: "CheckoutDown",
		Status: "firing", StartsAt: e.now, Incident: incident, Sector: "payments", Receivers: []string{"oncall"},
		Decision:   alert.Decision{Action: alert.ActionPage, Policy: "severity"},
		Deliveries: []journal.Delivery{{Receiver: "oncall", Integration: "pagerduty/0", Outcome: journal.OutcomeSent, Attempts: 1}}})
	if err := e.writer.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	return incident
}

// The console over a real Redis that refuses the journal's appends — an
// ACL user without XADD, a full Redis under noeviction — says so on its
// pages with Redis's own error and the decisions lost, instead of "No open
// incident"; once Redis takes the appends again, the banner goes and the
// new decisions show.
func TestTheConsoleSaysWhenRedisRefusesTheJournal(t *testing.T) {
	for _, tc := range []struct {
		name          string
		refuse, allow []string
		says          string
	}{
		{name: "an ACL user without XADD", refuse: []string{"ACL", "SETUSER", "router", "-xadd"}, allow: []string{"ACL", "SETUSER", "router", "+xadd"}, says: "NOPERM"},
		{name: "a full Redis under noeviction", refuse: []string{"CONFIG", "SET", "maxmemory", "1"}, allow: []string{"CONFIG", "SET", "maxmemory", "0"}, says: "OOM command not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRedisJournalEnv(t)
			first := e.page(t)
			_, body := get(t, e.http, "/")
			if banner(body) != "" || !strings.Contains(body, `data-incident="`+first+`"`) {
				t.Fatalf("journal written: banner %q, incident %s listed: %v", banner(body), first, strings.Contains(body, first))
			}
			if _, err := redistest.Do(e.srv.Addr(), tc.refuse...); err != nil {
				t.Fatal(err)
			}
			lost := e.page(t)
			e.page(t)
			if f, ok := e.writer.Failure(); !ok || f.Decisions != 2 || !f.Since.Equal(e.now) || !strings.Contains(f.Err, tc.says) {
				t.Fatalf("writer's failure %+v, %v; want 2 decisions lost since %s, the error saying %q", f, ok, e.now, tc.says)
			}
			for _, path := range []string{"/", "/decisions", console.IncidentPath(first), "/dead-letters"} {
				_, body := get(t, e.http, path)
				if b := banner(body); !strings.Contains(b, tc.says) || !strings.Contains(b, "2 decisions were not recorded; this view is incomplete — pages and tickets are still delivered") {
					t.Errorf("GET %s while Redis refuses the appends: banner %q", path, b)
				}
			}
			if _, err := redistest.Do(e.srv.Addr(), tc.allow...); err != nil {
				t.Fatal(err)
			}
			after := e.page(t)
			if f, ok := e.writer.Failure(); ok {
				t.Fatalf("an append succeeded and the writer still reports %+v", f)
			}
			_, body = get(t, e.http, "/")
			if banner(body) != "" || !strings.Contains(body, `data-incident="`+after+`"`) || strings.Contains(body, `data-incident="`+lost+`"`) {
				t.Errorf("Redis takes the appends again: banner %q, new incident listed %v, lost one listed %v", banner(body),
					strings.Contains(body, after), strings.Contains(body, `data-incident="`+lost+`"`))
			}
		})
	}
}
