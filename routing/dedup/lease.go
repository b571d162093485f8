package dedup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// Done is the value a confirmed claim holds.
const Done = "d"

// NewToken returns a random lease token; a sender releases only leases
// holding its own token.
func NewToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "c:" + hex.EncodeToString(b[:])
}

// Leases claims keys for one sender: SET NX PX in one round trip, confirmed
// with Done after the send, released (compare-and-delete) after a failure.
// A claim is never proof of delivery: a claim held by another sender is
// waited for until it is confirmed or Wait passes.
type Leases struct {
	Store store.Store
	// TTL bounds how long a claim blocks others when its owner dies.
	TTL time.Duration
	// Wait bounds how long Await waits for other senders.
	Wait time.Duration
}

// Acquire claims every key with token and reports which this call won.
func (l Leases) Acquire(ctx context.Context, keys []string, token string) ([]bool, error) {
	return l.Store.SetNX(ctx, l.claims(keys, token))
}

// AcquireAnd is Acquire that writes the entries of also in the same round
// trip (store.Claim): err is the claims' error, alsoErr the writes'.
func (l Leases) AcquireAnd(ctx context.Context, keys []string, token string, also []store.Entry) (won []bool, err, alsoErr error) {
	return store.Claim(ctx, l.Store, l.claims(keys, token), also)
}

func (l Leases) claims(keys []string, token string) []store.Entry {
	entries := make([]store.Entry, len(keys))
	for i, k := range keys {
		entries[i] = store.Entry{Key: k, Value: token, TTL: l.TTL}
	}
	return entries
}

// Confirmations are the writes that confirm keys after their send; a
// confirmed claim outlives the claim TTL so a late duplicate still sees it.
func (l Leases) Confirmations(keys []string) []store.Entry {
	out := make([]store.Entry, len(keys))
	for i, k := range keys {
		out[i] = store.Entry{Key: k, Value: Done, TTL: l.TTL + time.Minute}
	}
	return out
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

// Await polls keys held by other senders until each is confirmed (Done) or
// Wait passes, and reports which were confirmed. It stops early when ctx
// ends. A store error ends the wait with the keys still pending.
func (l Leases) Await(ctx context.Context, keys []string) (done []bool, err error) {
	done = make([]bool, len(keys))
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
			if found[j] && values[j] == Done {
				done[i] = true
				continue
			}
			still = append(still, i)
		}
		pending = still
		return len(pending) == 0, nil
	})
	return done, err
}

// Poll calls try with exponential backoff (from 20ms) until it reports
// true, returns an error, ctx ends, or the next wait would pass wait. It is
// the one waiting loop of the dispatch core: claims held by another sender
// and incidents leased by another sender are both waited for with it.
func Poll(ctx context.Context, wait time.Duration, try func(ctx context.Context) (bool, error)) error {
	deadline := time.Now().Add(wait)
	backoff := 20 * time.Millisecond
	for {
		ok, err := try(ctx)
		if ok || err != nil {
			return err
		}
		if time.Now().Add(backoff).After(deadline) {
			return nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff *= 2
	}
}
