package slack_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/notify/notifytest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// The card's text is no one alert's when the alerts share no summary:
// before, 150 KubeContainerWaiting alerts of different summaries showed
// worker-000's description as the incident's.
func TestTheCardTextIsNoOneAlertsAmongMany(t *testing.T) {
	var rs []*alert.Result
	for i := range 150 {
		r := containerWaiting(i)
		r.Alert.Annotations["summary"] = fmt.Sprintf("Container of worker-%03d waiting longer than 1 hour", i)
		rs = append(rs, r)
	}
	for _, tc := range []struct {
		name    string
		results []*alert.Result
		want    string // in the card's text; "" for none
	}{
		{"150 alerts of different summaries", rs, ""},
		{"one alert", rs[:1], "pod/worker-000 in namespace batch"},
		{"alerts sharing a summary", []*alert.Result{containerWaiting(1), containerWaiting(2)}, "Pod container waiting longer than 1 hour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			no := notifytest.Notification("triage", alert.KindFiring, alert.ActionTicket, tc.results...)
			no.Opening = true
			no.Data.CommonAnnotations = commonAnnotations(tc.results)
			if err := h.notifier(t, nil).Notify(context.Background(), no); err != nil {
				t.Fatal(err)
			}
			var text string
			for _, b := range blocksOf(t, h.srv.Messages()[0]) {
				if id, _ := b["block_id"].(string); b["type"] == "section" && !strings.HasPrefix(id, "alert-") {
					text += b["text"].(map[string]any)["text"].(string) + "\n"
				}
			}
			if tc.want == "" && strings.Contains(text, "worker-000") || tc.want != "" && !strings.Contains(text, tc.want) {
				t.Fatalf("the card's text (want %q): %s", tc.want, text)
			}
		})
	}
}

// commonAnnotations are the annotations all results share, as the router
// computes them for a notification.
func commonAnnotations(rs []*alert.Result) map[string]string {
	common := map[string]string{}
	for k, v := range rs[0].Alert.Annotations {
		common[k] = v
	}
	for _, r := range rs[1:] {
		for k, v := range common {
			if r.Alert.Annotations[k] != v {
				delete(common, k)
			}
		}
	}
	return common
}
