package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/alertrouter/alertrouter/store"
)

// defaultGOGC is the garbage collector's target percentage when GOGC is
// not set in the environment and the state is in Redis. The router's live
// heap is then small (tens of MiB) and it allocates for every alert, so
// with Go's 100 it collects very often: at 200 a fresh-alert webhook costs
// about 8 % less CPU for 13-17 MiB more peak memory (docs/benchmarks.md,
// "fourth round"), and the memory limit below bounds the heap in a
// container.
const defaultGOGC = 200

// memoryStoreGOGC is the target with the embedded memory store, whose
// dedup state is the live heap (hundreds of MiB after a storm): at 200 the
// heap would grow to three times it before a collection, at 100 twice
// (the 100k-alert storm: 491 → 357 MiB peak; docs/benchmarks.md, eleventh
// round).
const memoryStoreGOGC = 100

// gcTarget is the GC target for a store configuration: memoryStoreGOGC
// without Redis, else defaultGOGC.
func gcTarget(c store.Config) int {
	if c.Redis == nil {
		return memoryStoreGOGC
	}
	return defaultGOGC
}

// runtimeOptions are the serve flags that tune the Go runtime.
type runtimeOptions struct {
	autoMemLimit bool
	ratio        float64
}

// ratioOK reports whether r is a --auto-gomemlimit.ratio: in (0, 1], not NaN.
func ratioOK(r float64) bool { return r > 0 && r <= 1 }

// applyGoRuntime sets the GC target to gogc (unless GOGC is set) and GOMEMLIMIT to
// ratio × the container's memory limit (cgroup; unless GOMEMLIMIT or
// AUTOMEMLIMIT=off is set, or --no-auto-gomemlimit), so that a burst of
// alerts makes the collector work harder near the limit instead of the
// kernel killing the router. It returns what it set, for the log. Only a
// bad ratio is an error: a limit that cannot be read is logged and left.
func applyGoRuntime(o runtimeOptions, gogc int, provider memlimit.Provider, logger *slog.Logger) ([]any, error) {
	var out []any
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gogc)
		out = append(out, "gogc", gogc)
	}
	if !o.autoMemLimit {
		return out, nil
	}
	if !ratioOK(o.ratio) {
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
