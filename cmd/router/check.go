package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/alertrouter/alertrouter/routing"
)

// checkConfig is `router check-config`: exit 0 with a one-screen summary, or
// 1 with every error, each prefixed by its YAML path.
func (m *Main) checkConfig(testRoute string) int {
	cfg, err := m.loadConfig()
	if err != nil {
		fmt.Fprintf(m.Stderr, "router check-config: FAILED\n")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(m.Stderr, "  %s\n", line)
		}
		return 1
	}
	if _, err := evaluator(cfg); err != nil {
		fmt.Fprintf(m.Stderr, "router check-config: FAILED\n  %v\n", err)
		return 1
	}
	if testRoute != "" {
		ls, err := routing.ParseLabelSet(testRoute)
		if err != nil {
			fmt.Fprintf(m.Stderr, "router check-config: --test-route: %v\n", err)
			return 1
		}
		fmt.Fprintln(m.Stdout, strings.Join(cfg.Route.Match(func(n string) string { return ls[n] }), ","))
		return 0
	}
	w := m.Stdout
	fmt.Fprintf(w, "Checking %s  SUCCESS\n", cfg.Source)
	store := "embedded in-memory (single replica)"
	if r := cfg.Store.Redis; r != nil {
		store = "redis " + strings.Join(r.Addrs, ",")
		if r.MasterName != "" {
			store += " (sentinel, master " + r.MasterName + ")"
		}
	}
	mode := "fail open"
	if cfg.Store.FailClosed {
		mode = "fail closed"
	}
	fmt.Fprintf(w, "store: %s, %s, key prefix %q\n", store, mode, cfg.Store.KeyPrefix)
	fmt.Fprintf(w, "dedup: claim %s, remember %s, repeat %s\n", cfg.Dedup.ClaimTTL, cfg.Dedup.NotifiedTTL, cfg.Dedup.RepeatInterval)
	fmt.Fprintf(w, "receivers (%d):\n", len(cfg.Receivers))
	for _, r := range cfg.Receivers {
		var kinds []string
		if n := len(r.PagerdutyConfigs); n > 0 {
			kinds = append(kinds, fmt.Sprintf("pagerduty×%d", n))
		}
		if n := len(r.SlackConfigs); n > 0 {
			kinds = append(kinds, fmt.Sprintf("slack×%d", n))
		}
		if n := len(r.LogConfigs); n > 0 {
			kinds = append(kinds, fmt.Sprintf("log×%d", n))
		}
		sort.Strings(kinds)
		fmt.Fprintf(w, "  - %s: %s\n", r.Name, strings.Join(kinds, ", "))
	}
	fmt.Fprintln(w, "routes:")
	printRoute(w, cfg.Route, 1)
	return 0
}

func printRoute(w interface{ Write([]byte) (int, error) }, r *routing.Route, depth int) {
	ind := strings.Repeat("  ", depth)
	m := "(all)"
	if len(r.Matchers) > 0 {
		m = strings.Join(r.Matchers, " ")
	}
	cont := ""
	if r.Continue {
		cont = " continue"
	}
	fmt.Fprintf(w, "%s%s → %s%s\n", ind, m, r.Receiver, cont)
	for _, c := range r.Routes {
		printRoute(w, c, depth+1)
	}
}
