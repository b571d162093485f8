package dedup

import (
	"context"
	"strconv"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// EpochKey is the key holding when the store's current state began: the
// first time a replica found it missing, in Unix milliseconds. It has no
// TTL, so a store that keeps its data keeps it; a store restarted empty
// (or failed over to a replica that had nothing) has lost it with every
// marker.
func EpochKey(prefix string) string { return prefix + "epoch" }

// MarkEpoch writes now as the store's epoch unless it holds one (SET NX).
// The router calls it when it starts and when it probes its store, so the
// epoch of a store restarted empty is close to the restart.
func MarkEpoch(ctx context.Context, st store.Store, prefix string, now time.Time) error {
	_, err := st.SetNX(ctx, []store.Entry{{Key: EpochKey(prefix), Value: strconv.FormatInt(now.UnixMilli(), 10)}})
	return err
}

// Epoch returns when the store's current state began, marking now when it
// holds no epoch (MarkEpoch). A marker missing for an alert that started
// before the epoch proves nothing: it may have been lost with the store's
// earlier state.
func Epoch(ctx context.Context, st store.Store, prefix string, now time.Time) (time.Time, error) {
	key := EpochKey(prefix)
	for range 2 {
		vals, found, err := st.Get(ctx, []string{key})
		if err != nil {
			return time.Time{}, err
		}
		if found[0] {
			ms, err := strconv.ParseInt(vals[0], 10, 64)
			if err != nil {
				// Not ours to read: take it as lost just now.
				return now, nil
			}
			return time.UnixMilli(ms), nil
		}
		if err := MarkEpoch(ctx, st, prefix, now); err != nil {
			return time.Time{}, err
		}
	}
	return now, nil
}
