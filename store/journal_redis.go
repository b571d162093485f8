package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// journalPage is how many stream entries one XRANGE reads while a range
// filters by kind.
const journalPage = 512

// RedisJournal is a Journal on a Redis Stream: every replica XADDs to the
// same key, so one reader sees the decisions of all. Appends trim by count
// approximately (XADD … MAXLEN ~ N, cheap) and by age (XTRIM … MINID ~);
// TrimJournal trims exactly. It is safe for concurrent use.
type RedisJournal struct {
	client    redis.UniversalClient
	key       string
	retention JournalRetention
	now       func() time.Time
}

var _ Journal = (*RedisJournal)(nil)

// Journal returns the journal kept in the stream at key on r's connection;
// now is the clock the age retention reads (nil: time.Now). Closing r
// closes the journal.
func (r *Redis) Journal(key string, ret JournalRetention, now func() time.Time) *RedisJournal {
	if now == nil {
		now = time.Now
	}
	return &RedisJournal{client: r.client, key: key, retention: ret, now: now}
}

// journalError wraps err with the operation, and with ErrUnavailable when
// Redis could not be reached.
func journalError(op string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("redis journal %s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("redis journal %s: %w", op, err)
}

// minID is the stream id below which records are older than MaxAge.
func (j *RedisJournal) minID() string {
	return strconv.FormatInt(j.now().Add(-j.retention.MaxAge).UnixMilli(), 10) + "-0"
}

// AppendJournal implements Journal: one pipeline of XADDs and one XTRIM.
func (j *RedisJournal) AppendJournal(ctx context.Context, recs []JournalRecord) ([]string, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	p := j.client.Pipeline()
	cmds := make([]*redis.StringCmd, len(recs))
	for i, r := range recs {
		cmds[i] = p.XAdd(ctx, &redis.XAddArgs{
			Stream: j.key,
			MaxLen: j.retention.MaxRecords,
			Approx: true,
			ID:     "*",
			Values: []any{"kind", r.Kind, "data", r.Data},
		})
	}
	if j.retention.MaxAge > 0 {
		p.XTrimMinIDApprox(ctx, j.key, j.minID(), 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		return nil, journalError("append", err)
	}
	ids := make([]string, len(recs))
	for i, c := range cmds {
		ids[i] = c.Val()
	}
	return ids, nil
}

// RangeJournal implements Journal. It pages through the stream with XRANGE
// (XREVRANGE when q.Newest) until Limit records of the kind are found.
func (j *RedisJournal) RangeJournal(ctx context.Context, q JournalQuery) ([]JournalRecord, error) {
	lo, hi := "-", "+"
	if !q.Since.IsZero() {
		lo = strconv.FormatInt(q.Since.UnixMilli(), 10)
	}
	if !q.Until.IsZero() {
		hi = strconv.FormatInt(q.Until.UnixMilli(), 10)
	}
	if q.After != "" {
		if !ValidJournalID(q.After) {
			return nil, journalIDError(q.After)
		}
		// The cursor replaces the bound it is tighter than.
		if q.Newest && (q.Until.IsZero() || idLess(q.After, strconv.FormatInt(q.Until.UnixMilli()+1, 10)+"-0")) {
			hi = "(" + q.After
		}
		if !q.Newest && (q.Since.IsZero() || !idLess(q.After, lo+"-0")) {
			lo = "(" + q.After
		}
	}
	// A limited range first reads only as many entries as it may return
	// (all of them, unless a kind filters some out), then whole pages.
	page := int64(journalPage)
	if q.Limit > 0 && q.Limit < journalPage {
		page = int64(q.Limit)
	}
	var out []JournalRecord
	for {
		var msgs []redis.XMessage
		var err error
		if q.Newest {
			msgs, err = j.client.XRevRangeN(ctx, j.key, hi, lo, page).Result()
		} else {
			msgs, err = j.client.XRangeN(ctx, j.key, lo, hi, page).Result()
		}
		if err != nil {
			return nil, journalError("range", err)
		}
		for _, m := range msgs {
			r := record(m)
			if q.Kind != "" && r.Kind != q.Kind {
				continue
			}
			out = append(out, r)
			if q.Limit > 0 && len(out) == q.Limit {
				return out, nil
			}
		}
		if int64(len(msgs)) < page {
			return out, nil
		}
		page = journalPage
		// Continue after the last id read, excluding it.
		last := "(" + msgs[len(msgs)-1].ID
		if q.Newest {
			hi = last
		} else {
			lo = last
		}
	}
}

// record converts a stream entry.
func record(m redis.XMessage) JournalRecord {
	r := JournalRecord{ID: m.ID}
	if k, ok := m.Values["kind"].(string); ok {
		r.Kind = k
	}
	if d, ok := m.Values["data"].(string); ok {
		r.Data = []byte(d)
	}
	return r
}

// GetJournal implements Journal.
func (j *RedisJournal) GetJournal(ctx context.Context, id string) (JournalRecord, bool, error) {
	if !ValidJournalID(id) {
		return JournalRecord{}, false, journalIDError(id)
	}
	msgs, err := j.client.XRangeN(ctx, j.key, id, id, 1).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return JournalRecord{}, false, journalError("get", err)
	}
	if len(msgs) == 0 {
		return JournalRecord{}, false, nil
	}
	return record(msgs[0]), true, nil
}

// TrimJournal implements Journal: exact XTRIM by count, then by age.
func (j *RedisJournal) TrimJournal(ctx context.Context) error {
	p := j.client.Pipeline()
	if j.retention.MaxRecords > 0 {
		p.XTrimMaxLen(ctx, j.key, j.retention.MaxRecords)
	}
	if j.retention.MaxAge > 0 {
		p.XTrimMinID(ctx, j.key, j.minID())
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return journalError("trim", err)
	}
	return nil
}
