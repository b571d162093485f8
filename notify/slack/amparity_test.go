package slack_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// sections returns the mrkdwn texts of message m's section blocks.
func sections(t *testing.T, m slacktest.Message) []string {
	t.Helper()
	var out []string
	for _, b := range blocksOf(t, m) {
		if b["type"] != "section" {
			continue
		}
		if tx, ok := b["text"].(map[string]any); ok {
			out = append(out, tx["text"].(string))
		}
	}
	return out
}

// withText returns the text of the first section of m that contains sub.
func withText(t *testing.T, m slacktest.Message, sub string) string {
	t.Helper()
	for _, s := range sections(t, m) {
		if strings.Contains(s, sub) {
			return s
		}
	}
	t.Fatalf("no section of the message holds %q: %q", sub, sections(t, m))
	return ""
}

// dirty returns an opening ticket whose alert carries what an alert must
// not do in Slack: a label that would notify the channel, an annotation
// that would draw a link under a trusted name, an "&" in its generator URL.
func dirty() *alert.Notification {
	no := opening("aaa")
	a := no.Results[0].Alert
	a.Labels["team"] = "<!channel>"
	a.Annotations["summary"] = "<https://evil.example|click> & more"
	a.GeneratorURL = "http://prom.example/graph?g0.expr=up&g0.tab=1"
	no.Data.Alerts[0] = a.Alert
	no.Data.CommonLabels = template.KV{"alertname": "TTFTHigh", "team": "<!channel>"}
	return no
}

// An operator's text and title are Slack mrkdwn, as in Alertmanager: its
// links and mentions reach Slack as written. What the alerts bring is
// escaped — a label "<!channel>" notifies nobody, an annotation cannot draw
// a link — wherever the template reads it (.Alerts, .CommonLabels,
// .Results), including when the operator's template fails and the built-in
// text renders instead. Before, the whole rendered text was escaped:
// "*&lt;http://…|Graph&gt;* &lt;!here&gt;".
func TestAnOperatorsTemplatesKeepTheirSlackMarkup(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) {
		c.Title = `<!here> [{{ .Status | toUpper }}] {{ .CommonLabels.team }}`
		c.Text = `*<{{ (index .Alerts 0).GeneratorURL }}|Graph>* <!here> <@U024BE7LH> team {{ .CommonLabels.team }}: {{ (index .Alerts 0).Annotations.summary }}` +
			` / {{ range .Results }}{{ .Alert.Labels.team }} {{ .Alert.Annotations.summary }}{{ end }}`
	})
	if err := n.Notify(context.Background(), dirty()); err != nil {
		t.Fatal(err)
	}
	m := h.srv.Messages()[0]
	got := withText(t, m, "Graph")
	want := "*<http://prom.example/graph?g0.expr=up&amp;g0.tab=1|Graph>* <!here> <@U024BE7LH> team &lt;!channel&gt;: &lt;https://evil.example|click&gt; &amp; more" +
		" / &lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; more"
	if got != want {
		t.Errorf("text section =\n%q\nwant\n%q", got, want)
	}
	if m.Text != "<!here> [FIRING] &lt;!channel&gt;" {
		t.Errorf("fallback text = %q, want the operator's mention kept and the label escaped", m.Text)
	}

	// A clean alert: nothing to escape, the text is the template's output.
	h = newHarness(t)
	n = h.notifier(t, func(c *slack.Config) {
		c.Text = `*<{{ (index .Alerts 0).Annotations.runbook_url }}|Runbook>* <!channel> {{ .CommonLabels.alertname }}`
	})
	if err := n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if got := withText(t, h.srv.Messages()[0], "Runbook"); got != "*<https://runbooks.example.com/ttft|Runbook>* <!channel> TTFTHigh" {
		t.Errorf("text section = %q", got)
	}

	// The operator's template fails at render time: the built-in text
	// renders instead, over the escaped data, and is not escaped again.
	h = newHarness(t)
	n = h.notifier(t, func(c *slack.Config) { c.Text = `{{ index .Alerts 5 }}` })
	no := dirty()
	no.Data.CommonAnnotations = template.KV{"description": "<!channel> & <https://evil.example|click>"}
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if got := withText(t, h.srv.Messages()[0], "click"); got != "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;" {
		t.Errorf("fallback text section = %q, want the built-in text over escaped values", got)
	}
}

// The built-in texts are still escaped whole: what they print comes from
// the alerts. (The golden files hold their drawing of clean alerts.)
func TestTheBuiltinTextIsEscapedWhole(t *testing.T) {
	h := newHarness(t)
	no := dirty()
	no.Data.CommonAnnotations = template.KV{"description": "<!channel> & <https://evil.example|click>"}
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	m := h.srv.Messages()[0]
	if got := withText(t, m, "click"); got != "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;" {
		t.Errorf("built-in text section = %q", got)
	}
	if bytes.Contains(m.Blocks, []byte(`\u003c!channel`)) {
		t.Errorf("a raw <!channel> reached Slack: %s", m.Blocks)
	}
}

// multiChannel returns a harness whose Slack knows the channels of the
// teams shop and db as well as #triage.
func multiChannel(t *testing.T) *harness {
	t.Helper()
	h := &harness{srv: slacktest.NewServer(token, "triage", "shop-alerts", "db-alerts"), waits: &notifytest.Waits{}, logs: &notifytest.SyncBuffer{}}
	t.Cleanup(h.srv.Close)
	return h
}

// teamOpening returns an opening ticket of team's alert fp.
func teamOpening(team, fp string) *alert.Notification {
	no := opening(fp)
	no.Results[0].Alert.Labels["team"] = team
	no.Data.Alerts[0] = no.Results[0].Alert.Alert
	no.Data.CommonLabels = template.KV{"alertname": "TTFTHigh", "team": team}
	return no
}

// Alertmanager renders channel with each notification's data, and
// '#{{ .CommonLabels.team }}-alerts' is common: the parent of each incident
// is posted to its rendered channel, and its replies and edits go to the
// parent's channel (its Ref) — not rendered again, not the template's text.
// Before, the template's text was sent as the channel: channel_not_found on
// every post.
func TestATemplatedChannelIsRenderedForEachIncident(t *testing.T) {
	h := multiChannel(t)
	n := h.notifier(t, func(c *slack.Config) { c.Channel = "#{{ .CommonLabels.team }}-alerts" })
	ctx := context.Background()
	shop, db := teamOpening("shop", "aaa"), teamOpening("db", "bbb")
	for _, no := range []*alert.Notification{shop, db} {
		if err := n.Notify(ctx, no); err != nil {
			t.Fatalf("Notify: %v", err)
		}
	}
	parents := h.srv.Parents()
	if len(parents) != 2 || parents[0].Channel != h.srv.ChannelID("shop-alerts") || parents[1].Channel != h.srv.ChannelID("db-alerts") {
		t.Fatalf("parents %+v, want one in #shop-alerts and one in #db-alerts", parents)
	}
	// An update and the resolve of shop's incident, whose data (no team in
	// common) would render "#-alerts": in the parent's thread and channel.
	update := under(shop.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "ccc"))
	last := under(shop.Ref, note(alert.KindResolved, alert.ActionTicket, "resolved", "aaa", "ccc"))
	last.IncidentResolved = true
	for _, no := range []*alert.Notification{update, last} {
		if err := n.Notify(ctx, no); err != nil {
			t.Fatalf("Notify: %v", err)
		}
	}
	replies := h.srv.Thread(parents[0].TS)
	if len(replies) != 2 || replies[0].Channel != parents[0].Channel || replies[1].Channel != parents[0].Channel {
		t.Fatalf("replies %+v, want two in the parent's channel", replies)
	}
	if p := h.srv.Parents()[0]; p.Updates != 1 || !bytes.Contains(p.Blocks, []byte("[RESOLVED]")) {
		t.Fatalf("shop's parent (%d updates) was not edited to resolved: %s", p.Updates, p.Blocks)
	}
	if len(h.srv.Messages()) != 4 {
		t.Fatalf("%d messages, want 2 parents and 2 replies", len(h.srv.Messages()))
	}
}

// A channel template that renders nothing for a notification fails it,
// permanently (no data fixes it on a retry), and posts nothing; a channel
// template that does not parse, or calls a template no file defines, is
// refused when the notifier is built (check-config, start).
func TestAChannelTemplateRenderingNothingFailsPermanently(t *testing.T) {
	h := multiChannel(t)
	n := h.notifier(t, func(c *slack.Config) { c.Channel = "{{ .CommonLabels.channel }}" })
	err := n.Notify(context.Background(), opening("aaa"))
	if err == nil || alert.Retryable(err) || !strings.Contains(err.Error(), "channel: the template rendered an empty channel") {
		t.Fatalf("err = %v, want a permanent failure naming the channel", err)
	}
	if len(h.srv.Messages()) != 0 {
		t.Fatalf("%d messages posted", len(h.srv.Messages()))
	}
	for _, ch := range []string{"#{{ .CommonLabels.team ", `#{{ template "team.channel" . }}`} {
		cfg := slack.DefaultConfig()
		cfg.Token, cfg.Channel, cfg.APIURL = token, ch, h.srv.APIURL()
		if _, err := slack.New(&cfg, "triage", notify.Deps{}); err == nil || !strings.HasPrefix(err.Error(), "channel: ") {
			t.Errorf("channel %q: err = %v, want it refused under channel:", ch, err)
		}
	}
}

// An incoming webhook posts to the channel rendered with the
// notification's data too, as Alertmanager's does.
func TestAnIncomingWebhookRendersItsChannel(t *testing.T) {
	s := &webhookStandIn{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := slack.DefaultConfig()
	cfg.APIURL, cfg.Channel = srv.URL+webhookPath, "#{{ .CommonLabels.team }}-alerts"
	n, err := slack.New(&cfg, "triage", notify.Deps{Retry: notify.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Notify(context.Background(), teamOpening("shop", "aaa")); err != nil {
		t.Fatal(err)
	}
	if len(s.posts) != 1 || s.posts[0]["channel"] != "#shop-alerts" {
		t.Fatalf("posts %v, want one to #shop-alerts", s.posts)
	}
}

// header returns the header text of message m.
func header(t *testing.T, m slacktest.Message) string {
	t.Helper()
	b := blocksOf(t, m)
	if len(b) == 0 || b[0]["type"] != "header" {
		t.Fatalf("message has no header: %s", m.Blocks)
	}
	return b[0]["text"].(map[string]any)["text"].(string)
}

// A new alert that pages joining a ticket's incident (a label change gave
// it a new fingerprint: no escalation of a notified alert) is an update
// louder than the parent, which says [TICKET] without Acknowledge and
// Resolve: the parent is redrawn as the page, the same way as for an
// escalation, once — its Ref, which the dispatch core keeps, now says so.
// Before, only the thread said "Decision: page".
func TestAPageJoiningATicketsIncidentRedrawsTheParent(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) {
		c.SigningSecret = "s3cret"
		c.Actions = slack.TriageActions{Names: []string{slack.ActionAck, slack.ActionEscalate, slack.ActionResolve}}
	})
	ctx := context.Background()
	first := opening("aaa")
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	p := h.srv.Parents()[0]
	if !strings.HasSuffix(first.Ref, " ticket") || parentOf(first.Ref) != ref(p) {
		t.Fatalf("Ref = %q, want the parent %q drawn as a ticket", first.Ref, ref(p))
	}
	// A ticket joining: the parent stays as it is.
	if err := n.Notify(ctx, under(first.Ref, note(alert.KindFiring, alert.ActionTicket, "firing", "bbb"))); err != nil {
		t.Fatal(err)
	}
	if p := h.srv.Parents()[0]; p.Updates != 0 {
		t.Fatalf("a ticket joining redrew the parent (%d updates)", p.Updates)
	}
	// The page joins: not Escalated (nothing was notified of its alert).
	page := under(first.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "ccc"))
	if err := n.Notify(ctx, page); err != nil {
		t.Fatal(err)
	}
	p = h.srv.Parents()[0]
	if p.Updates != 1 || !strings.HasPrefix(header(t, p), "[PAGE]") || !bytes.Contains(p.Blocks, []byte("alertrouter:ack")) || !bytes.Contains(p.Blocks, []byte("alertrouter:resolve")) {
		t.Fatalf("after the page joined, the parent (%d updates, header %q) = %s; want it redrawn as the page with Acknowledge and Resolve", p.Updates, header(t, p), p.Blocks)
	}
	if page.Ref != ref(p) {
		t.Fatalf("Ref = %q, want %q: the parent now says page", page.Ref, ref(p))
	}
	if replies := h.srv.Thread(p.TS); len(replies) != 2 || !bytes.Contains(replies[1].Blocks, []byte("*Decision:* page")) {
		t.Fatalf("thread replies %d, want the update of the page too", len(replies))
	}
	// More pages under the Ref the core kept: no further redraw.
	if err := n.Notify(ctx, under(page.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "ddd"))); err != nil {
		t.Fatal(err)
	}
	if got := h.srv.Calls("chat.update"); got != 1 {
		t.Fatalf("chat.update called %d times, want once", got)
	}
}

// A Ref without a decision — a page's, or one an older router wrote — is
// read as a page: an update never redraws it for being a page. A redraw
// that fails leaves the Ref as it was, so the next update tries again.
func TestARefWithoutADecisionReadsAsAPage(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	ctx := context.Background()
	first := opening("aaa")
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	old := parentOf(first.Ref)
	up := under(old, note(alert.KindFiring, alert.ActionPage, "firing", "bbb"))
	if err := n.Notify(ctx, up); err != nil {
		t.Fatal(err)
	}
	if got := h.srv.Calls("chat.update"); got != 0 || up.Ref != old {
		t.Fatalf("chat.update called %d times, Ref %q; want none and %q", got, up.Ref, old)
	}

	// A redraw Slack refuses is logged, the reply stands, and the Ref still
	// says ticket: the next page redraws it.
	h = newHarness(t)
	n = h.notifier(t, nil)
	first = opening("aaa")
	if err := n.Notify(ctx, first); err != nil {
		t.Fatal(err)
	}
	h.srv.Fail(slacktest.Fault{Error: "cant_update_message"}) // the edit, made before the reply
	page := under(first.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "bbb"))
	if err := n.Notify(ctx, page); err != nil {
		t.Fatal(err)
	}
	if p := h.srv.Parents()[0]; p.Updates != 0 || page.Ref != first.Ref || len(h.srv.Thread(p.TS)) != 1 {
		t.Fatalf("refused redraw: %d updates, Ref %q, %d replies; want 0, %q kept, 1", p.Updates, page.Ref, len(h.srv.Thread(p.TS)), first.Ref)
	}
	again := under(page.Ref, note(alert.KindFiring, alert.ActionPage, "firing", "ccc"))
	if err := n.Notify(ctx, again); err != nil {
		t.Fatal(err)
	}
	if p := h.srv.Parents()[0]; p.Updates != 1 || !strings.HasPrefix(header(t, p), "[PAGE]") || again.Ref != ref(p) {
		t.Fatalf("the next page: %d updates, header %q, Ref %q; want the parent redrawn", p.Updates, header(t, p), again.Ref)
	}
}

// An alert's generatorURL printed inside an operator's link (the README's
// `<{{ .GeneratorURL }}|Graph>`): a "|" in it started the label, so the
// alert chose what the link said ("Acknowledge in PagerDuty"). A URL holds
// no literal "|": it is percent-encoded, the same address.
func TestAGeneratorURLCannotRelabelAnOperatorsLink(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) {
		c.Text = `<{{ (index .Alerts 0).GeneratorURL }}|Graph>`
	})
	no := dirty()
	no.Results[0].Alert.GeneratorURL = "https://evil.example/login|Acknowledge in PagerDuty"
	no.Data.Alerts[0] = no.Results[0].Alert.Alert
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	got := withText(t, h.srv.Messages()[0], "Graph")
	if got != "<https://evil.example/login%7CAcknowledge in PagerDuty|Graph>" {
		t.Errorf("text section = %q, want the generatorURL's | encoded, the operator's label kept", got)
	}
}

// An annotation that is a URL, drawn inside an operator's link
// (`<{{ .Annotations.runbook_url }}|Runbook>`): a "|" in it ended the URL,
// so the link opened the runbook's address cut at the "|" and read as the
// rest of the value. Like generatorURL, its "|" is percent-encoded; a text
// annotation that merely begins with an address keeps its "|".
func TestAnAnnotationURLCannotRelabelAnOperatorsLink(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) {
		c.Text = `<{{ (index .Alerts 0).Annotations.runbook_url }}|Runbook> {{ (index .Alerts 0).Annotations.note }} <http://am/#/silences/new?filter=%7Bsource%3D%22{{ (index .Alerts 0).Labels.source | urlquery }}%22%7D|Silence>`
	})
	no := dirty()
	no.Results[0].Alert.Annotations = map[string]string{
		"runbook_url": "https://runbooks.example/db?a=1|b=2",
		"note":        "https://status.example is down | see the runbook",
	}
	// A label is what a silence matches: a template's silence link quotes
	// it raw (urlquery), so a label that is a URL keeps its "|".
	no.Results[0].Alert.Labels["source"] = "https://ci.example/job?a=1|b=2"
	no.Data.Alerts[0] = no.Results[0].Alert.Alert
	if err := n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	got := withText(t, h.srv.Messages()[0], "Runbook")
	if got != "<https://runbooks.example/db?a=1%7Cb=2|Runbook> https://status.example is down | see the runbook <http://am/#/silences/new?filter=%7Bsource%3D%22https%3A%2F%2Fci.example%2Fjob%3Fa%3D1%7Cb%3D2%22%7D|Silence>" {
		t.Errorf("text section = %q, want the runbook URL's | encoded, the note's kept, the label quoted raw", got)
	}
}
