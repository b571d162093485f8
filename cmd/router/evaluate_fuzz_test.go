package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// Any payload Decode accepts is evaluated — classified, decided, routed —
// without a panic, and every alert gets a decision the pipeline acts on: a
// panic here happens in the webhook's handler, before any send, and every
// retry of the same payload would meet it again, so its alerts (pages
// among them) would never go out. Seeds: the webhooks of testdata and the
// real-world corpus (public alerting rules as Alertmanager sends them).
func FuzzEvaluate(f *testing.F) {
	p, err := evaluator(config.LoadDefault())
	if err != nil {
		f.Fatal(err)
	}
	webhooks, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "webhook", "*.json"))
	for _, name := range webhooks {
		if b, err := os.ReadFile(name); err == nil && len(b) < 16<<10 {
			f.Add(b)
		}
	}
	corpus, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "corpus", "*.json"))
	for _, name := range corpus {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var c struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(b, &c); err == nil && len(c.Payload) > 0 && len(c.Payload) < 16<<10 {
			f.Add([]byte(c.Payload))
		}
	}
	if len(webhooks) == 0 || len(corpus) == 0 {
		f.Fatal("no seeds: testdata/webhook or testdata/corpus missing")
	}
	f.Add([]byte(`{"version":"4","alerts":[{"labels":{"alertname":"x","slo":"s","burn_rate_1h":"NaN"},"annotations":{"burn_rate_1h":"1e309","burn_rate_5m":"-Inf","value":"0x1p-2"}}]}`))
	actions := []alert.Action{alert.ActionPage, alert.ActionTicket, alert.ActionNone}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, err := webhook.Decode(body, time.Unix(1_700_000_000, 0))
		if err != nil {
			return // a 4xx, FuzzDecode's business
		}
		results := p.Evaluate(msg)
		if len(results) != len(msg.Items) {
			t.Fatalf("%d results for %d alerts", len(results), len(msg.Items))
		}
		for i, r := range results {
			if !slices.Contains(actions, r.Decision.Action) {
				t.Fatalf("alert %d: action %q, want one of %v", i, r.Decision.Action, actions)
			}
			if r.Decision.Action != alert.ActionNone && len(r.Receivers) == 0 && r.SuppressedBy == "" && r.MutedBy == "" {
				t.Fatalf("alert %d: %s with no receiver", i, r.Decision.Action)
			}
		}
	})
}
