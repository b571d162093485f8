// Package redistest starts real redis-server processes for tests: a single
// node (Start) and a three-master Redis Cluster (StartCluster), each on free
// loopback ports with its own temporary directory, killed when the test ends.
//
// When redis-server is not on PATH the test is skipped with a loud message,
// or fails when the CI environment variable is set, so CI never silently
// loses its Redis coverage.
package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/proctest"
)

// startTimeout bounds how long a server may take to answer PING and a
// cluster to reach cluster_state:ok.
const startTimeout = 15 * time.Second

// errExited says that redis-server exited before it answered.
var errExited = proctest.ErrExited

// Server is one redis-server process. Its methods are safe for concurrent use.
type Server struct {
	bin  string
	port int
	dir  string
	args []string
	// tlsPort is the port serving TLS besides port (StartTLS); 0: none.
	tlsPort int

	mu     sync.Mutex
	proc   *os.Process
	exited chan struct{} // closed when proc has exited and been reaped
}

// Start starts redis-server on a free loopback port with persistence off and
// waits until it answers PING. extraArgs are appended to the command line
// (e.g. "--requirepass", "secret"). The server is killed by t.Cleanup.
func Start(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	bin := lookPath(t, "redis-server")
	s, err := start(bin, t.TempDir(), extraArgs, false)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

// StartTLS starts redis-server as Start does, serving TLS too on another
// free loopback port (TLSAddr) with the certificate and key of tls (see
// NewTLS); clients are not asked for a certificate. The plain port (Addr)
// stays open: the harness checks the server through it.
func StartTLS(t testing.TB, tls TLSFiles, extraArgs ...string) *Server {
	t.Helper()
	bin := lookPath(t, "redis-server")
	args := append([]string{"--tls-cert-file", tls.Cert, "--tls-key-file", tls.Key, "--tls-auth-clients", "no"}, extraArgs...)
	s, err := start(bin, t.TempDir(), args, true)
	if err != nil {
		t.Fatalf("start redis-server with TLS: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

// TLSAddr returns the "127.0.0.1:port" address of the server's TLS port
// (StartTLS), "" without one.
func (s *Server) TLSAddr() string {
	if s.tlsPort == 0 {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.tlsPort))
}

// start picks a free port (and one for TLS when withTLS) and starts a
// server on it, retrying with another port when the one picked was taken
// in the meantime.
func start(bin, dir string, extraArgs []string, withTLS bool) (*Server, error) {
	var errs []error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{bin: bin, port: port, dir: dir, args: extraArgs}
		if withTLS {
			if s.tlsPort, err = freePort(); err != nil {
				return nil, err
			}
		}
		err = s.Restart()
		if errors.Is(err, errExited) {
			// Most likely the port was taken in the meantime: try another.
			errs = append(errs, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, errors.Join(errs...)
}

// Addr returns the server's "127.0.0.1:port" address.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Kill kills the server process and waits for it to exit. Killing a server
// that is not running does nothing.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	_ = s.proc.Kill()
	<-s.exited
	s.proc = nil
}

// Signal sends sig to the running server (syscall.SIGSTOP pauses it,
// syscall.SIGCONT resumes it: a Redis that stops answering without closing
// its connections). It does nothing when the server is not running.
func (s *Server) Signal(sig os.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	return s.proc.Signal(sig)
}

// Restart starts the server again on the same port (after Kill) and waits
// until it answers PING. Data is not kept: persistence is off.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return fmt.Errorf("redis-server on port %d is already running", s.port)
	}
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
	}
	if s.tlsPort != 0 {
		args = append(args, "--tls-port", strconv.Itoa(s.tlsPort))
	}
	args = append(args, s.args...)
	logPath := filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", s.port))
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open redis-server log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	if err := waitFor(exited, func() error {
		// Any reply means the server is up, NOAUTH included.
		_, err := Do(s.Addr(), "PING")
		if errors.As(err, new(ReplyError)) {
			return nil
		}
		return err
	}); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("redis-server on port %d: %w\n%s", s.port, err, tail(logPath))
	}
	s.proc = cmd.Process
	s.exited = exited
	return nil
}

func waitFor(exited <-chan struct{}, check func() error) error {
	return proctest.WaitFor(exited, startTimeout, check)
}

func lookPath(t testing.TB, name string) string {
	t.Helper()
	return proctest.LookPath(t, "apt-get install redis-server redis-tools", name)
}

var (
	freePort = proctest.FreePort
	tail     = proctest.Tail
)
