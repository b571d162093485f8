package routing

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/alertmanager/pkg/labels"
	"github.com/prometheus/alertmanager/timeinterval"
	"github.com/prometheus/common/model"
)

// RouteCompat are Alertmanager's route keys beyond matchers, receiver,
// continue and routes, so a route tree ports unchanged.
type RouteCompat struct {
	// Match and MatchRE are Alertmanager's older equality and (anchored)
	// regular-expression matchers; they add to Matchers.
	Match   map[string]string `yaml:"match,omitempty"`
	MatchRE map[string]string `yaml:"match_re,omitempty"`
	// GroupBy makes the labels listed one incident for the alerts this
	// route delivers (inherited by child routes; "..." groups by every
	// label); unset keeps incidents.group_by, and an explicit empty list
	// makes every alert of the route one incident (Route.GroupsAll).
	GroupBy []string `yaml:"group_by,omitempty"`
	// MuteTimeIntervals mute the route while any of the named
	// time_intervals contains now; ActiveTimeIntervals mute it while none
	// does. A muted alert is recorded (explain, the answer's summary), not
	// sent.
	MuteTimeIntervals   []string `yaml:"mute_time_intervals,omitempty"`
	ActiveTimeIntervals []string `yaml:"active_time_intervals,omitempty"`
	// GroupWait, GroupInterval and RepeatInterval are accepted and have no
	// effect: Alertmanager groups and repeats before the router, whose
	// reminders follow dedup.repeat_interval.
	GroupWait      *model.Duration `yaml:"group_wait,omitempty"`
	GroupInterval  *model.Duration `yaml:"group_interval,omitempty"`
	RepeatInterval *model.Duration `yaml:"repeat_interval,omitempty"`
	// Labels (Alertmanager v0.35's route labels: templates rendered per
	// alert group for Alertmanager's notification templates) are accepted
	// and have no effect here: the router's templates see the route labels
	// Alertmanager rendered for the route that sent the webhook
	// (.RouteLabels and routeLabels "name"). check-config lists the routes
	// that set them.
	Labels model.LabelSet `yaml:"labels,omitempty"`

	intervals *timeinterval.Intervener
	// blackhole: the route's receiver has no integrations (SetBlackholes).
	blackhole bool
}

// SetBlackholes marks the routes whose receiver is one of names: a
// receiver without integrations, Alertmanager's way to drop what a route
// matches (kube-prometheus' "null" receiver for Watchdog and
// InfoInhibitor). An alert such a route delivers is recorded as muted —
// explain's muted_by, the answer's suppressed count, the journal — and
// sent nowhere; a route that continues still delivers to the routes after
// it.
func (r *Route) SetBlackholes(names map[string]bool) {
	r.blackhole = names[r.Receiver]
	for _, c := range r.Routes {
		if c != nil {
			c.SetBlackholes(names)
		}
	}
}

// Blackhole reports whether the route's receiver has no integrations.
func (r *Route) Blackhole() bool { return r.blackhole }

func (r *Route) compileCompat(path string) []error {
	var errs []error
	for _, name := range SortedNames(r.RouteCompat.Match) {
		m, err := labels.NewMatcher(labels.MatchEqual, name, r.RouteCompat.Match[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.match.%s: %w", path, name, err))
			continue
		}
		r.matchers = append(r.matchers, m)
	}
	for _, name := range SortedNames(r.MatchRE) {
		m, err := labels.NewMatcher(labels.MatchRegexp, name, r.MatchRE[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.match_re.%s: %w", path, name, err))
			continue
		}
		r.matchers = append(r.matchers, m)
	}
	return errs
}

// SortedNames returns the keys of a label map, sorted.
func SortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SetTimeIntervals gives the tree the named time intervals (the
// top-level time_intervals) and checks every name a route uses. Errors
// carry their YAML path.
func (r *Route) SetTimeIntervals(named map[string][]timeinterval.TimeInterval) error {
	var errs []string
	iv := timeinterval.NewIntervener(named)
	var walk func(*Route)
	walk = func(n *Route) {
		n.intervals = iv
		for key, names := range map[string][]string{"mute_time_intervals": n.MuteTimeIntervals, "active_time_intervals": n.ActiveTimeIntervals} {
			for i, name := range names {
				if _, ok := named[name]; !ok {
					errs = append(errs, fmt.Sprintf("%s.%s[%d]: undefined time interval %q (define it under time_intervals)", n.path, key, i, name))
				}
			}
		}
		for _, c := range n.Routes {
			if c != nil {
				walk(c)
			}
		}
	}
	walk(r)
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// mutedBy says why the route delivers nothing at now ("" when it
// delivers): a mute interval that contains now, or active intervals none
// of which does.
func (r *Route) mutedBy(now time.Time) string {
	if r.blackhole {
		return fmt.Sprintf("receiver %q of %s has no integrations (a blackhole)", r.Receiver, r.path)
	}
	if r.intervals == nil {
		return ""
	}
	if len(r.MuteTimeIntervals) > 0 {
		if in, names, err := r.intervals.Mutes(r.MuteTimeIntervals, now); err == nil && in {
			return fmt.Sprintf("mute_time_intervals %s of %s", strings.Join(names, ","), r.path)
		}
	}
	if len(r.ActiveTimeIntervals) > 0 {
		if in, err := r.intervals.ContainsTime(r.ActiveTimeIntervals, now); err == nil && !in {
			return fmt.Sprintf("outside active_time_intervals %s of %s", strings.Join(r.ActiveTimeIntervals, ","), r.path)
		}
	}
	return ""
}

// MatchRoutes returns the routes that deliver an alert with the given
// labels, in tree order (Match is their receivers).
func (r *Route) MatchRoutes(get LabelFunc) []*Route {
	var out []*Route
	r.matchRoutes(get, &out)
	return out
}

func (r *Route) matchRoutes(get LabelFunc, out *[]*Route) bool {
	if !r.matches(get) {
		return false
	}
	matched := false
	for _, c := range r.Routes {
		if c.matchRoutes(get, out) {
			matched = true
			if !c.Continue {
				break
			}
		}
	}
	if !matched {
		*out = append(*out, r)
	}
	return true
}

// MutedRoutes says, for each of the matched routes muted at now (a time
// interval, a blackhole), why — also when other routes deliver, which
// Deliver's mutedBy leaves unsaid. For explain and check-config.
func MutedRoutes(routes []*Route, now time.Time) []string {
	var muted []string
	for _, rt := range routes {
		if why := rt.mutedBy(now); why != "" {
			muted = append(muted, why)
		}
	}
	return muted
}

// Deliver returns the receivers of the matched routes not muted at now,
// without duplicates, and — when every matched route is muted — why, and
// the receivers of those muted routes (without duplicates; for the record
// only, never to deliver to). The first matched route forms the incident
// (Pipeline.RouteAt returns it).
func Deliver(routes []*Route, now time.Time) (receivers []string, mutedBy string, mutedReceivers []string) {
	var muted []string
	seen := map[string]bool{}
	for _, rt := range routes {
		if why := rt.mutedBy(now); why != "" {
			muted = append(muted, why)
			if !slices.Contains(mutedReceivers, rt.Receiver) {
				mutedReceivers = append(mutedReceivers, rt.Receiver)
			}
			continue
		}
		if !seen[rt.Receiver] {
			seen[rt.Receiver] = true
			receivers = append(receivers, rt.Receiver)
		}
	}
	if len(receivers) > 0 || len(muted) == 0 {
		return receivers, "", nil
	}
	return nil, strings.Join(muted, "; "), mutedReceivers
}

// expandGroupBy returns group_by with Alertmanager's "..." (every label)
// replaced by the alert's label names, sorted.
func expandGroupBy(groupBy []string, ls map[string]string) []string {
	for _, g := range groupBy {
		if g == "..." {
			all := make([]string, 0, len(ls))
			for k := range ls {
				all = append(all, k)
			}
			sort.Strings(all)
			return all
		}
	}
	return groupBy
}
