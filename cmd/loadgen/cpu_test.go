package main

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestParseProcStatCountsIdleAndIOWaitAsNotBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	in := "cpu  1000 20 300 5000 100 10 40 30 500 0\ncpu0 500 10 150 2500 50 5 20 15 250 0\n"
	m, err := parseProcStat(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	// guest is part of user already: busy = user+nice+system+irq+softirq+steal.
	if want := (1000 + 20 + 300 + 10 + 40 + 30) / float64(clockTicks); m.busy != want {
		t.Errorf("busy = %v s, want %v", m.busy, want)
	}
	if want := (1000 + 20 + 300 + 5000 + 100 + 10 + 40 + 30) / float64(clockTicks); m.total != want {
		t.Errorf("total = %v s, want %v", m.total, want)
	}
	if m.cpus != 1 {
		t.Errorf("cpus = %d, want 1 (one cpu0 line)", m.cpus)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu 1 2 x 4 5\n", "cpu 1 2\n"} {
		if _, err := parseProcStat(strings.NewReader(bad)); err == nil {
			t.Errorf("parseProcStat(%q) accepted it", bad)
		}
	}
}

func TestProcFlagParsesNamedPIDs(t *testing.T) {
	var f procFlag
	for _, v := range []string{"redis-server=12", "sink=7"} {
		if err := f.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if got := f.String(); got != "redis-server=12,sink=7" {
		t.Errorf("String() = %q", got)
	}
	for _, bad := range []string{"redis", "=12", "redis=0", "redis=x", "target=3", "loadgen=4"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted it", bad)
		}
	}
}

func TestChargeSplitsTheMachinePerWebhook(t *testing.T) {
	a := &cpuAccount{names: []string{"target", "redis"}, pids: []int{1, 2}}
	before := cpuSnapshot{machine: machineCPU{busy: 10, total: 40, cpus: 2}, self: 1, procs: []float64{5, 2}}
	// 2 s of the machine's 4 s were busy: target 1 s, redis 0.4, loadgen 0.3, the rest 0.3.
	after := cpuSnapshot{machine: machineCPU{busy: 12, total: 44, cpus: 2}, self: 1.3, procs: []float64{6, 2.4}}
	m := a.charge(before, after, 1000)
	if math.Abs(m.MS-2) > 1e-9 || math.Abs(m.Busy-0.5) > 1e-9 || m.CPUs != 2 {
		t.Fatalf("machine %.3f ms/webhook busy %.2f, want 2 ms and 0.5", m.MS, m.Busy)
	}
	want := map[string]float64{"target": 1, "redis": 0.4, "loadgen": 0.3, "other": 0.3}
	if len(m.Shares) != len(want) {
		t.Fatalf("shares %+v, want %v", m.Shares, want)
	}
	for name, ms := range want {
		if got := m.share(name); math.Abs(got-ms) > 1e-9 {
			t.Errorf("%s: %.3f ms/webhook, want %.3f", name, got, ms)
		}
	}
	if a.charge(before, after, 0) != nil {
		t.Error("charged a run that answered no webhook")
	}
}

func TestSnapshotReadsThisProcessAndTheMachine(t *testing.T) {
	a := &cpuAccount{names: []string{"target"}, pids: []int{os.Getpid()}}
	s, err := a.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s.machine.total <= 0 || s.machine.cpus < 1 || s.machine.busy > s.machine.total || len(s.procs) != 1 || s.procs[0] < 0 {
		t.Errorf("snapshot %+v", s)
	}
	a.pids[0] = math.MaxInt32
	if _, err := a.snapshot(); err == nil || !strings.Contains(err.Error(), strconv.Itoa(math.MaxInt32)) {
		t.Errorf("a missing process: err %v, want one naming its pid", err)
	}
}
