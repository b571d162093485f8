package routing_test

import (
	"testing"
	"time"

	"github.com/alertrouter/alertrouter/store"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redistest"
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
