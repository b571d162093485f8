package slack

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// entity matches what Slack reads as one unit in mrkdwn: a <…> link or
// mention, an escape, a code fence.
var (
	wholeLink  = regexp.MustCompile(`<[^<>\n]*>`)
	wholeEsc   = regexp.MustCompile(`&(amp|lt|gt);`)
	splitGlyph = regexp.MustCompile("\u0301|\u200d|\U0001f3fd|\ufe0f") // a mark, a joiner, a modifier a cut left first

	regionalIndicators = "🇦🇧🇨🇩🇪🇫🇬🇭🇮🇯🇰🇱🇲🇳🇴🇵🇶🇷🇸🇹🇺🇻🇼🇽🇾🇿"

	// cutNoteText is the note a section's cut adds after its mark
	// (truncateNoted).
	cutNoteText = regexp.MustCompile(` \(\d[\d,]* more characters\)$`)
)

// brokenMrkdwn says what of part a cut broke, "" when nothing: a "<" or
// ">" outside a whole link, an "&" outside a whole escape, a code block
// left open, half a character or a character's mark without it, an @name
// cut short (names: the whole names the text holds).
func brokenMrkdwn(part string, names ...string) string {
	part = cutNoteText.ReplaceAllString(part, "") // what follows the mark: the part as cut ends before it
	if !utf8.ValidString(part) {
		return "half a character"
	}
	rest := wholeLink.ReplaceAllString(part, "")
	if strings.ContainsAny(rest, "<>") {
		return "a link cut in half"
	}
	if strings.Contains(wholeEsc.ReplaceAllString(part, ""), "&") {
		return "an escape cut in half"
	}
	if openFence(part) {
		return "a code block left open"
	}
	// A part after the first begins with "…" or a fence the cut added: the
	// mark would follow them.
	if loc := splitGlyph.FindStringIndex(strings.TrimPrefix(strings.TrimPrefix(part, fence), "…")); loc != nil && loc[0] == 0 {
		return "a mark without its character"
	}
	if body := strings.TrimSuffix(strings.TrimSuffix(part, fence), "…"); utf8.RuneCountInString(body[len(strings.TrimRight(body, regionalIndicators)):])%2 == 1 {
		return "a flag cut in half"
	}
	if strings.HasSuffix(strings.TrimSuffix(strings.TrimSuffix(part, fence), "…"), "\u200d") {
		return "a joiner without what it joins"
	}
	for _, n := range names {
		for i := 1; i < len(n); i++ {
			if strings.HasSuffix(strings.TrimSuffix(part, "…"), n[:i]) {
				return "a name cut short: " + n[:i]
			}
		}
	}
	return ""
}

// cutCases are mrkdwn texts over one section whose units a cut at a plain
// character count would split, at every offset across the limit.
func cutCases() map[string]func(pad int) string {
	return map[string]func(pad int) string{
		// The rahul template: a runbook link per alert, "&" escaped in it.
		"links": func(pad int) string {
			var b strings.Builder
			b.WriteString(strings.Repeat("p", pad))
			for i := 0; b.Len() < 4000; i++ {
				fmt.Fprintf(&b, "*Summary:* Host out of disk space (instance node-%02d.prod:9100) 📖 <https://grafana.example.com/d/node?var-instance=node-%02d&amp;orgId=1|Runbook> ", i, i)
			}
			return b.String()
		},
		// The built-in text escaped whole: escapes with no space to cut at.
		"escapes": func(pad int) string {
			return strings.Repeat("x", 2990+pad%12) + strings.Repeat("&amp;&lt;&gt;", 20)
		},
		// A description with a code block across the limit.
		"fence": func(pad int) string {
			return strings.Repeat("word ", 500+pad) + "see ```kubectl -n vllm logs deploy/vllm | grep -i ttft" + strings.Repeat(" x", 400) + "``` done"
		},
		// Multi-byte characters, marks and emoji sequences, no spaces.
		"characters": func(pad int) string {
			return strings.Repeat("y", pad) + strings.Repeat("üß漢e\u0301👩\u200d💻👍\U0001f3fd❤\ufe0f", 400)
		},
		// Flags, two regional indicators each.
		"flags": func(pad int) string {
			return strings.Repeat("y", pad) + strings.Repeat("🇺🇸", 2000)
		},
		// An operator's @name (link_names) where the cut falls.
		"name": func(pad int) string {
			return strings.Repeat("z", 2980+pad%25) + "@oncall-team" + strings.Repeat("z", 100)
		},
	}
}

// A cut of a section (and of the fallback text) never splits a link, an
// escape, a character or a name, nor leaves a code block open; "…" marks
// it. Before, the cut fell at 2999 characters whatever was there:
// "<https://grafana.example.com/d/node?var-instanc…", "…prod:9100&am…",
// "… a ```code…" (the rest of the message rendered as code).
func TestTruncateMrkdwnKeepsUnitsWhole(t *testing.T) {
	for name, text := range cutCases() {
		for pad := range 60 {
			s := text(pad)
			got := truncateMrkdwn(s, maxSectionText)
			if n := utf8.RuneCountInString(got); n > maxSectionText || n < maxSectionText/2 {
				t.Fatalf("%s/%d: %d runes, want at most %d (and not half of it lost)", name, pad, n, maxSectionText)
			}
			if !strings.HasSuffix(strings.TrimSuffix(got, fence), "…") {
				t.Fatalf("%s/%d: the cut is not marked: …%q", name, pad, tail(got))
			}
			if why := brokenMrkdwn(got, "@oncall-team"); why != "" {
				t.Fatalf("%s/%d: %s: …%q", name, pad, why, tail(got))
			}
			// What the cut left out does not begin with a mark of the last
			// character kept (brokenMrkdwn sees only the part kept).
			kept := strings.TrimSuffix(strings.TrimSuffix(got, fence), "…")
			if loc := splitGlyph.FindStringIndex(s[len(kept):]); strings.HasPrefix(s, kept) && loc != nil && loc[0] == 0 {
				t.Fatalf("%s/%d: a mark cut from its character: …%q|%q", name, pad, tail(kept), s[len(kept):len(kept)+8])
			}
			// A section's cut says how much it left out, and cuts alike.
			noted := truncateNoted(s, maxSectionText)
			if n := utf8.RuneCountInString(noted); n > maxSectionText || n < maxSectionText/2 || !cutNoteText.MatchString(noted) {
				t.Fatalf("%s/%d: noted cut of %d runes: …%q", name, pad, n, tail(noted))
			}
			if why := brokenMrkdwn(noted, "@oncall-team"); why != "" {
				t.Fatalf("%s/%d: noted: %s: …%q", name, pad, why, tail(noted))
			}
			if section(s).Text.Text != noted {
				t.Fatalf("%s/%d: section cuts otherwise", name, pad)
			}
		}
	}
	if s := strings.Repeat("a", maxSectionText); truncateMrkdwn(s, maxSectionText) != s {
		t.Fatal("a text that fits was cut")
	}
}

func tail(s string) string {
	if len(s) < 60 {
		return s
	}
	return s[len(s)-60:]
}

// squeeze is s without what splitMrkdwn adds or drops at a cut: the marks,
// fences and white space.
func squeeze(s string) string {
	return strings.NewReplacer("…", "", fence, "", " ", "", "\n", "", "\t", "").Replace(s)
}

// A long text is split over sections at safe points — a line break where
// there is one — and nothing of it is lost while it fits maxParts sections
// and the budget; each part keeps its units whole and a code block open
// at a cut is closed in one part and opened again in the next.
func TestSplitMrkdwn(t *testing.T) {
	for name, text := range cutCases() {
		for pad := range 30 {
			s := text(pad)
			parts := splitMrkdwn(s, 3, 3*maxSectionText)
			for i, p := range parts {
				if n := utf8.RuneCountInString(p); n > maxSectionText || n == 0 {
					t.Fatalf("%s/%d: part %d has %d runes", name, pad, i, n)
				}
				if why := brokenMrkdwn(p, "@oncall-team"); why != "" {
					t.Fatalf("%s/%d: part %d: %s: …%q", name, pad, i, why, tail(p))
				}
			}
			if utf8.RuneCountInString(s) < 2*maxSectionText && squeeze(strings.Join(parts, "")) != squeeze(s) {
				t.Fatalf("%s/%d: the parts do not hold the text: %q", name, pad, parts)
			}
		}
	}

	// Lines: cut at a line break, which neither part keeps, no "…".
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("• *HostOutOfDiskSpace* node-%02d.prod:9100 <https://grafana.example.com/d/node?var-instance=node-%02d&amp;orgId=1|Runbook>", i, i))
	}
	parts := splitMrkdwn(strings.Join(lines, "\n"), 5, 100000)
	if len(parts) < 2 || strings.Join(parts, "\n") != strings.Join(lines, "\n") {
		t.Fatalf("%d parts, not the lines split at line breaks: %q", len(parts), parts)
	}

	// A code block across a line break: closed, then opened again.
	code := "```\n" + strings.Repeat("log line of the vllm server\n", 150) + "```"
	parts = splitMrkdwn(code, 3, 100000)
	if len(parts) != 2 || !strings.HasSuffix(parts[0], fence) || !strings.HasPrefix(parts[1], fence) {
		t.Fatalf("code block split as %q", parts)
	}

	// Over the parts or the budget: the last part is cut with "…" and says
	// how much it left out.
	long := strings.Repeat("word ", 4000)
	for _, tc := range []struct{ parts, budget, want int }{{2, 100000, 2}, {5, 6500, 3}, {5, 100, 1}} {
		parts = splitMrkdwn(long, tc.parts, tc.budget)
		if last := parts[len(parts)-1]; len(parts) != tc.want || !strings.HasSuffix(cutNoteText.ReplaceAllString(last, ""), "…") || !cutNoteText.MatchString(last) {
			t.Errorf("%d parts, budget %d: %d parts ending %q, want %d cut with … and a note", tc.parts, tc.budget, len(parts), tail(last), tc.want)
		}
		if n := utf8.RuneCountInString(strings.Join(parts, "")); n > max(tc.budget, maxSectionText) {
			t.Errorf("%d parts, budget %d: %d runes", tc.parts, tc.budget, n)
		}
	}
}

// An update's digest cuts each summary as written and escapes it after:
// a cut of the escaped summary left "&" of "&lt;" raw ("…qqq &…"). The
// digest line stays within maxDigestSummary as shown.
func TestEscTruncated(t *testing.T) {
	for pad := range 12 {
		s := strings.Repeat("q", 190+pad) + " <= 1% & rising"
		got := escTruncated(s, maxDigestSummary)
		if why := brokenMrkdwn(got); why != "" || utf8.RuneCountInString(got) > maxDigestSummary {
			t.Fatalf("%d: %q: %s, %d runes", pad, tail(got), why, utf8.RuneCountInString(got))
		}
	}
	if got := escTruncated("a < b & c", 200); got != "a &lt; b &amp; c" {
		t.Fatalf("a short summary: %q", got)
	}
	if got := escTruncated(strings.Repeat("&", 100), 12); got != "&amp;&amp;…" {
		t.Fatalf("escapes: %q", got)
	}
	// A summary is cut after its last whole word that fits: a cut word
	// ("schedule" of "scheduler") reads as a word of its own.
	summary := "vLLM queue on the llama-3-70b scheduler has grown past 400 waiting requests"
	if got := escTruncated(summary, 32); got != "vLLM queue on the llama-3-70b…" {
		t.Errorf("a cut summary: %q, want it cut after a whole word", got)
	}
	if got := escTruncated("a "+strings.Repeat("x", 40), 20); got != "a "+strings.Repeat("x", 17)+"…" {
		t.Errorf("a long word: %q, want it cut at a character (a word would keep too little)", got)
	}
}

// With link_names on, an "@" within an http(s) address in alert data is
// left as it is — Slack links the address, and an invisible character
// would change it — while every "@" that could link a name gets the word
// joiner, a URL with a space in it included.
func TestMentionSafeTextLeavesURLsAlone(t *testing.T) {
	j := wordJoiner
	for in, want := range map[string]string{
		"see https://runbooks.example.com/@here/x":                                  "see https://runbooks.example.com/@here/x",
		"login https://user:pw@host.example/x then @here":                           "login https://user:pw@host.example/x then @" + j + "here",
		"npm (https://www.npmjs.com/package/@scope/x), ask @oncall":                 "npm (https://www.npmjs.com/package/@scope/x), ask @" + j + "oncall",
		"HTTPS://HOST/@user":                                                        "HTTPS://HOST/@user",
		"<https://evil.example/|@here>":                                             "<https://evil.example/|@" + j + "here>",
		"https://x.example/ @here":                                                  "https://x.example/ @" + j + "here",
		"see https://x.example/a,@channel":                                          "see https://x.example/a,@channel",
		"xhttps://x.example/@here":                                                  "xhttps://x.example/@" + j + "here",
		"ftp://x.example/@here":                                                     "ftp://x.example/@" + j + "here",
		"see https://x.example/é@here":                                              "see https://x.example/é@" + j + "here",
		"kibana https://kibana.example/app/discover#/?_a=(sort:!(@timestamp,desc))": "kibana https://kibana.example/app/discover#/?_a=(sort:!(@timestamp,desc))",
		"https://x.example/a,@here":                                                 "https://x.example/a,@here", // a whole URL, as before
		"@channel https://grafana.example.com/d/x?var-user=@me @every":              "@" + j + "channel https://grafana.example.com/d/x?var-user=@me @" + j + "every",
		"https://grafana.example.com/d/x@y":                                         "https://grafana.example.com/d/x@y",
		"@":                                                                         "@" + j,
	} {
		if got := mentionSafeText(in); got != want {
			t.Errorf("mentionSafeText(%q) = %q, want %q", in, got, want)
		}
	}
}

// A "<" that starts no link or mention — an operator's "p99 < 500ms" — is
// text: the spaces after it are places to cut. Before, every space after
// it stopped counting, and the cut fell at the "<": 17 of 3,000 runes
// kept ("*Threshold:* p99…"), and a split made a 17-rune first section.
// A "<" that starts a link still keeps it whole.
func TestCutAfterAPlainLessThan(t *testing.T) {
	s := "*Threshold:* p99 < 500ms. " + strings.Repeat("word ", 1000)
	if got := truncateMrkdwn(s, maxSectionText); utf8.RuneCountInString(got) < maxSectionText-10 {
		t.Errorf("kept %d of %d runes: %q", utf8.RuneCountInString(got), maxSectionText, tail(got))
	}
	if parts := splitMrkdwn(s, 3, 3*maxSectionText); utf8.RuneCountInString(parts[0]) < maxSectionText-10 {
		t.Errorf("first part of %d runes: %q", utf8.RuneCountInString(parts[0]), parts[0])
	}
	for _, link := range []string{"<https://grafana.example.com/d/x|Graph>", "<!here>", "<@U123ABC>", "<#C123|ops>", "<mailto:ops@example.com|ops>"} {
		for pad := range 40 {
			s := strings.Repeat("x", 2950+pad) + link + strings.Repeat(" y", 100)
			if got := truncateMrkdwn(s, maxSectionText); brokenMrkdwn(got) != "" {
				t.Fatalf("%s/%d: %s: …%q", link, pad, brokenMrkdwn(got), tail(got))
			}
		}
	}
	for in, want := range map[string]bool{"!here>": true, "@U1>": true, "#C1>": true, "https://x>": true, "HTTP://x": true, "mailto:a@b": true, " 500ms": false, "= 1%": false, "b": false, "": false, "httpx": false} {
		if got := isLinkStart(in); got != want {
			t.Errorf("isLinkStart(%q) = %v, want %v", in, got, want)
		}
	}
}

// A summary cut in a thread reply's digest closes the code block it leaves
// open, within maxDigestSummary: before, every line after it rendered as
// code. So does a fence that falls at the cut.
func TestDigestCutClosesFence(t *testing.T) {
	for _, sum := range []string{
		"TTFT high, run ```kubectl -n vllm logs deploy/vllm " + strings.Repeat("x", 250) + "```",
		strings.Repeat("y", 196) + "```code``` and more text after it to cut",
		strings.Repeat("y", 190) + "```code``` and more text after it to cut",
		"```" + strings.Repeat("&", 100) + "```",
	} {
		var rs []*alert.Result
		for i := range 3 {
			r := notifytest.Result("TTFTHigh", fmt.Sprint("fp", i), "firing", alert.ActionTicket)
			r.Alert.Annotations["summary"] = sum
			rs = append(rs, r)
		}
		blocks, _ := UpdateBlocks(notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, rs...))
		for i, line := range strings.Split(blocks[0].(*sl.SectionBlock).Text.Text, "\n")[1:] {
			got := line[strings.Index(line, " — ")+len(" — "):]
			if openFence(got) || utf8.RuneCountInString(got) > maxDigestSummary {
				t.Errorf("digest line %d: %d runes, code block open %v: %q", i, utf8.RuneCountInString(got), openFence(got), got)
			}
		}
	}
}

// The built-in notification text is escaped within maxText runes: cut and
// then escaped, a title of "&"s was five times as long.
func TestFallbackTextWithinMaxText(t *testing.T) {
	for _, s := range []string{strings.Repeat("a&b ", 500), strings.Repeat("<", 2000), strings.Repeat("é", 2000)} {
		got := fallbackText(s)
		if n := utf8.RuneCountInString(got); n > maxText || n < maxText/2 || !strings.HasSuffix(got, "…") || brokenMrkdwn(got) != "" {
			t.Errorf("fallback text of %d runes (at most %d), %q: …%q", n, maxText, brokenMrkdwn(got), tail(got))
		}
	}
	if got := fallbackText("Update of a<b: 1 firing"); got != "Update of a&lt;b: 1 firing" {
		t.Errorf("a short text: %q", got)
	}
}

// With link_names on, an address ends at a quote and at a mrkdwn
// formatting character that could close bold, italics or strikethrough:
// an "@" after them gets the word joiner, while an address that goes on
// past a "_" (Kibana's ?_a=…) keeps its "@"s.
func TestMentionSafeTextEndsAddressAtQuotesAndFormatting(t *testing.T) {
	j := wordJoiner
	for in, want := range map[string]string{
		`see https://x.example/"@channel`:                        `see https://x.example/"@` + j + "channel",
		"see https://x.example/'@channel":                        "see https://x.example/'@" + j + "channel",
		"*https://x.example/*@channel":                           "*https://x.example/*@" + j + "channel",
		"`https://x.example/`@channel":                           "`https://x.example/`@" + j + "channel",
		"_https://x.example/_@channel":                           "_https://x.example/_@" + j + "channel",
		"~https://x.example/~,@channel":                          "~https://x.example/~,@" + j + "channel",
		"see https://kibana.example/app#/?_a=(sort:!(@ts,desc))": "see https://kibana.example/app#/?_a=(sort:!(@ts,desc))",
		"see https://x.example/a_b/@user":                        "see https://x.example/a_b/@user",
	} {
		if got := mentionSafeText(in); got != want {
			t.Errorf("mentionSafeText(%q) = %q, want %q", in, got, want)
		}
	}
}
