package routing

import (
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Updates of several webhooks that share one Slack send: the send says
// PagerDuty was paged again (Repaged), or that a ticket's alert now pages
// (Escalated), when any of them does, whichever came first. Escalation
// lost, Slack redraws the parent only when its header says a quieter
// decision, and a parent drawn as a page goes on showing the alert as the
// ticket it was (a mutation audit found it untested).
func TestASharedUpdateCarriesTheFlagsAnyOfItsUpdatesHas(t *testing.T) {
	for _, f := range []struct {
		name string
		set  func(*alert.Notification)
		get  func(*alert.Notification) bool
	}{
		{"Repaged", func(n *alert.Notification) { n.Repaged = true }, func(n *alert.Notification) bool { return n.Repaged }},
		{"Escalated", func(n *alert.Notification) { n.Escalated = true }, func(n *alert.Notification) bool { return n.Escalated }},
	} {
		plain := func() *batch {
			return &batch{n: &alert.Notification{Incident: "i", Kind: alert.KindFiring, Action: alert.ActionPage}}
		}
		flagged := plain()
		f.set(flagged.n)
		for _, bs := range [][]*batch{{plain(), flagged}, {flagged, plain()}} {
			if !f.get(merge(bs)) {
				t.Errorf("the shared update of updates %s %v, %v is not %s", f.name, f.get(bs[0].n), f.get(bs[1].n), f.name)
			}
		}
		if f.get(merge([]*batch{plain(), plain()})) {
			t.Errorf("a shared update of plain updates is flagged %s", f.name)
		}
	}
}
