package webhook_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/template"

	"github.com/alertrouter/alertrouter/internal/webhooktest"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

var receivedAt = time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)

func TestDecodeRejectsPayloadsThatCannotBeReadAsAWhole(t *testing.T) {
	tests := []struct {
		name      string
		body      []byte
		wantField string
		wantMsg   string
	}{
		{"truncated JSON names the byte offset", webhooktest.ReadFixture(t, "malformed.bad.json"), "", "malformed JSON at byte offset"},
		{"alerts of the wrong JSON type names the field", webhooktest.ReadFixture(t, "wrong-types.bad.json"), "alerts", "expected JSON array, got string"},
		{"webhook version 3 is unsupported", webhooktest.ReadFixture(t, "version-3.bad.json"), "version", `unsupported version "3"`},
		{"version 1 without Grafana's orgId is unsupported", []byte(`{"version":"1","alerts":[{"labels":{"alertname":"A"}}]}`), "version", `unsupported version "1"`},
		{"a payload without alerts says they are missing", webhooktest.ReadFixture(t, "no-alerts.bad.json"), "alerts", "missing"},
		{"an empty alerts array says it is empty", []byte(`{"version":"4","alerts":[]}`), "alerts", "empty"},
		{"a missing version is named", []byte(`{"alerts":[{"labels":{"a":"b"}}]}`), "version", "missing"},
		{"a numeric version is a type error on version", []byte(`{"version":4,"alerts":[]}`), "version", "expected JSON string, got number"},
		{"a top-level array is not a webhook", []byte(`[{"version":"4"}]`), "", "expected a JSON object"},
		{"an empty body is malformed", nil, "", "malformed JSON"},
		{"trailing garbage is malformed", []byte(`{"version":"4","alerts":[{"labels":{"a":"b"}}]}}`), "", "malformed JSON"},
		{"a negative truncatedAlerts says a count cannot be negative", []byte(`{"version":"4","truncatedAlerts":-1,"alerts":[{"labels":{"a":"b"}}]}`), "truncatedAlerts", "expected JSON non-negative integer, got number -1"},
		{"a huge literal is not echoed whole", []byte(`{"version":"4","truncatedAlerts":` + strings.Repeat("9", 400) + `,"alerts":[{"labels":{"a":"b"}}]}`), "truncatedAlerts", "got number " + strings.Repeat("9", 41) + "…"},
		{"a payload none of whose alerts can be read is refused, naming why", []byte(`{"version":"4","alerts":[{"labels":{}},{"status":"firing"}]}`), "alerts", "no alert could be read: alerts[0].labels: an alert without labels cannot be identified; alerts[1].labels"},
		{"groupLabels of the wrong type names the field", []byte(`{"version":"4","groupLabels":[1],"alerts":[{"labels":{"a":"b"}}]}`), "groupLabels", "expected JSON object, got array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := webhook.Decode(tt.body, receivedAt)
			var ie *webhook.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Decode() = %v, %v; want an *InputError", msg, err)
			}
			if ie.Status != 400 {
				t.Errorf("Status = %d, want 400", ie.Status)
			}
			if ie.Field != tt.wantField {
				t.Errorf("Field = %q, want %q", ie.Field, tt.wantField)
			}
			if !strings.Contains(ie.Msg, tt.wantMsg) {
				t.Errorf("Msg = %q, want it to contain %q", ie.Msg, tt.wantMsg)
			}
		})
	}
}

func TestDecodeMendsOrRejectsDefectiveAlertsAlone(t *testing.T) {
	tests := []struct {
		name         string
		file         string
		wantFlags    [][]string // per decoded item
		wantRejected []int
		wantReason   string
	}{
		{"a clean payload has no flags", "firing.json", [][]string{nil, nil}, nil, ""},
		{"invalid UTF-8 in one annotation flags that alert only", "invalid-utf8.json", [][]string{nil, {alert.FlagInvalidUTF8}}, nil, ""},
		{"bad and missing startsAt are flagged and fall back", "bad-timestamp.json",
			[][]string{{alert.FlagStartsAtInvalid}, nil, {alert.FlagStartsAtMissing}}, nil, ""},
		{"an alert with empty labels is rejected alone", "no-labels.json", [][]string{nil, nil}, []int{1}, "alerts[1].labels"},
		{"an alert whose labels is a number is rejected alone", "alert-wrong-type.json", [][]string{nil, nil}, []int{1}, "alerts[1].labels: expected JSON object, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := webhook.Decode(webhooktest.ReadFixture(t, tt.file), receivedAt)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(msg.Items) != len(tt.wantFlags) {
				t.Fatalf("decoded %d alerts, want %d", len(msg.Items), len(tt.wantFlags))
			}
			for i, want := range tt.wantFlags {
				if got := msg.Items[i].Flags; !slices.Equal(got, want) {
					t.Errorf("alert %d flags = %v, want %v", i, got, want)
				}
			}
			var rejected []int
			for _, r := range msg.Rejected {
				rejected = append(rejected, r.Index)
				if !strings.Contains(r.Reason, tt.wantReason) {
					t.Errorf("rejection reason %q does not contain %q", r.Reason, tt.wantReason)
				}
			}
			if !slices.Equal(rejected, tt.wantRejected) {
				t.Errorf("rejected indexes = %v, want %v", rejected, tt.wantRejected)
			}
		})
	}
}

func TestDecodeReplacesInvalidUTF8(t *testing.T) {
	msg, err := webhook.Decode(webhooktest.ReadFixture(t, "invalid-utf8.json"), receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	got := msg.Items[1].Annotations["summary"]
	if !utf8.ValidString(got) || !strings.Contains(got, "\uFFFD") {
		t.Errorf("summary = %q, want valid UTF-8 with U+FFFD in place of the bad byte", got)
	}
}

func TestDecodeFallsBackToTheTimeOfReceipt(t *testing.T) {
	msg, err := webhook.Decode(webhooktest.ReadFixture(t, "bad-timestamp.json"), receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		if got := msg.Items[i].StartsAt; !got.Equal(receivedAt) {
			t.Errorf("alert %d startsAt = %v, want the time of receipt %v", i, got, receivedAt)
		}
	}
	if got := msg.Items[1].StartsAt; !got.Equal(webhooktest.Start) {
		t.Errorf("alert 1 startsAt = %v, want %v", got, webhooktest.Start)
	}
}

// Go's zero time as startsAt is "no start" (a Go sender's empty
// time.Time): the time of receipt, flagged startsAt_missing like a missing
// one, the same identity (the fingerprint alone). An endsAt before the
// alert's own start (Alertmanager refuses those) is dropped and flagged:
// kept, it read as the late resolve of an earlier instance and the resolve
// closed nothing. An endsAt of the zero time (Alertmanager's for a firing)
// is no end and no defect.
func TestDecodeReadsZeroStartAndEndBeforeStart(t *testing.T) {
	body := `{"version":"4","status":"resolved","receiver":"r","groupKey":"{}:{}","alerts":[
	 {"status":"firing","labels":{"alertname":"A"},"fingerprint":"a1","startsAt":"0001-01-01T00:00:00Z","endsAt":"0001-01-01T00:00:00Z"},
	 {"status":"resolved","labels":{"alertname":"B"},"fingerprint":"b1","startsAt":"2026-12-02T10:00:00Z","endsAt":"2001-01-01T00:00:00Z"},
	 {"status":"resolved","labels":{"alertname":"C"},"fingerprint":"c1","startsAt":"2026-12-02T10:00:00Z","endsAt":"2026-12-02T10:05:00+05:30"},
	 {"status":"resolved","labels":{"alertname":"D"},"fingerprint":"d1","startsAt":"2026-12-02T10:00:00Z","endsAt":"2026-12-02T10:05:00Z"}]}`
	msg, err := webhook.Decode([]byte(body), receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	a := msg.Items[0]
	if !a.StartsAt.Equal(receivedAt) || !a.IdentityStart().IsZero() || !slices.Equal(a.Flags, []string{alert.FlagStartsAtMissing}) || !a.EndsAt.IsZero() {
		t.Errorf("zero startsAt: startsAt %v identity %v flags %v endsAt %v; want the time of receipt, no identity start, startsAt_missing, no end",
			a.StartsAt, a.IdentityStart(), a.Flags, a.EndsAt)
	}
	for _, i := range []int{1, 2} { // 10:05+05:30 is 04:35Z, before the start
		if b := msg.Items[i]; !b.EndsAt.IsZero() || !slices.Equal(b.Flags, []string{alert.FlagEndsAtInvalid}) || b.Status != "resolved" {
			t.Errorf("alert %d, endsAt before startsAt: endsAt %v flags %v status %s; want no end, endsAt_invalid, still resolved", i, b.EndsAt, b.Flags, b.Status)
		}
	}
	if d := msg.Items[3]; d.EndsAt.IsZero() || len(d.Flags) != 0 {
		t.Errorf("a good resolve: endsAt %v flags %v", d.EndsAt, d.Flags)
	}
}

// Go's RFC 3339 parser takes the zone offsets +24:00 and +23:60, which
// RFC 3339 does not allow and time's JSON encoding refuses: such a time
// is unparsable (flagged, the time of receipt), so that the journal and a
// dead letter can still write the alert.
func TestDecodeRefusesAZoneOffsetOutOfRange(t *testing.T) {
	for _, ts := range []string{"2026-12-05T01:00:00+24:00", "2026-12-05T01:00:00+23:60", "2026-12-05T01:00:00-24:00"} {
		body := []byte(`{"version":"4","alerts":[{"status":"resolved","labels":{"alertname":"X"},"startsAt":"` + ts + `","endsAt":"` + ts + `"}]}`)
		msg, err := webhook.Decode(body, receivedAt)
		if err != nil {
			t.Fatal(err)
		}
		a := msg.Items[0]
		if !slices.Contains(a.Flags, alert.FlagStartsAtInvalid) || !slices.Contains(a.Flags, alert.FlagEndsAtInvalid) || !a.StartsAt.Equal(receivedAt) || !a.EndsAt.IsZero() {
			t.Errorf("%s: flags %v, startsAt %v, endsAt %v; want both flagged invalid, startsAt the time of receipt", ts, a.Flags, a.StartsAt, a.EndsAt)
		}
		if _, err := json.Marshal(a); err != nil {
			t.Errorf("%s: the decoded alert cannot be encoded: %v", ts, err)
		}
	}
	// The widest offsets RFC 3339 allows are kept.
	msg, err := webhook.Decode([]byte(`{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"X"},"startsAt":"2026-12-05T01:00:00+23:59"}]}`), receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	if a := msg.Items[0]; slices.Contains(a.Flags, alert.FlagStartsAtInvalid) || a.StartsAt.Equal(receivedAt) {
		t.Errorf("+23:59: flags %v, startsAt %v; want it read as written", a.Flags, a.StartsAt)
	}
}

// One alert twice in a payload with different status (a sender merging or
// replaying payloads; never Alertmanager): the later state is kept, the
// other copy rejected alone, naming the one kept — whatever the order.
func TestDecodeKeepsTheLaterStateOfAnAlertSentTwice(t *testing.T) {
	firing := func(start string) string {
		return `{"status":"firing","labels":{"alertname":"X","job":"api"},"fingerprint":"f1","startsAt":"` + start + `"}`
	}
	resolved := func(start, end string) string {
		return `{"status":"resolved","labels":{"alertname":"X","job":"api"},"fingerprint":"f1","startsAt":"` + start + `","endsAt":"` + end + `"}`
	}
	other := `{"status":"firing","labels":{"alertname":"Y"},"startsAt":"2026-12-05T00:00:00Z"}`
	var many []string
	for i := range 20 {
		many = append(many, `{"status":"firing","labels":{"alertname":"Z","i":"`+strconv.Itoa(i)+`"},"startsAt":"2026-12-05T00:00:00Z"}`)
	}
	for _, tc := range []struct {
		name       string
		alerts     []string
		want       string // the status kept
		wantReject int    // the payload index rejected
	}{
		{"firing then its resolve", []string{firing("2026-12-05T00:00:00Z"), resolved("2026-12-05T00:00:00Z", "2026-12-05T00:05:00Z")}, "resolved", 0},
		{"the resolve then the firing it ended", []string{resolved("2026-12-05T00:00:00Z", "2026-12-05T00:05:00Z"), firing("2026-12-05T00:00:00Z")}, "resolved", 1},
		{"a firing that started after the resolve ended", []string{resolved("2026-12-05T00:00:00Z", "2026-12-05T00:05:00Z"), firing("2026-12-05T00:06:00Z")}, "firing", 0},
		{"around another alert and a rejected one", []string{other, firing("2026-12-05T00:00:00Z"), `{"labels":{}}`, resolved("2026-12-05T00:00:00Z", "2026-12-05T00:05:00Z")}, "resolved", 1},
		{"among many (the map's path)", append(many, firing("2026-12-05T00:00:00Z"), resolved("2026-12-05T00:00:00Z", "2026-12-05T00:05:00Z")), "resolved", len(many)},
	} {
		body := []byte(`{"version":"4","alerts":[` + strings.Join(tc.alerts, ",") + `]}`)
		msg, err := webhook.Decode(body, receivedAt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var kept []string
		for _, a := range msg.Items {
			if a.Fingerprint == "f1" {
				kept = append(kept, a.Status)
			}
		}
		if len(kept) != 1 || kept[0] != tc.want {
			t.Errorf("%s: copies kept %v, want one %s", tc.name, kept, tc.want)
		}
		if len(msg.Items)+len(msg.Rejected) != len(tc.alerts) {
			t.Errorf("%s: %d items and %d rejected for %d alerts: one went unaccounted", tc.name, len(msg.Items), len(msg.Rejected), len(tc.alerts))
		}
		found := false
		for _, r := range msg.Rejected {
			if r.Index == tc.wantReject {
				found = strings.Contains(r.Reason, "the later state ("+tc.want+") was kept")
			}
		}
		if !found {
			t.Errorf("%s: rejected %+v, want alerts[%d] rejected naming the state kept", tc.name, msg.Rejected, tc.wantReject)
		}
		if !slices.IsSortedFunc(msg.Rejected, func(a, b alert.Rejection) int { return a.Index - b.Index }) {
			t.Errorf("%s: rejections out of order: %+v", tc.name, msg.Rejected)
		}
	}
	// A fingerprint carried by another alert too (a clash, mended first)
	// and by two copies of one alert with different status: the copies are
	// judged under their mended fingerprint (this panicked, and the webhook
	// was answered 500 on every retry).
	msg, err := webhook.Decode([]byte(`{"version":"4","alerts":[`+
		`{"status":"firing","labels":{"alertname":"X"},"fingerprint":"f1","startsAt":"2026-12-05T00:00:00Z"},`+
		`{"status":"resolved","labels":{"alertname":"X"},"fingerprint":"f1","startsAt":"2026-12-05T00:00:00Z","endsAt":"2026-12-05T00:05:00Z"},`+
		`{"status":"firing","labels":{"alertname":"Y"},"fingerprint":"f1","startsAt":"2026-12-05T00:00:00Z"}]}`), receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	var xs []string
	for _, a := range msg.Items {
		if a.Labels["alertname"] == "X" {
			xs = append(xs, a.Status)
		}
	}
	if len(xs) != 1 || xs[0] != "resolved" || len(msg.Rejected) != 1 || msg.Rejected[0].Index != 0 {
		t.Errorf("a clash beside a status conflict: X kept %v, rejected %+v; want X once resolved, alerts[0] rejected", xs, msg.Rejected)
	}
	// The same alert twice with the same status stays as sent.
	msg, err = webhook.Decode([]byte(`{"version":"4","alerts":[`+firing("2026-12-05T00:00:00Z")+","+firing("2026-12-05T00:00:00Z")+`]}`), receivedAt)
	if err != nil || len(msg.Items) != 2 || len(msg.Rejected) != 0 {
		t.Errorf("an alert sent twice alike: %v, %d items, rejected %+v; want both kept", err, len(msg.Items), msg.Rejected)
	}
}

// A UTF-8 byte-order mark before the JSON (RFC 8259 §8.1 lets a parser
// ignore it) is skipped, not refused with a 400 that drops the page.
func TestDecodeSkipsAByteOrderMark(t *testing.T) {
	body := append([]byte("\xef\xbb\xbf"), webhooktest.ReadFixture(t, "firing.json")...)
	msg, err := webhook.Decode(body, receivedAt)
	if err != nil || len(msg.Items) != 2 {
		t.Fatalf("a body after a BOM: %v, %v; want its two alerts", err, msg)
	}
}

func TestDecodeReadsEveryAlertmanagerShape(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		check func(t *testing.T, m *alert.Message)
	}{
		{"v0.25 has no notification_reason nor routeLabels", "am-v0.25.json", func(t *testing.T, m *alert.Message) {
			if m.NotificationReason != "" || m.RouteLabels != nil {
				t.Errorf("NotificationReason = %q, RouteLabels = %v; want both empty", m.NotificationReason, m.RouteLabels)
			}
			if m.Receiver != "alertrouter" || m.ExternalURL == "" || m.GroupLabels["alertname"] != "NodeFilesystemAlmostFull" {
				t.Errorf("envelope not decoded: %+v", m.Data)
			}
		}},
		{"v0.34 carries notification_reason and routeLabels", "am-v0.34.json", func(t *testing.T, m *alert.Message) {
			if m.NotificationReason != "alert_group_changed" || m.RouteLabels["team"] != "storage" {
				t.Errorf("NotificationReason = %q, RouteLabels = %v", m.NotificationReason, m.RouteLabels)
			}
			if !m.Items[0].Firing() || m.Items[1].Firing() {
				t.Errorf("statuses = %s, %s; want firing, resolved", m.Items[0].Status, m.Items[1].Status)
			}
			if m.Items[1].EndsAt.IsZero() {
				t.Error("resolved alert lost its endsAt")
			}
		}},
		// Grafana's webhook contact point (grafana/alerting
		// receivers/webhook: version "1", orgId, title, state, message; per
		// alert silenceURL, dashboardURL, panelURL, values, valueString):
		// refused as a whole before, which Grafana does not retry.
		{"Grafana's webhook contact point (version 1 with orgId)", "grafana-v1.json", func(t *testing.T, m *alert.Message) {
			if len(m.Items) != 2 || !m.Items[0].Firing() || m.Items[0].Labels["alertname"] != "High memory usage" || m.Items[1].Labels["rulename"] != "High memory usage" {
				t.Fatalf("alerts not decoded: %+v", m.Items)
			}
			if m.ExternalURL != "" {
				t.Errorf("ExternalURL = %q, want none: Grafana's root is no Alertmanager to link silences and alert lists to", m.ExternalURL)
			}
			if m.Items[0].GeneratorURL == "" || m.Items[0].Annotations["runbook_url"] == "" {
				t.Errorf("the rule's links were lost: %+v", m.Items[0])
			}
			// Grafana's dashboardURL is the alert's dashboard link.
			if got := m.Items[0].Annotations["dashboard_url"]; got != "https://grafana.example/d/abc?orgId=1" {
				t.Errorf("dashboard_url %q, want Grafana's dashboardURL", got)
			}
		}},
		{"truncatedAlerts is kept", "truncated.json", func(t *testing.T, m *alert.Message) {
			if m.TruncatedAlerts != 5 || len(m.Items) != 5 {
				t.Errorf("TruncatedAlerts = %d, items = %d; want 5, 5", m.TruncatedAlerts, len(m.Items))
			}
		}},
		{"a hundred alerts all decode with their fingerprints", "hundred.json", func(t *testing.T, m *alert.Message) {
			if len(m.Items) != 100 {
				t.Fatalf("items = %d, want 100", len(m.Items))
			}
			seen := map[string]bool{}
			for _, a := range m.Items {
				seen[a.Fingerprint] = true
			}
			if len(seen) != 100 {
				t.Errorf("%d distinct fingerprints, want 100", len(seen))
			}
		}},
		{"version, groupKey and receipt time are kept", "mixed.json", func(t *testing.T, m *alert.Message) {
			if m.Version != "4" || !strings.Contains(m.GroupKey, "alertname") || !m.ReceivedAt.Equal(receivedAt) {
				t.Errorf("Version = %q, GroupKey = %q, ReceivedAt = %v", m.Version, m.GroupKey, m.ReceivedAt)
			}
			if m.Items[3].Labels["sloth_id"] != "gateway-availability" || m.Items[0].GeneratorURL == "" {
				t.Errorf("alert labels or webhooktest.GeneratorURL lost: %+v", m.Items[3])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := webhook.Decode(webhooktest.ReadFixture(t, tt.file), receivedAt)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, m)
		})
	}
}

func TestDecodeMendsStatusAndFingerprint(t *testing.T) {
	body := `{"version":"4","alerts":[
		{"status":"pending","labels":{"alertname":"A"},"startsAt":"2025-03-14T09:00:00Z","endsAt":"2025-03-14T09:30:00Z"},
		{"status":"firing","labels":{"alertname":"B"},"startsAt":"2025-03-14T09:00:00Z","endsAt":"soon"}]}`
	m, err := webhook.Decode([]byte(body), receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.Items[0], m.Items[1]
	if a.Status != "resolved" || !slices.Contains(a.Flags, alert.FlagStatusInvalid) {
		t.Errorf("alert A: status %q flags %v; want resolved (endsAt is past) flagged %s", a.Status, a.Flags, alert.FlagStatusInvalid)
	}
	if !slices.Contains(b.Flags, alert.FlagEndsAtInvalid) {
		t.Errorf("alert B flags %v, want %s", b.Flags, alert.FlagEndsAtInvalid)
	}
	if want := webhooktest.Fingerprint(map[string]string{"alertname": "A"}); a.Fingerprint != want || !slices.Contains(a.Flags, alert.FlagFingerprint) {
		t.Errorf("alert A webhooktest.Fingerprint %q flags %v; want computed %q", a.Fingerprint, a.Flags, want)
	}
}

// Two alerts under one fingerprint with different labels (a sender's
// defect: Alertmanager derives it from the labels) would be taken for one
// alert sent twice and the second never notified: each gets its labels'
// own fingerprint, flagged. The same alert twice stays as sent. Both the
// few-alert and the many-alert paths.
func TestDecodeMendsOneFingerprintOverDifferentLabels(t *testing.T) {
	for _, n := range []int{2, 40} {
		var alerts []string
		for i := range n {
			name, idx := "A", 0
			if i == 1 {
				name, idx = "B", 1
			}
			alerts = append(alerts, fmt.Sprintf(`{"status":"firing","labels":{"alertname":%q,"i":"%d"},"fingerprint":"0123456789abcdef"}`, name, idx))
		}
		m, err := webhook.Decode([]byte(`{"version":"4","alerts":[`+strings.Join(alerts, ",")+`]}`), receivedAt)
		if err != nil {
			t.Fatal(err)
		}
		a, b := m.Items[0], m.Items[1]
		wantA := webhooktest.Fingerprint(map[string]string{"alertname": "A", "i": "0"})
		wantB := webhooktest.Fingerprint(map[string]string{"alertname": "B", "i": "1"})
		if a.Fingerprint != wantA || b.Fingerprint != wantB || !slices.Contains(a.Flags, alert.FlagFingerprint) || !slices.Contains(b.Flags, alert.FlagFingerprint) {
			t.Fatalf("%d alerts: fingerprints %s %v, %s %v; want each its labels' (%s, %s), flagged", n, a.Fingerprint, a.Flags, b.Fingerprint, b.Flags, wantA, wantB)
		}
		for _, c := range m.Items[2:] {
			if c.Fingerprint != wantA {
				t.Fatalf("%d alerts: a copy of A has %s, want %s", n, c.Fingerprint, wantA)
			}
		}
	}
	m, err := webhook.Decode([]byte(`{"version":"4","alerts":[{"labels":{"alertname":"A"},"fingerprint":"0123456789abcdef"},{"labels":{"alertname":"A"},"fingerprint":"0123456789abcdef"}]}`), receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	if m.Items[0].Fingerprint != "0123456789abcdef" || m.Items[1].Fingerprint != "0123456789abcdef" || slices.Contains(m.Items[1].Flags, alert.FlagFingerprint) {
		t.Fatalf("the same alert twice: %+v, want both as sent", m.Items)
	}
}

func TestIsJSONContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"Application/JSON":                  true,
		"application/vnd.api+json":          true,
		"text/plain":                        false,
		"":                                  false,
		"application/x-www-form-urlencoded": false,
	} {
		if got := webhook.IsJSONContentType(ct); got != want {
			t.Errorf("IsJSONContentType(%q) = %v, want %v", ct, got, want)
		}
	}
}

// bigPayload renders n copies of base with distinct instances.
func bigPayload(tb testing.TB, n int, base webhooktest.Alert) []byte {
	alerts := make([]webhooktest.Alert, n)
	for i := range alerts {
		labels := make(map[string]string, len(base.Labels))
		for k, v := range base.Labels {
			labels[k] = v
		}
		labels["instance"] = fmt.Sprintf("gpu-node-%06d:8000", i)
		a := base
		a.Labels = labels
		a.Fingerprint = webhooktest.Fingerprint(labels)
		alerts[i] = a
	}
	b, err := json.Marshal(webhooktest.Msg("firing", alerts...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestDecodeHandlesAHundredThousandAlertsWithinTheBodyLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("100k-alert payload skipped under -short")
	}
	const limit = 64 << 20
	small := webhooktest.MkAlert("firing",
		map[string]string{"alertname": "TargetDown", "job": "node-exporter", "instance": "x", "severity": "warning", "service": "fleet"},
		map[string]string{"summary": "node-exporter target is down"},
		`up{job="node-exporter"} == 0`, webhooktest.Start)
	body := bigPayload(t, 100_000, small)
	if len(body) > limit {
		t.Fatalf("payload is %d bytes, over the 64 MiB limit", len(body))
	}
	m, err := webhook.Decode(body, receivedAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Items) != 100_000 || len(m.Rejected) != 0 {
		t.Errorf("items = %d, rejected = %d; want 100000, 0", len(m.Items), len(m.Rejected))
	}
}

// FuzzDecode checks that Decode never panics and accounts for every alert:
// either the payload is rejected whole, or each element of its alerts array
// is decoded or rejected.
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(webhooktest.Dir, "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 16<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"version":"4","alerts":[null,{},{"labels":{"a":"\xff"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := webhook.Decode(body, receivedAt)
		if err != nil {
			var ie *webhook.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Decode returned %T %v, want *InputError", err, err)
			}
			if ie.Status < 400 || ie.Status > 499 {
				t.Fatalf("InputError status %d is not a 4xx", ie.Status)
			}
			return
		}
		var arr struct{ Alerts []json.RawMessage }
		if err := json.Unmarshal(body, &arr); err != nil {
			t.Fatalf("Decode accepted a body whose alerts array does not decode: %v", err)
		}
		if got := len(m.Items) + len(m.Rejected); got != len(arr.Alerts) {
			t.Fatalf("items %d + rejected %d = %d, want the %d alerts of the payload", len(m.Items), len(m.Rejected), got, len(arr.Alerts))
		}
		for _, a := range m.Items {
			if len(a.Labels) == 0 || a.Fingerprint == "" || (a.Status != "firing" && a.Status != "resolved") {
				t.Fatalf("decoded alert is not usable: %+v", a)
			}
		}
	})
}

func benchPayloads(b *testing.B) map[int][]byte {
	base := webhooktest.TTFTAlert("firing", "x")
	return map[int][]byte{1: bigPayload(b, 1, base), 10: bigPayload(b, 10, base), 100: bigPayload(b, 100, base)}
}

func BenchmarkDecode(b *testing.B) {
	payloads := benchPayloads(b)
	for _, n := range []int{1, 10, 100} {
		body := payloads[n]
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := webhook.Decode(body, receivedAt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJSONFloor is encoding/json decoding the same payloads into
// Alertmanager's own template.Data: the floor Decode is measured against.
func BenchmarkJSONFloor(b *testing.B) {
	payloads := benchPayloads(b)
	for _, n := range []int{1, 10, 100} {
		body := payloads[n]
		b.Run(fmt.Sprintf("alerts=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var d struct {
					template.Data
					Version         string `json:"version"`
					GroupKey        string `json:"groupKey"`
					TruncatedAlerts uint64 `json:"truncatedAlerts"`
				}
				if err := json.Unmarshal(body, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Rule files that write their text under other names: kubernetes-mixin's
// message (before summary and description), GitLab's title. Their text
// reached no notification: PagerDuty's summary was the alert's name, the
// Slack card had no text.
func TestTextUnderOtherNamesFillsSummaryAndDescription(t *testing.T) {
	for _, tc := range []struct {
		name              string
		ann               string
		summary, descript string
	}{
		{"message alone", `{"message":"Pod shop/checkout is restarting 2.35 times / 5 minutes."}`, "Pod shop/checkout is restarting 2.35 times / 5 minutes.", ""},
		{"title and message", `{"title":"Sidekiq uses most PgBouncer connections","message":"152 of 160 in use"}`, "Sidekiq uses most PgBouncer connections", "152 of 160 in use"},
		{"summary and message", `{"summary":"S","message":"M"}`, "S", "M"},
		{"the rule's own summary and description stay", `{"summary":"S","description":"D","title":"T","message":"M"}`, "S", "D"},
	} {
		body := `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"A"},"annotations":` + tc.ann + `,"startsAt":"2026-12-05T10:00:00Z"}]}`
		m, err := webhook.Decode([]byte(body), receivedAt)
		if err != nil {
			t.Fatal(err)
		}
		an := m.Items[0].Annotations
		if an["summary"] != tc.summary || an["description"] != tc.descript {
			t.Errorf("%s: summary %q, description %q; want %q, %q", tc.name, an["summary"], an["description"], tc.summary, tc.descript)
		}
	}
}

// A field that does not identify the alert, of the wrong JSON type
// (`"annotations": []`, what PHP's json_encode writes for an empty map; a
// number where a string belongs), is dropped and flagged and the alert
// kept: rejected alone, its page was lost (the webhook answered 2xx). Labels
// of the wrong type still reject the alert.
func TestDecodeDropsAMistypedFieldThatIdentifiesNothing(t *testing.T) {
	body := `{"version":"4","status":"firing","receiver":"r","alerts":[
{"status":"firing","labels":{"alertname":"A"},"annotations":[],"startsAt":"2025-03-14T09:00:00Z"},
{"status":"firing","labels":{"alertname":"B"},"annotations":{"summary":5,"runbook_url":"https://r"},"startsAt":"2025-03-14T09:00:00Z","generatorURL":7},
{"status":"firing","labels":{"alertname":"C"},"STARTSAT":12345,"status":1},
{"status":"firing","labels":{"alertname":"D"},"Annotations":[],"startsAt":"2025-03-14T09:00:00Z"},
{"status":"firing","labels":5,"annotations":[]},
{"status":"firing","labels":{},"startsAt":12345}]}`
	msg, err := webhook.Decode([]byte(body), receivedAt)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(msg.Items) != 4 || len(msg.Rejected) != 2 || msg.Rejected[0].Index != 4 || !strings.Contains(msg.Rejected[0].Reason, "alerts[4].labels") ||
		msg.Rejected[1].Index != 5 || !strings.Contains(msg.Rejected[1].Reason, "without labels") {
		t.Fatalf("decoded %d alerts, rejected %+v; want A to D kept, the alerts with numeric and empty labels rejected", len(msg.Items), msg.Rejected)
	}
	want := []struct {
		name  string
		flags []string
	}{
		{"A", []string{alert.FlagAnnotationsInvalid}},
		{"B", []string{alert.FlagAnnotationsInvalid, alert.FlagGeneratorURLInvalid}},
		{"C", []string{alert.FlagStartsAtInvalid, alert.FlagStatusInvalid}},
		{"D", []string{alert.FlagAnnotationsInvalid}}, // keys match in any case, as encoding/json matches them
	}
	for i, w := range want {
		a := msg.Items[i]
		got := slices.DeleteFunc(slices.Clone(a.Flags), func(f string) bool { return f == alert.FlagFingerprint })
		slices.Sort(got)
		slices.Sort(w.flags)
		if a.Labels["alertname"] != w.name || !slices.Equal(got, w.flags) {
			t.Errorf("alert %d: %s flagged %v, want %s flagged %v", i, a.Labels["alertname"], a.Flags, w.name, w.flags)
		}
	}
	if b := msg.Items[1]; b.Annotations["runbook_url"] != "https://r" || b.Annotations["summary"] != "" || b.GeneratorURL != "" {
		t.Errorf("B's annotations %v, generatorURL %q; want the numeric summary alone dropped", b.Annotations, b.GeneratorURL)
	}
	if c := msg.Items[2]; !c.StartsAt.Equal(receivedAt) || c.Status != "firing" {
		t.Errorf("C starts %v, status %q; want the time of receipt and firing", c.StartsAt, c.Status)
	}
	// The only alert has a mistyped field and no labels: a 400, never a
	// panic (the fuzzer found one).
	_, err = webhook.Decode([]byte(`{"version":"4","alerts":[{"labels":{},"annotations":[]}]}`), receivedAt)
	if err == nil || !strings.Contains(err.Error(), "without labels") {
		t.Errorf("an unlabelled alert with mistyped annotations: %v, want a 400 naming its missing labels", err)
	}
}
