package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// incidentScript applies IncidentSteps atomically, one after the other:
// for step i, KEYS[2i-1] is the state hash (fields s: state, t: lease
// token, u: lease end in ms, r: ref) and KEYS[2i] the members hash
// (fingerprint → startsAt); ARGV holds, for each step, the count of its
// arguments then the arguments: step, token, lease ms, ttl ms, ref, then
// fingerprint/startsAt pairs, read and written with one HMGET/HSET/HDEL per
// thousand members (a member twice in one step counts as if added one at a
// time). It answers one reply per step, {outcome, ref, remaining, added
// fingerprint/startsAt pairs…}. The time is the server's (TIME), so
// replicas with skewed clocks agree on leases. On a single node the steps
// of a batch go in one call (a call's fixed cost in Redis is that of several
// small steps); on a Cluster each call carries one step, whose two keys
// share a hash slot.
var incidentScript = redis.NewScript(`
local now
local function clock() -- the server's time in ms, read only when a lease needs it
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end
-- Members are read and written in bulk (HMGET, HSET, HDEL of many fields),
-- CHUNK arguments (1000 members) per call: Lua's unpack is bounded.
local CHUNK = 2000
-- apply runs one step on keys k1, k2 with its arguments ARGV[o+1..last].
local function apply(k1, k2, o, last)
  local step, tok, lease, ttl, ref = ARGV[o+1], ARGV[o+2], tonumber(ARGV[o+3]), tonumber(ARGV[o+4]), ARGV[o+5]
  local h = redis.call('HMGET', k1, 's', 't', 'u', 'r')
  local s, owner, untilms, r = h[1] or '', h[2] or '', tonumber(h[3] or '0') or 0, h[4] or ''
  if (s == 'opening' or s == 'resolving') and untilms <= clock() then s = '' end
  local leased = (s == 'opening' or s == 'resolving')
  local mine = leased and owner == tok
  local function fingerprints(c, stop)
    local fps = {}
    for i = c, stop, 2 do fps[#fps + 1] = ARGV[i] end
    return fps
  end
  local function hdel()
    for c = o + 6, last, CHUNK do redis.call('HDEL', k2, unpack(fingerprints(c, math.min(c + CHUNK - 1, last)))) end
  end
  local function touch()
    if ttl > 0 then
      redis.call('PEXPIRE', k1, ttl)
      redis.call('PEXPIRE', k2, ttl)
    end
  end
  if step == 'join' then
    if leased and not mine then return {'busy', r, 0} end
    local out = {'', r, 0}
    local stale = false
    local seen = {}
    for c = o + 6, last, CHUNK do
      local stop = math.min(c + CHUNK - 1, last)
      local fps = fingerprints(c, stop)
      local olds = redis.call('HMGET', k2, unpack(fps))
      for j = 1, #fps do
        local fp, sa = fps[j], ARGV[c + 2 * j - 1]
        local old = seen[fp]
        if old == nil then old = olds[j] end
        if not old then
          out[#out + 1] = fp
          out[#out + 1] = sa
        elseif old ~= sa then
          stale = true
        end
        seen[fp] = sa
      end
      redis.call('HSET', k2, unpack(ARGV, c, stop))
    end
    if s == 'open' and not stale then
      out[1] = 'open'
    else
      redis.call('HSET', k1, 's', 'opening', 't', tok, 'u', clock() + lease)
      out[1] = 'opening'
    end
    touch()
    return out
  elseif step == 'leave' then
    if leased and not mine then return {'busy', r, 0} end
    hdel()
    local n = redis.call('HLEN', k2)
    if n > 0 then touch() return {'still_open', r, n} end
    redis.call('HSET', k1, 's', 'resolving', 't', tok, 'u', clock() + lease)
    touch()
    return {'closing', r, 0}
  elseif step == 'opened' then
    if s ~= 'opening' or not mine then return {'lost', r, 0} end
    redis.call('HSET', k1, 's', 'open', 't', '', 'u', 0)
    if ref ~= '' then redis.call('HSET', k1, 'r', ref) r = ref end
    touch()
    return {'ok', r, 0}
  elseif step == 'resolved' then
    if s ~= 'resolving' or not mine then return {'lost', r, 0} end
    redis.call('DEL', k1, k2)
    return {'ok', '', 0}
  elseif step == 'abort' then
    if not mine then return {'lost', r, 0} end
    if s == 'opening' then
      hdel()
      redis.call('HDEL', k1, 's', 't', 'u')
    else
      for c = o + 6, last, CHUNK do redis.call('HSET', k2, unpack(ARGV, c, math.min(c + CHUNK - 1, last))) end
      redis.call('HSET', k1, 's', 'open', 't', '', 'u', 0)
    end
    touch()
    return {'ok', r, 0}
  elseif step == 'ref' then
    if s ~= '' and ref ~= '' then redis.call('HSET', k1, 'r', ref) r = ref end
    return {'ok', r, 0}
  elseif step == 'unjoin' then
    hdel()
    return {'ok', r, 0}
  end
  return nil
end
local replies = {}
local o = 0
for i = 1, #KEYS, 2 do
  local n = tonumber(ARGV[o + 1])
  local reply = apply(KEYS[i], KEYS[i + 1], o + 1, o + 1 + n)
  if not reply then return redis.error_reply('unknown incident step ' .. tostring(ARGV[o + 2])) end
  replies[#replies + 1] = reply
  o = o + 1 + n
end
return replies
`)

// incidentBatch bounds the steps of one incident script call on a single
// node, so one call never holds Redis long.
const incidentBatch = 64

// Incidents runs the incident script on every op in one pipeline
// (runScripts): on a single node or through Sentinel, incidentBatch ops per
// call; on a Cluster one call per op (an incident's two keys share its hash
// tag, another incident's need not).
func (r *Redis) Incidents(ctx context.Context, ops []IncidentOp) ([]IncidentResult, error) {
	if len(ops) == 0 {
		return []IncidentResult{}, nil
	}
	start := time.Now()
	calls := r.incidentCalls(ops)
	if err := r.scriptsErr(ctx, calls); err != nil {
		return nil, r.observe(opIncidents, start, err)
	}
	out := make([]IncidentResult, 0, len(ops))
	for _, c := range calls {
		replies, ok := c.cmd.Val().([]any)
		if !ok || len(replies) != len(c.keys)/2 {
			return nil, r.observe(opIncidents, start, errors.New("unexpected incident script reply"))
		}
		for _, v := range replies {
			res, err := parseIncidentReply(v)
			if err != nil {
				return nil, r.observe(opIncidents, start, err)
			}
			out = append(out, res)
		}
	}
	return out, r.observe(opIncidents, start, nil)
}

// incidentCalls are the incident script calls that apply ops in order:
// incidentBatch ops per call on a single node or through Sentinel, one per
// call on a Cluster.
func (r *Redis) incidentCalls(ops []IncidentOp) []*scripted {
	per := incidentBatch
	if r.cluster() {
		per = 1
	}
	calls := make([]*scripted, 0, (len(ops)+per-1)/per)
	for c := 0; c < len(ops); c += per {
		batch := ops[c:min(c+per, len(ops))]
		keys := make([]string, 0, 2*len(batch))
		var args []any
		for _, op := range batch {
			keys = append(keys, op.Key, membersKey(op.Key))
			args = appendIncidentArgs(args, op)
		}
		calls = append(calls, &scripted{script: incidentScript, keys: keys, args: args})
	}
	return calls
}

// appendIncidentArgs appends op's arguments to the incident script's ARGV:
// their count, then step, token, lease ms, ttl ms, ref and the members'
// fingerprint/startsAt pairs.
func appendIncidentArgs(a []any, op IncidentOp) []any {
	a = append(a, 5+2*len(op.Members), string(op.Step), op.Token, op.Lease.Milliseconds(), op.TTL.Milliseconds(), op.Ref)
	for _, m := range op.Members {
		a = append(a, m.Fingerprint, m.StartsAt)
	}
	return a
}

func parseIncidentReply(v any) (IncidentResult, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) < 3 {
		return IncidentResult{}, errors.New("unexpected incident script reply")
	}
	var res IncidentResult
	res.Outcome, _ = arr[0].(string)
	res.Ref, _ = arr[1].(string)
	switch n := arr[2].(type) {
	case int64:
		res.Remaining = n
	case string:
		res.Remaining, _ = strconv.ParseInt(n, 10, 64)
	}
	for i := 3; i+1 < len(arr); i += 2 {
		fp, _ := arr[i].(string)
		sa, _ := arr[i+1].(string)
		res.Added = append(res.Added, Member{Fingerprint: fp, StartsAt: sa})
	}
	return res, nil
}
