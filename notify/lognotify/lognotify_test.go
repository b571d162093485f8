package lognotify_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/alertrouter/alertrouter/notify/lognotify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

func TestEachNotificationIsOneJSONLine(t *testing.T) {
	var buf bytes.Buffer
	n := lognotify.New(&buf)
	no := notifytest.Notification("log", alert.KindFiring, alert.ActionPage,
		notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionPage))
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	want := `{"receiver":"log","incident":"llm-inference-gpu/chat/TTFT","kind":"firing","action":"page","incident_resolved":false,"alerts":[{"fingerprint":"aaa","alertname":"TTFTHigh","status":"firing","sector":"llm-inference-gpu","kpis":["TTFT"],"decision":{"action":"page","policy":"burn-rate","tier":"1h/5m\u003e14.4","reasons":["burn rate 15.2 \u003e 14.4 over 1h and 16.0 \u003e 14.4 over 5m"]},"hints":[{"id":"queue-time","text":"queue time is 82% of latency: saturation, not slow compute — scale out or shed load"}]}]}` + "\n"
	if buf.String() != want {
		t.Fatalf("got  %s\nwant %s", buf.String(), want)
	}
}

func TestConcurrentNotificationsNeverInterleave(t *testing.T) {
	var buf bytes.Buffer
	n := lognotify.New(&buf)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			no := notifytest.Notification("log", alert.KindFiring, alert.ActionTicket,
				notifytest.Result("A", "aaa", "firing", alert.ActionTicket), notifytest.Result("B", "bbb", "firing", alert.ActionTicket))
			if err := n.Notify(context.Background(), no); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sc := bufio.NewScanner(&buf)
	lines := 0
	for sc.Scan() {
		lines++
		var l lognotify.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || len(l.Alerts) != 2 {
			t.Fatalf("line %d is not a whole notification: %v", lines, err)
		}
	}
	if lines != 50 {
		t.Fatalf("lines = %d, want 50", lines)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAWriteFailureIsRetryable(t *testing.T) {
	err := lognotify.New(failWriter{}).Notify(context.Background(), notifytest.Notification("log", alert.KindFiring, alert.ActionNone))
	if err == nil || !alert.Retryable(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
}
