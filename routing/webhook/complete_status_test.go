package webhook_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/routing/webhook"
)

// A truncated webhook whose alerts all resolved says "firing" only when
// Complete adds a firing alert it left out: relabelled "firing" with
// nothing added, its resolves would read as a group still firing, and the
// incident on-call watches for closing would stay open.
func TestCompleteKeepsAResolvedWebhookResolvedWhenNothingIsAdded(t *testing.T) {
	tests := []struct {
		name       string
		listing    []webhook.LeftOut
		wantAdded  int
		wantStatus string
	}{
		{name: "nothing listed", wantStatus: "resolved"},
		{name: "only another route's alert listed", listing: []webhook.LeftOut{{Fingerprint: "fm", Labels: down("m", "b")}}, wantStatus: "resolved"},
		{name: "a firing alert left out", listing: []webhook.LeftOut{{Fingerprint: "fb", Labels: down("b", "a")}}, wantAdded: 1, wantStatus: "firing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"version":"4","status":"resolved","receiver":"router","groupKey":"{}/{team=\"a\"}:{alertname=\"Down\"}","truncatedAlerts":2,
				"groupLabels":{"alertname":"Down"},"alerts":[{"status":"resolved","labels":{"alertname":"Down","service":"y","team":"a"},
				"startsAt":"2026-12-06T10:00:00Z","endsAt":"2026-12-06T10:05:00Z","fingerprint":"fy"}]}`
			msg, err := webhook.Decode([]byte(body), time.Date(2026, 12, 6, 10, 6, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			added, ok := webhook.Complete(msg, tt.listing)
			if !ok || added != tt.wantAdded || msg.TruncatedAlerts != 0 || msg.Status != tt.wantStatus {
				t.Errorf("completed %v, added %d, truncated %d, status %q; want %d added, whole and %s", ok, added, msg.TruncatedAlerts, msg.Status, tt.wantAdded, tt.wantStatus)
			}
		})
	}
}
