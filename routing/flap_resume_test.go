package routing_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/policies/flap"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// flapDriver posts one page-tier alert to a pipeline with the default flap
// damping (threshold 4, window 1h, cool_down 10m), at minutes after t0 of
// the env's clock, with the startsAt Alertmanager gives it.
type flapDriver struct {
	t  *testing.T
	e  *env
	p  *routing.Pipeline
	t0 time.Time
}

func newFlapDriver(t *testing.T, e *env) *flapDriver {
	p := e.pipeline()
	cfg := flap.DefaultConfig()
	p.Flap = &cfg
	return &flapDriver{t: t, e: e, p: p, t0: e.clock.Now()}
}

func (d *flapDriver) at(min float64) time.Time {
	return d.t0.Add(time.Duration(min * float64(time.Minute)))
}

// post sends, at minute min, the alert firing since minute start (or, when
// resolved, resolved at min), and returns what was sent ("pagerduty
// firing", "slack resolved", …) and the reasons of the first notification.
func (d *flapDriver) post(min float64, status string, start float64) (sent []string, reasons string, err error) {
	d.t.Helper()
	d.e.clock.Advance(d.at(min).Sub(d.e.clock.Now()))
	a := tAlert("TTFTHigh", status, "page")
	a.StartsAt = d.at(start).Format(time.RFC3339Nano)
	if status == "resolved" {
		a.EndsAt = d.at(min).Format(time.RFC3339Nano)
	}
	pdBefore, slackBefore := len(d.e.pd.notifications()), len(d.e.slack.notifications())
	_, err = process(d.t, d.p, a)
	pd, sl := d.e.pd.notifications()[pdBefore:], d.e.slack.notifications()[slackBefore:]
	for _, n := range pd {
		sent = append(sent, "pagerduty "+string(n.Kind))
	}
	for _, n := range sl {
		sent = append(sent, "slack "+string(n.Kind))
	}
	if all := append(pd, sl...); len(all) > 0 {
		reasons = strings.Join(all[0].Results[0].Decision.Reasons, "; ")
	}
	return sent, reasons, err
}

// want posts and checks that exactly want was sent; it returns the reasons.
func (d *flapDriver) want(min float64, status string, start float64, want string) string {
	d.t.Helper()
	sent, reasons, err := d.post(min, status, start)
	if err != nil {
		d.t.Fatalf("minute %v (%s since %v): %v", min, status, start, err)
	}
	if got := strings.Join(sent, ", "); got != want {
		d.t.Fatalf("minute %v (%s since %v): sent [%s], want [%s] (reasons %q)", min, status, start, got, want, reasons)
	}
	return reasons
}

// TestFlapDampingIgnoresAlertmanagersOwnResolves: Alertmanager resolves an
// alert when Prometheus misses its resends, and fires it again with the
// same startsAt when they resume (or another startsAt before that resolve,
// a Prometheus HA peer's). That firing never stopped: the resolve and the
// re-fire are no flap — not a re-fire 0s after its page resolved — the
// re-fire is decided as its policies say (its page, closed by that
// resolve, opens again) and says why, and a real recurrence after the
// cool-down of a real resolve pages.
func TestFlapDampingIgnoresAlertmanagersOwnResolves(t *testing.T) {
	run := func(t *testing.T, e *env, refiredStart float64) {
		d := newFlapDriver(t, e)
		d.want(0, "firing", 0, "pagerduty firing")
		d.want(5, "resolved", 0, "pagerduty resolved") // Prometheus's resends lapsed
		why := d.want(6, "firing", refiredStart, "pagerduty firing")
		if !strings.Contains(why, "fired again with startsAt "+d.at(refiredStart).UTC().Format(time.RFC3339)+
			", before its resolve at "+d.at(5).UTC().Format(time.RFC3339)+": the same firing") || strings.Contains(why, "flapping:") {
			t.Fatalf("the re-fire's reasons %q; want them to say it is the same firing, not flapping", why)
		}
		d.want(20, "resolved", refiredStart, "pagerduty resolved") // a real resolve
		// A recurrence 11 minutes later, after the 10m cool-down: a new
		// incident, which pages.
		if why := d.want(31, "firing", 31, "pagerduty firing"); strings.Contains(why, "flapping") {
			t.Fatalf("the recurrence's reasons %q; want no flapping", why)
		}
	}
	t.Run("memory", func(t *testing.T) { run(t, newEnv(t), 0) })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		run(t, redisEnv(t, []string{srv.Addr()}, false), 0)
	})
	t.Run("another startsAt before the resolve", func(t *testing.T) { run(t, newEnv(t), 4) })
}

// TestADampedAlertThatPagesSaysWhy: an alert held as a ticket for flapping
// that then stays firing pages once it is stable, and its page says that it
// was held as a ticket since it fired, and why it pages now — on a retry of
// that page too. That page counts as its page: a re-fire soon after its
// resolve is damped.
func TestADampedAlertThatPagesSaysWhy(t *testing.T) {
	run := func(t *testing.T, e *env) {
		d := newFlapDriver(t, e)
		d.want(0, "firing", 0, "pagerduty firing")
		d.want(1, "resolved", 0, "pagerduty resolved")
		d.want(2, "firing", 2, "slack firing") // fired again 1m after its page resolved
		d.want(3, "resolved", 2, "slack resolved")
		d.want(4, "firing", 4, "slack firing") // 5 transitions in 1h
		d.want(30, "firing", 4, "")            // Alertmanager repeats it: still flapping
		held := "flapping stopped: held as a ticket since it fired at " + d.at(4).UTC().Format(time.RFC3339) +
			" (flapping: 5 transitions in 1h); stable since, for "
		// At 60.5 the first transition has left the window: 4 in the last
		// hour, no longer flapping, it pages. PagerDuty fails, and
		// Alertmanager retries.
		var failed string
		e.pd.setFail(func(n *alert.Notification) error {
			failed = strings.Join(n.Results[0].Decision.Reasons, "; ")
			return errors.New("pagerduty: 503 Service Unavailable")
		})
		if _, _, err := d.post(60.5, "firing", 4); err == nil || !strings.Contains(failed, held+"56m30s (flap window 1h): it pages") {
			t.Fatalf("the page of the held alert: err %v, reasons %q; want a failure, the reasons saying %q…", err, failed, held)
		}
		e.pd.setFail(nil)
		if why := d.want(61, "firing", 4, "pagerduty firing"); !strings.Contains(why, held+"57m0s (flap window 1h): it pages") {
			t.Fatalf("the retried page of the held alert has reasons %q; want them to say %q…", why, held)
		}
		d.want(62, "resolved", 4, "pagerduty resolved, slack resolved")
		if why := d.want(63, "firing", 63, "slack firing"); !strings.Contains(why, "fired again 1m0s after its page resolved") {
			t.Fatalf("the re-fire 1m after the held page resolved has reasons %q; want it damped", why)
		}
	}
	t.Run("memory", func(t *testing.T) { run(t, newEnv(t)) })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		run(t, redisEnv(t, []string{srv.Addr()}, false))
	})
}
