package routing_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// parentSink draws incidents as Slack's Web API does, each opening posting
// a parent of its own (P1, P2, …), updates replying under their Ref.
type parentSink struct {
	*sink
	parents *atomic.Int32
}

func (s parentSink) Notify(ctx context.Context, n *alert.Notification) error {
	if n.Opening && n.Ref == "" {
		n.Ref = fmt.Sprintf("P%d", s.parents.Add(1))
	}
	return s.sink.Notify(ctx, n)
}

func (parentSink) DrawsIncidents() bool { return true }
func (parentSink) ThreadsUpdates() bool { return true }

// With the store unreachable (fail open), each webhook bringing a new alert
// of an incident posted a Slack parent of its own (audit SENTINEL: 122
// parents for 30 incidents in a 2-second failover, 92 left saying firing
// for good). An incident whose parent the replica saw lately is updated in
// its thread; one it never saw gets one parent, which the outage's later
// updates reply under.
func TestAStoreOutagePostsNoParentPerWebhook(t *testing.T) {
	e, p, f := outageEnv(t)
	var parents atomic.Int32
	p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}

	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "a"))
	if parents.Load() != 1 {
		t.Fatalf("%d parents for the incident's opening, want 1", parents.Load())
	}
	f.setDown(true)
	for _, inst := range []string{"b", "c", "d"} {
		mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", inst))
	}
	for _, inst := range []string{"x", "y", "z"} { // an incident never seen
		mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", inst, "service", "search"))
	}
	sent := e.slack.notifications()
	if len(sent) != 7 {
		t.Fatalf("Slack got %d notifications, want 7", len(sent))
	}
	for i, n := range sent[1:4] {
		if n.Opening || n.Ref != "P1" {
			t.Errorf("update %d of the known incident in the outage: opening %v, ref %q; want a reply under P1", i, n.Opening, n.Ref)
		}
	}
	if !sent[4].Opening || sent[4].Ref != "P2" {
		t.Errorf("the unseen incident's first firing in the outage: opening %v, ref %q; want it to post P2", sent[4].Opening, sent[4].Ref)
	}
	for i, n := range sent[5:] {
		if n.Opening || n.Ref != "P2" {
			t.Errorf("update %d of the unseen incident in the outage: opening %v, ref %q; want a reply under P2", i, n.Opening, n.Ref)
		}
	}
	if parents.Load() != 2 {
		t.Errorf("%d parents, want 2", parents.Load())
	}
}

// An incident that closed (another replica resolved it) and opened again
// with a new parent: a replica whose Join reached the new episode replies
// under the new parent in an outage, not under the one it saw first.
func TestAnOutagesUpdateRepliesUnderTheEpisodesParent(t *testing.T) {
	e, p, f := outageEnv(t)
	var parents atomic.Int32
	p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
	other := e.pipeline() // another replica, same store
	other.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}

	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "a"))       // P1, seen by p
	mustProcess(t, other, tAlert("TTFTHigh", "resolved", "ticket", "instance", "a")) // closed by the other replica
	mustProcess(t, other, tAlert("TTFTHigh", "firing", "ticket", "instance", "b"))   // P2: a new episode
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "c"))       // p joins it
	f.setDown(true)
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "d"))
	sent := e.slack.notifications()
	if last := sent[len(sent)-1]; last.Ref != "P2" || last.Opening {
		t.Errorf("the outage's firing: opening %v, ref %q; want a reply under the open episode's parent P2", last.Opening, last.Ref)
	}
}

// Another replica resolved the incident since this one saw its parent; in
// an outage a new episode of it (an alert that started after) posts a
// parent of its own rather than replying under the resolved one, where a
// ticket was hidden (a review). PagerDuty, for pages, triggers either way.
func TestAnOutagesNewEpisodePostsANewParent(t *testing.T) {
	e, p, f := outageEnv(t)
	var parents atomic.Int32
	p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
	other := e.pipeline()
	other.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
	mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "a"))       // P1, seen by p
	mustProcess(t, other, tAlert("TTFTHigh", "resolved", "ticket", "instance", "a")) // resolved by the other replica
	f.setDown(true)
	b := tAlert("TTFTHigh", "firing", "ticket", "instance", "b")
	b.StartsAt = time.Now().Add(time.Minute).Format(time.RFC3339Nano) // started after P1 was seen
	mustProcess(t, p, b)
	sent := e.slack.notifications()
	if last := sent[len(sent)-1]; !last.Opening || last.Ref != "P2" {
		t.Errorf("the new episode in the outage: opening %v, ref %q; want a parent of its own, P2", last.Opening, last.Ref)
	}
}

// An alert that joined an incident during an outage is a member once the
// store answers: another alert's resolve then leaves the incident open
// (a review: PagerDuty resolved while the outage's alert fired, its
// repeats deduplicated for hours).
func TestAnAlertJoinedInAnOutageKeepsItsIncidentOpen(t *testing.T) {
	e, p, f := outageEnv(t)
	other := e.pipeline()
	other.Store = f
	other.Deferred = p.Deferred
	in := func(pl *routing.Pipeline, group string, alerts ...webhooktest.Alert) {
		t.Helper()
		msg := payload(t, alerts...)
		msg.GroupKey = group
		if _, err := pl.Process(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
	}
	const groupA, groupB = `{}:{alertname="A"}`, `{}:{alertname="B"}`
	in(p, groupA, tAlert("TTFTHigh", "firing", "page", "instance", "a"))
	f.setDown(true)
	in(other, groupB, tAlert("TTFTHigh", "firing", "page", "instance", "b"))
	f.setDown(false)
	eventually(t, "the outage's writes reach the store", func() bool { return p.Deferred.Len() == 0 })
	in(p, groupA, tAlert("TTFTHigh", "resolved", "page", "instance", "a"))
	for _, ev := range e.pd.events() {
		if strings.HasPrefix(ev, "resolve") {
			t.Fatalf("pagerduty events %v: the incident was resolved while b, joined in the outage, fires", e.pd.events())
		}
	}
	in(other, groupB, tAlert("TTFTHigh", "resolved", "page", "instance", "b"))
	if got := e.pd.events(); got[len(got)-1] != "resolve llm-inference-gpu/chat/TTFT" {
		t.Errorf("pagerduty events %v, want b's resolve to close it", got)
	}
}
