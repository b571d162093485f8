package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	amlabels "github.com/prometheus/alertmanager/pkg/labels"
	"go.yaml.in/yaml/v2"

	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// importAlertmanager is `router import-alertmanager FILE`: it prints a
// router.yml made of the Alertmanager config's receivers, routes and time
// intervals, with a comment for everything the router does otherwise
// (inhibit rules, receiver kinds it lacks, Slack incoming webhooks,
// templates).
func (m *Main) importAlertmanager(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: %v\n", err)
		return 1
	}
	out, lost, err := convertAlertmanager(b)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: %s: %v\n", file, err)
		return 1
	}
	fmt.Fprint(m.Stdout, out)
	if len(lost) > 0 {
		// check-config will say SUCCESS for these: say it where it is seen.
		fmt.Fprintf(m.Stderr, "router import-alertmanager: warning: %d receiver(s) lost every integration the router can send to and print notifications on stdout instead: %s (see the comments at the top)\n", len(lost), strings.Join(lost, ", "))
	}
	return 0
}

type mapSlice = yaml.MapSlice

func get(ms mapSlice, key string) (interface{}, bool) {
	for _, it := range ms {
		if it.Key == key {
			return it.Value, true
		}
	}
	return nil, false
}

func set(ms mapSlice, key string, v interface{}) mapSlice {
	for i, it := range ms {
		if it.Key == key {
			ms[i].Value = v
			return ms
		}
	}
	return append(ms, yaml.MapItem{Key: key, Value: v})
}

func del(ms mapSlice, keys ...string) mapSlice {
	out := ms[:0]
	for _, it := range ms {
		drop := false
		for _, k := range keys {
			drop = drop || it.Key == k
		}
		if !drop {
			out = append(out, it)
		}
	}
	return out
}

func str(v interface{}) string {
	s, _ := v.(string)
	return s
}

// topKeys are the top-level keys of an Alertmanager configuration the
// importer reads or explains; others (tracing, x-… anchors' holders) are
// dropped with a note.
var topKeys = map[string]bool{"global": true, "route": true, "receivers": true, "templates": true,
	"inhibit_rules": true, "time_intervals": true, "mute_time_intervals": true}

// keyRank orders the keys of an imported mapping: names and receivers
// first, child routes last, the rest alphabetically.
var keyRank = map[string]int{"name": -3, "receiver": -2, "matchers": -1, "routes": 1}

// ordered turns a generically decoded YAML value into mapSlices in keyRank
// order, recursively.
func ordered(v interface{}) interface{} {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		out := make(mapSlice, 0, len(t))
		for k, v := range t {
			out = append(out, yaml.MapItem{Key: k, Value: ordered(v)})
		}
		sort.Slice(out, func(i, j int) bool {
			a, b := fmt.Sprint(out[i].Key), fmt.Sprint(out[j].Key)
			if keyRank[a] != keyRank[b] {
				return keyRank[a] < keyRank[b]
			}
			return a < b
		})
		return out
	case []interface{}:
		out := make([]interface{}, len(t))
		for i, e := range t {
			out[i] = ordered(e)
		}
		return out
	}
	return v
}

// routeKeys are the route keys the router reads (Alertmanager v0.35's);
// a route key outside them (a later Alertmanager's) is dropped with a note
// rather than making the imported file fail to load.
var routeKeys = map[string]bool{
	"receiver": true, "group_by": true, "match": true, "match_re": true, "matchers": true,
	"mute_time_intervals": true, "active_time_intervals": true, "continue": true, "routes": true,
	"group_wait": true, "group_interval": true, "repeat_interval": true, "labels": true,
}

// integrations returns the entries of receiver r's key (pagerduty_configs,
// slack_configs), each a mapping; a null list is none.
func integrations(r mapSlice, path, key string) ([]mapSlice, error) {
	v, _ := get(r, key)
	l, err := sequence(v, path+"."+key)
	if err != nil {
		return nil, err
	}
	out := make([]mapSlice, len(l))
	for i, e := range l {
		if out[i], err = mapping(e, fmt.Sprintf("%s.%s[%d]", path, key, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mapping returns v as a YAML mapping; a null is an empty one.
func mapping(v interface{}, path string) (mapSlice, error) {
	switch m := v.(type) {
	case mapSlice:
		return m, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("%s: want a mapping, got %s", path, yamlKind(v))
}

// sequence returns v as a YAML sequence; a null is an empty one.
func sequence(v interface{}, path string) ([]interface{}, error) {
	switch l := v.(type) {
	case []interface{}:
		return l, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("%s: want a list, got %s", path, yamlKind(v))
}

func yamlKind(v interface{}) string {
	switch v.(type) {
	case mapSlice:
		return "a mapping"
	case []interface{}:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", v)
	}
	return fmt.Sprintf("%v", v)
}

// convertAlertmanager converts the text of an alertmanager.yml. A file
// whose shape Alertmanager would refuse (a receiver without a name, a
// route naming an undefined receiver, a list where a mapping belongs) is
// an error naming the YAML path; anything else converts into a file
// check-config loads (but for the secret files it names, read then).
func convertAlertmanager(b []byte) (_ string, lost []string, _ error) {
	// Decoded generically, so that YAML merge keys (<<: *defaults) are
	// applied (yaml.v2 drops them when decoding into a MapSlice), then
	// turned into mapSlices in a fixed, readable key order.
	var top interface{}
	if err := yaml.Unmarshal(b, &top); err != nil {
		return "", nil, err
	}
	am, err := mapping(ordered(top), "the file")
	if err != nil {
		return "", nil, fmt.Errorf("%w (route:, receivers: …)", err)
	}
	var notes []string
	var unknown []string
	for _, it := range am {
		if k := fmt.Sprint(it.Key); !topKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		notes = append(notes, fmt.Sprintf("%s: not read by the router; dropped", strings.Join(unknown, ", ")))
	}
	global, _ := get(am, "global")
	g, err := mapping(global, "global")
	if err != nil {
		return "", nil, err
	}
	gHTTP, _ := get(g, "http_config")
	gPDURL, _ := get(g, "pagerduty_url")
	gSlackToken, _ := get(g, "slack_app_token")
	gSlackTokenFile, _ := get(g, "slack_app_token_file")
	gSlackURL, _ := get(g, "slack_api_url")
	gSlackURLFile, _ := get(g, "slack_api_url_file")

	rv, ok := get(am, "route")
	if !ok || rv == nil {
		return "", nil, fmt.Errorf("route: missing (Alertmanager requires the root route)")
	}
	recvs, _ := get(am, "receivers")
	list, err := sequence(recvs, "receivers")
	if err != nil {
		return "", nil, err
	}
	names := map[string]bool{}
	var receivers []interface{}
	var slackResolvedOff bool
	for i, v := range list {
		path := fmt.Sprintf("receivers[%d]", i)
		r, err := mapping(v, path)
		if err != nil {
			return "", nil, err
		}
		name := str(mustGet(r, "name"))
		if name == "" {
			return "", nil, fmt.Errorf("%s.name: missing", path)
		}
		if names[name] {
			return "", nil, fmt.Errorf("%s.name: receiver %q defined twice", path, name)
		}
		names[name] = true
		out := mapSlice{{Key: "name", Value: name}}
		var kept int
		pdl, err := integrations(r, path, "pagerduty_configs")
		if err != nil {
			return "", nil, err
		}
		var pds []interface{}
		for i, c := range pdl {
			if hasKey(c, "service_key") || hasKey(c, "service_key_file") {
				notes = append(notes, fmt.Sprintf("receiver %q: pagerduty_configs[%d] uses an Events API v1 service_key; the router speaks Events API v2: add the service's v2 integration key as routing_key", name, i))
				continue
			}
			if !hasKey(c, "url") && gPDURL != nil {
				c = set(c, "url", gPDURL)
			}
			if !hasKey(c, "http_config") && gHTTP != nil {
				c = set(c, "http_config", gHTTP)
			}
			pds = append(pds, c)
		}
		if len(pds) > 0 {
			out = append(out, yaml.MapItem{Key: "pagerduty_configs", Value: pds})
			kept += len(pds)
		}
		sll, err := integrations(r, path, "slack_configs")
		if err != nil {
			return "", nil, err
		}
		var sls []interface{}
		for i, c := range sll {
			if !hasKey(c, "send_resolved") {
				// Alertmanager's Slack default; the router's is true.
				c, slackResolvedOff = set(c, "send_resolved", false), true
			}
			c, why := convertSlack(c, gSlackToken, gSlackTokenFile, gSlackURL, gSlackURLFile, gHTTP)
			if why != "" {
				notes = append(notes, fmt.Sprintf("receiver %q: slack_configs[%d] %s", name, i, why))
				continue
			}
			sls = append(sls, c)
		}
		if len(sls) > 0 {
			out = append(out, yaml.MapItem{Key: "slack_configs", Value: sls})
			kept += len(sls)
		}
		var others []string
		for _, it := range r {
			k := str(it.Key)
			if l, _ := it.Value.([]interface{}); strings.HasSuffix(k, "_configs") && k != "pagerduty_configs" && k != "slack_configs" && len(l) > 0 {
				others = append(others, k)
			}
		}
		if len(others) > 0 {
			sort.Strings(others)
			notes = append(notes, fmt.Sprintf("receiver %q: %s: the router has no such integration (PagerDuty, Slack and log only); keep them on Alertmanager (its own receiver for them, beside the route to the router)", name, strings.Join(others, ", ")))
		}
		switch {
		case kept > 0:
		case len(pdl)+len(sll)+len(others) == 0:
			notes = append(notes, fmt.Sprintf("receiver %q: no integrations, in Alertmanager as here: a blackhole — what its routes match is recorded as muted, not sent", name))
		default:
			notes = append(notes, fmt.Sprintf("receiver %q: nothing the router can send to is left; it prints notifications on stdout (log_configs) until you add one", name))
			lost = append(lost, name)
			out = append(out, yaml.MapItem{Key: "log_configs", Value: []interface{}{mapSlice{}}})
		}
		receivers = append(receivers, out)
	}
	if slackResolvedOff {
		notes = append(notes, "slack_configs without send_resolved: written as send_resolved: false, Alertmanager's default for Slack (the router's default is true: a resolve edits the incident's parent message and replies in its thread)")
	}
	route, err := portRoute(rv, "route", names, &notes)
	if err != nil {
		return "", nil, err
	}
	notes = append(notes, "alerts the policies decide none (by default severity info, debug, notice, p5 …) are recorded but never sent, where Alertmanager sent them to their route's receiver: map such values to ticket under policies.severity to keep them (docs/policies.md)")
	notes = append(notes, routeDifferences(route, "route", nil)...)
	for _, k := range []string{"matchers", "match", "match_re", "continue", "mute_time_intervals", "active_time_intervals"} {
		given := false
		switch v := mustGet(route, k).(type) {
		case bool:
			given = v
		case []interface{}:
			given = len(v) > 0
		case mapSlice:
			given = len(v) > 0
		}
		if given {
			return "", nil, fmt.Errorf("route.%s: the root route cannot have it (Alertmanager refuses it too: the root is every alert's fallback)", k)
		}
	}
	if str(mustGet(route, "receiver")) == "" {
		return "", nil, fmt.Errorf("route.receiver: missing (the root route names the default receiver)")
	}

	doc := mapSlice{{Key: "route", Value: route}, {Key: "receivers", Value: receivers}}
	var intervals []interface{}
	for _, key := range []string{"time_intervals", "mute_time_intervals"} {
		v, _ := get(am, key)
		l, err := sequence(v, key)
		if err != nil {
			return "", nil, err
		}
		intervals = append(intervals, l...)
	}
	if len(intervals) > 0 {
		doc = append(doc, yaml.MapItem{Key: "time_intervals", Value: intervals})
	}
	if v, ok := get(am, "templates"); ok {
		notes = append(notes, fmt.Sprintf("templates %v: Alertmanager's template files; add them under templates: once they are next to this file (the router's templates use the same language)", v))
	}
	if v, ok := get(am, "inhibit_rules"); ok {
		rules, _ := yaml.Marshal(v)
		notes = append(notes, "inhibit_rules: the router suppresses by decision tier instead (a firing SLO page suppresses the tickets of the same SLO, across payloads); keep severity inhibition in Alertmanager, where it runs before the router. The rules were:\n"+strings.TrimRight(string(rules), "\n"))
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return "", nil, err
	}
	var sb strings.Builder
	sb.WriteString("# router.yml imported from an Alertmanager configuration by `router import-alertmanager`.\n")
	sb.WriteString("# Check it with `router check-config --config.file=router.yml`.\n")
	for _, n := range notes {
		sb.WriteString("#\n")
		for _, line := range strings.Split(n, "\n") {
			sb.WriteString("# " + line + "\n")
		}
	}
	sb.Write(body)
	return sb.String(), lost, nil
}

// portRoute copies the route at path and its children: the keys the
// router reads are kept as they are (check-config validates them), others
// are dropped with a note; a receiver the file does not define is an
// error, as in Alertmanager.
func portRoute(v interface{}, path string, receivers map[string]bool, notes *[]string) (mapSlice, error) {
	r, err := mapping(v, path)
	if err != nil {
		return nil, err
	}
	out := make(mapSlice, 0, len(r))
	var dropped []string
	for _, it := range r {
		k := str(it.Key)
		switch {
		case !routeKeys[k]:
			dropped = append(dropped, fmt.Sprint(it.Key))
			continue
		case k == "receiver":
			if name := str(it.Value); !receivers[name] {
				return nil, fmt.Errorf("%s.receiver: undefined receiver %q", path, fmt.Sprint(it.Value))
			}
		case k == "routes":
			l, err := sequence(it.Value, path+".routes")
			if err != nil {
				return nil, err
			}
			children := make([]interface{}, 0, len(l))
			for i, c := range l {
				pc, err := portRoute(c, fmt.Sprintf("%s.routes[%d]", path, i), receivers, notes)
				if err != nil {
					return nil, err
				}
				children = append(children, pc)
			}
			it.Value = children
		}
		out = append(out, it)
	}
	if len(dropped) > 0 {
		sort.Strings(dropped)
		*notes = append(*notes, fmt.Sprintf("%s: %s: not an Alertmanager v0.35 route key the router knows; dropped", path, strings.Join(dropped, ", ")))
	}
	return out, nil
}

// derivedLabels are the labels the router derives for routing: an alert
// label of the same name is replaced by the derived value in routes.
var derivedLabels = []string{"sector", "kpi", "incident_class", "decision"}

// routeDifferences lists where route r (at path, under the equality
// matchers of its ancestors) sends other alerts than Alertmanager would: a
// matcher on a label the router derives, and equality matchers that make
// every alert they match one the default policies decide none, which the
// router never sends and Alertmanager sent to this route's receiver.
func routeDifferences(r mapSlice, path string, inherited map[string]string) []string {
	eq := maps.Clone(inherited)
	if eq == nil {
		eq = map[string]string{}
	}
	var names []string
	if m, ok := mustGet(r, "match").(mapSlice); ok {
		for _, it := range m {
			names = append(names, str(it.Key))
			eq[str(it.Key)] = str(it.Value)
		}
	}
	if m, ok := mustGet(r, "match_re").(mapSlice); ok {
		for _, it := range m {
			names = append(names, str(it.Key))
		}
	}
	if l, ok := mustGet(r, "matchers").([]interface{}); ok {
		for _, v := range l {
			ms, err := amlabels.ParseMatchers(str(v))
			if err != nil {
				continue // check-config names it
			}
			for _, m := range ms {
				names = append(names, m.Name)
				if m.Type == amlabels.MatchEqual {
					eq[m.Name] = m.Value
				}
			}
		}
	}
	var out []string
	for _, n := range derivedLabels {
		if slices.Contains(names, n) {
			out = append(out, fmt.Sprintf("%s: matches on %q, a label the router derives: in routes the derived value replaces the alert's own (route on the alert's other labels, or rename that label in Prometheus)", path, n))
		}
	}
	if len(eq) > 0 && len(names) > 0 && str(mustGet(r, "receiver")) != "" {
		a := &alert.Alert{}
		a.Status, a.Labels = "firing", maps.Clone(eq)
		if d := noneEngine().Decide(a, nil, time.Now()); d.Action == alert.ActionNone {
			out = append(out, fmt.Sprintf("%s: the alerts it matches (%s) are decided none by the default policies and never sent; Alertmanager sent them to %q. To keep them, map the value to ticket under policies.severity (docs/policies.md)", path, labelText(eq), str(mustGet(r, "receiver"))))
		}
	}
	if l, ok := mustGet(r, "routes").([]interface{}); ok {
		for i, c := range l {
			if cr, ok := c.(mapSlice); ok {
				out = append(out, routeDifferences(cr, fmt.Sprintf("%s.routes[%d]", path, i), eq)...)
			}
		}
	}
	return out
}

// noneEngine is the default policies, which routeDifferences asks.
var noneEngine = sync.OnceValue(func() *policies.Engine {
	e, err := policies.New(policies.DefaultConfig())
	if err != nil {
		panic(err) // the embedded defaults are tested
	}
	return e
})

// labelText is labels as `a="b", c="d"`, sorted.
func labelText(ls map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, ls[k]))
	}
	return strings.Join(parts, ", ")
}

func hasKey(ms mapSlice, key string) bool { _, ok := get(ms, key); return ok }

func mustGet(ms mapSlice, key string) interface{} { v, _ := get(ms, key); return v }

// convertSlack turns one Alertmanager slack_configs entry into the
// router's — Web API with a bot token, or an incoming webhook as in
// Alertmanager when no token is given — or says why it cannot.
func convertSlack(c mapSlice, gToken, gTokenFile, gURL, gURLFile, gHTTP interface{}) (mapSlice, string) {
	apiURL := str(mustGet(c, "api_url"))
	if apiURL == "" && !hasKey(c, "api_url_file") {
		apiURL = str(gURL)
		if apiURL == "" && gURLFile != nil {
			c = set(c, "api_url_file", gURLFile)
		}
	}
	if strings.HasSuffix(apiURL, "chat.postMessage") && !hasKey(c, "app_url") {
		c = set(c, "app_url", apiURL)
	}
	webhook := mustGet(c, "api_url_file")
	c = del(c, "api_url", "api_url_file")
	if !hasKey(c, "http_config") && gHTTP != nil {
		// global.http_config applies to every integration, webhooks too.
		c = set(c, "http_config", gHTTP)
	}
	hasToken := hasKey(c, "app_token") || hasKey(c, "app_token_file") || hasKey(c, "token") || hasKey(c, "token_file")
	if !hasToken && gToken != nil {
		c, hasToken = set(c, "app_token", gToken), true
	}
	if !hasToken && gTokenFile != nil {
		c, hasToken = set(c, "app_token_file", gTokenFile), true
	}
	if !hasToken && webhook == nil && (apiURL == "" || strings.HasSuffix(apiURL, "chat.postMessage")) {
		// Before app_token, a bot token rode in http_config for the Web
		// API: authorization.credentials(_file) or bearer_token(_file).
		c, hasToken = liftBearer(c)
	}
	if !hasToken {
		// An incoming webhook stays one: one message per notification, no
		// thread, parent edit or buttons (check-config says so).
		switch {
		case webhook != nil:
			return set(c, "api_url_file", webhook), ""
		case apiURL != "":
			// Without a token Alertmanager posts to api_url as an incoming
			// webhook, Slack's or a Slack-compatible one (Mattermost …).
			return set(c, "api_url", apiURL), ""
		}
		return nil, "has neither a bot token nor an incoming-webhook URL"
	}
	if str(mustGet(c, "channel")) == "" {
		return nil, "names no channel; the router posts with the Web API and needs one"
	}
	return c, ""
}

// liftBearer moves a bearer token out of c's http_config into app_token or
// app_token_file, and reports whether it found one. The http_config is
// copied, not changed: it may be global.http_config, shared.
func liftBearer(c mapSlice) (mapSlice, bool) {
	hc, ok := mustGet(c, "http_config").(mapSlice)
	if !ok {
		return c, false
	}
	hc = append(mapSlice(nil), hc...)
	var token, file interface{}
	if auth, ok := mustGet(hc, "authorization").(mapSlice); ok && (str(mustGet(auth, "type")) == "" || strings.EqualFold(str(mustGet(auth, "type")), "bearer")) {
		token, file = mustGet(auth, "credentials"), mustGet(auth, "credentials_file")
		if token != nil || file != nil {
			hc = del(hc, "authorization")
		}
	}
	if token == nil && file == nil {
		token, file = mustGet(hc, "bearer_token"), mustGet(hc, "bearer_token_file")
		hc = del(hc, "bearer_token", "bearer_token_file")
	}
	switch {
	case token != nil:
		c = set(c, "app_token", token)
	case file != nil:
		c = set(c, "app_token_file", file)
	default:
		return c, false
	}
	if len(hc) == 0 {
		return del(c, "http_config"), true
	}
	return set(c, "http_config", hc), true
}
