package slack_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
)

// gatewayFault is how a gateway fails one request.
type gatewayFault struct {
	// status is answered after the request was handed on (502, 503, 504:
	// a proxy whose upstream failed or was slow), or instead of handing it
	// on when retryAfter is set (503 with Retry-After: not taken).
	status     int
	retryAfter string
	// cut answers the status line, the headers and half the body, then
	// closes the connection; closed closes it unanswered. Both after the
	// request was handed on.
	cut, closed bool
}

func (f gatewayFault) String() string {
	switch {
	case f.cut:
		return "answer cut mid-body"
	case f.closed:
		return "connection closed unanswered"
	case f.retryAfter != "":
		return fmt.Sprintf("%d with Retry-After %s", f.status, f.retryAfter)
	}
	return fmt.Sprintf("%d after forwarding", f.status)
}

// gateway is an egress proxy's side of Slack in these tests: it hands
// requests on to target (the Slack stand-in, an incoming webhook's), and
// fails the next request whose path ends with a faulted suffix as
// gatewayFault says — as the audit's TLS-inspecting proxy with per-path
// faults did. It notes whether a faulted request came on a connection used
// before (kept alive).
type gateway struct {
	*httptest.Server
	target http.Handler
	mu     sync.Mutex
	faults map[string]gatewayFault
	seen   map[string]bool
	reused []bool
}

func newGateway(t *testing.T, target http.Handler) *gateway {
	t.Helper()
	g := &gateway{target: target, faults: map[string]gatewayFault{}, seen: map[string]bool{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

// fail fails the next request whose path ends with suffix.
func (g *gateway) fail(suffix string, f gatewayFault) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.faults[suffix] = f
}

// faultedReused reports whether every faulted request so far came on a
// kept-alive connection (and there was one).
func (g *gateway) faultedReused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.reused {
		if !r {
			return false
		}
	}
	return len(g.reused) > 0
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	before := g.seen[r.RemoteAddr]
	g.seen[r.RemoteAddr] = true
	var fault *gatewayFault
	for suffix, f := range g.faults {
		if strings.HasSuffix(r.URL.Path, suffix) {
			fault = &f
			delete(g.faults, suffix)
			g.reused = append(g.reused, before)
			break
		}
	}
	g.mu.Unlock()
	if fault == nil {
		g.target.ServeHTTP(w, r)
		return
	}
	if fault.retryAfter != "" {
		w.Header().Set("Retry-After", fault.retryAfter)
		http.Error(w, http.StatusText(fault.status), fault.status)
		return
	}
	upstream := httptest.NewRecorder()
	g.target.ServeHTTP(upstream, r) // Slack makes the post
	switch {
	case fault.cut, fault.closed:
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		if fault.cut {
			body := upstream.Body.Bytes()
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
			_, _ = buf.Write(body[:len(body)/2])
			_ = buf.Flush()
		}
	default:
		http.Error(w, http.StatusText(fault.status), fault.status)
	}
}

// webhookGatewayNotifier is an incoming-webhook notifier posting through
// g, its retries waited for by waits, its log in logs.
func webhookGatewayNotifier(t *testing.T, g *gateway, waits *notifytest.Waits, logs io.Writer) *slack.Notifier {
	t.Helper()
	cfg := slack.DefaultConfig()
	cfg.APIURL = g.URL + webhookPath
	n, err := slack.New(&cfg, "triage", notify.Deps{
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Retry:  notify.RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Wait: waits.Wait},
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// egressMode is a Slack entry's mode in these tests: the Web API (token and
// channel) or an incoming webhook (api_url …/services/…), each behind a
// gateway.
type egressMode struct {
	name string
	// start returns the notifier posting through a gateway, the gateway,
	// how many posts Slack made, its retries' waits and its log.
	start func(t *testing.T) (*slack.Notifier, *gateway, func() int, *notifytest.Waits, *notifytest.SyncBuffer)
}

var egressModes = []egressMode{
	{name: "Web API", start: func(t *testing.T) (*slack.Notifier, *gateway, func() int, *notifytest.Waits, *notifytest.SyncBuffer) {
		h := newHarness(t)
		g := newGateway(t, h.srv.Config.Handler)
		n := h.notifier(t, func(c *slack.Config) { c.APIURL = g.URL + "/api/" })
		return n, g, func() int { return len(h.srv.Messages()) }, h.waits, h.logs
	}},
	{name: "incoming webhook", start: func(t *testing.T) (*slack.Notifier, *gateway, func() int, *notifytest.Waits, *notifytest.SyncBuffer) {
		s := &webhookStandIn{}
		g := newGateway(t, s)
		waits, logs := &notifytest.Waits{}, &notifytest.SyncBuffer{}
		posts := func() int {
			s.mu.Lock()
			defer s.mu.Unlock()
			return len(s.posts)
		}
		return webhookGatewayNotifier(t, g, waits, logs), g, posts, waits, logs
	}},
}

// postSuffix is the path suffix of a post in mode m.
func postSuffix(m egressMode) string {
	if m.name == "Web API" {
		return "chat.postMessage"
	}
	return webhookPath
}

// The audit's N1: a post a proxy answered 502, 503 or 504 after handing
// it on — Slack made it — was posted again within the webhook: two parent
// messages for one incident, the webhook answered 200, the first parent
// never edited on resolve (it said firing forever), and no log line. Such
// an answer leaves the post's outcome unknown: it is not posted again
// within the webhook, the notification fails retryable (Alertmanager's
// retry posts it: at most one stray message per Alertmanager attempt) and
// one warning says so.
func TestAPostAProxyFailedAfterHandingItOnIsNotPostedAgain(t *testing.T) {
	for _, m := range egressModes {
		for _, status := range []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
			t.Run(fmt.Sprintf("%s, %d", m.name, status), func(t *testing.T) {
				n, g, posts, _, logs := m.start(t)
				g.fail(postSuffix(m), gatewayFault{status: status})
				no := opening("aaa")
				err := n.Notify(context.Background(), no)
				if got := posts(); got != 1 {
					t.Errorf("Slack made %d posts, want 1 (not posted again within the webhook)", got)
				}
				if err == nil || !alert.Retryable(err) || !notify.IsOutcomeUnknown(err) {
					t.Fatalf("Notify = %v; want a retryable failure of unknown outcome (Alertmanager retries)", err)
				}
				// A 502 or 504 came from a proxy that handed the post on: its
				// claims are held until claim_ttl (a review: 38 posts in 70 s
				// of Alertmanager retries when released); a 503 without
				// Retry-After most likely forwarded nothing.
				if held := notify.HoldsClaims(err); held != (status != http.StatusServiceUnavailable) {
					t.Errorf("Notify = %v; holds its claims %v, want %v", err, held, status != http.StatusServiceUnavailable)
				}
				if no.Ref != "" {
					t.Errorf("Ref %q handed back for a post whose answer was a proxy's error", no.Ref)
				}
				if got := strings.Count(logs.String(), "level=WARN msg=\"Slack post with an unknown outcome"); got != 1 {
					t.Errorf("%d warnings of the unknown outcome, want 1; log:\n%s", got, logs.String())
				}
			})
		}
	}
}

// A 503 with Retry-After asks that the post be sent again later: it was
// not taken, and is retried within the webhook after the wait it asks for.
func TestAPostAnswered503WithRetryAfterIsRetriedAfterIt(t *testing.T) {
	for _, m := range egressModes {
		t.Run(m.name, func(t *testing.T) {
			n, g, posts, waits, _ := m.start(t)
			g.fail(postSuffix(m), gatewayFault{status: http.StatusServiceUnavailable, retryAfter: "7"})
			if err := n.Notify(context.Background(), opening("aaa")); err != nil {
				t.Fatalf("Notify = %v, want the post retried", err)
			}
			if got := posts(); got != 1 {
				t.Errorf("Slack made %d posts, want 1", got)
			}
			if w := waits.All(); len(w) != 1 || w[0] < 7*time.Second {
				t.Errorf("waits %v, want one of the 7s Retry-After asked for", w)
			}
		})
	}
}

// chat.update is idempotent: an edit a proxy answered 502 after handing it
// on is retried within the webhook, and the resolve's edit lands.
func TestAParentEditAProxyFailedIsRetried(t *testing.T) {
	h := newHarness(t)
	g := newGateway(t, h.srv.Config.Handler)
	n := h.notifier(t, func(c *slack.Config) { c.APIURL = g.URL + "/api/" })
	first := opening("aaa")
	if err := n.Notify(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	g.fail("chat.update", gatewayFault{status: http.StatusBadGateway})
	done := under(first.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa"))
	done.IncidentResolved = true
	if err := n.Notify(context.Background(), done); err != nil {
		t.Fatal(err)
	}
	if calls := h.srv.Calls("chat.update"); calls != 2 {
		t.Errorf("chat.update called %d times, want 2 (the failed one, then its retry)", calls)
	}
	if ps := h.srv.Parents(); len(ps) != 1 || ps[0].Updates != 2 {
		t.Errorf("parents %+v; want one, edited", ps)
	}
}

// The audit's N2: a post whose answer a proxy cut mid-body (a status line
// had come: Slack made it), or whose connection it closed after handing
// the request on, on a kept-alive connection, was taken for a connection
// Slack had closed while idle and posted again: two parents, 200. The
// post's outcome is unknown: not posted again within the webhook. (An
// incoming webhook's 200 says it posted, whatever its body: a cut body
// there is a post made.)
func TestAPostCutOrClosedOnAKeptAliveConnectionIsNotPostedAgain(t *testing.T) {
	for _, m := range egressModes {
		for _, f := range []gatewayFault{{cut: true}, {closed: true}} {
			t.Run(m.name+", "+f.String(), func(t *testing.T) {
				n, g, posts, _, _ := m.start(t)
				// An earlier post leaves the connection kept alive.
				if err := n.Notify(context.Background(), opening("aaa")); err != nil {
					t.Fatal(err)
				}
				g.fail(postSuffix(m), f)
				no := opening("bbb")
				no.Incident = "another/incident"
				err := n.Notify(context.Background(), no)
				if !g.faultedReused() {
					t.Fatal("the post was not made on a kept-alive connection: the case is not reproduced")
				}
				if got := posts(); got != 2 {
					t.Errorf("Slack made %d posts, want 2 (the earlier one, and this one once)", got)
				}
				if f.cut && m.name == "incoming webhook" {
					if err != nil {
						t.Fatalf("Notify = %v; want the post made (answered 200)", err)
					}
					return
				}
				if err == nil || !alert.Retryable(err) || !notify.IsOutcomeUnknown(err) {
					t.Fatalf("Notify = %v; want a retryable failure of unknown outcome", err)
				}
			})
		}
	}
}

// forwardProxy is an HTTP forward proxy (proxy_url) that also reaches
// hidden, a host:port nothing else reaches, as target (an egress proxy
// before Slack: the router's host reaches Slack only through it). It
// counts the requests it carried to hidden.
type forwardProxy struct {
	*httptest.Server
	mu      sync.Mutex
	carried int
}

func newForwardProxy(t *testing.T, hidden string, target *url.URL) *forwardProxy {
	t.Helper()
	p := &forwardProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		u := *pr.In.URL
		if u.Host == hidden {
			p.mu.Lock()
			p.carried++
			p.mu.Unlock()
			u.Host = target.Host
		}
		pr.Out.URL, pr.Out.Host = &u, u.Host
	}}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

func (p *forwardProxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.carried
}

// unreachable returns a host:port on which nothing listens.
func unreachable(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// The audit's N3: behind an egress proxy (http_config.proxy_url), the
// answers through a response_url — every /alertrouter answer, the
// in-channel "@user silenced incident …", every answer to a click — went
// out on a bare client, reached no Slack, and were lost: the silence was
// made and the channel never heard of it. They go out on the Slack entry's
// own client, through its proxy.
func TestResponseURLAnswersGoThroughTheSlackEntrysProxy(t *testing.T) {
	am := silences(t)
	e := newTriageEnv(t, alert.ActionPage, nil)
	hidden := unreachable(t)
	standIn, err := url.Parse(e.h.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newForwardProxy(t, hidden, standIn)
	proxyURL, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	j := journalOf(t, e.store, journalFiring("inc/1"))
	tr := slack.NewTriage(slack.TriageOptions{Store: e.store, Silences: am, Journal: j})
	if err := tr.Add("triage", "slack/0", e.notifier(t, func(c *slack.Config) {
		c.HTTPConfig = &commoncfg.HTTPClientConfig{ProxyConfig: commoncfg.ProxyConfig{ProxyURL: commoncfg.URL{URL: proxyURL}}}
	}), nil, nil); err != nil {
		t.Fatal(err)
	}
	hide := func(body []byte) []byte {
		// The response_url on the stand-in, as reached only through the
		// proxy.
		return []byte(strings.ReplaceAll(string(body), url.QueryEscape(e.h.srv.URL), url.QueryEscape("http://"+hidden)))
	}

	body := hide(e.h.srv.Command(slacktest.SlashCommand{Command: "/alertrouter", Text: "silence inc/1 2h", User: "U123", UserName: "u123", Channel: e.parent.Channel, TriggerID: "p1"}))
	e.send(t, tr, slacktest.Sign(signingSecret, e.now(), body), body, nil)
	click, err := e.h.srv.Interaction(e.parent, slacktest.Click{User: "U123", UserName: "u123", ActionID: "alertrouter:nonsense", ActionTS: "p2", Value: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	click = hide(click)
	e.send(t, tr, slacktest.Sign(signingSecret, e.now(), click), click, nil)

	answers := map[string]slacktest.Response{}
	for _, r := range e.h.srv.Responses() {
		answers[r.ID] = r
	}
	if a, ok := answers["p1"]; !ok || a.ResponseType != "in_channel" || !strings.Contains(a.Text, "silenced incident `inc/1`") {
		t.Errorf("the silence command's in-channel answer: %+v (found %v), want it through the proxy", a, ok)
	}
	if a, ok := answers["p2"]; !ok || !strings.Contains(a.Text, "Unknown action") {
		t.Errorf("the click's answer: %+v (found %v), want it through the proxy", a, ok)
	}
	if got := proxy.count(); got != 2 {
		t.Errorf("the proxy carried %d answers, want 2", got)
	}
}

// journalFiring is incident's one firing alert, routed to the triage
// receiver.
func journalFiring(incident string) journal.Entry {
	return journal.Entry{Fingerprint: "aaa", Status: "firing", Receivers: []string{"triage"}, Incident: incident,
		Labels: map[string]string{"alertname": "TTFTHigh", "job": "vllm", "instance": "gpu-1"}, Decision: alert.Decision{Action: alert.ActionPage}}
}

// The audit's N4: an egress proxy refusing the tunnel to Slack (CONNECT
// answered 403 or 407) read `Post "https://…/chat.postMessage": Forbidden`,
// as if Slack had refused: the error says the proxy refused.
func TestAProxyRefusingTheTunnelToSlackIsNamed(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "denied by policy", http.StatusForbidden)
	}))
	defer proxy.Close()
	u, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxied := &commoncfg.HTTPClientConfig{ProxyConfig: commoncfg.ProxyConfig{ProxyURL: commoncfg.URL{URL: u}}}
	h := newHarness(t)
	for mode, mutate := range map[string]func(*slack.Config){
		"Web API": func(c *slack.Config) { c.APIURL, c.HTTPConfig = "https://slack.invalid/api/", proxied },
		"incoming webhook": func(c *slack.Config) {
			c.Token, c.Channel, c.APIURL, c.HTTPConfig = "", "", "https://hooks.slack.invalid"+webhookPath, proxied
		},
	} {
		err := h.notifier(t, mutate).Notify(context.Background(), opening("aaa"))
		if err == nil || !strings.Contains(err.Error(), "the proxy refused the connection (CONNECT answered 403 Forbidden") {
			t.Errorf("%s: Notify = %v, want it to say the proxy refused", mode, err)
		}
	}
}
