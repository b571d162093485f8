package proctest

import (
	"net"
	"strconv"
	"testing"
)

// FreePort's ports are below the kernel's ephemeral range, with room for a
// Redis Cluster bus port (+10000), and can be bound at once.
func TestFreePortIsBelowTheEphemeralRangeAndBindable(t *testing.T) {
	low := ephemeralLow()
	if low-10000 <= 11000 {
		t.Skipf("ephemeral range starts at %d: no room below it", low)
	}
	seen := map[int]bool{}
	for range 20 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < 10000 || p+10000 >= low {
			t.Fatalf("port %d: want 10000 <= port and port+10000 < %d", p, low)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", p, err)
		}
		l.Close()
		seen[p] = true
	}
	if len(seen) < 10 {
		t.Errorf("20 calls gave %d distinct ports, want them spread", len(seen))
	}
}
