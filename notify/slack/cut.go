package slack

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alertrouter/alertrouter/notify"
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
// with "…", and a section's cut says how much it left out too
// (truncateNoted).

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
	// follow it, nor a flag in two (notify.ClusterStart).
	p = notify.ClusterStart(s, p)
	if p <= minPart { // one unit longer than the part: cut it, at a character
		p = end
	}
	return p, false
}

// openFence reports whether s leaves a ``` code block open.
func openFence(s string) bool {
	return strings.Count(s, fence)%2 == 1
}

// truncateMrkdwn returns mrkdwn s cut to at most n runes at a safe point
// (cutIndex), "…" marking the cut, an open code block closed; s itself
// when it fits.
func truncateMrkdwn(s string, n int) string {
	return cutMrkdwn(s, n, false)
}

// truncateNoted is truncateMrkdwn whose mark says how much the cut left
// out, where n leaves room for it (at least ten times the note): "… (41,230
// more characters)" — characters as shown, an escape counting one. The
// sections of a message are cut so (section, splitMrkdwn): a 50 KB
// description cut to a few thousand characters says it was.
func truncateNoted(s string, n int) string {
	return cutMrkdwn(s, n, true)
}

// cutMrkdwn is truncateMrkdwn, with the note of truncateNoted when noted.
func cutMrkdwn(s string, n int, noted bool) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	// The longest note s can need (what is left out is shorter than s), so
	// that the note written after the cut fits.
	room := len(cutNote(utf8.RuneCountInString(s)))
	if !noted || n < 10*room {
		room = 0
	}
	i, _ := cutIndex(s, n-cutReserve-room)
	head := strings.TrimRight(s[:i], " \t\n") + "…"
	if openFence(head) {
		head += fence
	}
	if room > 0 {
		head += cutNote(shownLen(s[i:]))
	}
	return head
}

// cutNote says how many characters a cut left out: " (41,230 more
// characters)" (ASCII: its length in bytes is its length in runes).
func cutNote(n int) string {
	return " (" + thousands(n) + " more characters)"
}

// shownLen is the number of characters mrkdwn s shows: its runes, each
// escape (&amp; &lt; &gt;) counting one.
func shownLen(s string) int {
	return utf8.RuneCountInString(s) - (len("&amp;")-1)*strings.Count(s, "&amp;") -
		(len("&lt;")-1)*(strings.Count(s, "&lt;")+strings.Count(s, "&gt;"))
}

// thousands formats n with a comma between thousands: 41,230.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// splitMrkdwn splits mrkdwn s into at most maxParts parts of at most
// maxSectionText runes each, budget runes in all (at least one part's
// worth), each cut at a safe point (cutIndex): at a line break, the break
// dropped; else "…" ends the part and begins the next. A code block open
// at a cut is closed and opened again in the next part. What exceeds
// maxParts or budget is left out, "…" and how much marking the cut
// (truncateNoted).
func splitMrkdwn(s string, maxParts, budget int) []string {
	budget = max(budget, maxSectionText)
	var parts []string
	for {
		room := min(maxSectionText, budget)
		if len(s) <= room || utf8.RuneCountInString(s) <= room {
			return append(parts, s)
		}
		if len(parts) == maxParts-1 || budget-room < maxSectionText/10 {
			return append(parts, truncateNoted(s, room))
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
