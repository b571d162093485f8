package notify

import (
	"unicode/utf8"

	amnotify "github.com/prometheus/alertmanager/notify"
)

// TruncateInRunes is Alertmanager's notify.TruncateInRunes (the same
// result: at most n runes, the last one "…" when cut) without its cost for
// the strings that fit, nearly all of them: Alertmanager's converts every
// string to a []rune first, an allocation of four bytes per character on
// every call.
func TruncateInRunes(s string, n int) (string, bool) {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	return amnotify.TruncateInRunes(s, n)
}
