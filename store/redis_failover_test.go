package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// A Redis Cluster master dies and its replica takes over: the store
// follows the promotion as soon as the cluster is healthy again. go-redis
// reloads the slot map on MOVED/ASK/READONLY and otherwise once a minute,
// so every command for the dead master's slots kept dialling its address
// (connection refused: the store read as down, fail open, duplicate
// notifications) for up to a minute after the failover.
func TestRedisClusterFollowsAFailover(t *testing.T) {
	c := redistest.StartClusterWithReplicas(t)
	s, _ := newRedis(t, redisConfig(c.Addrs()...))
	ctx := t.Context()
	key := store.Key("t:", "n", "failover", "a")
	if err := s.Set(ctx, []store.Entry{{Key: key, Value: "before", TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	dead, err := c.MasterOf(key)
	if err != nil {
		t.Fatal(err)
	}
	// The replica must hold the key before its master dies. WAIT's own
	// timeout stays under redistest.Do's 5 s deadline (a loaded machine
	// made the connection time out first: CI), asked again until a
	// replica acknowledged.
	acked := false
	for range 10 {
		n, err := redistest.Do(dead.Addr(), "WAIT", "1", "2000")
		if err != nil {
			t.Fatal(err)
		}
		if n != "0" {
			acked = true
			break
		}
	}
	if !acked {
		t.Fatal("no replica acknowledged the key in 20s")
	}
	dead.Kill()
	// The store finds the master down meanwhile (its slot map still names it).
	_, _, err = s.Get(ctx, []string{key})
	if err == nil {
		t.Log("the first read after the kill already reached a promoted replica")
	}

	// Wait, outside the store, until another node serves the slot.
	var promoted *redistest.Server
	for range 300 {
		if m, err := c.MasterOf(key); err == nil && m != dead {
			promoted = m
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if promoted == nil {
		t.Fatal("no replica took over the dead master's slot")
	}
	if info, err := redistest.Do(promoted.Addr(), "CLUSTER", "INFO"); err != nil || !strings.Contains(info, "cluster_state:ok") {
		// The other nodes may take a moment more to agree.
		for range 100 {
			if info, err = redistest.Do(promoted.Addr(), "CLUSTER", "INFO"); err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// The store answers again within a few of its own retries — each
	// failure asks go-redis for the layout again — not after the minute of
	// go-redis' periodic reload.
	var values []string
	var found []bool
	for i := range 50 {
		values, found, err = s.Get(ctx, []string{key})
		if err == nil {
			break
		}
		if i == 49 {
			t.Fatalf("the store still fails 5 s after the failover: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !found[0] || values[0] != "before" {
		t.Fatalf("after the failover %s = %q (found %v), want the value written before", key, values[0], found[0])
	}
}
