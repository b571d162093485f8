package store

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// addMembers adds members to sets and sets their TTLs, atomically (a set
// never lives without its TTL); used by AddMembers and Write. For each set
// KEYS[i], ARGV holds its TTL in ms (not positive: left as it was), the
// count of its members, then the members. SADD takes the members in
// chunks: Lua's unpack is bounded.
var addMembers = redis.NewScript(`
local o = 0
for k = 1, #KEYS do
  local ttl, n = tonumber(ARGV[o + 1]), tonumber(ARGV[o + 2])
  local first, last = o + 3, o + 2 + n
  for i = first, last, 1000 do
    redis.call('SADD', KEYS[k], unpack(ARGV, i, math.min(i + 999, last)))
  end
  if ttl > 0 then redis.call('PEXPIRE', KEYS[k], ttl) end
  o = last
end
return 1
`)

// scripted is one script call, kept to resend it with EVAL when its node
// did not have the script (NOSCRIPT). part, in a Write, is the part whose
// error it sets; ops, in an incident call, the op each reply answers.
type scripted struct {
	script *redis.Script
	keys   []string
	args   []any
	part   *error
	ops    []int
	cmd    *redis.Cmd
}

// runScripts sends every call with EVALSHA in one pipeline, after the
// commands more adds to it (nil: none), then sends again with EVAL, in a
// second pipeline, the calls whose node lacked the script (NOSCRIPT, e.g.
// after a restart; EVAL caches it). Each call's cmd then holds its reply or
// its error; the error returned is a failure to reach Redis, if any. A
// resent call runs after the calls behind it did (another connection may
// load the script while this pipeline arrives), so callers keep what must
// run in order inside one call (claimedCalls).
func (r *Redis) runScripts(ctx context.Context, calls []*scripted, more func(redis.Pipeliner)) error {
	return r.runScriptsThen(ctx, calls, more, nil)
}

// runScriptsThen is runScripts with the commands then adds (nil: none)
// after the calls: in the first pipeline, and again after the calls sent
// again, so what they read follows every call's step.
func (r *Redis) runScriptsThen(ctx context.Context, calls []*scripted, more, then func(redis.Pipeliner)) error {
	ran, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		if more != nil {
			more(p)
		}
		for _, c := range calls {
			c.cmd = c.script.EvalSha(ctx, p, c.keys, c.args...)
		}
		if then != nil {
			then(p)
		}
		return nil
	})
	if pipelineFailed(err, ran) {
		return err
	}
	var retry []*scripted
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, c)
		}
	}
	if len(retry) == 0 {
		return nil
	}
	ran, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range retry {
			c.cmd = c.script.Eval(ctx, p, c.keys, c.args...)
		}
		if then != nil {
			then(p)
		}
		return nil
	})
	if pipelineFailed(err, ran) {
		return err
	}
	return nil
}

// addMembersCalls are the addMembers script calls that add sets' members
// (sets without members are skipped): one call for them all on a single
// node or through Sentinel, one per set on a Cluster, where each set may
// hash to its own slot.
func (r *Redis) addMembersCalls(sets []Members) []*scripted {
	var calls []*scripted
	var c *scripted
	for _, m := range sets {
		if len(m.Members) == 0 {
			continue
		}
		if c == nil || r.cluster() {
			c = &scripted{script: addMembers}
			calls = append(calls, c)
		}
		c.keys = append(c.keys, m.Key)
		c.args = append(c.args, max(m.TTL, 0).Milliseconds(), len(m.Members))
		for _, mb := range m.Members {
			c.args = append(c.args, mb)
		}
	}
	return calls
}

// Write sends every part of w in one pipeline (one round trip per cluster
// node; runScripts). Each part's error is its commands' first error.
func (r *Redis) Write(ctx context.Context, w Writes) WriteErrors {
	var e WriteErrors
	if w.Empty() {
		return e
	}
	start := time.Now()
	var sets []*redis.StatusCmd
	var rems []*redis.IntCmd
	var calls []*scripted
	for _, en := range w.Release {
		calls = append(calls, &scripted{script: deleteIfEqual, keys: []string{en.Key}, args: []any{en.Value}, part: &e.Release})
	}
	for _, c := range r.incidentCalls(w.Incidents) {
		c.part = &e.Incidents
		calls = append(calls, c)
	}
	adds := r.addMembersCalls(w.Add)
	for _, c := range adds {
		c.part = &e.Add
		calls = append(calls, c)
	}
	err := r.runScripts(ctx, calls, func(p redis.Pipeliner) {
		for _, en := range w.Set {
			sets = append(sets, setEntry(ctx, p, en))
		}
		for _, m := range w.Remove {
			if len(m.Members) > 0 {
				rems = append(rems, p.SRem(ctx, m.Key, anys(m.Members)...))
			}
		}
	})
	if err != nil {
		err = r.observe(opWrite, start, err)
		// Only the parts that had something to write failed (WriteErrors):
		// an empty part failed with the rest was logged as a failed settle
		// ("confirm notified transitions items=0"), counted, and queued as
		// a deferred write that applied nothing (an audit).
		failed := func(wrote bool) error {
			if !wrote {
				return nil
			}
			return err
		}
		return WriteErrors{Set: failed(len(w.Set) > 0), Release: failed(len(w.Release) > 0), Incidents: failed(len(w.Incidents) > 0),
			Add: failed(len(adds) > 0), Remove: failed(slices.ContainsFunc(w.Remove, func(m Members) bool { return len(m.Members) > 0 }))}
	}
	first := func(part *error, err error) {
		if err != nil && *part == nil {
			*part = err
		}
	}
	for _, c := range sets {
		first(&e.Set, c.Err())
	}
	for _, c := range rems {
		first(&e.Remove, c.Err())
	}
	for _, c := range calls {
		first(c.part, c.cmd.Err())
	}
	_ = r.observe(opWrite, start, e.Err())
	for _, part := range []*error{&e.Set, &e.Release, &e.Incidents, &e.Add, &e.Remove} {
		if *part != nil {
			*part = r.wrapErr(opWrite, *part)
		}
	}
	return e
}

// anys converts strings to go-redis arguments.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
