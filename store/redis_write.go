package store

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// addMembers adds ARGV[2..] to the set KEYS[1] and sets its TTL to ARGV[1]
// ms when positive, atomically (a set never lives without its TTL). SADD
// takes the members in chunks: Lua's unpack is bounded.
var addMembers = redis.NewScript(`
local n = #ARGV
for i = 2, n, 1000 do
  redis.call('SADD', KEYS[1], unpack(ARGV, i, math.min(i + 999, n)))
end
local ttl = tonumber(ARGV[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`)

// scripted is one script call of a Write, kept to resend it with EVAL when
// its node did not have the script (NOSCRIPT).
type scripted struct {
	script *redis.Script
	keys   []string
	args   []any
	part   *error
	cmd    *redis.Cmd
}

// Write sends every part of w in one pipeline (one round trip per cluster
// node); script calls whose node lacks the script are sent again with EVAL
// in a second one. Each part's error is its commands' first error.
func (r *Redis) Write(ctx context.Context, w Writes) WriteErrors {
	var e WriteErrors
	if w.Empty() {
		return e
	}
	start := time.Now()
	var sets []*redis.StatusCmd
	var rems []*redis.IntCmd
	var calls []*scripted
	call := func(s *redis.Script, part *error, keys []string, args ...any) {
		calls = append(calls, &scripted{script: s, keys: keys, args: args, part: part})
	}
	for _, en := range w.Release {
		call(deleteIfEqual, &e.Release, []string{en.Key}, en.Value)
	}
	for _, op := range w.Incidents {
		call(incidentScript, &e.Incidents, []string{op.Key, membersKey(op.Key)}, incidentArgs(op)...)
	}
	for _, m := range w.Add {
		if len(m.Members) == 0 {
			continue
		}
		args := make([]any, 0, 1+len(m.Members))
		args = append(args, max(m.TTL, 0).Milliseconds())
		for _, mb := range m.Members {
			args = append(args, mb)
		}
		call(addMembers, &e.Add, []string{m.Key}, args...)
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, en := range w.Set {
			// go-redis reads a TTL of -1 as KEEPTTL: never pass a negative one.
			sets = append(sets, p.Set(ctx, en.Key, en.Value, max(en.TTL, 0)))
		}
		for _, m := range w.Remove {
			if len(m.Members) > 0 {
				args := make([]any, len(m.Members))
				for i, mb := range m.Members {
					args[i] = mb
				}
				rems = append(rems, p.SRem(ctx, m.Key, args...))
			}
		}
		for _, c := range calls {
			c.cmd = c.script.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	if err != nil && unavailable(err) {
		err = r.observe(opWrite, start, err)
		return WriteErrors{Set: err, Release: err, Incidents: err, Add: err, Remove: err}
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
	var retry []*scripted
	for _, c := range calls {
		if err := c.cmd.Err(); redis.HasErrorPrefix(err, "NOSCRIPT") {
			retry = append(retry, c)
		} else {
			first(c.part, err)
		}
	}
	if len(retry) > 0 {
		_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range retry {
				c.cmd = c.script.Eval(ctx, p, c.keys, c.args...)
			}
			return nil
		})
		for _, c := range retry {
			if cerr := c.cmd.Err(); cerr != nil {
				first(c.part, cerr)
			} else if err != nil && unavailable(err) {
				first(c.part, err)
			}
		}
	}
	_ = r.observe(opWrite, start, e.Err())
	for _, part := range []*error{&e.Set, &e.Release, &e.Incidents, &e.Add, &e.Remove} {
		if *part != nil {
			*part = wrapErr(opWrite, *part)
		}
	}
	return e
}
