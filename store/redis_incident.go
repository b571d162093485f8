package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// incidentScript applies one IncidentStep atomically. KEYS[1] is the state
// hash (fields s: state, t: lease token, u: lease end in ms, r: ref),
// KEYS[2] the members hash (fingerprint → startsAt). ARGV: step, token,
// lease ms, ttl ms, ref, then fingerprint/startsAt pairs, read and written
// with one HMGET/HSET/HDEL per thousand members (a member twice in one
// step counts as if added one at a time). It answers
// {outcome, ref, remaining, added fingerprint/startsAt pairs…}. The time is
// the server's (TIME), so replicas with skewed clocks agree on leases.
var incidentScript = redis.NewScript(`
local step, tok, lease, ttl, ref = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local now
local function clock() -- the server's time in ms, read only when a lease needs it
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now
end
local h = redis.call('HMGET', KEYS[1], 's', 't', 'u', 'r')
local s, owner, untilms, r = h[1] or '', h[2] or '', tonumber(h[3] or '0') or 0, h[4] or ''
if (s == 'opening' or s == 'resolving') and untilms <= clock() then s = '' end
local leased = (s == 'opening' or s == 'resolving')
local mine = leased and owner == tok
-- Members are read and written in bulk (HMGET, HSET, HDEL of many fields),
-- CHUNK arguments (1000 members) per call: Lua's unpack is bounded.
local CHUNK = 2000
local function fingerprints(c, last)
  local fps = {}
  for i = c, last, 2 do fps[#fps + 1] = ARGV[i] end
  return fps
end
local function hdel()
  for c = 6, #ARGV, CHUNK do redis.call('HDEL', KEYS[2], unpack(fingerprints(c, math.min(c + CHUNK - 1, #ARGV)))) end
end
local function touch()
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
end
if step == 'join' then
  if leased and not mine then return {'busy', r, 0} end
  local out = {'', r, 0}
  local stale = false
  local seen = {}
  for c = 6, #ARGV, CHUNK do
    local last = math.min(c + CHUNK - 1, #ARGV)
    local fps = fingerprints(c, last)
    local olds = redis.call('HMGET', KEYS[2], unpack(fps))
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
    redis.call('HSET', KEYS[2], unpack(ARGV, c, last))
  end
  if s == 'open' and not stale then
    out[1] = 'open'
  else
    redis.call('HSET', KEYS[1], 's', 'opening', 't', tok, 'u', clock() + lease)
    out[1] = 'opening'
  end
  touch()
  return out
elseif step == 'leave' then
  if leased and not mine then return {'busy', r, 0} end
  hdel()
  local n = redis.call('HLEN', KEYS[2])
  if n > 0 then touch() return {'still_open', r, n} end
  redis.call('HSET', KEYS[1], 's', 'resolving', 't', tok, 'u', clock() + lease)
  touch()
  return {'closing', r, 0}
elseif step == 'opened' then
  if s ~= 'opening' or not mine then return {'lost', r, 0} end
  redis.call('HSET', KEYS[1], 's', 'open', 't', '', 'u', 0)
  if ref ~= '' then redis.call('HSET', KEYS[1], 'r', ref) r = ref end
  touch()
  return {'ok', r, 0}
elseif step == 'resolved' then
  if s ~= 'resolving' or not mine then return {'lost', r, 0} end
  redis.call('DEL', KEYS[1], KEYS[2])
  return {'ok', '', 0}
elseif step == 'abort' then
  if not mine then return {'lost', r, 0} end
  if s == 'opening' then
    hdel()
    redis.call('HDEL', KEYS[1], 's', 't', 'u')
  else
    for c = 6, #ARGV, CHUNK do redis.call('HSET', KEYS[2], unpack(ARGV, c, math.min(c + CHUNK - 1, #ARGV))) end
    redis.call('HSET', KEYS[1], 's', 'open', 't', '', 'u', 0)
  end
  touch()
  return {'ok', r, 0}
elseif step == 'ref' then
  if s ~= '' and ref ~= '' then redis.call('HSET', KEYS[1], 'r', ref) r = ref end
  return {'ok', r, 0}
elseif step == 'unjoin' then
  hdel()
  return {'ok', r, 0}
end
return redis.error_reply('unknown incident step ' .. step)
`)

// Incidents runs the incident script for every op in one pipeline
// (runScripts; per cluster node: an incident's two keys share its hash
// tag).
func (r *Redis) Incidents(ctx context.Context, ops []IncidentOp) ([]IncidentResult, error) {
	if len(ops) == 0 {
		return []IncidentResult{}, nil
	}
	start := time.Now()
	calls := make([]*scripted, len(ops))
	for i, op := range ops {
		calls[i] = &scripted{script: incidentScript, keys: []string{op.Key, membersKey(op.Key)}, args: incidentArgs(op)}
	}
	if err := r.scriptsErr(ctx, calls); err != nil {
		return nil, r.observe(opIncidents, start, err)
	}
	out := make([]IncidentResult, len(ops))
	for i, c := range calls {
		res, err := parseIncidentReply(c.cmd.Val())
		if err != nil {
			return nil, r.observe(opIncidents, start, err)
		}
		out[i] = res
	}
	return out, r.observe(opIncidents, start, nil)
}

// incidentArgs are the incident script's ARGV for op.
func incidentArgs(op IncidentOp) []any {
	a := make([]any, 0, 5+2*len(op.Members))
	a = append(a, string(op.Step), op.Token, op.Lease.Milliseconds(), op.TTL.Milliseconds(), op.Ref)
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
