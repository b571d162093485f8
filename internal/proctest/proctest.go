// Package proctest holds what every test harness that runs a real server
// process needs (internal/redistest, internal/promtest, internal/amtest,
// e2e): finding its binary (skipping loudly without it, failing under CI),
// a free loopback port, waiting for readiness while watching for an early
// exit, and the tail of its log for failure messages.
package proctest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ErrExited says that the process exited before it was ready: most often
// because the port picked by FreePort was taken in the meantime, which the
// harnesses answer by starting again on another port.
var ErrExited = errors.New("exited before it was ready")

// LookPath returns the first of names found on PATH. Without any, the test
// is skipped with a loud message saying how to install it (what), and
// fails under CI, where a skipped real-component test would hide a missing
// install step.
func LookPath(t testing.TB, what string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	msg := fmt.Sprintf("\n"+
		"************************************************************\n"+
		"*  %s NOT FOUND ON PATH: these tests are NOT running.\n"+
		"*  Install it:  %s (scripts/install-deps.sh does)\n"+
		"************************************************************", names[0], what)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// FreePort returns a loopback port free for TCP and UDP, chosen below the
// kernel's ephemeral range (net.ipv4.ip_local_port_range) so that the
// kernel never hands it to an outgoing connection before the caller binds
// it — with tests running in parallel that happened, to an Alertmanager's
// cluster port — and so that port+10000 (a Redis Cluster node's bus port)
// is below that range too. Another test may still pick the same port
// first: callers start again on another port when theirs exits with
// "address already in use" (ErrExited).
func FreePort() (int, error) {
	lo, hi := 10000, ephemeralLow()-10000
	for range 200 {
		if hi-lo < 1000 {
			break
		}
		if p := lo + rand.IntN(hi-lo); bindable(p) {
			return p, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768,
// Linux's default, when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// bindable reports whether port can be bound on loopback for TCP and UDP
// (Alertmanager's cluster listens on both).
func bindable(port int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	u.Close()
	return true
}

// WaitFor polls check every 20ms until it returns nil, exited is closed
// (then the error wraps ErrExited), or timeout passes.
func WaitFor(exited <-chan struct{}, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", timeout, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("%w: %w", ErrExited, err)
		case <-tick.C:
		}
	}
}

// Tail returns the last 4 KiB of a log file, for failure messages.
func Tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}
