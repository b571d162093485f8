package notify_test

import (
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify"
)

// HasBidi's byte pre-check misses no control: each is found alone and in
// text, and texts with other characters of the same lead bytes (an em dash,
// an Arabic letter) hold none.
func TestHasBidiFindsEveryControl(t *testing.T) {
	var controls []rune
	for r := rune(0); r <= 0x2100; r++ {
		if notify.IsBidiControl(r) {
			controls = append(controls, r)
		}
	}
	if len(controls) != 12 {
		t.Fatalf("%d bidirectional controls, want 12 (U+202A–202E, U+2066–2069, U+200E, U+200F, U+061C)", len(controls))
	}
	for _, r := range controls {
		for _, s := range []string{string(r), "disk " + string(r) + "full", "ok — " + string(r)} {
			if !notify.HasBidi(s) || !strings.Contains(notify.ShowBidi(s), "[U+") {
				t.Errorf("%q: HasBidi %v, shown %q; want found and shown", s, notify.HasBidi(s), notify.ShowBidi(s))
			}
		}
	}
	for _, s := range []string{"", "plain", "p99 — 2.4 s", "خطأ في القرص", "→ ‘quoted’ …"} {
		if notify.HasBidi(s) || notify.ShowBidi(s) != s {
			t.Errorf("%q: HasBidi true or changed (%q); want none", s, notify.ShowBidi(s))
		}
	}
}

// A cut of shown text falls before a control shown as "[U+200F]", never
// inside it: a header or PagerDuty summary ended "[U+20…" (a fuzz audit).
func TestTruncateShownSplitsNoShownControl(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc\u200fdef", 20, "abc[U+200F]def"},
		{"abcdef\u200fxyz", 8, "abcdef…"},
		{"abc\u200f\u200fxyz", 12, "abc[U+200F]…"},
		{"abcdefghij", 5, "abcd…"},
		{"ab\u200f", 20, "ab[U+200F]"},
	} {
		if got := notify.TruncateShown(tt.s, tt.n); got != tt.want {
			t.Errorf("TruncateShown(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
