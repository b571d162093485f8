package routing

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

// A failed write of a retrigger's settle alone says what it risks — other
// webhooks' new alerts held, then one more trigger — not an opening's
// "next firing opens it again" (a review: the incident was open, and
// nothing would reopen it).
func TestAFailedSettleSaysWhatItRisks(t *testing.T) {
	for _, tc := range []struct {
		steps []store.IncidentStep
		want  string
	}{
		{[]store.IncidentStep{store.StepTriggered}, "one more PagerDuty trigger"},
		{[]store.IncidentStep{store.StepUntrigger, store.StepTriggered}, "one more PagerDuty trigger"},
		{[]store.IncidentStep{store.StepOpened}, "opens it again"},
		{[]store.IncidentStep{store.StepTriggered, store.StepResolved}, "opens it again"},
	} {
		var ops []store.IncidentOp
		for _, s := range tc.steps {
			ops = append(ops, store.IncidentOp{Step: s})
		}
		if got := incidentSettleRisk(ops); !strings.Contains(got, tc.want) {
			t.Errorf("steps %v: risk %q, want it to say %q", tc.steps, got, tc.want)
		}
	}
}
