package slack

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Limits of the redraws Slack rate-limited (redrawLater).
const (
	// maxLaterRedraws bounds the parents waiting for a redraw in one
	// process; past it a rate-limited redraw is only logged, as before.
	maxLaterRedraws = 10000
	// maxRedrawTries bounds the later attempts of one parent's redraw:
	// at Slack's usual Retry-After of 30 s, about half an hour — a storm
	// of a thousand resolves at Tier 3's 50 a minute takes 20 (a review
	// lost 649 of 1000 with 10).
	maxRedrawTries = 60
	// minRedrawWait is the least wait before a later attempt (Slack's
	// ratelimited code carries no Retry-After); after a failure without
	// Retry-After (5xx, the connection cut) the wait doubles with each try,
	// up to maxRedrawWait: a long Slack outage is waited out for hours at
	// a few calls an hour per parent, not tried every few seconds (a
	// review: 200 resolves made 200 chat.update calls a second).
	minRedrawWait = 5 * time.Second
	maxRedrawWait = 5 * time.Minute
)

// laterRedraw is a resolved parent's drawing waiting for its turn.
type laterRedraw struct {
	// mu is held while the redraw is sent, and by an edit of the parent
	// meanwhile (holdRedraw): the later drawing never lands after a newer
	// one.
	mu    sync.Mutex
	n     *Notifier
	no    *alert.Notification
	p     parentRef
	msg   message // without its actions: drawn with the triage's state at its turn
	tries int
	timer *time.Timer
}

// laterRedraws holds, by Slack API URL, channel and message, the parents
// drawn resolved whose redraw Slack rate-limited past the webhook's time, or
// refused failing (laterWait):
// chat.update is Tier 3 (about 50 a minute), and a storm of resolves left
// a third of the parents drawn firing for good, their alerts resolved (an
// audit: 30 of 80 after Retry-After: 30). Each is drawn again after
// Slack's Retry-After (spread by up to half of it, so a storm's parents do
// not all retry in the same second), with the triage's lines of that
// moment, only while the store still marks the parent resolved — another
// replica, or a click, may have drawn it since (a review: a waiting redraw
// of a firing drawing painted a resolved parent firing again, so only
// resolved drawings wait). An edit of the parent by this process that
// succeeds meanwhile cancels it. Process-wide, as the parents outlive a
// reload's notifiers; lost with the process.
var laterRedraws = struct {
	sync.Mutex
	m map[string]*laterRedraw
}{m: map[string]*laterRedraw{}}

func redrawKey(n *Notifier, p parentRef) string {
	return n.cfg.APIURL + "\x00" + p.channel + "\x00" + p.ts
}

// redrawLater draws p as msg after wait (at least minRedrawWait), replacing
// a drawing of p already waiting; it reports whether it was scheduled.
func (n *Notifier) redrawLater(no *alert.Notification, p parentRef, msg message, wait time.Duration) bool {
	key := redrawKey(n, p)
	laterRedraws.Lock()
	defer laterRedraws.Unlock()
	prev := laterRedraws.m[key]
	tries := 0
	if prev != nil {
		prev.timer.Stop()
		tries = prev.tries
	} else if len(laterRedraws.m) >= maxLaterRedraws {
		return false
	}
	if tries >= maxRedrawTries {
		delete(laterRedraws.m, key)
		return false
	}
	r := &laterRedraw{n: n, no: no, p: p, msg: msg, tries: tries + 1}
	r.timer = time.AfterFunc(redrawWait(wait, tries), func() { r.draw(key) })
	laterRedraws.m[key] = r
	return true
}

// redrawWait is how long the try after tries earlier ones waits: Slack's
// Retry-After (wait), bounded by notify.MaxRetryAfter — one of a day left a
// resolved parent drawn firing for a day (a review) —, or without one a
// back-off doubling from minRedrawWait up to maxRedrawWait; at least
// minRedrawWait, and up to half again at random (replicas and parents
// apart).
func redrawWait(wait time.Duration, tries int) time.Duration {
	if wait <= 0 { // no Retry-After: back off
		wait = min(minRedrawWait<<min(tries, 6), maxRedrawWait)
	} else {
		wait = min(wait, notify.MaxRetryAfter)
	}
	wait = max(wait, minRedrawWait)
	return wait + rand.N(wait/2+1)
}

// laterWait reports whether a failed redraw is tried again later, and
// after how long: one Slack refused for now (Retry-After: rate limited),
// after its wait; one that failed retryable (5xx, the connection cut, a
// timeout), 0: backing off (redrawLater). A permanent failure (the message
// or channel gone, the token revoked) is not.
func laterWait(err error) (time.Duration, bool) {
	if wait, ok := notify.RetryAfterOf(err); ok {
		return wait, true
	}
	return 0, alert.Retryable(err)
}

// WaitingRedraws counts the parents of this process whose resolved drawing
// waits for a later try (redrawLater): a stop leaves them as last drawn.
func WaitingRedraws() int {
	laterRedraws.Lock()
	defer laterRedraws.Unlock()
	return len(laterRedraws.m)
}

// redrawn cancels p's waiting redraw: the parent was just drawn.
func (n *Notifier) redrawn(p parentRef) {
	key := redrawKey(n, p)
	laterRedraws.Lock()
	defer laterRedraws.Unlock()
	if r := laterRedraws.m[key]; r != nil {
		r.timer.Stop()
		delete(laterRedraws.m, key)
	}
}

// holdRedraw keeps p's waiting redraw, if any, from being sent until the
// returned func is called, after waiting for one being sent: an edit of p
// in between lands after it, and cancels it when it succeeds (redrawn).
func (n *Notifier) holdRedraw(p parentRef) func() {
	laterRedraws.Lock()
	r := laterRedraws.m[redrawKey(n, p)]
	laterRedraws.Unlock()
	if r == nil {
		return func() {}
	}
	r.mu.Lock()
	return r.mu.Unlock
}

// draw makes r's attempt, unless a later drawing replaced it or an edit
// drew the parent meanwhile.
func (r *laterRedraw) draw(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	laterRedraws.Lock()
	current := laterRedraws.m[key] == r
	laterRedraws.Unlock()
	if !current {
		return
	}
	n := r.n
	// One attempt (its next try is its retry), in a time of its own.
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), oneAttemptKey{}, true), 2*time.Duration(n.cfg.Timeout))
	defer cancel()
	m, err := n.marks.readMessage(ctx, r.no.Incident, r.p.channel, r.p.ts)
	if err != nil {
		// The store cannot say whether it still is resolved: asked again
		// at the next try, rather than the parent left firing for good.
		if !n.redrawLater(r.no, r.p, r.msg, 0) {
			n.logger.Warn("the parent's later redraw is not sent: its state could not be read", "incident", r.no.Incident, "err", err)
		}
		return
	}
	if !m.resolved {
		r.done(key)
		return // the incident fires again: its own drawing stands
	}
	lines, st := []string(nil), newTriageState(r.no)
	if n.triage != nil {
		lines, st = n.triage.view(ctx, r.no, r.p, st)
	}
	msg := r.msg.withActions(n, r.no, lines, st)
	err = n.callRefusable(ctx, r.no, msg, nil, func(ctx context.Context, blocks []sl.Block) error {
		_, _, _, err := n.api.UpdateMessageContext(ctx, r.p.channel, r.p.ts, sl.MsgOptionBlocks(blocks...), sl.MsgOptionText(r.msg.text, false))
		return err
	})
	if err == nil {
		r.done(key)
		n.logger.Info("parent message drawn resolved later (Slack had refused or failed the drawing)", "incident", r.no.Incident, "tries", r.tries)
		return
	}
	if wait, ok := laterWait(err); ok && n.redrawLater(r.no, r.p, r.msg, wait) {
		return
	}
	r.done(key)
	n.logger.Warn("edit parent message failed on its later tries too: the parent keeps its last drawing", "incident", r.no.Incident, "tries", r.tries, "err", err)
}

// done takes r out of the waiting redraws, unless a later drawing of its
// parent replaced it there.
func (r *laterRedraw) done(key string) {
	laterRedraws.Lock()
	defer laterRedraws.Unlock()
	if laterRedraws.m[key] == r {
		delete(laterRedraws.m, key)
	}
}
