package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/klauspost/compress/s2"

	"github.com/alertrouter/alertrouter/store"
)

// A store record holds a frame: up to MaxFrameEntries consecutive entries of
// one kind, as the writer appends them (one webhook's decisions, or several
// webhooks' under load), encoded as a JSON array and compressed with S2
// behind a one-byte header. A webhook's decisions repeat their field names,
// group key, replica and much of their labels, so a frame of ten decisions
// is about a fifth of their JSON, and costs the store one append instead of
// ten (docs/benchmarks.md, "Issue 17, tenth round").
//
// Records written before frames hold one entry as a plain JSON object; they
// are still read (a journal is shared across a rolling upgrade).
const (
	// frameS2JSON is the header byte of an S2-compressed JSON array of
	// entries. A legacy record's first byte is '{'.
	frameS2JSON byte = 0x01
	// MaxFrameEntries bounds the entries of one frame, so that reading one
	// entry by id decodes at most this many.
	MaxFrameEntries = 32
	// maxFrameBytes bounds a frame's decompressed size, so that a corrupt
	// or hostile record cannot make a reader allocate without bound.
	maxFrameBytes = 64 << 20
)

// ErrNotDecoded is returned for records whose data is not an entry or a
// frame of entries (corrupt, or written by an unknown version).
var ErrNotDecoded = errors.New("journal record is not an entry")

// frameBuffers are encodeFrame's buffers, kept from one frame to the next
// by the journal writer's goroutine: the JSON array and the compressed
// block. A buffer grown past maxKeptBuffer by a large frame is let go.
type frameBuffers struct {
	js   bytes.Buffer
	z    []byte
	wire []wireEntry
}

// wireEntry is how go-json encodes a decision entry: the entry, with its
// three omitzero times as pointers that are nil when the time is zero. For
// omitzero on a time.Time go-json looks the IsZero method up by reflection
// and boxes the value, for every field of every entry — a third of a
// frame's encoding and three allocations per entry; a nil pointer is one
// comparison. The JSON holds the same fields and values as the entry's
// (encoding/json makes the same bytes of a wireEntry), those three last.
type wireEntry struct {
	*Entry
	ReceivedAt *time.Time `json:"received_at,omitempty"`
	StartsAt   *time.Time `json:"starts_at,omitempty"`
	EndsAt     *time.Time `json:"ends_at,omitempty"`
}

// wireEntries are entries as wireEntry, in buf; the caller clears buf
// after encoding, so that it does not keep the entries alive.
func wireEntries(entries []Entry, buf []wireEntry) []wireEntry {
	buf = buf[:0]
	for i := range entries {
		e := &entries[i]
		buf = append(buf, wireEntry{Entry: e, ReceivedAt: nonZero(&e.ReceivedAt), StartsAt: nonZero(&e.StartsAt), EndsAt: nonZero(&e.EndsAt)})
	}
	return buf
}

// nonZero is t, or nil when *t is the zero time (omitzero's test).
func nonZero(t *time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return t
}

// maxKeptBuffer bounds what frameBuffers keep between frames (a 10-alert
// webhook's frame is about 15 KB of JSON).
const maxKeptBuffer = 1 << 20

// encodeFrame encodes entries, which are all of one kind, as one record's
// data, in buf's buffers; the data returned does not share them (a memory
// journal keeps the data, so it is exactly the compressed size). Decision
// entries — most of the journal — are encoded in their wire form
// (wireEntry) by goccy/go-json (the decoder's library), two to three times
// faster than encoding/json and byte for byte the same for this type
// (TestJournalRecordsAreEncodingJSON);
// dead letters, which carry a raw payload, keep encoding/json. Both encode
// into the kept buffer (Marshal would allocate the array's bytes anew for
// every frame).
func encodeFrame(entries []Entry, buf *frameBuffers) ([]byte, error) {
	buf.js.Reset()
	defer func() {
		if buf.js.Cap() > maxKeptBuffer {
			buf.js = bytes.Buffer{}
		}
		if cap(buf.z) > maxKeptBuffer {
			buf.z = nil
		}
	}()
	var err error
	if entries[0].Kind == KindDecision {
		buf.wire = wireEntries(entries, buf.wire)
		err = gojson.NewEncoder(&buf.js).Encode(buf.wire)
		clear(buf.wire) // the entries are not kept alive by the buffer
	} else {
		err = json.NewEncoder(&buf.js).Encode(entries)
	}
	if err != nil {
		return nil, err
	}
	js := bytes.TrimSuffix(buf.js.Bytes(), []byte{'\n'}) // Encode ends with a newline
	if n := s2.MaxEncodedLen(len(js)); cap(buf.z) < n {
		buf.z = make([]byte, n)
	}
	z := s2.Encode(buf.z[:cap(buf.z)], js)
	data := make([]byte, 1+len(z))
	data[0] = frameS2JSON
	copy(data[1:], z)
	return data, nil
}

// DecodeRecord decodes the entries of one store record, oldest first, and
// sets their ids (and their dead letters'): a record's first entry has the
// record's id, the entry at index i > 0 the record's id followed by "." and
// i.
func DecodeRecord(r store.JournalRecord) ([]Entry, error) {
	js, array, err := RecordJSON(r.Data, nil)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrNotDecoded, r.ID, err)
	}
	var entries []Entry
	if array {
		err = json.Unmarshal(js, &entries)
		if err == nil && (len(entries) == 0 || len(entries) > MaxFrameEntries) {
			err = fmt.Errorf("frame of %d entries, want 1 to %d", len(entries), MaxFrameEntries)
		}
	} else {
		entries = make([]Entry, 1)
		err = json.Unmarshal(js, &entries[0])
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrNotDecoded, r.ID, err)
	}
	for i := range entries {
		e := &entries[i]
		e.ID = entryID(r.ID, i)
		if e.DeadLetter != nil {
			e.DeadLetter.ID = e.ID
		}
	}
	return entries, nil
}

// RecordJSON returns the JSON of a store record's data: a frame's entries
// as a JSON array (array true; decompressed into buf when it is large
// enough, bounded in size before it is), or the one entry of a record
// written before frames as a JSON object (data itself). Readers that need
// part of each entry (the console's summaries) decode it themselves; a
// frame holds 1 to MaxFrameEntries entries.
func RecordJSON(data, buf []byte) (js []byte, array bool, err error) {
	switch {
	case len(data) > 0 && data[0] == '{':
		return data, false, nil
	case len(data) > 0 && data[0] == frameS2JSON:
		n, err := s2.DecodedLen(data[1:])
		if err != nil {
			return nil, false, err
		}
		if n > maxFrameBytes {
			return nil, false, fmt.Errorf("frame of %d bytes exceeds %d", n, maxFrameBytes)
		}
		js, err := s2.Decode(buf[:cap(buf)], data[1:])
		return js, true, err
	}
	return nil, false, errors.New("unknown encoding")
}

// entryID is the id of the entry at index i of the record with id rec.
func entryID(rec string, i int) string {
	if i == 0 {
		return rec
	}
	return rec + "." + strconv.Itoa(i)
}

// splitID splits an entry id into its record's id and its index in the
// record.
func splitID(id string) (rec string, i int, ok bool) {
	rec, idx, dotted := strings.Cut(id, ".")
	if dotted {
		n, err := strconv.Atoi(idx)
		if err != nil || n <= 0 || n >= MaxFrameEntries || strconv.Itoa(n) != idx {
			return "", 0, false
		}
		i = n
	}
	return rec, i, store.ValidJournalID(rec)
}

// ValidID reports whether id has the form of a journal entry's id: a store
// record's id ("<unix ms>-<sequence>"), optionally followed by "." and the
// entry's index in its record (1 to 31). A malformed id is a caller's error,
// not a missing entry.
func ValidID(id string) bool {
	_, _, ok := splitID(id)
	return ok
}
