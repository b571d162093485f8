package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
	"github.com/alertrouter/alertrouter/store/storetest"
)

// TestMemoryJournalRingMatchesAModel appends, ages and trims the memory
// journal's ring through many wrap-arounds (count and age retention
// together) and checks every read against a plain slice of what should be
// kept: oldest and newest first, limits, kinds and ids.
func TestMemoryJournalRingMatchesAModel(t *testing.T) {
	ctx := context.Background()
	for _, maxRecords := range []int64{1, 7, 100} {
		t.Run(strconv.FormatInt(maxRecords, 10), func(t *testing.T) {
			clock := &storetest.Clock{}
			j := store.NewMemoryJournal(store.JournalRetention{MaxRecords: maxRecords, MaxAge: time.Hour}, store.WithClock(clock.Now))
			rng := rand.New(rand.NewPCG(1, uint64(maxRecords)))
			var model []store.JournalRecord
			seq := 0
			for step := range 2000 {
				switch op := rng.IntN(10); {
				case op < 7: // append a batch
					var recs []store.JournalRecord
					for range 1 + rng.IntN(5) {
						seq++
						kind := "decision"
						if seq%3 == 0 {
							kind = "dead_letter"
						}
						recs = append(recs, store.JournalRecord{Kind: kind, Data: []byte("r" + strconv.Itoa(seq))})
					}
					ids, err := j.AppendJournal(ctx, recs)
					if err != nil {
						t.Fatal(err)
					}
					for i, r := range recs {
						r.ID = ids[i]
						model = append(model, r)
					}
					if n := len(model) - int(maxRecords); n > 0 {
						model = model[n:]
					}
				case op < 9:
					clock.Advance(time.Duration(rng.IntN(40)) * time.Minute)
				default:
					if err := j.TrimJournal(ctx); err != nil {
						t.Fatal(err)
					}
				}
				// What any read must see: the model without what is older
				// than MaxAge once a trim or an append ran (both trim); a
				// read of records older than MaxAge before any trim may
				// still see them, so compare after trimming.
				if err := j.TrimJournal(ctx); err != nil {
					t.Fatal(err)
				}
				cutoff := clock.Now().Add(-time.Hour)
				model = slices.DeleteFunc(model, func(r store.JournalRecord) bool { return r.Time().Before(cutoff) })
				var want []string
				for _, r := range model {
					want = append(want, string(r.Data))
				}
				check := func(q store.JournalQuery, want []string) {
					t.Helper()
					got, err := j.RangeJournal(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					var data []string
					for _, r := range got {
						data = append(data, string(r.Data))
					}
					if !slices.Equal(data, want) {
						t.Fatalf("step %d: RangeJournal(%+v) = %v, want %v", step, q, data, want)
					}
				}
				check(store.JournalQuery{}, want)
				rev := slices.Clone(want)
				slices.Reverse(rev)
				check(store.JournalQuery{Newest: true, Limit: 3}, rev[:min(3, len(rev))])
				var dead []string
				for _, r := range model {
					if r.Kind == "dead_letter" {
						dead = append(dead, string(r.Data))
					}
				}
				check(store.JournalQuery{Kind: "dead_letter"}, dead)
				if len(model) > 0 {
					k := model[rng.IntN(len(model))]
					r, ok, err := j.GetJournal(ctx, k.ID)
					if err != nil || !ok || string(r.Data) != string(k.Data) {
						t.Fatalf("step %d: GetJournal(%s) = %q, %v, %v; want %q", step, k.ID, r.Data, ok, err, k.Data)
					}
				}
			}
			if seq < 3*int(maxRecords) {
				t.Fatalf("only %d records appended: the ring never wrapped", seq)
			}
		})
	}
}
