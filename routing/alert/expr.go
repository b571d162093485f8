package alert

import (
	"net/url"
	"strings"
)

// GeneratorExpr returns the PromQL expression of the g0.expr query
// parameter of a Prometheus generatorURL, URL-decoded, or "" when there is
// none or it cannot be decoded. It allocates only the decoded string. The
// classifier reads the expression through it (with a cache), and the
// heartbeat policy.
func GeneratorExpr(u string) string {
	q := strings.IndexByte(u, '?')
	if q < 0 {
		return ""
	}
	rest := u[q+1:]
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		rest = rest[:h]
	}
	for rest != "" {
		var param string
		param, rest, _ = strings.Cut(rest, "&")
		if v, ok := strings.CutPrefix(param, "g0.expr="); ok {
			if strings.IndexByte(v, '%') < 0 && strings.IndexByte(v, '+') < 0 {
				return v
			}
			dec, err := url.QueryUnescape(v)
			if err != nil {
				return ""
			}
			return dec
		}
	}
	return ""
}
