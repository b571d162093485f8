package slack

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify/amsilence"
)

// The answers the buttons and the slash command share (unconfirmedAnswer,
// answerFailed, answerLookupFailed) say what to do: an
// unconfirmed silence says the same thing from both, the button adding
// only what is about its message; a failure says "Try again" only when a
// retry may pass.
func TestTheSharedAnswersSayWhatToDo(t *testing.T) {
	err := errors.New("context deadline exceeded")
	cmd, click := unconfirmedAnswer(ActionSilence, "inc/<1>", err, false), unconfirmedAnswer(ActionSilence, "inc/<1>", err, true)
	if !strings.HasPrefix(click, strings.TrimSuffix(cmd, ".")) || !strings.Contains(click, "not on this message") || strings.Contains(cmd, "message") {
		t.Errorf("slash command: %q\nbutton: %q\nwant the same answer, the button's adding what is about its message", cmd, click)
	}
	if !strings.Contains(cmd, "may have been done") || !strings.Contains(cmd, "`inc/&lt;1&gt;`") {
		t.Errorf("answer %q", cmd)
	}
	if a := answerFailed("Silence", &amsilence.HTTPError{Status: 503}); !strings.HasSuffix(a, "Try again in a moment.") {
		t.Errorf("a 503: %q, want Try again", a)
	}
	if a := answerFailed("Silence", &amsilence.HTTPError{Status: 400}); strings.Contains(a, "Try again") {
		t.Errorf("a 400: %q, want no Try again", a)
	}
	if a := answerLookupFailed("silence incidents", errors.New("ratelimited")); !strings.HasSuffix(a, "nothing was done. Try again.") {
		t.Errorf("lookup failed: %q", a)
	}
	// A group Slack does not know is the configuration's error: trying
	// again never helps (it said "Try again").
	if a := answerLookupFailed("silence incidents", fmt.Errorf("user group S1: %w", sl.SlackErrorResponse{Err: "no_such_subteam"})); strings.Contains(a, "Try again") || !strings.Contains(a, "authorized list") {
		t.Errorf("unknown user group: %q, want the configuration named and no Try again", a)
	}
}
