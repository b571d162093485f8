package notify

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TruncateText cuts at most n runes, "…" marking the cut, never inside a
// character as shown.
func TestTruncateTextKeepsCharactersWhole(t *testing.T) {
	pad := strings.Repeat("x", 8)
	tests := []struct {
		name, s string
		n       int
		want    string
	}{
		{"a text that fits is kept", "abc", 3, "abc"},
		{"plain text is cut at the rune", "abcdef", 4, "abc…"},
		{"a flag is not split", pad + "🇯🇵🇫🇷", 10, pad + "…"},
		{"a flag that fits is kept", pad + "🇯🇵🇫🇷", 11, pad + "🇯🇵…"},
		{"flags are paired from the start of the run", pad + "🇯🇵🇫🇷🇩🇪", 13, pad + "🇯🇵🇫🇷…"},
		{"a ZWJ sequence is not split before its joiner", pad + "👩‍💻x", 10, pad + "…"},
		{"a ZWJ sequence is not split after its joiner", pad + "👩‍💻x", 11, pad + "…"},
		{"a skin tone stays with its emoji", pad + "👍🏽 ok", 10, pad + "…"},
		{"a variation selector stays with its character", pad + "❤️ ok", 10, pad + "…"},
		{"a keycap stays whole", pad + "1️⃣ ok", 11, pad + "…"},
		{"a combining accent stays with its letter", pad + "e\u0301te", 10, pad + "…"},
		{"a vowel sign stays with its letter", pad + "कि ok", 10, pad + "…"},
		{"a character longer than the room is cut at a rune", "e" + strings.Repeat("\u0301", 20), 5, "e\u0301\u0301\u0301…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TruncateText(tt.s, tt.n)
			if got != tt.want {
				t.Fatalf("TruncateText(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
			if utf8.RuneCountInString(got) > tt.n {
				t.Fatalf("%d runes, more than %d", utf8.RuneCountInString(got), tt.n)
			}
		})
	}
}
