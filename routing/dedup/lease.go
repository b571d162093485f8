package dedup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// Done is the value of a claim confirmed by a write of its own (the Slack
// interactions' request keys); transition claims are confirmed by their
// markers instead (Await).
const Done = "d"

// NewToken returns a random lease token; a sender releases only leases
// holding its own token.
func NewToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "c:" + hex.EncodeToString(b[:])
}

// IsClaim reports whether v, read at a transition's marker key, is a
// sender's token (NewToken) rather than a marker: a claim on a transition
// never notified is taken on its marker key.
func IsClaim(v string) bool {
	return strings.HasPrefix(v, "c:") && !strings.Contains(v, "|")
}

// Leases claims keys for one sender: SET NX PX in one round trip, released
// (compare-and-delete) after a failure. A claim is never proof of delivery:
// a claim held by another sender is waited for (Await) until what that
// sender writes once delivered is found, or Wait passes.
type Leases struct {
	Store store.Store
	// TTL bounds how long a claim blocks others when its owner dies.
	TTL time.Duration
	// Wait bounds how long Await waits for other senders.
	Wait time.Duration
}

// Acquire claims every key with token and reports which this call won.
func (l Leases) Acquire(ctx context.Context, keys []string, token string) ([]bool, error) {
	return l.Store.SetNX(ctx, l.Claims(keys, token))
}

// Claims are the SET NX entries that claim keys for token (Acquire's; the
// dispatch core sends them with its incident steps, store.ClaimJoin).
func (l Leases) Claims(keys []string, token string) []store.Entry {
	entries := make([]store.Entry, len(keys))
	for i, k := range keys {
		entries[i] = store.Entry{Key: k, Value: token, TTL: l.TTL}
	}
	return entries
}

// Releases are the compare-and-delete entries that free keys claimed with
// token after a failed send.
func Releases(keys []string, token string) []store.Entry {
	out := make([]store.Entry, len(keys))
	for i, k := range keys {
		out[i] = store.Entry{Key: k, Value: token}
	}
	return out
}

// Await polls keys until done reports each key's value as proof that the
// other sender delivered, or Wait passes, and reports which were done. A
// key that does not exist is not done. It stops early when ctx ends; a
// store error ends the wait with the keys still pending.
//
// A transition's claim is not confirmed by a write of its own: the marker
// the sender writes once delivered is the proof (routing reads the markers
// of the claims it lost, and done asks the transition function whether the
// marker now says the transition was notified).
func (l Leases) Await(ctx context.Context, keys []string, done func(i int, value string) bool) (ok []bool, err error) {
	ok = make([]bool, len(keys))
	pending := make([]int, len(keys))
	for i := range keys {
		pending[i] = i
	}
	err = Poll(ctx, l.Wait, func(ctx context.Context) (bool, error) {
		ks := make([]string, len(pending))
		for j, i := range pending {
			ks[j] = keys[i]
		}
		values, found, err := l.Store.Get(ctx, ks)
		if err != nil {
			return false, err
		}
		still := pending[:0]
		for j, i := range pending {
			if found[j] && done(i, values[j]) {
				ok[i] = true
				continue
			}
			still = append(still, i)
		}
		pending = still
		return len(pending) == 0, nil
	})
	return ok, err
}

// Poll calls try with exponential backoff (from 20ms) until it reports
// true, returns an error, ctx ends, or wait has passed: the last wait is
// cut to end at wait, where try is called a last time, so the poll lasts
// the wait configured (in_flight_wait), not the backoffs that fit in it.
// It is the one waiting loop of the dispatch core: claims held by another
// sender and incidents leased by another sender are both waited for with
// it.
func Poll(ctx context.Context, wait time.Duration, try func(ctx context.Context) (bool, error)) error {
	deadline := time.Now().Add(wait)
	backoff := 20 * time.Millisecond
	for {
		ok, err := try(ctx)
		if ok || err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff *= 2
	}
}

// HandResolvedAtKey is the key that records someone resolving an incident
// by hand at one PagerDuty integration (the Resolve button in Slack) while
// its alerts still fire; its value names who. target is the integration
// the click resolved, "receiver/integration" (as store.IncidentKey names
// it). An integration that sends nothing for updates of an open incident
// (PagerDuty) would never page for the alerts that join it afterwards:
// while the key is there, the first such update at that integration
// triggers PagerDuty again (a new PagerDuty incident, as the old one is
// resolved), and the key is cleared once that trigger is delivered. The key
// is per integration, not per incident: an incident key (made of label
// values, never of the receiver) holds the alerts of every receiver they
// were routed to, and one team resolving its page says nothing of
// another's.
func HandResolvedAtKey(prefix, incident, target string) string {
	return store.Key(prefix, "handresolved", incident, target)
}

// HandResolvedTTL is how long a hand-resolve mark lives once written, and
// at least how long each reminder it holds back from PagerDuty keeps it
// (with dedup.notified_ttl when longer): while the alerts fire on, the
// mark lives on — it lapsed after a week and PagerDuty paged again with
// no new alert (a review).
const HandResolvedTTL = 7 * 24 * time.Hour

// HandResolved is the value of a hand-resolve mark: who resolved, and when
// (Unix ms).
func HandResolved(who string, at time.Time) string {
	return who + handResolvedAt + strconv.FormatInt(at.UnixMilli(), 10)
}

// handResolvedAt separates who from when in a hand-resolve mark.
const handResolvedAt = "; at="

// ParseHandResolved reads a hand-resolve mark's value: who resolved, and
// when (zero for a mark of a build that wrote who alone).
func ParseHandResolved(v string) (who string, at time.Time) {
	i := strings.LastIndex(v, handResolvedAt)
	if i < 0 {
		return v, time.Time{}
	}
	ms, err := strconv.ParseInt(v[i+len(handResolvedAt):], 10, 64)
	if err != nil {
		return v, time.Time{}
	}
	return v[:i], time.UnixMilli(ms)
}

// HandResolving is the value of a hand-resolve mark while the resolve is on
// its way to PagerDuty: written before it is sent, and replaced by
// HandResolved once PagerDuty took it (or deleted if it failed). An alert
// joining the incident meanwhile would be folded into the page the resolve
// is about to close, and never paged (an audit: Resolve at one replica, a
// new alert at the other a moment later): the router answers its webhook
// 5xx instead (routing's reopenHandResolved), and Alertmanager's retry,
// reading HandResolved, triggers PagerDuty again.
func HandResolving(who string, at time.Time) string {
	return handResolvingPrefix + HandResolved(who, at)
}

// handResolvingPrefix starts a HandResolving value.
const handResolvingPrefix = "resolving: "

// IsHandResolving reports whether v, a hand-resolve mark's value, says the
// resolve is still on its way (HandResolving).
func IsHandResolving(v string) bool { return strings.HasPrefix(v, handResolvingPrefix) }

// HandResolvingGrace is how long a HandResolving mark holds joining alerts
// back: longer than a click's resolve takes with its retries. One older
// (its replica killed during the resolve) is read as HandResolved — the
// resolve may have reached PagerDuty, so the next alert joining triggers
// it again: when unsure, page. The mark itself lives HandResolvedTTL, so
// it never lapses into silent updates (a review: a mark that expired after
// 2 minutes left the alerts joining later unpaged).
const HandResolvingGrace = 5 * time.Minute

// ReadHandResolving reads a HandResolving mark's value v at now: whether
// the resolve is still on its way (within HandResolvingGrace of when it was
// written), and the value to read as HandResolved once it is not.
func ReadHandResolving(v string, now time.Time) (resolving bool, resolved string) {
	resolved = strings.TrimPrefix(v, handResolvingPrefix)
	_, at := ParseHandResolved(resolved)
	return !at.IsZero() && now.Sub(at) < HandResolvingGrace, resolved
}

// HandResolvedKey is the key of a hand resolve recorded once per incident,
// whichever integration was resolved: what the builds before
// HandResolvedAtKey wrote, and what a resolve whose integration is unknown
// still writes. It is read beside HandResolvedAtKey and honoured as those
// builds did — the incident's next update at any PagerDuty integration
// triggers it again and consumes the mark — so that a resolve clicked
// before an upgrade still pages again; such marks expire within a week.
func HandResolvedKey(prefix, incident string) string {
	return store.Key(prefix, "handresolved", incident, "")
}
