package main

import (
	"errors"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// gcPercent returns the current GC percentage.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestGoRuntimeDefaultsYieldToTheEnvironment(t *testing.T) {
	prevGC, prevLimit := gcPercent(), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevLimit) })
	const container = 1000 << 20
	reset := func() { debug.SetGCPercent(100); debug.SetMemoryLimit(1 << 62) }
	logger := slog.New(slog.DiscardHandler)
	on := runtimeOptions{autoMemLimit: true, ratio: 0.9}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	reset()
	if _, err := applyGoRuntime(on, memlimit.Limit(container), logger); err != nil {
		t.Fatal(err)
	}
	if got := gcPercent(); got != defaultGOGC {
		t.Errorf("GC percent %d with GOGC unset, want %d", got, defaultGOGC)
	}
	if got := debug.SetMemoryLimit(-1); got != container*9/10 {
		t.Errorf("GOMEMLIMIT %d in a container of %d, want 90%% of it", got, int64(container))
	}

	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "300MiB")
	reset()
	if _, err := applyGoRuntime(on, memlimit.Limit(container), logger); err != nil {
		t.Fatal(err)
	}
	if got, lim := gcPercent(), debug.SetMemoryLimit(-1); got != 100 || lim != 1<<62 {
		t.Errorf("GOGC and GOMEMLIMIT set: GC percent %d, limit %d changed by the router", got, lim)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	reset()
	if _, err := applyGoRuntime(runtimeOptions{autoMemLimit: false, ratio: 0.9}, memlimit.Limit(container), logger); err != nil {
		t.Fatal(err)
	}
	if lim := debug.SetMemoryLimit(-1); lim != 1<<62 {
		t.Errorf("--no-auto-gomemlimit: limit %d set anyway", lim)
	}
	reset()
	failing := func() (uint64, error) { return 0, errors.New("no cgroup here") }
	if _, err := applyGoRuntime(on, failing, logger); err != nil {
		t.Errorf("an unreadable container limit stopped the router: %v", err)
	}
	if _, err := applyGoRuntime(runtimeOptions{autoMemLimit: true, ratio: 1.5}, memlimit.Limit(container), logger); err == nil {
		t.Error("--auto-gomemlimit.ratio=1.5 accepted")
	}
}
