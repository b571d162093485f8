package routing_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/dedup"
)

// A group whose webhook was answered 5xx is kept for a resolve on
// Alertmanager's behalf (webhook.Orphans); once a webhook of it is
// delivered, Alertmanager counts it notified and resolves it itself: the
// settle takes the group out — a review saw a group kept past its 2xx have
// its live page resolved when Alertmanager restarted. A webhook that
// failed leaves it in.
func TestADeliveredWebhookTakesItsGroupOutOfTheUnsent(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	p.ForgetsUnsent = true
	ctx := t.Context()
	a := tAlert("TTFTHigh", "firing", "ticket", "instance", "a")
	group := payload(t, a).GroupID()
	key := dedup.UnsentKey("test:")
	kept := func() bool {
		t.Helper()
		m, err := e.store.Members(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(m, group)
	}
	if err := e.store.AddMembers(ctx, key, 0, group); err != nil {
		t.Fatal(err)
	}
	e.slack.setFail(func(*alert.Notification) error { return errors.New("slack server error: 500") })
	if _, err := process(t, p, a); err == nil {
		t.Fatal("the failed webhook answered success")
	}
	if !kept() {
		t.Fatal("a failed webhook took its group out of the unsent")
	}
	e.slack.setFail(nil)
	mustProcess(t, p, a) // Alertmanager's retry
	if kept() {
		t.Fatal("the delivered webhook left its group among the unsent")
	}
}
