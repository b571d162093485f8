package routing_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/store"
)

// A resolve carrying an earlier start than the firing the incident holds
// (Alertmanager settles on the earliest start of an HA Prometheus pair's
// copies) closes the incident; when PagerDuty's resolve fails, the closing
// is aborted and the member put back with the start the incident held, not
// the resolve's: the incident is as before the attempt. Before, the
// resolve's start was written back. Alertmanager's retry then resolves it,
// once.
func TestAFailedClosingPutsTheMemberBackWithItsStoredStart(t *testing.T) {
	e, addr := retriggerEnv(t)
	s := newStandIns(t)
	p := s.replica(e)
	base := tAlert("TTFTHigh", "firing", "page")
	late := webhooktest.MkAlert("firing", base.Labels, base.Annotations, `vllm:time_to_first_token_seconds_bucket > 2`, webhooktest.Start.Add(time.Minute))
	mustProcess(t, p, late)
	membersKey := store.IncidentKey("test:", ttftIncident, "pagerduty/pagerduty/0") + ":m"
	held := strconv.FormatInt(webhooktest.Start.Add(time.Minute).UnixMilli(), 10)
	if got, err := redistest.Do(addr, "HGET", membersKey, late.Fingerprint); err != nil || got != held {
		t.Fatalf("member start %q (%v), want %s", got, err, held)
	}
	s.pd.FailN(3, pdtest.Fault{Status: http.StatusInternalServerError}) // every attempt of the resolve
	resolve := tAlert("TTFTHigh", "resolved", "page")                   // startsAt a minute earlier
	if _, err := process(t, p, resolve); err == nil {
		t.Fatal("the failed resolve was answered as delivered")
	}
	if got, err := redistest.Do(addr, "HGET", membersKey, late.Fingerprint); err != nil || got != held {
		t.Fatalf("after the aborted closing the member's start is %q (%v), want the one the incident held, %s", got, err, held)
	}
	mustProcess(t, p, resolve)
	if got := s.pd.Resolves(ttftIncident); got != 1 {
		t.Errorf("PagerDuty resolves = %d after Alertmanager's retry, want 1", got)
	}
}
