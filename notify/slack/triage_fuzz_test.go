package slack_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// Whatever arrives signed at /slack/interactions — an interaction payload
// in a shape the router never sent, a slash command with any text — is
// answered 200 or 400, and the work done after the answer (claims, Slack
// and PagerDuty calls, the answer through response_url) ends without a
// panic: that work runs in its own goroutine, where a panic would take the
// whole router down with every page in flight.
func FuzzSignedInteraction(f *testing.F) {
	e := newTriageEnv(f, alert.ActionPage, nil)
	tr := e.replica(f, nil, nil)
	for i, id := range buttons(f, e.parent) {
		body, err := e.h.srv.Interaction(e.parent, slacktest.Click{User: "U123", UserName: "jdoe", ActionID: id, ActionTS: "1700000100.00000" + string(rune('1'+i))})
		if err != nil {
			f.Fatal(err)
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(form.Get("payload"), "")
	}
	f.Add(`{"type":"block_actions","actions":[{"action_id":"alertrouter:ack","block_id":"b","value":"{\"r\":\"triage\"}"}]}`, "")
	f.Add(`{"type":"block_actions","actions":[null,{}],"container":{},"message":{}}`, "")
	f.Add(`{"type":"view_submission"}`, "")
	f.Add("not json", "")
	for _, text := range []string{"", "help", "status llm-inference-gpu/chat/TTFT", "incident x y z", "journal 67c3e28cf708fa00"} {
		f.Add("", "/alertrouter "+text)
	}
	f.Fuzz(func(t *testing.T, payload, command string) {
		var body []byte
		if cmd, text, _ := strings.Cut(command, " "); cmd != "" {
			// The command's response_url is the stand-in's (slacktest.Command).
			body = e.h.srv.Command(slacktest.SlashCommand{Command: cmd, Text: text, User: "U123", UserName: "jdoe", Channel: "C0TRIAGE", TriggerID: "fuzz"})
		} else {
			// The router answers through the payload's response_url: keep
			// the fuzzer's requests on the stand-in (loopback only). The
			// router reads the payload with the same library and options.
			var cb sl.InteractionCallback
			if json.Unmarshal([]byte(payload), &cb) == nil && cb.ResponseURL != "" && !strings.HasPrefix(cb.ResponseURL, e.h.srv.URL+"/") {
				t.Skip("response_url off the stand-in")
			}
			body = []byte(url.Values{"payload": {payload}}.Encode())
		}
		code := e.send(t, tr, slacktest.Sign(signingSecret, e.now(), body), body, nil)
		if code != http.StatusOK && code != http.StatusBadRequest {
			t.Fatalf("answered %d, want 200 or 400", code)
		}
	})
}
