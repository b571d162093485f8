package redistest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Distant starts a loopback TCP proxy to addr that holds each chunk Redis
// sends back for delay before passing it on, in order: a Redis that
// answers every command, but a round trip of at least delay away (another
// zone or region). It returns the proxy's address; it stops, closing its
// connections, when the test ends.
func Distant(t testing.TB, addr string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c ...net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, c...)
	}
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", addr)
			if err != nil {
				client.Close()
				continue
			}
			track(client, server)
			go func() { _, _ = io.Copy(server, client) }()
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						time.Sleep(delay)
						if _, werr := client.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						client.Close()
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}
