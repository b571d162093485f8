package pagerduty_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

var cutMarker = regexp.MustCompile(`…\[cut (\d+) of (\d+) (bytes|items)\]$`)

// An event over 512 KB keeps the fields that explain the page — incident,
// sector, decision, KPIs, hints, links — when one field is huge: the
// largest fields are capped first, each saying it was cut and by how much.
// Before, the shrink cut custom_details' JSON text at a fixed length, and a
// 50 KB reasons or a huge annotation, sorted first, crowded out the rest.
func TestShrinkCapsTheLargestFieldsAndKeepsTheExplanation(t *testing.T) {
	hugeAnnotation := strings.Repeat("<stack frame> ", 50_000) + "end" // 700 KB, 1.2 MB JSON-escaped
	manyReasons := make([]string, 0, 25_000)
	for i := range cap(manyReasons) {
		manyReasons = append(manyReasons, fmt.Sprintf("reason %05d: burn rate over threshold", i)) // 1 MB in all
	}
	tests := []struct {
		name          string
		reasons       []string
		wantCut       []string // custom_details paths cut
		reasonsWhole  bool
		wantListItems bool
	}{
		{name: "a 50 KB reason and a huge annotation", reasons: []string{strings.Repeat("r", 50<<10)}, wantCut: []string{"description"}, reasonsWhole: true},
		{name: "a reason over the limit alone", reasons: []string{strings.Repeat("r", 600<<10)}, wantCut: []string{"decision.reasons.0", "description"}},
		{name: "many reasons", reasons: manyReasons, wantCut: []string{"decision.reasons", "description"}, wantListItems: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *pagerduty.Config) {
				c.CustomDetails = map[string]string{"description": "{{ .CommonAnnotations.description }}"}
				c.Summary = "{{ .CommonAnnotations.description }}"
			})
			no := opening("aaa", "bbb")
			no.Data.CommonAnnotations["description"] = hugeAnnotation
			no.Results[0].Decision.Reasons = tt.reasons
			if err := h.n.Notify(context.Background(), no); err != nil {
				t.Fatal(err)
			}
			evs := h.srv.Events()
			if len(evs) != 1 {
				t.Fatalf("events = %d (rejections %v)", len(evs), h.srv.Rejections())
			}
			e := evs[0]
			if len(e.Raw) > pdtest.MaxBody || !json.Valid(e.Raw) {
				t.Fatalf("event of %d bytes (valid JSON: %v)", len(e.Raw), json.Valid(e.Raw))
			}
			if n := utf8.RuneCountInString(e.Payload.Summary); n > pdtest.MaxSummary || e.DedupKey != incident {
				t.Fatalf("summary of %d runes, dedup_key %q", n, e.DedupKey)
			}
			if len(e.Links) == 0 {
				t.Fatal("the links were dropped")
			}
			var d struct {
				Incident      string   `json:"incident"`
				Sector        string   `json:"sector"`
				SectorName    string   `json:"sector_name"`
				IncidentClass string   `json:"incident_class"`
				KPIs          []string `json:"kpis"`
				Hints         []string `json:"hints"`
				Firing        *int     `json:"firing"`
				Decision      struct {
					Action, Policy, Tier string
					Reasons              []string
				} `json:"decision"`
				Description     string   `json:"description"`
				TruncatedFields []string `json:"truncated_fields"`
			}
			if err := json.Unmarshal(e.Payload.CustomDetails, &d); err != nil {
				t.Fatalf("custom_details: %v\n%.2000s", err, e.Payload.CustomDetails)
			}
			if d.Incident != incident || d.Sector != "llm-inference-gpu" || d.SectorName == "" || d.IncidentClass != "latency" ||
				len(d.KPIs) != 1 || len(d.Hints) != 1 || d.Firing == nil || d.Decision.Action != "page" ||
				d.Decision.Policy != "burn-rate" || d.Decision.Tier != "1h/5m>14.4" {
				t.Fatalf("explanatory fields lost: %+v", d)
			}
			if m := cutMarker.FindStringSubmatch(d.Description); m == nil || m[2] != fmt.Sprint(len(hugeAnnotation)) {
				t.Fatalf("description does not say it was cut: …%s", d.Description[max(0, len(d.Description)-80):])
			}
			if !strings.HasPrefix(d.Description, "<stack frame> ") {
				t.Fatalf("description lost its beginning: %.80s", d.Description)
			}
			switch {
			case tt.reasonsWhole:
				if len(d.Decision.Reasons) != 1 || d.Decision.Reasons[0] != tt.reasons[0] {
					t.Fatal("a reason that fits was cut")
				}
			case tt.wantListItems:
				last := d.Decision.Reasons[len(d.Decision.Reasons)-1]
				if m := cutMarker.FindStringSubmatch(last); m == nil || m[3] != "items" || m[2] != fmt.Sprint(len(tt.reasons)) || d.Decision.Reasons[0] != tt.reasons[0] {
					t.Fatalf("reasons do not say they were cut: first %q, last %q", d.Decision.Reasons[0], last)
				}
			default:
				if m := cutMarker.FindStringSubmatch(d.Decision.Reasons[0]); m == nil || m[3] != "bytes" {
					t.Fatalf("the reason does not say it was cut: …%s", d.Decision.Reasons[0][len(d.Decision.Reasons[0])-80:])
				}
			}
			if strings.Join(d.TruncatedFields, ",") != strings.Join(tt.wantCut, ",") {
				t.Fatalf("truncated_fields = %q, want %q", d.TruncatedFields, tt.wantCut)
			}
			// The room is used: the event is not cut far below the limit.
			if len(e.Raw) < pdtest.MaxBody*3/4 {
				t.Fatalf("event of %d bytes: cut more than needed", len(e.Raw))
			}
		})
	}
}

// Every kind of detail is capped alike, Alertmanager's nested details
// included, and a mapping with more members than room keeps the smallest
// and counts the others.
func TestShrinkCapsNestedDetails(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) {
		c.Details = map[string]any{"nested": map[any]any{"labels": "{{ .CommonLabels | toJson }}", "note": "keep me"}}
	})
	no := opening("aaa")
	for i := range 3000 {
		no.Data.CommonLabels[fmt.Sprintf("label_%04d", i)] = strings.Repeat("v", 200)
	}
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 1 || len(evs[0].Raw) > pdtest.MaxBody {
		t.Fatalf("events = %d (rejections %v)", len(evs), h.srv.Rejections())
	}
	var d struct {
		Incident string `json:"incident"`
		Nested   struct {
			Note   string            `json:"note"`
			Labels map[string]string `json:"labels"`
		} `json:"nested"`
	}
	if err := json.Unmarshal(evs[0].Payload.CustomDetails, &d); err != nil {
		t.Fatal(err)
	}
	if d.Incident != incident || d.Nested.Note != "keep me" || len(d.Nested.Labels) < 100 {
		t.Fatalf("details lost: incident %q, note %q, %d labels", d.Incident, d.Nested.Note, len(d.Nested.Labels))
	}
	if !regexp.MustCompile(`^\[cut \d+ of 3002 members\]$`).MatchString(d.Nested.Labels["…"]) {
		t.Fatalf("the labels left out are not counted: %q", d.Nested.Labels["…"])
	}
}

// PagerDuty documents its event size limit as "512 KB"; Alertmanager
// (maxEventSize) and Grafana read it as 512,000 bytes. An event between
// 512,000 and 524,288 bytes (512 KiB, the limit the router kept) went out
// whole, and a PagerDuty that counts as they do refuses it: the router's
// fallback then sent the minimal event, without the custom details and
// the runbook link. It is shrunk to 512,000 bytes instead.
func TestAnEventJustOver512000BytesIsShrunkNotMinimal(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) {
		c.CustomDetails = map[string]string{"all": "{{ .CommonAnnotations.description }}"}
	})
	no := opening("aaa")
	no.Data.CommonAnnotations["description"] = strings.Repeat("x", 514_000) // the event: ~518,000 bytes
	e := h.sendOne(t, no)
	if len(e.Raw) > 512_000 {
		t.Fatalf("event of %d bytes, over 512,000", len(e.Raw))
	}
	var d struct {
		Incident string `json:"incident"`
		All      string `json:"all"`
	}
	if err := json.Unmarshal(e.Payload.CustomDetails, &d); err != nil || d.Incident != incident || !cutMarker.MatchString(d.All) || len(e.Links) == 0 {
		t.Errorf("custom_details %.200s…, links %d: want the details kept with the large field cut, and the links", e.Payload.CustomDetails, len(e.Links))
	}
}
