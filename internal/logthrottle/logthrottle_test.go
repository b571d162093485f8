package logthrottle

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLogsFirstThenOncePerIntervalWithTheCountLeftOut(t *testing.T) {
	now := time.Unix(1000, 0)
	th := &Throttle{Every: 30 * time.Second, Now: func() time.Time { return now }}
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{AddSource: true}))
	ctx := context.Background()
	for range 5 {
		th.Log(ctx, l, slog.LevelWarn, "store:claim", "store failed", "op", "claim")
	}
	th.Log(ctx, l, slog.LevelWarn, "store:write", "store write failed", "op", "write")
	if got := strings.Count(buf.String(), "\n"); got != 2 {
		t.Fatalf("after 5 lines of one kind and 1 of another within the interval, %d lines logged, want 2 (one per kind):\n%s", got, buf.String())
	}
	if strings.Contains(buf.String(), "suppressed_since_last") {
		t.Fatalf("the first line of a kind says lines were left out:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "source=") || strings.Contains(buf.String(), "logthrottle.go") {
		t.Fatalf("the lines' source is not their caller's:\n%s", buf.String())
	}
	now = now.Add(30 * time.Second)
	buf.Reset()
	th.Log(ctx, l, slog.LevelWarn, "store:claim", "store failed", "op", "claim")
	if !strings.Contains(buf.String(), "suppressed_since_last=4") || !strings.Contains(buf.String(), "throttled_to_one_per=30s") {
		t.Fatalf("the line an interval later does not say the 4 left out:\n%s", buf.String())
	}
	buf.Reset()
	th.Log(ctx, l, slog.LevelWarn, "store:claim", "store failed", "op", "claim")
	if buf.Len() != 0 {
		t.Fatalf("a line right after the one logged was logged too:\n%s", buf.String())
	}
}

func TestDisabledLevelCountsNothing(t *testing.T) {
	th := &Throttle{}
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError}))
	th.Log(context.Background(), l, slog.LevelWarn, "k", "hidden")
	th.Log(context.Background(), l, slog.LevelError, "k", "shown")
	if !strings.Contains(buf.String(), "shown") {
		t.Fatalf("a line at an enabled level was throttled by one at a disabled level:\n%s", buf.String())
	}
}

func TestKindsStayBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	th := &Throttle{Every: time.Second, Now: func() time.Time { return now }}
	for i := range 10 * maxKeys {
		if i%maxKeys == 0 {
			now = now.Add(2 * time.Second)
		}
		th.Allow(fmt.Sprint(i))
	}
	if len(th.seen) > maxKeys {
		t.Fatalf("%d kinds remembered, want at most %d", len(th.seen), maxKeys)
	}
	// A kind not remembered (the map full of kinds within their interval)
	// is still logged: never a line lost for want of room.
	for i := range maxKeys {
		th.Allow(fmt.Sprint("fresh", i))
	}
	if ok, _ := th.Allow("one more"); !ok {
		t.Fatal("a new kind with the map full was not logged")
	}
}

// A line whose cause changed is another kind: keyed by ErrorClass, Redis
// back with another password is logged at once, not an interval later.
func TestErrorClassTellsCausesApart(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("redis get: state store unavailable: dial tcp 127.0.0.1:6379: connect: connection refused"): "connection refused",
		fmt.Errorf("redis get: state store unavailable: WRONGPASS invalid username-password pair"):             "WRONGPASS",
		fmt.Errorf("redis write probe: READONLY You can't write against a read only replica."):                 "READONLY",
		fmt.Errorf("send trigger event: HTTP 500: Internal Server Error"):                                      "HTTP 500",
		fmt.Errorf("send trigger event: HTTP 429"):                                                             "HTTP 429",
		fmt.Errorf("slack server error: 500 Internal Server Error"):                                            "HTTP 500",
		fmt.Errorf("post: slack rate limit exceeded, retry after 30s"):                                         "rate limited",
		// Causes the notifiers name in words, not a status line (an
		// audit: Slack's channel_not_found, then token_revoked, then
		// invalid_auth logged only the first for the whole run).
		fmt.Errorf("send trigger event: PagerDuty rejected the event (400): Invalid routing key"):                              "HTTP 400",
		fmt.Errorf("call Slack: channel_not_found — the app cannot see #alerts"):                                               "slack channel_not_found",
		fmt.Errorf("call Slack: token_revoked — reinstall the app"):                                                            "slack token_revoked",
		fmt.Errorf("send trigger event: PagerDuty throttled this routing key (429): its events are paced (one per 500ms now)"): "paced",
		fmt.Errorf("call Slack: no"): "other",
		fmt.Errorf("call Slack: the answer is not Slack's JSON (HTML from a proxy?)"): "other",
		fmt.Errorf("call Slack: ratelimited"):                                         "slack ratelimited",
		fmt.Errorf("HTTP 5xx"):                                                        "other",
		fmt.Errorf("something else"):                                                  "other",
		nil:                                                                           "",
	} {
		if got := ErrorClass(err); got != want {
			t.Errorf("ErrorClass(%v) = %q, want %q", err, got, want)
		}
	}
}
