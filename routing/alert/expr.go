package alert

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// GeneratorExpr returns the rule's expression a generatorURL carries, or
// "" when there is none or it cannot be decoded: the g0.expr query
// parameter of Prometheus' /graph link (and of the Thanos and Mimir
// rulers', vmui's), URL-decoded — allocating only the decoded string —,
// else the first query's expr of a Grafana Explore link's left or panes
// JSON, which the Loki ruler always sends (`/explore?left={"queries":
// [{"expr":…}]}`) and vmalert sends when its -external.alert.source
// points at Grafana: LogQL or MetricsQL there. The classifier reads the
// expression through it (with a cache), and the heartbeat policy.
func GeneratorExpr(u string) string {
	q := strings.IndexByte(u, '?')
	if q < 0 {
		return ""
	}
	rest := u[q+1:]
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		rest = rest[:h]
	}
	explore := ""
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
		if explore == "" && (strings.HasPrefix(param, "left=") || strings.HasPrefix(param, "panes=")) {
			explore = param[strings.IndexByte(param, '=')+1:]
		}
	}
	if explore == "" {
		return ""
	}
	dec, err := url.QueryUnescape(explore)
	if err != nil {
		return ""
	}
	var state any
	if json.Unmarshal([]byte(dec), &state) != nil {
		return ""
	}
	return exploreExpr(state)
}

// exploreExpr returns the expression of a Grafana Explore state: the
// first query (not hidden) with a string expr of left's {"queries":[…]}, of
// its older array form (["now-1h","now","Loki",{"expr":…}]), or of panes'
// map of panes each holding queries (panes by sorted id: a map's order is
// random). Nothing else is searched: an expr under a datasource, or one
// that is no string, is no query's.
func exploreExpr(state any) string {
	switch v := state.(type) {
	case []any:
		return firstQueryExpr(v)
	case map[string]any:
		if qs, ok := v["queries"].([]any); ok {
			return firstQueryExpr(qs)
		}
		ids := make([]string, 0, len(v))
		for id := range v {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if pane, ok := v[id].(map[string]any); ok {
				if qs, ok := pane["queries"].([]any); ok {
					if e := firstQueryExpr(qs); e != "" {
						return e
					}
				}
			}
		}
	}
	return ""
}

// firstQueryExpr is the expr of the first of qs that is a query with a
// string expr and not hidden (Grafana's "hide": true).
func firstQueryExpr(qs []any) string {
	for _, q := range qs {
		m, ok := q.(map[string]any)
		if !ok {
			continue
		}
		if hidden, _ := m["hide"].(bool); hidden {
			continue
		}
		if e, ok := m["expr"].(string); ok && e != "" {
			return e
		}
	}
	return ""
}
