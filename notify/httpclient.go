package notify

import (
	"fmt"
	"net/http"
	"time"

	commoncfg "github.com/prometheus/common/config"
)

// HTTPClient builds the http.Client of an outbound integration from its
// Alertmanager-style http_config (proxy, TLS, authorization, OAuth2; nil
// means the defaults) with an explicit timeout per request. name labels
// the client in prometheus/common's round trippers.
func HTTPClient(cfg *commoncfg.HTTPClientConfig, name string, timeout time.Duration) (*http.Client, error) {
	c := commoncfg.DefaultHTTPClientConfig
	if cfg != nil {
		c = *cfg
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	client, err := commoncfg.NewClientFromConfig(c, name)
	if err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	client.Timeout = timeout
	return client, nil
}
