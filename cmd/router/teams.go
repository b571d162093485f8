package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing"
)

// sharedPagerDutyKeys warns of receivers that send to one PagerDuty
// routing key (and events URL): PagerDuty keys its incidents by routing
// key and dedup_key, and the router's dedup_key is the incident key, so
// two receivers paging for one incident key — two teams' alerts of one
// service under the default incidents.group_by — share one PagerDuty
// incident, and the first receiver whose alerts resolve resolves the
// other's page (an audit of a multi-team configuration).
func sharedPagerDutyKeys(cfg *config.Config) []string {
	type endpoint struct{ url, key string }
	var order []endpoint
	users := map[endpoint][]string{}
	for _, r := range cfg.Receivers {
		for i, pd := range r.PagerdutyConfigs {
			key, err := notify.ReadSecret(pd.RoutingKey, pd.RoutingKeyFile)
			if err != nil || key == "" {
				continue
			}
			e := endpoint{pd.URL, key}
			name := fmt.Sprintf("%q pagerduty_configs[%d]", r.Name, i)
			if len(users[e]) == 0 {
				order = append(order, e)
			}
			if !slices.ContainsFunc(users[e], func(u string) bool { return strings.HasPrefix(u, fmt.Sprintf("%q ", r.Name)) }) {
				users[e] = append(users[e], name)
			}
		}
	}
	var out []string
	for _, e := range order {
		if u := users[e]; len(u) > 1 {
			out = append(out, fmt.Sprintf("receivers %s send to one PagerDuty routing key: PagerDuty keeps one incident per routing key and dedup_key, and the dedup_key is the router's incident key, so when two of them page for one incident (two teams' alerts of one service, under an incidents.group_by without the label that tells the teams apart) they share one PagerDuty incident and the first to resolve resolves the other's page; give each its own integration key, or add that label (team) to incidents.group_by",
				strings.Join(u, " and ")))
		}
	}
	return out
}

// channelLabel finds the labels a Slack channel template reads.
var channelLabel = regexp.MustCompile(`\.(?:CommonLabels|GroupLabels)\.([A-Za-z_][A-Za-z0-9_]*)|index\s+\.(?:CommonLabels|GroupLabels)\s+"([^"]+)"`)

// channelLabelsOutsideIncidents warns of a Slack channel templated on a
// label the incident key does not hold (`'#{{ .CommonLabels.team }}-alerts'`
// under the default incidents.group_by): alerts of several teams may share
// one incident, whose messages all go to the channel of the alerts that
// opened it — the other team's channel never hears of its page — and a
// notification whose alerts differ in the label renders the channel
// without it ("#-alerts": channel_not_found, a dead letter).
func channelLabelsOutsideIncidents(cfg *config.Config) []string {
	held := cfg.Incidents.GroupBy
	if len(held) == 0 {
		held = slices.Concat(routing.DefaultGroupBy, routing.DefaultScope)
	}
	// A route's own group_by (inherited by its children, as in
	// Alertmanager; what import-alertmanager writes) forms the incidents
	// of the alerts it matches instead.
	groupings := map[string][][]string{}
	var walk func(r *routing.Route, receiver string, eff, fixed []string)
	walk = func(r *routing.Route, receiver string, eff, fixed []string) {
		if r.Receiver != "" {
			receiver = r.Receiver
		}
		if r.GroupBy != nil { // inherited where unset
			eff = r.GroupBy
		}
		fixed = append(slices.Clip(fixed), r.FixedLabels()...)
		// A node delivers to its own receiver when all its children miss:
		// never under a child that matches every alert.
		if !slices.ContainsFunc(r.Routes, func(c *routing.Route) bool {
			return c != nil && !c.Continue && len(c.Matchers) == 0 && len(c.RouteCompat.Match) == 0 && len(c.MatchRE) == 0
		}) {
			held := eff
			if r.GroupsAll() {
				// `group_by: []`: the route's alerts are one incident of
				// their own, and hold what its matchers and its parents'
				// fix by equality (team="db": one team) — no more (a
				// review saw a false warning).
				held = append([]string{}, fixed...)
			}
			groupings[receiver] = append(groupings[receiver], held)
		}
		for _, c := range r.Routes {
			if c != nil {
				walk(c, receiver, eff, fixed)
			}
		}
	}
	if cfg.Route != nil {
		walk(cfg.Route, "", nil, nil)
	}
	holds := func(receiver, label string) bool {
		for _, g := range groupings[receiver] {
			if g == nil {
				g = held
			}
			if !slices.Contains(g, label) && !slices.Contains(g, "...") {
				return false
			}
		}
		return true
	}
	var out []string
	for _, r := range cfg.Receivers {
		for i, sc := range r.SlackConfigs {
			var missing []string
			for _, m := range channelLabel.FindAllStringSubmatch(sc.Channel, -1) {
				name := m[1] + m[2]
				if !holds(r.Name, name) && !slices.Contains(missing, name) {
					missing = append(missing, name)
				}
			}
			for _, name := range missing {
				out = append(out, fmt.Sprintf("receiver %q slack_configs[%d].channel is templated on label %s, which the incidents of its alerts are not grouped by: alerts of several %s values may share one incident, whose messages all go to the channel of the alerts that opened it, and a notification whose alerts differ in %s renders the channel without it (channel_not_found); group by it too — incidents.group_by: [sector, service, kpi, cluster, namespace, %s] keeps the default's labels — or in the group_by of the routes to %q",
					r.Name, i, name, name, name, name, r.Name))
			}
		}
	}
	return out
}
