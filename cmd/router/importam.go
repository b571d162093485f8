package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/alertmanager/pkg/labels"
	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/notify/pagerduty"
	"github.com/alertrouter/alertrouter/policies"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/matchers"
)

// importAlertmanager is `router import-alertmanager FILE`: it prints a
// router.yml made of the Alertmanager config's receivers, routes, time
// intervals and templates, with a comment for everything the router does
// otherwise (inhibit rules, receiver kinds it lacks, Slack incoming
// webhooks). A PagerDuty integration it cannot carry over (an Events API
// v1 service_key, a templated routing_key) is refused, exit 1, with the
// file still printed so that
// it can be edited: check-config cannot see a page that became a Slack
// post.
func (m *Main) importAlertmanager(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: %v\n", err)
		return 1
	}
	res, err := convertAlertmanager(b)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: %s: %v\n", file, err)
		return 1
	}
	fmt.Fprint(m.Stdout, res.out)
	if len(res.lost) > 0 {
		// check-config will say SUCCESS for these: say it where it is seen.
		fmt.Fprintf(m.Stderr, "router import-alertmanager: warning: %d receiver(s) lost every integration the router can send to and print notifications on stdout instead: %s (see the comments at the top)\n", len(res.lost), strings.Join(res.lost, ", "))
	}
	if len(res.partial) > 0 {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: warning: %d receiver(s) lost integrations the router has not, which Alertmanager must keep sending to (see the comments at the top): %s\n", len(res.partial), strings.Join(res.partial, "; "))
	}
	// A route key dropped changes where alerts go (a `contine: true`
	// lost): said where it is seen, not only in the file's comments.
	for _, n := range res.notes {
		if strings.HasSuffix(n, droppedRouteKey) {
			fmt.Fprintf(m.Stderr, "router import-alertmanager: warning: %s\n", n)
		}
	}
	if len(res.typos) > 0 {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: warning: %s: not a key of Alertmanager v0.35 (misspelled? Alertmanager refuses the file as it is); dropped\n", strings.Join(res.typos, ", "))
	}
	if len(res.amOnly) > 0 {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: note: not carried over, keep them in Alertmanager's file (see the comments at the top): %s\n", strings.Join(res.amOnly, ", "))
	}
	if len(res.severityDerived) > 0 {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: note: %d PagerDuty entry(ies) without severity, which Alertmanager sends as \"error\" and the router derives from its decision (a ticket is \"warning\": low urgency where the service's urgency follows severity); set severity: error to keep Alertmanager's: %s\n", len(res.severityDerived), listSome(res.severityDerived, 10))
	}
	if len(res.pagesLost) > 0 {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: %s: %d PagerDuty integration(s) cannot be imported; the printed file leaves them out, so their pages would not reach PagerDuty: fix each, then run check-config\n", file, len(res.pagesLost))
		for _, l := range res.pagesLost {
			fmt.Fprintf(m.Stderr, "  %s\n", l)
		}
		return 1
	}
	return 0
}

// imported is what convertAlertmanager makes of an alertmanager.yml.
type imported struct {
	// out is the router.yml, its notes as comments at the top.
	out string
	// lost names the receivers left with no integration the router can
	// send to (turned into log receivers).
	lost []string
	// pagesLost says, for each PagerDuty entry left out, its receiver, why
	// and what to do.
	pagesLost []string
	// partial names the receivers that keep some integrations and lose
	// others the router has not (email, opsgenie, webhook …), with those.
	partial []string
	// amOnly names the settings not carried over that keep working in
	// Alertmanager (inhibit_rules with their count, global and top-level
	// keys), said on stderr too: the comments are easy to miss.
	amOnly []string
	// typos are top-level keys no Alertmanager v0.35 has (misspelled:
	// Alertmanager refuses the file), dropped.
	typos []string
	// notes are the notes written as comments at the top of out.
	notes []string
	// severityDerived names the PagerDuty entries without a severity:
	// Alertmanager sends those as "error", the router derives it from its
	// decision (a ticket is "warning", low urgency on a service whose
	// urgency follows severity).
	severityDerived []string
}

// mapSlice is a YAML mapping, its keys in keyRank order.
type mapSlice []mapItem

// mapItem is one key of a mapSlice and its value: a mapSlice, a list
// ([]interface{}), a scalar as the input wrote it (*yaml.Node: its text,
// tag and quoting go to the output unchanged, so that the router reads
// the string Alertmanager read — 1.20, 010, yes, 0x1F stay what they are),
// nil (null), or a string or bool the importer writes.
type mapItem struct {
	Key   string
	Value interface{}
}

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
	return append(ms, mapItem{Key: key, Value: v})
}

func del(ms mapSlice, keys ...string) mapSlice {
	out := ms[:0]
	for _, it := range ms {
		if !slices.Contains(keys, it.Key) {
			out = append(out, it)
		}
	}
	return out
}

// str is the text of a scalar as written (a label value 010 is "010", as
// Alertmanager reads it into a string), "" for anything else.
func str(v interface{}) string {
	switch t := v.(type) {
	case string:
		return t
	case *yaml.Node:
		if t.Kind == yaml.ScalarNode {
			return t.Value
		}
	}
	return ""
}

// isTrue reports whether v is a true boolean, as Alertmanager's YAML
// decoder reads a boolean key (true, yes, on …).
func isTrue(v interface{}) bool {
	switch t := v.(type) {
	case bool:
		return t
	case *yaml.Node:
		var b bool
		return t.Kind == yaml.ScalarNode && t.Decode(&b) == nil && b
	}
	return false
}

// topKeys are the top-level keys of an Alertmanager configuration the
// importer reads or explains; others (tracing, x-… anchors' holders) are
// dropped with a note.
var topKeys = map[string]bool{"global": true, "route": true, "receivers": true, "templates": true,
	"inhibit_rules": true, "time_intervals": true, "mute_time_intervals": true}

// amTopKeys are Alertmanager v0.35's top-level keys: one outside them is a
// typo Alertmanager refuses, not a setting kept in its file.
var amTopKeys = map[string]bool{"global": true, "route": true, "receivers": true, "templates": true,
	"inhibit_rules": true, "time_intervals": true, "mute_time_intervals": true, "tracing": true}

// routerKeys are top-level keys of a router.yml that no alertmanager.yml
// has (nor a Helm values file of Prometheus' charts, which has the
// router's alertmanager and prometheus too).
var routerKeys = []string{"auth", "webhook", "store", "dedup", "incidents", "classifier", "policies", "flap", "console"}

// routerKeysOf are the keys of routerKeys the file's top-level mapping am
// has: a router configuration's when any.
func routerKeysOf(am mapSlice) []string {
	return slices.DeleteFunc(slices.Clone(routerKeys), func(k string) bool { _, ok := get(am, k); return !ok })
}

// globalKeys are the keys of Alertmanager's `global` the importer applies;
// the others (resolve_timeout, smtp_*, opsgenie_api_key …) are dropped,
// each named in a note.
var globalKeys = map[string]bool{"http_config": true, "pagerduty_url": true,
	"slack_app_token": true, "slack_app_token_file": true, "slack_app_url": true,
	"slack_api_url": true, "slack_api_url_file": true}

// keyRank orders the keys of an imported mapping: names and receivers
// first, child routes last, the rest alphabetically.
var keyRank = map[string]int{"name": -3, "receiver": -2, "matchers": -1, "routes": 1}

// maxValues bounds the values an input may expand into through its
// aliases (an alias of a list of aliases of lists … grows exponentially).
const maxValues = 1 << 20

// decoder turns a yaml.v3 document into the importer's values, aliases
// and merge keys (<<: *defaults) applied, each alias into a copy of its own
// (the importer edits entries in place), mappings in keyRank order.
type decoder struct {
	values int
	// expanding are the anchors whose alias is being expanded: an alias
	// inside its own anchor would never end.
	expanding map[*yaml.Node]bool
}

func (d *decoder) value(n *yaml.Node) (interface{}, error) {
	if d.values++; d.values > maxValues {
		return nil, errors.New("the file expands into more than a million values through its aliases")
	}
	switch n.Kind {
	case 0:
		return nil, nil // an empty file
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil || d.expanding[n.Alias] {
			return nil, fmt.Errorf("line %d: alias *%s refers to a value containing it", n.Line, n.Value)
		}
		d.expanding[n.Alias] = true
		defer delete(d.expanding, n.Alias)
		return d.value(n.Alias)
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil, nil
		}
		return n, nil
	case yaml.SequenceNode:
		out := make([]interface{}, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.value(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return d.mapping(n)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// mapping decodes a YAML mapping; the keys of merged mappings (<<) come
// after the mapping's own, which override them, the first merged mapping
// overriding the next, as YAML merge keys do.
func (d *decoder) mapping(n *yaml.Node) (mapSlice, error) {
	out := make(mapSlice, 0, len(n.Content)/2)
	seen := map[string]bool{}
	var merged []mapSlice
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a mapping key must be a string", k.Line)
		}
		if k.ShortTag() == "!!merge" {
			ms, err := d.merge(v)
			if err != nil {
				return nil, err
			}
			merged = append(merged, ms...)
			continue
		}
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: key %q already set in this mapping", k.Line, k.Value)
		}
		seen[k.Value] = true
		val, err := d.value(v)
		if err != nil {
			return nil, err
		}
		out = append(out, mapItem{Key: k.Value, Value: val})
	}
	for _, m := range merged {
		for _, it := range m {
			if !seen[it.Key] {
				seen[it.Key] = true
				out = append(out, it)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Key, out[j].Key
		if keyRank[a] != keyRank[b] {
			return keyRank[a] < keyRank[b]
		}
		return a < b
	})
	return out, nil
}

// merge decodes the value of a merge key: a mapping or a list of them.
func (d *decoder) merge(n *yaml.Node) ([]mapSlice, error) {
	v, err := d.value(n)
	if err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case mapSlice:
		return []mapSlice{t}, nil
	case []interface{}:
		out := make([]mapSlice, 0, len(t))
		for _, e := range t {
			m, ok := e.(mapSlice)
			if !ok {
				return nil, fmt.Errorf("line %d: << merges a mapping or a list of mappings", n.Line)
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: << merges a mapping or a list of mappings", n.Line)
}

// toNode turns an imported value back into YAML; a scalar of the input
// keeps its text, tag and quoting.
func toNode(v interface{}) *yaml.Node {
	switch t := v.(type) {
	case mapSlice:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, it := range t {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: it.Key}, toNode(it.Value))
		}
		return n
	case []interface{}:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range t {
			n.Content = append(n.Content, toNode(e))
		}
		return n
	case *yaml.Node:
		c := *t
		c.Anchor, c.HeadComment, c.LineComment, c.FootComment, c.Line, c.Column = "", "", "", "", 0, 0
		if c.Kind == yaml.ScalarNode && c.ShortTag() == "!!str" {
			c.Value = dollars(c.Value)
		}
		if c.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 && c.Style&yaml.TaggedStyle == 0 && plainReadsAs(c.Value) {
			// Quotes it does not need go, as a re-marshal dropped them
			// before; the encoder quotes again where YAML 1.2 needs it.
			c.Style = 0
		}
		return &c
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}
	}
	// A string (quoted when its plain form would read as another type).
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: dollars(fmt.Sprint(v))}
}

// dollars writes every `$` of an Alertmanager string as `$$`: Alertmanager
// never expands environment variables, the router's configuration does
// (`${VAR}`, and `$$` for one `$`), so a text such as `over $$500` or
// `kubectl -n ${NAMESPACE}` must reach the router's notifications as
// Alertmanager sent it.
func dollars(s string) string {
	return strings.ReplaceAll(s, "$", "$$")
}

// plainReadsAs reports whether s written unquoted reads as the string s
// in YAML 1.1, as Alertmanager and the router decode (yaml.v2): not
// "010", "yes", "1.20", "#x", " x" nor "a: b"; nor "17:00" or "1:10",
// YAML 1.1 base-60 numbers to other readers of the file (yaml.v2 quotes
// them too).
func plainReadsAs(s string) bool {
	if base60.MatchString(s) {
		return false
	}
	var v interface{}
	err := yamlv2.Unmarshal([]byte(s), &v)
	got, ok := v.(string)
	return err == nil && ok && got == s
}

// base60 matches YAML 1.1's base-60 numbers (190:20:30).
var base60 = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// marshal writes v as block YAML, two spaces per level.
func marshal(v interface{}) (string, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	e.CompactSeqIndent()
	if err := e.Encode(toNode(v)); err != nil {
		return "", err
	}
	if err := e.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// receiverKey reports whether k may be a key of an Alertmanager receiver:
// its name, its labels or an integration's list (*_configs: the ones the
// router lacks, a later Alertmanager's too, are named and left on
// Alertmanager). Anything else Alertmanager refuses — a misspelled
// integration such as pagerduty_config, which carried on would leave the
// receiver a blackhole recording every page as muted.
func receiverKey(k string) bool {
	return k == "name" || k == "labels" || strings.HasSuffix(k, "_configs")
}

// droppedRouteKey ends the note on a route key outside routeKeys.
const droppedRouteKey = "not an Alertmanager v0.35 route key the router knows (misspelled? Alertmanager v0.35 refuses it); dropped"

// routeKeys are the route keys the router reads (Alertmanager v0.35's);
// a route key outside them (a later Alertmanager's) is dropped with a note
// rather than making the imported file fail to load — unless the route
// is left matching every alert (no match, match_re or matchers below the
// root): a misspelled matchers made that route a catch-all.
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

// unreadKeys are the keys of m that known does not list, in file order.
func unreadKeys(m mapSlice, known map[string]bool) []string {
	var out []string
	for _, it := range m {
		if !known[it.Key] {
			out = append(out, it.Key)
		}
	}
	return out
}

// checkInhibitRules refuses the inhibit rules Alertmanager refuses, with
// their YAML path: a matcher that does not parse, a regular expression that
// does not compile. They stay in Alertmanager's file, which Alertmanager
// would not load: the import said nothing of it (an audit).
func checkInhibitRules(v interface{}) error {
	l, err := sequence(v, "inhibit_rules")
	if err != nil {
		return err
	}
	for i, r := range l {
		path := fmt.Sprintf("inhibit_rules[%d]", i)
		m, err := mapping(r, path)
		if err != nil {
			return err
		}
		for _, key := range []string{"source_matchers", "target_matchers"} {
			ms, _ := mustGet(m, key).([]interface{})
			for j, line := range ms {
				if _, err := matchers.Parse(str(line)); err != nil {
					return fmt.Errorf("%s.%s[%d]: %w", path, key, j, err)
				}
			}
		}
		for _, key := range []string{"source_match_re", "target_match_re"} {
			re, _ := mustGet(m, key).(mapSlice)
			for _, it := range re {
				if _, err := labels.NewMatcher(labels.MatchRegexp, it.Key, str(it.Value)); err != nil {
					return fmt.Errorf("%s.%s.%s: %w", path, key, it.Key, err)
				}
			}
		}
	}
	return nil
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
	switch t := v.(type) {
	case mapSlice:
		return "a mapping"
	case []interface{}:
		return "a list"
	case *yaml.Node:
		if t.ShortTag() == "!!str" {
			return fmt.Sprintf("the string %q", t.Value)
		}
		return t.Value
	case string:
		return fmt.Sprintf("the string %q", t)
	}
	return fmt.Sprintf("%v", v)
}

// convertAlertmanager converts the text of an alertmanager.yml. A file
// whose shape Alertmanager would refuse (a receiver without a name, a
// route naming an undefined receiver, a list where a mapping belongs) is
// an error naming the YAML path; anything else converts into a file
// check-config loads (but for the secret and template files it names, read
// then).
func convertAlertmanager(b []byte) (imported, error) {
	// Decoded into yaml.v3 nodes, so that every scalar keeps the text
	// Alertmanager reads into its string fields (a generic decode turned
	// the label value 1.20 into the float 1.2, 010 into 8, yes into true).
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return imported{}, err
	}
	top, err := (&decoder{expanding: map[*yaml.Node]bool{}}).value(&root)
	if err != nil {
		return imported{}, err
	}
	am, err := mapping(top, "the file")
	if err != nil {
		return imported{}, fmt.Errorf("%w (route:, receivers: …)", err)
	}
	var notes []string
	var amOnly []string
	if cfg, ok := get(am, "alertmanager"); ok {
		if m, err := mapping(cfg, "alertmanager"); err == nil {
			if _, ok := get(m, "config"); ok {
				// kube-prometheus-stack's values: alertmanager.config
				// holds the alertmanager.yml (a review: it was called a
				// router configuration).
				return imported{}, errors.New("this is a Helm values file (alertmanager.config holds the Alertmanager configuration): save the content of alertmanager.config to a file and import that")
			}
		}
	}
	if keys := routerKeysOf(am); len(keys) > 0 {
		// A router.yml given by mistake was "imported" with every router
		// key dropped, the bearer token and Prometheus URL lost (an audit).
		return imported{}, fmt.Errorf("this is a router configuration already (%s): check it with router check-config", strings.Join(keys, ", "))
	}
	var typos []string
	if unknown := unreadKeys(am, topKeys); len(unknown) > 0 {
		var known []string
		for _, k := range unknown {
			if amTopKeys[k] {
				known = append(known, k)
			} else {
				typos = append(typos, k)
			}
		}
		if len(typos) > 0 {
			notes = append(notes, fmt.Sprintf("%s: not a key of Alertmanager v0.35 either (misspelled? Alertmanager refuses the file); dropped", strings.Join(typos, ", ")))
		}
		if len(known) > 0 {
			notes = append(notes, fmt.Sprintf("%s: not read by the router; dropped", strings.Join(known, ", ")))
			amOnly = append(amOnly, known...)
		}
	}
	global, _ := get(am, "global")
	g, err := mapping(global, "global")
	if err != nil {
		return imported{}, err
	}
	if droppedGlobal := unreadKeys(g, globalKeys); len(droppedGlobal) > 0 {
		notes = append(notes, fmt.Sprintf("global: %s: not read by the router; dropped (settings of Alertmanager itself or of integrations the router lacks: keep them in Alertmanager's file)", strings.Join(droppedGlobal, ", ")))
		for _, k := range droppedGlobal {
			amOnly = append(amOnly, "global."+k)
		}
	}
	gHTTP, _ := get(g, "http_config")
	gPDURL, _ := get(g, "pagerduty_url")
	gSlack := slackGlobals{
		token: mustGet(g, "slack_app_token"), tokenFile: mustGet(g, "slack_app_token_file"), appURL: mustGet(g, "slack_app_url"),
		apiURL: mustGet(g, "slack_api_url"), apiURLFile: mustGet(g, "slack_api_url_file"), http: gHTTP,
	}

	rv, ok := get(am, "route")
	if !ok || rv == nil {
		return imported{}, fmt.Errorf("route: missing (Alertmanager requires the root route)")
	}
	recvs, _ := get(am, "receivers")
	list, err := sequence(recvs, "receivers")
	if err != nil {
		return imported{}, err
	}
	names := map[string]bool{}
	var receivers []interface{}
	var slackResolvedOff bool
	var lost, pagesLost, partial, severityDerived []string
	for i, v := range list {
		path := fmt.Sprintf("receivers[%d]", i)
		r, err := mapping(v, path)
		if err != nil {
			return imported{}, err
		}
		nameV := mustGet(r, "name")
		name := str(nameV)
		if name == "" {
			return imported{}, fmt.Errorf("%s.name: missing", path)
		}
		if names[name] {
			return imported{}, fmt.Errorf("%s.name: receiver %q defined twice", path, name)
		}
		for _, it := range r {
			if !receiverKey(it.Key) {
				return imported{}, fmt.Errorf("%s.%s: not a receiver key of Alertmanager (it refuses this file: field %s not found); a misspelled integration, such as pagerduty_config, would leave receiver %q sending nothing", path, it.Key, it.Key, name)
			}
		}
		names[name] = true
		out := mapSlice{{Key: "name", Value: nameV}}
		var kept int
		pdl, err := integrations(r, path, "pagerduty_configs")
		if err != nil {
			return imported{}, err
		}
		var pds []interface{}
		var pdLost []string
		for i, c := range pdl {
			if str(mustGet(c, "service_key")) != "" || str(mustGet(c, "service_key_file")) != "" {
				why := fmt.Sprintf("pagerduty_configs[%d]: Events API v1 service_key: create an Events API v2 integration in PagerDuty and set routing_key", i)
				notes = append(notes, fmt.Sprintf("receiver %q: %s; the router speaks Events API v2 only, so this entry is left out", name, why))
				pdLost = append(pdLost, why)
				continue
			}
			if notify.IsTemplate(str(mustGet(c, "routing_key"))) {
				// Alertmanager renders it per notification; the router
				// refuses it (check-config too): left out, as a v1 key.
				why := fmt.Sprintf("%s.pagerduty_configs[%d].routing_key: %s", path, i, pagerduty.TemplatedRoutingKey)
				notes = append(notes, fmt.Sprintf("receiver %q: %s; this entry is left out", name, why))
				pdLost = append(pdLost, why)
				continue
			}
			c = del(c, "service_key", "service_key_file") // null: unset
			if !hasKey(c, "url") && gPDURL != nil {
				c = set(c, "url", gPDURL)
			}
			if !hasKey(c, "http_config") && gHTTP != nil {
				c = set(c, "http_config", gHTTP)
			}
			if str(mustGet(c, "severity")) == "" {
				entry := fmt.Sprintf("%s.pagerduty_configs[%d]", path, i)
				notes = append(notes, fmt.Sprintf("receiver %q: pagerduty_configs[%d]: no severity: Alertmanager sends \"error\", the router derives it from its decision (page: critical, ticket: warning); set severity: error to keep Alertmanager's urgency", name, i))
				severityDerived = append(severityDerived, entry)
			}
			pds = append(pds, c)
		}
		if len(pds) > 0 {
			out = append(out, mapItem{Key: "pagerduty_configs", Value: pds})
			kept += len(pds)
		}
		sll, err := integrations(r, path, "slack_configs")
		if err != nil {
			return imported{}, err
		}
		var sls []interface{}
		for i, c := range sll {
			if str(mustGet(c, "api_url")) != "" && str(mustGet(c, "api_url_file")) != "" {
				// Alertmanager refuses the file; the import kept the file's
				// URL and dropped api_url without a word.
				return imported{}, fmt.Errorf("%s.slack_configs[%d]: at most one of api_url and api_url_file must be configured (Alertmanager refuses both)", path, i)
			}
			if !hasKey(c, "send_resolved") {
				// Alertmanager's Slack default; the router's is true.
				c, slackResolvedOff = set(c, "send_resolved", false), true
			}
			c, why := convertSlack(c, gSlack)
			if why != "" {
				notes = append(notes, fmt.Sprintf("receiver %q: slack_configs[%d] %s", name, i, why))
				continue
			}
			sls = append(sls, c)
		}
		if len(sls) > 0 {
			out = append(out, mapItem{Key: "slack_configs", Value: sls})
			kept += len(sls)
		}
		var others []string
		for _, it := range r {
			k := it.Key
			if l, _ := it.Value.([]interface{}); strings.HasSuffix(k, "_configs") && k != "pagerduty_configs" && k != "slack_configs" && len(l) > 0 {
				others = append(others, k)
			}
		}
		if len(others) > 0 {
			sort.Strings(others)
			notes = append(notes, fmt.Sprintf("receiver %q: %s: the router has no such integration (PagerDuty, Slack and log only); keep them on Alertmanager (its own receiver for them, beside the route to the router)", name, strings.Join(others, ", ")))
			if kept > 0 {
				partial = append(partial, fmt.Sprintf("%s (%s)", name, strings.Join(others, ", ")))
			}
		}
		switch {
		case kept > 0:
		case len(pdl)+len(sll)+len(others) == 0:
			notes = append(notes, fmt.Sprintf("receiver %q: no integrations, in Alertmanager as here: a blackhole — what its routes match is recorded as muted, not sent", name))
		default:
			notes = append(notes, fmt.Sprintf("receiver %q: nothing the router can send to is left; it prints notifications on stdout (log_configs) until you add one", name))
			lost = append(lost, name)
			out = append(out, mapItem{Key: "log_configs", Value: []interface{}{mapSlice{}}})
		}
		left := "it is left with log_configs: its pages would only be printed on stdout"
		if kept > 0 {
			var keys []string
			for _, it := range out[1:] {
				keys = append(keys, it.Key)
			}
			left = fmt.Sprintf("it keeps %s: its pages would only reach those", strings.Join(keys, ", "))
		}
		for _, why := range pdLost {
			pagesLost = append(pagesLost, fmt.Sprintf("receiver %q: %s (%s)", name, why, left))
		}
		receivers = append(receivers, out)
	}
	if slackResolvedOff {
		notes = append(notes, "slack_configs without send_resolved: written as send_resolved: false, Alertmanager's default for Slack (the router's default is true: a resolve edits the incident's parent message and replies in its thread)")
	}
	route, err := portRoute(rv, "route", names, &notes)
	if err != nil {
		return imported{}, err
	}
	notes = append(notes, "alerts the policies decide none (by default severity info, debug, notice, p5 …) are recorded but never sent, where Alertmanager sent them to their route's receiver: map such values to ticket under policies.severity to keep them (docs/policies.md)")
	notes = append(notes, routeDifferences(route, "route", nil)...)
	for _, k := range []string{"matchers", "match", "match_re", "continue", "mute_time_intervals", "active_time_intervals"} {
		given := false
		switch v := mustGet(route, k).(type) {
		case *yaml.Node:
			given = isTrue(v)
		case []interface{}:
			given = len(v) > 0
		case mapSlice:
			given = len(v) > 0
		}
		if given {
			return imported{}, fmt.Errorf("route.%s: the root route cannot have it (Alertmanager refuses it too: the root is every alert's fallback)", k)
		}
	}
	if str(mustGet(route, "receiver")) == "" {
		return imported{}, fmt.Errorf("route.receiver: missing (the root route names the default receiver)")
	}

	var doc mapSlice
	tv, _ := get(am, "templates")
	templates, err := sequence(tv, "templates")
	if err != nil {
		return imported{}, err
	}
	if len(templates) > 0 {
		// The router reads Alertmanager's template files, in the same
		// language, and resolves relative globs against its config file's
		// directory, as Alertmanager does.
		doc = append(doc, mapItem{Key: "templates", Value: templates})
		notes = append(notes, "templates: kept; relative globs are resolved against this file's directory, as Alertmanager resolves them against its own: copy the template files next to router.yml (an absolute glob must match where the router runs). check-config fails on a message that calls a template no file defines")
	}
	doc = append(doc, mapItem{Key: "route", Value: route}, mapItem{Key: "receivers", Value: receivers})
	var intervals []interface{}
	for _, key := range []string{"time_intervals", "mute_time_intervals"} {
		v, _ := get(am, key)
		l, err := sequence(v, key)
		if err != nil {
			return imported{}, err
		}
		intervals = append(intervals, l...)
	}
	if len(intervals) > 0 {
		doc = append(doc, mapItem{Key: "time_intervals", Value: intervals})
	}
	if v, ok := get(am, "inhibit_rules"); ok {
		if err := checkInhibitRules(v); err != nil {
			return imported{}, err
		}
		rules, err := marshal(v)
		if err != nil {
			return imported{}, err
		}
		notes = append(notes, "inhibit_rules: the router suppresses by decision tier instead (a firing SLO page suppresses the tickets of the same SLO, across payloads); keep severity inhibition in Alertmanager, where it runs before the router. The rules were:\n"+strings.TrimRight(rules, "\n"))
		n := 0
		if l, ok := v.([]interface{}); ok {
			n = len(l)
		}
		amOnly = append(amOnly, fmt.Sprintf("inhibit_rules (%d)", n))
	}
	body, err := marshal(doc)
	if err != nil {
		return imported{}, err
	}
	var sb strings.Builder
	sb.WriteString("# router.yml imported from an Alertmanager configuration by `router import-alertmanager`.\n")
	sb.WriteString("# Check it with `router check-config --config.file=router.yml`.\n")
	for _, n := range foldReceiverNotes(notes) {
		sb.WriteString("#\n")
		for _, line := range strings.Split(n, "\n") {
			sb.WriteString("# " + line + "\n")
		}
	}
	sb.WriteString(body)
	return imported{out: sb.String(), lost: lost, pagesLost: pagesLost, partial: partial, amOnly: amOnly, severityDerived: severityDerived, typos: typos, notes: notes}, nil
}

// foldReceiverNotes makes the notes that say the same of several
// receivers (`receiver "a": …`) one note naming them, at the first one's
// place: a file of 300 teams' receivers without a PagerDuty severity wrote
// the same note 300 times (an audit).
func foldReceiverNotes(notes []string) []string {
	var out []string
	names := map[string][]string{} // what is said → the receivers it is said of
	at := map[string]int{}         // what is said → its note's index in out
	for _, n := range notes {
		name, said, ok := receiverNote(n)
		if !ok {
			out = append(out, n)
			continue
		}
		if _, seen := at[said]; !seen {
			at[said] = len(out)
			out = append(out, n)
		}
		names[said] = append(names[said], name)
	}
	for said, i := range at {
		if rs := names[said]; len(rs) > 1 {
			out[i] = fmt.Sprintf("receivers %s (%d): %s", listSome(rs, 10), len(rs), said)
		}
	}
	return out
}

// receiverNote splits a note `receiver "name": said`.
func receiverNote(n string) (name, said string, ok bool) {
	rest, found := strings.CutPrefix(n, "receiver ")
	if !found {
		return "", "", false
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", "", false
	}
	said, found = strings.CutPrefix(rest[len(q):], ": ")
	return q, said, found
}

// listSome joins the first max of items, saying how many more there are.
func listSome(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(" and %d more", len(items)-max)
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
		k := it.Key
		switch {
		case !routeKeys[k]:
			dropped = append(dropped, k)
			continue
		case k == "receiver":
			name := str(it.Value)
			if name == "" {
				// `receiver: null` or "": Alertmanager's route inherits
				// its parent's receiver, as the router's does when the key
				// is absent (the root's is required: checked after).
				continue
			}
			if !receivers[name] {
				return nil, fmt.Errorf("%s.receiver: undefined receiver %q", path, name)
			}
		case k == "group_by":
			if l, ok := it.Value.([]interface{}); ok {
				names := make([]string, 0, len(l))
				for _, n := range l {
					names = append(names, str(n))
				}
				if errs := routing.CheckGroupBy(path, names); len(errs) > 0 {
					return nil, errs[0] // as Alertmanager, which refuses the file
				}
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
		if path != "route" && !hasKey(r, "match") && !hasKey(r, "match_re") && !hasKey(r, "matchers") {
			// Without the key, the route matches every alert: a misspelled
			// matchers (Alertmanager refuses the file) would send them all
			// to this route's receiver.
			return nil, fmt.Errorf("%s: %s: not a route key of Alertmanager v0.35, and without it the route matches every alert (a misspelled matchers? Alertmanager refuses this file: field %s not found)", path, strings.Join(dropped, ", "), dropped[0])
		}
		*notes = append(*notes, fmt.Sprintf("%s: %s: %s", path, strings.Join(dropped, ", "), droppedRouteKey))
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
			names = append(names, it.Key)
			eq[it.Key] = str(it.Value)
		}
	}
	if m, ok := mustGet(r, "match_re").(mapSlice); ok {
		for _, it := range m {
			names = append(names, it.Key)
		}
	}
	if l, ok := mustGet(r, "matchers").([]interface{}); ok {
		for _, v := range l {
			ms, err := matchers.Parse(str(v))
			if err != nil {
				continue // check-config names it
			}
			for _, m := range ms {
				names = append(names, m.Name)
				if m.Type == labels.MatchEqual {
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

// slackGlobals are the keys of Alertmanager's `global` its slack_configs
// entries inherit.
type slackGlobals struct {
	token, tokenFile, appURL, apiURL, apiURLFile, http interface{}
}

// convertSlack turns one Alertmanager slack_configs entry into the
// router's — Web API with a bot token, or an incoming webhook as in
// Alertmanager when no token is given — or says why it cannot. The
// globals apply as Alertmanager v0.35 applies them (config.go): the app
// token only to an entry with no token, no api_url and no http_config
// authorization of its own; the API URL to an entry with no api_url or
// api_url_file; the app URL, where a token posts, to an entry with none.
func convertSlack(c mapSlice, g slackGlobals) (mapSlice, string) {
	ownToken := hasKey(c, "app_token") || hasKey(c, "app_token_file") || hasKey(c, "token") || hasKey(c, "token_file")
	ownAuth := hasAuthorization(mustGet(c, "http_config"))
	apiURL := str(mustGet(c, "api_url"))
	globalToken := !ownToken && !ownAuth && apiURL == ""
	if apiURL == "" && !hasKey(c, "api_url_file") {
		apiURL = str(g.apiURL)
		if apiURL == "" && g.apiURLFile != nil {
			c = set(c, "api_url_file", g.apiURLFile)
		}
	}
	webhook := mustGet(c, "api_url_file")
	c = del(c, "api_url", "api_url_file")
	if !hasKey(c, "http_config") && g.http != nil {
		// global.http_config applies to every integration, webhooks too.
		c = set(c, "http_config", g.http)
	}
	hasToken := ownToken
	if globalToken && g.token != nil {
		c, hasToken = set(c, "app_token", g.token), true
	} else if globalToken && g.tokenFile != nil {
		c, hasToken = set(c, "app_token_file", g.tokenFile), true
	}
	if hasToken && !hasKey(c, "app_url") && g.appURL != nil {
		// With a token Alertmanager posts to the entry's app_url, else to
		// global.slack_app_url.
		c = set(c, "app_url", g.appURL)
	}
	if !hasToken && webhook == nil && (apiURL == "" || strings.HasSuffix(apiURL, "chat.postMessage")) {
		// Before app_token, a bot token rode in http_config for the Web
		// API: authorization.credentials(_file) or bearer_token(_file),
		// posting to api_url.
		c, hasToken = liftBearer(c)
		if hasToken && apiURL != "" && !hasKey(c, "app_url") {
			c = set(c, "app_url", apiURL)
		}
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

// hasAuthorization reports whether an http_config sets the Authorization
// header: authorization, or bearer_token(_file), which Alertmanager's
// HTTP client config turns into one.
func hasAuthorization(hc interface{}) bool {
	m, _ := hc.(mapSlice)
	return mustGet(m, "authorization") != nil || str(mustGet(m, "bearer_token")) != "" || str(mustGet(m, "bearer_token_file")) != ""
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
