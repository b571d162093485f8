package main

import (
	"errors"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/alertrouter/alertrouter/config"
	"github.com/alertrouter/alertrouter/store"
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
	if _, err := applyGoRuntime(on, defaultGOGC, memlimit.Limit(container), logger); err != nil {
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
	if _, err := applyGoRuntime(on, defaultGOGC, memlimit.Limit(container), logger); err != nil {
		t.Fatal(err)
	}
	if got, lim := gcPercent(), debug.SetMemoryLimit(-1); got != 100 || lim != 1<<62 {
		t.Errorf("GOGC and GOMEMLIMIT set: GC percent %d, limit %d changed by the router", got, lim)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	reset()
	if _, err := applyGoRuntime(runtimeOptions{autoMemLimit: false, ratio: 0.9}, defaultGOGC, memlimit.Limit(container), logger); err != nil {
		t.Fatal(err)
	}
	if lim := debug.SetMemoryLimit(-1); lim != 1<<62 {
		t.Errorf("--no-auto-gomemlimit: limit %d set anyway", lim)
	}
	reset()
	failing := func() (uint64, error) { return 0, errors.New("no cgroup here") }
	if _, err := applyGoRuntime(on, defaultGOGC, failing, logger); err != nil {
		t.Errorf("an unreadable container limit stopped the router: %v", err)
	}
	if _, err := applyGoRuntime(runtimeOptions{autoMemLimit: true, ratio: 1.5}, defaultGOGC, memlimit.Limit(container), logger); err == nil {
		t.Error("--auto-gomemlimit.ratio=1.5 accepted")
	}
}

// With the embedded memory store the dedup state is the live heap, so the
// router keeps Go's 100 % GC target instead of raising it: 200 % would let
// the heap grow to three times that state. With Redis it raises it.
func TestGCTargetFollowsTheStore(t *testing.T) {
	withRedis := config.LoadDefault()
	rc := store.DefaultRedisConfig()
	rc.Addrs = []string{"127.0.0.1:6379"}
	withRedis.Store.Redis = &rc
	for _, tc := range []struct {
		name string
		cfg  *config.Config
		want int
	}{
		{"embedded defaults (memory store)", config.LoadDefault(), 100},
		{"redis", withRedis, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev := gcPercent()
			t.Cleanup(func() { debug.SetGCPercent(prev) })
			t.Setenv("GOGC", "")
			if _, err := applyGoRuntime(runtimeOptions{}, gcTarget(tc.cfg.Store), memlimit.Limit(1<<30), slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			if got := gcPercent(); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}
