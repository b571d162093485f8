package webhook_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
	"github.com/alertrouter/alertrouter/store"
)

// recordingProcessor records the webhooks processed: each alert's status
// by its instance label.
type recordingProcessor struct {
	mu   sync.Mutex
	seen []map[string]string
}

func (p *recordingProcessor) Process(_ context.Context, msg *alert.Message) (*alert.Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := map[string]string{"": msg.Status}
	for _, a := range msg.Items {
		got[a.Labels["instance"]] = a.Status
	}
	p.seen = append(p.seen, got)
	return &alert.Summary{}, nil
}

func (p *recordingProcessor) processed() []map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]string(nil), p.seen...)
}

// A webhook answered 5xx — one integration failing while another
// delivered the page — whose alerts then resolved: Alertmanager sends no
// resolve of a firing it never counted notified, and the delivered page
// stayed open for good (an audit: 192 of 300). Kept, the webhook is
// processed again once Alertmanager stopped retrying it, each alert
// Alertmanager no longer holds (on two sweeps in a row) resolved, once;
// alerts it holds stay firing; the webhook is forgotten when none fires.
// A webhook of the group answered 2xx since (Alertmanager counts it and
// sends the resolves itself), or an Alertmanager that cannot be asked,
// resolves nothing.
func TestWebhooksAnswered5xxAreResolvedOnAlertmanagersBehalf(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	now := t0
	held := map[string]bool{}
	var heldErr error
	st := store.NewMemory(store.WithClock(func() time.Time { return now }))
	o := &webhook.Orphans{Store: st, Prefix: "t:", After: 5 * time.Minute, Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Held:   func(context.Context, string) (map[string]bool, error) { return held, heldErr }}
	a, b := webhooktest.TTFTAlert("firing", "gpu-a"), webhooktest.TTFTAlert("firing", "gpu-b")
	body := webhooktest.MustJSON(t, webhooktest.Msg("firing", a, b))
	msg, err := webhook.Decode(body, t0)
	if err != nil {
		t.Fatal(err)
	}
	held[msg.Items[0].Fingerprint] = true // gpu-a fires on; gpu-b resolved
	ctx := context.Background()
	proc := &recordingProcessor{}
	o.Record(ctx, msg, body)
	sweep := func(at time.Duration) {
		now = t0.Add(at)
		o.Sweep(ctx, proc, time.Second)
	}
	sweep(time.Minute)
	sweep(6 * time.Minute) // gpu-b absent once
	if got := proc.processed(); len(got) != 0 {
		t.Fatalf("processed %v while Alertmanager may still retry, or after one look; want nothing", got)
	}
	sweep(6*time.Minute + 30*time.Second)
	got := proc.processed()
	if len(got) != 1 || got[0]["gpu-b"] != "resolved" || got[0]["gpu-a"] != "firing" || got[0][""] != "firing" {
		t.Fatalf("processed %v; want one webhook, gpu-b resolved, gpu-a firing", got)
	}
	sweep(7 * time.Minute)
	heldErr = errors.New("connection refused")
	delete(held, msg.Items[0].Fingerprint)
	sweep(8 * time.Minute)
	sweep(9 * time.Minute)
	if got := proc.processed(); len(got) != 1 {
		t.Fatalf("processed %v; want gpu-b resolved once, nothing while Alertmanager cannot be asked", got)
	}
	heldErr = nil
	sweep(10 * time.Minute)
	sweep(11 * time.Minute)
	got = proc.processed()
	if len(got) != 2 || got[1]["gpu-a"] != "resolved" || got[1][""] != "resolved" {
		t.Fatalf("processed %v; want gpu-a resolved second, the webhook resolved", got)
	}
	if members, err := st.Members(ctx, "t:orphans"); err != nil || len(members) != 0 {
		t.Fatalf("kept groups %v, %v; want the webhook forgotten once nothing fires", members, err)
	}

	// Answered 2xx since: forgotten, nothing resolved on Alertmanager's behalf.
	o.Record(ctx, msg, body)
	o.Forget(ctx, msg)
	sweep(30 * time.Minute)
	sweep(31 * time.Minute)
	if got := proc.processed(); len(got) != 2 {
		t.Fatalf("processed %v after the group was answered 2xx; want nothing more", got[2:])
	}
}
