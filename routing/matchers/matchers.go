// Package matchers parses Alertmanager matchers as Alertmanager v0.35 does
// by default, for every place the router reads them: a route's `matchers`,
// a classifier rule's, and the route part of a webhook's groupKey.
package matchers

import (
	"log/slog"

	"github.com/prometheus/alertmanager/matcher/compat"
	"github.com/prometheus/alertmanager/pkg/labels"
)

// parse is the parser Alertmanager v0.35 uses for a route's `matchers` by
// default (no feature flag): the UTF-8 parser (`"service.name"="checkout"`),
// falling back to the classic one for inputs only it accepts
// (`foo=~bar|baz`), and taking the classic result where both parse an input
// differently. Alertmanager logs those cases; here the logger discards them.
var parse = compat.FallbackMatchersParser(slog.New(slog.DiscardHandler))

// Parse parses one line of matchers, with or without braces, as Alertmanager
// v0.35 does by default: classic matchers and UTF-8 ones (quoted or dotted
// label names) both. Alertmanager 0.28 and later also write a route's
// matchers so in a webhook's groupKey (`{}/{k8s.namespace.name="shop"}:…`).
func Parse(s string) (labels.Matchers, error) {
	return parse(s, "config")
}
