package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Sentinel is one redis-sentinel process monitoring a master.
type Sentinel struct {
	port int
}

// Addr returns the sentinel's "127.0.0.1:port" address.
func (s *Sentinel) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// StartSentinel starts a Sentinel (redis-server --sentinel) on a free
// loopback port monitoring master under masterName with quorum 1 and waits
// until it answers. It is killed by t.Cleanup.
func StartSentinel(t testing.TB, master *Server, masterName string) *Sentinel {
	t.Helper()
	bin := lookPath(t, "redis-server")
	var errs []error
	// The port comes from freePort, which another process may take first:
	// a sentinel that exits at once is started again on another port.
	for range 3 {
		s, err := startSentinel(t, bin, master, masterName)
		if errors.Is(err, errExited) {
			errs = append(errs, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatalf("start sentinel: %v", errors.Join(errs...))
	return nil
}

func startSentinel(t testing.TB, bin string, master *Server, masterName string) (*Sentinel, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	content := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 1\nsentinel down-after-milliseconds %s 5000\n",
		port, dir, masterName, master.port, masterName)
	if err := os.WriteFile(conf, []byte(content), 0o600); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "sentinel.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, conf, "--sentinel")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s --sentinel: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	s := &Sentinel{port: port}
	if err := waitFor(exited, func() error {
		_, err := Do(s.Addr(), "PING")
		return err
	}); err != nil {
		return nil, fmt.Errorf("sentinel on port %d: %w\n%s", port, err, tail(logPath))
	}
	return s, nil
}
