package slack

import (
	"time"

	"github.com/alertrouter/alertrouter/notify"
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

// paced is one post's pacer, and whether it is a page's mirror: a page
// may take a turn further off than a ticket (awaitTurn), so that in a storm
// of tickets the page's message still gets one.
type paced struct {
	*notify.Pacer
	page bool
}

// pacers holds the pacer of every channel posted to, by API URL and
// channel (name or id, as posted to: a parent goes to the configured
// channel, its thread replies to the id Slack answered, which alias makes
// share the name's pacer).
var pacers = notify.NewPacers(postInterval, pacedFor)

func pacerKey(apiURL, channel string) string { return apiURL + "\x00" + channel }

func pacerOf(apiURL, channel string) *notify.Pacer {
	return pacers.Of(pacerKey(apiURL, channel))
}

// alias makes p the pacer of channel too (the id Slack answered for the
// name p paces), unless channel has one already.
func alias(apiURL, channel string, p *notify.Pacer) {
	pacers.Alias(pacerKey(apiURL, channel), p)
}
