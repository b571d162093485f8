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

// Cluster is a Redis Cluster of three masters and no replicas.
type Cluster struct {
	nodes []*Server
}

// StartCluster starts three cluster-enabled redis-servers on free loopback
// ports, joins them with `redis-cli --cluster create`, and waits until every
// node reports cluster_state:ok. The nodes are killed by t.Cleanup.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	server := lookPath(t, "redis-server")
	cli := lookPath(t, "redis-cli")
	c := &Cluster{}
	for i := range 3 {
		dir := t.TempDir()
		s, err := start(server, dir, []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "5000",
		})
		if err != nil {
			t.Fatalf("start cluster node %d: %v", i, err)
		}
		t.Cleanup(s.Kill)
		c.nodes = append(c.nodes, s)
	}

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
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
			// Every node must know all three masters, or a client that
			// loads the slot map from it would miss some slots.
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

// Addrs returns the "127.0.0.1:port" addresses of the cluster's masters.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Nodes returns the cluster's master servers, for fault tests.
func (c *Cluster) Nodes() []*Server { return c.nodes }
