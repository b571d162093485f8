package dedup

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// LifeKey holds the Redis run the router last saw and when the router first
// saw it: "<run_id> <unix ms>". No TTL.
func LifeKey(prefix string) string { return prefix + "life" }

// UnsentKey is the set of the Alertmanager groups (alert.Message.GroupID)
// whose last webhook was answered 5xx while carrying a firing alert
// (webhook.Orphans): a group leaves it when a webhook of it is delivered.
func UnsentKey(prefix string) string { return prefix + "orphans" }

// runIDReader is a store that names its current run (store.Redis).
type runIDReader interface {
	RunID(ctx context.Context) (string, error)
}

// StoreLife returns when the store's current run began for the router: the
// first time a replica saw Redis' current run_id. A new run — Redis
// restarted, or failed over to a replica — may hold older data than the
// router last wrote: a restore from an older snapshot, the writes a
// replica had not received (Redis replicates asynchronously). An incident
// resolved since can then be open again in the store while resolved in
// PagerDuty, and a new alert joining it is an update PagerDuty is told
// nothing of — until incidents.retrigger_interval after its last trigger.
// The pipeline retriggers such incidents on their next join instead (a
// trigger PagerDuty folds into the incident when it is still open). The
// zero time: unknown (a store that names no run, a Redis Cluster, INFO
// refused).
func StoreLife(ctx context.Context, st store.Store, prefix string, now time.Time) (time.Time, error) {
	l, err := ReadStoreLife(ctx, st, prefix, now)
	return l.Began, err
}

// Life is what ReadStoreLife reads: when the store's current run began for
// the router (StoreLife), and Redis' run_id ("" unknown). A Began that
// moves while Run stays is no restart: the router's record of the run
// (LifeKey) was lost — deleted, evicted, or Redis' data flushed — and the
// data with it may be too.
type Life struct {
	Began time.Time
	Run   string
}

// ReadStoreLife is StoreLife with the run it read.
func ReadStoreLife(ctx context.Context, st store.Store, prefix string, now time.Time) (Life, error) {
	r, ok := st.(runIDReader)
	if !ok {
		return Life{}, nil
	}
	run, err := r.RunID(ctx)
	if err != nil || run == "" {
		return Life{}, err
	}
	key := LifeKey(prefix)
	vals, found, err := st.Get(ctx, []string{key})
	if err != nil {
		return Life{}, err
	}
	if found[0] {
		if seen, at, ok := strings.Cut(vals[0], " "); ok && seen == run {
			if ms, err := strconv.ParseInt(at, 10, 64); err == nil {
				return Life{Began: time.UnixMilli(ms), Run: run}, nil
			}
		}
	}
	if err := st.Set(ctx, []store.Entry{{Key: key, Value: run + " " + strconv.FormatInt(now.UnixMilli(), 10)}}); err != nil {
		return Life{}, err
	}
	return Life{Began: now, Run: run}, nil
}
