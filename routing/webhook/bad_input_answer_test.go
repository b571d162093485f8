package webhook_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/routing/webhook"
)

// A webhook that cannot be read is answered 400 with a JSON body naming
// the field at fault beside the reason, so whoever wrote the sender (a
// script, a gateway) sees what to fix; nothing of it is processed.
func TestABadWebhookIsAnswered400NamingTheField(t *testing.T) {
	s := startEdgeWith(t, webhook.EdgeOptions{MaxBodyBytes: 1 << 20}, slog.New(slog.DiscardHandler), 0)
	for _, tt := range []struct{ body, field, msg string }{
		{`{"version":"4","alerts":"A"}`, "alerts", "expected JSON array"},
		{`{"version":"3","alerts":[{"labels":{"alertname":"A"}}]}`, "version", `unsupported version "3"`},
		{`{"version":"4","alerts":[`, "", "malformed JSON"},
	} {
		resp, err := http.Post(s.url+"/webhook", "application/json", strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got struct{ Error, Field string }
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusBadRequest ||
			got.Field != tt.field || !strings.Contains(got.Error, tt.msg) {
			t.Errorf("%s: answered %d %s; want 400 naming field %q and %q", tt.body, resp.StatusCode, b, tt.field, tt.msg)
		}
	}
	if n := len(s.p.processed()); n != 0 {
		t.Errorf("%d bad webhooks processed, want none", n)
	}
}
