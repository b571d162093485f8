package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// Targets of the benchmark issue checked by the report.
const (
	minThroughputRatio = 0.8
	maxP99ms           = 10.0
	maxStormRSSMiB     = 150.0
	maxFreshP99ms      = 50.0
)

// report prints the table of the runs recorded in path, the router/baseline
// ratios of runs sharing a scenario (labels "<target>/<scenario>"), and the
// HTTP and storm targets met or missed.
func report(w io.Writer, path string) error {
	if path == "" {
		return fmt.Errorf("-report needs -results FILE")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	var runs []*result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("decode result line: %w", err)
		}
		runs = append(runs, &r)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read results: %w", err)
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmode\talerts\tload\twebhooks/s\talerts/s\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\tnon-200\tpeak RSS MiB\tCPU ms/webhook\t")
	for _, r := range runs {
		load := fmt.Sprintf("c=%d", r.Concurrency)
		if r.Mode != "closed" {
			load = fmt.Sprintf("%d/s", r.Rate)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%.1f\t%.3f\t\n", r.Label, r.Mode, r.Alerts, load,
			r.Throughput, r.Throughput*float64(r.Alerts), r.P50, r.P99, r.P999, r.Max, r.Requests-r.OK, r.PeakRSSMiB, r.CPUmsPerOK)
	}
	_ = tw.Flush()

	byLabel := map[string]*result{}
	for _, r := range runs {
		byLabel[r.Label] = r
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "targets:")
	mark := func(ok bool) string {
		if ok {
			return "MET "
		}
		return "MISS"
	}
	for _, r := range runs {
		target, scenario, ok := strings.Cut(r.Label, "/")
		if !ok || target != "router" {
			continue
		}
		base := byLabel["baseline/"+scenario]
		switch {
		case r.Mode == "closed" && r.Distinct:
			fmt.Fprintf(w, "  [%s] %s: fresh alerts, %.0f webhooks/s accepted and delivered, p99 %.2f ms (target <= %.0f ms; non-200: %d)\n",
				mark(r.P99 <= maxFreshP99ms && r.OK == r.Requests), scenario, r.Throughput, r.P99, maxFreshP99ms, r.Requests-r.OK)
			if base != nil && base.Throughput > 0 {
				fmt.Fprintf(w, "         router/baseline throughput %.2f (baseline %.0f webhooks/s)\n", r.Throughput/base.Throughput, base.Throughput)
			}
			if d := r.Delivered; d != nil && r.OK > 0 {
				fmt.Fprintf(w, "         delivered: %d PagerDuty events (%d triggers), %d Slack posts, %d Slack updates for %d webhooks\n",
					d.PDEvents, d.PDTriggers, d.SlackPosts, d.SlackUpdates, r.Requests)
			}
		case r.Mode == "closed" && base != nil && base.Throughput > 0:
			ratio := r.Throughput / base.Throughput
			fmt.Fprintf(w, "  [%s] %s: router/baseline throughput %.2f (%.0f vs %.0f webhooks/s), target >= %.1f\n",
				mark(ratio >= minThroughputRatio), scenario, ratio, r.Throughput, base.Throughput, minThroughputRatio)
			fmt.Fprintf(w, "         p99 router %.2f ms vs baseline %.2f ms (%.1fx)\n", r.P99, base.P99, r.P99/max(base.P99, 0.001))
		case r.Mode == "open":
			fmt.Fprintf(w, "  [%s] %s: router p99 %.2f ms at %d webhooks/s, target <= %.0f ms (non-200: %d)\n",
				mark(r.P99 <= maxP99ms && r.OK == r.Requests), scenario, r.P99, r.Rate, maxP99ms, r.Requests-r.OK)
			if base != nil {
				fmt.Fprintf(w, "         baseline p99 %.2f ms (router/baseline %.1fx)\n", base.P99, r.P99/max(base.P99, 0.001))
			}
		case r.Mode == "storm" && r.Storm != nil:
			for _, c := range r.Storm.Checks {
				fmt.Fprintf(w, "  [%s] storm: %s: %s\n", mark(c.OK), c.Name, c.Got)
			}
			if r.PeakRSSMiB > 0 {
				fmt.Fprintf(w, "  [%s] storm: peak RSS %.1f MiB, target <= %.0f MiB\n", mark(r.PeakRSSMiB <= maxStormRSSMiB), r.PeakRSSMiB, maxStormRSSMiB)
			}
			fmt.Fprintf(w, "         first pass %.2fs (p99 %.1f ms), repeat pass %.2fs\n", r.Storm.First.Seconds, r.Storm.First.P99, r.Storm.Repeat.Seconds)
		}
	}
	return nil
}
