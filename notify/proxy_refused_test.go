package notify

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// Go's transport says only the status text of a proxy refusing a CONNECT
// ("Forbidden"): with a proxy configured, the error says the proxy
// refused; without one, or for any other error, it is left as it is.
func TestProxyRefused(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "https://slack.com/api/chat.postMessage", Err: errors.New("Proxy Authentication Required")}
	if err := ProxyRefused(refused, true); !strings.Contains(err.Error(), "the proxy refused the connection (CONNECT answered 407 Proxy Authentication Required") || !errors.Is(err, refused.Err) {
		t.Errorf("proxied: %v, want it to name the proxy's refusal and wrap the error", err)
	}
	if err := ProxyRefused(refused, false); err != refused {
		t.Errorf("without a proxy: %v, want the error as it is", err)
	}
	other := &url.Error{Op: "Post", URL: "https://slack.com/api/chat.postMessage", Err: errors.New("dial tcp: connection refused")}
	if err := ProxyRefused(other, true); err != other {
		t.Errorf("another error: %v, want it as it is", err)
	}
}
