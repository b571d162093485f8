package routing

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify/notifytest"
)

// A check set by a delivery reports the run only if no failure came
// after that delivery; otherwise the run goes on, and the next delivery
// sets another check.
func TestARecoveryCheckAfterAnotherFailureReportsNothing(t *testing.T) {
	var h integrationHealth
	h.checkAfter = time.Hour // the test runs the check itself
	var logs notifytest.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	now := time.Now()
	reports := 0
	report := func(failRun) { reports++ }
	h.failed("oncall", "pagerduty/0", now, errors.New("HTTP 500"))
	h.delivered("oncall", "pagerduty/0", now.Add(time.Second), logger) // sets a check
	n := h.failing["oncall/pagerduty/0"].n
	h.failed("oncall", "pagerduty/0", now.Add(2*time.Second), errors.New("HTTP 500"))
	h.check("oncall/pagerduty/0", n, report)
	if reports != 0 || h.failing["oncall/pagerduty/0"] == nil || h.failing["oncall/pagerduty/0"].checking {
		t.Fatalf("a check after a later failure: %d reports, run %+v; want none, the run going on with no check set", reports, h.failing["oncall/pagerduty/0"])
	}
	h.delivered("oncall", "pagerduty/0", now.Add(3*time.Second), logger) // sets another
	h.check("oncall/pagerduty/0", h.failing["oncall/pagerduty/0"].n, report)
	if reports != 1 || h.failing["oncall/pagerduty/0"] != nil || h.any.Load() {
		t.Fatalf("a check with no failure since its delivery: %d reports, want 1 and the run ended", reports)
	}
	if logs.String() != "" {
		t.Errorf("the checks set by delivered logged before they ran:\n%s", logs.String())
	}
}
