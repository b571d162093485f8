package e2e

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Alertmanager's max_alerts truncates a group's webhooks and counts the
// alerts it left out as notified: with one group (group_by: [alertname])
// of six services' pages and max_alerts: 3, three services were paged at
// once and three an Alertmanager repeat_interval later (11 minutes in an
// audit), and the resolves of the first three closed no incident — the
// router could not know the alerts left out fired in other incidents. With
// alertmanager.url set, the router reads the group's firing alerts from
// that Alertmanager: all six page at once, and each service's resolve
// closes its page.
func TestATruncatedWebhookIsCompletedFromAlertmanager(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	amAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	s.triageAM = "http://" + amAddr
	router := s.startRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{addr: amAddr, groupBy: "[alertname]", maxAlerts: 3})

	alerts := pageAlerts("a", 6)
	for i := range alerts {
		alerts[i].Labels["service"] = fmt.Sprintf("svc%d", i)
		alerts[i].Labels["slo"] = fmt.Sprintf("svc%d-ttft", i)
	}
	events := func(action string) int {
		n := 0
		for _, e := range s.pd.Events() {
			if e.EventAction == action {
				n++
			}
		}
		return n
	}
	postAlerts(t, alerts, am)
	eventually(t, 30*time.Second, "six services paged", func() error {
		return wantCount("PagerDuty triggers", events("trigger"), 6)
	})
	consistently(t, quietWindow, "one trigger per service", func() error {
		return wantCount("PagerDuty triggers", events("trigger"), 6)
	})
	// Three services resolve; Alertmanager's webhook carries them (the
	// first alerts of its group) and leaves the three still firing out.
	postAlerts(t, resolved(alerts[:3]), am)
	eventually(t, 30*time.Second, "the three resolves", func() error {
		return wantCount("PagerDuty resolves", events("resolve"), 3)
	})
	consistently(t, quietWindow, "no other resolve", func() error {
		return errAll(wantCount("PagerDuty resolves", events("resolve"), 3), wantCount("PagerDuty triggers", events("trigger"), 6))
	})
}

// Alertmanager's API lists every route's group of one receiver and group
// labels: with team b's route muted by a time interval (Alertmanager sends
// it nothing), completing team a's truncated webhook paged team b's muted
// alerts — and their resolves, never sent, left those pages open (a
// review). Only the alerts of the webhook's own route are added.
func TestCompletionAddsOnlyTheWebhooksOwnRoute(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	amAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	s.triageAM = "http://" + amAddr
	router := s.startRouter(t, "router")
	am := startAM(t, "alertmanager", router, amOptions{addr: amAddr, groupBy: "[alertname]", maxAlerts: 3,
		routes: "  routes:\n    - {receiver: router, matchers: ['team=\"b\"'], mute_time_intervals: [always]}\n    - {receiver: router, matchers: ['team=\"a\"']}\n",
		top:    "time_intervals:\n  - name: always\n    time_intervals: [{times: [{start_time: '00:00', end_time: '24:00'}]}]\n"})
	muted, paged := pageAlerts("b", 4), pageAlerts("a", 5)
	for i := range muted {
		muted[i].Labels["team"], muted[i].Labels["service"], muted[i].Labels["slo"] = "b", fmt.Sprintf("muted%d", i), fmt.Sprintf("muted%d-ttft", i)
	}
	for i := range paged {
		paged[i].Labels["team"], paged[i].Labels["service"], paged[i].Labels["slo"] = "a", fmt.Sprintf("svc%d", i), fmt.Sprintf("svc%d-ttft", i)
	}
	postAlerts(t, muted, am)
	postAlerts(t, paged, am)
	triggers := func() (a, b int) {
		for _, e := range s.pd.Events() {
			switch {
			case e.EventAction != "trigger":
			case strings.Contains(e.Payload.Summary+e.Payload.Component+string(e.Payload.CustomDetails), "muted"):
				b++
			default:
				a++
			}
		}
		return a, b
	}
	eventually(t, 30*time.Second, "team a's five services paged", func() error {
		a, _ := triggers()
		return wantCount("team a's triggers", a, 5)
	})
	consistently(t, quietWindow, "team b's muted alerts unpaged", func() error {
		a, b := triggers()
		return errAll(wantCount("team a's triggers", a, 5), wantCount("team b's triggers", b, 0))
	})
}
