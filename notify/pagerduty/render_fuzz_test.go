package pagerduty_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// clusterCut says where a "…" ending summary cut value inside a character
// (a letter from its marks, an emoji sequence, a flag: notify.ClusterStart,
// the code's own segmentation), "" when it did not.
func clusterCut(summary string, values []string) string {
	pre, ok := strings.CutSuffix(summary, "…")
	if !ok {
		return ""
	}
	for _, v := range values {
		v = notify.ShowBidi(v)
		if k := notifytest.PrefixEnd(pre, v); k > 0 && k < len(v) && notify.ClusterStart(v, k) != k && !strings.HasPrefix(v[k:], "…") {
			return "cut at " + strconv.Itoa(k) + " of " + strconv.Quote(v[max(0, k-24):min(len(v), k+24)])
		}
	}
	return ""
}

// What PagerDuty is sent for any alert text (README, PagerDuty rows): one
// trigger, whatever the text — never refused (a 400 retried as the minimal
// event says less), never over 512 KB (shrunk, not dropped) —, its summary
// at most 1024 characters cut at a character, its dedup_key at most 255,
// valid UTF-8 throughout (a cut inside a character reaches PagerDuty as
// "\ufffd").
func FuzzPagerDutyEvent(f *testing.F) {
	long := strings.Repeat("a", 5000)
	gen := "http://prometheus.example.com/graph?g0.expr=up&g0.tab=1"
	for _, s := range []struct {
		summary, description, label, alertname, gen string
		n                                           uint8
	}{
		{"TTFT p99 is 2.4s (SLO 1s)", "Time to first token breaches its SLO.", "api-7d9f", "TTFTHigh", gen, 1},
		{strings.Repeat("👩‍👩‍👧‍👦🇺🇸", 200), strings.Repeat("👩🏽‍🚀🏳️‍🌈", 400), strings.Repeat("🇺🇸", 100), "Emoji👩‍💻", gen, 3},
		{strings.Repeat("e\u0301\u0323", 600), strings.Repeat("e\u0301\u0323", 1200), strings.Repeat("a\u0301", 200), "Acce\u0301nt", gen, 2},
		{strings.Repeat("नमस्ते दुनिया ", 100), strings.Repeat("किसी क्षेत्र ", 300), strings.Repeat("पॉड", 100), "देवनागरी", gen, 5},
		{strings.Repeat("\u202eetirw-on ", 200), strings.Repeat("שלום \u200f\u202b", 500), "\u2066pod\u2069", "Disk\u202eFull", gen, 1},
		{"&amp; &lt; &gt; fragments &am", strings.Repeat("<a> & \"b\" ", 2000), "<!channel>", "<!here>", "http://x|y", 7},
		{long, long, long, long, gen + long, 200},
		{"s", strings.Repeat("\n", 10000), "x", "NewLines", gen, 4},
		{"\x00nul\x00", "bad \xff\xfe utf-8 \xc3", "\x00", "N\x00UL\xe2\x82", "http://\x00/", 2},
		{strings.Repeat("<", 3000), strings.Repeat("<&>\u2028", 3000), strings.Repeat("<", 300), "Big", gen, 200},
	} {
		f.Add(s.summary, s.description, s.label, s.alertname, s.gen, s.n)
	}
	f.Fuzz(func(t *testing.T, summary, description, label, alertname, genURL string, nAlerts uint8) {
		summary, description, label, alertname, genURL = notifytest.AsDecoded(summary), notifytest.AsDecoded(description), notifytest.AsDecoded(label), notifytest.AsDecoded(alertname), notifytest.AsDecoded(genURL)
		if alertname == "" {
			alertname = "X"
		}
		h := newHarness(t, nil)
		inc := "llm-inference-gpu/" + label + "/TTFT"
		var rs []*alert.Result
		for i := range int(nAlerts)%200 + 1 {
			r := notifytest.Result(alertname, "fp"+strconv.Itoa(i), "firing", alert.ActionPage)
			r.Incident = inc
			r.Alert.GeneratorURL = genURL
			r.Alert.Annotations["summary"] = summary
			r.Alert.Annotations["description"] = description + " #" + strconv.Itoa(i)
			if label != "" {
				r.Alert.Labels["instance"] = label
				r.Alert.Labels["pod"] = label + strconv.Itoa(i)
			}
			rs = append(rs, r)
		}
		no := notifytest.Notification("oncall", alert.KindFiring, alert.ActionPage, rs...)
		no.Incident = inc
		no.Data.GroupLabels = template.KV{"alertname": alertname}
		no.Data.CommonLabels = template.KV{"alertname": alertname, "job": "vllm"}
		no.Opening = true
		if err := h.n.Notify(context.Background(), no); err != nil {
			t.Fatalf("Notify: %v (the page is lost)", err)
		}
		if r := h.srv.Rejections(); len(r) > 0 {
			t.Errorf("PagerDuty refused the event: %q", r)
		}
		evs := h.srv.Events()
		if len(evs) != 1 {
			t.Fatalf("%d events, want one trigger", len(evs))
		}
		e := evs[0]
		if len(e.Raw) > pdtest.MaxBody {
			t.Errorf("event of %d bytes, over 512 KB", len(e.Raw))
		}
		if e.Payload == nil || len(e.Payload.CustomDetails) == 0 {
			t.Errorf("the minimal event was sent, not the full one shrunk")
		}
		if !utf8.Valid(e.Raw) || bytes.Contains(e.Raw, []byte(`\ufffd`)) {
			t.Errorf("the event holds invalid UTF-8 (a character cut): %.300q", e.Raw)
		}
		if e.Payload != nil {
			if n := utf8.RuneCountInString(e.Payload.Summary); n > pdtest.MaxSummary {
				t.Errorf("summary of %d characters, over 1024", n)
			}
			if why := clusterCut(e.Payload.Summary, []string{summary, alertname, label}); why != "" {
				t.Errorf("the summary's cut splits a character: %s", why)
			}
		}
		if n := utf8.RuneCountInString(e.DedupKey); n > pdtest.MaxDedupKey || !utf8.ValidString(e.DedupKey) {
			t.Errorf("dedup_key of %d characters (valid UTF-8: %v), over 255", n, utf8.ValidString(e.DedupKey))
		}
	})
}
