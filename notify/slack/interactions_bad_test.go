package slack_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Signed bodies that are no interaction get a 400 naming the problem, in
// words (not Go's type names), and nothing is done; the interaction types
// the router does not handle are answered 200 (Slack shows the user an
// error for anything else), and so is a click.
func TestSignedBodiesThatAreNoInteractionGetA400NamingTheProblem(t *testing.T) {
	e := newTriageEnv(t, alert.ActionPage, nil)
	tr := e.replica(t, nil, nil)
	click, err := e.h.srv.Interaction(e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: "alertrouter:ack", ActionTS: "1700002400.000001"})
	if err != nil {
		t.Fatal(err)
	}
	form := func(payload string) string { return url.Values{"payload": {payload}}.Encode() }
	for _, tc := range []struct {
		name, path, body string
		code             int
		want             string
	}{
		{"a null payload", "/slack/interactions", form("null"), http.StatusBadRequest, "payload is not a JSON object"},
		{"an array payload", "/slack/interactions", form("[1,2,3]"), http.StatusBadRequest, "payload is not a JSON object"},
		{"a string payload", "/slack/interactions", form(`"block_actions"`), http.StatusBadRequest, "payload is not a JSON object"},
		{"a payload that is not JSON", "/slack/interactions", form("{not json"), http.StatusBadRequest, "payload is not valid JSON"},
		{"a payload with no type", "/slack/interactions", form(`{"actions":[]}`), http.StatusBadRequest, "payload has no type"},
		{"block actions holding null", "/slack/interactions", form(`{"type":"block_actions","actions":[null,{}]}`), http.StatusBadRequest, "payload: actions[0] is not an object"},
		{"block actions without actions", "/slack/interactions", form(`{"type":"block_actions"}`), http.StatusBadRequest, "block_actions without actions"},
		{"a field of the wrong type", "/slack/interactions", form(`{"type":"block_actions","actions":[{"action_id":"alertrouter:ack","block_id":"b"}],"user":{"id":7}}`), http.StatusBadRequest, "payload: user.id is a JSON number"},
		{"a payload that is not UTF-8", "/slack/interactions", form(`{"type":"block_actions","channel":{"name":"` + "\xff\xfe" + `alerts"},"actions":[{"action_id":"alertrouter:ack","block_id":"b"}]}`), http.StatusBadRequest, "payload is not valid UTF-8"},
		{"no payload", "/slack/interactions", "token=x", http.StatusBadRequest, "no payload parameter"},
		{"a command request without a command", "/slack/commands", "token=x&text=hi", http.StatusBadRequest, "no command parameter"},
		{"an empty command", "/slack/commands", "command=&text=x", http.StatusBadRequest, "no command parameter"},
		{"an empty body to the command URL", "/slack/commands", "", http.StatusBadRequest, "no command parameter"},
		{"a modal's submission", "/slack/interactions", form(`{"type":"view_submission","view":{"id":"V1"}}`), http.StatusOK, ""},
		{"a message shortcut", "/slack/interactions", form(`{"type":"message_action","callback_id":"x"}`), http.StatusOK, ""},
		{"a click", "/slack/interactions", string(click), http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			req, err := slacktest.NewRequest("http://router"+tc.path, slacktest.Sign(signingSecret, e.now(), body), body)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			tr.ServeHTTP(rec, req)
			tr.Wait()
			got := strings.TrimSpace(rec.Body.String())
			if rec.Code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("answered %d %q, want %d %q", rec.Code, got, tc.code, tc.want)
			}
			for _, goism := range []string{"Go value", "Go struct", "slack.", "struct {", "json:"} {
				if strings.Contains(got, goism) {
					t.Errorf("answer %q names Go's internals (%q)", got, goism)
				}
			}
		})
	}
	// Only the click did something.
	if r := e.h.srv.Responses(); len(r) != 0 {
		t.Errorf("answers %+v, want none (only the click acted, and it answers nothing)", r)
	}
	if n := len(e.h.srv.Thread(e.parent.TS)); n != 1 {
		t.Errorf("thread has %d replies, want 1 (the click's)", n)
	}
}
