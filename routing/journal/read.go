package journal

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// Filter narrows decision entries; an empty field matches everything.
type Filter struct {
	// Incident, when set, matches that incident key exactly.
	Incident string
	Sector   string
	Action   string
	Policy   string
	// Receiver matches an entry routed to it (Receivers) or muted on a
	// route of it (MutedReceivers).
	Receiver string
	// Text matches, case-insensitively, the alertname, fingerprint,
	// incident, a label value, a reason or a hint id.
	Text string
}

// Match reports whether e passes the filter.
func (f Filter) Match(e *Entry) bool {
	switch {
	case f.Incident != "" && e.Incident != f.Incident,
		f.Sector != "" && e.Sector != f.Sector,
		f.Action != "" && string(e.Decision.Action) != f.Action,
		f.Policy != "" && e.Decision.Policy != f.Policy,
		f.Receiver != "" && !slices.Contains(e.Receivers, f.Receiver) && !slices.Contains(e.MutedReceivers, f.Receiver):
		return false
	}
	return f.Text == "" || containsText(e, strings.ToLower(f.Text))
}

func containsText(e *Entry, text string) bool {
	has := func(s string) bool { return strings.Contains(strings.ToLower(s), text) }
	if has(e.Alertname) || has(e.Fingerprint) || has(e.Incident) || has(e.Sector) {
		return true
	}
	for _, v := range e.Labels {
		if has(v) {
			return true
		}
	}
	return slices.ContainsFunc(e.Decision.Reasons, has) || slices.ContainsFunc(e.Hints, has)
}

// Query selects entries to Read.
type Query struct {
	Since, Until time.Time
	Kind         Kind
	Filter       Filter
	// Limit caps the entries returned (0: no cap); Newest returns the newest
	// first.
	Limit  int
	Newest bool
}

// ReadPage is how many records Read asks the store for at a time when the
// query has a Limit (and the console's scans always): a record holds up to
// MaxFrameEntries entries, so asking for Limit records would read up to
// that many times what is needed.
const ReadPage = 64

// Read returns the entries q selects, decoded. Records that do not decode
// are skipped (a journal shared with a newer or older router must not stop
// the console). With a Limit it reads the store a page of records at a
// time and stops once it has Limit entries.
func Read(ctx context.Context, j store.Journal, q Query) ([]Entry, error) {
	var out []Entry
	err := each(ctx, j, q, q.Limit == 0, func(e *Entry) error {
		out = append(out, *e)
		return nil
	})
	return out, err
}

// Each calls fn with each entry q selects, in order, reading the store a
// page of records at a time, so that the entries are never all in memory
// (the console's export); it stops at q.Limit entries, or at fn's first
// error, which it returns.
func Each(ctx context.Context, j store.Journal, q Query, fn func(*Entry) error) error {
	return each(ctx, j, q, false, fn)
}

// each reads q's entries; whole asks the store for every record in one
// call (Read without a Limit), otherwise a page at a time.
func each(ctx context.Context, j store.Journal, q Query, whole bool, fn func(*Entry) error) error {
	sq := store.JournalQuery{Since: q.Since, Until: q.Until, Kind: string(q.Kind), Newest: q.Newest}
	if !whole {
		sq.Limit = ReadPage
	}
	n := 0
	for {
		recs, err := j.RangeJournal(ctx, sq)
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		for _, r := range recs {
			entries, err := DecodeRecord(r)
			if err != nil {
				continue
			}
			if q.Newest {
				slices.Reverse(entries)
			}
			for i := range entries {
				if !q.Filter.Match(&entries[i]) {
					continue
				}
				if err := fn(&entries[i]); err != nil {
					return err
				}
				if n++; q.Limit > 0 && n == q.Limit {
					return nil
				}
			}
		}
		if sq.Limit == 0 || len(recs) < sq.Limit {
			return nil
		}
		sq.After = recs[len(recs)-1].ID
	}
}

// Get returns the entry with the given id; found is false when the journal
// has no such entry (or no longer has it). A malformed id is an error.
func Get(ctx context.Context, j store.Journal, id string) (e Entry, found bool, err error) {
	rec, i, ok := splitID(id)
	if !ok {
		return Entry{}, false, fmt.Errorf("journal entry id %q: want <unix ms>-<sequence>[.<index>]", id)
	}
	r, ok, err := j.GetJournal(ctx, rec)
	if err != nil || !ok {
		return Entry{}, false, err
	}
	entries, err := DecodeRecord(r)
	if err != nil {
		return Entry{}, false, err
	}
	if i >= len(entries) {
		return Entry{}, false, nil
	}
	return entries[i], true, nil
}
