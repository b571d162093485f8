package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// alertmanagerRoutes uses Alertmanager's route keys: match, match_re,
// group_by, mute_time_intervals, active_time_intervals, time_intervals, and
// its blackhole receiver (no integrations).
const alertmanagerRoutes = `
time_intervals:
  - name: always
    time_intervals: [{weekdays: ['sunday:saturday']}]
  - name: in-1999
    time_intervals: [{years: ['1999']}]
route:
  receiver: default
  group_by: [alertname, cluster]
  routes:
    - match: {team: db}
      receiver: db
      group_wait: 30s
    - match_re: {team: 'fro.*'}
      receiver: front
      mute_time_intervals: [always]
    - match: {team: night}
      receiver: night
      active_time_intervals: [in-1999]
    - match: {team: both}
      receiver: db
      continue: true
    - match: {team: both}
      receiver: front
      mute_time_intervals: [always]
    - match: {team: drop}
      receiver: "null"
    - match: {team: dropsome}
      receiver: "null"
      continue: true
    - match: {team: dropsome}
      receiver: db
receivers:
  - name: "null"
  - {name: default, log_configs: [{}]}
  - {name: db, log_configs: [{}]}
  - {name: front, log_configs: [{}]}
  - {name: night, log_configs: [{}]}
`

func TestAlertmanagerRouteKeysRouteMuteAndGroup(t *testing.T) {
	p := writeFile(t, "router.yml", alertmanagerRoutes)
	for _, tc := range []struct {
		team, receivers, mutedBy string
		// mutedRoutes: the matched routes muted while another delivers.
		mutedRoutes string
		// matched: the receivers of the matched routes, as amtool says.
		matched string
	}{
		{"db", "db", "", "", "db"},
		{"frontend", "", "mute_time_intervals always of route.routes[1]", "", "front"},
		{"night", "", "outside active_time_intervals in-1999 of route.routes[2]", "", "night"},
		{"both", "db", "", "mute_time_intervals always of route.routes[4]", "db,front"},
		{"other", "default", "", "", "default"},
		// A receiver without integrations is Alertmanager's blackhole.
		{"drop", "", `receiver "null" of route.routes[5] has no integrations (a blackhole)`, "", "null"},
		{"dropsome", "db", "", `receiver "null" of route.routes[6] has no integrations (a blackhole)`, "null,db"},
	} {
		payload := `{"version":"4","status":"firing","receiver":"r","alerts":[{"status":"firing","labels":{"alertname":"DiskFull","severity":"critical","team":"` + tc.team + `","cluster":"c1","instance":"i1"},"startsAt":"2026-12-01T10:00:00Z"}]}`
		var out, errb syncBuffer
		m := &Main{Stdin: strings.NewReader(payload), Stdout: &out, Stderr: &errb}
		if code := m.Run(t.Context(), []string{"--config.file=" + p, "explain", "-"}); code != 0 {
			t.Fatalf("explain: %s", errb.String())
		}
		var e explanation
		if err := json.Unmarshal([]byte(out.String()), &e); err != nil {
			t.Fatal(err)
		}
		if e.Decision.Action == "none" {
			t.Fatalf("team %s: decision none, the test needs a routed alert", tc.team)
		}
		if got := strings.Join(e.Receivers, ","); got != tc.receivers || e.MutedBy != tc.mutedBy {
			t.Errorf("team %s: receivers %q muted_by %q; want %q, %q", tc.team, got, e.MutedBy, tc.receivers, tc.mutedBy)
		}
		if got := strings.Join(e.MutedRoutes, "; "); got != tc.mutedRoutes {
			t.Errorf("team %s: muted_routes %q, want %q", tc.team, got, tc.mutedRoutes)
		}
		// check-config --test-route prints the receivers the routes
		// match, as amtool does, and says on stderr which of those routes
		// serve would not send to now.
		code, routed, errs := runMain(t, "--config.file="+p, "check-config", "--test-route", "alertname=DiskFull,severity=critical,cluster=c1,team="+tc.team)
		if code != 0 || strings.TrimSpace(routed) != tc.matched {
			t.Errorf("team %s: --test-route exit %d, %q; want %q", tc.team, code, routed, tc.matched)
		}
		for _, why := range []string{tc.mutedBy, tc.mutedRoutes} {
			if why != "" && !strings.Contains(errs, "sends nothing through this route: "+why) {
				t.Errorf("team %s: --test-route does not say %q:\n%s", tc.team, why, errs)
			}
			// A time interval holds a firing until Alertmanager sends it
			// again (the router has no timer); a blackhole never sends.
			later := strings.Contains(errs, why+" (a firing muted now is sent when Alertmanager sends it again after the interval")
			if why != "" && later != strings.Contains(why, "time_intervals") {
				t.Errorf("team %s: --test-route says when %q sends (%v), want only for a time interval:\n%s", tc.team, why, later, errs)
			}
		}
		if tc.mutedBy == "" && tc.mutedRoutes == "" && strings.Contains(errs, "muted") {
			t.Errorf("team %s: --test-route says muted with nothing muted:\n%s", tc.team, errs)
		}
		if !strings.Contains(e.Incident, "DiskFull") || !strings.Contains(e.Incident, "c1") || strings.Contains(e.Incident, "i1") {
			t.Errorf("team %s: incident %q is not grouped by the route's group_by [alertname, cluster]", tc.team, e.Incident)
		}
	}
	// The route listing shows what stops a route from sending.
	_, listing, _ := runMain(t, "--config.file="+p, "check-config")
	for _, want := range []string{`team=~"fro.*" → front mute_time_intervals always`, `team="night" → night active_time_intervals in-1999`, `team="drop" → null (blackhole: no integrations, recorded as muted)`} {
		if !strings.Contains(listing, want) {
			t.Errorf("check-config's routes lack %q:\n%s", want, listing)
		}
	}
	bad := writeFile(t, "router.yml", "route:\n  receiver: log\n  routes: [{receiver: log, mute_time_intervals: [nope]}]\nreceivers: [{name: log, log_configs: [{}]}]\n")
	code, _, errs := runMain(t, "--config.file="+bad, "check-config")
	if code != 1 || !strings.Contains(errs, `route.routes[0].mute_time_intervals[0]: undefined time interval "nope"`) {
		t.Errorf("undefined time interval: exit %d, %s", code, errs)
	}
	// The root is every alert's fallback: Alertmanager refuses matchers,
	// continue and time intervals there, and so does the router (a root
	// that did not match left a page with no receiver at all).
	for _, root := range []string{"matchers: ['team=\"x\"']", "match: {team: x}", "match_re: {team: x}", "continue: true", "mute_time_intervals: [always]", "active_time_intervals: [always]"} {
		p := writeFile(t, "router.yml", "time_intervals: [{name: always, time_intervals: [{weekdays: ['sunday:saturday']}]}]\nroute: {receiver: log, "+root+"}\nreceivers: [{name: log, log_configs: [{}]}]\n")
		if code, _, errs := runMain(t, "--config.file="+p, "check-config"); code != 1 || !strings.Contains(errs, "the root route") {
			t.Errorf("root with %s: exit %d, %s; want it refused", root, code, errs)
		}
	}
}

// send_resolved: false reaches the dispatch core as
// Integration.SendResolved (resolves close the incident, nothing is sent).
func TestSendResolvedFalseBuildsAnIntegrationThatKeepsResolves(t *testing.T) {
	p := writeFile(t, "router.yml", `
route: {receiver: team}
receivers:
  - name: team
    pagerduty_configs:
      - routing_key: k
        send_resolved: false
    slack_configs:
      - token: xoxb-1
        channel: '#c'
`)
	m := &Main{configFile: p, configFileSet: true}
	cfg, err := m.loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	d := newDeps(prometheus.NewRegistry(), slog.New(slog.DiscardHandler), io.Discard)
	st, err := d.openState(cfg.Store, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	b, err := d.build(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, in := range b.pipeline.Receivers["team"] {
		got[in.Name] = in.SendResolved
	}
	if got["pagerduty/0"] || !got["slack/0"] {
		t.Fatalf("SendResolved by integration = %v; want pagerduty/0 false, slack/0 true", got)
	}
}

// A route to a receiver without integrations (Alertmanager's blackhole, as
// kube-prometheus routes Watchdog to "null") answers 2xx for what it
// matches, counted as suppressed, and sends it nowhere — its resolve
// included — while the other alerts of the webhook are delivered.
func TestABlackholeReceiverSuppressesWhatItsRouteMatches(t *testing.T) {
	p := writeFile(t, "router.yml", `
route:
  receiver: log
  routes:
    - matchers: ['alertname="Watchdog"']
      receiver: "null"
receivers:
  - name: "null"
  - name: log
    log_configs: [{}]
`)
	base, out, _ := serveWithStdout(t, p)
	post := func(status string) map[string]any {
		t.Helper()
		payload := `{"version":"4","status":"` + status + `","receiver":"router","alerts":[
 {"status":"` + status + `","labels":{"alertname":"Watchdog","severity":"warning"},"startsAt":"2026-12-04T08:00:00Z","fingerprint":"w1"},
 {"status":"` + status + `","labels":{"alertname":"DiskFull","severity":"critical","instance":"db1"},"startsAt":"2026-12-04T08:00:00Z","fingerprint":"d1"}]}`
		resp, err := http.Post(base+"/webhook", "application/json", strings.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sum map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&sum)
		if resp.StatusCode != 200 {
			t.Fatalf("%s webhook: status %d %v", status, resp.StatusCode, sum)
		}
		return sum
	}
	if sum := post("firing"); sum["suppressed"] != 1.0 || sum["notified"] != 1.0 {
		t.Fatalf("firing: summary %v, want the Watchdog suppressed and DiskFull notified", sum)
	}
	post("resolved")
	got := out.String()
	if strings.Contains(got, "Watchdog") {
		t.Fatalf("the blackholed Watchdog reached a receiver:\n%s", got)
	}
	if strings.Count(got, "DiskFull") < 2 {
		t.Fatalf("DiskFull's firing and resolve were not both delivered:\n%s", got)
	}
}

// console.enable_replay with nothing in front of the console (no
// console.auth, no web configuration's users) is refused at startup,
// naming console.auth: auth: guards /webhook only.
func TestReplayWithoutConsoleProtectionIsRefused(t *testing.T) {
	p := writeFile(t, "router.yml", "console: {enable_replay: true}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	code, log := serveExit(t, p)
	if code != 1 || !strings.Contains(log, "console.enable_replay: the console is unprotected") || !strings.Contains(log, "console.auth") {
		t.Fatalf("serve with an unprotected replaying console: exit %d, log:\n%s\nwant exit 1 naming console.auth", code, log)
	}
}

// With the console mounted at /, a wrong method on the router's own
// endpoints is still a 405 naming the method to use — not the console's
// HTML "no such page" — and the console still answers everything else.
func TestWrongMethodsAre405WithTheConsoleMounted(t *testing.T) {
	p := writeFile(t, "router.yml", "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	base, _, _ := serveWithStdout(t, p)
	for _, tc := range []struct{ method, path, allow string }{
		{http.MethodGet, "/webhook", "POST"},
		{http.MethodGet, "/-/reload", "POST"},
		{http.MethodDelete, "/-/quit", "POST, PUT"},
		{http.MethodPost, "/-/ready", "GET, HEAD"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s = %d Allow %q; want 405 Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.allow)
		}
	}
	for _, path := range []string{"/", "/-/ready"} {
		resp, err := http.Head(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s = %d, want 200", path, resp.StatusCode)
		}
	}
}
