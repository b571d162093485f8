package pagerduty_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/pdtest"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
)

// An event over 512 KB drops its per-alert details and counts them in
// alerts_omitted, on top of the alerts already left out of the list (over
// its 20): on-call reading "alerts_omitted: 20" of a 25-alert incident
// would look for 40 alerts, or miss 5. So under the second names when the
// operator's keys take alerts and alerts_omitted.
func TestShrinkCountsTheDroppedAlertsOnTopOfThoseAlreadyOmitted(t *testing.T) {
	tests := []struct {
		name    string
		custom  map[string]string
		omitted string // the key of the router's count
	}{
		{name: "the router's names", custom: map[string]string{}, omitted: "alerts_omitted"},
		{name: "second names", custom: map[string]string{"alerts": "mine", "alerts_omitted": "mine too"}, omitted: "alertrouter_alerts_omitted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(c *pagerduty.Config) {
				c.CustomDetails = map[string]string{"description": "{{ .CommonAnnotations.description }}"}
				for k, v := range tt.custom {
					c.CustomDetails[k] = v
				}
			})
			fps := make([]string, 25)
			for i := range fps {
				fps[i] = fmt.Sprintf("fp%02d", i)
			}
			no := opening(fps...)
			no.Data.CommonAnnotations["description"] = strings.Repeat("x", 600<<10)
			if err := h.n.Notify(context.Background(), no); err != nil {
				t.Fatal(err)
			}
			evs := h.srv.Events()
			if len(evs) != 1 || h.srv.Requests() != 1 || len(evs[0].Raw) > pdtest.MaxBody {
				t.Fatalf("events %d, requests %d (rejections %v): want one event within 512 KB", len(evs), h.srv.Requests(), h.srv.Rejections())
			}
			var d map[string]json.RawMessage
			if err := json.Unmarshal(evs[0].Payload.CustomDetails, &d); err != nil {
				t.Fatal(err)
			}
			if string(d[tt.omitted]) != "25" {
				t.Errorf("%s = %s; want 25: the 20 alerts dropped and the 5 already left out", tt.omitted, d[tt.omitted])
			}
		})
	}
}

// A field the shrink does not cut (a component templated from a 600 KB
// annotation) keeps the event over 512 KB once its details and links are
// dropped: the minimal event goes out instead, in one attempt. Sent
// oversized, PagerDuty refuses it and the page waits on the retry as a
// minimal event — logged as a rejection on every such page.
func TestShrinkSendsTheMinimalEventWhenNothingElseFits(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) {
		c.Component = "{{ .CommonAnnotations.description }}"
	})
	no := opening("aaa")
	no.Data.CommonAnnotations["description"] = strings.Repeat("x", 600<<10)
	if err := h.n.Notify(context.Background(), no); err != nil {
		t.Fatal(err)
	}
	evs := h.srv.Events()
	if len(evs) != 1 || h.srv.Requests() != 1 || len(h.srv.Rejections()) != 0 {
		t.Fatalf("events %d, requests %d, rejections %v: want the minimal event sent once, none refused", len(evs), h.srv.Requests(), h.srv.Rejections())
	}
	e := evs[0]
	if len(e.Raw) > pdtest.MaxBody || e.DedupKey != pagerduty.DedupKey(incident) || e.Payload.Summary == "" ||
		e.Payload.Component != "" || len(e.Payload.CustomDetails) != 0 || len(e.Links) != 0 {
		t.Errorf("event of %d bytes, dedup_key %q, summary %q, component of %d bytes, %d links: want the minimal event",
			len(e.Raw), e.DedupKey, e.Payload.Summary, len(e.Payload.Component), len(e.Links))
	}
}

// Links are dropped before the last resort: an event whose link text is
// templated from a 600 KB annotation fits once its details and links go,
// and keeps its component, group, class and timestamp. Sent as the
// minimal event, on-call lost them too (a mutation audit found it
// untested).
func TestShrinkDropsTheLinksBeforeSendingTheMinimalEvent(t *testing.T) {
	h := newHarness(t, func(c *pagerduty.Config) {
		c.Links = []pagerduty.Link{{Href: "https://runbooks.example/ttft", Text: "{{ .CommonAnnotations.description }}"}}
	})
	no := opening("aaa")
	no.Data.CommonAnnotations["description"] = strings.Repeat("x", 600<<10)
	e := h.sendOne(t, no)
	if len(e.Raw) > pdtest.MaxBody || len(e.Links) != 0 || e.Payload.Component == "" || e.Payload.Timestamp == "" {
		t.Errorf("event of %d bytes, %d links, component %q, timestamp %q: want the links dropped and the rest of the event kept",
			len(e.Raw), len(e.Links), e.Payload.Component, e.Payload.Timestamp)
	}
}
