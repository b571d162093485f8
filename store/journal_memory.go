package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// defaultMemoryJournalEntries is the ring's size when the retention sets no
// MaxEntries: memory must stay bounded.
const defaultMemoryJournalEntries = 10_000

// MemoryJournal is a Journal in process memory: a bounded ring of records,
// for a single replica. It is safe for concurrent use.
type MemoryJournal struct {
	now       func() time.Time
	retention JournalRetention

	mu      sync.Mutex
	ring    []JournalRecord // oldest first, len ≤ capacity
	lastMS  int64
	lastSeq uint64
}

var _ Journal = (*MemoryJournal)(nil)

// NewMemoryJournal returns an empty ring with the given retention; a zero
// MaxEntries keeps 10,000 records. Options: WithClock.
func NewMemoryJournal(ret JournalRetention, opts ...MemoryOption) *MemoryJournal {
	m := &Memory{now: time.Now} // the options set the clock
	for _, o := range opts {
		o(m)
	}
	if ret.MaxEntries <= 0 {
		ret.MaxEntries = defaultMemoryJournalEntries
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
		j.ring = append(j.ring, r)
		ids[i] = r.ID
	}
	j.trim()
	return ids, nil
}

// trim drops the records beyond the retention. j.mu must be held.
func (j *MemoryJournal) trim() {
	drop := 0
	if n := int64(len(j.ring)) - j.retention.MaxEntries; n > 0 {
		drop = int(n)
	}
	if j.retention.MaxAge > 0 {
		cutoff := j.now().Add(-j.retention.MaxAge)
		for drop < len(j.ring) && j.ring[drop].Time().Before(cutoff) {
			drop++
		}
	}
	if drop > 0 {
		// Copy so the dropped records' memory is released.
		j.ring = append(make([]JournalRecord, 0, len(j.ring)-drop+1), j.ring[drop:]...)
	}
}

// RangeJournal implements Journal.
func (j *MemoryJournal) RangeJournal(ctx context.Context, q JournalQuery) ([]JournalRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory journal range: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []JournalRecord
	n := len(j.ring)
	for k := range n {
		i := k
		if q.Newest {
			i = n - 1 - k
		}
		r := j.ring[i]
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
	return true
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
	for _, r := range j.ring {
		if r.ID == id {
			return r, true, nil
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
