package routing_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// An update's settle writes the incident's reference only when the send
// changed it: another replica that redrew the parent while this update was
// being sent (its header now a page's) keeps its reference. Written back as
// read at the Join, the stale one said the parent was drawn as a ticket,
// and the next update redrew it again (a mutation audit found it untested).
func TestAnUpdateKeepsTheReferenceAnotherReplicaWroteDuringItsSend(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	var parents atomic.Int32
	p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "a")) // P1

	key := store.IncidentKey("test:", ttftIncident, "slack/slack/0")
	var redraw sync.Once
	e.slack.setFail(func(n *alert.Notification) error {
		redraw.Do(func() { // the other replica's redraw, during this send
			if _, err := e.store.Incidents(t.Context(), []store.IncidentOp{{Key: key, Step: store.StepRef, Ref: "P1 redrawn"}}); err != nil {
				t.Error(err)
			}
		})
		return nil
	})
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "b"))
	e.slack.setFail(nil)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "c"))
	sent := e.slack.notifications()
	if last := sent[len(sent)-1]; last.Ref != "P1 redrawn" {
		t.Errorf("the next update's ref %q, want the other replica's %q", last.Ref, "P1 redrawn")
	}
}
