package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// journalOfEveryKind returns a memory journal holding frames of decisions
// and dead letters written by journal.Writer — strings with quotes, <, >
// and &, other alphabets, the two runes that lower-case into ASCII, empty
// fields — an entry as a record of an older router (a JSON object), and
// two records no reader decodes.
func journalOfEveryKind(t *testing.T) *store.MemoryJournal {
	t.Helper()
	j := store.NewMemoryJournal(store.JournalRetention{})
	m, err := journal.NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := journal.NewWriter(j, m, journal.WriterOptions{Replica: "router-0", Batch: 7})
	defer func() { _ = w.Close(t.Context()) }()
	now := time.Now()
	names := []string{"GPUHot", "Disk \"full\" <90%> & more", "Température ≥ 90°C", "İSTANBUL-LINK", "\u212aELVIN", "tab\there", ""}
	for i := range 60 {
		e := journal.Entry{
			Kind: journal.KindDecision, Time: now.Add(-time.Duration(i) * time.Minute), Replica: fmt.Sprintf("router-%d", i%2),
			GroupKey: "{}:{alertname=\"x\"}", Fingerprint: fmt.Sprintf("%016x", i), Alertname: names[i%len(names)], Status: []string{"firing", "resolved"}[i%2],
			Labels:      map[string]string{"alertname": names[i%len(names)], "service": fmt.Sprintf("svc-%d/Ä", i%5), "team": "SRE"},
			Annotations: map[string]string{"summary": "a <b>summary</b> & " + names[(i+1)%len(names)]},
			StartsAt:    now.Add(-time.Hour), GeneratorURL: "http://prom/graph?g0.expr=up%3D%3D0&x=<y>",
			Sector: []string{"llm-inference-gpu", "", "hft-cdn"}[i%3], KPIs: []string{"TTFT", "p99"}[:i%3%2+1],
			Decision: alert.Decision{Action: []alert.Action{alert.ActionPage, alert.ActionTicket, alert.ActionNone}[i%3], Policy: "burn-rate", Tier: "1h/5m>14.4",
				Reasons: []string{"burn rate 15.2 > 14.4 → page", "budget ≤ 2% — “quoted” İ"}[:i%2+1], SLO: "chat-ttft"},
			Hints: []string{"HINT-" + fmt.Sprint(i%4)}, Incident: fmt.Sprintf("inc/%d", i%6), Receivers: []string{"platform", "gpu-oncall"}[:i%2+1],
			SuppressedBy: []string{"", "slo"}[i%2], Suppressed: i%2 == 1, Deduplicated: i%3 == 0, Muted: i%5 == 0,
		}
		if i%4 != 3 {
			e.Deliveries = []journal.Delivery{{Receiver: "platform", Integration: "slack/0", Outcome: journal.OutcomeSent, Attempts: 1 + i%3, Latency: time.Duration(i) * time.Millisecond, Error: []string{"", "slack: 503 <oops>"}[i%2]}}
		}
		w.Write(e)
		if i%10 == 9 {
			n := &alert.Notification{Receiver: "platform", Integration: "pagerduty/0", Incident: e.Incident, Kind: alert.KindFiring, Action: alert.ActionPage,
				Results: []*alert.Result{{Alert: &alert.Alert{Alert: template.Alert{Fingerprint: e.Fingerprint, Labels: e.Labels}}}}}
			dl, err := journal.NewDeadLetter(n, errors.New("pagerduty: 400 \"invalid\" <key>"), 2, e.Time)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(dl)
		}
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	legacy, err := json.Marshal(journal.Entry{Kind: journal.KindDecision, Time: now, Fingerprint: "legacy", Alertname: "Old \u212a", Incident: "inc/0",
		Labels: map[string]string{"a": "b"}, Decision: alert.Decision{Action: alert.ActionPage, Reasons: []string{"older router"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.AppendJournal(t.Context(), []store.JournalRecord{
		{Kind: string(journal.KindDecision), Data: legacy},
		{Kind: string(journal.KindDecision), Data: []byte{0x7f, 'x'}},     // an unknown encoding
		{Kind: string(journal.KindDecision), Data: []byte{0x01, 1, 2, 3}}, // a corrupt frame (routing/journal/frame.go: 0x01 starts a frame)
	}); err != nil {
		t.Fatal(err)
	}
	return j
}

// expected is what the scan hands over for an entry decoded whole: its
// summary.
func expected(e *journal.Entry) journal.Entry {
	s := journal.Entry{
		Kind: e.Kind, Time: e.Time, Replica: e.Replica, Fingerprint: e.Fingerprint, Alertname: e.Alertname, Status: e.Status, StartsAt: e.StartsAt,
		Sector: e.Sector, KPIs: e.KPIs, Decision: e.Decision, Hints: e.Hints, Incident: e.Incident, Receivers: e.Receivers,
		Deliveries: e.Deliveries, SuppressedBy: e.SuppressedBy, Suppressed: e.Suppressed, Deduplicated: e.Deduplicated, Muted: e.Muted,
	}
	if d := e.DeadLetter; d != nil {
		s.DeadLetter = &journal.DeadLetter{Receiver: d.Receiver, Integration: d.Integration, Incident: d.Incident, Kind: d.Kind,
			Action: d.Action, Error: d.Error, Attempts: d.Attempts}
	}
	return s
}

// A scan hands over, newest first, the summary of every entry that
// journal.DecodeRecord decodes — the fields the journal has, read by the
// console's own decoder — and skips the records it cannot decode; an
// entry asked for whole is DecodeRecord's, with its id.
func TestAScanReadsWhatTheJournalWrote(t *testing.T) {
	j := journalOfEveryKind(t)
	recs, err := j.RangeJournal(t.Context(), store.JournalQuery{Newest: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []journal.Entry
	var wantIDs []string
	for _, r := range recs {
		entries, err := journal.DecodeRecord(r)
		if err != nil {
			continue
		}
		for i := len(entries) - 1; i >= 0; i-- {
			want = append(want, expected(&entries[i]))
			wantIDs = append(wantIDs, entries[i].ID)
		}
	}
	if len(want) < 60 {
		t.Fatalf("the fixture decodes into %d entries", len(want))
	}
	c := New(Options{Journal: j})
	var got []journal.Entry
	var ids []string
	err = c.scan(t.Context(), "", time.Time{}, func(r *record, i int, e *journal.Entry) error {
		got = append(got, *e)
		full, ok := r.entry(i)
		if !ok {
			return fmt.Errorf("entry %d of record %s does not decode whole", i, r.raw.ID)
		}
		if full.Fingerprint != e.Fingerprint {
			return fmt.Errorf("entry %d of record %s is %s whole and %s summarized", i, r.raw.ID, full.Fingerprint, e.Fingerprint)
		}
		ids = append(ids, full.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("the scan read %d entries, DecodeRecord %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("entry %d (%s):\nscan   %+v\nwhole  %+v", i, wantIDs[i], got[i], want[i])
		}
	}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("ids %v, want %v", ids, wantIDs)
	}
}

// The text filter's look at a record's JSON never misses an entry that
// journal.Filter matches, whatever the needle's case and the strings'
// alphabets; and it does rule out records without the needle.
func TestMayContainNeverMissesAMatch(t *testing.T) {
	j := journalOfEveryKind(t)
	full, err := journal.Read(t.Context(), j, journal.Query{})
	if err != nil {
		t.Fatal(err)
	}
	needles := []string{"no-such-needle", "k", "i", "K", "I", "kelvin", "istanbul", "İSTANBUL", "\u212a", "ä", "°c", "\"full\"", "<90%>", "& more", "→", "tab\there", "sre", "/"}
	for _, e := range full {
		for _, s := range append([]string{e.Alertname, e.Fingerprint, e.Incident, e.Sector}, append(slices.Collect(mapsValues(e.Labels)), e.Decision.Reasons...)...) {
			for _, r := range []string{s, strings.ToUpper(s), strings.ToLower(s)} {
				if len(r) > 3 {
					needles = append(needles, r[1:len(r)-1], r[:3])
				}
			}
		}
	}
	c := New(Options{Journal: j})
	ruledOut := 0
	err = c.scan(t.Context(), "", time.Time{}, func(r *record, i int, e *journal.Entry) error {
		if i != len(r.slim)-1 || r.slim == nil {
			return nil // once per record with summaries
		}
		entries, err := journal.DecodeRecord(r.raw)
		if err != nil {
			return err
		}
		for _, n := range needles {
			f := journal.Filter{Text: n}
			match := slices.ContainsFunc(entries, func(e journal.Entry) bool { return f.Match(&e) })
			may := r.mayContain(strings.ToLower(n))
			if match && !may {
				return fmt.Errorf("record %s: an entry contains %q but mayContain says none can", r.raw.ID, n)
			}
			if !may && n == "no-such-needle" {
				ruledOut++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ruledOut == 0 {
		t.Fatal("no record was ruled out for a needle none contains: the text filter decodes every record whole")
	}
}

func mapsValues(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// mayContain relies on this: beyond ASCII, only İ and the Kelvin sign
// lower-case into ASCII (as strings.ToLower does it).
func TestOnlyTwoRunesLowerCaseIntoASCII(t *testing.T) {
	for c := rune(utf8RuneSelf); c <= unicode.MaxRune; c++ {
		low := strings.ToLower(string(c))
		intoASCII := strings.IndexFunc(low, func(r rune) bool { return r < utf8RuneSelf }) >= 0
		if intoASCII != lowersToASCII(c) {
			t.Fatalf("%U lower-cases to %q: lowersToASCII says %v", c, low, lowersToASCII(c))
		}
	}
}

const utf8RuneSelf = 0x80
