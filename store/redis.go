package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	commoncfg "github.com/prometheus/common/config"
	"github.com/redis/go-redis/v9"

	"github.com/alertrouter/alertrouter/internal/logthrottle"
)

// deleteIfEqual deletes KEYS[1] only if it holds ARGV[1], atomically, so a
// replica releases only its own claim.
var deleteIfEqual = redis.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`)

// expireIfEqual sets the TTL of KEYS[1] to ARGV[2] milliseconds only if it
// holds ARGV[1], atomically.
var expireIfEqual = redis.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`)

// Redis is a Store on Redis: single node, Sentinel or Cluster through
// go-redis' UniversalClient. Every batch method sends its commands in one
// pipeline, which the cluster client splits into one round trip per node.
// It is safe for concurrent use.
type Redis struct {
	client  redis.UniversalClient
	metrics *metrics
	logger  *slog.Logger
	// opts are the client's options, for the probe's fresh connection
	// (freshPing).
	opts *redis.UniversalOptions
	// tls is whether the client speaks TLS to Redis, for the hints of
	// wrapErr.
	tls bool
	// dial is go-redis' own dialer of the options (TCP and the TLS
	// handshake), uncounted: countDials wraps it, greeting uses it.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

var _ Store = (*Redis)(nil)

// NewRedis returns a Redis store for cfg, registering its metrics on reg
// (nil: not registered). It reads password_file and builds the TLS config,
// but does not connect: a Redis that is down at start makes operations fail
// with ErrUnavailable until it is back, so call Ping to check.
func NewRedis(cfg RedisConfig, reg prometheus.Registerer, logger *slog.Logger) (*Redis, error) {
	if logger != nil {
		// go-redis' own log lines (pool and dial trouble) go through the
		// router's logger, so --log.format=json stays JSON. The logger is
		// process-wide in go-redis: the last client built sets it.
		redis.SetLogger(redisLogger{logger.With("component", "go-redis")})
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("redis store config: %w", err)
	}
	password := string(cfg.Password)
	if cfg.PasswordFile != "" {
		b, err := os.ReadFile(cfg.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("read redis password_file: %w", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
	}
	opts := &redis.UniversalOptions{
		Addrs:            cfg.Addrs,
		MasterName:       cfg.MasterName,
		Username:         cfg.Username,
		Password:         password,
		SentinelUsername: cfg.Username,
		SentinelPassword: password,
		DB:               cfg.DB,
		IsClusterMode:    cfg.Cluster,
		DialTimeout:      time.Duration(cfg.DialTimeout),
		ReadTimeout:      time.Duration(cfg.ReadTimeout),
		WriteTimeout:     time.Duration(cfg.WriteTimeout),
		PoolSize:         cfg.PoolSize,
		MaxRetries:       cfg.MaxRetries,
		// One redial per attempt: a refused connection is not worth more
		// while a webhook waits.
		DialerRetries:      2,
		DialerRetryTimeout: 50 * time.Millisecond,
		// Honour the caller's deadline (the webhook's), not only ours.
		ContextTimeoutEnabled: true,
	}
	if cfg.TLS != nil {
		tc, err := commoncfg.NewTLSConfig(cfg.TLS)
		if err != nil {
			return nil, fmt.Errorf("redis tls config: %w", err)
		}
		opts.TLSConfig = tc
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Debug: a reload waiting for new store files builds a client on every
	// retry (serve logs the store it starts with).
	logger.Debug("redis store client built", "mode", cfg.Mode(), "addrs", strings.Join(cfg.Addrs, ","), "tls", cfg.TLS != nil)
	dial := redis.NewDialer(&redis.Options{DialTimeout: opts.DialTimeout, TLSConfig: opts.TLSConfig})
	opts.Dialer = countDials(dial, m)
	var client redis.UniversalClient
	trip := stallTrip(opts.ReadTimeout, opts.MaxRetries)
	if opts.MasterName == "" && (len(opts.Addrs) > 1 || opts.IsClusterMode) {
		// A Cluster (as redis.NewUniversalClient picks it): a stall breaker
		// per node, so that one stalled node fails at once the commands of
		// its own slots only.
		co := opts.Cluster()
		co.NewClient = func(o *redis.Options) *redis.Client {
			c := redis.NewClient(o)
			addStallBreaker(c, logger.With("node", o.Addr), trip, m.errors[opStalled].Inc)
			return c
		}
		c := redis.NewClusterClient(co)
		c.AddHook(clusterReload{c})
		client = c
	} else {
		client = redis.NewUniversalClient(opts)
		addStallBreaker(client, logger, trip, m.errors[opStalled].Inc)
	}
	return &Redis{client: client, metrics: m, logger: logger, opts: opts, tls: opts.TLSConfig != nil, dial: dial}, nil
}

// countDials returns dial (go-redis' own dialer of the options: TCP, and
// the TLS handshake when TLS is set) counting each failed attempt as
// alertrouter_store_errors_total{operation="dial"} and marking its error
// as a dial's (dialError), for the hints of wrapErr. Set as the Dialer of
// the options, it dials for every node of a cluster and for the sentinels
// too, where a DialHook of the client would not.
func countDials(dial func(ctx context.Context, network, addr string) (net.Conn, error), m *metrics) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			m.errors[opDial].Inc()
			return nil, &dialError{addr: addr, err: err}
		}
		return c, nil
	}
}

// dialError is a failed dial of addr: TCP connect, and with TLS its
// handshake.
type dialError struct {
	addr string
	err  error
}

func (e *dialError) Error() string { return "dial " + e.addr + ": " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// clusterReload has a cluster client load the cluster's layout again as
// soon as a command finds a node it cannot reach or that cannot serve
// (unavailable's list, refusals of the connection included: a reload then
// changes nothing, and go-redis spaces them). go-redis reloads it on
// MOVED, ASK and READONLY answers and otherwise once a minute: after a
// master died and its replica was promoted, every command for the dead
// master's slots kept dialling its address (connection refused: the store
// read as down, so fail open and duplicate notifications) for up to a
// minute while the cluster was healthy again. The reloads are coalesced
// by go-redis (one at a time, 200 ms apart at most while failures go on).
type clusterReload struct{ c *redis.ClusterClient }

func (h clusterReload) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h clusterReload) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil && unreachable(err) {
			h.c.ReloadState(ctx)
		}
		return err
	}
}

func (h clusterReload) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err != nil && slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Err() != nil && unreachable(c.Err()) }) {
			h.c.ReloadState(ctx)
		}
		return err
	}
}

// unreachable reports whether err says a node could not be reached or
// cannot serve for now — not the caller's own deadline, which says nothing
// of the layout.
func unreachable(err error) bool {
	return unavailable(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
}

// observe records an operation's duration and, on failure, counts it and
// wraps err with what was being done, and with ErrUnavailable
// when Redis could not be reached.
func (r *Redis) observe(op string, start time.Time, err error) error {
	r.metrics.duration[op].Observe(time.Since(start).Seconds())
	if err == nil {
		return nil
	}
	r.metrics.countError(op, err)
	return r.wrapErr(op, err)
}

// wrapErr names op in err and marks an unreachable Redis with
// ErrUnavailable, adding tlsHint's hint.
func (r *Redis) wrapErr(op string, err error) error {
	if !r.cluster() && clusterAnswer(err) {
		return fmt.Errorf("redis %s: %w: %w (Redis answers as a Cluster node: set store.redis.cluster: true)", op, ErrMisconfigured, err)
	}
	if unavailable(err) {
		return fmt.Errorf("redis %s: %w: %w%s", op, ErrUnavailable, err, tlsHint(err, r.tls))
	}
	return fmt.Errorf("redis %s: %w", op, err)
}

// tlsHint is what to say of err when it looks like TLS on one side only
// (withTLS: whether the client speaks TLS): a plain client's first command
// to a port that takes TLS only is answered by the connection closed (EOF);
// a TLS handshake with a port that speaks plain TCP gets no answer until
// the dial timeout. "" otherwise.
func tlsHint(err error, withTLS bool) string {
	var de *dialError
	switch {
	case !withTLS && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		return " (Redis closed the connection: if its port takes TLS only — tls-port — set store.redis.tls)"
	case withTLS && errors.As(err, &de) && timedOut(err):
		return fmt.Sprintf(" (no TLS handshake with %s within store.redis.dial_timeout: if that port speaks plain TCP, turn store.redis.tls off or point addrs at Redis' tls-port)", de.addr)
	}
	return ""
}

// timedOut reports whether err is a deadline or a network timeout.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// clusterAnswer reports whether err is an answer only a Redis Cluster node
// gives (a key of another node's slot, keys of several slots in one
// command, the cluster down).
func clusterAnswer(err error) bool {
	for _, prefix := range []string{"MOVED", "ASK", "CROSSSLOT", "CLUSTERDOWN"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}

// unavailable reports whether err means Redis could not be reached or could
// not serve, as opposed to a command error.
func unavailable(err error) bool {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr),
		errors.Is(err, errStalled),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, redis.ErrPoolTimeout),
		errors.Is(err, redis.ErrPoolExhausted),
		errors.Is(err, redis.ErrClosed),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	// Server states in which it cannot serve for now, and refusals of the
	// connection itself: a password Redis no longer takes (rotated on one
	// side first), a user without the commands' permissions, a db out of
	// range. No command of the router's can run then: that is an outage
	// (fail open or closed), not an answer — read as one, a claim that never
	// ran looked lost to another replica, and nothing was sent.
	for _, prefix := range []string{"LOADING", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "READONLY", "WRONGPASS", "NOAUTH", "NOPERM"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	// go-redis' sentinel and cluster clients report unreachable nodes as
	// plain errors; older Redis words a refused password and a bad db so.
	msg := err.Error()
	return strings.Contains(msg, "all sentinels are unreachable") ||
		strings.Contains(msg, "cluster has no nodes") ||
		strings.Contains(msg, "invalid password") ||
		strings.Contains(msg, "DB index is out of range")
}

// pipelineFailed reports whether err, a pipeline's, means its commands did
// not all run: Redis unavailable, or an error none of the commands carries
// (the connection could not be set up: go-redis then leaves every command
// without a reply or an error). A command's own error (NOSCRIPT, a
// wrong type) is its reply, read by the caller.
func pipelineFailed(err error, cmds []redis.Cmder) bool {
	if err == nil {
		return false
	}
	return unavailable(err) || !slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Err() != nil })
}

// SetNX sends SET key value NX PX ttl for every entry in one pipeline; a ttl
// that is not positive sets the key without expiry.
func (r *Redis) SetNX(ctx context.Context, entries []Entry) ([]bool, error) {
	won, err, _ := r.SetNXAndSet(ctx, entries, nil)
	return won, err
}

// SetNXAndSet implements ClaimWriter: SET NX PX of every claim and SET PX
// of every entry of also, in one pipeline.
func (r *Redis) SetNXAndSet(ctx context.Context, claims, also []Entry) (won []bool, err, alsoErr error) {
	if len(claims) == 0 && len(also) == 0 {
		return []bool{}, nil, nil
	}
	start := time.Now()
	cmds := make([]*redis.StatusCmd, len(claims))
	var sets []*redis.StatusCmd
	ran, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		sets = queueClaims(ctx, p, claims, also, cmds)
		return nil
	})
	if pipelineFailed(err, ran) {
		err = r.observe(opSetNX, start, err)
		return nil, err, err
	}
	alsoErr = r.setsErr(sets)
	won, err = claimReplies(cmds, claims)
	if err != nil {
		return nil, r.observe(opSetNX, start, err), alsoErr
	}
	if len(claims) == 0 {
		return won, nil, alsoErr
	}
	return won, r.observe(opSetNX, start, nil), alsoErr
}

// setsErr is the first error of the SETs of a pipeline, counted and
// wrapped as Set's.
func (r *Redis) setsErr(sets []*redis.StatusCmd) error {
	for _, c := range sets {
		if err := c.Err(); err != nil {
			r.metrics.countError(opSet, err)
			return r.wrapErr(opSet, err)
		}
	}
	return nil
}

// claimReplies reads the replies of a pipeline's SET NX GET commands (see
// queueClaims): each claim won, or the first error. A claim is won when
// the key was absent (nil reply) or already held this claim's own value:
// go-redis sent the command again after its first reply was lost (a
// timeout, a connection reset) and the first one had set it. Exec reports
// the first command's error, redis.Nil included, so every command is
// looked at.
func claimReplies(cmds []*redis.StatusCmd, claims []Entry) ([]bool, error) {
	won := make([]bool, len(cmds))
	for i, c := range cmds {
		switch err := c.Err(); {
		case errors.Is(err, redis.Nil):
			won[i] = true
		case err == nil:
			won[i] = c.Val() == claims[i].Value
		default:
			return nil, err
		}
	}
	return won, nil
}

// queueClaims queues SET NX GET PX of every claim into cmds and SET PX of
// every entry of also, and returns the latter's commands. GET (Redis 7.0
// allows it with NX) returns what a lost claim found, so a claim sent
// twice by go-redis's retry is still known as this caller's.
func queueClaims(ctx context.Context, p redis.Pipeliner, claims, also []Entry, cmds []*redis.StatusCmd) []*redis.StatusCmd {
	for i, e := range claims {
		cmds[i] = p.SetArgs(ctx, e.Key, e.Value, redis.SetArgs{Mode: "NX", Get: true, TTL: e.TTL})
	}
	sets := make([]*redis.StatusCmd, 0, len(also))
	for _, e := range also {
		sets = append(sets, setEntry(ctx, p, e))
	}
	return sets
}

// setEntry queues SET key value PX ttl, or without expiry for a ttl that is
// not positive: go-redis reads a TTL of -1 as KEEPTTL, so it never gets a
// negative one.
func setEntry(ctx context.Context, p redis.Pipeliner, e Entry) *redis.StatusCmd {
	return p.Set(ctx, e.Key, e.Value, max(e.TTL, 0))
}

// Set sends SET key value PX ttl for every entry in one pipeline; a ttl that
// is not positive sets the key without expiry.
func (r *Redis) Set(ctx context.Context, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	start := time.Now()
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range entries {
			setEntry(ctx, p, e)
		}
		return nil
	})
	return r.observe(opSet, start, err)
}

// getChunk is how many keys one MGET reads.
const getChunk = 1000

// Get reads every key in one pipeline: one MGET per getChunk keys on a
// single node or through Sentinel (one command to parse and answer instead
// of one per key, for Redis and for go-redis alike), one GET per key on a
// Cluster, where a multi-key command must stay within one hash slot and
// every alert's keys have their own.
func (r *Redis) Get(ctx context.Context, keys []string) ([]string, []bool, error) {
	if len(keys) == 0 {
		return []string{}, []bool{}, nil
	}
	start := time.Now()
	values := make([]string, len(keys))
	found := make([]bool, len(keys))
	var err error
	if r.cluster() {
		err = r.getEach(ctx, keys, values, found)
	} else {
		err = r.mget(ctx, keys, values, found)
	}
	if err != nil {
		return nil, nil, r.observe(opGet, start, err)
	}
	return values, found, r.observe(opGet, start, nil)
}

// mget reads keys with MGET, getChunk at a time, into values and found. A
// key that holds another type than a string reads as missing (MGET's
// answer), where GET would fail: the router writes only strings there.
func (r *Redis) mget(ctx context.Context, keys []string, values []string, found []bool) error {
	cmds := make([]*redis.SliceCmd, 0, (len(keys)+getChunk-1)/getChunk)
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for c := 0; c < len(keys); c += getChunk {
			cmds = append(cmds, p.MGet(ctx, keys[c:min(c+getChunk, len(keys))]...))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for n, c := range cmds {
		vals, off := c.Val(), n*getChunk
		if want := min(getChunk, len(keys)-off); len(vals) != want {
			return fmt.Errorf("MGET answered %d values for %d keys", len(vals), want)
		}
		for j, v := range vals {
			if s, ok := v.(string); ok {
				values[off+j], found[off+j] = s, true
			}
		}
	}
	return nil
}

// cluster reports whether r talks to a Redis Cluster, where a multi-key
// command or script must keep to one hash slot.
func (r *Redis) cluster() bool {
	_, ok := r.client.(*redis.ClusterClient)
	return ok
}

// getEach reads keys with one GET each into values and found.
func (r *Redis) getEach(ctx context.Context, keys []string, values []string, found []bool) error {
	cmds := make([]*redis.StringCmd, len(keys))
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Get(ctx, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	for i, c := range cmds {
		switch err := c.Err(); {
		case err == nil:
			values[i], found[i] = c.Val(), true
		case errors.Is(err, redis.Nil):
		default:
			return err
		}
	}
	return nil
}

// DeleteIfEqual runs the compare-and-delete script for every entry in one
// pipeline (runScripts: EVALSHA, then EVAL for a node that lacks it).
func (r *Redis) DeleteIfEqual(ctx context.Context, entries []Entry) error {
	return r.ifEqual(ctx, opDeleteIfEqual, deleteIfEqual, entries, func(e Entry) []any { return []any{e.Value} })
}

// ExpireIfEqual runs the compare-and-expire script for every entry in one
// pipeline (runScripts).
func (r *Redis) ExpireIfEqual(ctx context.Context, entries []Entry) error {
	return r.ifEqual(ctx, opExpireIfEqual, expireIfEqual, entries, func(e Entry) []any { return []any{e.Value, e.TTL.Milliseconds()} })
}

// ifEqual runs script, a compare-and-something of one key, for every entry
// in one pipeline, with the arguments args gives, observed as op.
func (r *Redis) ifEqual(ctx context.Context, op string, script *redis.Script, entries []Entry, args func(Entry) []any) error {
	if len(entries) == 0 {
		return nil
	}
	start := time.Now()
	calls := make([]*scripted, len(entries))
	for i, e := range entries {
		calls[i] = &scripted{script: script, keys: []string{e.Key}, args: args(e)}
	}
	return r.observe(op, start, r.scriptsErr(ctx, calls))
}

// scriptsErr runs calls (runScripts) and returns the first failure: Redis
// unreachable, or a call's error.
func (r *Redis) scriptsErr(ctx context.Context, calls []*scripted) error {
	if err := r.runScripts(ctx, calls, nil); err != nil {
		return err
	}
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}

// AddMembers adds members and sets the TTL in one script (addMembers), so
// the set never lives without its TTL. A ttl that is not positive leaves the
// TTL as it was; with no members it does nothing.
func (r *Redis) AddMembers(ctx context.Context, key string, ttl time.Duration, members ...string) error {
	if len(members) == 0 {
		return nil
	}
	start := time.Now()
	return r.observe(opAddMembers, start, r.scriptsErr(ctx, r.addMembersCalls([]Members{{Key: key, TTL: ttl, Members: members}})))
}

// RemoveMembers sends SREM and SCARD in one MULTI/EXEC, so the count is the
// one right after this removal.
func (r *Redis) RemoveMembers(ctx context.Context, key string, members ...string) (int64, error) {
	start := time.Now()
	var card *redis.IntCmd
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if len(members) > 0 {
			p.SRem(ctx, key, anys(members)...)
		}
		card = p.SCard(ctx, key)
		return nil
	})
	if err != nil {
		return 0, r.observe(opRemoveMembers, start, err)
	}
	return card.Val(), r.observe(opRemoveMembers, start, nil)
}

// Members sends SMEMBERS.
func (r *Redis) Members(ctx context.Context, key string) ([]string, error) {
	start := time.Now()
	members, err := r.client.SMembers(ctx, key).Result()
	if err != nil {
		return nil, r.observe(opMembers, start, err)
	}
	return members, r.observe(opMembers, start, nil)
}

// Ping sends PING on the client's connections (pooled ones when it has
// some); on a cluster, to every master, so a node that is down is
// noticed. It decides readiness and AlertrouterStoreDown: whether the
// router's commands can run. A Redis that refuses only new connections is
// PingNewConnection's to tell.
func (r *Redis) Ping(ctx context.Context) error {
	start := time.Now()
	return r.observe(opPing, start, pingAll(ctx, r.client))
}

// Answers sends PING through the pooled connections, counted nowhere: a
// reload asks whether a client it built for new store files connects
// (those pings are not the probe's, whose errors say the store is down).
func (r *Redis) Answers(ctx context.Context) error {
	if err := pingAll(ctx, r.client); err != nil {
		return r.wrapErr(opPing, err)
	}
	return nil
}

// pingAll sends PING through c: to every master of a cluster.
func pingAll(ctx context.Context, c redis.UniversalClient) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return n.Ping(ctx).Err()
		})
	}
	return c.Ping(ctx).Err()
}

// PingNewConnection pings Redis on fresh connections (freshPing): the
// client's pooled connections were set up before, and a Redis that now
// refuses new ones — a server certificate expired or renewed without the
// CA the router trusts, a password changed on one side, maxclients
// reached — still answers them while every webhook needing a new
// connection fails. Its failures are counted as
// alertrouter_store_errors_total{operation="new_conn"}
// (AlertrouterStoreRefusesNewConnections), apart from the ping's: the
// pooled connections still serve, so readiness does not follow it. The
// error carries Redis' own reply when it sent one before closing the
// connection (maxclients: go-redis reports the closed connection, a
// broken pipe, instead).
func (r *Redis) PingNewConnection(ctx context.Context) error {
	start := time.Now()
	var mu sync.Mutex
	var addrs []string
	err := r.freshPing(ctx, func(addr string) {
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(addrs, addr) {
			addrs = append(addrs, addr)
		}
	})
	if err != nil && closedConn(err) {
		for _, a := range addrs {
			if reply := r.greeting(ctx, a); reply != "" {
				// Redis' reply says it all; go-redis' closed
				// connection would bring a misleading TLS hint.
				err = fmt.Errorf("%s answers a new connection %q and closes it (go-redis: %v)", a, reply, err)
				break
			}
		}
	}
	return r.observe(opNewConn, start, err)
}

// freshPing dials Redis anew with the client's options — TCP, the TLS
// handshake, AUTH/HELLO, SELECT — and sends PING, through a one-shot
// client of one connection per node closed at once: for a cluster every
// master (and the seed asked for the layout), for Sentinel a sentinel and
// the master it names. Without retries: the probe runs again soon. dialed
// is called with each address a connection was set up to (TCP and TLS).
func (r *Redis) freshPing(ctx context.Context, dialed func(addr string)) error {
	o := *r.opts
	o.PoolSize = 1
	o.MaxRetries = -1
	dial := o.Dialer
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			dialed(addr)
		}
		return c, err
	}
	c := redis.NewUniversalClient(&o)
	defer c.Close()
	return pingAll(ctx, c)
}

// closedConn reports whether err is a connection the other side closed
// (EOF, reset, broken pipe): what go-redis reports of a Redis that wrote
// an error and closed at once.
func closedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// greetingWait bounds how long greeting waits for Redis to speak first.
const greetingWait = 500 * time.Millisecond

// greeting connects to addr as the client does and returns the error
// Redis writes on its own before closing a connection it refuses ("ERR
// max number of clients reached"); "" when it writes nothing within
// greetingWait (it waits for a command: the normal case) or cannot be
// reached.
func (r *Redis) greeting(ctx context.Context, addr string) string {
	if ctx.Err() != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, greetingWait)
	defer cancel()
	c, err := r.dial(ctx, "tcp", addr)
	if err != nil {
		return ""
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	if c.SetReadDeadline(dl) != nil {
		return ""
	}
	line, _ := bufio.NewReader(io.LimitReader(c, 512)).ReadString('\n')
	if !strings.HasPrefix(line, "-") {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "-"))
}

// probeScript is what every webhook's claims need of Redis, on one key: a
// script that writes with a time to live, reads the server's clock and
// deletes.
var probeScript = redis.NewScript(`redis.call('SET', KEYS[1], ARGV[1], 'PX', 60000)
redis.call('TIME')
return redis.call('DEL', KEYS[1])`)

// ProbeWrite runs probeScript on key. PING passes on a Redis that refuses
// the router's commands — a read-only replica named by mistake, an ACL
// user without scripting, TIME or the key prefix, a renamed EVALSHA —
// while every webhook fails on them; the readiness probe runs this after
// PING so such a store reads as down (AlertrouterStoreDown; unready with
// fail_closed). Its failures count as the ping operation's errors, and
// it is not a ping of its own: the probe's PING is the operation counted,
// so that AlertrouterStoreDown (every ping failed) fires when PING passes
// and the write is refused.
//
// Configured as a single node (or through Sentinel), it also reads two
// keys of different Cluster slots in one MGET, which a Cluster node
// refuses (CROSSSLOT, or MOVED): the probe's own key may be the node's,
// while most webhooks' keys are other nodes' — an audit saw the router
// ready, and 68 of 100 pages sent twice. (A review: asking INFO missed it
// for an ACL user without +info.) The keys are the probe's with a hash tag
// each, under the key prefix an ACL user's key pattern names (a prefix
// holds no braces: config refuses them).
func (r *Redis) ProbeWrite(ctx context.Context, key string) error {
	err := probeScript.Run(ctx, r.client, []string{key}, "probe").Err()
	if err == nil && !r.cluster() {
		err = r.client.MGet(ctx, key+"{a}", key+"{b}").Err()
	}
	if err == nil {
		return nil
	}
	r.metrics.countError(opPing, err)
	return r.wrapErr("write probe", err)
}

// Close closes the connections; later calls fail with
// ErrUnavailable.
func (r *Redis) Close() error {
	if err := r.client.Close(); err != nil {
		return fmt.Errorf("close redis client: %w", err)
	}
	return nil
}

// redisLogger adapts slog to go-redis' logging interface.
type redisLogger struct{ l *slog.Logger }

// redisLogs throttles go-redis' lines: while Redis is down every command
// of every webhook logs the same failed dial (about 30 lines per webhook).
var redisLogs logthrottle.Throttle

// Printf logs one go-redis line as a warning (go-redis only logs
// trouble), the same line at most once per logthrottle.DefaultEvery.
func (r redisLogger) Printf(ctx context.Context, format string, v ...interface{}) {
	msg := fmt.Sprintf(format, v...)
	redisLogs.Log(ctx, r.l, slog.LevelWarn, msg, msg)
}
