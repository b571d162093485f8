package notify

import (
	"strings"
	"testing"

	amnotify "github.com/prometheus/alertmanager/notify"
)

// TestTruncateInRunesIsAlertmanagers: same results as Alertmanager's on
// strings around every limit, ASCII and multi-byte, valid and invalid UTF-8,
// and no allocation for a string that fits.
func TestTruncateInRunesIsAlertmanagers(t *testing.T) {
	inputs := []string{"", "a", "abc", "abcd", "héllo wörld", strings.Repeat("é", 10), strings.Repeat("日本", 6),
		"\xff\xfe\xfd", "ok\xffok", strings.Repeat("x", 3000), strings.Repeat("ü", 1600)}
	for _, s := range inputs {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 150, 1500, 3000, 3001} {
			got, gotCut := TruncateInRunes(s, n)
			want, wantCut := amnotify.TruncateInRunes(s, n)
			if got != want || gotCut != wantCut {
				t.Errorf("TruncateInRunes(%q, %d) = %q, %v; Alertmanager's gives %q, %v", s, n, got, gotCut, want, wantCut)
			}
		}
	}
	fits := strings.Repeat("ü", 1000)
	if a := testing.AllocsPerRun(100, func() { _, _ = TruncateInRunes(fits, 3000) }); a != 0 {
		t.Errorf("%v allocations for a string that fits, want 0", a)
	}
}
