package slack_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The fuzz targets below build what on-call reads in Slack from hostile
// alert text, through the real notifier against the stand-in (which
// refuses what Slack refuses), and check the README's promises on what it
// received: Slack's limits (50 blocks, 3,000 characters a section, about
// 12,000 in all, the notification text at most 1024 characters as
// escaped), valid UTF-8, every value from the alerts escaped (no mention,
// no link of theirs), every "&" part of an escape, and every cut marked
// "…" where it splits no escape, link or character and leaves no ```
// block open.

// Modes of FuzzSlackMessage: what is drawn.
const (
	fuzzBuiltin  = iota // the parent, built-in title and text
	fuzzTemplate        // the parent, an operator's title and text printing the alert values
	fuzzReply           // a thread reply of an update
	fuzzModes
)

// fuzzTitle and fuzzText are an operator's templates as Alertmanager's
// users write them: their own mention and a link drawn around the
// generator URL, and the alert values printed in mrkdwn.
const (
	fuzzTitle = `[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }} {{ .CommonAnnotations.summary }}`
	fuzzText  = "<!here> {{ range .Alerts }}<{{ .GeneratorURL }}|Graph> {{ .Labels.pod }}: {{ .Annotations.summary }}\n{{ .Annotations.description }}\n{{ end }}"
)

// fuzzNotification is a notification of n alerts carrying the fuzzer's
// texts: each alert's pod is label (numbered after the first), its
// description shared, or told apart by a number when differ is set (the
// lines then show it).
func fuzzNotification(summary, description, label, alertname, genURL string, n int, differ bool) *alert.Notification {
	var rs []*alert.Result
	for i := range n {
		r := notifytest.Result(alertname, "fp"+strconv.Itoa(i), "firing", alert.ActionPage)
		r.Alert.GeneratorURL = genURL
		r.Alert.Annotations["summary"] = summary
		r.Alert.Annotations["description"] = description
		if differ && i > 0 {
			r.Alert.Annotations["description"] = description + " #" + strconv.Itoa(i)
		}
		pod := label
		if i > 0 {
			pod += strconv.Itoa(i)
		}
		if pod != "" {
			r.Alert.Labels["pod"] = pod
		}
		rs = append(rs, r)
	}
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionPage, rs...)
	no.Data.GroupLabels = template.KV{"alertname": alertname}
	no.Data.CommonLabels = template.KV{"alertname": alertname, "job": "vllm"}
	return no
}

var (
	// mrkdwnLinkParts is a link or mention as Slack reads it: <target> or
	// <target|label>.
	mrkdwnLinkParts = regexp.MustCompile(`^<([^<>|]*)(?:\|([^<>|]*))?>$`)
	// builtinLinkLabels are the labels of the links the router draws.
	builtinLinkLabels = map[string]bool{"Runbook": true, "Dashboard": true, "Prometheus": true, "Alert rule": true, "Silence": true, "Console": true}
)

// shownText is one text of a message Slack received: what it is (for the
// failure), whether Slack reads it as mrkdwn, and whether it is where an
// operator's text goes.
type shownText struct {
	where  string
	text   string
	mrkdwn bool
	links  bool // a context element of the router's links
}

// shownTexts are the texts of m's blocks and its notification text.
func shownTexts(t *testing.T, m slacktest.Message) []shownText {
	t.Helper()
	var blocks []struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Text     *struct{ Type, Text string }
		Elements []struct{ Type, Text string }
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	out := []shownText{{where: "notification text", text: m.Text, mrkdwn: true}}
	for i, b := range blocks {
		where := b.Type + " block " + strconv.Itoa(i)
		if b.Text != nil {
			out = append(out, shownText{where: where, text: b.Text.Text, mrkdwn: b.Text.Type == "mrkdwn"})
		}
		for _, e := range b.Elements {
			if e.Type == "mrkdwn" || e.Type == "plain_text" {
				out = append(out, shownText{where: where + " element", text: e.Text, mrkdwn: e.Type == "mrkdwn", links: b.Type == "context" && b.BlockID == ""})
			}
		}
	}
	return out
}

// splitCluster says where a "…" of text cut one of values (as shown:
// plain, or escaped for mrkdwn) inside a character — a letter from its
// marks, an emoji sequence, a flag (notify.ClusterStart, the code's own
// segmentation) — or inside an escape: "" when none.
func splitCluster(text string, values []string) string {
	for i := 0; ; {
		j := strings.Index(text[i:], "…")
		if j < 0 {
			return ""
		}
		pre := text[:i+j]
		i += j + len("…")
		best, bestK := "", 0
		for _, v := range values {
			if k := notifytest.PrefixEnd(pre, v); k > bestK && k < len(v) {
				best, bestK = v, k
			}
		}
		if bestK == 0 || strings.HasPrefix(best[bestK:], "…") {
			continue // not a cut of a value, or the value's own "…"
		}
		if !utf8.RuneStart(best[bestK]) {
			return "a character cut at a byte: …" + strconv.Quote(pre[max(0, len(pre)-24):]) + " of " + strconv.Quote(best[max(0, bestK-24):min(len(best), bestK+24)])
		}
		if notify.ClusterStart(best, bestK) != bestK {
			return "a character split from its marks, joiner or flag half: " + strconv.Quote(best[max(0, bestK-24):min(len(best), bestK+24)]) + " cut at " + strconv.Itoa(bestK)
		}
	}
}

// checkMessage fails t with each of the README's promises m breaks.
// template says the operator's fuzzTitle and fuzzText drew it; values are
// the alert values it prints: summary, description, label, alertname and
// generator URL.
func checkMessage(t *testing.T, m slacktest.Message, tmpl bool, values []string) {
	t.Helper()
	var shown []string
	for _, v := range values {
		shown = append(shown, notify.ShowBidi(v), slack.Esc(v))
	}
	total := 0
	texts := shownTexts(t, m)
	for _, s := range texts {
		fail := func(why string) {
			t.Helper()
			t.Errorf("%s: %s\n%.600q", s.where, why, s.text)
		}
		if !utf8.ValidString(s.text) {
			fail("invalid UTF-8")
		}
		if s.where == "notification text" {
			if n := utf8.RuneCountInString(s.text); n > 1024 {
				fail("the notification text is " + strconv.Itoa(n) + " characters, over 1024")
			}
		} else {
			total += utf8.RuneCountInString(s.text)
		}
		if why := splitCluster(s.text, shown); why != "" {
			fail(why)
		}
		if !s.mrkdwn {
			continue
		}
		switch why := cutBroken(s.text); {
		case why == "":
		case why == "a code block left open" && !strings.Contains(s.text, "…"):
			// A code block the alert's own text leaves open, uncut, is
			// its own: the README promises a cut closes one.
		case why == "a link cut in half" && tmpl && len(slack.Esc(values[4])) > 2900:
			// The operator's link around a generator URL longer than a
			// section cannot be kept whole: cut at a character (known,
			// reported; the built-in links leave such a URL out).
		default:
			fail(why)
		}
		for _, l := range mrkdwnLink.FindAllString(s.text, -1) {
			p := mrkdwnLinkParts.FindStringSubmatch(l)
			switch {
			case p == nil:
				fail("a link Slack cannot read: " + l)
			case s.links && builtinLinkLabels[p[2]] && notify.WebURL(slack.Unesc(p[1])):
				// The router's own link.
			case tmpl && l == "<!here>" && strings.HasPrefix(s.text, l):
				// The operator's mention.
			case tmpl && p[2] == "Graph" && !strings.ContainsAny(p[1], "<>|"):
				// The operator's link of the generator URL.
			default:
				fail("a link or mention from alert values: " + l)
			}
		}
	}
	if total > 12000+slacktest.MaxHeaderText {
		t.Errorf("the blocks hold %d characters, over about 12,000", total)
	}
	if strings.Contains(string(m.Blocks), "Slack refused the full message") {
		t.Errorf("Slack refused the full message: the minimal one was sent")
	}
}

func FuzzSlackMessage(f *testing.F) {
	long := strings.Repeat("a", 5000)
	newlines := strings.Repeat("\n", 10000)
	gen := "http://prometheus.example.com/graph?g0.expr=up&g0.tab=1"
	for _, s := range []struct {
		summary, description, label, alertname, gen string
		n, mode                                     uint8
	}{
		{"TTFT p99 is 2.4s (SLO 1s)", "Time to first token breaches its SLO.", "api-7d9f", "TTFTHigh", gen, 1, fuzzBuiltin},
		{"👩‍👩‍👧‍👦 family 🇺🇸🇫🇷 flags 👍🏽", strings.Repeat("👩🏽‍🚀🏳️‍🌈", 400), "🇺🇸🇫🇷🇩🇪", "Emoji👩‍💻", gen, 3, fuzzBuiltin},
		{"e\u0301\u0302 combining", strings.Repeat("e\u0301\u0323", 1200), "a\u0301\u0301\u0301", "Acce\u0301nt", gen, 2, fuzzTemplate},
		{"नमस्ते दुनिया", strings.Repeat("किसी क्षेत्र ", 300), "पॉड-१", "देवनागरी", gen, 5, fuzzReply},
		{"\u202eetirw-on enon :noitca", strings.Repeat("שלום \u200f\u202b", 500), "\u2066pod\u2069", "Disk\u202eFull", gen, 1, fuzzBuiltin},
		{"&amp; &lt; &gt; fragments &am", strings.Repeat("a &amp; b &lt; c ", 250) + "&", "&lt;!channel&gt;", "&amp", gen, 7, fuzzTemplate},
		{"<!here> <!channel> <@U123>", "<http://evil.example|Runbook> <!everyone> <#C1>", "<!channel>", "<!here>", "http://x|y", 2, fuzzBuiltin},
		{"<http://x|y>", "<http://x|y>", "<http://x|y>", "<http://x|y>", "http://prom/graph?a=|b&c=<d>", 3, fuzzTemplate},
		{long, long, long, long, gen + long, 1, fuzzBuiltin},
		{long, strings.Repeat(long+" ", 6), long, long, gen, 200, fuzzReply},
		{"s", newlines, "x", "NewLines", gen, 4, fuzzBuiltin},
		{"\x00nul\x00", "bad \xff\xfe utf-8 \xc3", "\x00", "N\x00UL\xe2\x82", "http://\x00/", 2, fuzzTemplate},
		{"code ```open", "```\n" + strings.Repeat("kubectl logs x | grep y\n", 200), "`tick`", "Code```", gen, 6, fuzzBuiltin},
		{"many", "many alerts", "pod", "Storm", gen, 200, fuzzBuiltin},
		{"many", "many alerts", "pod", "Storm", gen, 200, fuzzTemplate},
	} {
		f.Add(s.summary, s.description, s.label, s.alertname, s.gen, s.n, s.mode)
	}
	f.Fuzz(func(t *testing.T, summary, description, label, alertname, genURL string, nAlerts, mode uint8) {
		summary, description, label, alertname, genURL = notifytest.AsDecoded(summary), notifytest.AsDecoded(description), notifytest.AsDecoded(label), notifytest.AsDecoded(alertname), notifytest.AsDecoded(genURL)
		if alertname == "" {
			alertname = "X" // an alert's name, as Alertmanager drops empty labels
		}
		n := int(nAlerts)%200 + 1
		differ := mode/fuzzModes%2 == 1
		h := newHarness(t)
		var mutate func(*slack.Config)
		if mode%fuzzModes == fuzzTemplate {
			mutate = func(c *slack.Config) { c.Title, c.Text = fuzzTitle, fuzzText }
		}
		ntf := h.notifier(t, mutate)
		no := fuzzNotification(summary, description, label, alertname, genURL, n, differ)
		if mode%fuzzModes == fuzzReply {
			first := fuzzNotification(summary, description, label, alertname, genURL, 1, false)
			first.Opening = true
			if err := ntf.Notify(context.Background(), first); err != nil {
				t.Fatalf("the opening: %v", err)
			}
			no.Ref = first.Ref
		} else {
			no.Opening = true
		}
		if err := ntf.Notify(context.Background(), no); err != nil {
			t.Fatalf("Notify: %v (the message is lost)\nlogs: %s", err, h.logs.String())
		}
		values := []string{summary, description, label, alertname, genURL}
		for _, m := range h.srv.Messages() {
			checkMessage(t, m, mode%fuzzModes == fuzzTemplate, values)
		}
	})
}

// An alert name of bidirectional controls (RLMs of a Hebrew or Arabic
// rule) made a notification text of 1,709 characters, over the 1024 the
// README promises "as escaped", and a pod's value on its line of 512
// (FuzzSlackMessage): the cut counted each control one character, then
// showed it as the eight of "[U+200F]". Counted as shown, both fit.
func TestBidiControlsCountAsShownInTheCuts(t *testing.T) {
	h := newHarness(t)
	rlm := strings.Repeat("\u200f", 200)
	no := fuzzNotification("s", "d", rlm, "Disk"+rlm, "http://x", 1, false)
	no.Opening = true
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	m := h.srv.Messages()[0]
	if n := utf8.RuneCountInString(m.Text); n > 1024 || !strings.Contains(m.Text, "[U+200F]…") {
		t.Errorf("notification text of %d characters, want at most 1024 with the controls shown and the cut marked: %.80q", n, m.Text)
	}
	pod := regexp.MustCompile(`pod=([^ ,·]*)`).FindStringSubmatch(string(m.Blocks))
	if pod == nil || utf8.RuneCountInString(pod[1]) > 64 {
		t.Errorf("the pod's value on the alert's line: %q, want at most 64 characters", pod)
	}
}
