// Command loadgen drives the router (or the bare baseline) over HTTP with
// realistic Alertmanager webhooks built from the repository's testdata, and
// reports throughput, latency percentiles, errors by status and the
// target's peak RSS. Every run is bounded (duration and request count) and
// stops by itself; it only talks to loopback addresses.
//
// Modes:
//
//	-mode=open    fixed rate (-rate webhooks/s) for -duration; latency is
//	              measured from each request's scheduled send time, so a
//	              stalled target is not hidden (no coordinated omission).
//	-mode=closed  -concurrency workers sending back to back for -duration:
//	              maximum throughput.
//	-mode=storm   10,000 distinct alerts in 100 webhooks of 100 alerts sent
//	              within a few seconds, one incident family plus 10% noise,
//	              then the same webhooks again (all must be deduplicated);
//	              with -standins-url, the PagerDuty triggers per incident and
//	              the Slack calls the storm caused.
//	-standins     run the PagerDuty and Slack stand-ins (internal/pdtest,
//	              internal/slacktest) on -pd-listen and -slack-listen until
//	              SIGTERM or -lifetime, then print their counters.
//	-sink         run a loopback HTTP sink on -sink-listen that answers every
//	              request 200 and counts them (the peers' destination in
//	              scripts/bench-peers.sh).
//	-free-ports=N print N free loopback ports (for scripts/bench.sh).
//	-report       print the results table from -results (JSON lines written
//	              by earlier runs with -results).
//
// -distinct stamps new fingerprints into every request (fresh transitions);
// without it the same payload repeats (steady state: dedup hits). With
// -standins-url in open or closed mode, the run also reports what the
// stand-ins (or a sink) received during it: delivered counts.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"time"
)

type options struct {
	mode        string
	target      string
	rate        int
	concurrency int
	duration    time.Duration
	maxRequests int
	alerts      int
	distinct    bool
	warmup      int
	pid         int
	cpuOf       procFlag
	label       string
	results     string
	testdata    string
	timeout     time.Duration

	stormWebhooks int
	stormAlerts   int
	standinsURL   string

	standins    bool
	sink        bool
	sinkListen  string
	pdListen    string
	slackListen string
	slackToken  string
	slackChan   string
	lifetime    time.Duration

	report    bool
	freePorts int
}

func main() { os.Exit(run()) }

func run() int {
	var o options
	flag.StringVar(&o.mode, "mode", "closed", "open, closed or storm")
	flag.StringVar(&o.target, "target", "http://127.0.0.1:9095/webhook", "webhook URL (loopback only)")
	flag.IntVar(&o.rate, "rate", 1000, "open loop and storm: webhooks per second")
	flag.IntVar(&o.concurrency, "concurrency", 8, "closed loop: workers; open loop and storm: most requests in flight")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "open and closed loop: how long to send (at most 5m)")
	flag.IntVar(&o.maxRequests, "max-requests", 200000, "upper bound on requests of one run")
	flag.IntVar(&o.alerts, "alerts", 10, "alerts per webhook (open and closed loop)")
	flag.BoolVar(&o.distinct, "distinct", false, "new fingerprints in every request (fresh transitions) instead of repeating one payload (steady state)")
	flag.IntVar(&o.warmup, "warmup", 20, "requests sent (and not measured) before the run")
	flag.IntVar(&o.pid, "pid", 0, "process id of the target, for its peak RSS (VmHWM)")
	flag.Var(&o.cpuOf, "cpu-of", "name=pid of a process whose CPU time the run charges per webhook besides the target's (Redis, stand-ins, sink); repeatable")
	flag.StringVar(&o.label, "label", "", "name of the run in the results")
	flag.StringVar(&o.results, "results", "", "append the run's result as a JSON line to this file; with -report, the file to read")
	flag.StringVar(&o.testdata, "testdata", "testdata", "the repository's testdata directory")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "per-request timeout")
	flag.IntVar(&o.stormWebhooks, "storm-webhooks", 100, "storm: webhooks")
	flag.IntVar(&o.stormAlerts, "storm-alerts", 100, "storm: alerts per webhook")
	flag.StringVar(&o.standinsURL, "standins-url", "", "base URL of a -standins or -sink process, for the counts delivered during the run")
	flag.BoolVar(&o.standins, "standins", false, "run the PagerDuty and Slack stand-ins")
	flag.BoolVar(&o.sink, "sink", false, "run a counting loopback HTTP sink on -sink-listen")
	flag.StringVar(&o.sinkListen, "sink-listen", "127.0.0.1:9099", "sink: listen address")
	flag.StringVar(&o.pdListen, "pd-listen", "127.0.0.1:9097", "stand-ins: PagerDuty Events API address")
	flag.StringVar(&o.slackListen, "slack-listen", "127.0.0.1:9098", "stand-ins: Slack Web API address")
	flag.StringVar(&o.slackToken, "slack-token", "xoxb-bench-token", "stand-ins: the Slack token accepted")
	flag.StringVar(&o.slackChan, "slack-channel", "alerts-triage", "stand-ins: the Slack channel known (without #)")
	flag.DurationVar(&o.lifetime, "lifetime", 15*time.Minute, "stand-ins: exit after this long even without a signal")
	flag.BoolVar(&o.report, "report", false, "print the results table of -results and exit")
	flag.IntVar(&o.freePorts, "free-ports", 0, "print this many free loopback TCP ports, one a line, and exit")
	flag.Parse()

	var err error
	switch {
	case o.freePorts > 0:
		err = printFreePorts(os.Stdout, o.freePorts)
	case o.report:
		err = report(os.Stdout, o.results)
	case o.standins:
		err = serveStandins(o)
	case o.sink:
		err = serveSink(o)
	default:
		err = load(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 1
	}
	return 0
}

// checkLoopback refuses targets that are not loopback IPs.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("parse %q: %w", raw, err)
	}
	return loopbackHost(u.Host)
}

func loopbackHost(hostport string) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback IP address: loadgen only talks to loopback", hostport)
	}
	return nil
}

// printFreePorts prints n distinct loopback ports free at the time of the
// call (held open together so they differ, then released).
func printFreePorts(w io.Writer, n int) error {
	if n > 64 {
		return fmt.Errorf("-free-ports %d: at most 64", n)
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("find a free port: %w", err)
		}
		lns = append(lns, ln)
		fmt.Fprintln(w, ln.Addr().(*net.TCPAddr).Port)
	}
	return nil
}
