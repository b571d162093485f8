package routing

import (
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// Updates of several webhooks that share one Slack send: the send says
// PagerDuty was paged again when any of them does, whichever came first.
func TestASharedUpdateIsRepagedWhenAnyOfItsUpdatesIs(t *testing.T) {
	plain := &batch{n: &alert.Notification{Incident: "i", Kind: alert.KindFiring}}
	repaged := &batch{n: &alert.Notification{Incident: "i", Kind: alert.KindFiring, Repaged: true}}
	if !merge([]*batch{plain, repaged}).Repaged {
		t.Error("the shared update lost the Repaged flag of its second update")
	}
	if merge([]*batch{plain, {n: &alert.Notification{Incident: "i", Kind: alert.KindFiring}}}).Repaged {
		t.Error("a shared update of plain updates is flagged Repaged")
	}
}
