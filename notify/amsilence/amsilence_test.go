package amsilence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/alertrouter/alertrouter/internal/amtest"
	"github.com/alertrouter/alertrouter/notify/amsilence"
)

// receiver counts Alertmanager's webhooks per instance label.
type receiver struct {
	mu    sync.Mutex
	count map[string]int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var msg struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	_ = json.NewDecoder(req.Body).Decode(&msg)
	r.mu.Lock()
	for _, a := range msg.Alerts {
		r.count[a.Labels["instance"]]++
	}
	r.mu.Unlock()
}

func (r *receiver) get(instance string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[instance]
}

const amConfig = `
route:
  receiver: hook
  group_by: [instance]
  group_wait: 50ms
  group_interval: 300ms
  repeat_interval: 600ms
receivers:
  - name: hook
    webhook_configs:
      - url: %s
        send_resolved: false
`

func postAlerts(t *testing.T, url string, instances ...string) {
	t.Helper()
	if err := post(url, instances...); err != nil {
		t.Fatal(err)
	}
}

// post sends firing alerts of instances to Alertmanager.
func post(url string, instances ...string) error {
	var alerts []map[string]any
	for _, in := range instances {
		alerts = append(alerts, map[string]any{"labels": map[string]string{"alertname": "DiskFull", "instance": in, "severity": "warning"}, "startsAt": time.Now().UTC()})
	}
	b, _ := json.Marshal(alerts)
	resp, err := http.Post(url+"/api/v2/alerts", "application/json", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("post alerts: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("post alerts: %s: %s", resp.Status, body)
	}
	return nil
}

// waitFor polls cond (no time assertion: the bound only ends a stuck test).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSilenceStopsAndExpireResumesWebhooks(t *testing.T) {
	rcv := &receiver{count: map[string]int{}}
	hook := httptest.NewServer(rcv)
	defer hook.Close()
	am := amtest.Start(t, fmt.Sprintf(amConfig, hook.URL))
	ctx := context.Background()
	c, err := amsilence.New(amsilence.Config{URL: am.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}

	// Keep the alerts firing (Alertmanager resolves alerts not resent).
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
				// A failed refresh shows as missing webhooks below.
				_ = post(am.URL, "a", "b")
			}
		}
	}()
	defer func() { close(stop); <-done }()
	postAlerts(t, am.URL, "a", "b")
	waitFor(t, "webhooks of both instances", func() bool { return rcv.get("a") > 0 && rcv.get("b") > 0 })

	labels := map[string]string{"alertname": "DiskFull", "instance": "a", "severity": "warning"}
	now := time.Now()
	id, err := c.Create(ctx, amsilence.Silence{
		Matchers: amsilence.Equal(labels), StartsAt: now, EndsAt: now.Add(time.Hour),
		CreatedBy: "jdoe (U123) via Slack", Comment: "from a test",
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}

	// GET /api/v2/silences shows it with the right matchers.
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got *amsilence.Silence
	for i := range list {
		if list[i].ID == id {
			got = &list[i]
		}
	}
	if got == nil {
		t.Fatalf("silence %s not listed: %+v", id, list)
	}
	want := []amsilence.Matcher{{Name: "alertname", Value: "DiskFull", IsEqual: true}, {Name: "instance", Value: "a", IsEqual: true}, {Name: "severity", Value: "warning", IsEqual: true}}
	if fmt.Sprint(got.Matchers) != fmt.Sprint(want) || got.Status == nil || got.Status.State != "active" || got.CreatedBy != "jdoe (U123) via Slack" {
		t.Fatalf("listed silence = %+v (status %+v), want matchers %+v active by jdoe", *got, got.Status, want)
	}

	// Alertmanager stops notifying instance a; b (not silenced) is the
	// clock: three more flushes of b, none of a.
	waitFor(t, "alert a silenced", func() bool { return alertState(t, am.URL, "a") == "suppressed" })
	a0, b0 := rcv.get("a"), rcv.get("b")
	waitFor(t, "three more webhooks of b", func() bool { return rcv.get("b") >= b0+3 })
	if n := rcv.get("a"); n != a0 {
		t.Fatalf("silenced alert a was notified %d more times", n-a0)
	}

	// Expire: the silence reads expired and a is notified again.
	if err := c.Expire(ctx, id); err != nil {
		t.Fatalf("expire: %v", err)
	}
	s, err := c.Get(ctx, id)
	if err != nil || s.Status == nil || s.Status.State != "expired" {
		t.Fatalf("after expire: %+v, %v", s, err)
	}
	waitFor(t, "a notified again", func() bool { return rcv.get("a") > a0 })
	// Expiring again is no error; an unknown id is.
	if err := c.Expire(ctx, id); err != nil {
		t.Fatalf("second expire: %v", err)
	}
	// Alertmanager 0.25 answers 500 "silence not found" (later ones 404):
	// both are ErrNotFound, as is reading it.
	if err := c.Expire(ctx, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, amsilence.ErrNotFound) {
		t.Fatalf("expiring an unknown silence: %v, want ErrNotFound", err)
	}
	if _, err := c.Get(ctx, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, amsilence.ErrNotFound) {
		t.Fatalf("reading an unknown silence: %v, want ErrNotFound", err)
	}
}

func alertState(t *testing.T, url, instance string) string {
	resp, err := http.Get(url + "/api/v2/alerts?filter=instance%3D%22" + instance + "%22")
	if err != nil {
		t.Fatalf("get alerts: %v", err)
	}
	defer resp.Body.Close()
	var alerts []struct {
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&alerts)
	if len(alerts) == 0 {
		return ""
	}
	return alerts[0].Status.State
}

func TestConfigValidate(t *testing.T) {
	for _, bad := range []string{"", "alertmanager:9093", "ftp://x"} {
		c := amsilence.Config{URL: bad}
		if c.Validate() == nil {
			t.Errorf("url %q accepted", bad)
		}
	}
	c := amsilence.Config{URL: "http://am:9093"}
	if err := c.Validate(); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
	// A query: the API path went after it (every silence failed), and its
	// token was printed in the click's answer and the log.
	c = amsilence.Config{URL: "http://am:9093/am?token=SECRET-AMQ-91"}
	if err := c.Validate(); err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "query") {
		t.Errorf("url with a query: %v; want refused, the query hidden", err)
	}
}

// A group of thousands of alerts answers more than is read: the error
// says so, rather than that the JSON is malformed; a group Alertmanager
// answers is matched by receiver and exact group labels.
func TestGroupReadsTheWebhooksGroupOnly(t *testing.T) {
	huge := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if huge {
			_, _ = w.Write(bytes.Repeat([]byte(" "), 5<<20))
			return
		}
		if r.URL.Path != "/api/v2/alerts/groups" || r.URL.Query().Get("receiver") != `router\.a` || r.URL.Query().Get("silenced") != "false" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `[
			{"labels":{"alertname":"Down"},"receiver":{"name":"router.a"},"alerts":[{"fingerprint":"1","labels":{"alertname":"Down","service":"a"},"startsAt":"2026-12-06T10:00:00Z"}]},
			{"labels":{"alertname":"Down","team":"x"},"receiver":{"name":"router.a"},"alerts":[{"fingerprint":"2","labels":{"alertname":"Down","team":"x"}}]},
			{"labels":{"alertname":"Down"},"receiver":{"name":"router.ab"},"alerts":[{"fingerprint":"3","labels":{"alertname":"Down"}}]}]`)
	}))
	defer srv.Close()
	c, err := amsilence.New(amsilence.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := c.Group(context.Background(), "router.a", map[string]string{"alertname": "Down"})
	if err != nil || len(alerts) != 1 || alerts[0].Fingerprint != "1" || alerts[0].StartsAt != "2026-12-06T10:00:00Z" {
		t.Fatalf("Group = %+v, %v; want the one alert of receiver router.a's group {alertname=Down}", alerts, err)
	}
	if alerts, err := c.Group(context.Background(), "router.a", map[string]string{"alertname": "Other"}); err != nil || len(alerts) != 0 {
		t.Fatalf("a group Alertmanager does not hold: %+v, %v; want none", alerts, err)
	}
	huge = true
	if _, err := c.Group(context.Background(), "router.a", map[string]string{"alertname": "Down"}); err == nil || !strings.Contains(err.Error(), "over 4 MiB") {
		t.Fatalf("a 5 MiB answer: %v, want it named as too large", err)
	}
}

// Alertmanager's answers about a silence it does not know are ErrNotFound;
// a 404 of a path it does not serve (alertmanager.url missing a route
// prefix, a proxy's) is not: it says nothing of the silence (a review: an
// Unsilence then said the silence had ended while it still muted).
func TestOnlyAlertmanagersUnknownSilenceIsNotFound(t *testing.T) {
	for _, tc := range []struct {
		get    bool // read, else expired
		status int
		body   string
		want   bool
	}{
		{false, http.StatusInternalServerError, `"silence not found"`, true}, // 0.25
		{true, http.StatusNotFound, "", true},                                // 0.25
		{false, http.StatusNotFound, `"silence not found"`, true},
		{false, http.StatusNotFound, "", false}, // a proxy's
		{true, http.StatusNotFound, "404 page not found", false},
		{false, http.StatusNotFound, "404 page not found", false},
		{false, http.StatusNotFound, "<html><body>Not Found</body></html>", false},
		{false, http.StatusInternalServerError, "upstream connect error", false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		}))
		c, err := amsilence.New(amsilence.Config{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if tc.get {
			_, err = c.Get(context.Background(), "00000000-0000-0000-0000-000000000000")
		} else {
			err = c.Expire(context.Background(), "00000000-0000-0000-0000-000000000000")
		}
		if got := errors.Is(err, amsilence.ErrNotFound); got != tc.want {
			t.Errorf("get %v, %d %q: not found %v, want %v (%v)", tc.get, tc.status, tc.body, got, tc.want, err)
		}
		srv.Close()
	}
}

// Alertmanager v0.35 answers the expiry of a silence it does not know 404
// with no body, as a proxy may a path it does not serve: Expire asks the
// silences' list, and only a list that answers without the silence makes
// it not found (an audit: every Unsilence of a silence Alertmanager lost
// failed on v0.35, the button left for good).
func TestAnEmpty404ToAnExpiryIsNotFoundWhenTheListLacksTheSilence(t *testing.T) {
	const id = "67fd1c2e-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name string
		list func(w http.ResponseWriter)
		want bool
	}{
		{"the list lacks it", func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, `[{"id":"other","matchers":[],"status":{"state":"active"}}]`)
		}, true},
		{"the list holds it", func(w http.ResponseWriter) {
			_, _ = io.WriteString(w, `[{"id":"`+id+`","matchers":[],"status":{"state":"active"}}]`)
		}, false},
		{"the list is not served either (a proxy's 404s)", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound) }, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodDelete && r.URL.Path == "/api/v2/silence/"+id:
				w.WriteHeader(http.StatusNotFound)
			case r.Method == http.MethodGet && r.URL.Path == "/api/v2/silences":
				tc.list(w)
			default:
				http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusTeapot)
			}
		}))
		c, err := amsilence.New(amsilence.Config{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Expire(context.Background(), id)
		if got := errors.Is(err, amsilence.ErrNotFound); err == nil || got != tc.want {
			t.Errorf("%s: expire: %v, not found %v; want an error, not found %v", tc.name, err, got, tc.want)
		}
		srv.Close()
	}
}

// The silence client built its own http.Client and followed a redirect to
// another host, where prometheus/common sent the http_config's basic auth
// again with the silence (a review): it refuses one, as the notifiers'
// clients do (notify.KeepCredentialsHome).
func TestARedirectDoesNotTakeAlertmanagersCredentialsElsewhere(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	cfg := amsilence.Config{URL: srv.URL, HTTPConfig: commoncfg.DefaultHTTPClientConfig}
	cfg.HTTPConfig.BasicAuth = &commoncfg.BasicAuth{Username: "am", Password: "AMPASSWORD"}
	c, err := amsilence.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	_, err = c.Create(context.Background(), amsilence.Silence{Matchers: amsilence.Equal(map[string]string{"alertname": "DiskFull"}), StartsAt: now, EndsAt: now.Add(time.Hour), CreatedBy: "t", Comment: "c"})
	if err == nil || elsewhere.Load() != 0 {
		t.Fatalf("Create = %v; the other host got %d requests, want none", err, elsewhere.Load())
	}
}
