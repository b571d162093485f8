package store_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/redis/go-redis/v9"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
)

// A Redis that refuses NEW connections — its server certificate renewed
// by a CA the router does not trust, a password changed on one side,
// maxclients reached — still answers the connections the client pooled
// before. Ping, which decides readiness and AlertrouterStoreDown, keeps
// answering on them (it failed when it also dialed anew, and with
// fail_closed every replica sharing the Redis went unready while the
// pooled connections served every webhook); PingNewConnection fails,
// counted as alertrouter_store_errors_total{operation="new_conn"}
// (AlertrouterStoreRefusesNewConnections) and naming Redis' own reply
// where it sent one (maxclients: go-redis says "broken pipe").
func TestRedisPingNewConnectionFailsApartWhenRedisRefusesNewConnections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (store.RedisConfig, func(t *testing.T))
		want  string // in PingNewConnection's error
	}{
		{"a password changed on Redis' side", func(t *testing.T) (store.RedisConfig, func(*testing.T)) {
			srv := redistest.Start(t, "--requirepass", "pw1")
			cfg := redisConfig(srv.Addr())
			cfg.Password = "pw1"
			return cfg, func(t *testing.T) { configSet(t, srv.Addr(), "pw1", "requirepass", "pw2") }
		}, "WRONGPASS"},
		{"maxclients reached", func(t *testing.T) (store.RedisConfig, func(*testing.T)) {
			srv := redistest.Start(t)
			return redisConfig(srv.Addr()), func(t *testing.T) { configSet(t, srv.Addr(), "", "maxclients", "1") }
		}, "max number of clients reached"},
		{"a server certificate the router's CA did not sign", func(t *testing.T) (store.RedisConfig, func(*testing.T)) {
			first := redistest.NewTLS(t)
			srv := redistest.StartTLS(t, first)
			cfg := redisConfig(srv.TLSAddr())
			cfg.TLS = &commoncfg.TLSConfig{CAFile: first.CA}
			return cfg, func(t *testing.T) {
				renewed := redistest.NewTLS(t) // another CA: cert-manager's rotation, the router's CA file not yet
				configSet(t, srv.Addr(), "", "tls-cert-file", renewed.Cert, "tls-key-file", renewed.Key)
			}
		}, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, refuseNew := tc.setup(t)
			s, reg := newRedis(t, cfg)
			if n, ok := series(t, reg, "alertrouter_store_errors_total")["new_conn"]; !ok || n != 0 {
				t.Fatalf(`alertrouter_store_errors_total{operation="new_conn"} = %v (present %v) at start; want it created at 0`, n, ok)
			}
			if err := s.Ping(t.Context()); err != nil {
				t.Fatalf("Ping before = %v", err)
			}
			if err := s.PingNewConnection(t.Context()); err != nil {
				t.Fatalf("PingNewConnection before = %v", err)
			}
			refuseNew(t)
			// The pooled connection still answers the router's commands.
			if _, _, err := s.Get(t.Context(), []string{"k"}); err != nil {
				t.Fatalf("Get on the pooled connection = %v; the test needs it to pass", err)
			}
			if err := s.Ping(t.Context()); err != nil {
				t.Fatalf("Ping = %v; want it to pass on the pooled connections (readiness, AlertrouterStoreDown)", err)
			}
			err := s.PingNewConnection(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PingNewConnection = %v; want an error naming %q", err, tc.want)
			}
			errs := series(t, reg, "alertrouter_store_errors_total")
			if errs["new_conn"] != 1 || errs["ping"] != 0 {
				t.Errorf("counted %v new_conn errors and %v ping errors; want 1 and 0", errs["new_conn"], errs["ping"])
			}
		})
	}
}

// configSet sends CONFIG SET name value... to the Redis at addr on a
// fresh connection, authenticated with password when not empty.
func configSet(t *testing.T, addr, password string, nameValues ...string) {
	t.Helper()
	admin := redis.NewClient(&redis.Options{Addr: addr, Password: password})
	defer admin.Close()
	args := []any{"CONFIG", "SET"}
	for _, v := range nameValues {
		args = append(args, v)
	}
	if err := admin.Do(t.Context(), args...).Err(); err != nil {
		t.Fatalf("CONFIG SET %v: %v", nameValues, err)
	}
}

// TLS on one side only said "EOF" (a plain client to Redis' tls-port) or
// "context deadline exceeded" (store.redis.tls against a plain port):
// the errors now say which setting to look at, and each failed
// connection attempt is counted as alertrouter_store_errors_total
// {operation="dial"}.
func TestRedisTLSOnOneSideOnlyIsNamedInTheError(t *testing.T) {
	srv := redistest.StartTLS(t, redistest.NewTLS(t))
	t.Run("a plain client to the TLS port", func(t *testing.T) {
		s, _ := newRedis(t, fastConfig(srv.TLSAddr()))
		err := s.Ping(t.Context())
		if err == nil || !strings.Contains(err.Error(), "set store.redis.tls") {
			t.Errorf("Ping = %v; want it to suggest store.redis.tls", err)
		}
	})
	t.Run("a TLS client to the plain port", func(t *testing.T) {
		cfg := fastConfig(srv.Addr())
		cfg.TLS = &commoncfg.TLSConfig{InsecureSkipVerify: true}
		s, reg := newRedis(t, cfg)
		err := s.Ping(t.Context())
		if err == nil || !strings.Contains(err.Error(), "speaks plain TCP") {
			t.Errorf("Ping = %v; want it to say the port may speak plain TCP", err)
		}
		if n := series(t, reg, "alertrouter_store_errors_total")["dial"]; n == 0 {
			t.Errorf(`alertrouter_store_errors_total{operation="dial"} = %v after failed handshakes; want them counted`, n)
		}
	})
	t.Run("TLS on both sides", func(t *testing.T) {
		cfg := fastConfig(srv.TLSAddr())
		cfg.TLS = &commoncfg.TLSConfig{InsecureSkipVerify: true}
		s, _ := newRedis(t, cfg)
		if err := s.Ping(t.Context()); err != nil {
			t.Errorf("Ping = %v", err)
		}
	})
}

// A Redis Cluster node named as a single node: the probe's key may be the
// node's own slot, so its write passes, while most webhooks' keys are
// answered MOVED (an audit saw the router ready and 68 of 100 pages sent
// twice). ProbeWrite asks INFO and fails it as misconfigured, as does a
// command answered MOVED or CROSSSLOT; the same node named with
// cluster: true passes.
func TestRedisProbeFailsAClusterNodeNamedAsOneNode(t *testing.T) {
	c := redistest.StartCluster(t)
	single, _ := newRedis(t, redisConfig(c.Addrs()[0]))
	keys := []string{"t:probe", "t:probe1", "t:probe2", "t:probe3", "t:probe4", "t:probe5"} // whichever node's slot
	for _, key := range keys {
		err := single.ProbeWrite(t.Context(), key)
		if !errors.Is(err, store.ErrMisconfigured) || !strings.Contains(err.Error(), "cluster: true") {
			t.Errorf("ProbeWrite(%s) = %v, want misconfigured, saying to set cluster: true", key, err)
		}
	}
	entries := make([]store.Entry, 20)
	for i := range entries {
		entries[i] = store.Entry{Key: store.Key("t:", "n", strconv.Itoa(i), "x"), Value: "v", TTL: time.Minute}
	}
	if _, err := single.SetNX(t.Context(), entries); !errors.Is(err, store.ErrMisconfigured) {
		t.Errorf("SetNX of keys in several slots = %v, want misconfigured", err)
	}
	// An ACL user without +info on every node (a review: INFO was the
	// check, and refused, passed).
	for _, n := range c.Nodes() {
		if _, err := redistest.Do(n.Addr(), "ACL", "SETUSER", "rr", "on", ">pw", "~*", "+@all", "-info"); err != nil {
			t.Fatal(err)
		}
	}
	acl := redisConfig(c.Addrs()[0])
	acl.Username, acl.Password = "rr", "pw"
	noInfo, _ := newRedis(t, acl)
	for _, key := range keys {
		if err := noInfo.ProbeWrite(t.Context(), key); !errors.Is(err, store.ErrMisconfigured) {
			t.Errorf("ProbeWrite(%s) as a user without +info = %v, want misconfigured", key, err)
		}
	}
	cfg := redisConfig(c.Addrs()[0])
	cfg.Cluster = true
	clustered, _ := newRedis(t, cfg)
	if err := clustered.ProbeWrite(t.Context(), "t:probe"); err != nil {
		t.Errorf("ProbeWrite with cluster: true = %v", err)
	}
}
