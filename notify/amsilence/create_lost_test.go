package amsilence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
)

// dropFront is a server before an Alertmanager that hands it the next
// POST /api/v2/silences and then closes the connection without answering
// (Alertmanager or a proxy before it going away mid-request, an idle
// timeout cutting a slow answer); it notes whether that POST came on a
// connection used before (kept alive). With failLookups it answers GET
// /api/v2/silences 503.
type dropFront struct {
	*httptest.Server
	mu          sync.Mutex
	seen        map[string]bool
	drops       int
	reused      bool
	failLookups bool
}

func newDropFront(t *testing.T, base string) *dropFront {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	target := httputil.NewSingleHostReverseProxy(u)
	f := &dropFront{seen: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		before := f.seen[r.RemoteAddr]
		f.seen[r.RemoteAddr] = true
		drop := r.Method == http.MethodPost && r.URL.Path == "/api/v2/silences" && f.drops > 0
		if drop {
			f.drops--
			f.reused = before
		}
		failLookup := f.failLookups && r.Method == http.MethodGet && r.URL.Path == "/api/v2/silences"
		f.mu.Unlock()
		switch {
		case drop:
			target.ServeHTTP(httptest.NewRecorder(), r)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case failLookup:
			http.Error(w, "lookups fail", http.StatusServiceUnavailable)
		default:
			target.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// arm drops the next POST /api/v2/silences, and fails the look-ups with
// failLookups.
func (f *dropFront) arm(failLookups bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drops, f.reused, f.failLookups = 1, false, failLookups
}

func (f *dropFront) droppedReused() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.drops == 0 && f.reused
}

// A create whose connection dropped after the request was written, on a
// kept-alive connection (which end of file, alone, says the server closed
// while idle, the request not taken): Alertmanager made the silence. Create
// finds it and returns its id; when the look-up fails, its error says the
// silence may exist (ErrUnconfirmed). A create that never reached
// Alertmanager is a plain error.
func TestACreateWhoseAnswerWasLostIsLookedUp(t *testing.T) {
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	direct, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	front := newDropFront(t, am.URL)
	c, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.List(ctx); err != nil { // the connection is kept alive
		t.Fatal(err)
	}
	now := time.Now()
	s := amsilence.Silence{Matchers: amsilence.Equal(map[string]string{"alertname": "DiskFull", "instance": "a"}), StartsAt: now, EndsAt: now.Add(time.Hour),
		CreatedBy: "jdoe (U123) via Slack", Comment: "Silenced from Slack for 1h (incident inc/1): https://acme.slack.com/archives/C1/p1"}

	front.arm(false)
	id, err := c.Create(ctx, s)
	if !front.droppedReused() {
		t.Fatal("the POST was not dropped on a kept-alive connection: the case is not reproduced")
	}
	list, lerr := direct.List(ctx)
	if lerr != nil || len(list) != 1 {
		t.Fatalf("Alertmanager holds %+v (%v), want the one silence", list, lerr)
	}
	if err != nil || id != list[0].ID {
		t.Fatalf("Create = %q, %v; want Alertmanager's silence %s", id, err, list[0].ID)
	}

	// The same, the look-up failing: it may exist.
	s.Comment += " (second)"
	front.arm(true)
	_, err = c.Create(ctx, s)
	if !errors.Is(err, amsilence.ErrUnconfirmed) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Create with the look-up failing: %v, want ErrUnconfirmed naming the look-up's failure", err)
	}
	if list, _ := direct.List(ctx); len(list) != 2 {
		t.Fatalf("Alertmanager holds %d silences, want 2", len(list))
	}

	// Nothing reached Alertmanager (no connection): not unconfirmed.
	front.Close()
	fresh, err := amsilence.New(amsilence.Config{URL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Create(ctx, s); err == nil || errors.Is(err, amsilence.ErrUnconfirmed) {
		t.Fatalf("Create with Alertmanager unreachable: %v, want a plain error", err)
	}
}

// Alerts asks Alertmanager for the alerts a silence's matchers select with
// its filter parameter: values with quotes, backslashes, a newline, a
// backtick, regex metacharacters and UTF-8 are written so that Alertmanager
// reads them back as they are — each alert is found by its own labels, and
// only it —, and name="" selects the alerts without the label.
func TestAlertsListsTheAlertsAMatcherSetSelects(t *testing.T) {
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	c, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	values := []string{`q"1` + "`" + `|*`, `back\slash\`, "two\nlines", "ünïcødé ✓", `a.b+c?(d)[e]{f}^$`, `\n`}
	var alerts []map[string]string
	for _, v := range values {
		alerts = append(alerts, map[string]string{"alertname": "Odd", "instance": v})
	}
	withTeam := map[string]string{"alertname": "Odd", "instance": values[0], "team": "b"}
	alerts = append(alerts, withTeam)
	fire(t, am.URL, alerts...)
	ctx := context.Background()
	key := func(l map[string]string) string { return amsilence.Text(amsilence.Equal(l)) }
	waitFor(t, "Alertmanager holding every alert", func() bool {
		got, err := c.Alerts(ctx, []amsilence.Matcher{{Name: "alertname", Value: "Odd", IsEqual: true}})
		return err == nil && len(got) == len(alerts)
	})
	for _, a := range alerts {
		ms := append(amsilence.Equal(a), amsilence.Absent([]string{"team"})...)
		if a["team"] != "" {
			ms = amsilence.Equal(a)
		}
		got, err := c.Alerts(ctx, ms)
		if err != nil {
			t.Fatalf("alerts of %s: %v", amsilence.Text(ms), err)
		}
		if len(got) != 1 || key(got[0].Labels) != key(a) {
			t.Errorf("alerts of %s = %+v, want only %s", amsilence.Text(ms), got, key(a))
		}
	}
	ms := []amsilence.Matcher{{Name: "alertname", Value: "Odd", IsEqual: true}, amsilence.Regex("instance", values[:2])}
	if got, err := c.Alerts(ctx, ms); err != nil || len(got) != 3 {
		t.Errorf("alerts of %s = %+v (%v), want 3 (two values, one with team)", amsilence.Text(ms), got, err)
	}
}

// fire posts firing alerts with these label sets to Alertmanager at url.
func fire(t *testing.T, url string, alerts ...map[string]string) {
	t.Helper()
	var body []map[string]any
	for _, l := range alerts {
		body = append(body, map[string]any{"labels": l, "startsAt": time.Now().UTC()})
	}
	if err := postJSON(url+"/api/v2/alerts", body); err != nil {
		t.Fatal(err)
	}
}

func postJSON(url string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("post %s: %s", url, resp.Status)
	}
	return nil
}

// A silence made now starts in the past (StartNow), which Alertmanager
// moves to its own now: a clock behind Alertmanager's made the silence
// pending, muting nothing until Alertmanager's clock caught up (an audit,
// a replica 4 minutes ahead). Alertmanager takes it, active at once.
func TestASilenceStartingNowIsActiveAtOnce(t *testing.T) {
	am := amtest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n")
	c, err := amsilence.New(amsilence.Config{URL: am.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ahead := time.Now().Add(4 * time.Minute) // this clock, 4 minutes ahead of Alertmanager's
	id, err := c.Create(ctx, amsilence.Silence{Matchers: amsilence.Equal(map[string]string{"alertname": "DiskFull"}), StartsAt: amsilence.StartNow(ahead), EndsAt: ahead.Add(time.Hour),
		CreatedBy: "jdoe (U123) via Slack", Comment: "Silenced from Slack for 1h"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("Alertmanager holds %+v (%v), want the silence", list, err)
	}
	if got := list[0].StartsAt; got.Before(time.Now().Add(-time.Minute)) || got.After(time.Now().Add(time.Second)) || list[0].Status.State != "active" {
		t.Fatalf("the silence starts at %v, state %q; want Alertmanager's now and active", got, list[0].Status.State)
	}
}
