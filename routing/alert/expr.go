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
	return exploreExpr(state, 0)
}

// exploreExpr returns the first "expr" string of a Grafana Explore state
// (left's {"queries":[{"expr":…}]} or its older array form, panes' map of
// panes each holding queries), searched depth first, keys in sorted order
// (a map's order is random; a pane's queries lie two levels down). depth
// bounds the search.
func exploreExpr(v any, depth int) string {
	if depth > 6 {
		return ""
	}
	switch v := v.(type) {
	case map[string]any:
		if e, ok := v["expr"].(string); ok {
			return e
		}
		if qs, ok := v["queries"]; ok {
			if e := exploreExpr(qs, depth+1); e != "" {
				return e
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if e := exploreExpr(v[k], depth+1); e != "" {
				return e
			}
		}
	case []any:
		for _, x := range v {
			if e := exploreExpr(x, depth+1); e != "" {
				return e
			}
		}
	}
	return ""
}
