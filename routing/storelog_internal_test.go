package routing

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// A step the webhook goes on without (recording SLO pages, writing flap
// histories) failing under fail_closed said "continuing without it (fail
// open)" (audit SENTINEL): fail_closed holds back deliveries, and the log
// says so; fail open, it says fail open.
func TestAStepsStoreFailureSaysWhatFailClosedDoes(t *testing.T) {
	for _, closed := range []bool{false, true} {
		var logs bytes.Buffer
		p := &Pipeline{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Dedup: DedupOptions{FailClosed: closed}}
		p.countStoreError("record SLO pages", errors.New("redis: connection refused"))
		out := logs.String()
		if strings.Contains(out, "(fail open)") == closed || !strings.Contains(out, "op=\"record SLO pages\"") {
			t.Errorf("fail_closed %v: %s", closed, out)
		}
	}
}
