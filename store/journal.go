package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JournalRecord is one record of the decision journal as a store keeps it:
// the journal package encodes its entries into Data (one or several entries
// of one kind; the store never looks inside).
type JournalRecord struct {
	// ID is assigned by AppendJournal: "<unix milliseconds>-<sequence>",
	// ordered by the time the store appended the record (a Redis Stream id).
	ID string
	// Kind is the entry's kind ("decision", "dead_letter" …), kept outside
	// Data so that a range can select one kind without decoding.
	Kind string
	// Data is the encoded entries.
	Data []byte
}

// Time returns the time encoded in the record's id (zero if the id does not
// parse).
func (r JournalRecord) Time() time.Time {
	ms, _, ok := parseJournalID(r.ID)
	if !ok {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// JournalQuery selects records of a journal.
type JournalQuery struct {
	// Since and Until bound the records' times (inclusive); zero means
	// unbounded.
	Since, Until time.Time
	// Kind selects one kind; "" selects every kind.
	Kind string
	// Limit caps the number of records returned; 0 means no cap.
	Limit int
	// Newest returns the newest records first (and, with Limit, the newest
	// Limit records); otherwise the oldest come first.
	Newest bool
	// After, a record id, continues a range past that record in the
	// range's order (older than it when Newest, newer otherwise), so that
	// a reader can page through a journal with Limit.
	After string
}

// past reports whether the record with id is strictly past the cursor
// after in the order newest says (true without a cursor).
func past(id, after string, newest bool) bool {
	if after == "" {
		return true
	}
	if newest {
		return idLess(id, after)
	}
	return idLess(after, id)
}

// idLess reports whether record id a is older than b.
func idLess(a, b string) bool {
	ams, aseq, _ := parseJournalID(a)
	bms, bseq, _ := parseJournalID(b)
	return ams < bms || ams == bms && aseq < bseq
}

// JournalRetention bounds a journal. A zero field means that bound is off.
type JournalRetention struct {
	// MaxRecords is how many records the journal keeps; the Redis journal
	// trims approximately (MAXLEN ~) on append and exactly on TrimJournal.
	MaxRecords int64
	// MaxAge is how long a record is kept.
	MaxAge time.Duration
}

// DefaultJournalRetention keeps 25,000 records (the journal package packs
// up to 32 entries in one record, so between 25,000 and 800,000 decisions)
// for at most 7 days.
var DefaultJournalRetention = JournalRetention{MaxRecords: 25_000, MaxAge: 7 * 24 * time.Hour}

// Journal is the decision journal shared by every replica: a Redis Stream
// when Redis is configured, a bounded ring in memory otherwise.
// Implementations must be safe for concurrent use; errors from an
// unreachable backend wrap ErrUnavailable.
type Journal interface {
	// AppendJournal appends records (their ID is ignored) in order, applies
	// the retention, and returns the ids assigned.
	AppendJournal(ctx context.Context, recs []JournalRecord) ([]string, error)
	// RangeJournal returns the records that q selects, in time order (newest
	// first when q.Newest).
	RangeJournal(ctx context.Context, q JournalQuery) ([]JournalRecord, error)
	// GetJournal returns the record with the given id and whether it exists.
	GetJournal(ctx context.Context, id string) (JournalRecord, bool, error)
	// TrimJournal applies the retention exactly.
	TrimJournal(ctx context.Context) error
}

// parseJournalID splits "<ms>-<seq>".
func parseJournalID(id string) (ms int64, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

// ValidJournalID reports whether id has the "<ms>-<seq>" form of a journal
// record id; a malformed id is a caller's error, not a missing record.
func ValidJournalID(id string) bool {
	_, _, ok := parseJournalID(id)
	return ok
}

func journalIDError(id string) error {
	return fmt.Errorf("journal id %q: want <unix ms>-<sequence>", id)
}

// OpenJournal returns the journal that goes with s: the Redis Stream at key
// when s is a Redis store (every replica shares it), else a memory ring.
func OpenJournal(s Store, key string, ret JournalRetention) Journal {
	if r, ok := s.(*Redis); ok {
		return r.Journal(key, ret, nil)
	}
	return NewMemoryJournal(ret)
}
