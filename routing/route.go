package routing

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/alertmanager/pkg/labels"

	"github.com/alertrouter/alertrouter/routing/matchers"
)

// Route is one node of the route tree, shaped like Alertmanager's: a node
// matches when all its matchers match; its children are tried in order and
// the first match wins unless that child has Continue; a node none of whose
// children matched delivers to its own receiver. Matchers see the alert's
// labels plus the derived labels sector, kpi, incident_class and decision.
type Route struct {
	Receiver string   `yaml:"receiver,omitempty"`
	Matchers []string `yaml:"matchers,omitempty"`
	Continue bool     `yaml:"continue,omitempty"`
	Routes   []*Route `yaml:"routes,omitempty"`

	// Alertmanager's other route keys; see compat.go.
	RouteCompat `yaml:",inline"`

	matchers labels.Matchers
	path     string
	// key names the route by its matchers and its ancestors' (as
	// Alertmanager's route key does): the incident of a route grouping by
	// nothing (GroupsAll).
	key string
}

// GroupsAll reports whether the route groups every alert it matches into
// one incident: an explicit `group_by: []`, its own or inherited, which
// Alertmanager v0.31 and later read as grouping by no label (before
// v0.31 it inherited the parent's grouping). A route without group_by,
// and its children, group by incidents.group_by.
func (r *Route) GroupsAll() bool {
	return r.GroupBy != nil && len(r.GroupBy) == 0
}

// FixedLabels are the names of the labels the route's own matchers fix
// by equality (`team="db"`): one value for every alert it matches.
// Compile must have run.
func (r *Route) FixedLabels() []string {
	var out []string
	for _, m := range r.matchers {
		if m.Type == labels.MatchEqual && m.Value != "" {
			out = append(out, m.Name)
		}
	}
	return out
}

// GroupKey names the incident of a route that groups by nothing
// (GroupsAll): its matchers under its parents' (`route/team="db"`), as
// Alertmanager's route key. Compile must have run.
func (r *Route) GroupKey() string { return r.key }

// Disjoint reports whether no alert can match both r and o: one has an
// equality matcher on a label name whose value the other's matcher on that
// name refuses (namespace="a" beside namespace="b" or namespace=~"c|d": the
// sibling routes the Prometheus Operator writes, one per namespace).
// Compile must have run.
func (r *Route) Disjoint(o *Route) bool {
	return equalRefused(r.matchers, o.matchers) || equalRefused(o.matchers, r.matchers)
}

// equalRefused reports whether an equality matcher of a has a value a
// matcher of b on the same name refuses.
func equalRefused(a, b labels.Matchers) bool {
	for _, x := range a {
		if x.Type != labels.MatchEqual {
			continue
		}
		for _, y := range b {
			if y.Name == x.Name && !y.Matches(x.Value) {
				return true
			}
		}
	}
	return false
}

// DerivedLabels are the label names the router adds for route matching.
var DerivedLabels = []string{"sector", "kpi", "incident_class", "decision"}

// Compile parses the matchers of the tree and checks that every receiver
// exists in known. The root must name a receiver; a child inherits its
// parent's when it names none. Errors carry their YAML path.
func (r *Route) Compile(known map[string]bool) error {
	if r.Receiver == "" {
		return errors.New("route.receiver: the root route must name a receiver")
	}
	// The root is the fallback of every alert, as in Alertmanager (which
	// refuses the same): a root that could fail to match would leave an
	// alert with no receiver at all.
	var errs []error
	if len(r.Matchers)+len(r.RouteCompat.Match)+len(r.MatchRE) > 0 {
		errs = append(errs, errors.New("route: the root route must not have matchers (it is the fallback of every alert); put them on a child route"))
	}
	if r.Continue {
		errs = append(errs, errors.New("route.continue: the root route cannot continue"))
	}
	if len(r.MuteTimeIntervals)+len(r.ActiveTimeIntervals) > 0 {
		errs = append(errs, errors.New("route: the root route must not have mute_time_intervals or active_time_intervals; put them on a child route"))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return errors.Join(append(CheckGroupBy("route", r.GroupBy), r.compile("route", "", "", known))...)
}

// matchersText is the route's matchers as Alertmanager writes them,
// sorted as its route key sorts them (by name, value, type: a reload that
// only reorders them keeps the key — a review saw a second page),
// comma-separated without braces (`severity=~"page|critical",team="db"`),
// or "*" when it has none.
func (r *Route) matchersText() string {
	if len(r.matchers) == 0 {
		return "*"
	}
	ms := slices.Clone(r.matchers)
	sort.Sort(ms)
	s := ms.String()
	return s[1 : len(s)-1]
}

// CheckGroupBy refuses what Alertmanager refuses in a route's group_by:
// "..." beside other labels, and a label named twice.
func CheckGroupBy(path string, groupBy []string) []error {
	var errs []error
	if slices.Contains(groupBy, "...") && slices.ContainsFunc(groupBy, func(n string) bool { return n != "..." }) {
		errs = append(errs, fmt.Errorf("%s.group_by: cannot have wildcard group_by (`...`) and other labels at the same time", path))
	}
	for i, name := range groupBy {
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("%s.group_by[%d]: invalid label name \"\"", path, i))
		case slices.Contains(groupBy[:i], name) && name != "...":
			errs = append(errs, fmt.Errorf("%s.group_by: duplicated label %q", path, name))
		}
	}
	return errs
}

// compile compiles r, at path, and its children: parent is the receiver
// it inherits, parentKey its parent's key ("" for the root).
func (r *Route) compile(path, parent, parentKey string, known map[string]bool) error {
	var errs []error
	if r.Receiver == "" {
		r.Receiver = parent
	} else if !known[r.Receiver] {
		errs = append(errs, fmt.Errorf("%s.receiver: undefined receiver %q", path, r.Receiver))
	}
	r.path = path
	r.matchers = r.matchers[:0]
	errs = append(errs, r.compileCompat(path)...)
	for i, s := range r.Matchers {
		ms, err := matchers.Parse(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.matchers[%d]: %w", path, i, err))
			continue
		}
		r.matchers = append(r.matchers, ms...)
	}
	r.key = "route"
	if parentKey != "" {
		r.key = parentKey + "/" + r.matchersText()
	}
	for i, c := range r.Routes {
		if c == nil {
			errs = append(errs, fmt.Errorf("%s.routes[%d]: empty route", path, i))
			continue
		}
		cpath := fmt.Sprintf("%s.routes[%d]", path, i)
		if c.GroupBy == nil {
			// Inherited, as in Alertmanager. An explicit `group_by: []`
			// is kept: Alertmanager v0.31 and later group by no label
			// there (GroupsAll).
			c.GroupBy = r.GroupBy
		} else {
			errs = append(errs, CheckGroupBy(cpath, c.GroupBy)...)
		}
		errs = append(errs, c.compile(cpath, r.Receiver, r.key, known))
	}
	return errors.Join(errs...)
}

// LabelFunc returns the value of a label ("" when absent).
type LabelFunc func(name string) string

// Match returns the receivers an alert with the given labels reaches, in
// tree order, without duplicates.
func (r *Route) Match(get LabelFunc) []string {
	return Receivers(r.MatchRoutes(get))
}

// Receivers returns the receivers of routes, in order, without duplicates.
func Receivers(routes []*Route) []string {
	var out []string
	seen := map[string]bool{}
	for _, rt := range routes {
		if !seen[rt.Receiver] {
			seen[rt.Receiver] = true
			out = append(out, rt.Receiver)
		}
	}
	return out
}

func (r *Route) matches(get LabelFunc) bool {
	for _, m := range r.matchers {
		if !m.Matches(get(m.Name)) {
			return false
		}
	}
	return true
}

// ParseLabelSet parses "a=b,c=d" (as `check-config --test-route` takes it)
// into a map, braces around it allowed, as Alertmanager 0.28 writes label
// sets: a name or a value may be double-quoted (with Go's escapes), which a
// UTF-8 name such as "service.name" needs to be read as one, and which lets
// a value hold a comma.
func ParseLabelSet(s string) (map[string]string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = s[1 : len(s)-1]
	}
	out := map[string]string{}
	for _, kv := range splitUnquoted(s) {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, rest, err := quotedOrBare(kv, "=")
		if err != nil || k == "" || !strings.HasPrefix(rest, "=") {
			return nil, fmt.Errorf("label %q: expected name=value (a name or value may be double-quoted)", kv)
		}
		rest = strings.TrimSpace(rest[1:])
		if strings.HasPrefix(rest, "~") || strings.HasSuffix(k, "!") {
			return nil, fmt.Errorf("label %q: a label set takes name=value only, not a matcher's !=, =~ or !~", kv)
		}
		v, tail, err := quotedOrBare(rest, "")
		if err != nil || tail != "" {
			return nil, fmt.Errorf("label %q: expected name=value (a name or value may be double-quoted)", kv)
		}
		out[k] = v
	}
	return out, nil
}

// splitUnquoted splits s at the commas outside double quotes.
func splitUnquoted(s string) []string {
	var out []string
	quoted, escaped, from := false, false, 0
	for i, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && quoted:
			escaped = true
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			out = append(out, s[from:i])
			from = i + 1
		}
	}
	return append(out, s[from:])
}

// quotedOrBare reads from s a double-quoted string (unquoted) or, bare, the
// text up to the first of stop (all of it when stop is empty), trimmed, and
// returns it with what follows, trimmed.
func quotedOrBare(s, stop string) (string, string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", err
		}
		v, err := strconv.Unquote(q)
		return v, strings.TrimSpace(s[len(q):]), err
	}
	if stop == "" {
		return s, "", nil
	}
	i := strings.Index(s, stop)
	if i < 0 {
		return strings.TrimSpace(s), "", nil
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:]), nil
}
