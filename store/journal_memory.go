package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// defaultMemoryJournalRecords is the ring's size when the retention sets no
// MaxRecords: memory must stay bounded.
const defaultMemoryJournalRecords = 10_000

// MemoryJournal is a Journal in process memory: a bounded ring of records,
// for a single replica. It is safe for concurrent use.
type MemoryJournal struct {
	now       func() time.Time
	retention JournalRetention

	mu sync.Mutex
	// ring holds the records in a circular buffer that grows up to
	// MaxRecords slots: the oldest is ring[head], the n records follow it
	// (wrapping around). Appending and trimming move head and n, never the
	// records, so a full journal costs the same per append as an empty one.
	ring    []JournalRecord
	head, n int
	lastMS  int64
	lastSeq uint64
}

// at returns the k-th record, oldest first (k < j.n). j.mu must be held.
func (j *MemoryJournal) at(k int) *JournalRecord {
	return &j.ring[(j.head+k)%len(j.ring)]
}

// push appends r, overwriting the oldest record when the ring is full.
// j.mu must be held.
func (j *MemoryJournal) push(r JournalRecord) {
	if j.n < len(j.ring) {
		*j.at(j.n) = r
		j.n++
		return
	}
	if int64(len(j.ring)) < j.retention.MaxRecords {
		// Grow (doubling, up to MaxRecords), oldest first from slot 0.
		size := min(max(2*len(j.ring), 64), int(j.retention.MaxRecords))
		grown := make([]JournalRecord, size)
		for k := range j.n {
			grown[k] = *j.at(k)
		}
		j.ring, j.head = grown, 0
		j.ring[j.n] = r
		j.n++
		return
	}
	*j.at(0) = r // full: the newest replaces the oldest
	j.head = (j.head + 1) % len(j.ring)
}

// dropOldest forgets the oldest record, releasing its memory. j.mu must be
// held.
func (j *MemoryJournal) dropOldest() {
	*j.at(0) = JournalRecord{}
	j.head = (j.head + 1) % len(j.ring)
	j.n--
}

var _ Journal = (*MemoryJournal)(nil)

// NewMemoryJournal returns an empty ring with the given retention; a zero
// MaxRecords keeps 10,000 records. Options: WithClock.
func NewMemoryJournal(ret JournalRetention, opts ...MemoryOption) *MemoryJournal {
	m := &Memory{now: time.Now} // the options set the clock
	for _, o := range opts {
		o(m)
	}
	if ret.MaxRecords <= 0 {
		ret.MaxRecords = defaultMemoryJournalRecords
	}
	return &MemoryJournal{now: m.now, retention: ret}
}

// AppendJournal implements Journal.
func (j *MemoryJournal) AppendJournal(ctx context.Context, recs []JournalRecord) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory journal append: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	ids := make([]string, len(recs))
	for i, r := range recs {
		ms := j.now().UnixMilli()
		if ms > j.lastMS {
			j.lastMS, j.lastSeq = ms, 0
		} else {
			j.lastSeq++ // same or earlier millisecond: stay ordered
		}
		r.ID = strconv.FormatInt(j.lastMS, 10) + "-" + strconv.FormatUint(j.lastSeq, 10)
		r.Data = append([]byte(nil), r.Data...)
		j.push(r)
		ids[i] = r.ID
	}
	j.trim()
	return ids, nil
}

// trim drops the records older than the retention's MaxAge (MaxRecords is
// the ring's size: push overwrites beyond it). j.mu must be held.
func (j *MemoryJournal) trim() {
	if j.retention.MaxAge <= 0 {
		return
	}
	cutoff := j.now().Add(-j.retention.MaxAge)
	for j.n > 0 && j.at(0).Time().Before(cutoff) {
		j.dropOldest()
	}
}

// RangeJournal implements Journal.
func (j *MemoryJournal) RangeJournal(ctx context.Context, q JournalQuery) ([]JournalRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory journal range: %w", err)
	}
	if q.After != "" && !ValidJournalID(q.After) {
		return nil, journalIDError(q.After)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []JournalRecord
	for k := range j.n {
		i := k
		if q.Newest {
			i = j.n - 1 - k
		}
		r := *j.at(i)
		if !selects(q, r) {
			continue
		}
		out = append(out, r)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// selects reports whether q selects r.
func selects(q JournalQuery, r JournalRecord) bool {
	t := r.Time()
	switch {
	case q.Kind != "" && r.Kind != q.Kind:
		return false
	case !q.Since.IsZero() && t.Before(q.Since.Truncate(time.Millisecond)):
		return false
	case !q.Until.IsZero() && t.After(q.Until):
		return false
	}
	return past(r.ID, q.After, q.Newest)
}

// GetJournal implements Journal.
func (j *MemoryJournal) GetJournal(ctx context.Context, id string) (JournalRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return JournalRecord{}, false, fmt.Errorf("memory journal get: %w", err)
	}
	if !ValidJournalID(id) {
		return JournalRecord{}, false, journalIDError(id)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for k := range j.n {
		if r := j.at(k); r.ID == id {
			return *r, true, nil
		}
	}
	return JournalRecord{}, false, nil
}

// TrimJournal implements Journal.
func (j *MemoryJournal) TrimJournal(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory journal trim: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.trim()
	return nil
}
