package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alertrouter/alertrouter/bench"
)

// maxDuration bounds every run whatever the flags say.
const maxDuration = 5 * time.Minute

// result is one run's figures, printed and appended to -results.
type result struct {
	Label       string         `json:"label"`
	Target      string         `json:"target"`
	Mode        string         `json:"mode"`
	Alerts      int            `json:"alerts_per_webhook"`
	Distinct    bool           `json:"distinct"`
	Rate        int            `json:"rate,omitempty"`
	Concurrency int            `json:"concurrency"`
	Seconds     float64        `json:"seconds"`
	Requests    int            `json:"requests"`
	OK          int            `json:"ok"`
	Statuses    map[string]int `json:"statuses"`
	Throughput  float64        `json:"webhooks_per_s"`
	AlertsPerS  float64        `json:"alerts_per_s"`
	P50         float64        `json:"p50_ms"`
	P99         float64        `json:"p99_ms"`
	P999        float64        `json:"p999_ms"`
	Max         float64        `json:"max_ms"`
	Late        int            `json:"late_sends,omitempty"`
	PeakRSSMiB  float64        `json:"peak_rss_mib,omitempty"`
	// CPUmsPerOK is the target's CPU time (user + system, from
	// /proc/<pid>/stat) during the run per 200 answer: what one webhook
	// costs the target, a figure that a busy machine disturbs far less
	// than throughput.
	CPUmsPerOK float64 `json:"cpu_ms_per_webhook,omitempty"`
	// Machine is where the whole machine's CPU went during the run, per
	// 200 answer (target, -cpu-of processes, the load generator, the rest).
	Machine   *MachineCPU  `json:"machine_cpu,omitempty"`
	Storm     *stormResult `json:"storm,omitempty"`
	Delivered *delivered   `json:"delivered,omitempty"`
}

// sample is one request's outcome.
type sample struct {
	latency time.Duration
	status  string // HTTP code, or "transport"
	body    []byte // kept only when asked
}

type client struct {
	http    *http.Client
	target  string
	keepRes bool
}

func newClient(o options, keepBody bool) *client {
	tr := &http.Transport{
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &client{http: &http.Client{Transport: tr, Timeout: o.timeout}, target: o.target, keepRes: keepBody}
}

// send posts body and returns the status (or "transport") and, when kept,
// the response body. The response is always read to the end so the
// connection is reused, as Alertmanager's client does.
func (c *client) send(ctx context.Context, body []byte) (string, []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.target, bytes.NewReader(body))
	if err != nil {
		return "transport", []byte(err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Alertmanager/0.35.0 (alertrouter loadgen)")
	res, err := c.http.Do(req)
	if err != nil {
		return "transport", []byte(err.Error())
	}
	defer res.Body.Close()
	var out []byte
	if c.keepRes || res.StatusCode >= 300 {
		out, _ = io.ReadAll(io.LimitReader(res.Body, 1<<20))
	}
	_, _ = io.Copy(io.Discard, res.Body)
	return strconv.Itoa(res.StatusCode), out
}

// bodies hands out request bodies: the same payload (steady state) or a
// copy with fresh fingerprints per request.
type bodies struct {
	p        *bench.Payload
	distinct bool
	run      uint16
	mu       sync.Mutex
	seq      uint64
}

func (b *bodies) next() []byte {
	if !b.distinct {
		return b.p.Body
	}
	b.mu.Lock()
	b.seq++
	seq := b.seq
	b.mu.Unlock()
	return b.p.Fresh(nil, b.run, seq)
}

func load(o options) error {
	if err := checkLoopback(o.target); err != nil {
		return err
	}
	if o.duration > maxDuration {
		return fmt.Errorf("-duration %v is over the %v bound", o.duration, maxDuration)
	}
	if o.concurrency < 1 || o.concurrency > 4096 {
		return fmt.Errorf("-concurrency %d is outside 1..4096", o.concurrency)
	}
	corpus, err := bench.LoadCorpus(o.testdata)
	if err != nil {
		return err
	}
	var res *result
	switch o.mode {
	case "open", "closed":
		res, err = loop(o, corpus)
	case "storm":
		res, err = storm(o, corpus)
	default:
		return fmt.Errorf("unknown -mode %q: want open, closed or storm", o.mode)
	}
	if err != nil {
		return err
	}
	if o.pid > 0 {
		hwm, err := peakRSS(o.pid)
		if err != nil {
			return err
		}
		res.PeakRSSMiB = hwm
	}
	printResult(os.Stdout, res)
	if o.results != "" {
		f, err := os.OpenFile(o.results, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("open results file: %w", err)
		}
		defer f.Close()
		line, _ := json.Marshal(res)
		if _, err := f.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	return nil
}

func loop(o options, corpus *bench.Corpus) (*result, error) {
	if o.alerts < 1 || o.alerts > 10000 {
		return nil, fmt.Errorf("-alerts %d is outside 1..10000", o.alerts)
	}
	p, err := corpus.Build(o.alerts, 0)
	if err != nil {
		return nil, err
	}
	src := &bodies{p: p, distinct: o.distinct, run: uint16(rand.Uint32())}
	c := newClient(o, false)
	ctx := context.Background()
	// Warm up: connections, the target's caches, and (steady state) the
	// first notification of the repeated payload, which is not a dedup hit.
	for range o.warmup {
		if st, body := c.send(ctx, src.next()); st != "200" {
			return nil, fmt.Errorf("warm-up request answered %s: %s", st, strings.TrimSpace(string(body)))
		}
	}
	var before *standinStats
	if o.standinsURL != "" {
		if before, err = fetchStats(c.http, o.standinsURL); err != nil {
			return nil, err
		}
	}
	acct := newCPUAccount(o)
	cpuBefore, err := acct.snapshot()
	if err != nil {
		return nil, err
	}
	var samples []sample
	var elapsed time.Duration
	late := 0
	if o.mode == "open" {
		samples, elapsed, late = openLoop(o, c, src)
	} else {
		samples, elapsed = closedLoop(o, c, src)
	}
	res := summarize(samples, elapsed)
	cpuAfter, err := acct.snapshot()
	if err != nil {
		return nil, err
	}
	if res.Machine = acct.charge(cpuBefore, cpuAfter, res.OK); res.Machine != nil && o.pid > 0 {
		res.CPUmsPerOK = res.Machine.share("target")
	}
	if before != nil {
		after, err := fetchStats(c.http, o.standinsURL)
		if err != nil {
			return nil, err
		}
		res.Delivered = deliveredBetween(before, after)
	}
	res.Label, res.Target, res.Mode, res.Alerts, res.Distinct = o.label, o.target, o.mode, o.alerts, o.distinct
	res.Concurrency, res.Late = o.concurrency, late
	res.AlertsPerS = res.Throughput * float64(o.alerts)
	if o.mode == "open" {
		res.Rate = o.rate
	}
	return res, nil
}

// openLoop sends rate webhooks per second on a fixed schedule; each
// request's latency runs from its scheduled time, so time spent waiting
// for a free in-flight slot (a slow target) is counted, not omitted.
func openLoop(o options, c *client, src *bodies) ([]sample, time.Duration, int) {
	if o.rate < 1 {
		o.rate = 1
	}
	total := min(int(o.duration.Seconds()*float64(o.rate)), o.maxRequests)
	interval := time.Second / time.Duration(o.rate)
	samples := make([]sample, total)
	slots := make(chan struct{}, o.concurrency)
	var wg sync.WaitGroup
	late := 0
	start := time.Now()
	for i := range total {
		at := start.Add(time.Duration(i) * interval)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		slots <- struct{}{}
		if time.Since(at) > interval {
			late++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			st, _ := c.send(context.Background(), src.next())
			samples[i] = sample{latency: time.Since(at), status: st}
		}()
	}
	wg.Wait()
	return samples, time.Since(start), late
}

// closedLoop runs concurrency workers back to back until the duration or
// the request bound is reached.
func closedLoop(o options, c *client, src *bodies) ([]sample, time.Duration) {
	deadline := time.Now().Add(o.duration)
	var mu sync.Mutex
	var samples []sample
	var wg sync.WaitGroup
	start := time.Now()
	for range o.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []sample
			for time.Now().Before(deadline) {
				mu.Lock()
				full := len(samples)+len(mine) >= o.maxRequests
				mu.Unlock()
				if full {
					break
				}
				t0 := time.Now()
				st, _ := c.send(context.Background(), src.next())
				mine = append(mine, sample{latency: time.Since(t0), status: st})
				if len(mine) == 256 {
					mu.Lock()
					samples = append(samples, mine...)
					mu.Unlock()
					mine = mine[:0]
				}
			}
			mu.Lock()
			samples = append(samples, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return samples, time.Since(start)
}

// summarize computes throughput and latency percentiles from the samples
// (exact: a sorted slice; runs are bounded, so it stays small).
func summarize(samples []sample, elapsed time.Duration) *result {
	res := &result{Requests: len(samples), Statuses: map[string]int{}, Seconds: elapsed.Seconds()}
	lat := make([]time.Duration, 0, len(samples))
	for _, s := range samples {
		res.Statuses[s.status]++
		if s.status == "200" {
			res.OK++
		}
		lat = append(lat, s.latency)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	if n := len(lat); n > 0 {
		res.P50 = ms(quantile(lat, 0.50))
		res.P99 = ms(quantile(lat, 0.99))
		res.P999 = ms(quantile(lat, 0.999))
		res.Max = ms(lat[n-1])
	}
	if elapsed > 0 {
		res.Throughput = float64(res.OK) / elapsed.Seconds()
	}
	return res
}

// quantile returns the q-quantile of sorted (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on every
// Linux architecture Go supports).
const clockTicks = 100

// cpuSeconds reads the user + system CPU time pid has used.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	// Fields after the command name (which may hold spaces) in ")…":
	// state is field 3, utime 14, stime 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable CPU times in /proc/%d/stat", pid)
	}
	return (ut + st) / clockTicks, nil
}

// peakRSS reads the peak resident set size (VmHWM) of pid in MiB.
func peakRSS(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("read peak RSS of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmHWM %q: %w", v, err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/" + strconv.Itoa(pid) + "/status")
}

func printResult(w io.Writer, r *result) {
	fmt.Fprintf(w, "== %s (%s, %s)\n", r.Label, r.Mode, r.Target)
	fmt.Fprintf(w, "alerts/webhook=%d distinct=%v concurrency=%d rate=%d\n", r.Alerts, r.Distinct, r.Concurrency, r.Rate)
	fmt.Fprintf(w, "requests=%d ok=%d statuses=%v late_sends=%d in %.2fs\n", r.Requests, r.OK, r.Statuses, r.Late, r.Seconds)
	fmt.Fprintf(w, "throughput=%.1f webhooks/s (%.0f alerts/s)\n", r.Throughput, r.Throughput*float64(max(r.Alerts, 1)))
	fmt.Fprintf(w, "latency ms: p50=%.3f p99=%.3f p999=%.3f max=%.3f\n", r.P50, r.P99, r.P999, r.Max)
	if d := r.Delivered; d != nil {
		fmt.Fprintf(w, "delivered during the run: pagerduty events=%d (triggers %d) slack chat.postMessage=%d chat.update=%d sink=%d\n",
			d.PDEvents, d.PDTriggers, d.SlackPosts, d.SlackUpdates, d.Sink)
	}
	if r.CPUmsPerOK > 0 {
		fmt.Fprintf(w, "target CPU per webhook=%.3f ms\n", r.CPUmsPerOK)
	}
	if r.Machine != nil {
		fmt.Fprintln(w, r.Machine)
	}
	if r.PeakRSSMiB > 0 {
		fmt.Fprintf(w, "target peak RSS (VmHWM)=%.1f MiB\n", r.PeakRSSMiB)
	}
	if s := r.Storm; s != nil {
		printStorm(w, s)
	}
}
