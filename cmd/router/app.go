package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/notify/slack"
)

const defaultConfigFile = "router.yml"

// Main is the router program; end-to-end tests drive it in-process.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	configFile    string
	configFileSet bool
	webFlags      *web.FlagConfig
	lifecycle     bool
	serveOpts     serveOptions
	runtime       runtimeOptions
	logConfig     *promslog.Config
	logger        *slog.Logger
}

// Run parses args, runs the chosen subcommand and returns the exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	app := kingpin.New("router", "Alertmanager webhook receiver that classifies alerts by infrastructure sector, decides page/ticket/none and notifies PagerDuty and Slack exactly once.")
	app.Writer(m.Stderr)
	app.ErrorWriter(m.Stderr)
	exited := false // --help and --version print and must stop there
	app.Terminate(func(int) { exited = true })
	app.HelpFlag.Short('h')
	app.Flag("config.file", "Configuration file. When not given and ./router.yml does not exist, the embedded defaults are used.").
		Default(defaultConfigFile).IsSetByUser(&m.configFileSet).StringVar(&m.configFile)
	app.Version(version.Print("router"))
	m.logConfig = &promslog.Config{Writer: m.Stderr}
	promslogflag.AddFlags(app, m.logConfig)
	// The serve flags are top-level, so `router --help` lists them.
	m.webFlags = kingpinflag.AddFlags(app, ":9095")
	app.Flag("web.enable-lifecycle", "Enable shutdown and reload via HTTP request (POST /-/quit, POST /-/reload).").Default("false").BoolVar(&m.lifecycle)
	app.Flag("web.shutdown-delay", "On SIGTERM, answer /-/ready with 503 at once and keep serving for this long before draining, so that the endpoints of a Kubernetes Service drop the pod before its listener closes (e.g. 5s). SIGINT and POST /-/quit drain at once, also during the delay.").
		Default("0s").DurationVar(&m.serveOpts.shutdownDelay)
	app.Flag("config.secret-files-check-interval", "How often the files the configuration reads secrets and TLS material from (every *_file key, and --web.config.file with its TLS files) are checked; a changed one reloads the configuration, as SIGHUP does. 0 turns it off.").
		Default("30s").DurationVar(&m.serveOpts.secretCheck)
	app.Flag("store.probe-interval", "How often the store is pinged as /-/ready pings it, besides /-/ready's own probes, so that its health (alertrouter_store_errors_total{operation=\"ping\"}, AlertrouterStoreDown) and readiness follow the store where nothing probes /-/ready (docker run, a bare binary). 0 turns it off.").
		Default("10s").DurationVar(&m.serveOpts.storeProbe)
	app.Flag("auto-gomemlimit", "Set GOMEMLIMIT to --auto-gomemlimit.ratio of the container's memory limit (cgroup) unless GOMEMLIMIT is set; --no-auto-gomemlimit leaves it.").
		Default("true").BoolVar(&m.runtime.autoMemLimit)
	app.Flag("auto-gomemlimit.ratio", "Share of the container's memory limit given to GOMEMLIMIT, in (0, 1].").Default("0.9").Float64Var(&m.runtime.ratio)

	app.Command("serve", "Serve webhooks (the default).").Default()

	check := app.Command("check-config", "Validate the configuration and print a summary of receivers and routes.")
	var testRouteSet bool
	testRoute := check.Flag("test-route", `Print the receivers an alert with these labels reaches, e.g. 'sector=llm-inference-gpu,decision=page'.`).IsSetByUser(&testRouteSet).String()
	probe := check.Flag("probe", "Also reach what the configuration names, without paging anyone: Slack (auth.test), PagerDuty's events URL (a GET), the store (PING, then a key written under key_prefix and deleted), Alertmanager (its alerts API) and Prometheus (prometheus.url: a vector(1) query), each through its own HTTP settings; exit 1 if one fails.").Bool()

	explain := app.Command("explain", "Dry run: classify, decide and route every alert of a webhook payload and print one JSON object per alert.")
	explainFile := explain.Arg("file", "Webhook JSON payload file, or - (the default) for standard input.").Default("-").String()

	importAM := app.Command("import-alertmanager", "Print a router.yml made from an Alertmanager configuration (receivers, routes, time intervals; the rest explained as comments).")
	importFile := importAM.Arg("file", "alertmanager.yml").Required().String()

	app.Command("version", "Print the version.")
	journalCmds := m.addJournalCommands(app)

	cmd, err := app.Parse(args)
	if exited {
		// --help or --version printed: kingpin's parse goes on after its
		// Terminate (ours returns) and then misses a required argument,
		// flag or subcommand the help was asked instead of.
		return 0
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "router: %v (see --help)\n", err)
		return 2
	}
	if cmd == "" {
		return 0
	}
	// A top-level flag: refused whatever the subcommand, as kingpin
	// refuses a value it cannot parse.
	if r := m.runtime.ratio; !ratioOK(r) {
		fmt.Fprintf(m.Stderr, "router: --auto-gomemlimit.ratio=%v: want a ratio in (0, 1] (see --help)\n", r)
		return 2
	}
	m.logger = promslog.New(m.logConfig)
	if run, ok := journalCmds[cmd]; ok {
		return run(ctx)
	}
	switch cmd {
	case "version":
		fmt.Fprintln(m.Stdout, version.Print("router"))
		return 0
	case "check-config":
		if testRouteSet && strings.TrimSpace(*testRoute) == "" {
			// '' or a lone "-" (kingpin hands it over as ""): no labels,
			// silently taken as no --test-route (an audit).
			fmt.Fprintln(m.Stderr, "router check-config: --test-route needs the alert's labels, e.g. --test-route 'alertname=X,severity=critical'")
			return 2
		}
		return m.checkConfig(ctx, *testRoute, *probe)
	case "import-alertmanager":
		return m.importAlertmanager(*importFile)
	case "explain":
		return m.explain(ctx, *explainFile)
	default:
		if m.serveOpts.shutdownDelay < 0 || m.serveOpts.secretCheck < 0 || m.serveOpts.storeProbe < 0 {
			fmt.Fprintf(m.Stderr, "router: --web.shutdown-delay=%s, --config.secret-files-check-interval=%s, --store.probe-interval=%s: must not be negative (see --help)\n", m.serveOpts.shutdownDelay, m.serveOpts.secretCheck, m.serveOpts.storeProbe)
			return 2
		}
		m.logger.Info("starting router", "version", version.Version, "revision", version.GetRevision(), "branch", version.Branch,
			"build_date", version.BuildDate, "go", version.GoVersion, "platform", version.GoOS+"/"+version.GoArch)
		err := m.serveWith(ctx, m.serveOpts)
		if n := slack.WaitingRedraws(); n > 0 {
			m.logger.Warn("Slack parents whose resolved drawing waited for a later try are left as last drawn (firing): redraw or resolve them by hand", "parents", n)
		}
		if err != nil {
			m.logger.Error("router stopped", "err", err)
			return 1
		}
		m.logger.Info("router stopped: in-flight webhooks drained", "by", stoppedBy(ctx), "exit_code", 0)
		return 0
	}
}

// stoppedBy names what ended a serve that returned cleanly: the signal of
// ctx (main's signal.NotifyContext names it in its cause), else POST
// /-/quit, which cancels serve's own context only.
func stoppedBy(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil {
		return cause.Error()
	}
	return "POST /-/quit"
}

// loadConfig loads --config.file, or the embedded defaults when the flag was
// not given and ./router.yml does not exist.
func (m *Main) loadConfig() (*config.Config, error) {
	if !m.configFileSet {
		if _, err := os.Stat(m.configFile); errors.Is(err, os.ErrNotExist) {
			return config.LoadDefault(), nil
		}
	}
	return config.Load(m.configFile)
}
