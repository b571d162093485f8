package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// Clock is a settable clock for the journal suite's age retention.
type Clock struct{ offset atomic.Int64 }

// Now returns the real time plus the offset set by Advance: record ids of a
// Redis journal carry the server's real time, so the suite moves the
// journal's view of "now" rather than the records.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// OpenJournal opens a handle on one journal backend, fresh for the subtest:
// every call of the returned function gives another handle (another replica)
// on the same journal, with the given retention and clock.
type OpenJournal func(t *testing.T, ret store.JournalRetention, clock *Clock) func() store.Journal

// RunJournal runs the conformance suite of store.Journal implementations.
func RunJournal(t *testing.T, open OpenJournal) {
	for _, tc := range journalCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, open)
		})
	}
}

var journalCases = []struct {
	name string
	run  func(t *testing.T, open OpenJournal)
}{
	{"two writers append and one reader sees every record in order", testJournalTwoWriters},
	{"range selects by kind and time, oldest or newest first, with a limit", testJournalRange},
	{"get returns a record by id and reports a missing one", testJournalGet},
	{"records keep binary data byte for byte", testJournalBinary},
	{"a cursor pages through a range in either order", testJournalCursor},
	{"retention trims by count", testJournalTrimCount},
	{"retention trims by age", testJournalTrimAge},
}

func appendN(t *testing.T, j store.Journal, kind, tag string, n int) []string {
	t.Helper()
	recs := make([]store.JournalRecord, n)
	for i := range recs {
		recs[i] = store.JournalRecord{Kind: kind, Data: fmt.Appendf(nil, "%s-%d", tag, i)}
	}
	ids, err := j.AppendJournal(t.Context(), recs)
	if err != nil {
		t.Fatalf("AppendJournal: %v", err)
	}
	if len(ids) != n {
		t.Fatalf("AppendJournal returned %d ids for %d records", len(ids), n)
	}
	return ids
}

func rangeAll(t *testing.T, j store.Journal, q store.JournalQuery) []store.JournalRecord {
	t.Helper()
	recs, err := j.RangeJournal(t.Context(), q)
	if err != nil {
		t.Fatalf("RangeJournal(%+v): %v", q, err)
	}
	return recs
}

func testJournalTwoWriters(t *testing.T, open OpenJournal) {
	handle := open(t, store.JournalRetention{MaxRecords: 10_000}, &Clock{})
	const perWriter, batches = 50, 4
	var wg sync.WaitGroup
	for w := range 2 {
		j := handle()
		wg.Go(func() {
			for b := range batches {
				recs := make([]store.JournalRecord, perWriter)
				for i := range recs {
					recs[i] = store.JournalRecord{Kind: "decision", Data: fmt.Appendf(nil, "w%d-b%d-%d", w, b, i)}
				}
				if _, err := j.AppendJournal(context.Background(), recs); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := rangeAll(t, handle(), store.JournalQuery{})
	if len(got) != 2*perWriter*batches {
		t.Fatalf("reader saw %d records, want %d", len(got), 2*perWriter*batches)
	}
	seen := map[string]bool{}
	next := map[int]int{} // per writer and batch, records keep their order
	for i, r := range got {
		if i > 0 && !idLess(got[i-1].ID, r.ID) {
			t.Fatalf("records out of id order: %s then %s", got[i-1].ID, r.ID)
		}
		var w, b, n int
		if _, err := fmt.Sscanf(string(r.Data), "w%d-b%d-%d", &w, &b, &n); err != nil {
			t.Fatalf("record data %q: %v", r.Data, err)
		}
		seen[string(r.Data)] = true
		k := w*batches + b
		if n != next[k] {
			t.Fatalf("writer %d batch %d: record %d came before %d", w, b, n, next[k])
		}
		next[k]++
	}
	if len(seen) != 2*perWriter*batches {
		t.Fatalf("reader saw %d distinct records, want %d", len(seen), 2*perWriter*batches)
	}
}

// idLess orders "<ms>-<seq>" ids.
func idLess(a, b string) bool {
	var am, as, bm, bs uint64
	fmt.Sscanf(a, "%d-%d", &am, &as)
	fmt.Sscanf(b, "%d-%d", &bm, &bs)
	return am < bm || am == bm && as < bs
}

func testJournalRange(t *testing.T, open OpenJournal) {
	j := open(t, store.JournalRetention{}, &Clock{})()
	before := time.Now().Add(-time.Second)
	appendN(t, j, "decision", "d", 700) // more than one Redis page
	dead := appendN(t, j, "dead_letter", "x", 3)
	appendN(t, j, "decision", "e", 2)

	if got := rangeAll(t, j, store.JournalQuery{}); len(got) != 705 {
		t.Fatalf("all records: got %d, want 705", len(got))
	}
	got := rangeAll(t, j, store.JournalQuery{Kind: "dead_letter"})
	if len(got) != 3 || got[0].ID != dead[0] || string(got[2].Data) != "x-2" {
		t.Fatalf("dead letters: got %v, want ids %v", got, dead)
	}
	for _, r := range got {
		if r.Kind != "dead_letter" {
			t.Fatalf("kind filter let %q through", r.Kind)
		}
	}
	got = rangeAll(t, j, store.JournalQuery{Kind: "decision", Newest: true, Limit: 3})
	if len(got) != 3 || string(got[0].Data) != "e-1" || string(got[1].Data) != "e-0" || string(got[2].Data) != "d-699" {
		t.Fatalf("newest 3 decisions: got %q %q %q", got[0].Data, got[1].Data, got[2].Data)
	}
	got = rangeAll(t, j, store.JournalQuery{Limit: 2})
	if len(got) != 2 || string(got[0].Data) != "d-0" {
		t.Fatalf("oldest 2: got %v", got)
	}
	if got := rangeAll(t, j, store.JournalQuery{Since: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Fatalf("since the future: got %d records", len(got))
	}
	if got := rangeAll(t, j, store.JournalQuery{Until: before}); len(got) != 0 {
		t.Fatalf("until before the first append: got %d records", len(got))
	}
	if got := rangeAll(t, j, store.JournalQuery{Since: before, Until: time.Now().Add(time.Second)}); len(got) != 705 {
		t.Fatalf("since/until around the appends: got %d records, want 705", len(got))
	}
	for _, r := range got {
		if r.Time().Before(before) {
			t.Fatalf("record %s time %v before the test started", r.ID, r.Time())
		}
	}
}

func testJournalGet(t *testing.T, open OpenJournal) {
	j := open(t, store.JournalRetention{}, &Clock{})()
	ids := appendN(t, j, "dead_letter", "g", 3)
	r, ok, err := j.GetJournal(t.Context(), ids[1])
	if err != nil || !ok || r.ID != ids[1] || r.Kind != "dead_letter" || string(r.Data) != "g-1" {
		t.Fatalf("GetJournal(%s) = %+v, %v, %v", ids[1], r, ok, err)
	}
	if _, ok, err := j.GetJournal(t.Context(), "1-0"); ok || err != nil {
		t.Fatalf("GetJournal of a missing id = %v, %v; want false, nil", ok, err)
	}
	if _, _, err := j.GetJournal(t.Context(), "not-an-id"); err == nil {
		t.Fatal("GetJournal of a malformed id returned no error")
	}
}

// testJournalBinary: the journal package stores compressed frames, so a
// record's data is any bytes — every byte value, NUL and invalid UTF-8
// included — and comes back unchanged from a range and a get.
func testJournalBinary(t *testing.T, open OpenJournal) {
	j := open(t, store.JournalRetention{}, &Clock{})()
	data := make([]byte, 0, 3*256)
	for range 3 {
		for b := range 256 {
			data = append(data, byte(255-b))
		}
	}
	ids, err := j.AppendJournal(t.Context(), []store.JournalRecord{{Kind: "decision", Data: data}, {Kind: "decision", Data: []byte{0}}})
	if err != nil {
		t.Fatal(err)
	}
	recs := rangeAll(t, j, store.JournalQuery{})
	if len(recs) != 2 || !bytes.Equal(recs[0].Data, data) || !bytes.Equal(recs[1].Data, []byte{0}) {
		t.Fatalf("range returned %d records, data changed", len(recs))
	}
	r, ok, err := j.GetJournal(t.Context(), ids[0])
	if err != nil || !ok || !bytes.Equal(r.Data, data) {
		t.Fatalf("GetJournal(%s) = %v, %v; data changed: %v", ids[0], ok, err, !bytes.Equal(r.Data, data))
	}
}

// testJournalCursor: pages of Limit records, each continuing After the
// last record of the one before, add up to the whole range, oldest or
// newest first, with a kind and time bounds; a malformed cursor is an error.
func testJournalCursor(t *testing.T, open OpenJournal) {
	j := open(t, store.JournalRetention{}, &Clock{})()
	before := time.Now().Add(-time.Second)
	appendN(t, j, "decision", "d", 600)
	appendN(t, j, "dead_letter", "x", 5)
	appendN(t, j, "decision", "e", 100)
	for _, q := range []store.JournalQuery{
		{},
		{Newest: true},
		{Kind: "decision"},
		{Kind: "dead_letter", Newest: true},
		{Since: before, Until: time.Now().Add(time.Second), Newest: true},
		{Since: before},
	} {
		all := rangeAll(t, j, q)
		var paged []store.JournalRecord
		p := q
		for p.Limit = 97; ; {
			if len(paged) > len(all) {
				t.Fatalf("%+v: pages return %d records past the %d of the range: the cursor is ignored", q, len(paged), len(all))
			}
			page := rangeAll(t, j, p)
			paged = append(paged, page...)
			if len(page) < p.Limit {
				break
			}
			p.After = page[len(page)-1].ID
		}
		if len(paged) != len(all) || len(all) == 0 {
			t.Fatalf("%+v: %d records in pages, %d in one range", q, len(paged), len(all))
		}
		for i := range all {
			if paged[i].ID != all[i].ID || !bytes.Equal(paged[i].Data, all[i].Data) {
				t.Fatalf("%+v: record %d is %s in pages, %s in one range", q, i, paged[i].ID, all[i].ID)
			}
		}
	}
	if _, err := j.RangeJournal(t.Context(), store.JournalQuery{After: "not-an-id"}); err == nil {
		t.Fatal("a malformed cursor returned no error")
	}
}

func testJournalTrimCount(t *testing.T, open OpenJournal) {
	handle := open(t, store.JournalRetention{MaxRecords: 10}, &Clock{})
	a, b := handle(), handle()
	appendN(t, a, "decision", "a", 25)
	last := appendN(t, b, "decision", "b", 5)
	if err := a.TrimJournal(t.Context()); err != nil {
		t.Fatalf("TrimJournal: %v", err)
	}
	got := rangeAll(t, b, store.JournalQuery{})
	if len(got) != 10 {
		t.Fatalf("after trim by count: %d records, want 10", len(got))
	}
	if got[9].ID != last[4] || string(got[0].Data) != "a-20" {
		t.Fatalf("trim kept the wrong records: first %q, last %s", got[0].Data, got[9].ID)
	}
}

func testJournalTrimAge(t *testing.T, open OpenJournal) {
	clock := &Clock{}
	j := open(t, store.JournalRetention{MaxAge: time.Hour}, clock)()
	appendN(t, j, "decision", "old", 3)
	if err := j.TrimJournal(t.Context()); err != nil {
		t.Fatalf("TrimJournal: %v", err)
	}
	if got := rangeAll(t, j, store.JournalQuery{}); len(got) != 3 {
		t.Fatalf("records younger than MaxAge were trimmed: %d left, want 3", len(got))
	}
	clock.Advance(2 * time.Hour)
	if err := j.TrimJournal(t.Context()); err != nil {
		t.Fatalf("TrimJournal: %v", err)
	}
	if got := rangeAll(t, j, store.JournalQuery{}); len(got) != 0 {
		t.Fatalf("records older than MaxAge survived: %d left", len(got))
	}
}
