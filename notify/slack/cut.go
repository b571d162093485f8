package slack

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Cutting mrkdwn. A section holds at most maxSectionText characters, a
// message's fallback text maxText. A cut at a plain character count can
// land inside what Slack reads as one unit — a link or mention <url|text>,
// <!here>, <@U…>; an escape &amp; &lt; &gt; (the router writes them for
// every "&", "<", ">" of alert data); a plain @name (link_names); a
// multi-byte character, or one with its marks, joiners and modifiers, or a
// flag — and breaks it: Slack shows "<https://…" as text
// and the link is gone, "&am" as written. A cut inside a ``` fence leaves
// the fence open, and the rest of the message renders as code. So a cut
// is made at a line break, else at a space or after a link, in the second
// half of what fits; else at the last point that splits none of those
// units. A "<" starts a link only where Slack reads one (isLinkStart): an
// operator's "p99 < 500ms" is text, and the spaces after it are places to
// cut. A fence the kept part leaves open is closed. A cut at a line break
// (splitMrkdwn) drops the break and adds no "…"; every other cut is marked
// with "…".

// fence is Slack's code block delimiter.
const fence = "```"

// cutReserve is the room a cut keeps for what it adds: "…" and a closing
// fence.
const cutReserve = 1 + len(fence)

// minPart is the fewest bytes a part cut short of a unit keeps: more than
// what splitMrkdwn puts before the next part ("```…"), so that every part
// takes something.
const minPart = 2*len(fence) + len("…")

// cutIndex returns the byte index at which to end a part of s holding at
// most n runes (s holds more), and whether the part ends at a line break
// (s[i] is that "\n", which neither part keeps). It never splits a
// <…> link or mention, an &…; escape, an @name, a run of backticks, a
// character from its marks or a flag, unless one of them is longer than
// the part (then it cuts at a character).
func cutIndex(s string, n int) (i int, line bool) {
	end := 0
	for k := 0; k < n && end < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	open, lastNL, lastGap := -1, -1, -1 // an unclosed "<" of a link or mention; the last line break and space or link end outside <…>
	for k := 0; k < end; k++ {
		switch s[k] {
		case '<':
			if isLinkStart(s[k+1:]) { // else text, as in "p99 < 500ms"
				open = k
			}
		case '>':
			if open >= 0 {
				open, lastGap = -1, k+1
			}
		case '\n':
			open, lastNL = -1, k // a link does not span lines: a "<" before is text
		case ' ', '\t':
			if open < 0 {
				lastGap = k
			}
		}
	}
	half := end / 2
	if lastNL >= half && lastNL > 0 {
		return lastNL, true
	}
	if lastGap >= half && lastGap > 0 {
		return lastGap, false
	}
	p := end
	if open > 0 {
		p = open
	}
	if a := strings.LastIndexByte(s[max(0, p-4):p], '&'); a >= 0 && p < len(s) {
		// "&amp;" is the longest escape: an "&" at most four bytes back
		// whose ";" is not yet kept.
		if a += max(0, p-4); strings.IndexByte(s[a:p], ';') < 0 {
			p = a
		}
	}
	for p > 0 && p < len(s) && s[p-1] == '`' && s[p] == '`' {
		p--
	}
	// A plain @name (or #channel) is linked whole or not at all.
	for k := p - 1; k >= 0 && k >= p-80; k-- {
		c := s[k]
		if c == '@' || c == '#' {
			p = k
			break
		}
		if !(c == '.' || c == '_' || c == '-' || c < utf8.RuneSelf && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))) {
			break
		}
	}
	// Nor is a character split from the marks, joiners and modifiers that
	// follow it (é as e + U+0301, 👩‍💻, 👍🏽, ❤️), nor a flag (🇺🇸, two
	// regional indicators) in two.
	for p > 0 && p < len(s) {
		r, _ := utf8.DecodeRuneInString(s[p:])
		prev, size := utf8.DecodeLastRuneInString(s[:p])
		if !joins(r) && prev != '\u200d' && !(isRegional(r) && isRegional(prev) && oddRegionalRun(s[:p])) {
			break
		}
		p -= size
	}
	if p <= minPart { // one unit longer than the part: cut it, at a character
		p = end
	}
	return p, false
}

// joins reports whether r belongs to the character before it.
func joins(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me) || r == '\u200d' || r == '\u2060' ||
		r >= 0xfe00 && r <= 0xfe0f || r >= 0x1f3fb && r <= 0x1f3ff || r >= 0xe0020 && r <= 0xe007f
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

// openFence reports whether s leaves a ``` code block open.
func openFence(s string) bool {
	return strings.Count(s, fence)%2 == 1
}

// truncateMrkdwn returns mrkdwn s cut to at most n runes at a safe point
// (cutIndex), "…" marking the cut, an open code block closed; s itself
// when it fits.
func truncateMrkdwn(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, _ := cutIndex(s, n-cutReserve)
	head := strings.TrimRight(s[:i], " \t\n") + "…"
	if openFence(head) {
		head += fence
	}
	return head
}

// splitMrkdwn splits mrkdwn s into at most maxParts parts of at most
// maxSectionText runes each, budget runes in all (at least one part's
// worth), each cut at a safe point (cutIndex): at a line break, the break
// dropped; else "…" ends the part and begins the next. A code block open
// at a cut is closed and opened again in the next part. What exceeds
// maxParts or budget is left out, "…" marking the cut.
func splitMrkdwn(s string, maxParts, budget int) []string {
	budget = max(budget, maxSectionText)
	var parts []string
	for {
		room := min(maxSectionText, budget)
		if len(s) <= room || utf8.RuneCountInString(s) <= room {
			return append(parts, s)
		}
		if len(parts) == maxParts-1 || budget-room < maxSectionText/10 {
			return append(parts, truncateMrkdwn(s, room))
		}
		i, line := cutIndex(s, room-cutReserve)
		head, rest := s[:i], s[i:]
		if line {
			rest = rest[1:]
		} else {
			head = strings.TrimRight(head, " \t") + "…"
			rest = "…" + strings.TrimLeft(rest, " \t")
		}
		if openFence(head) {
			head += fence
			rest = fence + rest
		}
		parts = append(parts, head)
		budget -= utf8.RuneCountInString(head)
		s = rest
	}
}
