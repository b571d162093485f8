package routing_test

import (
	"context"
	"testing"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/store"
)

// threadingSink draws incidents as Slack's Web API does: the opening posts
// a parent (its Ref), updates reply under it (alert.ThreadsUpdates) — or,
// threads false, as an incoming webhook, each a message of its own.
type threadingSink struct {
	*sink
	threads bool
}

func (s threadingSink) Notify(ctx context.Context, n *alert.Notification) error {
	if n.Opening && n.Ref == "" {
		n.Ref = "C0001 1700000000.000100"
	}
	return s.sink.Notify(ctx, n)
}

func (threadingSink) DrawsIncidents() bool   { return true }
func (s threadingSink) ThreadsUpdates() bool { return s.threads }

// The incident's state lost (its keys evicted or deleted, or Redis restored)
// while its alerts' markers survive: each webhook's partial resolve had no
// parent to reply under and posted a message of its own — an audit counted
// 9 top-level "… 20 resolved" messages under one incident's stuck parent.
// They are not posted; the incident's last resolve still is, once. Posting
// by incoming webhook (every notification a message of its own) they go
// out as before.
func TestPartialResolvesOfAnIncidentWhoseStateWasLostPostNoMessagesOfTheirOwn(t *testing.T) {
	for _, threads := range []bool{true, false} {
		srv := redistest.Start(t)
		e := redisEnv(t, []string{srv.Addr()}, false)
		p := e.pipeline()
		p.Receivers["slack"][0].Notifier = threadingSink{e.slack, threads}
		a := tAlert("TTFTHigh", "firing", "ticket", "instance", "a")
		b := tAlert("TTFTHigh", "firing", "ticket", "instance", "b")
		c := tAlert("TTFTHigh", "firing", "ticket", "instance", "c")
		mustProcess(t, p, a, b, c)
		sent := e.slack.notifications()
		if len(sent) != 1 || !sent[0].Opening {
			t.Fatalf("opening: Slack got %d notifications, want the opening", len(sent))
		}
		state := store.IncidentKey("test:", sent[0].Incident, "slack/slack/0")
		for _, k := range []string{state, state + ":m"} {
			if n, err := redistest.Do(srv.Addr(), "DEL", k); err != nil || n != "1" {
				t.Fatalf("DEL %s = %s, %v: the test's idea of the incident's keys is wrong", k, n, err)
			}
		}
		ra := tAlert("TTFTHigh", "resolved", "ticket", "instance", "a")
		rb := tAlert("TTFTHigh", "resolved", "ticket", "instance", "b")
		rc := tAlert("TTFTHigh", "resolved", "ticket", "instance", "c")
		if sum := mustProcess(t, p, ra, b, c); sum.Failed != 0 {
			t.Fatalf("partial resolve answered %+v", sum)
		}
		mustProcess(t, p, ra, rb, c)
		partials := len(e.slack.notifications()) - 1
		mustProcess(t, p, ra, rb, rc)
		resolves := 0
		for _, n := range e.slack.notifications() {
			if n.IncidentResolved {
				resolves++
			}
		}
		if threads && (partials != 0 || resolves != 1) {
			t.Errorf("threads: %d partial resolves posted with no parent, %d incident resolves; want none and 1", partials, resolves)
		}
		if !threads && partials != 2 {
			t.Errorf("incoming webhook: %d partial resolves posted, want 2 (each a message of its own, as any update)", partials)
		}
	}
}
