package notify

import (
	"unicode"
	"unicode/utf8"
)

// The module has no grapheme segmentation dependency: these cover the
// characters alert text carries — letters with accents or vowel signs,
// emoji sequences, flags — so that no cut shows half of one.

// ClusterStart returns byte index p of s moved back to the start of the
// character it falls in, so that a cut there splits no character from the
// marks, joiners and modifiers that follow it (é as e + U+0301, कि, 👩‍💻,
// 👩🏽‍🚀, 👍🏽, ❤️), nor a flag (🇺🇸, two regional indicators) in two: 0
// when that character starts s. p itself when it falls between
// characters.
func ClusterStart(s string, p int) int {
	for p > 0 && p < len(s) {
		r, _ := utf8.DecodeRuneInString(s[p:])
		prev, size := utf8.DecodeLastRuneInString(s[:p])
		if !joins(r) && prev != '\u200d' && !(isRegional(r) && isRegional(prev) && oddRegionalRun(s[:p])) {
			break
		}
		p -= size
	}
	return p
}

// joins reports whether r belongs to the character before it: a mark
// (spacing ones included, as the vowel sign of कि), a joiner, a variation
// selector (supplement included), a skin tone modifier or an emoji tag.
func joins(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) || r == '\u200d' || r == '\u2060' ||
		r >= 0xfe00 && r <= 0xfe0f || r >= 0xe0100 && r <= 0xe01ef || r >= 0x1f3fb && r <= 0x1f3ff || r >= 0xe0020 && r <= 0xe007f
}

// TruncateText returns plain text s (a header, a summary) in at most n
// runes, cut at a character (ClusterStart: no accent, emoji sequence or flag split),
// "…" marking the cut; s itself when it fits. A character longer than the
// room is cut at a code point.
func TruncateText(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	end := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	p := ClusterStart(s, end)
	if p == 0 {
		p = end
	}
	return s[:p] + "…"
}

// isRegional reports whether r is a regional indicator: two make a flag.
func isRegional(r rune) bool { return r >= 0x1f1e6 && r <= 0x1f1ff }

// oddRegionalRun reports whether s ends with an odd number of regional
// indicators: its last one is the first half of a flag.
func oddRegionalRun(s string) bool {
	n := 0
	for {
		r, size := utf8.DecodeLastRuneInString(s)
		if !isRegional(r) {
			return n%2 == 1
		}
		n++
		s = s[:len(s)-size]
	}
}
