package pagerduty

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/alertrouter/alertrouter/notify"
)

// Probe checks, without sending an event, that PagerDuty's events endpoint
// answers through the entry's HTTP client — its proxy, TLS settings and
// DNS: a GET of the events URL (`router check-config --probe`). Any HTTP
// answer proves the way there and is described; no answer is the error.
// The routing key cannot be checked without an event.
func (n *Notifier) Probe(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(n.cfg.Timeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.cfg.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := n.client.HTTPClient.Do(req)
	if err != nil {
		return "", notify.ProxyRefused(fmt.Errorf("GET %s: %w", n.cfg.URL, err), notify.Proxied(n.cfg.HTTPConfig))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return fmt.Sprintf("%s answered HTTP %d to a GET (reachable; the routing key is checked only by an event)", n.cfg.URL, resp.StatusCode), nil
}
