package slack_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"
	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/slack"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// mixinAlert is an alert as the kubernetes-mixin and node-mixin rules fire
// it: labels and annotations as Prometheus sends them, decided ticket.
func mixinAlert(fp string, labels, annotations map[string]string) *alert.Result {
	r := notifytest.Result(labels["alertname"], fp, "firing", alert.ActionTicket)
	r.Alert.Labels = template.KV(labels)
	r.Alert.Annotations = template.KV(annotations)
	return r
}

// crashLooping is kubernetes-mixin's KubePodCrashLooping for pod, as
// kube-state-metrics (whose instance is the exporter's) reports it.
func crashLooping(pod string) *alert.Result {
	return mixinAlert("fp-"+pod, map[string]string{
		"alertname": "KubePodCrashLooping", "cluster": "prod-eu", "container": "api", "endpoint": "http",
		"instance": "10.2.0.17:8080", "job": "kube-state-metrics", "namespace": "shop", "pod": pod,
		"reason": "CrashLoopBackOff", "service": "kube-state-metrics", "severity": "warning",
	}, map[string]string{
		"summary":     "Pod is crash looping.",
		"description": fmt.Sprintf("Pod shop/%s (api) is in waiting state (reason: \"CrashLoopBackOff\") on cluster prod-eu.", pod),
		"runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping",
	})
}

// fillingUp is node-mixin's NodeFilesystemSpaceFillingUp on host.
func fillingUp(host string) *alert.Result {
	return mixinAlert("fp-"+host, map[string]string{
		"alertname": "NodeFilesystemSpaceFillingUp", "device": "/dev/nvme0n1p1", "fstype": "ext4",
		"instance": host + ":9100", "job": "node-exporter", "mountpoint": "/var/lib/docker", "severity": "warning",
	}, map[string]string{
		"summary":     "Filesystem is predicted to run out of space within the next 24 hours.",
		"description": fmt.Sprintf("Filesystem on /dev/nvme0n1p1, mounted on /var/lib/docker, at %s:9100 has only 9.5%% available space left and is filling up.", host),
	})
}

// containerWaiting is kubernetes-mixin's KubeContainerWaiting for batch
// worker i.
func containerWaiting(i int) *alert.Result {
	pod := fmt.Sprintf("worker-%03d", i)
	return mixinAlert("fp-"+pod, map[string]string{
		"alertname": "KubeContainerWaiting", "container": "worker", "instance": "10.2.0.17:8080",
		"job": "kube-state-metrics", "namespace": "batch", "pod": pod, "severity": "warning",
	}, map[string]string{
		"summary":     "Pod container waiting longer than 1 hour",
		"description": fmt.Sprintf("pod/%s in namespace batch on container worker has been in waiting state for longer than 1 hour. (reason: \"ContainerCreating\") on cluster .", pod),
	})
}

// alertLines returns the text of each alert section of blocks.
func alertLines(blocks []sl.Block) []string {
	var out []string
	for _, b := range blocks {
		if s, ok := b.(*sl.SectionBlock); ok && strings.HasPrefix(s.BlockID, "alert-") {
			out = append(out, s.Text.Text)
		}
	}
	return out
}

// digestLines returns the alert lines of a thread reply's digest.
func digestLines(no *alert.Notification) []string {
	blocks, _ := slack.UpdateBlocks(no)
	lines := strings.Split(blocks[0].(*sl.SectionBlock).Text.Text, "\n")
	return lines[1:]
}

// Each alert's line says which alert fires: the values of the labels that
// tell the message's alerts apart (alertname left out: it is the line's
// title) and, when they share one summary, each one's description. Before,
// three crash-looping pods read "*KubePodCrashLooping* · firing · ticket ·
// `…`\nPod is crash looping." three times, told apart by fingerprint only.
func TestEachAlertLineSaysWhichAlertFires(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []*alert.Result
		// want[i] are what the line of alert i says, notWant what no line
		// says.
		want    [][]string
		notWant []string
	}{
		{
			name:    "three crash-looping pods",
			results: []*alert.Result{crashLooping("api-7d9f-x2x"), crashLooping("api-7d9f-k8q"), crashLooping("api-7d9f-zz1")},
			want: [][]string{
				{"pod=api-7d9f-x2x", "Pod shop/api-7d9f-x2x (api) is in waiting state"},
				{"pod=api-7d9f-k8q", "Pod shop/api-7d9f-k8q (api) is in waiting state"},
				{"pod=api-7d9f-zz1", "Pod shop/api-7d9f-zz1 (api) is in waiting state"},
			},
			notWant: []string{"alertname=", "Pod is crash looping.", "namespace=", "instance="},
		},
		{
			name:    "a filesystem filling up on two hosts",
			results: []*alert.Result{fillingUp("node-a"), fillingUp("node-b")},
			want: [][]string{
				{"instance=node-a:9100", "at node-a:9100 has only 9.5% available space left"},
				{"instance=node-b:9100", "at node-b:9100 has only 9.5% available space left"},
			},
			notWant: []string{"alertname=", "run out of space within the next 24 hours", "mountpoint="},
		},
		{
			// One alert: where it fires, kube-state-metrics' own address
			// left out.
			name:    "one crash-looping pod",
			results: []*alert.Result{crashLooping("api-7d9f-x2x")},
			want:    [][]string{{"pod=api-7d9f-x2x, namespace=shop, container=api, cluster=prod-eu", "Pod is crash looping."}},
			notWant: []string{"instance=", "is in waiting state"},
		},
		{
			name:    "one filesystem",
			results: []*alert.Result{fillingUp("node-a")},
			want:    [][]string{{"instance=node-a:9100, mountpoint=/var/lib/docker, device=/dev/nvme0n1p1, job=node-exporter", "run out of space"}},
		},
		{
			// A rule aggregating the instance away: its line showed the
			// cluster alone (an audit); the consumer group and topic say
			// what lags.
			name: "one aggregated Kafka lag",
			results: []*alert.Result{mixinAlert("fp-lag", map[string]string{
				"alertname": "KafkaConsumerGroupLagHigh", "cluster": "prod-eu1", "consumergroup": "clickstream-enricher", "topic": "clicks",
				"severity": "warning", "team": "data",
			}, map[string]string{"summary": "Lag above 10k."})},
			want:    [][]string{{"cluster=prod-eu1, consumergroup=clickstream-enricher, topic=clicks", "Lag above 10k."}},
			notWant: []string{"team=", "severity="},
		},
		{
			// A line naming its object (an instance) stays as it was: a
			// first build filled it with condition=, reason= (a review).
			name: "one certificate on an instance",
			results: []*alert.Result{mixinAlert("fp-cert", map[string]string{
				"alertname": "CertManagerCertNotReady", "instance": "10.0.0.7:9402", "job": "cert-manager", "name": "inference-tls", "condition": "False",
			}, map[string]string{"summary": "Certificate not ready."})},
			want:    [][]string{{"instance=10.0.0.7:9402, job=cert-manager", "Certificate not ready."}},
			notWant: []string{"condition=", "name="},
		},
		{
			// Alerts of different names on one pod: their names tell them
			// apart, their labels say where.
			name:    "two alerts of one pod",
			results: []*alert.Result{crashLooping("api-7d9f-x2x"), renamed(crashLooping("api-7d9f-x2x"), "KubeContainerWaiting")},
			want: [][]string{
				{"*KubePodCrashLooping* · pod=api-7d9f-x2x, namespace=shop"},
				{"*KubeContainerWaiting* · pod=api-7d9f-x2x, namespace=shop"},
			},
			notWant: []string{"alertname="},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, tc.results...)
			no.Opening = true
			card := alertLines(slack.Blocks(no, notify.NewData(no), "title", "", ""))
			digest := digestLines(no)
			for what, lines := range map[string][]string{"card": card, "thread reply": digest} {
				if len(lines) != len(tc.want) {
					t.Fatalf("%s: %d alert lines, want %d: %q", what, len(lines), len(tc.want), lines)
				}
				for i, line := range lines {
					for _, w := range tc.want[i] {
						if !strings.Contains(line, w) {
							t.Errorf("%s: line %d lacks %q: %q", what, i, w, line)
						}
					}
					for _, nw := range tc.notWant {
						if strings.Contains(line, nw) {
							t.Errorf("%s: line %d says %q: %q", what, i, nw, line)
						}
					}
				}
			}
		})
	}
}

func renamed(r *alert.Result, alertname string) *alert.Result {
	r.Alert.Labels["alertname"] = alertname
	r.Alert.Fingerprint += "-" + alertname
	return r
}

// A label value is cut and escaped on the line: a long one does not take
// the line, and "<!channel>" notifies nobody.
func TestAlertLineLabelValuesAreCutAndEscaped(t *testing.T) {
	a, b := crashLooping("api-1"), crashLooping("api-2")
	a.Alert.Labels["pod"] = "<!channel> " + strings.Repeat("p", 500)
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, a, b)
	for _, line := range append(alertLines(slack.Blocks(no, notify.NewData(no), "title", "", "")), digestLines(no)...) {
		if strings.Contains(line, "<!channel>") || strings.Contains(line, strings.Repeat("p", 100)) {
			t.Errorf("a label value uncut or unescaped: %q", line)
		}
	}
	if line := alertLines(slack.Blocks(no, notify.NewData(no), "title", "", ""))[0]; !strings.Contains(line, "pod=&lt;!channel&gt; ppp") || !strings.Contains(line, "p…") {
		t.Errorf("the value is not shown escaped and cut: %q", line)
	}
}

// A backtick in a label value or an alertname is shown as ˋ on the alert's
// line, in the card and the thread's digest: it paired with the
// fingerprint's code span that follows and put the rest of the line in
// code (a review).
func TestAlertLineBackticksLeaveTheFingerprintsCodeSpanWhole(t *testing.T) {
	a, b := crashLooping("api-1"), crashLooping("api-2")
	a.Alert.Labels["pod"] = "api`1"
	a.Alert.Labels["alertname"] = "Crash`Looping"
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, a, b)
	for _, line := range append(alertLines(slack.Blocks(no, notify.NewData(no), "title", "", "")), digestLines(no)...) {
		if !strings.Contains(line, "api-2") && (!strings.Contains(line, "apiˋ1") || !strings.Contains(line, "CrashˋLooping")) {
			t.Errorf("the backticks are not shown as ˋ: %q", line)
		}
		if n := strings.Count(line, "`"); n != 2 {
			t.Errorf("%d backticks on the line, want the fingerprint's 2: %q", n, line)
		}
	}
}

// 150 KubeContainerWaiting alerts: the card, each line longer now, still
// fits Slack's limits (the stand-in enforces them), says how many alerts it
// leaves out, and each line it shows names its pod and describes it; the
// thread reply of the same alerts stays one section of ten lines and the
// count of the rest.
func TestManyAlertsWithTheirLabelsFitOneMessage(t *testing.T) {
	var rs []*alert.Result
	for i := range 150 {
		rs = append(rs, containerWaiting(i))
	}
	h := newHarness(t)
	no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, rs...)
	no.Opening = true
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if strings.Contains(h.logs.String(), "Slack refused") {
		t.Fatalf("Slack refused the card:\n%s", h.logs.String())
	}
	shown, more, total := 0, 0, 0
	for _, b := range blocksOf(t, h.srv.Messages()[0]) {
		id, _ := b["block_id"].(string)
		switch {
		case strings.HasPrefix(id, "alert-"):
			text := b["text"].(map[string]any)["text"].(string)
			pod := fmt.Sprintf("worker-%03d", shown)
			if !strings.Contains(text, "pod="+pod) || !strings.Contains(text, "pod/"+pod+" in namespace batch") {
				t.Errorf("line %d does not name and describe %s: %q", shown, pod, text)
			}
			shown++
			total += utf8.RuneCountInString(text)
		case strings.HasPrefix(id, "more-"):
			text := b["elements"].([]any)[0].(map[string]any)["text"].(string)
			if _, err := fmt.Sscanf(text, "…and %d more", &more); err != nil {
				t.Fatalf("the more line reads %q", text)
			}
		}
	}
	if shown < 10 || shown+more != 150 || total > slacktest.MaxMessageText {
		t.Fatalf("%d alerts shown (%d characters) and %d said to be more, want all 150 accounted for", shown, total, more)
	}

	blocks, _ := slack.UpdateBlocks(no)
	text := blocks[0].(*sl.SectionBlock).Text.Text
	if len(blocks) != 1 || utf8.RuneCountInString(text) > slacktest.MaxSectionText || !strings.HasSuffix(text, "…and 140 more") ||
		!strings.Contains(text, "pod=worker-009") || !strings.Contains(text, "pod/worker-009 in namespace batch") {
		t.Fatalf("the reply (%d runes): %q", utf8.RuneCountInString(text), text)
	}
}

// Long label values and descriptions do not push a thread reply's ten
// lines and "…and N more" out of its one section.
func TestADigestOfLongLabelsFitsOneSection(t *testing.T) {
	var rs []*alert.Result
	for i := range 12 {
		r := containerWaiting(i)
		for _, name := range []string{"pod", "namespace", "container", "instance"} {
			r.Alert.Labels[name] = strings.Repeat("&", 70) + strconv.Itoa(i)
		}
		r.Alert.Annotations["description"] = strings.Repeat("a<b ", 300) + strconv.Itoa(i)
		rs = append(rs, r)
	}
	blocks, _ := slack.UpdateBlocks(notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, rs...))
	text := blocks[0].(*sl.SectionBlock).Text.Text
	if n := utf8.RuneCountInString(text); n > slacktest.MaxSectionText || !strings.HasSuffix(text, "…and 2 more") || cutBroken(text) != "" {
		t.Fatalf("the reply (%d runes, %s): %q", n, cutBroken(text), text)
	}
}

// The header and a reply's summary are cut at a character: an astronaut
// of another skin tone (👩🏽‍🚀) or a family (👨‍👩‍👧‍👦) is kept whole or left
// out, never cut to 👩🏽 or 👨‍👩 (README: every cut splits no emoji
// sequence, no flag). Before, both cut by code points.
func TestHeaderAndReplyCutsKeepCharactersWhole(t *testing.T) {
	whole := regexp.MustCompile("(👩🏽‍🚀|👨‍👩‍👧‍👦|🇺🇦|कि)+…$")
	for _, glyph := range []string{"👩🏽‍🚀", "👨‍👩‍👧‍👦", "🇺🇦", "कि"} {
		for pad := range 8 {
			long := strings.Repeat("x", pad) + strings.Repeat(glyph, 300)
			no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, notifytest.Result("TTFTHigh", "aaa", "firing", alert.ActionTicket))
			no.Results[0].Alert.Annotations["summary"] = long

			header := slack.Blocks(no, notify.NewData(no), long, "", "")[0].(*sl.HeaderBlock).Text.Text
			if utf8.RuneCountInString(header) > slacktest.MaxHeaderText || !whole.MatchString(header) {
				t.Errorf("%s/%d: header cut inside a character: …%q", glyph, pad, lastRunes(header, 8))
			}
			if header := slack.MinimalBlocks(no, long, "")[0].(*sl.HeaderBlock).Text.Text; !whole.MatchString(header) {
				t.Errorf("%s/%d: minimal header cut inside a character: …%q", glyph, pad, lastRunes(header, 8))
			}
			line := digestLines(no)[0]
			if !whole.MatchString(line) {
				t.Errorf("%s/%d: reply summary cut inside a character: …%q", glyph, pad, lastRunes(line, 8))
			}
		}
	}
}

func lastRunes(s string, n int) string {
	r := []rune(s)
	return string(r[max(0, len(r)-n):])
}

// A description too long for the card is cut saying how much was left out
// (before: "…" alone, after some 8,600 of 50,000 characters).
func TestALongTextSaysWhatItsCutLeftOut(t *testing.T) {
	h := newHarness(t)
	no := opening("aaa")
	desc := strings.Repeat("The consumer group lags behind its partitions. ", 1100) // ~51,700 characters
	no.Results[0].Alert.Annotations["description"] = desc
	no.Data.CommonAnnotations["description"] = desc
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	note := regexp.MustCompile(`… \(([\d,]+) more characters\)$`)
	shown, left := 0, -1
	for _, s := range sections(t, h.srv.Messages()[0]) {
		if !strings.Contains(s, "consumer group") {
			continue
		}
		shown += utf8.RuneCountInString(strings.Trim(s, "…"))
		if m := note.FindStringSubmatch(s); m != nil {
			left, _ = strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		}
	}
	// What the note says is left out is what the sections did not show
	// (within the notes' and marks' few characters).
	if want := len(desc) - shown; left < want-100 || left > want+100 {
		t.Fatalf("the text's cut says %d characters are left out, want about %d", left, want)
	}
}

// A title template that fails to render is rendered, and logged, once per
// message: before, the header and the fallback text each rendered it, and
// each logged the failure.
func TestAFailingTitleIsRenderedOnce(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, func(c *slack.Config) { c.Title = `{{ (index .Alerts 99).Labels.alertname }}` })
	if err := n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(h.logs.String(), "field=title"); got != 1 {
		t.Fatalf("the title's failure logged %d times, want once:\n%s", got, h.logs.String())
	}
	// The built-in title stands in, in the header and the fallback text.
	m := h.srv.Messages()[0]
	if header := blocksOf(t, m)[0]["text"].(map[string]any)["text"].(string); !strings.HasPrefix(header, "[TICKET] TTFTHigh") || !strings.HasPrefix(m.Text, "[TICKET] TTFTHigh") {
		t.Fatalf("header %q, text %q: want the built-in title", header, m.Text)
	}
}

// A parent whose text fills the message still lists its alerts: a 10 KB
// description took the room, and alerts of 5,000-character summaries were
// each left out whole — the parent listed none of them, "…and 2 more" (an
// audit). The text leaves room for the first alerts' lines, and a line
// longer than the room left is cut to it.
func TestALongTextLeavesRoomForTheAlerts(t *testing.T) {
	h := newHarness(t)
	no := opening("aaa", "bbb")
	desc := strings.Repeat("Checkout requests fail at the payment gateway. ", 220) // ~10,300 characters
	no.Data.CommonAnnotations["description"] = desc
	for _, r := range no.Results {
		r.Alert.Annotations["description"] = desc
		r.Alert.Annotations["summary"] = strings.Repeat("The gateway answers 502. ", 200) // 5,000 characters
	}
	if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.logs.String(), "Slack refused") {
		t.Fatalf("Slack refused the card:\n%s", h.logs.String())
	}
	shown, total := 0, 0
	for _, b := range blocksOf(t, h.srv.Messages()[0]) {
		if t, ok := b["text"].(map[string]any); ok {
			total += utf8.RuneCountInString(t["text"].(string))
		}
		if id, _ := b["block_id"].(string); strings.HasPrefix(id, "alert-") {
			shown++
		}
	}
	if shown == 0 || total > slacktest.MaxMessageText {
		t.Fatalf("the parent lists %d alert lines in %d characters; want at least one within %d", shown, total, slacktest.MaxMessageText)
	}
}
