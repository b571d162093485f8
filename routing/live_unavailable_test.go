package routing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/enrich/slolive"
	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// slothStandIn is a Prometheus HTTP API stand-in answering Sloth's queries
// for any sloth_id (error ratio 5 % over 5m, 1h and 6h, budget 1 %, 40 %
// left), as the mode says.
type slothStandIn struct {
	*httptest.Server
	// fail answers every query 503 with a Prometheus API error.
	fail bool
	// empty answers every query with no series (no recording rules).
	empty bool
	// hold, when not nil, holds every query until it is closed or the
	// request ends.
	hold chan struct{}
	// delay answers every query after it (a slow Prometheus, within the
	// lookup's timeout).
	delay time.Duration

	mu   sync.Mutex
	slos map[string]bool // the sloth_ids queried
}

var slothIDRE = regexp.MustCompile(`sloth_id="([^"]*)"`)

func newSlothStandIn(t *testing.T, set func(s *slothStandIn)) *slothStandIn {
	t.Helper()
	s := &slothStandIn{slos: map[string]bool{}}
	if set != nil {
		set(s)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		q := r.Form.Get("query")
		id := ""
		if m := slothIDRE.FindStringSubmatch(q); m != nil {
			id = m[1]
		}
		s.mu.Lock()
		s.slos[id] = true
		s.mu.Unlock()
		if s.hold != nil {
			select {
			case <-s.hold:
			case <-r.Context().Done():
				return
			}
		}
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if s.fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"status":"error","errorType":"server_error","error":"overloaded"}`)
			return
		}
		var res []string
		sample := func(name string, v float64, extra string) string {
			return fmt.Sprintf(`{"metric":{"__name__":%q,"sloth_id":%q%s},"value":[%d,"%g"]}`, name, id, extra, time.Now().Unix(), v)
		}
		switch {
		case s.empty:
		case strings.Contains(q, "slo:sli_error:ratio_rate"):
			for _, win := range []string{"5m", "1h", "6h"} {
				res = append(res, sample("slo:sli_error:ratio_rate"+win, 0.05, `,"sloth_window":"`+win+`"`))
			}
		case strings.Contains(q, "slo:error_budget:ratio"):
			res = append(res, sample("slo:error_budget:ratio", 0.01, ""), sample("slo:period_error_budget_remaining:ratio", 0.4, ""))
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(res, ","))
	}))
	t.Cleanup(func() {
		if s.hold != nil {
			select {
			case <-s.hold:
			default:
				close(s.hold)
			}
		}
		s.Close()
	})
	return s
}

// queried returns how many SLOs reached the stand-in.
func (s *slothStandIn) queried() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.slos)
}

// slolivePipeline is livePipeline with the live SLO client of
// enrich/slolive asking promURL within timeout, adapted as cmd/router
// adapts it.
func slolivePipeline(t *testing.T, e *env, promURL string, timeout time.Duration) *routing.Pipeline {
	t.Helper()
	cfg := slolive.DefaultConfig()
	cfg.URL = promURL
	cfg.Timeout = model.Duration(timeout)
	c, err := slolive.New(cfg, slolive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tiers := policies.DefaultConfig().BurnRate.Tiers
	return livePipeline(t, e, routing.SLOLive(c, tiers))
}

// withPagerDuty adds a real PagerDuty integration, sending to a stand-in,
// to p's receiver pagerduty.
func withPagerDuty(t *testing.T, p *routing.Pipeline) *pdtest.Server {
	t.Helper()
	srv := pdtest.NewServer()
	t.Cleanup(srv.Close)
	cfg := pagerduty.DefaultConfig()
	cfg.RoutingKey = pdtest.RoutingKey
	cfg.URL = srv.EnqueueURL()
	n, err := pagerduty.New(&cfg, "pagerduty", notify.Deps{
		Metrics: notify.NewMetrics(prometheus.NewRegistry()),
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Receivers["pagerduty"] = append(p.Receivers["pagerduty"], routing.Integration{Name: "pagerduty/1", Notifier: n, SendResolved: true})
	return srv
}

// pagerDutyLiveSLO returns custom_details.live_slo of the events srv got,
// by the policy of their decision (nil: the event had none).
func pagerDutyLiveSLO(t *testing.T, srv *pdtest.Server) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, ev := range srv.Events() {
		var body struct {
			Payload struct {
				CustomDetails struct {
					LiveSLO  map[string]string `json:"live_slo"`
					Decision struct {
						Policy string `json:"policy"`
					} `json:"decision"`
				} `json:"custom_details"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(ev.Raw, &body); err != nil {
			t.Fatal(err)
		}
		out[body.Payload.CustomDetails.Decision.Policy] = body.Payload.CustomDetails.LiveSLO
	}
	return out
}

// slothPage is a Sloth page-tier alert of SLO id.
func slothPage(id string) webhooktest.Alert {
	a := tAlert("AvailabilityHighErrorRate", "firing", "", "sloth_id", id, "sloth_service", "api",
		"sloth_slo", "availability", "sloth_severity", "page")
	delete(a.Labels, "test_action")
	a.Fingerprint = webhooktest.Fingerprint(a.Labels)
	return a
}

// slackLine returns the "Live SLO:" line of the Slack message of n, "" when
// it has none.
func slackLine(t *testing.T, n *alert.Notification) string {
	t.Helper()
	for _, b := range slack.Blocks(n, notify.NewData(n), "", "", "") {
		sec, ok := b.(*sl.SectionBlock)
		if !ok || sec.Text == nil {
			continue
		}
		for _, line := range strings.Split(sec.Text.Text, "\n") {
			if strings.HasPrefix(line, "*Live SLO:* ") {
				return line
			}
		}
	}
	return ""
}

// TestMissingLiveContextIsSaid: an SLO alert whose live context could not
// be read is decided from its labels and delivered, and its page says that
// the live context is unavailable, and why — telling "Prometheus has
// nothing for this SLO" apart from "Prometheus did not answer" — in the
// Slack line, PagerDuty's custom_details.live_slo and the reasons. Nothing
// is said of an alert that is no SLO, nor without a prometheus section.
func TestMissingLiveContextIsSaid(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // nothing listens there any more
	cases := []struct {
		name string
		url  func(t *testing.T) string
		want string
	}{
		{"prometheus down", func(*testing.T) string { return closed.URL }, "Prometheus unreachable"},
		{"prometheus erroring", func(t *testing.T) string {
			return newSlothStandIn(t, func(s *slothStandIn) { s.fail = true }).URL
		}, "Prometheus answered an error (server_error)"},
		{"no recording rules", func(t *testing.T) string {
			return newSlothStandIn(t, func(s *slothStandIn) { s.empty = true }).URL
		}, slolive.ReasonNoData},
		{"prometheus timing out", func(t *testing.T) string {
			return newSlothStandIn(t, func(s *slothStandIn) { s.hold = make(chan struct{}) }).URL
		}, "Prometheus timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := slolivePipeline(t, e, c.url(t), 200*time.Millisecond)
			pd := withPagerDuty(t, p)
			mustProcess(t, p, slothPage("api-availability"), tAlert("TTFTHigh", "firing", "", "severity", "critical"))
			if got := pagerDutyLiveSLO(t, pd); len(got) != 2 || got["sloth"] == nil || got["sloth"]["unavailable"] != c.want || len(got["sloth"]) != 1 ||
				got["severity"] != nil {
				t.Errorf("PagerDuty custom_details.live_slo by policy %v; want {\"unavailable\": %q} for the SLO page alone", got, c.want)
			}
			var slo, other *alert.Result
			var sloN *alert.Notification
			for _, n := range e.pd.notifications() {
				for _, r := range n.Results {
					if r.Decision.SLO != "" {
						slo, sloN = r, n
					} else {
						other = r
					}
				}
			}
			if slo == nil || other == nil {
				t.Fatalf("pagerduty got %d notifications; want the SLO page and the other page", len(e.pd.notifications()))
			}
			if slo.Decision.Action != alert.ActionPage || slo.Decision.Policy != policies.PolicySloth {
				t.Errorf("decision %+v; want the Sloth page of the labels", slo.Decision)
			}
			if slo.Live == nil || slo.Live.Unavailable != c.want || slo.Live.Details["unavailable"] != c.want || len(slo.Live.Details) != 1 {
				t.Fatalf("live = %+v; want unavailable %q", slo.Live, c.want)
			}
			if why := strings.Join(slo.Decision.Reasons, "; "); !strings.Contains(why, "live SLO context unavailable ("+c.want+"): decided from the alert's labels") {
				t.Errorf("reasons %q do not say the live context is unavailable, and why", why)
			}
			if line := slackLine(t, sloN); line != "*Live SLO:* unavailable ("+c.want+")" {
				t.Errorf("slack line %q, want unavailable (%s)", line, c.want)
			}
			if other.Live != nil || strings.Contains(strings.Join(other.Decision.Reasons, "; "), "live") {
				t.Errorf("the alert with no SLO got live %+v, reasons %q", other.Live, other.Decision.Reasons)
			}
		})
	}
	t.Run("without a prometheus section nothing is said", func(t *testing.T) {
		e := newEnv(t)
		mustProcess(t, livePipeline(t, e, nil), slothPage("api-availability"))
		r := only(t, e.pd)
		if r.Live != nil || strings.Contains(strings.Join(r.Decision.Reasons, "; "), "live") {
			t.Errorf("live %+v, reasons %q; want neither", r.Live, r.Decision.Reasons)
		}
	})
	t.Run("an SLO the lookup knows no recording rules for is not said to miss them", func(t *testing.T) {
		// An slo label without Pyrra's windows and no prometheus.expr:
		// nothing to look up, for every such alert alike.
		s := newSlothStandIn(t, nil)
		e := newEnv(t)
		mustProcess(t, slolivePipeline(t, e, s.URL, time.Second), sloAlert("firing", "severity", "critical"))
		if r := only(t, e.pd); r.Live != nil {
			t.Errorf("live %+v, want none", r.Live)
		}
	})
	t.Run("with prometheus answering, the live context", func(t *testing.T) {
		s := newSlothStandIn(t, nil)
		e := newEnv(t)
		mustProcess(t, slolivePipeline(t, e, s.URL, 5*time.Second), slothPage("api-availability"))
		r := only(t, e.pd)
		if r.Live == nil || r.Live.Unavailable != "" || !strings.HasPrefix(r.Live.Summary, "budget 40 % left") {
			t.Errorf("live %+v, want the live summary", r.Live)
		}
	})
}

// TestLiveLookupsOfAPayloadShareOneDeadline: a payload of many SLOs, of a
// Prometheus that answers every query within the lookup's timeout but
// slowly, waits about one timeout for all of them together, not one per
// round of maxLiveLookups: the lookups not done by then are abandoned, and
// their alerts paged from their labels, saying so. Nothing here measures
// speed: the stand-in answers no query sooner than delay, so no more than
// maxLiveLookups × (wait/delay + 1) SLOs can have been looked up within
// the wait, far fewer than the payload has — all of them were looked up
// when lookups ran round after round until done.
func TestLiveLookupsOfAPayloadShareOneDeadline(t *testing.T) {
	const (
		slos    = 320 // 20 rounds of 16
		timeout = time.Second
		delay   = 100 * time.Millisecond // per query: every lookup is well within its timeout
	)
	s := newSlothStandIn(t, func(s *slothStandIn) { s.delay = delay })
	e := newEnv(t)
	p := slolivePipeline(t, e, s.URL, timeout)
	alerts := make([]webhooktest.Alert, slos)
	for i := range alerts {
		alerts[i] = slothPage(fmt.Sprintf("slo-%03d", i))
	}
	mustProcess(t, p, alerts...)
	wait := timeout + timeout/4
	bound := 16 * (int(wait/delay) + 1)
	if n := s.queried(); n > bound || n >= slos {
		t.Fatalf("%d of %d SLOs were looked up; want at most %d (the lookups of one wait)", n, slos, bound)
	}
	var live, abandoned, notLookedUp int
	for _, n := range e.pd.notifications() {
		for _, r := range n.Results {
			switch {
			case r.Live == nil:
				t.Fatalf("alert %s has no live state and does not say why", r.Alert.Labels["sloth_id"])
			case r.Live.Unavailable == "":
				live++
			case strings.HasPrefix(r.Live.Unavailable, "Prometheus too slow for the 320 SLOs of this webhook"),
				r.Live.Unavailable == "Prometheus timed out": // under way at the deadline
				abandoned++
				if r.Live.Unavailable != "Prometheus timed out" {
					notLookedUp++
				}
				if r.Decision.Action != alert.ActionPage {
					t.Errorf("abandoned alert decided %s, want its label page", r.Decision.Action)
				}
			default:
				t.Errorf("alert %s unavailable: %q", r.Alert.Labels["sloth_id"], r.Live.Unavailable)
			}
		}
	}
	if live+abandoned != slos || abandoned == 0 {
		t.Fatalf("paged %d with live context and %d without; want all %d paged, those not looked up in time saying so", live, abandoned, slos)
	}
	if got := metric(t, e.reg, "alertrouter_live_lookups_abandoned_total", ""); got != float64(notLookedUp) || got == 0 {
		t.Errorf("alertrouter_live_lookups_abandoned_total = %v, want %d (the alerts not looked up by the deadline)", got, notLookedUp)
	}
	t.Logf("%d SLOs: %d looked up, %d with live context, %d abandoned", slos, s.queried(), live, abandoned)
}

// A prometheus.timeout as long as the webhook's (30s against 25s) held a
// page's live lookup until the webhook's deadline: answered 503, nothing
// sent, the page delayed to Alertmanager's retry. The webhook's live
// lookups wait at most half of its time left; then the page goes out from
// its labels, saying why.
func TestALiveLookupLongerThanTheWebhookLeavesItTimeToDeliver(t *testing.T) {
	s := newSlothStandIn(t, func(s *slothStandIn) { s.hold = make(chan struct{}) }) // never answers
	e := newEnv(t)
	p := slolivePipeline(t, e, s.URL, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sum, err := p.Process(ctx, payload(t, slothPage("api-availability")))
	if err != nil || sum.Notified != 1 {
		t.Fatalf("Process: %+v, %v; want the page notified within the webhook's deadline", sum, err)
	}
	r := only(t, e.pd)
	if r.Live == nil || r.Live.Unavailable == "" || r.Decision.Action != alert.ActionPage {
		t.Fatalf("live %+v, action %s; want the page from its labels, saying live context was unavailable", r.Live, r.Decision.Action)
	}
}
