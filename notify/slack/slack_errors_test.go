package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alertrouter/alertrouter/internal/slacktest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// A Slack error about the token, the app or the channel is a configuration
// error: answered at once as permanent (502 to Alertmanager, a dead
// letter), saying what to do, instead of retried as an outage. Before,
// access_denied, team_access_not_granted, ekm_access_denied … were
// retried five times and answered 503 forever, and every permanent error
// said its bare code ("not_in_channel").
func TestAConfigurationErrorOfSlackIsPermanentAndSaysWhatToDo(t *testing.T) {
	for code, want := range map[string]string{
		"not_in_channel":          "invite it (/invite @app)",
		"channel_not_found":       "invite the app to it; check channel",
		"is_archived":             "the channel is archived",
		"token_revoked":           "update token / token_file",
		"invalid_auth":            "check token / token_file",
		"missing_scope":           "chat:write",
		"access_denied":           "may not reach",
		"team_access_not_granted": "grant it",
		"ekm_access_denied":       "Enterprise Key Management",
	} {
		h := newHarness(t)
		h.srv.Fail(slacktest.Fault{Error: code}, slacktest.Fault{Error: code})
		err := h.notifier(t, nil).Notify(context.Background(), opening("aaa"))
		if err == nil || alert.Retryable(err) || !strings.Contains(err.Error(), code) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Notify = %v, want a permanent error naming it and saying %q", code, err, want)
		}
		if c := h.srv.Calls("chat.postMessage"); c != 1 {
			t.Errorf("%s: %d posts, want 1 (not retried)", code, c)
		}
	}
	// Slack's own trouble stays retryable (fatal_error and internal_error
	// too, but a post they answer is not repeated at once: below).
	for _, code := range []string{"service_unavailable", "request_timeout", "org_login_required"} {
		h := newHarness(t)
		h.srv.Fail(slacktest.Fault{Error: code})
		if err := h.notifier(t, nil).Notify(context.Background(), opening("aaa")); err != nil {
			t.Errorf("%s once, then ok: Notify = %v, want it retried", code, err)
		}
	}
}

// Slack's reference says of fatal_error and internal_error that the
// operation may have succeeded before the error: a post they answer was
// posted again at once, and the channel held two parents of one incident,
// the first never updated or resolved. The post is not repeated before
// Alertmanager's retry (an unknown outcome, answered 5xx); other calls and
// other codes are retried as before.
func TestAPostSlackMayHaveMadeIsNotPostedAgainAtOnce(t *testing.T) {
	for _, code := range []string{"fatal_error", "internal_error"} {
		h := newHarness(t)
		h.srv.Fail(slacktest.Fault{Error: code, Applied: true})
		err := h.notifier(t, nil).Notify(context.Background(), opening("aaa"))
		if err == nil || !alert.Retryable(err) || !strings.Contains(err.Error(), code) {
			t.Errorf("%s: Notify = %v, want a retryable error naming it (Alertmanager retries)", code, err)
		}
		if got := len(h.srv.Parents()); got != 1 {
			t.Errorf("%s: %d parent messages, want 1 (the post Slack made, not posted again)", code, got)
		}
	}
}
