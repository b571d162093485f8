package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/alertrouter/alertrouter/notify"
	"github.com/alertrouter/alertrouter/routing"
	"github.com/alertrouter/alertrouter/routing/alert"
	"github.com/alertrouter/alertrouter/routing/webhook"
)

// checkConfig is `router check-config`: exit 0 with a one-screen summary, or
// 1 with every error, each prefixed by its YAML path.
func (m *Main) checkConfig(ctx context.Context, testRoute string, probe bool) int {
	fail := func(err error) int {
		fmt.Fprintf(m.Stderr, "router check-config: FAILED\n")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(m.Stderr, "  %s\n", line)
		}
		return 1
	}
	cfg, err := m.loadConfig()
	if err != nil {
		return fail(err)
	}
	// What serve refuses with the same --web.config.file (none when not
	// given): basic_auth_users in front of Slack triage or a bearer
	// webhook, a replaying console nothing protects.
	if err := m.checkWebConfig(cfg); err != nil {
		return fail(err)
	}
	if err := m.checkListenAddresses(); err != nil {
		return fail(err)
	}
	// Build exactly what serve builds (notifiers with their secrets and
	// templates, the edge's auth, the store client without connecting),
	// on a throwaway registry and a silent logger, then drop it.
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
	st, err := d.openState(cfg.Store, cfg.Console.EnableReplay)
	if err != nil {
		return fail(inConfig(cfg, err))
	}
	b, err := d.build(cfg, st)
	probed, failed := "", 0
	if err == nil && probe {
		probed, failed = probeAll(ctx, cfg, b)
	}
	st.close()
	if err != nil {
		return fail(err)
	}
	if testRoute != "" {
		// stdout stays the receivers alone, as amtool prints them (scripts
		// compare the two); the warnings and probes go to stderr. They were
		// skipped, and deploy/README's check (with --test-route) passed a
		// 5-character routing key and an unreachable PagerDuty — an audit.
		for _, s := range configWarnings(cfg) {
			fmt.Fprintf(m.Stderr, "warning: %s\n", s)
		}
		fmt.Fprint(m.Stderr, probed)
		code := m.testRoute(b.pipeline, testRoute)
		if failed > 0 {
			fmt.Fprintf(m.Stderr, "router check-config: %d probes FAILED (above)\n", failed)
			return 1
		}
		return code
	}
	w := m.Stdout
	fmt.Fprintf(w, "Checking %s  SUCCESS\n", cfg.Source)
	store := "embedded in-memory (single replica)"
	if r := cfg.Store.Redis; r != nil {
		store = "redis " + strings.Join(r.Addrs, ",")
		switch {
		case r.MasterName != "":
			store += " (sentinel, master " + r.MasterName + ")"
		case r.Cluster || len(r.Addrs) > 1:
			// Several addresses select Redis Cluster: said, since a
			// primary and its replica given here would be taken for
			// cluster seeds, and no replica would ever become ready.
			store += " (Redis Cluster: every address a cluster seed; for one primary give its address alone, for primary and replicas use Sentinel)"
		default:
			store += " (single node)"
		}
		if r.TLS != nil {
			store += " over TLS"
		}
		if r.Username != "" {
			store += fmt.Sprintf(" as ACL user %q", r.Username)
		}
	}
	mode := "fail open"
	if cfg.Store.FailClosed {
		mode = "fail closed"
	}
	fmt.Fprintf(w, "store: %s, %s, key prefix %q\n", store, mode, cfg.Store.KeyPrefix)
	fmt.Fprintf(w, "dedup: claim %s, remember %s, repeat %s\n", cfg.Dedup.ClaimTTL, cfg.Dedup.NotifiedTTL, cfg.Dedup.RepeatInterval)
	fmt.Fprintf(w, "receivers (%d):\n", len(cfg.Receivers))
	followed := func(kind string, j int, keys []notify.DefaultKey) {
		if len(keys) == 0 {
			return
		}
		texts := make([]string, len(keys))
		for i, k := range keys {
			texts[i] = k.String()
		}
		fmt.Fprintf(w, "    %s[%d]: keys left unset render Alertmanager's defaults, which your template files redefine, as Alertmanager does: %s\n", kind, j, strings.Join(texts, "; "))
	}
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
		if len(kinds) == 0 {
			kinds = append(kinds, "no integrations: a blackhole (what routes here is recorded as muted, not sent)")
		}
		fmt.Fprintf(w, "  - %s: %s\n", r.Name, strings.Join(kinds, ", "))
		for j, p := range r.PagerdutyConfigs {
			followed("pagerduty_configs", j, p.RedefinedDefaults(b.templates))
		}
		for j, s := range r.SlackConfigs {
			if s.WebhookMode() {
				fmt.Fprintf(w, "    slack_configs[%d]: incoming webhook (api_url): one message per notification — no incident parent, no thread, no edit on resolve, no triage buttons; set token and channel for those; your title and text read the incident's alerts as the webhook held them, the card lists what changed\n", j)
			}
			followed("slack_configs", j, s.RedefinedDefaults(b.templates))
			if u := s.Unused(); len(u) > 0 {
				fmt.Fprintf(w, "    slack_configs[%d]: Alertmanager keys accepted without effect (the router's Block Kit message replaces the attachment): %s\n", j, strings.Join(u, ", "))
			}
		}
	}
	fmt.Fprintln(w, "routes:")
	// Matchers may hold ${ENV} values: printed through the redactor, as
	// every other value check-config shows.
	var routes strings.Builder
	printRoute(&routes, cfg.Route, 1)
	fmt.Fprint(w, cfg.RedactString(routes.String()))
	for _, s := range configWarnings(cfg) {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	fmt.Fprint(w, probed)
	if failed > 0 {
		fmt.Fprintf(m.Stderr, "router check-config: %d probes FAILED (above)\n", failed)
		return 1
	}
	return 0
}

func printRoute(w interface{ Write([]byte) (int, error) }, r *routing.Route, depth int) {
	ind := strings.Repeat("  ", depth)
	ms := append([]string{}, r.Matchers...)
	for _, k := range routing.SortedNames(r.RouteCompat.Match) {
		ms = append(ms, fmt.Sprintf("%s=%q", k, r.RouteCompat.Match[k]))
	}
	for _, k := range routing.SortedNames(r.MatchRE) {
		ms = append(ms, fmt.Sprintf("%s=~%q", k, r.MatchRE[k]))
	}
	m := "(all)"
	if len(ms) > 0 {
		m = strings.Join(ms, " ")
	}
	cont := ""
	if r.Continue {
		cont = " continue"
	}
	if len(r.MuteTimeIntervals) > 0 {
		cont += " mute_time_intervals " + strings.Join(r.MuteTimeIntervals, ",")
	}
	if len(r.ActiveTimeIntervals) > 0 {
		cont += " active_time_intervals " + strings.Join(r.ActiveTimeIntervals, ",")
	}
	if r.Blackhole() {
		cont += " (blackhole: no integrations, recorded as muted)"
	}
	fmt.Fprintf(w, "%s%s → %s%s\n", ind, m, r.Receiver, cont)
	if len(r.Labels) > 0 {
		names := make([]string, 0, len(r.Labels))
		for k := range r.Labels {
			names = append(names, string(k))
		}
		sort.Strings(names)
		fmt.Fprintf(w, "%s  labels %s: accepted, no effect here (templates read those Alertmanager sends: routeLabels \"name\")\n", ind, strings.Join(names, ", "))
	}
	for _, c := range r.Routes {
		printRoute(w, c, depth+1)
	}
}

// testRoute prints the receivers a firing alert with the given labels
// reaches, the way a webhook carrying it is routed: the alert is decoded,
// classified and decided like `router explain` does, so the derived
// labels (sector, kpi, incident_class, decision) are the ones explain
// prints. A derived label given in the list overrides the computed one
// (e.g. decision=page to see where a page of that alert would go).
func (m *Main) testRoute(p *routing.Pipeline, list string) int {
	ls, err := routing.ParseLabelSet(list)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router check-config: --test-route: %v\n", err)
		return 1
	}
	now := time.Now()
	r, err := routeOf(p, ls, now)
	if err != nil {
		fmt.Fprintf(m.Stderr, "router check-config: --test-route: %v\n", err)
		return 1
	}
	get := func(n string) string {
		if v, ok := ls[n]; ok {
			return v
		}
		return r.Label(n)
	}
	var receivers, muted []string
	if get("decision") != string(alert.ActionNone) {
		// The receivers the routes match, as amtool prints them whatever
		// the time (scripts compare the two); the routes serve would not
		// send to now — a time interval, a blackhole — are said on stderr.
		routes := p.Routes.MatchRoutes(get)
		receivers, muted = routing.Receivers(routes), routing.MutedRoutes(routes, now)
	}
	fmt.Fprintf(m.Stderr, "derived: sector=%s kpi=%s incident_class=%s decision=%s\n", get("sector"), get("kpi"), get("incident_class"), get("decision"))
	if get("decision") == string(alert.ActionNone) {
		fmt.Fprintln(m.Stderr, "decided none: recorded, never sent (Alertmanager would send it to its route's receiver)")
	}
	for _, why := range muted {
		later := ""
		if strings.Contains(why, "time_intervals") {
			// Alertmanager sends a notification its own interval muted at
			// the group's next flush after the interval; the router has no
			// timer: the alert goes out when Alertmanager sends it again.
			later = " (a firing muted now is sent when Alertmanager sends it again after the interval: at the group's next change or its repeat_interval)"
		}
		fmt.Fprintf(m.Stderr, "muted at %s, serve records it and sends nothing through this route: %s%s\n", now.Format(time.RFC3339), why, later)
	}
	fmt.Fprintln(m.Stdout, strings.Join(receivers, ","))
	return 0
}

// routeOf evaluates one firing alert with labels ls as a webhook carrying
// it would be.
func routeOf(p *routing.Pipeline, ls map[string]string, now time.Time) (*alert.Result, error) {
	payload := map[string]any{
		"version": "4", "status": "firing", "receiver": "router", "groupKey": "{}:{}",
		"alerts": []map[string]any{{"status": "firing", "labels": ls, "annotations": map[string]string{}, "startsAt": now.UTC().Format(time.RFC3339)}},
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	msg, err := webhook.Decode(body, now)
	if err != nil {
		return nil, err
	}
	if len(msg.Items) != 1 {
		return nil, fmt.Errorf("the labels do not make a valid alert")
	}
	return p.Evaluate(msg)[0], nil
}
