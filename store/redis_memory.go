package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// MemoryPolicy is what Redis says of its memory limit (INFO memory).
type MemoryPolicy struct {
	// Node is the address of the node it was read from.
	Node string
	// Policy is maxmemory-policy, e.g. "noeviction" or "allkeys-lru".
	Policy string
	// MaxMemory is maxmemory in bytes (0: no limit).
	MaxMemory int64
}

// Evicts reports whether Redis deletes keys to make room when full: a
// memory limit with any policy but noeviction. Every key of the router has
// a time to live, so even the volatile-* policies evict them — dedup
// markers, claims and incident state — and an evicted marker pages again.
func (m MemoryPolicy) Evicts() bool { return m.MaxMemory > 0 && m.Policy != "noeviction" }

// MemoryPolicy reads maxmemory and maxmemory-policy from INFO memory, which
// managed services answer where they disable CONFIG. On a Redis Cluster it
// asks every master and returns the first that evicts (else the last read).
func (r *Redis) MemoryPolicy(ctx context.Context) (MemoryPolicy, error) {
	read := func(ctx context.Context, c *redis.Client) (MemoryPolicy, error) {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return MemoryPolicy{}, fmt.Errorf("redis INFO memory: %w", err)
		}
		m, err := parseMemoryPolicy(info)
		if addr := c.Options().Addr; addr != "FailoverClient" { // go-redis' name for a Sentinel-managed master
			m.Node = addr
		}
		return m, err
	}
	switch c := r.client.(type) {
	case *redis.ClusterClient:
		var out MemoryPolicy
		var mu sync.Mutex
		err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			m, err := read(ctx, n)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if !out.Evicts() {
				out = m
			}
			return nil
		})
		return out, err
	case *redis.Client:
		return read(ctx, c)
	default:
		info, err := r.client.Info(ctx, "memory").Result()
		if err != nil {
			return MemoryPolicy{}, fmt.Errorf("redis INFO memory: %w", err)
		}
		return parseMemoryPolicy(info)
	}
}

// parseMemoryPolicy reads maxmemory and maxmemory_policy from the text of
// INFO memory.
func parseMemoryPolicy(info string) (MemoryPolicy, error) {
	var m MemoryPolicy
	var havePolicy, haveMax bool
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "maxmemory_policy":
			m.Policy, havePolicy = v, true
		case "maxmemory":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return m, fmt.Errorf("redis INFO memory: maxmemory %q: %w", v, err)
			}
			m.MaxMemory, haveMax = n, true
		}
	}
	if !havePolicy || !haveMax {
		return m, fmt.Errorf("redis INFO memory says nothing of maxmemory or maxmemory_policy")
	}
	return m, nil
}

// RunID returns the run_id of the Redis serving the router's keys (INFO
// server): a new one means Redis restarted or failed over, and its data may
// be older than what the router last wrote (dedup.StoreLife). A Redis
// Cluster has one per master: "" (unknown) there.
func (r *Redis) RunID(ctx context.Context) (string, error) {
	if _, ok := r.client.(*redis.ClusterClient); ok {
		return "", nil
	}
	info, err := r.client.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("redis INFO server: %w", err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v, nil
		}
	}
	return "", nil
}

// Time reads Redis' clock (TIME): the reference the router's replicas
// stamp their shared state with (cmd/router's storeClock). On a Cluster,
// one node's.
func (r *Redis) Time(ctx context.Context) (time.Time, error) {
	t, err := r.client.Time(ctx).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("redis TIME: %w", err)
	}
	return t, nil
}

// EvictedKeys reads how many keys Redis evicted since it started (INFO
// stats' evicted_keys; on a Cluster, summed over the masters): an
// evicting maxmemory-policy deletes nothing until Redis is full.
func (r *Redis) EvictedKeys(ctx context.Context) (int64, error) {
	read := func(ctx context.Context, c redis.UniversalClient) (int64, error) {
		info, err := c.Info(ctx, "stats").Result()
		if err != nil {
			return 0, fmt.Errorf("redis INFO stats: %w", err)
		}
		for line := range strings.Lines(info) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "evicted_keys:"); ok {
				return strconv.ParseInt(v, 10, 64)
			}
		}
		return 0, nil
	}
	if c, ok := r.client.(*redis.ClusterClient); ok {
		var sum int64
		var mu sync.Mutex
		err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			k, err := read(ctx, n)
			mu.Lock()
			sum += k
			mu.Unlock()
			return err
		})
		return sum, err
	}
	return read(ctx, r.client)
}
