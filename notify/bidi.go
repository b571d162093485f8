package notify

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// IsBidiControl reports whether r is a bidirectional-text control (the
// embeddings, overrides and isolates U+202A–202E and U+2066–2069, and the
// marks LRM, RLM and ALM): shown as written, it reorders what follows it.
func IsBidiControl(r rune) bool {
	return '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069' || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// HasBidi reports whether s holds a bidirectional-text control. Every
// Slack text escaped and every operator template's value asks: each
// control's UTF-8 encoding starts with 0xE2 (U+200E–U+2069) or 0xD8
// (U+061C), so a text without either byte — nearly all — is answered by
// two vectorized byte searches, not a rune-by-rune decode.
func HasBidi(s string) bool {
	if strings.IndexByte(s, 0xe2) < 0 && strings.IndexByte(s, 0xd8) < 0 {
		return false
	}
	return strings.ContainsFunc(s, IsBidiControl)
}

// ShowBidi returns s with each bidirectional-text control shown as
// "[U+202E]", so that text from an alert cannot display as something it is
// not — "DiskFull \u202eetirw-on enon :noitca" as "DiskFull action: none
// no-write", or reverse the router's own words around it in a Slack card or
// a PagerDuty summary (an audit). For what is shown only: never an incident
// key, a dedup key or a label a silence matches.
func ShowBidi(s string) string {
	if !HasBidi(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if IsBidiControl(r) {
			fmt.Fprintf(&b, "[U+%04X]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TruncateShown is TruncateText of ShowBidi(s) whose cut splits no shown
// control: a cut inside "[U+200F]" left "[U+20…" on a header or a
// PagerDuty summary (a fuzz audit), so it falls before the control.
func TruncateShown(s string, n int) string {
	shown := ShowBidi(s)
	t := TruncateText(shown, n)
	if len(shown) == len(s) || t == shown {
		return t
	}
	p := len(t) - len("…")
	// The shown controls' spans: each control of s became 8 bytes.
	at := 0
	for _, r := range s {
		if at >= p {
			break
		}
		w := utf8.RuneLen(r)
		if IsBidiControl(r) {
			w = len("[U+202E]")
			if p < at+w {
				return shown[:at] + "…"
			}
		}
		at += w
	}
	return t
}

// UnshowBidi reverses ShowBidi: each "[U+XXXX]" naming a bidirectional-text
// control becomes the control (a key copied from a message Slack showed it
// in, typed back into a command).
func UnshowBidi(s string) string {
	if !strings.Contains(s, "[U+") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "[U+")
		if i < 0 || len(s) < i+8 || s[i+7] != ']' {
			b.WriteString(s)
			return b.String()
		}
		r, err := strconv.ParseUint(s[i+3:i+7], 16, 32)
		if err != nil || !IsBidiControl(rune(r)) {
			b.WriteString(s[:i+3])
			s = s[i+3:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteRune(rune(r))
		s = s[i+8:]
	}
}
