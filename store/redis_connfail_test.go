package store_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"
)

// refusingServer listens on loopback and answers every command, the
// connection's set-up (HELLO, AUTH) included, with the error reply msg:
// a proxy in front of Redis that refuses connections with words of its own.
func refusingServer(t *testing.T, msg string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if line[0] != '*' {
						continue // a command's length or argument
					}
					if _, err := c.Write([]byte("-" + msg + "\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// A connection that could not be set up leaves every command of the
// pipeline without a reply or an error of its own. Read command by
// command, each claim would look lost to another replica (won false, no
// error): the webhook would take the alert as another replica's and send
// nothing. It is a store error, fail_open or fail_closed deciding, and it
// names the server's reply.
func TestRedisClaimOnAConnectionThatCannotBeSetUpIsAnError(t *testing.T) {
	cfg := fastConfig(refusingServer(t, "ERR no upstream host"))
	// With a password the set-up fails at AUTH (without one, go-redis
	// sends no AUTH and the SETs carry the reply themselves).
	cfg.Password = "s3cret"
	s, _ := newRedis(t, cfg)
	won, err := s.SetNX(t.Context(), []store.Entry{{Key: "c:x", Value: "token-1", TTL: time.Minute}})
	if err == nil || !strings.Contains(err.Error(), "no upstream host") {
		t.Fatalf("SetNX = %v, %v; want an error naming the server's reply, not a claim lost", won, err)
	}
}

// A write that fails as a whole fails only the parts it had something to
// write (store.WriteErrors): an empty part failed with the rest was logged
// as a failed settle ("confirm notified transitions items=0"), counted in
// alertrouter_dedup_settle_errors_total and queued as a deferred write that
// applied nothing (an audit).
func TestAFailedWriteFailsOnlyThePartsItWrote(t *testing.T) {
	cfg := fastConfig(refusingServer(t, "ERR no upstream host"))
	cfg.Password = "s3cret"
	s, _ := newRedis(t, cfg)
	errs := s.Write(t.Context(), store.Writes{
		Incidents: []store.IncidentOp{{Key: "t:inc", Step: store.StepJoin, Token: "t", Lease: time.Minute, TTL: time.Minute, Members: []store.Member{{Fingerprint: "f", StartsAt: "1"}}}},
		Remove:    []store.Members{{Key: "t:slo"}}, // no members: nothing to remove
	})
	if errs.Incidents == nil || errs.Set != nil || errs.Release != nil || errs.Add != nil || errs.Remove != nil {
		t.Fatalf("write errors %+v; want the incidents' alone", errs)
	}
}
