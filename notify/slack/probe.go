package slack

import (
	"context"
	"fmt"

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
		return "", notify.ProxyRefused(fmt.Errorf("auth.test: %w", err), notify.Proxied(n.cfg.HTTPConfig))
	}
	return fmt.Sprintf("auth.test: team %q, bot user %q", r.Team, r.User), nil
}
