package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// Filter narrows decision entries; an empty field matches everything.
type Filter struct {
	Sector   string
	Action   string
	Policy   string
	Receiver string
	// Text matches, case-insensitively, the alertname, fingerprint,
	// incident, a label value, a reason or a hint id.
	Text string
}

// Match reports whether e passes the filter.
func (f Filter) Match(e *Entry) bool {
	switch {
	case f.Sector != "" && e.Sector != f.Sector,
		f.Action != "" && string(e.Decision.Action) != f.Action,
		f.Policy != "" && e.Decision.Policy != f.Policy,
		f.Receiver != "" && !slices.Contains(e.Receivers, f.Receiver):
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

// Read returns the entries q selects, decoded. Records that do not decode
// are skipped (a journal shared with a newer or older router must not stop
// the console).
func Read(ctx context.Context, j store.Journal, q Query) ([]Entry, error) {
	sq := store.JournalQuery{Since: q.Since, Until: q.Until, Kind: string(q.Kind), Newest: q.Newest}
	filtered := q.Filter != Filter{}
	if !filtered {
		sq.Limit = q.Limit
	}
	recs, err := j.RangeJournal(ctx, sq)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	var out []Entry
	for _, r := range recs {
		e, err := Decode(r)
		if err != nil || !q.Filter.Match(&e) {
			continue
		}
		out = append(out, e)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// Get returns the entry with the given id; found is false when the journal
// has no such entry (or no longer has it).
func Get(ctx context.Context, j store.Journal, id string) (e Entry, found bool, err error) {
	r, ok, err := j.GetJournal(ctx, id)
	if err != nil || !ok {
		return Entry{}, false, err
	}
	e, err = Decode(r)
	return e, err == nil, err
}

// Decode decodes a record into an Entry, setting its ID (and its dead
// letter's).
func Decode(r store.JournalRecord) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(r.Data, &e); err != nil {
		return Entry{}, fmt.Errorf("%w %s: %w", errNotDecoded, r.ID, err)
	}
	e.ID = r.ID
	if e.DeadLetter != nil {
		e.DeadLetter.ID = r.ID
	}
	return e, nil
}
