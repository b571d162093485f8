package journal

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/store"
)

// encodeFrame keeps its buffers for the next frame, but not once a large
// frame has grown them past maxKeptBuffer; every frame decodes to its
// entries whichever buffers it was encoded in.
func TestFrameBuffersAreKeptUpToABound(t *testing.T) {
	var buf frameBuffers
	small := []Entry{{Kind: KindDecision, Fingerprint: "a1", Alertname: "Small"}}
	large := []Entry{{Kind: KindDecision, Fingerprint: "b2", Alertname: "Large",
		Annotations: map[string]string{"description": strings.Repeat("x", 2*maxKeptBuffer)}}}
	for i, c := range []struct {
		entries []Entry
		kept    bool
	}{{small, true}, {large, false}, {small, true}} {
		data, err := encodeFrame(c.entries, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if kept := buf.js.Cap() > 0 && cap(buf.z) > 0; kept != c.kept {
			t.Errorf("frame %d: buffers kept = %v (JSON %d B, compressed %d B), want %v", i, kept, buf.js.Cap(), cap(buf.z), c.kept)
		}
		got, err := DecodeRecord(store.JournalRecord{ID: "1-0", Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("frame %d decoded to %d entries, want 1", i, len(got))
		}
		if got[0].Alertname != c.entries[0].Alertname || got[0].Annotations["description"] != c.entries[0].Annotations["description"] {
			t.Errorf("frame %d decoded to %q, want %q", i, got[0].Alertname, c.entries[0].Alertname)
		}
	}
}
