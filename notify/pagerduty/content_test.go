package pagerduty_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// customDetails decodes the custom_details of ev.
func customDetails(t *testing.T, ev pdtest.Event) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(ev.Payload.CustomDetails, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The operator's details are their explicit choice: a key the router also
// sets used to be skipped without a word, so a receiver ported from
// Alertmanager with its default details (firing and resolved as the list of
// instances) sent "firing": 2. The operator's key now wins, and the
// router's value it displaces moves to its second name: the counts to
// num_firing and num_resolved (Alertmanager's names), any other key k to
// alertrouter_k — unless the operator set that name too.
func TestTheOperatorsDetailsWinOverTheRoutersOwn(t *testing.T) {
	tests := []struct {
		name    string
		details string
		custom  map[string]string
		check   func(t *testing.T, d map[string]any)
	}{
		{
			name: "Alertmanager's default details read as in Alertmanager",
			details: `
firing: '{{ template "pagerduty.default.instances" .Alerts.Firing }}'
resolved: '{{ template "pagerduty.default.instances" .Alerts.Resolved }}'
num_firing: '{{ .Alerts.Firing | len }}'
num_resolved: '{{ .Alerts.Resolved | len }}'
`,
			check: func(t *testing.T, d map[string]any) {
				// The instances text reads as YAML: sent as that structure,
				// as Alertmanager's DeepCopyWithTemplate does.
				firing, _ := json.Marshal(d["firing"])
				if !strings.Contains(string(firing), `"Labels":["alertname = TTFTHigh"`) || !strings.Contains(string(firing), `"Annotations":`) {
					t.Errorf("firing = %s, want the instances", firing)
				}
				if d["resolved"] != nil || d["num_firing"] != float64(2) || d["num_resolved"] != float64(0) {
					t.Errorf("resolved %#v, num_firing %#v, num_resolved %#v; want Alertmanager's", d["resolved"], d["num_firing"], d["num_resolved"])
				}
				if d["alerts"] == nil || d["incident"] == nil {
					t.Errorf("the router's other details are gone: %v", d)
				}
			},
		},
		{
			name:    "a displaced count moves to Alertmanager's name for it",
			details: `firing: 'see Alertmanager'`,
			check: func(t *testing.T, d map[string]any) {
				if d["firing"] != "see Alertmanager" || d["num_firing"] != float64(2) || d["resolved"] != float64(0) {
					t.Errorf("firing %#v, num_firing %#v, resolved %#v", d["firing"], d["num_firing"], d["resolved"])
				}
			},
		},
		{
			name:    "any other displaced detail moves to alertrouter_<key>; custom_details wins over details",
			details: `decision: 'from details'`,
			custom:  map[string]string{"decision": "from custom_details", "incident": "INC-{{ .CommonLabels.job }}"},
			check: func(t *testing.T, d map[string]any) {
				if d["decision"] != "from custom_details" || d["incident"] != "INC-vllm" {
					t.Errorf("decision %#v, incident %#v; want the operator's", d["decision"], d["incident"])
				}
				if dec, _ := d["alertrouter_decision"].(map[string]any); dec["policy"] != "burn-rate" || d["alertrouter_incident"] != "llm-inference-gpu/chat/TTFT" {
					t.Errorf("alertrouter_decision %#v, alertrouter_incident %#v; want the router's", d["alertrouter_decision"], d["alertrouter_incident"])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var details map[string]any
			if err := yaml.Unmarshal([]byte(tt.details), &details); err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, func(c *pagerduty.Config) { c.Details, c.CustomDetails = details, tt.custom })
			if err := h.n.Notify(context.Background(), opening("aaa", "bbb")); err != nil {
				t.Fatal(err)
			}
			tt.check(t, customDetails(t, h.srv.Events()[0]))
		})
	}
}

// A details (or custom_details) entry whose template fails used to be
// sent as null (an empty string): it is left out, logged and counted.
func TestAFailingDetailIsLeftOut(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) {
		c.Details = map[string]any{"owner": "{{ .Nope.Deeper }}", "nested": map[any]any{"k": []any{"ok", "{{ .Nope.Deeper }}"}}, "team": "{{ .CommonLabels.job }}"}
		c.CustomDetails = map[string]string{"runbook": "{{ .Nope.Deeper }}"}
	})
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	d := customDetails(t, h.srv.Events()[0])
	for _, k := range []string{"owner", "nested", "runbook"} {
		if v, ok := d[k]; ok {
			t.Errorf("%s = %#v, want it left out", k, v)
		}
	}
	if d["team"] != "vllm" {
		t.Errorf("team = %#v, want the entry that renders", d["team"])
	}
	if !strings.Contains(h.logs.String(), "leaving the field out") || !strings.Contains(h.logs.String(), "field=details.owner") {
		t.Errorf("the failure was not logged: %s", h.logs.String())
	}
	got := notifytest.RenderFailures(t, h.reg)
	if got["oncall/details.owner"] != 1 || got["oncall/details.nested"] != 1 || got["oncall/custom_details.runbook"] != 1 || got["oncall/details.team"] != 0 {
		t.Errorf("render failures = %v", got)
	}
	if _, ok := got["oncall/summary"]; !ok {
		t.Errorf("the summary's series is not pre-created: %v", got)
	}
}

// Alertmanager configs often set description: '{{ .CommonAnnotations.summary }}',
// empty whenever the alerts' summaries differ: the PagerDuty summary became
// the raw incident key, with no log. It is the built-in summary now, logged
// and counted.
func TestAnEmptySummaryIsTheBuiltinOne(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) { c.Description = "{{ .CommonAnnotations.summary }}" })
	no := opening("aaa", "bbb")
	no.Results[1].Alert.Annotations["summary"] = "TTFT p99 is 3.1s (SLO 1s)"
	no.Data.Alerts[1].Annotations = no.Results[1].Alert.Annotations
	labels := no.Data.CommonLabels
	alert.SetCommon(no.Data) // the summaries differ: no common one
	no.Data.CommonLabels = labels
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	if got := h.srv.Events()[0].Payload.Summary; got != "[FIRING:2] TTFTHigh (llm-inference-gpu TTFT)" { // the summaries differ: none is the incident's
		t.Errorf("summary = %q, want the built-in one", got)
	}
	if !strings.Contains(h.logs.String(), "template rendered empty") {
		t.Errorf("not logged: %s", h.logs.String())
	}
	if got := notifytest.RenderFailures(t, h.reg); got["oncall/summary"] != 1 {
		t.Errorf("render failures = %v, want oncall/summary 1", got)
	}
}

// The description annotation carries what mixin rules' summaries do not
// (the pod, the mountpoint, the % left): each alert's details have it, cut
// to 1024 characters, "…" marking the cut.
func TestEachAlertsDetailsHaveItsDescription(t *testing.T) {
	h := newHarness(t, nil)
	no := opening("aaa", "bbb")
	long := strings.Repeat("Filesystem on /dev/sda1 at node-1 has 3% left. ", 60)
	no.Results[1].Alert.Annotations["description"] = long
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	as, _ := customDetails(t, h.srv.Events()[0])["alerts"].([]any)
	if len(as) != 2 {
		t.Fatalf("alerts = %#v", as)
	}
	first, _ := as[0].(map[string]any)
	second, _ := as[1].(map[string]any)
	if first["description"] != "Time to first token of model llama-70b breaches its SLO." {
		t.Errorf("description = %#v", first["description"])
	}
	d, _ := second["description"].(string)
	if utf8.RuneCountInString(d) != 1024 || !strings.HasSuffix(d, "…") || !strings.HasPrefix(long, strings.TrimSuffix(d, "…")) {
		t.Errorf("long description = %q (%d runes), want its first 1023 runes and …", d, utf8.RuneCountInString(d))
	}
}

// PagerDuty's 1024-character cut of the summary used to leave half a flag
// (a lone regional indicator) or half a ZWJ emoji at the end.
func TestTheSummaryCutKeepsCharactersWhole(t *testing.T) {
	for _, tail := range []string{"🇯🇵🇯🇵", "👩‍💻👩‍💻", "e\u0301e\u0301e\u0301"} {
		h := newHarness(t, func(c *pagerduty.Config) { c.Summary = strings.Repeat("s", 1022) + tail })
		if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
			t.Fatal(err)
		}
		got := h.srv.Events()[0].Payload.Summary
		if got != strings.Repeat("s", 1022)+"…" {
			t.Errorf("tail %q: summary ends %q, want the character before the cut whole", tail, got[1015:])
		}
	}
}

// A configured link to a page the event already links (the runbook, the
// generator URL), or one the config lists twice, was added again.
func TestAConfiguredLinkIsNotRepeated(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) {
		c.Links = []pagerduty.Link{
			{Href: `{{ (index .Alerts 0).Annotations.runbook_url }}`, Text: "runbook"},
			{Href: `{{ (index .Alerts 0).GeneratorURL }}`, Text: "graph"},
			{Href: "https://wiki.example.com/oncall", Text: "wiki"},
			{Href: "https://wiki.example.com/oncall", Text: "wiki again"},
		}
	})
	if err := h.n.Notify(context.Background(), opening("aaa")); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range h.srv.Events()[0].Links {
		seen[l.Href]++
	}
	for href, n := range seen {
		if n > 1 {
			t.Errorf("%s linked %d times", href, n)
		}
	}
	if seen["https://wiki.example.com/oncall"] != 1 || seen["https://runbooks.example.com/ttft"] != 1 {
		t.Errorf("links = %v", seen)
	}
}

// An alert's details list its first 30 labels: alertname, severity and the
// labels that say where it fires first, then the others by name. By name
// alone an alert of 200 labels kept alertname and extra_label_0…, and lost
// its service, pod, namespace and instance (an audit).
func TestAnAlertsDetailsKeepTheLabelsThatSayWhereItFires(t *testing.T) {
	h := newHarness(t, nil)
	no := opening("aaa")
	ls := no.Results[0].Alert.Labels
	for i := range 200 {
		ls[fmt.Sprintf("extra_label_%03d", i)] = "x"
	}
	for k, v := range map[string]string{"service": "checkout", "severity": "critical", "pod": "api-0", "namespace": "shop", "instance": "10.0.0.1:8080"} {
		ls[k] = v
	}
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	as, _ := customDetails(t, h.srv.Events()[0])["alerts"].([]any)
	first, _ := as[0].(map[string]any)
	labels, _ := first["labels"].(map[string]any)
	for _, k := range []string{"alertname", "severity", "instance", "pod", "namespace", "service"} {
		if labels[k] == nil {
			t.Errorf("details' labels lack %s: %v", k, labels)
		}
	}
	if len(labels) != 30 || first["labels_omitted"] != float64(len(ls)-30) {
		t.Errorf("%d labels, %v omitted; want 30 and the %d others counted", len(labels), first["labels_omitted"], len(ls)-30)
	}
}
