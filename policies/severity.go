package policies

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/alertrouter/alertrouter/routing/alert"
)

// dropFormat drops Unicode format characters (category Cf: zero-width
// space, zero-width joiner, byte-order mark, soft hyphen …), which NFKC
// keeps; strings.Map with it allocates nothing when there are none.
func dropFormat(r rune) rune {
	if unicode.Is(unicode.Cf, r) {
		return -1
	}
	return r
}

// severityKey returns a severity value as the severity tables are keyed:
// trimmed and lower-cased. Text with a non-ASCII character is first rid of
// format characters and NFKC-normalised, so that "critical\u200b" (a
// zero-width space pasted along) and full-width "ｃｒｉｔｉｃａｌ" read as
// critical; ASCII text, the common case, costs no allocation when it is
// already lower-case.
func severityKey(v string) string {
	s := strings.TrimSpace(v)
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return normalizeSeverity(s)
		}
		upper = upper || 'A' <= c && c <= 'Z'
	}
	if !upper {
		return s
	}
	return strings.ToLower(s)
}

func normalizeSeverity(s string) string {
	return strings.ToLower(strings.TrimSpace(norm.NFKC.String(strings.Map(dropFormat, s))))
}

// normKeys returns m keyed by severityKey, as the values looked up in it.
func normKeys(m map[string]alert.Action) map[string]alert.Action {
	out := make(map[string]alert.Action, len(m))
	for k, v := range m {
		out[severityKey(k)] = v
	}
	return out
}

// maxSeverityParts bounds the parts of a compound severity ("P1-Critical",
// "1 - Critical", "critical/page"): real ones have two or three.
const maxSeverityParts = 4

// isSeveritySeparator reports whether c separates the parts of a compound
// severity.
func isSeveritySeparator(c byte) bool {
	switch c {
	case ' ', '\t', '-', '_', '/', '|', ':', ',', ';', '(', ')', '[', ']':
		return true
	}
	return false
}

// severityParts splits key at separators into at most maxSeverityParts
// parts, as [start, end) offsets into key; ok is false when there are more.
func severityParts(key string) (spans [maxSeverityParts][2]int, n int, ok bool) {
	for i := 0; i < len(key); {
		for i < len(key) && isSeveritySeparator(key[i]) {
			i++
		}
		j := i
		for j < len(key) && !isSeveritySeparator(key[j]) {
			j++
		}
		if j > i {
			if n == maxSeverityParts {
				return spans, n, false
			}
			spans[n] = [2]int{i, j}
			n++
		}
		i = j
	}
	return spans, n, true
}

// negation reports whether a part of a compound severity negates the rest
// ("non-critical", "not critical", "no page"): such a value is never read
// as the severity it negates, whatever the table holds.
func negation(part string) bool {
	switch part {
	case "no", "non", "not", "never", "without":
		return true
	}
	return false
}

// severityPart is one part of a compound severity and its action ("" when
// the part is not a severity).
type severityPart struct {
	word   string
	action alert.Action
}

// compoundSeverity reads a severity made of two or more parts, each a word
// of the table or a whole number, that all name the same action:
// "P1-Critical", "1 - Critical", "critical/page" page; "P3-Critical"
// (ticket and page) is not recognised, nor is anything with a part that is
// not a severity ("page-me") or that negates ("non-critical",
// "not-critical"; "noncritical" is one word that the table does not have).
// Two adjacent parts that make a word of the table together are one part
// ("SEV 2 / warning": sev2 and warning). parts[:n] are the parts read, for
// the reason of a value that is not recognised. It allocates nothing.
func (e *Engine) compoundSeverity(key string) (act alert.Action, parts [maxSeverityParts]severityPart, n int, ok bool) {
	spans, m, fits := severityParts(key)
	if !fits || m < 2 {
		return "", parts, 0, false
	}
	for i := 0; i < m; i++ {
		w := key[spans[i][0]:spans[i][1]]
		if negation(w) {
			parts[n] = severityPart{word: w}
			return "", parts, n + 1, false
		}
		var a alert.Action
		known := false
		if i+1 < m {
			if a, known = e.joinedWord(w, key[spans[i+1][0]:spans[i+1][1]]); known {
				w = key[spans[i][0]:spans[i+1][1]]
				i++
			}
		}
		if !known {
			a, known = e.severityWord(w)
		}
		parts[n] = severityPart{word: w, action: a}
		n++
		if !known {
			return "", parts, n, false
		}
	}
	for i := 1; i < n; i++ {
		if parts[i].action != parts[0].action {
			return "", parts, n, false
		}
	}
	return parts[0].action, parts, n, true
}

// withoutSeparators looks up s without "-", "_" and spaces (SEV-1 → sev1,
// P_0 → p0, "sev 2" → sev2), without allocating.
func (e *Engine) withoutSeparators(s string) (alert.Action, bool) {
	if !strings.ContainsAny(s, "-_ ") {
		return "", false
	}
	var buf [64]byte
	w := buf[:0]
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '-', '_', ' ':
		default:
			if len(w) == len(buf) {
				return "", false
			}
			w = append(w, c)
		}
	}
	a, ok := e.severity[string(w)]
	return a, ok
}

// joinedWord looks up the word a and b make together (sev + 2, p + 1)
// without allocating.
func (e *Engine) joinedWord(a, b string) (alert.Action, bool) {
	var buf [32]byte
	if len(a)+len(b) > len(buf) {
		return "", false
	}
	w := append(append(buf[:0], a...), b...)
	act, ok := e.severity[string(w)]
	return act, ok
}

// severityWord maps one word of the table or a whole number.
func (e *Engine) severityWord(w string) (alert.Action, bool) {
	if a, ok := e.severity[w]; ok {
		return a, true
	}
	if n, ok := severityNumber(w); ok {
		return e.numberAction(n), true
	}
	return "", false
}

// severityNumber reads a whole number ≥ 0: digits ("3", "+3"), or digits
// with a fraction of zeros only ("3.0", "1.00": a template's printf of a
// numeric level). "1.5" and "-1" are not severities.
func severityNumber(s string) (int, bool) {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		frac := s[i+1:]
		if frac == "" || strings.Trim(frac, "0") != "" {
			return 0, false
		}
		s = s[:i]
	}
	s = strings.TrimPrefix(s, "+")
	if s == "" || len(s) > 18 { // 18 digits fit an int64
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// numberAction maps a numeric severity (1 = most severe).
func (e *Engine) numberAction(n int) alert.Action {
	switch {
	case n <= e.sevNums.Page:
		return alert.ActionPage
	case n <= e.sevNums.Ticket:
		return alert.ActionTicket
	}
	return alert.ActionNone
}

// severityOfKey maps a severity key (severityKey): a word of the table, as
// it is or without "-", "_" and spaces (SEV-1, P_0); else a whole number (1
// = most severe, 3.0 as 3); else a compound of words and numbers that agree
// (compoundSeverity). The common values cost one map lookup.
func (e *Engine) severityOfKey(s string) (alert.Action, bool) {
	if a, ok := e.severity[s]; ok {
		return a, true
	}
	if a, ok := e.withoutSeparators(s); ok {
		return a, true
	}
	if n, ok := severityNumber(s); ok {
		return e.numberAction(n), true
	}
	if a, _, _, ok := e.compoundSeverity(s); ok {
		return a, true
	}
	return "", false
}

// unrecognisedWhy says why a compound severity value (its severityKey) is not recognised,
// for the note that names it: " (its parts disagree: p3 → ticket, critical
// → page)", " (\"non\" negates it)"; "" for any other value.
func (e *Engine) unrecognisedWhy(key string) string {
	_, parts, n, _ := e.compoundSeverity(key)
	if n == 0 {
		return ""
	}
	last := parts[n-1]
	if last.action == "" {
		if negation(last.word) {
			return " (" + quoteWord(last.word) + " negates it)"
		}
		return " (" + quoteWord(last.word) + " is not a severity)"
	}
	var b strings.Builder
	b.WriteString(" (its parts disagree: ")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(parts[i].word + " → " + string(parts[i].action))
	}
	b.WriteString(")")
	return b.String()
}

func quoteWord(w string) string { return `"` + w + `"` }
