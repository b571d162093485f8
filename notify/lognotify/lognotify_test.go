package lognotify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing"
)

func notification(fp string) *routing.Notification {
	a := &routing.Alert{Alert: template.Alert{Status: "firing", Fingerprint: fp, Labels: template.KV{"alertname": "TTFTHigh"}}}
	return &routing.Notification{Receiver: "log", Incident: "llm-inference-gpu/chat/TTFT", Kind: routing.KindFiring, Action: routing.ActionPage,
		Results: []*routing.Result{{Alert: a, Classification: routing.Classification{Sector: "llm-inference-gpu", KPIs: []routing.KPI{{ID: "TTFT", Name: "time to first token"}}},
			Decision: routing.Decision{Action: routing.ActionPage, Policy: "burn-rate", Tier: "1h/5m", Reasons: []string{"burn rate 15.2 > 14.4 over 1h"}}}}}
}

func TestEachNotificationIsOneJSONLine(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	if err := l.Notify(context.Background(), notification("abc")); err != nil {
		t.Fatal(err)
	}
	var got Line
	if err := json.Unmarshal(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), &got); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, buf.String())
	}
	if got.Receiver != "log" || got.Action != routing.ActionPage || len(got.Alerts) != 1 ||
		got.Alerts[0].Sector != "llm-inference-gpu" || got.Alerts[0].Decision.Policy != "burn-rate" || got.Alerts[0].Alertname != "TTFTHigh" {
		t.Fatalf("line = %+v", got)
	}
}

// lockedBuffer lets the test read what concurrent writers wrote.
type lockedBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func TestConcurrentNotificationsNeverInterleave(t *testing.T) {
	var buf lockedBuffer
	l := New(&buf)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = l.Notify(context.Background(), notification(string(rune('a'+i%26))))
		}()
	}
	wg.Wait()
	sc := bufio.NewScanner(&buf.Buffer)
	n := 0
	for sc.Scan() {
		var line Line
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d is not JSON: %v", n, err)
		}
		n++
	}
	if n != 50 {
		t.Fatalf("got %d lines, want 50", n)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAWriteFailureIsRetryable(t *testing.T) {
	err := New(failingWriter{}).Notify(context.Background(), notification("x"))
	if err == nil || !routing.Retryable(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
}
