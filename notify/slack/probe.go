package slack

import (
	"context"
	"errors"
	"fmt"

	sl "github.com/slack-go/slack"

	"github.com/alertrouter/alertrouter/notify"
)

// Probe checks the entry without posting (`router check-config --probe`):
// auth.test with its token through its HTTP client (proxy, TLS, DNS), and
// describes the workspace and bot it answers for. An incoming webhook has
// no call that does not post: it is not probed.
func (n *Notifier) Probe(ctx context.Context) (string, error) {
	if n.api == nil {
		return "incoming webhook: not probed (every request to it posts a message)", nil
	}
	r, err := n.api.AuthTestContext(ctx)
	if err != nil {
		var se sl.SlackErrorResponse
		if errors.As(err, &se) && errorHints[se.Err] != "" {
			// What to do, as a notification failing with it says.
			return "", fmt.Errorf("auth.test: %w — %s", err, errorHints[se.Err])
		}
		return "", notify.ProxyRefused(fmt.Errorf("auth.test: %w", err), notify.Proxied(n.cfg.HTTPConfig))
	}
	return fmt.Sprintf("auth.test: team %q, bot user %q", r.Team, r.User), nil
}
