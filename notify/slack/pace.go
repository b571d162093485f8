package slack

import (
	"sync"
	"time"
)

// Slack allows about one message per second per channel on
// chat.postMessage, short bursts tolerated, and answers 429 with a
// Retry-After beyond it (Slack's rate-limit reference). Each post honoured
// its own Retry-After, so every post waiting on one channel retried in the
// same second: about 100 requests a second against a channel that takes
// one, thousands of 429s in a storm, and every webhook's slot held while
// they failed (an audit). Once Slack has rate-limited a channel, its posts
// are paced instead: one per postInterval, none before the Retry-After,
// until pacedFor has passed without a 429. A post whose turn would come
// later than maxPaceWait (or half what is left of its webhook) is not
// sent: its webhook fails retryable, Alertmanager retries it, and its slot
// is free for the webhooks behind it. Before any 429 nothing is paced.
const (
	postInterval = time.Second
	pacedFor     = 30 * time.Second
	maxPaceWait  = 2 * time.Second
)

// pacer paces the posts to one channel of one Slack API.
type pacer struct {
	mu      sync.Mutex
	next    time.Time // the next post's turn
	limited time.Time // Slack's last 429 for the channel
}

// paced is one post's pacer, and whether it is a page's mirror: a page
// may take a turn further off than a ticket (awaitTurn), so that in a storm
// of tickets the page's message still gets one.
type paced struct {
	*pacer
	page bool
}

// pacers holds the pacer of every channel posted to, by API URL and
// channel (name or id, as posted to: a parent goes to the configured
// channel, its thread replies to the id Slack answered, which alias makes
// share the name's pacer).
var pacers sync.Map

func pacerKey(apiURL, channel string) string { return apiURL + "\x00" + channel }

func pacerOf(apiURL, channel string) *pacer {
	key := pacerKey(apiURL, channel)
	if p, ok := pacers.Load(key); ok {
		return p.(*pacer)
	}
	p, _ := pacers.LoadOrStore(key, &pacer{})
	return p.(*pacer)
}

// alias makes p the pacer of channel too (the id Slack answered for the
// name p paces), unless channel has one already.
func alias(apiURL, channel string, p *pacer) {
	pacers.LoadOrStore(pacerKey(apiURL, channel), p)
}

// turn takes the next post's turn at now and returns how long to wait for
// it; ok is false, and nothing taken, when that is longer than max.
func (p *pacer) turn(now time.Time, max time.Duration) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.limited.IsZero() || now.Sub(p.limited) > pacedFor {
		return 0, true
	}
	at := p.next
	if at.Before(now) {
		at = now
	}
	if wait = at.Sub(now); wait > max {
		return wait, false
	}
	p.next = at.Add(postInterval)
	return wait, true
}

// limit records Slack's 429 at now, asking to wait retryAfter (none given:
// one postInterval), and returns the turn of the post it refused: its
// retry keeps its place, the first after the wait.
func (p *pacer) limit(now time.Time, retryAfter time.Duration) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.limited = now
	if retryAfter <= 0 {
		retryAfter = postInterval
	}
	at := now.Add(retryAfter)
	if p.next.After(at) {
		at = p.next
	}
	p.next = at.Add(postInterval)
	return at
}
