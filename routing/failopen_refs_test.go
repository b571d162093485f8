package routing_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
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
// So does one that started a minute before this replica saw the parent:
// a Prometheus whose clock runs a minute behind (startSkew; a mutation
// audit found that margin untested).
func TestAnOutagesNewEpisodePostsANewParent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start time.Duration // of the new episode's alert, from now
	}{
		{"started after P1 was seen", time.Minute},
		{"started a minute before, a Prometheus behind", -time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, p, f := outageEnv(t)
			var parents atomic.Int32
			p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
			other := e.pipeline()
			other.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
			mustProcess(t, p, tAlert("TTFTHigh", "firing", "ticket", "instance", "a"))       // P1, seen by p
			mustProcess(t, other, tAlert("TTFTHigh", "resolved", "ticket", "instance", "a")) // resolved by the other replica
			f.setDown(true)
			b := tAlert("TTFTHigh", "firing", "ticket", "instance", "b")
			b.StartsAt = time.Now().Add(tc.start).Format(time.RFC3339Nano)
			mustProcess(t, p, b)
			sent := e.slack.notifications()
			if last := sent[len(sent)-1]; !last.Opening || last.Ref != "P2" {
				t.Errorf("the new episode in the outage: opening %v, ref %q; want a parent of its own, P2", last.Opening, last.Ref)
			}
		})
	}
}

// In an outage the webhook's older alerts, which this replica sent since
// and so deduplicates (dedup.Deferred.Pending), still say the episode goes
// on: the new alerts beside them reply under the known parent, webhook
// after webhook, rather than each posting a parent.
func TestAnOutagesNewAlertsBesideDeduplicatedOnesReplyUnderTheParent(t *testing.T) {
	e, p, f := outageEnv(t)
	var parents atomic.Int32
	p.Receivers["slack"][0].Notifier = parentSink{e.slack, &parents}
	a := tAlert("TTFTHigh", "firing", "ticket", "instance", "a") // started long ago
	mustProcess(t, p, a)                                         // P1
	f.setDown(true)
	fresh := func(inst string) webhooktest.Alert {
		x := tAlert("TTFTHigh", "firing", "ticket", "instance", inst)
		x.StartsAt = time.Now().Format(time.RFC3339Nano)
		return x
	}
	b, c := fresh("b"), fresh("c")
	mustProcess(t, p, a, b)
	mustProcess(t, p, a, b, c) // a and b deduplicated here: c alone is new
	sent := e.slack.notifications()
	if last := sent[len(sent)-1]; last.Opening || last.Ref != "P1" || len(last.Results) != 1 {
		t.Errorf("c in the outage: opening %v, ref %q, %d alerts; want c alone replying under P1", last.Opening, last.Ref, len(last.Results))
	}
	if parents.Load() != 1 {
		t.Errorf("%d parents, want 1", parents.Load())
	}
}
