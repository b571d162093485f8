package routing_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/dedup"
	"github.com/alertrouter/alertrouter/store"
)

// retriggerEnv is unseenEnv with the address of its redis-server, whose
// clock the incident's last trigger time follows (ageTrigger moves it).
func retriggerEnv(t *testing.T) (*env, string) {
	t.Helper()
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	if err := dedup.MarkEpoch(t.Context(), e.store, e.dedup.KeyPrefix, webhooktest.Start.Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	return e, srv.Addr()
}

// ageTrigger moves the last trigger time the store keeps with the TTFT
// incident at PagerDuty back by d, as if d had passed since.
func ageTrigger(t *testing.T, addr string, d time.Duration) {
	t.Helper()
	key := store.IncidentKey("test:", ttftIncident, "pagerduty/pagerduty/0")
	v, err := redistest.Do(addr, "HGET", key, "g")
	if err != nil {
		t.Fatalf("HGET %s g: %v", key, err)
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		// Every caller runs with a retrigger interval: the opening must
		// have recorded its time (an unknown one would count as due).
		t.Fatalf("the incident keeps no trigger time (%q)", v)
	}
	if _, err := redistest.Do(addr, "HSET", key, "g", strconv.FormatInt(ms-d.Milliseconds(), 10)); err != nil {
		t.Fatal(err)
	}
}

// retriggering returns a replica of e at s with interval.
func retriggering(e *env, s *standIns, interval time.Duration) *routing.Pipeline {
	p := s.replica(e)
	p.RetriggerInterval = interval
	return p
}

// PagerDuty holds one incident per router incident, and an alert joining
// it open is an update it is sent nothing for (storm control). Someone
// resolving the incident in PagerDuty itself (or its auto-resolve, or an
// Alertmanager that sends the router no resolves) would leave every later
// alert of the incident unpaged until dedup.repeat_interval: new alerts
// joining send the trigger again, at most once per retrigger_interval
// (PagerDuty folds it while its incident is open).
func TestNewAlertsJoiningAnOpenIncidentTriggerItAgainOncePerInterval(t *testing.T) {
	for _, interval := range []time.Duration{5 * time.Minute, 0} {
		t.Run(interval.String(), func(t *testing.T) {
			e, addr := retriggerEnv(t)
			s := newStandIns(t)
			p := retriggering(e, s, interval)
			other := retriggering(e, s, interval) // a replica that sees the incident first later

			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
			mustProcess(t, other, tAlert("TTFTHigh", "firing", "page", "instance", "c"))
			if got := s.pd.Triggers(ttftIncident); got != 1 {
				t.Fatalf("PagerDuty triggers = %d within the interval, want the opening's alone", got)
			}
			if interval > 0 {
				ageTrigger(t, addr, interval)
			}
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "d"), tAlert("TTFTHigh", "firing", "page", "instance", "e"))
			mustProcess(t, other, tAlert("TTFTHigh", "firing", "page", "instance", "f"))
			want := 2
			if interval == 0 {
				want = 1
			}
			if got := s.pd.Triggers(ttftIncident); got != want {
				t.Errorf("PagerDuty triggers = %d once the interval passed (two webhooks of new alerts, two replicas), want %d", got, want)
			}
			// Alerts firing on with nothing new send nothing.
			if interval > 0 {
				ageTrigger(t, addr, 2*interval)
			}
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
			if got := s.pd.Triggers(ttftIncident); got != want {
				t.Errorf("PagerDuty triggers = %d after a repeat of a notified alert, want %d", got, want)
			}
		})
	}
}

// Alertmanager sends a group's new alerts every group_interval, counted
// from its previous flush: with retrigger_interval equal to it (both 5m by
// default) that flush reaches the router a few milliseconds short of the
// interval counted from the router's own, later, stamp of the trigger. It
// was not due, and the alert it brought went unpaged in an incident
// resolved in PagerDuty — at every flush, as the two cadences are the
// same (an audit). A flush just under the interval retriggers; one at
// half of it does not.
func TestAlertmanagersNextFlushRetriggers(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	p := retriggering(e, s, 5*time.Minute)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	ageTrigger(t, addr, 150*time.Second)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	if got := s.pd.Triggers(ttftIncident); got != 1 {
		t.Fatalf("PagerDuty triggers = %d half an interval after the page, want the opening's alone", got)
	}
	ageTrigger(t, addr, 5*time.Minute-150*time.Second-20*time.Millisecond)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "c"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Errorf("PagerDuty triggers = %d at the next flush, 20 ms short of retrigger_interval, want the retrigger", got)
	}
}

// The last trigger's time is kept with the incident in the store: a
// replica that restarted, or never saw the incident, re-triggers the first
// new alert joining it once the interval has passed. Before, the time was
// in each replica's memory, counted from when it first saw the incident:
// that alert went unpaged in an incident resolved in PagerDuty.
func TestARetriggerIsDueAtAReplicaThatNeverSawTheIncident(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	mustProcess(t, retriggering(e, s, 5*time.Minute), tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	ageTrigger(t, addr, 6*time.Minute)
	restarted := retriggering(e, s, 5*time.Minute)
	mustProcess(t, restarted, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d, want the opening's and the restarted replica's retrigger", got)
	}
	// Another replica new to the incident, within the interval: nothing.
	mustProcess(t, retriggering(e, s, 5*time.Minute), tAlert("TTFTHigh", "firing", "page", "instance", "c"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Errorf("PagerDuty triggers = %d, want still 2 within the interval", got)
	}
}

// A retrigger whose send fails is given back: the webhook is answered
// 5xx, and its retry (or another webhook's new alert) triggers.
func TestAFailedRetriggerIsGivenBack(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	p := retriggering(e, s, 5*time.Minute)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	ageTrigger(t, addr, 6*time.Minute)
	s.pd.FailN(5, pdtest.Fault{Status: http.StatusInternalServerError})
	if _, err := process(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "b")); err == nil {
		t.Fatal("the failed retrigger was answered as delivered")
	}
	other := retriggering(e, s, 5*time.Minute)
	mustProcess(t, other, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d, want the opening's and the retry's retrigger", got)
	}
}

// Webhooks bringing new alerts to the incident at the same moment, at two
// replicas, once the interval has passed, send one trigger between them:
// the first takes it in the store before its send.
func TestConcurrentJoinsRetriggerOnce(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	replicas := []*routing.Pipeline{retriggering(e, s, 5*time.Minute), retriggering(e, s, 5*time.Minute)}
	mustProcess(t, replicas[0], tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	ageTrigger(t, addr, 6*time.Minute)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, errs[i] = replicas[i%2].Process(context.Background(), payload(t, tAlert("TTFTHigh", "firing", "page", "instance", fmt.Sprintf("n%d", i))))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("webhook %d: %v", i, err)
		}
	}
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Errorf("PagerDuty triggers = %d after 8 concurrent webhooks of new alerts at 2 replicas, want the opening's and one more", got)
	}
}

// A storm of new alerts of one incident at three replicas, webhooks
// retried until delivered, pages once: the opening's trigger, and once the
// interval has passed one retrigger however many webhooks join at once.
func TestAStormAtThreeReplicasTriggersOncePerInterval(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	replicas := []*routing.Pipeline{retriggering(e, s, 5*time.Minute), retriggering(e, s, 5*time.Minute), retriggering(e, s, 5*time.Minute)}
	storm := func(round string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, 30)
		for i := range 30 {
			wg.Go(func() {
				errs[i] = processUntilDelivered(replicas[i%3], []webhooktest.Alert{tAlert("TTFTHigh", "firing", "page", "instance", fmt.Sprint(round, i))})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: webhook %d: %v", round, i, err)
			}
		}
	}
	storm("a")
	if got := s.pd.Triggers(ttftIncident); got != 1 {
		t.Fatalf("PagerDuty triggers = %d after a storm of 30 webhooks, want 1", got)
	}
	ageTrigger(t, addr, 6*time.Minute)
	storm("b")
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d after a second storm past the interval, want 2", got)
	}
}

// A webhook that brings a new alert to an open incident past
// retrigger_interval and repeats an older one past dedup.repeat_interval
// sent PagerDuty two triggers 6 ms apart (an audit): the reminder and the
// retrigger, each a trigger again. The retrigger is the one sent, naming
// the new alert (a review: sending the reminder alone left it out of
// PagerDuty); the reminder is recorded as done, and the trigger time the
// Join took stands (a new alert right after sends nothing).
func TestAReminderAndARetriggerInOneWebhookTriggerOnce(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	p := retriggering(e, s, 5*time.Minute)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	ageTrigger(t, addr, 6*time.Minute)
	e.clock.Advance(e.dedup.RepeatInterval + time.Minute)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"), tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d, want the opening's and one more, not a reminder and a retrigger", got)
	}
	events := s.pd.Events()
	if last := events[len(events)-1]; !strings.Contains(string(last.Raw), "instance=b") {
		t.Errorf("the trigger sent does not name the new alert (instance=b): %s", last.Raw)
	}
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "c"))
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Errorf("PagerDuty triggers = %d after a new alert within the interval, want still 2", got)
	}
}

// A webhook whose reminder of an open incident fails at PagerDuty while
// its new alert's update of the incident is delivered (folded, marked
// notified) took that new alert out of the incident with the failed
// send's members: a later resolve of the others could close the page while
// it fired (a review). Only the failed batches' members leave.
func TestAFailedReminderLeavesTheNewAlertsDeliveredUpdateInTheIncident(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	p := retriggering(e, s, 0)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	e.clock.Advance(e.dedup.RepeatInterval + time.Minute)
	s.pd.FailN(10, pdtest.Fault{Status: http.StatusInternalServerError}) // the reminder's every attempt
	b := tAlert("TTFTHigh", "firing", "page", "instance", "b")
	if _, err := process(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"), b); err == nil {
		t.Fatal("the failed reminder was answered as delivered")
	}
	members := store.IncidentKey("test:", ttftIncident, "pagerduty/pagerduty/0") + ":m"
	if got, err := redistest.Do(addr, "HEXISTS", members, b.Fingerprint); err != nil || got != "1" {
		t.Errorf("the new alert whose update was delivered is a member: %q (%v), want 1", got, err)
	}
}

// A new alert joining while another webhook's retrigger of the incident is
// in flight waits for it: folded into it as an update, it was answered 2xx
// and went unpaged when that retrigger failed and was given back — its
// alert resolved, Alertmanager retried it no more, and nobody paged the new
// one until its reminder (an audit, with a real Alertmanager and a failing
// PagerDuty). Given back, the waiting Join takes the retrigger and sends it.
func TestAJoinDuringAFailingRetriggerIsNotFoldedIntoIt(t *testing.T) {
	e, addr := retriggerEnv(t)
	e.dedup.InFlightWait = 10 * time.Second
	s := newStandIns(t)
	p := retriggering(e, s, 5*time.Minute)
	q := retriggering(e, s, 5*time.Minute) // another replica
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	ageTrigger(t, addr, 5*time.Minute)
	// B's retrigger fails at PagerDuty, slowly: its every attempt.
	s.pd.FailN(3, pdtest.Fault{Delay: 150 * time.Millisecond, Status: http.StatusInternalServerError})
	msgB := payload(t, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	errB := make(chan error, 1)
	go func() {
		_, err := p.Process(context.Background(), msgB)
		errB <- err
	}()
	for s.pd.Requests() < 2 { // A's trigger, then B's first attempt: B holds the retrigger
		time.Sleep(5 * time.Millisecond)
	}
	sumC, errC := process(t, q, tAlert("TTFTHigh", "firing", "page", "instance", "c"))
	if err := <-errB; err == nil {
		t.Fatal("B's webhook succeeded, want it failed (PagerDuty answered 500)")
	}
	if errC != nil {
		t.Fatalf("C's webhook: %v (summary %+v)", errC, sumC)
	}
	if got := s.pd.Triggers(ttftIncident); got != 2 {
		t.Fatalf("PagerDuty triggers = %d, want the opening's and C's retrigger (B's failed)", got)
	}
}
