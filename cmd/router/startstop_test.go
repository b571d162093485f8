package main

import (
	"net"
	"strings"
	"testing"
)

// A ratio outside (0, 1] is a bad flag like any other: exit 2 with the
// usage line, whatever the subcommand. serve exited 1 through "router
// stopped", and check-config accepted it.
func TestABadAutoGomemlimitRatioIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"--auto-gomemlimit.ratio=0"}, {"serve", "--auto-gomemlimit.ratio=-1"}, {"check-config", "--auto-gomemlimit.ratio=2"}} {
		code, _, errs := runMain(t, args...)
		if code != 2 || !strings.Contains(errs, "router: --auto-gomemlimit.ratio=") || !strings.Contains(errs, "(see --help)") {
			t.Errorf("router %s: exit %d, %s; want 2 and the usage error", strings.Join(args, " "), code, errs)
		}
	}
}

// serve logs the version it runs at start, as `router version` prints it,
// and a last line once it has drained, naming what stopped it.
func TestServeLogsItsVersionAtStartAndItsStopAfterADrain(t *testing.T) {
	withVersion(t, "v9.8.7", "0123abcd", "20261205-04:00:00")
	p := writeFile(t, "router.yml", "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	_, _, log, stop := runRouter(t, p)
	stop()
	out := log.String()
	for _, want := range []string{`msg="starting router" version=v9.8.7 revision=0123abcd`, `msg="router stopped: in-flight webhooks drained" by="context canceled" exit_code=0`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Index(out, "starting router") > strings.Index(out, "router listening") {
		t.Errorf("the version is not logged first:\n%s", out)
	}
}

// A port in use: serve said "router listening" before the bind failed,
// then "router stopped". It now fails before saying it listens, naming
// the address.
func TestServeSaysItListensOnlyOnceBound(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := writeFile(t, "router.yml", "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	code, out, errs := runMain(t, "--config.file="+p, "--web.listen-address="+l.Addr().String())
	if code == 0 || !strings.Contains(out+errs, "--web.listen-address "+l.Addr().String()) || strings.Contains(out+errs, "router listening") {
		t.Fatalf("serve on a port in use: exit %d, %s%s; want a failure naming the address and no \"router listening\"", code, out, errs)
	}
}

// The start said version, address, configuration and store, but not that
// a configuration without alertmanager.url has no silences from Slack,
// nor one without prometheus.url live SLO context (an audit of the logs).
// The start names what is left off; a configuration with both says
// nothing of them.
func TestServeLogsTheSettingsLeftOff(t *testing.T) {
	p := writeFile(t, "router.yml", "route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	_, _, log, stop := runRouter(t, p)
	stop()
	if out := log.String(); !strings.Contains(out, `msg="settings left off" alertmanager_url="unset: no silences from Slack`) || !strings.Contains(out, `prometheus_url="unset: no live SLO context on pages"`) {
		t.Errorf("the start does not name the settings left off:\n%s", out)
	}
	p = writeFile(t, "router.yml", "alertmanager: {url: http://127.0.0.1:1}\nprometheus: {url: http://127.0.0.1:1}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	_, _, log, stop = runRouter(t, p)
	stop()
	if out := log.String(); strings.Contains(out, "settings left off") {
		t.Errorf("a configuration with both URLs says settings are left off:\n%s", out)
	}
}
