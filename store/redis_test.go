package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/alertrouter/alertrouter/internal/redistest"
	"github.com/alertrouter/alertrouter/store"
	"github.com/alertrouter/alertrouter/store/storetest"
)

// newRedis returns a Redis store for cfg (defaults filled in) with its own
// registry, closed when the test ends.
func newRedis(t testing.TB, cfg store.RedisConfig) (*store.Redis, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	s, err := store.NewRedis(cfg, reg, nil)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, reg
}

func redisConfig(addrs ...string) store.RedisConfig {
	cfg := store.DefaultRedisConfig()
	cfg.Addrs = addrs
	return cfg
}

func TestRedisConforms(t *testing.T) {
	srv := redistest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := newRedis(t, redisConfig(srv.Addr()))
		return s
	})
}

func TestRedisClusterConforms(t *testing.T) {
	cluster := redistest.StartCluster(t)
	t.Run("with every master as seed", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s, _ := newRedis(t, redisConfig(cluster.Addrs()...))
			return s
		})
	})
	t.Run("with one seed and cluster: true", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			cfg := redisConfig(cluster.Addrs()[0])
			cfg.Cluster = true
			s, _ := newRedis(t, cfg)
			return s
		})
	})
}

// Sentinel comes from the same config keys: master_name set, addrs are the
// sentinels. The store finds the master through them and conforms.
func TestRedisThroughSentinelConforms(t *testing.T) {
	master := redistest.Start(t)
	sentinel := redistest.StartSentinel(t, master, "mymaster")
	storetest.Run(t, func(t *testing.T) store.Store {
		cfg := redisConfig(sentinel.Addr())
		cfg.MasterName = "mymaster"
		s, _ := newRedis(t, cfg)
		return s
	})
}

// flushScripts empties the script cache of the Redis at addr, as a restart
// does.
func flushScripts(t *testing.T, addr string) {
	t.Helper()
	if _, err := redistest.Do(addr, "SCRIPT", "FLUSH"); err != nil {
		t.Fatal(err)
	}
}

func TestRedisDeleteIfEqualReloadsAFlushedScript(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	ctx := t.Context()
	keys := []string{store.Key("t:", "claim", "i1", "a"), store.Key("t:", "claim", "i2", "b")}
	for round := range 2 {
		// The first round finds the script uncached, as after a restart;
		// the second finds it cached by the first's EVAL fallback.
		if round == 0 {
			flushScripts(t, srv.Addr())
		}
		entries := []store.Entry{{Key: keys[0], Value: "mine", TTL: time.Minute}, {Key: keys[1], Value: "mine", TTL: time.Minute}}
		if err := s.Set(ctx, entries); err != nil {
			t.Fatal(err)
		}
		entries[1].Value = "not mine"
		if err := s.DeleteIfEqual(ctx, entries); err != nil {
			t.Fatalf("round %d: DeleteIfEqual: %v", round, err)
		}
		_, found, err := s.Get(ctx, keys)
		if err != nil || found[0] || !found[1] {
			t.Fatalf("round %d: found = %v, %v; want only the second key kept", round, found, err)
		}
	}
}

// Write and AddMembers, whose scripts a restarted Redis no longer has,
// send them again with EVAL (runScripts) and lose nothing.
func TestRedisWriteReloadsFlushedScripts(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	ctx := t.Context()
	claim, set, inc := store.Key("t:", "claim", "i1", "a"), store.Key("t:", "slo", "i2", ""), store.Key("t:", "inc", "i3", "slack/0")
	if err := s.Set(ctx, []store.Entry{{Key: claim, Value: "mine", TTL: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	flushScripts(t, srv.Addr())
	errs := s.Write(ctx, store.Writes{
		Release:   []store.Entry{{Key: claim, Value: "mine"}},
		Add:       []store.Members{{Key: set, TTL: time.Minute, Members: []string{"m1"}}},
		Incidents: []store.IncidentOp{{Key: inc, Step: store.StepJoin, Token: "t", Lease: time.Minute, TTL: time.Minute, Members: []store.Member{{Fingerprint: "f", StartsAt: "1"}}}},
	})
	if err := errs.Err(); err != nil {
		t.Fatalf("Write after SCRIPT FLUSH: %v", err)
	}
	if _, found, err := s.Get(ctx, []string{claim}); err != nil || found[0] {
		t.Fatalf("claim found = %v, %v; want it released", found, err)
	}
	flushScripts(t, srv.Addr())
	if err := s.AddMembers(ctx, set, time.Minute, "m2"); err != nil {
		t.Fatalf("AddMembers after SCRIPT FLUSH: %v", err)
	}
	m, err := s.Members(ctx, set)
	if err != nil || len(m) != 2 {
		t.Fatalf("members %v, %v; want m1 and m2", m, err)
	}
	res, err := s.Incidents(ctx, []store.IncidentOp{{Key: inc, Step: store.StepJoin, Token: "u", Lease: time.Minute, TTL: time.Minute, Members: []store.Member{{Fingerprint: "g", StartsAt: "1"}}}})
	if err != nil || res[0].Outcome != store.OutcomeBusy {
		t.Fatalf("second join = %+v, %v; want busy (the first join, written by Write, holds the opening lease)", res, err)
	}
}

// ClaimJoin after a restart (the incident script uncached): the claims go
// in the first pipeline, the script again with EVAL, and it still finds the
// claims it took and leaves out the one another sender holds.
func TestRedisClaimJoinReloadsAFlushedScript(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	ctx := t.Context()
	mine, theirs, inc := store.Key("t:", "claim", "i1", "a"), store.Key("t:", "claim", "i1", "b"), store.Key("t:", "inc", "i1", "slack/0")
	mark := store.Key("t:", "handresolved", "i1", "pagerduty/0")
	if err := s.Set(ctx, []store.Entry{{Key: theirs, Value: "other", TTL: time.Minute}, {Key: mark, Value: "resolving", TTL: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	flushScripts(t, srv.Addr())
	res := s.ClaimJoin(ctx, []store.Entry{{Key: mine, Value: "tok", TTL: time.Minute}, {Key: theirs, Value: "tok", TTL: time.Minute}}, nil,
		[]store.ClaimedOp{{Op: store.IncidentOp{Key: inc, Step: store.StepJoin, Token: "tok", Lease: time.Minute, TTL: time.Minute,
			Members: []store.Member{{Fingerprint: "a", StartsAt: "1"}, {Fingerprint: "b", StartsAt: "1"}}}, Claims: []int{0, 1}, After: []string{mark}}})
	if res.ClaimErr != nil || res.IncidentsErr != nil || res.AfterErr != nil {
		t.Fatalf("ClaimJoin after SCRIPT FLUSH: claims %v, incidents %v, after %v", res.ClaimErr, res.IncidentsErr, res.AfterErr)
	}
	if len(res.After) != 1 || len(res.After[0].Values) != 1 || res.After[0].Values[0] != "resolving" {
		t.Fatalf("After read %+v, want the mark read once the script ran again", res.After)
	}
	if len(res.Won) != 2 || !res.Won[0] || res.Won[1] {
		t.Fatalf("won %v, want [true false]", res.Won)
	}
	if len(res.Incidents) != 1 || res.Incidents[0].Outcome != store.OutcomeOpening || len(res.Incidents[0].Added) != 1 || res.Incidents[0].Added[0].Fingerprint != "a" {
		t.Fatalf("join %+v, want opening with only a added", res.Incidents)
	}
}

// fastConfig fails fast when Redis is gone.
func fastConfig(addrs ...string) store.RedisConfig {
	cfg := redisConfig(addrs...)
	cfg.DialTimeout = model.Duration(200 * time.Millisecond)
	cfg.ReadTimeout = model.Duration(200 * time.Millisecond)
	cfg.WriteTimeout = model.Duration(200 * time.Millisecond)
	return cfg
}

// everyOperation calls each Store method once on keys of several incidents
// and returns their errors by name.
func everyOperation(ctx context.Context, s store.Store) map[string]error {
	entries := make([]store.Entry, 10)
	keys := make([]string, len(entries))
	for i := range entries {
		keys[i] = store.Key("fault:", "claim", fmt.Sprint("incident-", i), "fp")
		entries[i] = store.Entry{Key: keys[i], Value: "v", TTL: time.Minute}
	}
	set := store.Key("fault:", "members", "incident-0", "")
	errs := map[string]error{}
	_, errs["SetNX"] = s.SetNX(ctx, entries)
	errs["Set"] = s.Set(ctx, entries)
	_, _, errs["Get"] = s.Get(ctx, keys)
	errs["DeleteIfEqual"] = s.DeleteIfEqual(ctx, entries)
	errs["AddMembers"] = s.AddMembers(ctx, set, time.Minute, "a", "b")
	_, errs["RemoveMembers"] = s.RemoveMembers(ctx, set, "a")
	_, errs["Members"] = s.Members(ctx, set)
	errs["Ping"] = s.Ping(ctx)
	return errs
}

func waitUntilPing(t *testing.T, s store.Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Ping(t.Context())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("store still unavailable after restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

func TestRedisIsUnavailableWhileTheServerIsDownAndRecovers(t *testing.T) {
	srv := redistest.Start(t)
	s, reg := newRedis(t, fastConfig(srv.Addr()))
	// No deadline: a hang would fail the test by its timeout, so each
	// returning at all shows the configured timeouts bound it.
	ctx := context.Background()
	for op, err := range everyOperation(ctx, s) {
		if err != nil {
			t.Fatalf("%s before the kill: %v", op, err)
		}
	}

	srv.Kill()
	for op, err := range everyOperation(ctx, s) {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with the server down: err = %v; want it to wrap ErrUnavailable", op, err)
		}
	}
	if got := series(t, reg, "alertrouter_store_errors_total")["set_nx"]; got < 1 {
		t.Errorf(`alertrouter_store_errors_total{operation="set_nx"} = %v; want the failure counted`, got)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitUntilPing(t, s)
	for op, err := range everyOperation(ctx, s) {
		if err != nil {
			t.Errorf("%s after the restart: %v", op, err)
		}
	}
}

func TestRedisThatNeverAnswersTimesOutAsUnavailable(t *testing.T) {
	// A listener that accepts connections and never replies.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	s, _ := newRedis(t, fastConfig(l.Addr().String()))
	_, err = s.SetNX(context.Background(), []store.Entry{{Key: "k", Value: "v", TTL: time.Minute}})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("SetNX on a silent server: err = %v; want it to wrap ErrUnavailable", err)
	}
}

func TestRedisClusterIsUnavailableWhileANodeIsDown(t *testing.T) {
	cluster := redistest.StartCluster(t)
	s, _ := newRedis(t, fastConfig(cluster.Addrs()...))
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	cluster.Nodes()[1].Kill()
	// Keys of many incidents cover every node, the dead one included.
	for op, err := range everyOperation(ctx, s) {
		if op == "AddMembers" || op == "RemoveMembers" || op == "Members" {
			continue // one incident's set: may live on a live node
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s with a master down: err = %v; want it to wrap ErrUnavailable", op, err)
		}
	}
}

// series returns the values of the metric family name by operation label:
// counter values, or histogram sample counts.
func series(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "operation" {
					continue
				}
				if m.GetHistogram() != nil {
					out[l.GetValue()] = float64(m.GetHistogram().GetSampleCount())
				} else {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

func TestRedisMetricsExistAtZeroForEveryOperation(t *testing.T) {
	_, reg := newRedis(t, redisConfig("127.0.0.1:1"))
	ops := []string{"add_members", "claim_join", "delete_if_equal", "dial", "expire_if_equal", "get", "incident_states", "incidents", "members", "new_conn", "ping", "remove_members", "renew_incidents", "set", "set_nx", "stalled", "write"}
	for _, name := range []string{"alertrouter_store_errors_total", "alertrouter_store_operation_duration_seconds"} {
		got := series(t, reg, name)
		if name == "alertrouter_store_operation_duration_seconds" {
			// A dial is counted when it fails, and a stall when Redis
			// times out, never timed: no duration series that would stay
			// at 0 for ever.
			ops = slices.DeleteFunc(slices.Clone(ops), func(op string) bool { return op == "dial" || op == "stalled" })
		}
		for _, op := range ops {
			if v, ok := got[op]; !ok || v != 0 {
				t.Errorf("%s{operation=%q} = %v (present %v); want 0", name, op, v, ok)
			}
		}
		if len(got) != len(ops) {
			t.Errorf("%s has operations %v; want exactly %v", name, got, ops)
		}
	}
}

func TestRedisAuthenticatesWithThePassword(t *testing.T) {
	const password = "s3cret-from-file"
	srv := redistest.Start(t, "--requirepass", password)
	file := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(file, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		modify func(*store.RedisConfig)
		ok     bool
	}{
		{"password_file is read, trailing newline dropped", func(c *store.RedisConfig) { c.PasswordFile = file }, true},
		{"inline password is used", func(c *store.RedisConfig) { c.Password = password }, true},
		{"no password is refused", func(*store.RedisConfig) {}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := redisConfig(srv.Addr())
			tc.modify(&cfg)
			s, _ := newRedis(t, cfg)
			if err := s.Ping(t.Context()); (err == nil) != tc.ok {
				t.Errorf("Ping = %v; want success %v", err, tc.ok)
			}
		})
	}
}

func TestNewRedisFailsOnAnUnreadablePasswordFile(t *testing.T) {
	cfg := redisConfig("127.0.0.1:6379")
	cfg.PasswordFile = filepath.Join(t.TempDir(), "missing")
	if _, err := store.NewRedis(cfg, nil, nil); err == nil || !strings.Contains(err.Error(), "password_file") {
		t.Errorf("NewRedis = %v; want an error naming password_file", err)
	}
}

func BenchmarkSetNX100(b *testing.B) {
	entries := make([]store.Entry, 100)
	for i := range entries {
		entries[i] = store.Entry{
			Key:   store.Key("bench:", "claim", fmt.Sprintf("incident-%03d", i), "fp"),
			Value: "replica-a",
			TTL:   time.Minute,
		}
	}
	run := func(b *testing.B, s store.Store) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.SetNX(ctx, entries); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, store.NewMemory()) })
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b)
		s, _ := newRedis(b, redisConfig(srv.Addr()))
		run(b, s)
	})
}

// A Redis that refuses writes — full (maxmemory with noeviction), or a
// read-only replica — failed commands a dashboard could not tell from a
// Redis down (an audit): alertrouter_store_refusals_total counts Redis'
// error replies by their code, beside alertrouter_store_errors_total.
func TestRedisRefusalsAreCountedByReason(t *testing.T) {
	srv := redistest.Start(t)
	s, reg := newRedis(t, redisConfig(srv.Addr()))
	ctx := t.Context()
	if err := s.Set(ctx, []store.Entry{{Key: "r:k", Value: "v", TTL: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	refusals := func() map[string]float64 {
		out := map[string]float64{}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "alertrouter_store_refusals_total" {
				for _, m := range mf.GetMetric() {
					out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
		return out
	}
	if r := refusals(); len(r) == 0 || r["oom"] != 0 || r["readonly"] != 0 {
		t.Fatalf("refusals at start: %v; want every reason at 0", r)
	}
	for _, c := range [][]string{{"CONFIG", "SET", "maxmemory", "1"}, {"CONFIG", "SET", "maxmemory-policy", "noeviction"}} {
		if _, err := redistest.Do(srv.Addr(), c...); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Set(ctx, []store.Entry{{Key: "r:k", Value: "v2", TTL: time.Minute}}); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("Set on a full Redis: %v, want its OOM refusal", err)
	}
	if _, _, err := s.Get(ctx, []string{"r:k"}); err != nil {
		t.Fatalf("Get on a full Redis: %v, want it read", err)
	}
	if r := refusals(); r["oom"] != 1 || r["readonly"] != 0 || r["other"] != 0 {
		t.Fatalf("refusals after one write to a full Redis: %v; want oom 1", r)
	}
	if errs := series(t, reg, "alertrouter_store_errors_total"); errs["set"] != 1 {
		t.Fatalf("store errors %v; want the set counted too", errs)
	}
}

// A member an earlier build's script joined has no a: stamp (rolling
// upgrade): its last Join's time (m:) stands in, so a Resolve click counts
// an alert such a replica joined as it was clicked (a review: counted as
// seen, it was folded into the resolve).
func TestIncidentJoinsFallsBackToTheLastJoinOfAnEarlierBuild(t *testing.T) {
	srv := redistest.Start(t)
	s, _ := newRedis(t, redisConfig(srv.Addr()))
	inc := store.IncidentKey("t:", "i1", "pagerduty/0")
	before := time.Now().Add(-time.Second)
	if _, err := s.Incidents(t.Context(), []store.IncidentOp{{Key: inc, Step: store.StepJoin, Token: "t0", Lease: time.Minute, TTL: time.Minute,
		Members: []store.Member{{Fingerprint: "old", StartsAt: "1000"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := redistest.Do(srv.Addr(), "HDEL", inc, "a:old"); err != nil { // as the earlier build wrote it
		t.Fatal(err)
	}
	joins, err := s.IncidentJoins(t.Context(), []string{inc})
	if err != nil || joins[0]["old"].Before(before) || joins[0]["old"].After(time.Now().Add(time.Second)) {
		t.Fatalf("IncidentJoins = %v, %v; want old's last Join time", joins, err)
	}
}
