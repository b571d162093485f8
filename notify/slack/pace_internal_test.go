package slack

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/notify"
)

// The pacer of a channel: nothing paced before Slack's first 429; then one
// turn a second, none before the Retry-After, the first kept for the post
// Slack refused; a ticket's reach a second
// shorter than a page's, so that the mirror of a page still gets a turn the
// tickets cannot take; pacing ends pacedFor after the last 429.
func TestPacerTurns(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	p := notify.NewPacers(postInterval, pacedFor).Of("#triage")
	for range 5 {
		if wait, ok := p.Turn(t0, maxPaceWait-postInterval); !ok || wait != 0 {
			t.Fatalf("a turn before any 429: %v, %t; want at once", wait, ok)
		}
	}
	if kept := p.Limit(t0, time.Second); !kept.Equal(t0.Add(time.Second)) {
		t.Fatalf("the refused post's turn after a 429 with Retry-After 1s: %v; want 1s on", kept.Sub(t0))
	}
	ticket, page := maxPaceWait-postInterval, maxPaceWait
	if wait, ok := p.Turn(t0, ticket); ok || wait != 2*time.Second {
		t.Fatalf("a ticket's turn 2s away: %v, %t; want refused", wait, ok)
	}
	if wait, ok := p.Turn(t0, page); !ok || wait != 2*time.Second {
		t.Fatalf("a page's turn 2s away: %v, %t; want taken", wait, ok)
	}
	if wait, ok := p.Turn(t0, page); ok || wait != 3*time.Second {
		t.Fatalf("a page's turn 3s away: %v, %t; want refused", wait, ok)
	}
	if wait, ok := p.Turn(t0.Add(pacedFor+time.Second), ticket); !ok || wait != 0 {
		t.Fatalf("a turn %s after the last 429: %v, %t; want at once", pacedFor+time.Second, wait, ok)
	}
}

// A later redraw waits Slack's Retry-After up to notify.MaxRetryAfter: one
// of a day left a resolved parent drawn firing for a day (a review); without
// one it backs off up to maxRedrawWait.
func TestARedrawWaitsAtMostAMinuteForARetryAfter(t *testing.T) {
	for range 20 {
		if w := redrawWait(24*time.Hour, 0); w < notify.MaxRetryAfter || w > notify.MaxRetryAfter*3/2 {
			t.Fatalf("a Retry-After of a day waits %v, want within [%v, %v]", w, notify.MaxRetryAfter, notify.MaxRetryAfter*3/2)
		}
		if w := redrawWait(6*time.Second, 0); w < 6*time.Second || w > 9*time.Second {
			t.Fatalf("a Retry-After of 6s waits %v", w)
		}
		if w := redrawWait(0, 10); w < maxRedrawWait || w > maxRedrawWait*3/2 {
			t.Fatalf("the eleventh try without Retry-After waits %v, want about %v", w, maxRedrawWait)
		}
	}
}
