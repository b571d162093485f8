package main

import (
	"fmt"
	"os"
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

// convertAlertmanager converts the text of an alertmanager.yml.
func convertAlertmanager(b []byte) (string, error) {
	var am mapSlice
	if err := yaml.Unmarshal(b, &am); err != nil {
		return "", err
	}
	var notes []string
	global, _ := get(am, "global")
	g, _ := global.(mapSlice)
	gHTTP, _ := get(g, "http_config")
	gPDURL, _ := get(g, "pagerduty_url")
	gSlackToken, _ := get(g, "slack_app_token")
	gSlackTokenFile, _ := get(g, "slack_app_token_file")
	gSlackURL, _ := get(g, "slack_api_url")

	route, ok := get(am, "route")
	if !ok {
		return "", fmt.Errorf("no route")
	}
	recvs, _ := get(am, "receivers")
	list, _ := recvs.([]interface{})
	var receivers []interface{}
	for _, rv := range list {
		r, _ := rv.(mapSlice)
		name := str(mustGet(r, "name"))
		out := mapSlice{{Key: "name", Value: name}}
		var kept int
		if v, ok := get(r, "pagerduty_configs"); ok {
			var pds []interface{}
			for i, cv := range v.([]interface{}) {
				c, _ := cv.(mapSlice)
				if _, ok := get(c, "service_key"); ok || hasKey(c, "service_key_file") {
					notes = append(notes, fmt.Sprintf("receiver %q: pagerduty_configs[%d] uses an Events API v1 service_key; the router speaks Events API v2: add the service's v2 integration key as routing_key", name, i))
					continue
				}
				if _, ok := get(c, "url"); !ok && gPDURL != nil {
					c = set(c, "url", gPDURL)
				}
				if _, ok := get(c, "http_config"); !ok && gHTTP != nil {
					c = set(c, "http_config", gHTTP)
				}
				pds = append(pds, c)
			}
			if len(pds) > 0 {
				out = append(out, yaml.MapItem{Key: "pagerduty_configs", Value: pds})
				kept += len(pds)
			}
		}
		if v, ok := get(r, "slack_configs"); ok {
			var sls []interface{}
			for i, cv := range v.([]interface{}) {
				c, _ := cv.(mapSlice)
				c, why := convertSlack(c, gSlackToken, gSlackTokenFile, gSlackURL, gHTTP)
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
		if kept == 0 {
			notes = append(notes, fmt.Sprintf("receiver %q: nothing the router can send to is left; it prints notifications on stdout (log_configs) until you add one", name))
			out = append(out, yaml.MapItem{Key: "log_configs", Value: []interface{}{mapSlice{}}})
		}
		receivers = append(receivers, out)
	}

	doc := mapSlice{{Key: "route", Value: route}, {Key: "receivers", Value: receivers}}
	var intervals []interface{}
	for _, key := range []string{"time_intervals", "mute_time_intervals"} {
		if v, ok := get(am, key); ok {
			if l, ok := v.([]interface{}); ok {
				intervals = append(intervals, l...)
			}
		}
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

func hasKey(ms mapSlice, key string) bool { _, ok := get(ms, key); return ok }

func mustGet(ms mapSlice, key string) interface{} { v, _ := get(ms, key); return v }

// convertSlack turns one Alertmanager slack_configs entry into the
// router's (Web API, a bot token), or says why it cannot.
func convertSlack(c mapSlice, gToken, gTokenFile, gURL, gHTTP interface{}) (mapSlice, string) {
	apiURL := str(mustGet(c, "api_url"))
	if apiURL == "" {
		apiURL = str(gURL)
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
