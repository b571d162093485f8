package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/journal"
	"github.com/alertrouter/alertrouter/store"
)

// The console reads the journal newest first, a page of records at a time,
// and looks at each entry once: a page keeps what it shows and counts the
// rest, never the window's entries whole. Most of an entry's bytes, and of
// its decoding, are the alert's labels and annotations and a dead letter's
// payload, which the lists and aggregates do not show: a record is first
// decoded into summaries (slimEntry) that leave them out, and decoded whole
// by journal.DecodeRecord only when a page shows one of its entries in full
// (an incident's alerts, a dead letter's id) or filters on a label.

// slimEntry is a journal entry (journal.Entry, whose JSON names these
// fields carry) without what the console's lists and aggregates do not
// read: the alert's labels, annotations, end and URL (its start is when
// the overview says an incident began), the webhook's group key, the
// classification's details, and a dead letter's payload.
type slimEntry struct {
	Kind           journal.Kind       `json:"kind"`
	Time           time.Time          `json:"time"`
	Replica        string             `json:"replica"`
	Fingerprint    string             `json:"fingerprint"`
	Alertname      string             `json:"alertname"`
	Status         string             `json:"status"`
	StartsAt       time.Time          `json:"starts_at"`
	Sector         string             `json:"sector"`
	KPIs           []string           `json:"kpis"`
	Decision       alert.Decision     `json:"decision"`
	Hints          []string           `json:"hints"`
	Incident       string             `json:"incident"`
	Receivers      []string           `json:"receivers"`
	Deliveries     []journal.Delivery `json:"deliveries"`
	SuppressedBy   string             `json:"suppressed_by"`
	Suppressed     bool               `json:"suppressed"`
	Deduplicated   bool               `json:"deduplicated"`
	Muted          bool               `json:"muted"`
	MutedReceivers []string           `json:"muted_receivers"`
	DeadLetter     *slimDeadLetter    `json:"dead_letter"`
	// Annotations keeps the summary alone: the overview's line of an
	// incident (the other annotations are skipped by the decoder).
	Annotations slimAnnotations `json:"annotations"`
}

// slimAnnotations are the annotations the overview reads.
type slimAnnotations struct {
	Summary string `json:"summary"`
}

// slimDeadLetter is a dead letter without the notification it keeps.
type slimDeadLetter struct {
	Receiver    string       `json:"receiver"`
	Integration string       `json:"integration"`
	Incident    string       `json:"incident"`
	Kind        alert.Kind   `json:"kind"`
	Action      alert.Action `json:"action"`
	Error       string       `json:"error"`
	Attempts    int          `json:"attempts"`
}

// into sets *e to the summary, every other field zero.
func (s *slimEntry) into(e *journal.Entry) {
	*e = journal.Entry{
		Kind: s.Kind, Time: s.Time, Replica: s.Replica,
		Fingerprint: s.Fingerprint, Alertname: s.Alertname, Status: s.Status, StartsAt: s.StartsAt,
		Sector: s.Sector, KPIs: s.KPIs, Decision: s.Decision, Hints: s.Hints,
		Incident: s.Incident, Receivers: s.Receivers, Deliveries: s.Deliveries,
		SuppressedBy: s.SuppressedBy, Suppressed: s.Suppressed, Deduplicated: s.Deduplicated, Muted: s.Muted,
		MutedReceivers: s.MutedReceivers,
	}
	if d := s.DeadLetter; d != nil {
		e.DeadLetter = &journal.DeadLetter{Receiver: d.Receiver, Integration: d.Integration, Incident: d.Incident,
			Kind: d.Kind, Action: d.Action, Error: d.Error, Attempts: d.Attempts}
	}
}

// summary returns the summary annotation of the record's entry i, e: read
// from its summary, or from e when the record has none (e is then the
// entry decoded whole).
func (r *record) summary(i int, e *journal.Entry) string {
	if r.slim != nil && i < len(r.slim) {
		return r.slim[i].Annotations.Summary
	}
	return e.Annotations["summary"]
}

// summarize returns what a page keeps of an entry decoded whole for a
// list (a decision's row, a history line, a dead letter): the entry
// without the alert's labels and annotations and the dead letter's
// payload, so that the record it came from is not kept alive.
func summarize(e *journal.Entry) journal.Entry {
	s := *e
	s.Labels, s.Annotations = nil, nil
	if e.DeadLetter != nil {
		d := *e.DeadLetter
		d.Results, d.Data = nil, nil
		s.DeadLetter = &d
	}
	return s
}

// keptScratch bounds the decompression buffer a scan keeps from one record
// to the next.
const keptScratch = 1 << 20

// scratch is what a scan reuses from one record to the next: the
// decompressed frame and the summaries decoded from it.
type scratch struct {
	js      []byte
	slim    []slimEntry
	lowered []byte
}

// decodeSlim decodes a record's entries as summaries, oldest first, into
// the scratch (valid until the next call); false when the record is not in
// a form it reads, or does not decode.
func decodeSlim(data []byte, sc *scratch) (out []slimEntry, js []byte, ok bool) {
	defer func() {
		if recover() != nil { // a decoder's bug must not take the router down
			out, js, ok = nil, nil, false
		}
	}()
	// The decoder decodes into the elements of the slice it is given, as
	// encoding/json does: they are zeroed first, so that no field of
	// another entry is left, and no slice an entry kept is written to.
	if sc.slim == nil {
		sc.slim = make([]slimEntry, 0, journal.MaxFrameEntries)
	}
	clear(sc.slim[:cap(sc.slim)])
	out = sc.slim[:0]
	js, array, err := journal.RecordJSON(data, sc.js)
	if err != nil {
		return nil, nil, false
	}
	if array {
		if cap(js) <= keptScratch {
			sc.js = js
		}
		if err := gojson.Unmarshal(js, &out); err != nil || len(out) == 0 || len(out) > journal.MaxFrameEntries {
			return nil, nil, false
		}
	} else {
		out = out[:1]
		if err := gojson.Unmarshal(js, &out[0]); err != nil {
			return nil, nil, false
		}
	}
	if cap(out) == cap(sc.slim) {
		sc.slim = out[:0]
	}
	return out, js, true
}

// record is one store record as a scan hands it over.
type record struct {
	raw  store.JournalRecord
	slim []slimEntry
	// js is the record's JSON when it has summaries (valid during the
	// record's calls only).
	js []byte
	sc *scratch
	// may is mayContain's answer for mayText, once asked (0: not yet; 1:
	// false; 2: true).
	may     int8
	mayText string
	// full are the record's entries decoded whole, once asked for (or at
	// once when the record has no summaries); fullOK says they are.
	full    []journal.Entry
	decoded bool
	fullOK  bool
}

// entry returns the record's entry i decoded whole (with its id); false
// when the record does not decode whole, or not into as many entries as
// it has summaries.
func (r *record) entry(i int) (*journal.Entry, bool) {
	if !r.decoded {
		r.decoded = true
		full, err := journal.DecodeRecord(r.raw)
		r.full, r.fullOK = full, err == nil && (r.slim == nil || len(full) == len(r.slim))
	}
	if !r.fullOK || i >= len(r.full) {
		return nil, false
	}
	return &r.full[i], true
}

// mayContain reports whether an entry of the record may contain text, a
// lower-cased needle, in one of its strings (journal.Filter's text match,
// which lower-cases them): false only when none can, so that the record
// need not be decoded whole to be sure. It looks at the record's JSON
// lower-cased: a needle of printable ASCII that JSON writes as it is (no
// quote, backslash, slash, <, > or &) is there when it is in a string
// lower-cased, for the other characters of a string do not lower-case into
// ASCII — but two, which make the answer true.
func (r *record) mayContain(text string) bool {
	if r.may == 0 || r.mayText != text {
		r.may, r.mayText = 1, text
		if r.jsonMayContain(text) {
			r.may = 2
		}
	}
	return r.may == 2
}

func (r *record) jsonMayContain(text string) bool {
	if r.js == nil || !plainNeedle(text) {
		return true
	}
	js := r.js
	// The two runes that lower-case into ASCII, written as they are or
	// escaped, make the answer true; a \u escape that does not parse too.
	if bytes.Contains(js, dottedCapitalI) || bytes.Contains(js, kelvinSign) {
		return true
	}
	for i := 0; ; {
		k := bytes.Index(js[i:], escapeU)
		if k < 0 {
			break
		}
		k += i
		if k+5 < len(js) {
			if c, ok := hex4(js[k+2 : k+6]); !ok || lowersToASCII(c) {
				return true
			}
		}
		i = k + 2
	}
	// Every other byte lower-cases on its own: ASCII letters into ASCII,
	// the bytes of other runes (never part of an ASCII needle) as they
	// are. One copy, one pass, no rune decoded.
	low := append(r.sc.lowered[:0], js...)
	for i, b := range low {
		if 'A' <= b && b <= 'Z' {
			low[i] = b + ('a' - 'A')
		}
	}
	if cap(low) <= keptScratch {
		r.sc.lowered = low
	}
	return bytes.Contains(low, []byte(text))
}

// The bytes jsonMayContain looks for first: İ and the Kelvin sign in UTF-8,
// and the start of a \u escape.
var (
	dottedCapitalI = []byte("\u0130")
	kelvinSign     = []byte("\u212a")
	escapeU        = []byte(`\u`)
)

// lowersToASCII reports whether unicode.ToLower (strings.ToLower's) maps c,
// beyond ASCII, into ASCII: only İ (to i) and the Kelvin sign (to k) do.
func lowersToASCII(c rune) bool { return c == '\u0130' || c == '\u212a' }

// plainNeedle reports whether s is printable ASCII that JSON does not
// escape.
func plainNeedle(s string) bool {
	for i := range len(s) {
		if b := s[i]; b < 0x20 || b > 0x7e || strings.IndexByte(`"\/<>&`, b) >= 0 {
			return false
		}
	}
	return true
}

// hex4 parses the four hex digits of a \u escape.
func hex4(h []byte) (rune, bool) {
	var c rune
	for _, b := range h {
		switch {
		case '0' <= b && b <= '9':
			c = c<<4 | rune(b-'0')
		case 'a' <= b && b <= 'f':
			c = c<<4 | rune(b-'a'+10)
		case 'A' <= b && b <= 'F':
			c = c<<4 | rune(b-'A'+10)
		default:
			return 0, false
		}
	}
	return c, true
}

// errStop ends a scan early without an error.
var errStop = errors.New("stop the scan")

// scan calls fn with each entry of the window of the given kind ("" for
// every kind), newest first: e is the entry's summary (or the entry itself
// when its record has no summaries), valid during the call only (copy what
// is kept); r.entry(i) decodes it whole. Records that decode neither way
// are skipped, as journal.Read skips them. fn ends the scan early by
// returning errStop; its other errors are returned.
func (c *Console) scan(ctx context.Context, kind journal.Kind, since time.Time, fn func(r *record, i int, e *journal.Entry) error) error {
	return c.scanRecords(ctx, store.JournalQuery{Since: since, Kind: string(kind), Newest: true, Limit: journal.ReadPage}, nil, fn)
}

// kindsPage is how many records scanKinds asks the store for at a time:
// it reads every record of the window, and decodes only those of its
// kinds (rare beside the decisions), so larger pages save round trips.
const kindsPage = 512

// scanKinds is scan for the entries of several kinds, in one read of the
// window: the records of other kinds are skipped undecoded.
func (c *Console) scanKinds(ctx context.Context, since time.Time, kinds []journal.Kind, fn func(r *record, i int, e *journal.Entry) error) error {
	return c.scanRecords(ctx, store.JournalQuery{Since: since, Newest: true, Limit: kindsPage}, func(k string) bool {
		return slices.Contains(kinds, journal.Kind(k))
	}, fn)
}

// scanRecords is scan of the records q selects that want (nil: all)
// accepts by their kind.
func (c *Console) scanRecords(ctx context.Context, q store.JournalQuery, want func(kind string) bool, fn func(r *record, i int, e *journal.Entry) error) error {
	var sc scratch
	var cur journal.Entry
	for {
		recs, err := c.opts.Journal.RangeJournal(ctx, q)
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		for k := range recs {
			if want != nil && !want(recs[k].Kind) {
				continue
			}
			r := record{raw: recs[k], sc: &sc}
			var ok bool
			if r.slim, r.js, ok = decodeSlim(recs[k].Data, &sc); !ok {
				r.slim, r.js = nil, nil
				if _, ok := r.entry(0); !ok {
					continue
				}
			}
			for i := len(r.full) - 1; r.slim == nil && i >= 0; i-- {
				if err := fn(&r, i, &r.full[i]); err != nil {
					return stopped(err)
				}
			}
			for i := len(r.slim) - 1; i >= 0; i-- {
				r.slim[i].into(&cur)
				if err := fn(&r, i, &cur); err != nil {
					return stopped(err)
				}
			}
		}
		if len(recs) < q.Limit {
			return nil
		}
		q.After = recs[len(recs)-1].ID
	}
}

func stopped(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}
