package routing_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// A closing whose Slack resolve failed put its members back (Abort): the
// incident is still open, under its parent. The replica keeps remembering
// that parent, so an outage's firing of the same episode (the alert sent
// firing again with its start: Alertmanager had resolved it when
// Prometheus' resends lapsed) replies under it — forgotten, a second parent
// was posted, and the first was left saying firing for good (a mutation
// audit found it untested).
func TestAFailedClosingKeepsTheParentForAnOutagesUpdate(t *testing.T) {
	e, p, f := outageEnv(t)
	var parents atomic.Int32
	p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "a")) // P1

	e.slack.setFail(func(n *alert.Notification) error {
		if n.IncidentResolved {
			return errors.New("slack: 503")
		}
		return nil
	})
	if _, err := process(t, p, tAlert("TTFTHigh", "resolved", "ticket", "instance", "a")); err == nil {
		t.Fatal("the closing whose Slack resolve failed was answered 2xx")
	}
	e.slack.setFail(nil)

	f.setDown(true)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "a"))
	sent := e.slack.notifications()
	if last := sent[len(sent)-1]; last.Opening || last.Ref != "P1" {
		t.Errorf("the outage's firing of the still open incident: opening %v, ref %q; want a reply under P1", last.Opening, last.Ref)
	}
	if parents.Load() != 1 {
		t.Errorf("%d parents, want 1", parents.Load())
	}
}
