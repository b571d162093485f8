package notify

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"
)

// HTTPClient builds the http.Client of an outbound integration from its
// Alertmanager-style http_config (proxy, TLS, authorization, OAuth2; nil
// means the defaults) with an explicit timeout per request. name labels
// the client in prometheus/common's round trippers. Every file the
// http_config names is read first (CheckHTTPFiles): its errors name the
// key, from "http_config." on.
func HTTPClient(cfg *commoncfg.HTTPClientConfig, name string, timeout time.Duration) (*http.Client, error) {
	c := commoncfg.DefaultHTTPClientConfig
	if cfg != nil {
		c = *cfg
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	if err := CheckHTTPFiles(&c); err != nil {
		return nil, err
	}
	client, err := commoncfg.NewClientFromConfig(c, name)
	if err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	client.Timeout = timeout
	if c.FollowRedirects {
		client.CheckRedirect = KeepCredentialsHome
	}
	return client, nil
}

// KeepCredentialsHome is the redirect policy of the outbound clients
// (http.Client.CheckRedirect): Go's (at most 10 redirects), but none to
// another host, and none from https to http. A 307 or 308 sends a POST's
// body — a PagerDuty routing key, a Slack token — again to where it
// points, and prometheus/common adds the http_config's credentials
// (basic_auth, authorization, headers) to every request, a redirected GET's
// too; Go drops only its own Authorization header across hosts (an audit
// saw the token, the routing key and Alertmanager's basic auth reach the
// host a redirect named). A redirect within the host (another path, port,
// http to https) is followed.
func KeepCredentialsHome(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	from := via[0].URL
	if !sameHost(req.URL.Hostname(), from.Hostname()) {
		return fmt.Errorf("refused a redirect to another host (%s): the request's credentials (a routing key, a token, the http_config's) would go there; configure the URL it redirects to", req.URL.Hostname())
	}
	if strings.EqualFold(from.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
		return errors.New("refused a redirect from https to http: the request's credentials would go unencrypted")
	}
	return nil
}

// sameHost reports whether host names a and b are one host: equal but for
// case and a trailing dot, or the same IP address however written.
func sameHost(a, b string) bool {
	a, b = strings.TrimSuffix(a, "."), strings.TrimSuffix(b, ".")
	if ia, err := netip.ParseAddr(a); err == nil {
		ib, err := netip.ParseAddr(b)
		return err == nil && ia.Unmap() == ib.Unmap()
	}
	return strings.EqualFold(a, b)
}

// CloseIdleConnections closes the idle connections rt keeps, when it is
// an http.Transport or a round tripper that passes the call on (as
// prometheus/common's do): a round tripper wrapping another implements
// CloseIdleConnections with it, or http.Client.CloseIdleConnections does
// nothing.
func CloseIdleConnections(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// CheckHTTPFiles reads every file of the http_config cfg (nil: none) as
// its first request would, and returns, joined, one error per file that
// is missing, unreadable or empty (ReadSecret), or whose TLS material does
// not load, each prefixed by its YAML path from "http_config." on:
// basic_auth.{username,password}_file, authorization.credentials_file,
// bearer_token_file, oauth2.client_secret_file,
// oauth2.client_certificate_key_file, tls_config.{ca,cert,key}_file (and
// oauth2.tls_config's), http_headers.NAME.files. prometheus/common reads
// the secret files only when a request is sent, so without this a missing
// one would pass check-config and start, and fail every notification.
func CheckHTTPFiles(cfg *commoncfg.HTTPClientConfig) error {
	if cfg == nil {
		return nil
	}
	var errs []error
	file := func(path, name string) {
		if name == "" {
			return
		}
		if _, err := ReadSecret("", name); err != nil {
			errs = append(errs, fmt.Errorf("http_config.%s: %w", path, err))
		}
	}
	if ba := cfg.BasicAuth; ba != nil {
		file("basic_auth.username_file", ba.UsernameFile)
		file("basic_auth.password_file", ba.PasswordFile)
	}
	if a := cfg.Authorization; a != nil {
		file("authorization.credentials_file", a.CredentialsFile)
	}
	file("bearer_token_file", cfg.BearerTokenFile)
	if o := cfg.OAuth2; o != nil {
		file("oauth2.client_secret_file", o.ClientSecretFile)
		file("oauth2.client_certificate_key_file", o.ClientCertificateKeyFile)
		errs = append(errs, checkTLSFiles("oauth2.tls_config", &o.TLSConfig)...)
	}
	errs = append(errs, checkTLSFiles("tls_config", &cfg.TLSConfig)...)
	if h := cfg.HTTPHeaders; h != nil {
		names := make([]string, 0, len(h.Headers))
		for n := range h.Headers {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			for i, f := range h.Headers[n].Files {
				file(fmt.Sprintf("http_headers.%s.files[%d]", n, i), f)
			}
		}
	}
	return errors.Join(errs...)
}

// checkTLSFiles reads the files of the TLS config at path and, when all
// can be read, loads them as prometheus/common does when it builds the
// client (a CA that is no PEM certificate, a key that does not match its
// certificate).
func checkTLSFiles(path string, c *commoncfg.TLSConfig) []error {
	var errs []error
	for _, f := range []struct{ key, name string }{{"ca_file", c.CAFile}, {"cert_file", c.CertFile}, {"key_file", c.KeyFile}} {
		if f.name == "" {
			continue
		}
		if _, err := ReadSecret("", f.name); err != nil {
			errs = append(errs, fmt.Errorf("http_config.%s.%s: %w", path, f.key, err))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if _, err := commoncfg.NewTLSConfig(c); err != nil {
		return []error{fmt.Errorf("http_config.%s: %w", path, err)}
	}
	return nil
}

// Proxied reports whether a client of the http_config cfg (nil: the
// defaults) goes through a proxy: proxy_url or proxy_from_environment.
func Proxied(cfg *commoncfg.HTTPClientConfig) bool {
	return cfg != nil && (cfg.ProxyURL.URL != nil && cfg.ProxyURL.String() != "" || cfg.ProxyFromEnvironment)
}

// ProxyRefused returns err, a request's transport error, saying that the
// proxy refused when it is the refusal of a tunnel (CONNECT) by the
// client's proxy, proxied says there is one (Proxied). Go's transport
// says only the status text of the proxy's answer ("Forbidden", "Proxy
// Authentication Required"), which reads as the remote service refusing.
// Any other err is returned as it is.
func ProxyRefused(err error, proxied bool) error {
	if err == nil || !proxied {
		return err
	}
	inner := err
	for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
		inner = u
	}
	text := inner.Error()
	for code := 400; code < 600; code++ {
		if http.StatusText(code) == text {
			return fmt.Errorf("the proxy refused the connection (CONNECT answered %d %s: check http_config's proxy settings and the proxy's access rules and credentials): %w", code, text, err)
		}
	}
	return err
}
