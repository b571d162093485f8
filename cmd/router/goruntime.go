package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// defaultGOGC is the garbage collector's target percentage when GOGC is
// not set in the environment. The router's live heap is small (tens of
// MiB) and it allocates for every alert, so with Go's 100 it collects
// very often: at 200 a fresh-alert webhook costs about 8 % less CPU for
// 13-17 MiB more peak memory (docs/benchmarks.md, "fourth round"), and
// the memory limit below bounds the heap in a container.
const defaultGOGC = 200

// runtimeOptions are the serve flags that tune the Go runtime.
type runtimeOptions struct {
	autoMemLimit bool
	ratio        float64
}

// applyGoRuntime sets the GC target (unless GOGC is set) and GOMEMLIMIT to
// ratio × the container's memory limit (cgroup; unless GOMEMLIMIT or
// AUTOMEMLIMIT=off is set, or --no-auto-gomemlimit), so that a burst of
// alerts makes the collector work harder near the limit instead of the
// kernel killing the router. It returns what it set, for the log. Only a
// bad ratio is an error: a limit that cannot be read is logged and left.
func applyGoRuntime(o runtimeOptions, provider memlimit.Provider, logger *slog.Logger) ([]any, error) {
	var out []any
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGOGC)
		out = append(out, "gogc", defaultGOGC)
	}
	if !o.autoMemLimit {
		return out, nil
	}
	if o.ratio <= 0 || o.ratio > 1 {
		return out, fmt.Errorf("--auto-gomemlimit.ratio=%v: want a ratio in (0, 1]", o.ratio)
	}
	limit, err := memlimit.Set(memlimit.WithRatio(o.ratio), memlimit.WithProvider(provider))
	if err != nil {
		logger.Warn("GOMEMLIMIT not set from the container's memory limit", "err", err)
		return out, nil
	}
	if limit > 0 && limit < 1<<62 {
		out = append(out, "gomemlimit_bytes", limit)
	}
	return out, nil
}
