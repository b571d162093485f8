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
	"github.com/alertrouter/alertrouter/routing/dedup"
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
// Alertmanager has not held for After resolved, once — an absence shorter
// than After (an Alertmanager restarted without its data, until Prometheus
// sends the alerts again: a review saw a live page resolved 7 s after such
// a restart) resolves nothing; alerts it holds stay firing; the webhook is
// forgotten when none fires. A group delivered since (the settle removes
// it from the kept ones), or an Alertmanager that cannot be asked,
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
	fpA := msg.Items[0].Fingerprint
	held[fpA] = true // gpu-a fires on; gpu-b resolved
	ctx := context.Background()
	proc := &recordingProcessor{}
	o.Record(ctx, msg, body)
	// sweep sweeps every 30 seconds (Every) up to at, and returns how many
	// webhooks were processed.
	last := time.Duration(-1)
	sweep := func(at time.Duration) int {
		for next := min(last+30*time.Second, at); last < at; next = min(last+30*time.Second, at) {
			if last < 0 {
				next = at
			}
			now, last = t0.Add(next), next
			o.Sweep(ctx, proc, time.Second)
		}
		return len(proc.processed())
	}
	for _, at := range []time.Duration{time.Minute, 6 * time.Minute, 9 * time.Minute} {
		if n := sweep(at); n != 0 {
			t.Fatalf("processed %v at %s: while Alertmanager may still retry, or gpu-b absent for less than 5m; want nothing", proc.processed(), at)
		}
	}
	// Alertmanager cannot be asked: the absence counts again from the next
	// sweep that can (a review: a crash-looping Alertmanager's brief empty
	// answers, minutes apart, resolved a live page).
	sweep(9*time.Minute + 30*time.Second)
	heldErr = errors.New("connection refused")
	sweep(10 * time.Minute) // one sweep cannot ask
	heldErr = nil
	for _, at := range []time.Duration{11 * time.Minute, 15 * time.Minute} {
		if n := sweep(at); n != 0 {
			t.Fatalf("processed %v at %s: gpu-b absent on consecutive sweeps since 10m30 only", proc.processed(), at)
		}
	}
	sweep(16*time.Minute + 30*time.Second)
	got := proc.processed()
	if len(got) != 1 || got[0]["gpu-b"] != "resolved" || got[0]["gpu-a"] != "firing" || got[0][""] != "firing" {
		t.Fatalf("processed %v; want one webhook, gpu-b resolved (absent since 10m30), gpu-a firing", got)
	}
	// gpu-a gone a while (Alertmanager restarted without its data), held
	// again, then gone: resolved 5 minutes after it was last held.
	delete(held, fpA)
	sweep(17 * time.Minute)
	held[fpA] = true
	sweep(18 * time.Minute)
	delete(held, fpA)
	sweep(19 * time.Minute)
	if n := sweep(23 * time.Minute); n != 1 {
		t.Fatalf("processed %v; want gpu-a kept firing: absent 4 minutes since it was last held", proc.processed()[1:])
	}
	sweep(24*time.Minute + 30*time.Second)
	got = proc.processed()
	if len(got) != 2 || got[1]["gpu-a"] != "resolved" || got[1][""] != "resolved" {
		t.Fatalf("processed %v; want gpu-a resolved second, the webhook resolved", got)
	}
	if members, err := st.Members(ctx, dedup.UnsentKey("t:")); err != nil || len(members) != 0 {
		t.Fatalf("kept groups %v, %v; want the webhook forgotten once nothing fires", members, err)
	}

	// Delivered since (the settle takes the group out): nothing resolved.
	o.Record(ctx, msg, body)
	if _, err := st.RemoveMembers(ctx, dedup.UnsentKey("t:"), msg.GroupID()); err != nil {
		t.Fatal(err)
	}
	delete(held, fpA)
	for _, at := range []time.Duration{30 * time.Minute, 36 * time.Minute, 42 * time.Minute} {
		if n := sweep(at); n != 2 {
			t.Fatalf("processed %v after the group was delivered; want nothing more", proc.processed()[2:])
		}
	}
	// Answered 2xx with nothing sent (every alert deduplicated, no settle):
	// a group the last Refresh found kept is forgotten too.
	o.Record(ctx, msg, body)
	o.Refresh(ctx)
	o.Forget(ctx, msg)
	if members, err := st.Members(ctx, dedup.UnsentKey("t:")); err != nil || len(members) != 0 {
		t.Fatalf("kept groups %v, %v after a 2xx; want none", members, err)
	}
}
