package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/alertrouter/alertrouter/notify/slack"
	"go.yaml.in/yaml/v2"
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
	out, err := convertAlertmanager(b)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router import-alertmanager: %s: %v\n", file, err)
		return 1
	}
	fmt.Fprint(m.Stdout, out)
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

// routeKeys are the route keys the router reads (Alertmanager v0.35's);
// a route key outside them (a later Alertmanager's) is dropped with a note
// rather than making the imported file fail to load.
var routeKeys = map[string]bool{
	"receiver": true, "group_by": true, "match": true, "match_re": true, "matchers": true,
	"mute_time_intervals": true, "active_time_intervals": true, "continue": true, "routes": true,
	"group_wait": true, "group_interval": true, "repeat_interval": true, "labels": true,
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
	if reflect.TypeOf(v) != nil && reflect.TypeOf(v).Kind() == reflect.Map {
		return "a mapping"
	}
	return fmt.Sprintf("%v", v)
}

// convertAlertmanager converts the text of an alertmanager.yml. A file
// whose shape Alertmanager would refuse (a receiver without a name, a
// route naming an undefined receiver, a list where a mapping belongs) is
// an error naming the YAML path; anything else converts into a file
// check-config loads (but for the secret files it names, read then).
func convertAlertmanager(b []byte) (string, error) {
	var am mapSlice // nested mappings decode as mapSlice too
	if err := yaml.Unmarshal(b, &am); err != nil {
		var top interface{}
		if yaml.Unmarshal(b, &top) == nil {
			return "", fmt.Errorf("the file: want a mapping (route:, receivers: …), got %s", yamlKind(top))
		}
		return "", err
	}
	var notes []string
	global, _ := get(am, "global")
	g, err := mapping(global, "global")
	if err != nil {
		return "", err
	}
	gHTTP, _ := get(g, "http_config")
	gPDURL, _ := get(g, "pagerduty_url")
	gSlackToken, _ := get(g, "slack_app_token")
	gSlackTokenFile, _ := get(g, "slack_app_token_file")
	gSlackURL, _ := get(g, "slack_api_url")
	gSlackURLFile, _ := get(g, "slack_api_url_file")

	rv, ok := get(am, "route")
	if !ok || rv == nil {
		return "", fmt.Errorf("route: missing (Alertmanager requires the root route)")
	}
	recvs, _ := get(am, "receivers")
	list, err := sequence(recvs, "receivers")
	if err != nil {
		return "", err
	}
	names := map[string]bool{}
	var receivers []interface{}
	for i, v := range list {
		path := fmt.Sprintf("receivers[%d]", i)
		r, err := mapping(v, path)
		if err != nil {
			return "", err
		}
		name := str(mustGet(r, "name"))
		if name == "" {
			return "", fmt.Errorf("%s.name: missing", path)
		}
		if names[name] {
			return "", fmt.Errorf("%s.name: receiver %q defined twice", path, name)
		}
		names[name] = true
		out := mapSlice{{Key: "name", Value: name}}
		var kept int
		pdv, _ := get(r, "pagerduty_configs")
		pdl, err := sequence(pdv, path+".pagerduty_configs")
		if err != nil {
			return "", err
		}
		var pds []interface{}
		for i, cv := range pdl {
			c, err := mapping(cv, fmt.Sprintf("%s.pagerduty_configs[%d]", path, i))
			if err != nil {
				return "", err
			}
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
		slv, _ := get(r, "slack_configs")
		sll, err := sequence(slv, path+".slack_configs")
		if err != nil {
			return "", err
		}
		var sls []interface{}
		for i, cv := range sll {
			c, err := mapping(cv, fmt.Sprintf("%s.slack_configs[%d]", path, i))
			if err != nil {
				return "", err
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
			if k := str(it.Key); strings.HasSuffix(k, "_configs") && k != "pagerduty_configs" && k != "slack_configs" {
				others = append(others, k)
			}
		}
		if len(others) > 0 {
			sort.Strings(others)
			notes = append(notes, fmt.Sprintf("receiver %q: %s: the router has no such integration (PagerDuty, Slack and log only); keep them on Alertmanager with a route that continues", name, strings.Join(others, ", ")))
		}
		switch {
		case kept > 0:
		case len(pdl)+len(sll)+len(others) == 0:
			notes = append(notes, fmt.Sprintf("receiver %q: no integrations, in Alertmanager as here: a blackhole — what its routes match is recorded as muted, not sent", name))
		default:
			notes = append(notes, fmt.Sprintf("receiver %q: nothing the router can send to is left; it prints notifications on stdout (log_configs) until you add one", name))
			out = append(out, yaml.MapItem{Key: "log_configs", Value: []interface{}{mapSlice{}}})
		}
		receivers = append(receivers, out)
	}
	route, err := portRoute(rv, "route", names, &notes)
	if err != nil {
		return "", err
	}
	if str(mustGet(route, "receiver")) == "" {
		return "", fmt.Errorf("route.receiver: missing (the root route names the default receiver)")
	}

	doc := mapSlice{{Key: "route", Value: route}, {Key: "receivers", Value: receivers}}
	var intervals []interface{}
	for _, key := range []string{"time_intervals", "mute_time_intervals"} {
		v, _ := get(am, key)
		l, err := sequence(v, key)
		if err != nil {
			return "", err
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
		return "", err
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
	return sb.String(), nil
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

func hasKey(ms mapSlice, key string) bool { _, ok := get(ms, key); return ok }

func mustGet(ms mapSlice, key string) interface{} { v, _ := get(ms, key); return v }

// convertSlack turns one Alertmanager slack_configs entry into the
// router's (Web API, a bot token), or says why it cannot.
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
	c = del(c, "api_url")
	if hasKey(c, "api_url_file") {
		c = del(c, "api_url_file")
	}
	hasToken := hasKey(c, "app_token") || hasKey(c, "app_token_file") || hasKey(c, "token") || hasKey(c, "token_file")
	if !hasToken && gToken != nil {
		c, hasToken = set(c, "app_token", gToken), true
	}
	if !hasToken && gTokenFile != nil {
		c, hasToken = set(c, "app_token_file", gTokenFile), true
	}
	if hc, ok := mustGet(c, "http_config").(mapSlice); ok && !hasToken {
		if auth, ok := mustGet(hc, "authorization").(mapSlice); ok {
			if cred, ok := get(auth, "credentials"); ok {
				c, hasToken = set(c, "app_token", cred), true
				hc = del(hc, "authorization")
				c = set(c, "http_config", hc)
			}
		}
	}
	if !hasToken {
		// An incoming webhook stays one: one message per notification, no
		// thread, parent edit or buttons (check-config says so).
		switch {
		case webhook != nil:
			return set(c, "api_url_file", webhook), ""
		case slack.IsWebhookURL(apiURL):
			return set(c, "api_url", apiURL), ""
		}
		return nil, "has neither a bot token nor an incoming-webhook URL"
	}
	if str(mustGet(c, "channel")) == "" {
		return nil, "names no channel; the router posts with the Web API and needs one"
	}
	if !hasKey(c, "http_config") && gHTTP != nil {
		c = set(c, "http_config", gHTTP)
	}
	return c, ""
}
