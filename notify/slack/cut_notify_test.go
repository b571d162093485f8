package slack_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/slack"
)

var (
	mrkdwnLink   = regexp.MustCompile(`<[^<>\n]*>`)
	mrkdwnEscape = regexp.MustCompile(`&(amp|lt|gt);`)
)

// cutBroken says what a cut broke in mrkdwn s, "" when nothing: a link
// or an escape cut in half, a code block left open.
func cutBroken(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "half a character"
	case strings.ContainsAny(mrkdwnLink.ReplaceAllString(s, ""), "<>"):
		return "a link cut in half"
	case strings.Contains(mrkdwnEscape.ReplaceAllString(s, ""), "&"):
		return "an escape cut in half"
	case strings.Count(s, "```")%2 == 1:
		return "a code block left open"
	}
	return ""
}

// rahulText is the text of rahulreddy0120/prom-alerting-rules-framework's
// Slack template (alertmanager/templates/slack.tmpl): each alert's summary
// and its runbook as a link of the template.
const rahulText = `{{ range .Alerts }}*Alert:* {{ .Labels.alertname }} - ` + "`{{ .Labels.severity }}`" + `
*Summary:* {{ .Annotations.summary }}
📖 <{{ .Annotations.runbook_url }}|Runbook>
{{ end }}`

// A template whose text outgrows a section — thirty alerts, each with its
// runbook link (an "&" in it) — reaches Slack over several sections, cut
// at line breaks: every link of the template whole, every "&" escaped
// whole, nothing of the text lost. Before, the text was cut at 3000
// characters wherever that fell: "📖 <https://grafana.example.com/d/node?var-instanc…"
// (the link gone) or "…prod:9100&am…".
func TestALongTemplateTextIsSplitNotBroken(t *testing.T) {
	for _, pad := range []int{18, 48, 0, 7} {
		t.Run(fmt.Sprint(pad), func(t *testing.T) {
			h := newHarness(t)
			n := h.notifier(t, func(c *slack.Config) { c.Text = rahulText })
			var fps []string
			for i := range 30 {
				fps = append(fps, fmt.Sprintf("fp%02d", i))
			}
			no := opening(fps...)
			for i, r := range no.Results {
				r.Alert.Labels["alertname"] = "HostOutOfDiskSpace"
				r.Alert.Annotations["summary"] = fmt.Sprintf("Host out of disk space (instance node-%02d%s.prod:9100)", i, strings.Repeat("p", pad))
				r.Alert.Annotations["runbook_url"] = fmt.Sprintf("https://grafana.example.com/d/node?var-instance=node-%02d&orgId=1", i)
			}
			if err := n.Notify(context.Background(), no); err != nil {
				t.Fatalf("Notify: %v", err)
			}
			var text []string
			for _, s := range sections(t, h.srv.Messages()[0]) {
				if why := cutBroken(s); why != "" {
					t.Fatalf("a section has %s: …%q", why, s[max(0, len(s)-80):])
				}
				if strings.Contains(s, "*Summary:*") {
					text = append(text, s)
				}
			}
			joined := strings.Join(text, "\n")
			if len(text) < 2 || strings.Count(joined, "|Runbook>") != 30 || !strings.Contains(joined, "var-instance=node-29&amp;orgId=1|Runbook>") {
				t.Fatalf("the text in %d sections, %d runbook links, want all 30: %q", len(text), strings.Count(joined, "|Runbook>"), text)
			}
		})
	}
}

// The built-in text is escaped whole; cut, it keeps its escapes whole and
// closes the code block a description opened (before: "… & more" cut to
// "&…", and "… a ```code…" rendered the rest of the message as code).
func TestTheBuiltInTextCutKeepsEscapesAndFences(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("x", 2997) + " & more", // the audit's case, as one word
		strings.Repeat("x", 2990) + strings.Repeat("&<>", 30),
		strings.Repeat("TTFT p99 breaches its SLO. ", 110) + "Run ```kubectl logs deploy/vllm | grep ttft" + strings.Repeat(" x", 3000) + "```",
	} {
		no := opening("aaa")
		for _, b := range slack.Blocks(no, notify.NewData(no), "title", text, "") {
			s, ok := b.(*sl.SectionBlock)
			if !ok || s.Text == nil {
				continue
			}
			if utf8.RuneCountInString(s.Text.Text) > 3000 {
				t.Fatalf("a section of %d runes", utf8.RuneCountInString(s.Text.Text))
			}
			if why := cutBroken(s.Text.Text); why != "" {
				t.Fatalf("a section has %s: …%q", why, s.Text.Text[max(0, len(s.Text.Text)-40):])
			}
		}
	}
}

// A long text takes the sections the message's size leaves it, at most
// three, and the alerts the rest ("…and N more"): Slack takes the
// message.
func TestALongTextKeepsTheMessageWithinSlacksLimits(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) { c.Text = strings.Repeat("{{ .CommonLabels.alertname }} is slow\n", 2000) })
	no := opening("aaa", "bbb", "ccc")
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatalf("Notify: %v (Slack refused the message)", err)
	}
	total, texts := 0, 0
	for _, s := range sections(t, h.srv.Messages()[0]) {
		total += utf8.RuneCountInString(s)
		if strings.HasPrefix(s, "TTFTHigh is slow") || strings.HasPrefix(s, "…") {
			texts++
		}
	}
	if texts != 3 || total > 12000 {
		t.Fatalf("%d sections of text, %d characters in all; want 3 within 12000", texts, total)
	}
}

// A thread reply's line per alert cuts the summary as written and escapes
// it after (before: "…qqq &…", the "&" of "&lt;" left raw).
func TestTheDigestCutKeepsEscapesWhole(t *testing.T) {
	for pad := range 10 {
		no := opening("aaa")
		no.Results[0].Alert.Annotations["summary"] = strings.Repeat("q", 192+pad) + " <= 1% & rising"
		blocks, _ := slack.UpdateBlocks(no)
		s := blocks[0].(*sl.SectionBlock).Text.Text
		if why := cutBroken(s); why != "" {
			t.Fatalf("digest line has %s: …%q", why, s[len(s)-20:])
		}
	}
}

// The fallback text (notifications) of an operator's title is cut as
// mrkdwn too: the title's own link is kept whole or left out.
func TestTheFallbackTextCutKeepsLinksWhole(t *testing.T) {
	for pad := range 8 {
		h := newHarness(t)
		n := h.notifier(t, func(c *slack.Config) {
			c.Title = strings.Repeat("y", 1000+pad) + " <https://grafana.example.com/d/ttft?orgId=1&var-x=1|Graph> & {{ .CommonLabels.alertname }}"
		})
		if err := n.Notify(context.Background(), opening("aaa")); err != nil {
			t.Fatal(err)
		}
		text := h.srv.Messages()[0].Text
		if why := cutBroken(text); why != "" || utf8.RuneCountInString(text) > 1024 {
			t.Fatalf("fallback text (%d runes) has %s: …%q", utf8.RuneCountInString(text), why, text[len(text)-40:])
		}
	}
}

// With link_names on, an address in an annotation reaches Slack as written
// — before, "https://runbooks.example.com/@here/x" got an invisible
// U+2060 after its "@", and the link Slack drew from it led elsewhere —
// while a plain "@here" next to it still links no one.
func TestLinkNamesLeavesAddressesInTextAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*slack.Config)
	}{
		{"operator text", func(c *slack.Config) {
			c.LinkNames = true
			c.Text = "{{ range .Alerts }}{{ .Annotations.description }}{{ end }}"
		}},
		{"built-in text", func(c *slack.Config) { c.LinkNames = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			n := h.notifier(t, tc.cfg)
			no := opening("aaa")
			no.Results[0].Alert.Annotations["description"] = "@here target down, see https://runbooks.example.com/@here/x and https://www.npmjs.com/package/@scope/x"
			no.Data.CommonAnnotations["description"] = no.Results[0].Alert.Annotations["description"]
			if err := n.Notify(context.Background(), no); err != nil {
				t.Fatal(err)
			}
			all := strings.Join(messageTexts(t, h.srv.Messages()[0]), "\n")
			for _, want := range []string{"https://runbooks.example.com/@here/x", "https://www.npmjs.com/package/@scope/x", "@\u2060here target down"} {
				if !strings.Contains(all, want) {
					t.Errorf("the message lacks %q: %s", want, all)
				}
			}
			if strings.Contains(all, "/@\u2060") {
				t.Errorf("a word joiner inside an address: %q", all)
			}
			// Outside the addresses, nothing pings.
			urls := strings.NewReplacer("https://runbooks.example.com/@here/x", "", "https://www.npmjs.com/package/@scope/x", "")
			for _, s := range messageTexts(t, h.srv.Messages()[0]) {
				if p := pingable.FindString(urls.Replace(s)); p != "" {
					t.Errorf("%s would ping: %q", p, s)
				}
			}
		})
	}
}
