package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/internal/redistest"
)

// A Redis Cluster node named as a single node (no cluster: true): the
// probe's key may be the node's own, so the router read ready while most
// webhooks' keys were answered MOVED and every alert went out without
// deduplication (an audit: 68 of 100 pages sent twice through two
// replicas). The replica stays unready, saying what to set — a rollout of
// that configuration stops at its first replica.
func TestReadinessProbeFindsAClusterNodeNamedAsOneNode(t *testing.T) {
	if testing.Short() {
		t.Skip("Redis Cluster skipped under -short")
	}
	c := redistest.StartCluster(t)
	p := writeFile(t, "router.yml", "store: {redis: {addrs: ["+c.Addrs()[0]+"]}}\nroute: {receiver: log}\nreceivers: [{name: log, log_configs: [{}]}]\n")
	addr, _ := serveUnready(t, p, "--store.probe-interval=0")
	var code int
	var body string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			continue
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		code, body = resp.StatusCode, b.String()
		if strings.Contains(body, "cluster: true") {
			break
		}
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "misconfigured") || !strings.Contains(body, "cluster: true") {
		t.Fatalf("/-/ready against a Cluster node named as one node: %d %q; want 503 saying the store is misconfigured and to set cluster: true", code, body)
	}
}
