// Package logthrottle keeps a line that repeats on every request from
// flooding the log while a dependency is down: during a Redis outage each
// webhook met the same failures in several steps, and the router logged
// about 40 lines per webhook. The first line of a kind is logged at once;
// later ones at most once per interval, carrying how many were left out.
// The metrics still count every failure.
package logthrottle

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"
)

// DefaultEvery is the interval of a zero Throttle.
const DefaultEvery = 30 * time.Second

// maxKeys bounds the kinds remembered; past it, kinds not logged for an
// interval are forgotten, and a new kind is logged every time. The keys
// are a handful of store operations, and the delivery failures of each
// integration: hundreds in a large organisation's configuration.
const maxKeys = 4096

// Throttle logs at most one line per key and interval. The zero value
// throttles to DefaultEvery; it is safe for concurrent use.
type Throttle struct {
	// Every is the interval (DefaultEvery when 0).
	Every time.Duration
	// Now returns the current time (time.Now when nil; tests).
	Now func() time.Time

	mu   sync.Mutex
	seen map[string]*kind
}

type kind struct {
	last       time.Time
	suppressed int
}

// every is the interval, DefaultEvery when unset.
func (t *Throttle) every() time.Duration {
	if t.Every <= 0 {
		return DefaultEvery
	}
	return t.Every
}

// Allow reports whether a line of kind key is logged now and, when it is,
// how many lines of that kind were left out since the last one logged.
func (t *Throttle) Allow(key string) (ok bool, suppressed int) {
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	every := t.every()
	at := now()
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.seen[key]
	if k == nil {
		if t.seen == nil {
			t.seen = map[string]*kind{}
		}
		if len(t.seen) >= maxKeys {
			for key, old := range t.seen {
				if at.Sub(old.last) >= every {
					delete(t.seen, key)
				}
			}
		}
		if len(t.seen) < maxKeys {
			t.seen[key] = &kind{last: at}
		}
		return true, 0
	}
	if at.Sub(k.last) < every {
		k.suppressed++
		return false, 0
	}
	suppressed, k.suppressed, k.last = k.suppressed, 0, at
	return true, suppressed
}

// Log logs msg with args at level through l unless a line of kind key was
// logged less than an interval ago; a line logged after some were left out
// says how many ("suppressed_since_last") and over what interval.
func (t *Throttle) Log(ctx context.Context, l *slog.Logger, level slog.Level, key, msg string, args ...any) {
	if l == nil || !l.Enabled(ctx, level) {
		return
	}
	ok, n := t.Allow(key)
	if !ok {
		return
	}
	if n > 0 {
		args = append(args, "suppressed_since_last", n, "throttled_to_one_per", t.every().String())
	}
	// The line's source is Log's caller, as if it had logged it.
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	r := slog.NewRecord(time.Now(), level, msg, pcs[0])
	r.Add(args...)
	_ = l.Handler().Handle(ctx, r)
}

// errorClasses are the causes ErrorClass tells apart, as they appear in
// the errors of Redis, of the network and of the notifiers ("timed out
// after 10s" first: the same timeout ends a request as "deadline
// exceeded" or "request canceled").
var errorClasses = []string{"timed out", "connection refused", "i/o timeout", "deadline exceeded", "broken pipe", "connection reset",
	"no such host", "NOAUTH", "WRONGPASS", "NOPERM", "READONLY", "OOM", "LOADING", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN"}

// ErrorClass is a coarse cause of err, for a throttling key: lines of one
// kind whose cause changed (Redis back with another password: connection
// refused, then WRONGPASS) are logged at once rather than a whole interval
// later.
func ErrorClass(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, c := range errorClasses {
		if strings.Contains(msg, c) {
			return c
		}
	}
	// An HTTP status as the notifiers' errors write it ("HTTP 500: …",
	// "HTTP 429", slack-go's "slack server error: 500 …"): PagerDuty
	// refusing after failing is another cause.
	for _, p := range []string{"HTTP ", "server error: "} {
		if i := strings.Index(msg, p); i >= 0 && len(msg) >= i+len(p)+3 && isDigits(msg[i+len(p):i+len(p)+3]) {
			return "HTTP " + msg[i+len(p):i+len(p)+3]
		}
	}
	// PagerDuty's refusal ("PagerDuty rejected the event (400): …").
	if p := "rejected the event ("; strings.Contains(msg, p) {
		i := strings.Index(msg, p) + len(p)
		if len(msg) >= i+3 && isDigits(msg[i:i+3]) {
			return "HTTP " + msg[i:i+3]
		}
	}
	// slack-go's 429 ("slack rate limit exceeded, retry after 30s").
	if strings.Contains(msg, "rate limit") {
		return "rate limited"
	}
	// A send held back by the router's own pacing after a 429 ("PagerDuty
	// throttled this routing key (429): its events are paced …").
	if strings.Contains(msg, "are paced") || strings.Contains(msg, "is paced") {
		return "paced"
	}
	// Slack's Web API error code ("call Slack: channel_not_found — …"):
	// a channel archived, then the token revoked, are two causes (an
	// audit: the second was not logged for the whole run).
	if _, rest, ok := strings.Cut(msg, "call Slack: "); ok {
		n := 0
		for n < len(rest) && (rest[n] >= 'a' && rest[n] <= 'z' || rest[n] == '_') {
			n++
		}
		// A code ends the text, or comes before the router's hint (" —")
		// or a note (" ("): "call Slack: the answer is not Slack's JSON"
		// is no code (a review).
		if after := rest[n:]; n >= 3 && (after == "" || strings.HasPrefix(after, " —") || strings.HasPrefix(after, " (")) {
			return "slack " + rest[:n]
		}
	}
	return "other"
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
