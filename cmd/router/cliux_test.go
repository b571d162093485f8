package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The tests of this file follow an audit of the CLI as a user meets it.

// explain refuses, as serve answers 413, a body over
// webhook.max_body_bytes: it showed such a payload decided, which serve
// would refuse and Alertmanager not retry.
func TestExplainRefusesABodyServeWouldRefuse(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "router.yml")
	if err := os.WriteFile(cfg, []byte("route: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\nwebhook:\n  max_body_bytes: 1024\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("../../testdata/webhook/firing.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(body) <= 1024 {
		t.Fatalf("testdata/webhook/firing.json is %d bytes: the test needs one over 1024", len(body))
	}
	code, out, errs := runMain(t, "--config.file="+cfg, "explain", "../../testdata/webhook/firing.json")
	if code != 1 || out != "" || !strings.Contains(errs, "HTTP 413 would be answered") || !strings.Contains(errs, "webhook.max_body_bytes") {
		t.Fatalf("explain of a body over max_body_bytes: exit %d, stdout %q, stderr %q; want exit 1 naming the 413 and the key", code, out, errs)
	}
}

// Ctrl-C (the signal context's end) stops explain waiting on standard
// input: a payload forgotten on the command line held it, and Ctrl-C did
// nothing (main's signal context disables the default exit).
func TestExplainWaitingOnStandardInputStopsAtCtrlC(t *testing.T) {
	r, w := io.Pipe() // never written to: a terminal
	defer w.Close()
	var out, errb syncBuffer
	m := &Main{Stdin: r, Stdout: &out, Stderr: &errb}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt"))
	if code := m.Run(ctx, []string{"explain"}); code != 1 || !strings.Contains(errb.String(), "interrupt") {
		t.Fatalf("explain interrupted: exit %d, stderr %q; want exit 1 saying it was interrupted", code, errb.String())
	}
}

// check-config --probe stops at Ctrl-C: each probe left fails at once
// rather than waiting its 10 s against an endpoint that never answers.
func TestProbeStopsAtCtrlC(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := filepath.Join(t.TempDir(), "router.yml")
	yml := "route: {receiver: oncall}\nreceivers:\n  - name: oncall\n    pagerduty_configs:\n      - routing_key: 0123456789abcdef0123456789abcdef\n        url: http://" + l.Addr().String() + "/v2/enqueue\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb syncBuffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt"))
	code := m.Run(ctx, []string{"--config.file=" + cfg, "check-config", "--probe"})
	if all := out.String() + errb.String(); code != 1 || !strings.Contains(all, "FAILED") || !strings.Contains(all, "interrupt") {
		t.Fatalf("check-config --probe interrupted: exit %d, output %q; want exit 1, the probe failed by the interrupt", code, all)
	}
}

// --test-route given no labels (an empty value or a lone "-", which kingpin hands over
// as "") is refused: it was taken as no --test-route, silently.
func TestTestRouteWithoutLabelsIsRefused(t *testing.T) {
	for _, arg := range []string{"", "-", " "} {
		code, _, errs := runMain(t, "check-config", "--test-route", arg)
		if code != 2 || !strings.Contains(errs, "--test-route needs the alert's labels") {
			t.Errorf("check-config --test-route %q: exit %d, stderr %q; want exit 2 asking for labels", arg, code, errs)
		}
	}
}

// A --web.listen-address that is not host:port ("::1:9095", an IPv6
// address without brackets) is refused by check-config, as serve refuses
// it, saying how it is written; check-config took anything (IPV6 audit).
func TestListenAddressNotHostPortIsRefused(t *testing.T) {
	for _, a := range []string{"::1:9095", "[::1]", "not-an-addr"} {
		code, _, errs := runMain(t, "--web.listen-address="+a, "check-config")
		if code != 1 || !strings.Contains(errs, "--web.listen-address \""+a+"\" is not host:port") || !strings.Contains(errs, "[::1]:9095") {
			t.Errorf("check-config --web.listen-address %s: exit %d, stderr %q; want exit 1 naming the flag and the IPv6 form", a, code, errs)
		}
	}
	for _, a := range []string{"[::1]:9095", ":9095", "localhost:9095"} {
		if code, _, errs := runMain(t, "--web.listen-address="+a, "check-config"); code != 0 {
			t.Errorf("check-config --web.listen-address %s: exit %d, stderr %q; want 0", a, code, errs)
		}
	}
	code, _, errs := runMain(t, "--web.listen-address=::1:9095")
	if code == 0 || !strings.Contains(errs, "is not host:port") {
		t.Errorf("serve --web.listen-address ::1:9095: exit %d, stderr %q; want refused with the IPv6 form", code, errs)
	}
}

// import-alertmanager given a router.yml refuses it, naming router
// check-config: it "imported" it with every router key dropped. A
// top-level key no Alertmanager has (a typo, which Alertmanager refuses)
// is warned of on stderr, not filed as a setting to keep in Alertmanager.
func TestImportRefusesARouterFileAndWarnsOfTypos(t *testing.T) {
	code, out, errs := runMain(t, "import-alertmanager", "../../config/testdata/good.yml")
	if code != 1 || out != "" || !strings.Contains(errs, "router configuration already") || !strings.Contains(errs, "check-config") {
		t.Errorf("import-alertmanager of a router.yml: exit %d, stdout %q, stderr %q; want exit 1 naming check-config", code, out, errs)
	}
	am := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(am, []byte("route: {receiver: a}\nreceivers: [{name: a}]\ninhibit_rule: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runMain(t, "import-alertmanager", am)
	if code != 0 || !strings.Contains(errs, "warning: inhibit_rule: not a key of Alertmanager v0.35 (misspelled?") || strings.Contains(errs, "keep them in Alertmanager's file (see the comments at the top): inhibit_rule") {
		t.Errorf("import-alertmanager with inhibit_rule: exit %d, stderr %q; want a warning naming the misspelled key", code, errs)
	}
}

// A Helm values file of kube-prometheus-stack (alertmanager.config beside
// prometheus:) is no router configuration: the import says to import
// alertmanager.config's content (a review: it was called one).
func TestImportNamesAHelmValuesFile(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yml")
	if err := os.WriteFile(values, []byte("prometheus:\n  enabled: true\nalertmanager:\n  config:\n    route: {receiver: a}\n    receivers: [{name: a}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runMain(t, "import-alertmanager", values)
	if code != 1 || strings.Contains(errs, "router configuration already") || !strings.Contains(errs, "Helm values file") {
		t.Errorf("import-alertmanager of Helm values: exit %d, stderr %q; want exit 1 naming alertmanager.config", code, errs)
	}
}

// A --since the duration parser refuses is named with the forms it takes
// (an audit: `unknown unit "." in duration "1.5h"` named neither).
func TestABadSinceNamesTheFlagAndItsForms(t *testing.T) {
	for _, v := range []string{"1.5h", "2026-12-07", "-1h"} {
		code, _, errs := runMain(t, "journal", "export", "--since="+v)
		if code == 0 || !strings.Contains(errs, `--since "`+v+`"`) || !strings.Contains(errs, "such as 90m, 24h, 7d") {
			t.Errorf("journal export --since=%s: exit %d, stderr %q; want the flag and its forms named", v, code, errs)
		}
	}
}
