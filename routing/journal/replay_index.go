package journal

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// journalView is what a replay's checks read of the journal: an incident's
// decisions from a time on (since: delivered, resolved or fired again
// since) and the replays from a time on (sentBefore). Replay reads the
// journal for each (liveJournal); ReplayAll reads it once (replayIndex),
// since each of its dead letters would read the same records again — an
// audit's replay --all of 1,648 dead letters took 1m40s, growing with the
// square of their count.
type journalView interface {
	// decisions calls fn with each decision of incident in a record of
	// since or later, in the journal's order, and stops at fn's first
	// error, which it returns.
	decisions(ctx context.Context, incident string, since time.Time, fn func(*Entry) error) error
	// replays returns the replays of the dead letters ids in records of
	// since or later.
	replays(ctx context.Context, since time.Time, ids []string) ([]Entry, error)
}

// liveJournal reads the journal itself at every call.
type liveJournal struct{ j store.Journal }

func (l liveJournal) decisions(ctx context.Context, incident string, since time.Time, fn func(*Entry) error) error {
	return Each(ctx, l.j, Query{Since: since, Kind: KindDecision, Filter: Filter{Incident: incident}}, fn)
}

func (l liveJournal) replays(ctx context.Context, since time.Time, ids []string) ([]Entry, error) {
	all, err := Read(ctx, l.j, Query{Since: since, Kind: KindReplay})
	return slices.DeleteFunc(all, func(e Entry) bool { return e.Replay == nil || !slices.Contains(ids, e.Replay.DeadLetter) }), err
}

// replayIndex is the journal as ReplayAll's dead letters' checks read it:
// the decisions of their incidents and the replays of their ids, read once
// from a start on and brought up to date (the records written since the
// last read: decisions arriving while the replay runs, and its own
// replays) before every answer, so each check sees the journal as a read
// of it at that moment would.
type replayIndex struct {
	j         store.Journal
	start     time.Time
	after     string               // the last record read
	incidents map[string]bool      // the dead letters' incidents
	ids       map[string]bool      // the dead letters' ids
	byInc     map[string][]indexed // decisions by incident
	byID      map[string][]indexed // replays by dead letter
}

// indexed is an entry with the time of its record (Query.Since selects
// records by it).
type indexed struct {
	ms int64
	e  Entry
}

// newReplayIndex returns the index of dead letters' checks, reading from
// SinceLookback before the oldest of them.
func newReplayIndex(j store.Journal, deadLetters []Entry) *replayIndex {
	x := &replayIndex{j: j, incidents: map[string]bool{}, ids: map[string]bool{}, byInc: map[string][]indexed{}, byID: map[string][]indexed{}}
	for _, e := range deadLetters {
		if e.DeadLetter == nil {
			continue
		}
		x.ids[e.ID] = true
		if e.DeadLetter.Incident != "" {
			x.incidents[e.DeadLetter.Incident] = true
		}
		if t := e.Time.Add(-SinceLookback); x.start.IsZero() || t.Before(x.start) {
			x.start = t
		}
	}
	return x
}

// refresh reads the records written after the last one read.
func (x *replayIndex) refresh(ctx context.Context) error {
	q := store.JournalQuery{Since: x.start, After: x.after, Limit: ReadPage}
	for {
		recs, err := x.j.RangeJournal(ctx, q)
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		for _, r := range recs {
			x.after = r.ID
			if r.Kind != string(KindDecision) && r.Kind != string(KindReplay) {
				continue
			}
			entries, err := DecodeRecord(r)
			if err != nil {
				continue // as Read: a record that does not decode is skipped
			}
			ms := recordMillis(r.ID)
			for _, e := range entries {
				switch {
				case e.Kind == KindDecision && x.incidents[e.Incident]:
					x.byInc[e.Incident] = append(x.byInc[e.Incident], indexed{ms, e})
				case e.Kind == KindReplay && e.Replay != nil && x.ids[e.Replay.DeadLetter]:
					x.byID[e.Replay.DeadLetter] = append(x.byID[e.Replay.DeadLetter], indexed{ms, e})
				}
			}
		}
		if len(recs) < q.Limit {
			return nil
		}
		q.After = x.after
	}
}

func (x *replayIndex) decisions(ctx context.Context, incident string, since time.Time, fn func(*Entry) error) error {
	if err := x.refresh(ctx); err != nil {
		return err
	}
	from := since.UnixMilli()
	for i := range x.byInc[incident] {
		if in := &x.byInc[incident][i]; in.ms >= from {
			if err := fn(&in.e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (x *replayIndex) replays(ctx context.Context, since time.Time, ids []string) ([]Entry, error) {
	if err := x.refresh(ctx); err != nil {
		return nil, err
	}
	from := since.UnixMilli()
	var out []Entry
	for _, id := range ids {
		for _, in := range x.byID[id] {
			if in.ms >= from {
				out = append(out, in.e)
			}
		}
	}
	return out, nil
}

// recordMillis is the time, in ms since the epoch, of the record with id
// ("<unix ms>-<sequence>").
func recordMillis(id string) int64 {
	ms, _, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseInt(ms, 10, 64)
	return n
}
