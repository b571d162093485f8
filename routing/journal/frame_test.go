package journal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// decisions returns n decision entries whose fingerprints are
// prefix-0, prefix-1 ….
func decisions(prefix string, n int) []journal.Entry {
	out := make([]journal.Entry, n)
	for i := range out {
		out[i] = journal.Entry{Kind: journal.KindDecision, Fingerprint: fmt.Sprintf("%s-%d", prefix, i),
			Labels: map[string]string{"alertname": "A", "instance": fmt.Sprint(i)}, Decision: alert.Decision{Action: alert.ActionTicket}}
	}
	return out
}

func fingerprints(entries []journal.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Fingerprint
	}
	return out
}

// A journal packs entries into frames: every entry is read back, in order,
// newest first when asked, each with its own id by which Get finds it.
func TestFramesKeepEveryEntryWithItsOwnID(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, reg := newWriter(t, j, journal.WriterOptions{Replica: "r1"})
	w.Write(decisions("a", 70)...) // frames of 32, 32 and 6
	dl := journal.Entry{Kind: journal.KindDeadLetter, Fingerprint: "dl", DeadLetter: &journal.DeadLetter{Receiver: "slack", Integration: "slack/0", Results: json.RawMessage("[]")}}
	w.Write(dl)
	w.Write(decisions("b", 5)...)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs, err := j.RangeJournal(t.Context(), store.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records for 76 entries, want 5 (32+32+6 decisions, a dead letter, 5 decisions)", len(recs))
	}
	if v := metricSum(t, reg, "alertrouter_journal_written_total"); v != 76 {
		t.Fatalf("written_total = %v, want 76 entries", v)
	}

	all, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(fingerprints(decisions("a", 70)), "dl"), fingerprints(decisions("b", 5))...)
	if got := fingerprints(all); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("read %v\nwant %v", got, want)
	}
	ids := map[string]bool{}
	for _, e := range all {
		if !journal.ValidID(e.ID) || ids[e.ID] {
			t.Fatalf("entry %s has id %q: invalid or not unique", e.Fingerprint, e.ID)
		}
		ids[e.ID] = true
		got, found, err := journal.Get(t.Context(), j, e.ID)
		if err != nil || !found || got.Fingerprint != e.Fingerprint || got.ID != e.ID || got.Replica != "r1" {
			t.Fatalf("Get(%q) = %s %q %v %v, want entry %s", e.ID, got.Fingerprint, got.ID, found, err, e.Fingerprint)
		}
	}
	if all[32].ID != recs[1].ID || all[33].ID != recs[1].ID+".1" {
		t.Fatalf("entry ids %q, %q: want the record's id and then .1", all[32].ID, all[33].ID)
	}
	if all[70].DeadLetter == nil || all[70].DeadLetter.ID != all[70].ID {
		t.Fatalf("dead letter read back as %+v, want its entry's id %q", all[70].DeadLetter, all[70].ID)
	}

	newest, err := journal.Read(t.Context(), j, journal.Query{Newest: true, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantNewest := []string{"b-4", "b-3", "b-2", "b-1", "b-0", "dl", "a-69", "a-68", "a-67", "a-66"}
	if got := fingerprints(newest); strings.Join(got, ",") != strings.Join(wantNewest, ",") {
		t.Fatalf("newest 10 = %v, want %v", got, wantNewest)
	}
	dead, err := journal.Read(t.Context(), j, journal.Query{Kind: journal.KindDeadLetter})
	if err != nil || len(dead) != 1 || dead[0].Fingerprint != "dl" {
		t.Fatalf("dead letters = %v, %v; want the one", fingerprints(dead), err)
	}
	filtered, err := journal.Read(t.Context(), j, journal.Query{Filter: journal.Filter{Text: "a-1"}, Limit: 3})
	if err != nil || strings.Join(fingerprints(filtered), ",") != "a-1,a-10,a-11" {
		t.Fatalf("filtered read = %v, %v; want a-1,a-10,a-11", fingerprints(filtered), err)
	}

	// Ids that name no entry: past the end of a frame, a missing record.
	for _, id := range []string{recs[2].ID + ".6", recs[4].ID + ".5", "1-0", "1-0.3"} {
		if e, found, err := journal.Get(t.Context(), j, id); err != nil || found {
			t.Errorf("Get(%q) = %s, %v, %v; want not found", id, e.Fingerprint, found, err)
		}
	}
}

func TestValidIDNamesARecordAndAnIndexInIt(t *testing.T) {
	for id, want := range map[string]bool{
		"1733200000000-0":    true,
		"1733200000000-12.1": true,
		"1733200000000-0.31": true,
		"1733200000000-0.32": false, // past the largest frame
		"1733200000000-0.0":  false, // index 0 is the bare record id
		"1733200000000-0.01": false,
		"1733200000000-0.-1": false,
		"1733200000000-0.":   false,
		"1733200000000-0.x":  false,
		"1733200000000":      false,
		"garbage":            false,
		"":                   false,
	} {
		if got := journal.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
	j := store.NewMemoryJournal(store.JournalRetention{})
	if _, _, err := journal.Get(t.Context(), j, "1-0.0"); err == nil {
		t.Error("Get of a malformed id: no error")
	}
}

// Records written before frames (one entry as a JSON object) are still read,
// beside frames, in one journal: replicas of both versions share it during a
// rolling upgrade.
func TestLegacyRecordsAreReadBesideFrames(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	old, err := json.Marshal(journal.Entry{Kind: journal.KindDecision, Fingerprint: "legacy", Replica: "old"})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := j.AppendJournal(t.Context(), []store.JournalRecord{{Kind: string(journal.KindDecision), Data: old}})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := newWriter(t, j, journal.WriterOptions{Replica: "new"})
	w.Write(decisions("n", 2)...)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	all, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fingerprints(all), ","); got != "legacy,n-0,n-1" {
		t.Fatalf("read %s, want legacy,n-0,n-1", got)
	}
	if all[0].ID != ids[0] || all[0].Replica != "old" {
		t.Fatalf("legacy entry read as id %q replica %q, want %q old", all[0].ID, all[0].Replica, ids[0])
	}
	if e, found, err := journal.Get(t.Context(), j, ids[0]); err != nil || !found || e.Fingerprint != "legacy" {
		t.Fatalf("Get(legacy) = %s %v %v", e.Fingerprint, found, err)
	}
}

// corruptRecords are records no reader may trust: each is skipped by Read
// and an error for Get.
func corruptRecords() map[string][]byte {
	frame := func(js string) []byte { return append([]byte{0x01}, s2.Encode(nil, []byte(js))...) }
	bomb := []byte{0x01, 0xff, 0xff, 0xff, 0xff, 0x0f} // claims 4 GiB decompressed
	return map[string][]byte{
		"empty":          nil,
		"unknown header": []byte("\x02abc"),
		"bad json":       []byte("{not json"),
		"bad s2":         []byte("\x01\x10garbage"),
		"bomb":           bomb,
		"empty frame":    frame("[]"),
		"frame of junk":  frame(`[{"kind":1}]`),
		"frame too long": frame("[" + strings.Repeat(`{"kind":"decision"},`, 32) + `{"kind":"decision"}]`),
	}
}

func TestCorruptRecordsAreSkippedNotFatal(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	w.Write(decisions("before", 1)...)
	_ = w.Flush(t.Context())
	bad := corruptRecords()
	for name, data := range bad {
		ids, err := j.AppendJournal(t.Context(), []store.JournalRecord{{Kind: string(journal.KindDecision), Data: data}})
		if err != nil {
			t.Fatal(err)
		}
		if e, found, err := journal.Get(t.Context(), j, ids[0]); err == nil || found {
			t.Errorf("%s: Get = %s, %v, %v; want an error", name, e.Fingerprint, found, err)
		}
	}
	w.Write(decisions("after", 1)...)
	_ = w.Flush(t.Context())
	all, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fingerprints(all), ","); got != "before-0,after-0" {
		t.Fatalf("read %s past %d corrupt records, want before-0,after-0", got, len(bad))
	}
}

// writeConcurrently has writers goroutines write writes webhooks of per
// decisions each (fingerprints g<goroutine>.w<webhook>-<i>), and waits.
func writeConcurrently(w *journal.Writer, writers, writes, per int) {
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for k := range writes {
				w.Write(decisions(fmt.Sprintf("g%d.w%d", g, k), per)...)
			}
		})
	}
	wg.Wait()
}

// The entries of one Write stay together and in order in the journal even
// when many webhooks write at once.
func TestConcurrentWritesKeepEachWebhookTogether(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{MaxRecords: 100_000})
	w, reg := newWriter(t, j, journal.WriterOptions{Batch: 25})
	const writers, writes, per = 8, 50, 10
	writeConcurrently(w, writers, writes, per)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	dropped := metricSum(t, reg, "alertrouter_journal_dropped_total")
	all, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if float64(len(all))+dropped != writers*writes*per {
		t.Fatalf("%d entries read + %v dropped, want %d written", len(all), dropped, writers*writes*per)
	}
	for i := 0; i < len(all); {
		webhook, _, _ := strings.Cut(all[i].Fingerprint, "-")
		for k := range per {
			if i+k >= len(all) || all[i+k].Fingerprint != fmt.Sprintf("%s-%d", webhook, k) {
				t.Fatalf("entry %d: webhook %s's %d entries are not together in order: %v", i, webhook, per, fingerprints(all[i:min(i+per, len(all))]))
			}
		}
		i += per
	}
}

// A Write that finds room in the buffer is kept whole, however many
// entries it holds — a webhook of more alerts than the buffer holds lost
// all but the buffer's first 4,096 (an audit) —; one that finds the buffer
// full is dropped whole and counted.
func TestWriteIsKeptOrDroppedWhole(t *testing.T) {
	inner := store.NewMemoryJournal(store.JournalRetention{})
	j := &blockingJournal{Journal: inner, entered: make(chan struct{}, 10), release: make(chan struct{})}
	w, reg := newWriter(t, j, journal.WriterOptions{Buffer: 8})
	w.Write(decisions("first", 1)...)
	<-j.entered // the writer holds it in a stuck append
	w.Write(decisions("w", 5)...)
	w.Write(decisions("x", 5)...) // 5 waiting: kept whole, past the buffer
	w.Write(decisions("y", 2)...) // 10 waiting: the buffer is full
	close(j.release)
	if v := metricSum(t, reg, "alertrouter_journal_dropped_total"); v != 2 {
		t.Fatalf("dropped_total = %v, want 2 (y's)", v)
	}
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	w.Write(decisions("big", 20)...) // more than the buffer holds, into an empty one
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := metricSum(t, reg, "alertrouter_journal_dropped_total"); v != 2 {
		t.Fatalf("dropped_total = %v after a write larger than the buffer, want 2: it is kept whole", v)
	}
	all, _ := journal.Read(t.Context(), inner, journal.Query{})
	want := []string{"first-0", "w-0", "w-1", "w-2", "w-3", "w-4", "x-0", "x-1", "x-2", "x-3", "x-4"}
	for i := range 20 {
		want = append(want, fmt.Sprintf("big-%d", i))
	}
	if got := strings.Join(fingerprints(all), ","); got != strings.Join(want, ",") {
		t.Fatalf("journal holds %s", got)
	}
}

// FuzzDecodeRecord: no record, however corrupt, panics a reader; what
// decodes has one id per entry, the record's first.
func FuzzDecodeRecord(f *testing.F) {
	for _, data := range corruptRecords() {
		f.Add(data)
	}
	legacy, _ := json.Marshal(journal.Entry{Kind: journal.KindDecision, Fingerprint: "x"})
	f.Add(legacy)
	f.Add(append([]byte{0x01}, s2.Encode(nil, []byte(`[{"kind":"decision"},{"kind":"dead_letter","dead_letter":{"results":[]}}]`))...))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := journal.DecodeRecord(store.JournalRecord{ID: "5-1", Data: data})
		if err != nil {
			if !errors.Is(err, journal.ErrNotDecoded) {
				t.Fatalf("error %v does not wrap ErrNotDecoded", err)
			}
			return
		}
		if len(entries) == 0 || len(entries) > 32 || entries[0].ID != "5-1" {
			t.Fatalf("decoded %d entries, first id %q", len(entries), entries[0].ID)
		}
		for i, e := range entries[1:] {
			if e.ID != fmt.Sprintf("5-1.%d", i+1) || (e.DeadLetter != nil && e.DeadLetter.ID != e.ID) {
				t.Fatalf("entry %d has id %q", i+1, e.ID)
			}
		}
	})
}

// Dead letters written together share a frame; each is replayed by its own
// id, once, and the replayed mark of one is not the other's.
func TestDeadLettersOfOneFrameReplayOneByOne(t *testing.T) {
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{})
	var dls []journal.Entry
	for _, recv := range []string{"slack-a", "slack-b", "slack-c"} {
		e, err := journal.NewDeadLetter(&alert.Notification{Receiver: recv, Integration: "slack/0", Incident: "inc"}, errors.New("invalid_auth"), 1, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		dls = append(dls, e)
	}
	w.Write(dls...)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if recs, _ := j.RangeJournal(t.Context(), store.JournalQuery{}); len(recs) != 1 {
		t.Fatalf("%d records for three dead letters written together, want 1", len(recs))
	}
	var sent []string
	r := &journal.Replayer{Journal: j, Claims: store.NewMemory(), KeyPrefix: "test:", Owner: "r1",
		Send: func(_ context.Context, d journal.DeadLetter) error {
			sent = append(sent, d.Receiver+"@"+d.ID)
			return nil
		}}
	list, err := r.List(t.Context(), time.Time{})
	if err != nil || len(list) != 3 {
		t.Fatalf("List = %d dead letters, %v; want 3", len(list), err)
	}
	second := list[1] // newest first: slack-b
	if ok, err := r.Replay(t.Context(), second.ID); !ok || err != nil {
		t.Fatalf("Replay(%s) = %v, %v", second.ID, ok, err)
	}
	if len(sent) != 1 || sent[0] != "slack-b@"+second.ID || !strings.HasSuffix(second.ID, ".1") {
		t.Fatalf("sent %v for id %s, want slack-b by the frame's second id", sent, second.ID)
	}
	rep, err := r.ReplayAll(t.Context(), time.Time{})
	if err != nil || rep.Sent != 2 || rep.AlreadyReplayed != 1 {
		t.Fatalf("ReplayAll = %+v, %v; want the other two sent", rep, err)
	}
}

// countingJournal counts the records its ranges return.
type countingJournal struct {
	store.Journal
	records int
}

func (c *countingJournal) RangeJournal(ctx context.Context, q store.JournalQuery) ([]store.JournalRecord, error) {
	recs, err := c.Journal.RangeJournal(ctx, q)
	c.records += len(recs)
	return recs, err
}

// A read with a limit fetches the records it needs, a page at a time, not
// Limit records of up to 32 entries each; paged reads equal a whole read.
func TestLimitedReadsFetchWhatTheyNeed(t *testing.T) {
	inner := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, inner, journal.WriterOptions{})
	for k := range 150 {
		w.Write(decisions(fmt.Sprintf("w%d", k), 32)...)
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	j := &countingJournal{Journal: inner}
	all, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil || len(all) != 150*32 {
		t.Fatalf("whole read: %d entries, %v", len(all), err)
	}
	for _, tc := range []struct {
		q          journal.Query
		maxRecords int
	}{
		{journal.Query{Newest: true, Limit: 100}, 64},
		{journal.Query{Limit: 3000}, 128}, // two pages
		{journal.Query{Newest: true, Limit: 10_000}, 150},
		{journal.Query{Filter: journal.Filter{Text: "-31"}, Limit: 100}, 128},
	} {
		j.records = 0
		got, err := journal.Read(t.Context(), j, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if j.records > tc.maxRecords {
			t.Errorf("%+v fetched %d records, want at most %d", tc.q, j.records, tc.maxRecords)
		}
		var want []string
		order := all
		if tc.q.Newest {
			order = slices.Clone(all)
			slices.Reverse(order)
		}
		for i := range order {
			if tc.q.Filter.Match(&order[i]) && len(want) < tc.q.Limit {
				want = append(want, order[i].ID)
			}
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%+v: %d entries differ from the whole read's first %d", tc.q, len(ids), len(want))
		}
	}
}

// Writers racing for the last of the buffer's room each keep or drop their
// write whole: no entry is lost uncounted, none is kept twice, no write is
// split, and the buffer's bound holds (the buffer's room plus one write).
func TestRacingWritesPastTheBufferAreCounted(t *testing.T) {
	inner := store.NewMemoryJournal(store.JournalRetention{MaxRecords: 100_000})
	j := &blockingJournal{Journal: inner, entered: make(chan struct{}, 1000), release: make(chan struct{})}
	const buffer = 7
	w, reg := newWriter(t, j, journal.WriterOptions{Buffer: buffer})
	w.Write(decisions("first", 1)...)
	<-j.entered // the writer is stuck: every later write competes for 7 entries of room
	const writers, writes, per = 16, 40, 3
	writeConcurrently(w, writers, writes, per)
	dropped := metricSum(t, reg, "alertrouter_journal_dropped_total")
	close(j.release)
	// Writes of 3 are admitted while fewer than 7 entries wait: at 0, 3
	// and 6 waiting.
	const kept = 3 * per
	if want := float64(writers*writes*per - kept); dropped != want {
		t.Fatalf("dropped_total = %v with the writer stuck, want %v (all but the %d of the writes that found room)", dropped, want, kept)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	all, _ := journal.Read(t.Context(), inner, journal.Query{})
	if len(all) != 1+kept {
		t.Fatalf("journal holds %d entries, want the first and the %d of the writes that found room", len(all), kept)
	}
	seen := map[string]bool{}
	perWrite := map[string]int{}
	for _, e := range all {
		if seen[e.Fingerprint] {
			t.Fatalf("entry %s kept twice", e.Fingerprint)
		}
		seen[e.Fingerprint] = true
		perWrite[e.Fingerprint[:strings.LastIndex(e.Fingerprint, "-")]]++
	}
	for wr, n := range perWrite {
		if wr != "first" && n != per {
			t.Fatalf("write %s kept %d of its %d entries: split", wr, n, per)
		}
	}
}

// A decision's times are written when set and left out when zero, as
// omitzero does (decisions are encoded in a wire form whose times are
// pointers), and read back as they were: a firing alert's zero end stays
// zero, a resolved alert's end is kept to the nanosecond.
func TestDecisionTimesAreKeptAndZeroTimesLeftOut(t *testing.T) {
	at := time.Date(2026, 12, 3, 23, 10, 0, 123456789, time.UTC)
	entries := []journal.Entry{
		{Kind: journal.KindDecision, Fingerprint: "firing", Time: at, ReceivedAt: at, StartsAt: at.Add(-time.Hour)},
		{Kind: journal.KindDecision, Fingerprint: "resolved", Time: at, ReceivedAt: at, StartsAt: at.Add(-time.Hour), EndsAt: at.Add(-time.Minute)},
		{Kind: journal.KindDecision, Fingerprint: "bare", Time: at},
	}
	recs := writeRecords(t, entries...)
	if len(recs) != 1 {
		t.Fatalf("%d records, want one frame", len(recs))
	}
	js, err := s2.Decode(nil, recs[0].Data[1:])
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	for i, want := range []map[string]bool{
		{"received_at": true, "starts_at": true, "ends_at": false},
		{"received_at": true, "starts_at": true, "ends_at": true},
		{"received_at": false, "starts_at": false, "ends_at": false},
	} {
		for field, present := range want {
			if _, ok := raw[i][field]; ok != present {
				t.Errorf("entry %s: %s written = %v, want %v", entries[i].Fingerprint, field, ok, present)
			}
		}
	}
	got, err := journal.DecodeRecord(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		g := got[i]
		if !g.ReceivedAt.Equal(e.ReceivedAt) || !g.StartsAt.Equal(e.StartsAt) || !g.EndsAt.Equal(e.EndsAt) ||
			g.EndsAt.IsZero() != e.EndsAt.IsZero() || !g.Time.Equal(e.Time) {
			t.Errorf("entry %s read back with received %v, starts %v, ends %v; want %v, %v, %v",
				e.Fingerprint, g.ReceivedAt, g.StartsAt, g.EndsAt, e.ReceivedAt, e.StartsAt, e.EndsAt)
		}
	}
}

// writeRecords writes entries in one Write of a writer of replica r1 to a
// memory journal and returns the journal's records.
func writeRecords(t *testing.T, entries ...journal.Entry) []store.JournalRecord {
	t.Helper()
	j := store.NewMemoryJournal(store.JournalRetention{})
	w, _ := newWriter(t, j, journal.WriterOptions{Replica: "r1"})
	w.Write(entries...)
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs, err := j.RangeJournal(t.Context(), store.JournalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
