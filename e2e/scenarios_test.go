package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// The incidents of the scenario alerts, as `router explain` reports them.
const (
	pageIncident   = "slo/chat-ttft/service=chat"
	ticketIncident = "llm-prompt-cache-storage/chat/COCC"
)

// scenarioAlerts are an LLM-serving TTFT burn-rate page, a prompt-cache
// capacity ticket and an info alert (decided none).
func scenarioAlerts() []alert {
	now := time.Now().UTC()
	return []alert{{
		Labels: map[string]string{"alertname": "VLLMTTFTBurnRateHigh", "service": "chat",
			"sector": "llm-inference-gpu", "kpi": "TTFT", "slo": "chat-ttft"},
		Annotations: map[string]string{"burn_rate_1h": "15.2", "burn_rate_5m": "16",
			"summary": "chat TTFT error budget burning 15x", "runbook_url": "https://runbooks.example/chat-ttft"},
		StartsAt: now, GeneratorURL: "http://prometheus.example/graph",
	}, {
		Labels:      map[string]string{"alertname": "KVCacheUsageHigh", "service": "chat", "sector": "llm-prompt-cache-storage"},
		Annotations: map[string]string{"utilization": "0.85", "summary": "KV cache store 85% full"},
		StartsAt:    now, GeneratorURL: "http://prometheus.example/graph",
	}, {
		Labels:   map[string]string{"alertname": "InfoOnly", "severity": "info"},
		StartsAt: now, GeneratorURL: "http://prometheus.example/graph",
	}}
}

// notified is a snapshot of everything the stand-ins accepted.
type notified struct {
	pdEvents int
	triggers int
	resolves int
	parents  []slacktest.Message
	messages []slacktest.Message
}

func (s *stack) notified() notified {
	key := pagerduty.DedupKey(pageIncident)
	return notified{pdEvents: len(s.pd.Events()), triggers: s.pd.Triggers(key), resolves: s.pd.Resolves(key),
		parents: s.slack.Parents(), messages: s.slack.Messages()}
}

// firingDelivered checks one trigger of the page's dedup_key, no other
// PagerDuty event, and two Slack parents: the page's mirror and the ticket.
func (s *stack) firingDelivered() error {
	n := s.notified()
	return errAll(
		wantCount("PagerDuty triggers of "+pageIncident, n.triggers, 1),
		wantCount("PagerDuty events", n.pdEvents, 1),
		wantCount("Slack parent messages", len(n.parents), 2),
		wantCount("Slack messages", len(n.messages), 2),
		wantParents(n.parents),
	)
}

// wantParents checks that the Slack parents are the page's mirror and the
// ticket, one each.
func wantParents(parents []slacktest.Message) error {
	var errs []error
	for _, prefix := range []string{"[PAGE] VLLMTTFTBurnRateHigh", "[TICKET] KVCacheUsageHigh"} {
		n := 0
		for _, p := range parents {
			if strings.HasPrefix(p.Text, prefix) {
				n++
			}
		}
		errs = append(errs, wantCount("Slack parents titled "+prefix, n, 1))
	}
	return errAll(errs...)
}

// resolvedDelivered checks the firing state plus one PagerDuty resolve of
// the same dedup_key, one thread reply under each parent and each parent
// edited.
func (s *stack) resolvedDelivered() error {
	n := s.notified()
	errs := []error{
		wantCount("PagerDuty triggers of "+pageIncident, n.triggers, 1),
		wantCount("PagerDuty resolves of "+pageIncident, n.resolves, 1),
		wantCount("PagerDuty events", n.pdEvents, 2),
		wantCount("Slack parent messages", len(n.parents), 2),
		wantCount("Slack messages", len(n.messages), 4),
	}
	for _, p := range n.parents {
		errs = append(errs,
			wantCount("replies in the thread of "+p.TS, len(s.slack.Thread(p.TS)), 1),
			wantCount("edits of parent "+p.TS, p.Updates, 1))
	}
	return errAll(errs...)
}

// noInfoSent checks that the info alert reached the router (decided none)
// and was never sent anywhere.
func noInfoSent(s *stack, routers ...*proc) error {
	var none float64
	for _, r := range routers {
		v, err := r.metric("alertrouter_decisions_total", `action="none"`)
		if err != nil {
			return err
		}
		none += v
	}
	if none < 1 {
		return fmt.Errorf("no router decided the info alert yet")
	}
	for _, m := range s.slack.Messages() {
		if strings.Contains(m.Text, "InfoOnly") || strings.Contains(string(m.Blocks), "InfoOnly") {
			return fmt.Errorf("the info alert reached Slack: %q", m.Text)
		}
	}
	for _, e := range s.pd.Events() {
		if strings.Contains(string(e.Raw), "InfoOnly") {
			return fmt.Errorf("the info alert reached PagerDuty: %s", e.Raw)
		}
	}
	return nil
}

// quietWindow is how long the scenarios watch for duplicates after the
// expected notifications arrived: three of Alertmanager's group flushes.
const quietWindow = 3 * groupInterval

func TestOneAlertmanagerPagesOnceMirrorsToSlackAndResolves(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	router := s.startRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{})

	alerts := scenarioAlerts()
	postAlerts(t, alerts, am)
	eventually(t, 20*time.Second, "firing notifications", s.firingDelivered)
	eventually(t, 10*time.Second, "info alert decided none and not sent", func() error { return noInfoSent(s, router) })

	postAlerts(t, resolved(alerts), am)
	eventually(t, 20*time.Second, "resolve notifications", s.resolvedDelivered)
	consistently(t, quietWindow, "no duplicate after resolve", s.resolvedDelivered)
	if err := noInfoSent(s, router); err != nil {
		t.Fatal(err)
	}
}

// waitClustered waits until every Alertmanager sees all of them as ready
// cluster peers.
func waitClustered(t *testing.T, ams ...*proc) {
	t.Helper()
	for _, am := range ams {
		eventually(t, 15*time.Second, am.name+" joined the cluster", func() error {
			resp, err := http.Get("http://" + am.addr + "/api/v2/status")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			var st struct {
				Cluster struct {
					Status string            `json:"status"`
					Peers  []json.RawMessage `json:"peers"`
				} `json:"cluster"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
				return fmt.Errorf("decode status: %w", err)
			}
			if st.Cluster.Status != "ready" || len(st.Cluster.Peers) != len(ams) {
				return fmt.Errorf("cluster status %q with %d peers, want ready with %d", st.Cluster.Status, len(st.Cluster.Peers), len(ams))
			}
			return nil
		})
	}
}

// webhooksReceived checks that each router answered at least one webhook.
func webhooksReceived(routers ...*proc) error {
	var errs []error
	for _, r := range routers {
		v, err := r.metric("alertrouter_webhooks_total")
		if err != nil {
			errs = append(errs, err)
		} else if v < 1 {
			errs = append(errs, fmt.Errorf("%s received no webhook", r.name))
		}
	}
	return errAll(errs...)
}

func TestHAAlertmanagerPairAndTwoRoutersSharingRedisNotifyOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	r1, r2 := s.startRouter(t, "router-1"), s.startRouter(t, "router-2")
	c1 := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	c2 := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	am1 := startAM(t, "alertmanager-1", r1, amOptions{clusterAddr: c1, peers: []string{c2}})
	am2 := startAM(t, "alertmanager-2", r2, amOptions{clusterAddr: c2, peers: []string{c1}})
	waitClustered(t, am1, am2)

	alerts := scenarioAlerts()
	postAlerts(t, alerts, am1, am2)
	eventually(t, 20*time.Second, "firing notifications", s.firingDelivered)
	eventually(t, 10*time.Second, "info alert decided none and not sent", func() error { return noInfoSent(s, r1, r2) })

	postAlerts(t, resolved(alerts), am1, am2)
	eventually(t, 20*time.Second, "resolve notifications", s.resolvedDelivered)
	// Both Alertmanagers notified, each its own router: the single page
	// and parent come from the routers' shared dedup, not from one idle
	// path.
	eventually(t, 10*time.Second, "both routers received webhooks", func() error { return webhooksReceived(r1, r2) })
	consistently(t, quietWindow, "no duplicate after resolve", s.resolvedDelivered)
	for _, r := range []*proc{r1, r2} {
		for _, res := range []string{"miss", "hit", "in_flight"} {
			v, _ := r.metric("alertrouter_dedup_total", `result="`+res+`"`)
			t.Logf("%s dedup %s: %v", r.name, res, v)
		}
	}
}

// embedPage is a second TTFT page, of another service and SLO.
func embedPage() alert {
	return alert{
		Labels: map[string]string{"alertname": "EmbedTTFTBurnRateHigh", "service": "embed",
			"sector": "llm-inference-gpu", "kpi": "TTFT", "slo": "embed-ttft"},
		Annotations: map[string]string{"burn_rate_1h": "15.2", "burn_rate_5m": "16",
			"summary": "embed TTFT error budget burning 15x", "runbook_url": "https://runbooks.example/embed-ttft"},
		StartsAt: time.Now().UTC(), GeneratorURL: "http://prometheus.example/graph",
	}
}

func TestPagerDutyAnswering500IsRetriedByAlertmanagerAndPagesOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	router := s.startRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{})
	ttft := pagerduty.DedupKey(pageIncident)

	// PagerDuty answers 500 for more attempts than one webhook makes
	// (notify.DefaultRetryPolicy: 5), so the router answers 5xx and
	// Alertmanager has to retry.
	s.pd.FailN(6, pdtest.Fault{Status: 500})
	postAlerts(t, scenarioAlerts()[:1], am)
	eventually(t, 30*time.Second, "the page after PagerDuty errors", func() error {
		return wantCount("PagerDuty triggers of "+pageIncident, s.pd.Triggers(ttft), 1)
	})
	if got := s.pd.Requests(); got < 7 {
		t.Errorf("PagerDuty saw %d requests, want at least the 6 failed ones and the accepted one", got)
	}
	if v, err := router.metric("alertrouter_webhooks_total", `code="5`); err != nil || v < 1 {
		t.Errorf("router answered %v webhooks with 5xx (err %v), want at least 1 so that Alertmanager retried", v, err)
	}
	consistently(t, quietWindow, "no duplicate page", func() error {
		return errAll(
			wantCount("PagerDuty triggers of "+pageIncident, s.pd.Triggers(ttft), 1),
			wantCount("PagerDuty events", len(s.pd.Events()), 1),
			wantMirrors(s, 1),
		)
	})
}

// TestRouterKilledWhilePagerDutyHoldsTheTriggerPagesOnceAfterRestart: the
// incident's opening lease lives only as long as its sender's deadline, so a
// replica killed mid-send never swallows the retried page; the Slack mirror,
// delivered and confirmed while PagerDuty hung, is not posted again.
func TestRouterKilledWhilePagerDutyHoldsTheTriggerPagesOnceAfterRestart(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	router := s.startRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{})
	embed := pagerduty.DedupKey("slo/embed-ttft/service=embed")

	// The router is killed while PagerDuty holds its trigger unanswered
	// (so not accepted), then restarts on the same port: the retried
	// webhook waits out the dead replica's claim (claim_ttl 3s) and must
	// send the page, once.
	s.pd.Fail(pdtest.Fault{Hang: true})
	postAlerts(t, []alert{embedPage()}, am)
	eventually(t, 15*time.Second, "the trigger in flight", func() error {
		if s.pd.Requests() == 0 {
			return fmt.Errorf("no PagerDuty request yet")
		}
		return nil
	})
	// The Slack mirror runs beside PagerDuty: the kill comes once it was
	// delivered and confirmed (its marker, "<tier>|<ms>|<incident>", is
	// written), so the restarted router must not post it again. (A kill
	// between a delivery and its confirmation would repeat that one
	// message: at least once.)
	eventually(t, 15*time.Second, "the Slack mirror confirmed", func() error {
		n, err := redistest.Do(s.redis.Addr(), "EVAL", `local n = 0
for _, k in ipairs(redis.call('keys', ARGV[1])) do
  if redis.call('type', k).ok == 'string' and string.find(redis.call('get', k), '|', 1, true) then n = n + 1 end
end
return n`, "0", "*n:{*slack/0:*")
		if err != nil || n == "0" {
			return fmt.Errorf("no Slack marker yet (%s, %v)", n, err)
		}
		return nil
	})
	router.kill()
	if got := s.pd.Triggers(embed); got != 0 {
		t.Fatalf("PagerDuty accepted %d triggers of the hanging request, want 0", got)
	}
	router.restart()
	eventually(t, 30*time.Second, "the page after the kill", func() error {
		return wantCount("PagerDuty triggers of slo/embed-ttft", s.pd.Triggers(embed), 1)
	})
	eventually(t, 10*time.Second, "one Slack parent", func() error { return wantMirrors(s, 1) })
	consistently(t, quietWindow, "no duplicate page", func() error {
		return errAll(
			wantCount("PagerDuty triggers of slo/embed-ttft", s.pd.Triggers(embed), 1),
			wantCount("PagerDuty events", len(s.pd.Events()), 1),
			wantMirrors(s, 1),
		)
	})
}

// wantMirrors checks that Slack holds n parents, each a distinct page.
func wantMirrors(s *stack, n int) error {
	parents := s.slack.Parents()
	titles := map[string]bool{}
	for _, p := range parents {
		titles[p.Text] = true
	}
	return errAll(wantCount("Slack parents", len(parents), n), wantCount("distinct Slack parent titles", len(titles), n))
}
