package notify

import "unicode/utf8"

// Ellipsis ends every truncated text.
const Ellipsis = "…"

// Truncate returns s cut to at most n runes, ending with Ellipsis when it
// was cut, and whether it was.
func Truncate(s string, n int) (string, bool) {
	if n <= 0 {
		return "", s != ""
	}
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + Ellipsis, true
}
