package routing_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/routing/alert"
)

// redisEnv is an env whose store is a real redis-server.
func redisEnv(t *testing.T, addrs []string, cluster bool) *env {
	t.Helper()
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = addrs
	cfg.Cluster = cluster
	cfg.MaxRetries = -1
	cfg.DialTimeout = model.Duration(200 * time.Millisecond)
	st, err := store.NewRedis(cfg, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := newEnv(t)
	e.store = st
	return e
}

func TestPipelineNotifiesEachTransitionOnceAcrossConcurrentReplicasOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	checkExactlyOnceUnderConcurrency(t, redisEnv(t, []string{srv.Addr()}, false))
}

func TestPipelineNotifiesEachTransitionOnceAcrossConcurrentReplicasOnRedisCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("Redis Cluster skipped under -short")
	}
	c := redistest.StartCluster(t)
	checkExactlyOnceUnderConcurrency(t, redisEnv(t, c.Addrs(), true))
}

func TestPipelineSendsTheResolveWhoseMarkerARedisRestartLost(t *testing.T) {
	srv := redistest.Start(t)
	e := redisEnv(t, []string{srv.Addr()}, false)
	checkResolveAfterTheStoreLostItsState(t, e, func() {
		srv.Kill()
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPipelineSurvivesARedisOutage(t *testing.T) {
	checkStoreOutage(t, func(t *testing.T) (*env, storeOutage) {
		srv := redistest.Start(t)
		e := redisEnv(t, []string{srv.Addr()}, false)
		return e, storeOutage{
			down: srv.Kill,
			up: func() {
				if err := srv.Restart(); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

// A Redis Cluster node named as a single node (store.redis without
// cluster: true) answers most of a webhook's keys MOVED or CROSSSLOT:
// failing open on that sent every alert without deduplication for as long
// as the configuration stood (an audit: 68 of 100 pages sent twice through
// two replicas). It is answered 5xx instead, fail-open or not, and nothing
// is sent.
func TestAClusterNodeNamedAsOneNodeIsAnswered5xxNotFailedOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("Redis Cluster skipped under -short")
	}
	c := redistest.StartCluster(t)
	e := redisEnv(t, c.Addrs()[:1], false)
	p := e.pipeline()
	_, err := process(t, p, manyAlerts(30)...)
	var de *alert.DeliveryError
	if !errors.As(err, &de) || !de.Retryable {
		t.Fatalf("Process = %v, want a retryable error", err)
	}
	if msg := err.Error(); !strings.Contains(msg, store.ErrMisconfigured.Error()) || !strings.Contains(msg, "cluster: true") {
		t.Errorf("error %q does not say the store is misconfigured, and what to set", msg)
	}
	if n := len(e.pd.transitions()) + len(e.slack.transitions()); n != 0 {
		t.Errorf("%d transitions sent without deduplication, want none", n)
	}
}
