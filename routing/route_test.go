package routing_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
)

var knownReceivers = map[string]bool{"slack-triage": true, "pagerduty-llm": true, "pagerduty-hft": true, "slack-hft": true, "log": true}

func compileRoute(t *testing.T, src string) *routing.Route {
	t.Helper()
	var r routing.Route
	if err := yaml.UnmarshalStrict([]byte(src), &r); err != nil {
		t.Fatalf("unmarshal route: %v", err)
	}
	if err := r.Compile(knownReceivers); err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return &r
}

const testTree = `
receiver: slack-triage
routes:
  - receiver: pagerduty-hft
    matchers: ['sector=~"hft-.*"', 'decision="page"']
    continue: true
  - receiver: slack-hft
    matchers: ['sector=~"hft-.*"']
  - matchers: ['sector="llm-inference-gpu"']
    routes:
      - receiver: pagerduty-llm
        matchers: ['decision="page"', 'kpi="TTFT"']
      - matchers: ['incident_class="capacity"']
  - receiver: log
    matchers: ['team="storage"']
  - receiver: pagerduty-llm
    matchers: ['team="storage"']
`

// labelsOf returns a LabelFunc over a fixed map, as Result.Label would
// expose the derived labels.
func labelsOf(m map[string]string) routing.LabelFunc { return func(n string) string { return m[n] } }

func TestRouteMatch(t *testing.T) {
	tree := compileRoute(t, testTree)
	tests := []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"an alert no child matches goes to the root receiver", map[string]string{"sector": "unknown"}, []string{"slack-triage"}},
		{"continue lets a page reach pagerduty and the next matching route", map[string]string{"sector": "hft-cdn", "decision": "page"}, []string{"pagerduty-hft", "slack-hft"}},
		{"without continue the first match wins", map[string]string{"team": "storage"}, []string{"log"}},
		{"a ticket of the same sector skips the page route", map[string]string{"sector": "hft-cdn", "decision": "ticket"}, []string{"slack-hft"}},
		{"a nested route without receiver inherits its parent's, which inherits the root's", map[string]string{"sector": "llm-inference-gpu", "incident_class": "capacity"}, []string{"slack-triage"}},
		{"derived kpi and decision select the nested page route", map[string]string{"sector": "llm-inference-gpu", "kpi": "TTFT", "decision": "page"}, []string{"pagerduty-llm"}},
		{"a parent whose children do not match delivers to its own receiver", map[string]string{"sector": "llm-inference-gpu", "kpi": "ITL", "decision": "page"}, []string{"slack-triage"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tree.Match(labelsOf(tt.labels)); !slices.Equal(got, tt.want) {
				t.Errorf("Match(%v) = %v, want %v", tt.labels, got, tt.want)
			}
		})
	}
}

func TestRouteMatchSeesDerivedLabelsOfAResult(t *testing.T) {
	tree := compileRoute(t, testTree)
	r := &alert.Result{
		Alert:          &alert.Alert{},
		Classification: alert.Classification{Sector: "hft-cdn", KPIs: []alert.KPI{{ID: "TTFB"}}, IncidentClass: "latency"},
		Decision:       alert.Decision{Action: alert.ActionPage},
	}
	r.Alert.Labels = map[string]string{"sector": "ignored-own-label", "team": "edge"}
	for name, want := range map[string]string{"sector": "hft-cdn", "kpi": "TTFB", "incident_class": "latency", "decision": "page", "team": "edge", "absent": ""} {
		if got := r.Label(name); got != want {
			t.Errorf("Label(%q) = %q, want %q", name, got, want)
		}
	}
	if got := tree.Match(r.Label); !slices.Equal(got, []string{"pagerduty-hft", "slack-hft"}) {
		t.Errorf("Match = %v, want [pagerduty-hft slack-hft]", got)
	}
}

func TestRouteCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"the root must name a receiver", `routes: [{receiver: log}]`, []string{"route.receiver: the root route must name a receiver"}},
		{"an undefined receiver is named with its YAML path", `
receiver: log
routes:
  - matchers: ['a="b"']
    routes:
      - receiver: pagerduty-nope`, []string{`route.routes[0].routes[0].receiver: undefined receiver "pagerduty-nope"`}},
		{"a bad matcher is named with its YAML path", `
receiver: log
routes:
  - receiver: log
    matchers: ['a="b"', 'sector=~"("']`, []string{"route.routes[0].matchers[1]:"}},
		{"the root is every alert's fallback: no matchers, continue or time intervals", `
receiver: log
matchers: ['team="db"']
match: {a: b}
continue: true
mute_time_intervals: [night]`, []string{"route: the root route must not have matchers", "route.continue: the root route cannot continue", "route: the root route must not have mute_time_intervals"}},
		{"group_by as Alertmanager refuses it", `
receiver: log
group_by: ['...', alertname]
routes:
  - receiver: log
    group_by: [team, team]
  - receiver: log
    group_by: ['']`, []string{"route.group_by: cannot have wildcard group_by (`...`) and other labels at the same time", `route.routes[0].group_by: duplicated label "team"`, `route.routes[1].group_by[0]: invalid label name ""`}},
		{"every error is reported at once", `
receiver: nobody
routes:
  - receiver: log
    matchers: ['=']`, []string{`route.receiver: undefined receiver "nobody"`, "route.routes[0].matchers[0]:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r routing.Route
			if err := yaml.UnmarshalStrict([]byte(tt.src), &r); err != nil {
				t.Fatal(err)
			}
			err := r.Compile(knownReceivers)
			if err == nil {
				t.Fatal("Compile succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// A child's `group_by: []` groups by no label, as Alertmanager v0.31 and
// later read it (config.Route.UnmarshalYAML keeps it an empty list,
// dispatch.newRoute overrides the parent's grouping with it); before, the
// router inherited the parent's, as older Alertmanagers did, and split
// what the user asked to be one group into one incident per alertname and
// namespace (an audit). An unset group_by inherits, an empty one is
// inherited as it is.
func TestAnEmptyGroupByGroupsByNothing(t *testing.T) {
	r := compileRoute(t, `
receiver: log
group_by: [alertname, team]
routes:
  - receiver: slack-triage
    matchers: ['team="db"', 'severity=~"page|critical"']
    group_by: []
    routes:
      - receiver: log
        matchers: [env=prod]
  - receiver: log
    group_by: [cluster]
  - receiver: log
  - receiver: log
    group_by: ['...', '...']`)
	db := r.Routes[0]
	if got := db.GroupBy; got == nil || len(got) != 0 || !db.GroupsAll() {
		t.Errorf("group_by: [] compiled to %#v (GroupsAll %v), want an empty list that groups everything", got, db.GroupsAll())
	}
	if child := db.Routes[0]; !child.GroupsAll() {
		t.Errorf("a child of a group_by: [] route compiled to %#v, want it inherited as an empty list", child.GroupBy)
	}
	if got := r.Routes[1].GroupBy; !slices.Equal(got, []string{"cluster"}) || r.Routes[1].GroupsAll() {
		t.Errorf("a child's own group_by compiled to %v, want [cluster]", got)
	}
	if got := r.Routes[2].GroupBy; !slices.Equal(got, []string{"alertname", "team"}) || r.Routes[2].GroupsAll() {
		t.Errorf("an unset group_by compiled to %v, want the parent's [alertname team]", got)
	}
	if r.GroupsAll() {
		t.Error("the root's group_by [alertname team] groups everything")
	}
	// The key names the route by its matchers under its parents', sorted
	// as Alertmanager's route key sorts them: a reload that only reorders
	// them keeps the incident (a review saw a second page).
	if k := db.GroupKey(); k != `route/severity=~"page|critical",team="db"` {
		t.Errorf("the route's key is %q", k)
	}
	if k := db.Routes[0].GroupKey(); k != `route/severity=~"page|critical",team="db"/env="prod"` {
		t.Errorf("the child's key is %q, want its matchers under its parent's", k)
	}
	swapped := compileRoute(t, `
receiver: log
routes:
  - receiver: slack-triage
    matchers: ['severity=~"page|critical"', 'team="db"']
    group_by: []`)
	if a, b := db.GroupKey(), swapped.Routes[0].GroupKey(); a != b {
		t.Errorf("reordered matchers give the key %q, want %q", b, a)
	}
}

// A route's matchers parse as Alertmanager v0.35 parses them by default:
// UTF-8 matchers (a quoted label name, as OpenTelemetry's service.name)
// as well as the classic forms, unquoted values and braces included.
func TestRouteMatchersParseAsAlertmanagerDoes(t *testing.T) {
	tree := compileRoute(t, `
receiver: log
routes:
  - receiver: pagerduty-llm
    matchers: ['"service.name"="checkout"']
  - receiver: pagerduty-hft
    matchers: ['"service.name"=~"pay.*"', 'team=db']
  - receiver: slack-hft
    matchers: ['severity="critical", team="db"']
  - receiver: slack-triage
    matchers: ['{owner=~team-X|team-Y}']
`)
	for _, tt := range []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"service.name": "checkout"}, "pagerduty-llm"},
		{map[string]string{"service.name": "payments", "team": "db"}, "pagerduty-hft"},
		{map[string]string{"severity": "critical", "team": "db"}, "slack-hft"},
		{map[string]string{"owner": "team-Y"}, "slack-triage"},
		{map[string]string{"service": "checkout"}, "log"},
	} {
		if got := tree.Match(labelsOf(tt.labels)); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("Match(%v) = %v, want [%s]", tt.labels, got, tt.want)
		}
	}
}

func TestParseLabelSet(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		wantErr bool
	}{
		{"pairs are split on commas", "sector=hft-cdn,decision=page", map[string]string{"sector": "hft-cdn", "decision": "page"}, false},
		{"spaces and quotes are trimmed", ` alertname = "TargetDown" , job=node `, map[string]string{"alertname": "TargetDown", "job": "node"}, false},
		{"an empty string is an empty set", "", map[string]string{}, false},
		{"an empty value is kept", "team=", map[string]string{"team": ""}, false},
		{"a pair without = is an error", "sector", nil, true},
		{"a pair without a name is an error", "=x", nil, true},
		// Alertmanager 0.28's syntax: a UTF-8 name quoted, braces around.
		{"a quoted UTF-8 name is the name", `"service.name"="checkout",severity=critical`, map[string]string{"service.name": "checkout", "severity": "critical"}, false},
		{"braces are Alertmanager's label set", `{"k8s.pod.name"="p-1", team="a"}`, map[string]string{"k8s.pod.name": "p-1", "team": "a"}, false},
		{"a quoted value may hold a comma", `msg="a, b",x=y`, map[string]string{"msg": "a, b", "x": "y"}, false},
		{"a matcher's != is an error", "team!=a", nil, true},
		{"a matcher's =~ is an error", "team=~a.*", nil, true},
		{"an unterminated quote is an error", `"service.name=checkout`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := routing.ParseLabelSet(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseLabelSet(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && !maps.Equal(got, tt.want) {
				t.Errorf("ParseLabelSet(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
