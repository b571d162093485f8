package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Cluster is a Redis Cluster of three masters, with or without a replica
// each.
type Cluster struct {
	nodes    []*Server // masters, then replicas
	replicas int
}

// StartCluster starts three cluster-enabled redis-servers on free loopback
// ports, joins them with `redis-cli --cluster create`, and waits until every
// node reports cluster_state:ok. The nodes are killed by t.Cleanup.
func StartCluster(t testing.TB) *Cluster { return startCluster(t, 0, "5000") }

// StartClusterWithReplicas starts a cluster of three masters and one
// replica each, whose node timeout (1 s) lets a replica take over a
// killed master within a few seconds: for failover tests.
func StartClusterWithReplicas(t testing.TB) *Cluster { return startCluster(t, 1, "1000") }

func startCluster(t testing.TB, replicas int, nodeTimeout string) *Cluster {
	t.Helper()
	server := lookPath(t, "redis-server")
	cli := lookPath(t, "redis-cli")
	c := &Cluster{replicas: replicas}
	for i := range 3 * (1 + replicas) {
		dir := t.TempDir()
		s, err := start(server, dir, []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", nodeTimeout,
		}, false)
		if err != nil {
			t.Fatalf("start cluster node %d: %v", i, err)
		}
		t.Cleanup(s.Kill)
		c.nodes = append(c.nodes, s)
	}

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	args := []string{"--cluster", "create"}
	for _, n := range c.nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	for _, s := range c.nodes {
		if err := waitFor(nil, func() error {
			info, err := Do(s.Addr(), "CLUSTER", "INFO")
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("node %s: cluster not ok yet", s.Addr())
			}
			// Every node must know every other, or a client that loads
			// the slot map from it would miss some slots.
			if !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.nodes))) {
				return fmt.Errorf("node %s: not all nodes known yet", s.Addr())
			}
			return nil
		}); err != nil {
			t.Fatalf("wait for cluster: %v", err)
		}
	}
	return c
}

// Addrs returns the "127.0.0.1:port" addresses of the cluster's masters
// as started (a failover may have promoted a replica since).
func (c *Cluster) Addrs() []string {
	addrs := make([]string, 3)
	for i, s := range c.nodes[:3] {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Nodes returns the cluster's servers as started, masters first, for fault
// tests.
func (c *Cluster) Nodes() []*Server { return c.nodes }

// MasterOf returns the node serving key's slot as master now, as the
// running nodes' CLUSTER NODES tells it.
func (c *Cluster) MasterOf(key string) (*Server, error) {
	var lastErr error
	for _, n := range c.nodes {
		slotText, err := Do(n.Addr(), "CLUSTER", "KEYSLOT", key)
		if err != nil {
			lastErr = err
			continue
		}
		slot, err := strconv.Atoi(slotText)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER KEYSLOT %q: %q", key, slotText)
		}
		nodes, err := Do(n.Addr(), "CLUSTER", "NODES")
		if err != nil {
			lastErr = err
			continue
		}
		addr, ok := slotMaster(nodes, slot)
		if !ok {
			return nil, fmt.Errorf("no live master serves slot %d (node %s)", slot, n.Addr())
		}
		for _, m := range c.nodes {
			if m.Addr() == addr {
				return m, nil
			}
		}
		return nil, fmt.Errorf("slot %d served by %s, not a node of this cluster", slot, addr)
	}
	return nil, fmt.Errorf("no node answers: %w", lastErr)
}

// slotMaster finds, in CLUSTER NODES output, the address of the live
// master serving slot.
func slotMaster(nodes string, slot int) (string, bool) {
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && l <= slot && slot <= h {
				addr, _, _ := strings.Cut(f[1], "@")
				return addr, true
			}
		}
	}
	return "", false
}
