package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// procFlag collects -cpu-of name=pid pairs: the processes besides the
// target whose CPU time a run charges per webhook (Redis, the stand-ins,
// the sink …).
type procFlag []namedPID

type namedPID struct {
	name string
	pid  int
}

func (f *procFlag) String() string {
	parts := make([]string, len(*f))
	for i, p := range *f {
		parts[i] = p.name + "=" + strconv.Itoa(p.pid)
	}
	return strings.Join(parts, ",")
}

// Set parses one name=pid pair.
func (f *procFlag) Set(v string) error {
	name, pid, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(pid)
	if !ok || name == "" || err != nil || n <= 0 {
		return fmt.Errorf("%q: want name=pid", v)
	}
	if name == "target" || name == "loadgen" || name == "other" {
		return fmt.Errorf("%q: %s is a name the report uses itself", v, name)
	}
	*f = append(*f, namedPID{name, n})
	return nil
}

// machineCPU is what /proc/stat's first line says the whole machine has
// spent: busy (everything but idle and iowait) and total, in seconds.
type machineCPU struct {
	busy, total float64
	cpus        int // the per-CPU lines ("cpu0" …)
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat (user nice
// system idle iowait irq softirq steal guest guest_nice, in USER_HZ).
// guest and guest_nice are already counted in user and nice.
func parseProcStat(r io.Reader) (machineCPU, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<16))
	if err != nil {
		return machineCPU{}, err
	}
	line, rest, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return machineCPU{}, errors.New("no aggregate cpu line in /proc/stat")
	}
	var m machineCPU
	for l := range strings.Lines(rest) {
		if len(l) > 3 && strings.HasPrefix(l, "cpu") && l[3] >= '0' && l[3] <= '9' {
			m.cpus++
		}
	}
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return machineCPU{}, fmt.Errorf("/proc/stat cpu field %d: %w", i+1, err)
		}
		v /= clockTicks
		m.total += v
		if i != 3 && i != 4 { // idle, iowait
			m.busy += v
		}
	}
	return m, nil
}

func readMachineCPU() (machineCPU, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return machineCPU{}, err
	}
	defer f.Close()
	return parseProcStat(f)
}

// cpuSnapshot is the CPU time used so far by the machine, this process
// (the load generator), the target and each -cpu-of process.
type cpuSnapshot struct {
	at      time.Time
	machine machineCPU
	self    float64
	procs   []float64 // target first (when -pid), then -cpu-of in order
}

// cpuAccount charges the CPU a run used to its webhooks.
type cpuAccount struct {
	names []string
	pids  []int
}

func newCPUAccount(o options) *cpuAccount {
	a := &cpuAccount{}
	if o.pid > 0 {
		a.names, a.pids = append(a.names, "target"), append(a.pids, o.pid)
	}
	for _, p := range o.cpuOf {
		a.names, a.pids = append(a.names, p.name), append(a.pids, p.pid)
	}
	return a
}

func (a *cpuAccount) snapshot() (cpuSnapshot, error) {
	s := cpuSnapshot{at: time.Now()}
	var err error
	if s.machine, err = readMachineCPU(); err != nil {
		return s, err
	}
	if s.self, err = cpuSeconds(os.Getpid()); err != nil {
		return s, err
	}
	for _, pid := range a.pids {
		v, err := cpuSeconds(pid)
		if err != nil {
			return s, err
		}
		s.procs = append(s.procs, v)
	}
	return s, nil
}

// CPUShare is the CPU time per webhook answered 200 of one process, in ms.
type CPUShare struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms_per_webhook"`
}

// MachineCPU is where the whole machine's CPU went during a run, per webhook
// answered 200: when the machine is saturated (Busy near 1), the receiver
// with the smaller MS is the one that can answer more webhooks on it.
type MachineCPU struct {
	// MS is the machine's busy CPU time (every CPU, kernel included).
	MS float64 `json:"ms_per_webhook"`
	// Busy is the busy fraction of all CPUs during the run.
	Busy float64 `json:"busy"`
	// CPUs is the number of CPUs /proc/stat lists.
	CPUs int `json:"cpus"`
	// Shares splits MS: the target, each -cpu-of process, the load
	// generator itself, and "other" (the rest: other processes, interrupts).
	Shares []CPUShare `json:"shares"`
}

// charge returns the CPU between two snapshots per ok webhooks.
func (a *cpuAccount) charge(before, after cpuSnapshot, ok int) *MachineCPU {
	if ok <= 0 {
		return nil
	}
	per := func(s float64) float64 { return s * 1000 / float64(ok) }
	m := &MachineCPU{CPUs: after.machine.cpus}
	busy := after.machine.busy - before.machine.busy
	m.MS = per(busy)
	if wall := after.machine.total - before.machine.total; wall > 0 {
		m.Busy = busy / wall
	}
	rest := busy
	for i, name := range a.names {
		d := after.procs[i] - before.procs[i]
		rest -= d
		m.Shares = append(m.Shares, CPUShare{name, per(d)})
	}
	self := after.self - before.self
	rest -= self
	m.Shares = append(m.Shares, CPUShare{"loadgen", per(self)}, CPUShare{"other", per(max(rest, 0))})
	return m
}

// share returns the named share's ms per webhook (0 if absent).
func (m *MachineCPU) share(name string) float64 {
	i := slices.IndexFunc(m.Shares, func(s CPUShare) bool { return s.Name == name })
	if i < 0 {
		return 0
	}
	return m.Shares[i].MS
}

func (m *MachineCPU) String() string {
	parts := make([]string, len(m.Shares))
	for i, s := range m.Shares {
		parts[i] = fmt.Sprintf("%s %.3f", s.Name, s.MS)
	}
	return fmt.Sprintf("machine CPU per webhook=%.3f ms (%d CPUs %.0f%% busy): %s",
		m.MS, m.CPUs, 100*m.Busy, strings.Join(parts, ", "))
}
