package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// incidentScript applies IncidentSteps atomically, one after the other:
// for each step, the next keys are the state hash (fields s: state, t:
// lease token, u: lease end in ms, r: ref, g: last trigger in ms;
// p: a retrigger a Join took and that is not settled yet,
// "token;end;taken;previous" — a Join of another token asking for a
// retrigger before its end answers busy, and past its end (its sender
// gone) finds the take void, as if given back; the sender's Triggered
// (sent) or Untrigger (given back) deletes it;
// x: the server's time in ms when a Join last set both keys' time to
// live — a Join of an open incident within min(ttl/100, 60 s) of it sets
// none, unless the members hash is new: every step that removes members
// deletes x, and a Join that finds none of its members there sets both
// when the hash holds only the members it added (emptied by a build
// without x);
// j: the server's time of the last Join, as the build before kept it;
// k:<group>: a time no member of that Alertmanager group joined before;
// m:<fingerprint>: "joined;start;group" of each member a Join of this
// build wrote — the server's time in ms of its last Join, the start it
// wrote, and the group it came in;
// a:<fingerprint>: the server's time in µs a Join added the member, or
// found it fired anew (another start): when it last became one, which
// IncidentJoins reads — a Join repeating a member does not move it),
// the members hash (fingerprint → startsAt, as every build keeps it) and
// the step's claim keys, if any;
// ARGV holds, for each step, the count of its arguments then the arguments:
// the count of its claim keys, step, token, lease ms, ttl ms, ref, aux (a
// Join's retrigger interval in ms; an Untrigger's previous trigger, its
// taken one in ref), then fingerprint/startsAt pairs, read and written with
// one HMGET/HSET/HDEL per thousand members (a member twice in one step
// counts as if added one at a time); a Leave's and an Unjoin's pairs are
// fingerprint/endsAt instead. A member's start only moves forward
// (laterStart): a Join with an earlier start than the member's keeps the
// later one and reopens nothing, and a Leave or Unjoin keeps a member that
// started after the leaving alert ended (store.Member). A step with claim
// keys (ClaimJoin: one per member) keeps only the members whose claim holds
// its token, and answers {skipped} without a change when none is left. It
// answers one reply per step, {outcome, ref, remaining}, a Join's followed
// by the trigger it took and the one it replaced (IncidentOp.Retrigger;
// empty when none) and the added fingerprint/startsAt pairs…, a Leave's by
// the members left it names as restored (IncidentOp.Group; comma-separated,
// empty when none), an empty string and the removed members with the
// starts they held, each followed by ";" and its m: field when known (put
// back as they were by an Abort, whose pairs carry the same). A Join's, Leave's
// and Unjoin's ref argument is its group (IncidentOp.Group, empty when
// unknown). The time is the server's (TIME), so replicas with skewed
// clocks agree on leases, on when an incident was last triggered and on
// when a member joined. On a single node the steps
// of a batch go in one call (a call's fixed cost in Redis is that of several
// small steps); on a Cluster each call carries one step, whose two keys
// share a hash slot, and no claim keys.
var incidentScript = redis.NewScript(`
local now, nowus
local function clock() -- the server's time in ms, read only when a lease needs it
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    nowus = string.format('%d', tonumber(t[1]) * 1000000 + tonumber(t[2]))
  end
  return now
end
-- addedstr is the server's time in µs, as written in the a: fields.
local function addedstr()
  clock()
  return nowus
end
-- Members are read and written in bulk (HMGET, HSET, HDEL of many fields),
-- CHUNK arguments (1000 members) per call: Lua's unpack is bounded.
local CHUNK = 2000
-- later is laterStart (store/incident.go): whether start a is after start
-- b, in ms since the epoch; a start at or before the epoch, or no number,
-- orders nothing.
local function later(a, b)
  local x, y = tonumber(a), tonumber(b)
  return x ~= nil and y ~= nil and x > 0 and y > 0 and x > y
end
local stamp -- the server's time in ms, as written in the m: fields
local function nowstr()
  if not stamp then stamp = string.format('%d', clock()) end
  return stamp
end
-- fingerprints are the fingerprints of the pairs A[c..stop].
local function fingerprints(A, c, stop)
  local fps = {}
  for i = c, stop, 2 do fps[#fps + 1] = A[i] end
  return fps
end
-- mfields are the state hash's m: fields of fps.
local function mfields(fps)
  local f = {}
  for j = 1, #fps do f[j] = 'm:' .. fps[j] end
  return f
end
-- dropfields are the fields of k1 that go with members fps: x, and their
-- m: (mf) and a: fields.
local function dropfields(fps, mf)
  local f = {'x'}
  for j = 1, #fps do
    f[#f + 1] = mf[j]
    f[#f + 1] = 'a:' .. fps[j]
  end
  return f
end
-- hdel removes the members of the pairs A[o+7..last] from k2 and their
-- m: and a: fields from k1.
local function hdel(k1, k2, A, o, last)
  for c = o + 7, last, CHUNK do
    local fps = fingerprints(A, c, math.min(c + CHUNK - 1, last))
    redis.call('HDEL', k2, unpack(fps))
    redis.call('HDEL', k1, unpack(dropfields(fps, mfields(fps))))
  end
end
-- leave removes each member of the pairs A[o+7..last] unless it started
-- after the pair's endsAt, appending the removed ones to out (nil: not
-- kept) with the starts they held and ";" and their m: field when known.
local function leave(k1, k2, A, o, last, out)
  for c = o + 7, last, CHUNK do
    local fps = fingerprints(A, c, math.min(c + CHUNK - 1, last))
    local olds = redis.call('HMGET', k2, unpack(fps))
    local gone, starts = {}, {}
    for j = 1, #fps do
      if olds[j] and not later(olds[j], A[c + 2 * j - 1]) then
        gone[#gone + 1] = fps[j]
        starts[#starts + 1] = olds[j]
      end
    end
    if #gone > 0 then
      local mf = mfields(gone)
      if out then
        local joins = redis.call('HMGET', k1, unpack(mf))
        for j = 1, #gone do
          out[#out + 1] = gone[j]
          out[#out + 1] = joins[j] and (starts[j] .. ';' .. joins[j]) or starts[j]
        end
      end
      redis.call('HDEL', k2, unpack(gone))
      redis.call('HDEL', k1, unpack(dropfields(gone, mf)))
    end
  end
end
local function touch(k1, k2, ttl)
  if ttl > 0 then
    redis.call('PEXPIRE', k1, ttl)
    redis.call('PEXPIRE', k2, ttl)
  end
end
-- runBegan returns when Redis' current run began, in ms (TIME less
-- INFO's uptime); false when INFO is refused (an ACL user without
-- +info) or says nothing of it.
local function runBegan()
  local info = redis.pcall('INFO', 'server')
  if type(info) ~= 'string' then return false end
  local up = tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
  if not up then return false end
  return clock() - up * 1000
end
-- restored names the members left by a whole-group Leave (see
-- IncidentOp.Group) that came in its group and whose last Join ran
-- before Redis' current run began: comma-separated, '' when none. It
-- reads the incident's m: fields only while the group's k: field says
-- one of its members may have joined before the run, and raises it
-- when none did.
local function restored(k1, k2, grp, gf, since)
  if grp == '' or not since then return '' end -- no Join of the group recorded it
  local began = runBegan()
  if not began then return '' end
  began = began - 2000 -- uptime is in whole seconds
  if since >= began then return '' end
  local all = redis.call('HGETALL', k1)
  local cand, starts = {}, {}
  for i = 1, #all, 2 do
    local f, v = all[i], all[i + 1]
    if string.sub(f, 1, 2) == 'm:' then
      local a = string.find(v, ';', 1, true)
      local b = a and string.find(v, ';', a + 1, true)
      if b and string.sub(v, b + 1) == grp and (tonumber(string.sub(v, 1, a - 1)) or 0) < began then
        cand[#cand + 1] = string.sub(f, 3)
        starts[#starts + 1] = string.sub(v, a + 1, b - 1)
      end
    end
  end
  local names = {}
  for c = 1, #cand, CHUNK do
    local part = {unpack(cand, c, math.min(c + CHUNK - 1, #cand))}
    local held = redis.call('HMGET', k2, unpack(part))
    for j = 1, #part do
      -- a member still, with the start its m: field wrote (an earlier
      -- build's Join or Leave leaves the field as it was)
      if held[j] and held[j] == starts[c + j - 1] then names[#names + 1] = part[j] end
    end
  end
  if #names == 0 then redis.call('HSET', k1, gf, nowstr()) end -- past any reading of began this run
  return table.concat(names, ',')
end
-- apply runs one step on keys k1, k2 with its arguments A[o+1..last]
-- (A is ARGV, or the step's arguments with only the members it keeps).
local function apply(k1, k2, A, o, last)
  local step, tok, lease, ttl, ref, aux = A[o+1], A[o+2], tonumber(A[o+3]), tonumber(A[o+4]), A[o+5], A[o+6]
  -- A Join's, Leave's or Unjoin's ref is its group (IncidentOp.Group).
  local grp = ''
  if step == 'join' or step == 'leave' or step == 'unjoin' then grp = ref end
  local gf = 'k:' .. grp -- the group's field in the state hash
  local h = redis.call('HMGET', k1, 's', 't', 'u', 'r', 'g', gf, 'x', 'p')
  local s, owner, untilms, r, g = h[1] or '', h[2] or '', tonumber(h[3] or '0') or 0, h[4] or '', h[5] or ''
  -- p: the unsettled retrigger's token, end, taken and previous times
  local ptok, puntil, ptaken, pprev = string.match(h[8] or '', '^([^;]*);([^;]*);([^;]*);(.*)$')
  puntil = tonumber(puntil or '0') or 0
  local since = tonumber(h[6] or '')
  local touched = tonumber(h[7] or '')
  if (s == 'opening' or s == 'resolving') and untilms <= clock() then s = '' end
  local leased = (s == 'opening' or s == 'resolving')
  local mine = leased and owner == tok
  if step == 'join' then
    if leased and not mine then return {'busy', r, 0} end
    local rt = tonumber(aux) or 0
    -- Another sender's retrigger in flight: whether this Join's new
    -- alerts reach PagerDuty depends on it (delivered: they join it;
    -- given back: they take it) — wait, as for a lease.
    -- A take is void past its end, and when its end lies more than twice
    -- its lease ahead: the clock stepped back since it was taken.
    local pvoid = ptok and (puntil <= clock() or puntil - clock() > 2 * (puntil - (tonumber(ptaken) or 0)))
    if rt > 0 and s == 'open' and ptok and ptok ~= tok and not pvoid then return {'busy', r, 0} end
    if grp ~= '' and not since then redis.call('HSET', k1, gf, nowstr()) end
    local out = {'', r, 0, '', ''}
    local stale = false
    -- seen holds what this step wrote of a member named twice in it: a
    -- table when it has more than 8 members, else a scan of vals (the
    -- step has one chunk then).
    local seen
    if last - o - 6 > 16 then seen = {} end
    local known = false -- a member of this step was in the members hash before it
    local keep = ttl > 0 and s == 'open' and touched ~= nil and clock() >= touched and clock() - touched < math.min(math.floor(ttl / 100), 60000)
    for c = o + 7, last, CHUNK do
      local stop = math.min(c + CHUNK - 1, last)
      local fps = fingerprints(A, c, stop)
      local olds = redis.call('HMGET', k2, unpack(fps))
      local vals, joins = {}, {}
      for j = 1, #fps do
        local fp, sa = fps[j], A[c + 2 * j - 1]
        local old
        if seen then
          old = seen[fp]
        else
          for i = #vals - 1, 1, -2 do
            if vals[i] == fp then old = vals[i + 1] break end
          end
        end
        if old == nil then -- not written earlier in this step: as it was before it
          old = olds[j]
          if old then known = true end
        end
        if not old then
          out[#out + 1] = fp
          out[#out + 1] = sa
          joins[#joins + 1] = 'a:' .. fp -- added now (IncidentJoins)
          joins[#joins + 1] = addedstr()
        elseif later(old, sa) then
          -- a late report of an earlier instance: the live one stays
          sa = old
        elseif old ~= sa then
          stale = true
          joins[#joins + 1] = 'a:' .. fp -- fired anew: added now
          joins[#joins + 1] = addedstr()
        end
        if seen then seen[fp] = sa end
        vals[#vals + 1] = fp
        vals[#vals + 1] = sa
        joins[#joins + 1] = 'm:' .. fp
        joins[#joins + 1] = nowstr() .. ';' .. sa .. ';' .. grp
      end
      redis.call('HSET', k2, unpack(vals))
      joins[#joins + 1] = 'j' -- the build before reads when a Join last ran
      joins[#joins + 1] = nowstr()
      if ttl > 0 and not keep then
        joins[#joins + 1] = 'x'
        joins[#joins + 1] = nowstr()
      end
      redis.call('HSET', k1, unpack(joins))
    end
    if keep and not known then
      -- No member of this step was there before: the members hash may be
      -- new (emptied by a build that does not delete x), and then holds
      -- just the members this step added.
      if redis.call('HLEN', k2) == (#out - 5) / 2 then keep = false end
    end
    if s == 'open' and not stale then
      out[1] = 'open'
      -- A retrigger taken and never settled, past its end: void, as if
      -- given back (its sender died before it sent or wrote back).
      local was = g
      if ptok and g == ptaken and pvoid then was = pprev end
      -- due is dueTrigger (store/incident.go).
      local prev = tonumber(was)
      if rt > 0 and (prev == nil or clock() - prev >= rt or prev > clock()) then
        local taken = string.format('%d', clock())
        redis.call('HSET', k1, 'g', taken, 'p', tok .. ';' .. string.format('%d', clock() + lease) .. ';' .. taken .. ';' .. was)
        out[4], out[5] = taken, was
      elseif was ~= g then
        if was == '' then redis.call('HDEL', k1, 'g', 'p') else redis.call('HSET', k1, 'g', was) redis.call('HDEL', k1, 'p') end
      end
    else
      redis.call('HSET', k1, 's', 'opening', 't', tok, 'u', clock() + lease)
      if rt > 0 then redis.call('HSET', k1, 'g', string.format('%d', clock())) end
      if ptok then redis.call('HDEL', k1, 'p') end -- the opening triggers
      out[1] = 'opening'
    end
    if not keep then touch(k1, k2, ttl) end
    return out
  elseif step == 'leave' then
    if leased and not mine then return {'busy', r, 0} end
    local out = {'still_open', r, 0, '', ''}
    leave(k1, k2, A, o, last, out)
    local n = redis.call('HLEN', k2)
    if n > 0 then
      -- This Leave's group holds no firing alert of the incident now: its
      -- members left that joined before Redis' current run began may be
      -- alerts that resolved while writes the run lost were made — or
      -- silenced ones. Named (IncidentResult.Restored), for the caller to
      -- ask Alertmanager.
      out[4] = restored(k1, k2, grp, gf, since)
      touch(k1, k2, ttl)
      out[3] = n
      return out
    end
    redis.call('HSET', k1, 's', 'resolving', 't', tok, 'u', clock() + lease)
    touch(k1, k2, ttl)
    out[1] = 'closing'
    return out
  elseif step == 'opened' then
    if s ~= 'opening' or not mine then return {'lost', r, 0} end
    redis.call('HSET', k1, 's', 'open', 't', '', 'u', 0)
    if ref ~= '' then redis.call('HSET', k1, 'r', ref) r = ref end
    touch(k1, k2, ttl)
    return {'ok', r, 0}
  elseif step == 'resolved' then
    if s ~= 'resolving' or not mine then return {'lost', r, 0} end
    redis.call('DEL', k1, k2)
    return {'ok', '', 0}
  elseif step == 'abort' then
    if not mine then return {'lost', r, 0} end
    if s == 'opening' then
      hdel(k1, k2, A, o, last)
      redis.call('HDEL', k1, 's', 't', 'u', 'x')
    else
      -- put back as they were: a pair's value is the start, and ";" and
      -- the m: field when the Leave knew it
      for c = o + 7, last, CHUNK do
        local vals, joins = {}, {}
        for i = c, math.min(c + CHUNK - 1, last), 2 do
          local fp, v = A[i], A[i + 1]
          local a = string.find(v, ';', 1, true)
          vals[#vals + 1] = fp
          if a then
            vals[#vals + 1] = string.sub(v, 1, a - 1)
            joins[#joins + 1] = 'm:' .. fp
            joins[#joins + 1] = string.sub(v, a + 1)
          else
            vals[#vals + 1] = v
          end
        end
        redis.call('HSET', k2, unpack(vals))
        if #joins > 0 then redis.call('HSET', k1, unpack(joins)) end
      end
      if redis.call('HLEN', k2) > 0 then
        redis.call('HSET', k1, 's', 'open', 't', '', 'u', 0)
      else
        -- no member left to put back (an unseen resolve's Leave): closed
        redis.call('HDEL', k1, 's', 't', 'u')
      end
    end
    touch(k1, k2, ttl)
    return {'ok', r, 0}
  elseif step == 'ref' then
    if s ~= '' and ref ~= '' then redis.call('HSET', k1, 'r', ref) r = ref end
    return {'ok', r, 0}
  elseif step == 'unjoin' then
    leave(k1, k2, A, o, last, nil)
    return {'ok', r, 0}
  elseif step == 'untrigger' then
    if ref ~= '' and g == ref then
      if aux == '' then redis.call('HDEL', k1, 'g') else redis.call('HSET', k1, 'g', aux) end
    end
    if ptok == tok then redis.call('HDEL', k1, 'p') end
    return {'ok', r, 0}
  elseif step == 'triggered' then
    if ptok == tok then redis.call('HDEL', k1, 'p') end
    return {'ok', r, 0}
  end
  return nil
end
-- claimed returns the arguments of the step at ARGV[o+1..last] (the
-- count of claim keys first) with only the members whose claim key, from
-- KEYS[k], holds the step's token, and their count.
local function claimed(k, m, o, last)
  local A = {}
  for j = 1, 6 do A[j] = ARGV[o + 1 + j] end
  local tok, kept = ARGV[o + 3], 0
  local held
  if m <= 1000 then
    held = redis.call('MGET', unpack(KEYS, k, k + m - 1))
  else -- a thousand keys per MGET: Lua's unpack is bounded
    held = {}
    for c = k, k + m - 1, 1000 do
      local part = redis.call('MGET', unpack(KEYS, c, math.min(c + 999, k + m - 1)))
      for j = 1, #part do held[#held + 1] = part[j] end
    end
  end
  for j = 1, m do
    if held[j] == tok then
      A[#A + 1] = ARGV[o + 6 + 2 * j]
      A[#A + 1] = ARGV[o + 7 + 2 * j]
      kept = kept + 1
    end
  end
  return A, kept
end
local replies = {}
local o, k = 0, 1
while k <= #KEYS do
  local n = tonumber(ARGV[o + 1])
  local last = o + 1 + n
  local m = tonumber(ARGV[o + 2])
  local reply
  if m > 0 then
    local A, kept = claimed(k + 2, m, o + 1, last)
    if kept == 0 then reply = {'skipped', '', 0} else reply = apply(KEYS[k], KEYS[k + 1], A, 0, #A) end
  else
    reply = apply(KEYS[k], KEYS[k + 1], ARGV, o + 2, last)
  end
  if not reply then return redis.error_reply('unknown incident step ' .. tostring(ARGV[o + 3])) end
  replies[#replies + 1] = reply
  o, k = last, k + 2 + m
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
	if err := r.runScripts(ctx, calls, nil); err != nil {
		return nil, r.observe(opIncidents, start, err)
	}
	out, err := incidentReplies(calls, len(ops))
	return out, r.observe(opIncidents, start, err)
}

// incidentStateScript reads the state of the incident at KEYS[1] (its
// state hash: s, u as incidentScript keeps them), an opening or resolving
// lease past its end (the server's time) reading as closed (empty).
var incidentStateScript = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 's', 'u')
local s, untilms = h[1] or '', tonumber(h[2] or '0') or 0
if s == 'opening' or s == 'resolving' then
  local t = redis.call('TIME')
  if untilms <= tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then s = '' end
end
return s
`)

// IncidentStates implements Store.IncidentStates: one read-only script
// call per incident, in one pipeline.
func (r *Redis) IncidentStates(ctx context.Context, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return []string{}, nil
	}
	start := time.Now()
	calls := make([]*scripted, len(keys))
	for i, k := range keys {
		calls[i] = &scripted{script: incidentStateScript, keys: []string{k}}
	}
	if err := r.runScripts(ctx, calls, nil); err != nil {
		return nil, r.observe(opIncidentState, start, err)
	}
	out := make([]string, len(keys))
	for i, c := range calls {
		v, err := c.cmd.Text()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, r.observe(opIncidentState, start, err)
		}
		out[i] = v
	}
	return out, r.observe(opIncidentState, start, nil)
}

// IncidentRef implements IncidentRefReader: the Ref kept with the incident
// at key (its state hash's r), "" when none.
func (r *Redis) IncidentRef(ctx context.Context, key string) (string, error) {
	start := time.Now()
	v, err := r.client.HGet(ctx, key, "r").Result()
	if errors.Is(err, redis.Nil) {
		return "", r.observe(opIncidentState, start, nil)
	}
	return v, r.observe(opIncidentState, start, err)
}

// timeScript reads TIME where KEYS[1] lives: on a Cluster, keyless TIME
// goes to any master, whose clock need not be the one that stamped the
// key's incident.
var timeScript = redis.NewScript(`return redis.call('TIME')`)

// TimeAt implements IncidentJoinsReader.
func (r *Redis) TimeAt(ctx context.Context, key string) (time.Time, error) {
	if !r.cluster() {
		return r.Time(ctx)
	}
	v, err := timeScript.Run(ctx, r.client, []string{key}).StringSlice()
	if err != nil || len(v) != 2 {
		return time.Time{}, fmt.Errorf("redis TIME at %s: %v %w", key, v, err)
	}
	sec, err1 := strconv.ParseInt(v[0], 10, 64)
	us, err2 := strconv.ParseInt(v[1], 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, fmt.Errorf("redis TIME at %s: %v", key, v)
	}
	return time.Unix(sec, us*1000), nil
}

// IncidentJoins implements IncidentJoinsReader: each incident's state
// hash (HGETALL, in one pipeline), whose a:<fingerprint> fields the
// incident script sets, on Redis' clock, when a Join adds the member or
// finds it fired anew.
func (r *Redis) IncidentJoins(ctx context.Context, keys []string) ([]map[string]time.Time, error) {
	start := time.Now()
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGetAll(ctx, k)
		}
		return nil
	})
	if err != nil {
		return nil, r.observe(opIncidentState, start, err)
	}
	out := make([]map[string]time.Time, len(keys))
	for i, c := range cmds {
		fields := c.Val()
		if len(fields) == 0 {
			continue
		}
		out[i] = map[string]time.Time{}
		for f, v := range fields {
			fp, ok := strings.CutPrefix(f, "a:")
			if !ok {
				continue
			}
			if us, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[i][fp] = time.UnixMicro(us)
			}
		}
		for f, v := range fields {
			// A member an earlier build joined has no a: field: its last
			// Join's time stands in (a rolling upgrade: counted as seen,
			// an alert such a replica joined was folded into a Resolve).
			fp, ok := strings.CutPrefix(f, "m:")
			if _, stamped := out[i][fp]; !ok || stamped {
				continue
			}
			joined, _, _ := strings.Cut(v, ";")
			if ms, err := strconv.ParseInt(joined, 10, 64); err == nil {
				out[i][fp] = time.UnixMilli(ms)
			}
		}
	}
	return out, r.observe(opIncidentState, start, nil)
}

// incidentCalls are the incident script calls that apply ops (claimedCalls).
func (r *Redis) incidentCalls(ops []IncidentOp) []*scripted {
	return r.claimedCalls(len(ops), func(i int) (IncidentOp, []string) { return ops[i], nil })
}

// claimedCalls are the incident script calls that apply n ops, op(i)
// giving the i-th and the claim keys of its members (nil: none). Every op of
// one incident travels in one call, in the order given, so the calls of one
// pipeline touch disjoint incidents: runScripts resends a call that met
// NOSCRIPT after the calls behind it ran (another connection may load the
// script in between, e.g. when replicas reach a restarted Redis at once),
// and that must change no step's outcome. Calls hold whole incidents, at
// least incidentBatch ops each (the last fewer) on a single node or through
// Sentinel, one incident each on a Cluster, where another incident's keys
// may hash elsewhere. Each call's ops lists the op its replies answer.
func (r *Redis) claimedCalls(n int, op func(i int) (IncidentOp, []string)) []*scripted {
	per := incidentBatch
	if r.cluster() {
		per = 1
	}
	var calls []*scripted
	var c *scripted
	add := func(i int) {
		if c == nil {
			c = &scripted{script: incidentScript, ops: make([]int, 0, min(n, per))}
			calls = append(calls, c)
		}
		o, claims := op(i)
		c.keys = append(c.keys, o.Key, membersKey(o.Key))
		c.keys = append(c.keys, claims...)
		c.args = appendIncidentArgs(c.args, o, len(claims))
		c.ops = append(c.ops, i)
	}
	if n <= per {
		// One call: nothing to keep apart.
		for i := range n {
			add(i)
		}
		return calls
	}
	for _, group := range incidentGroups(n, func(i int) string { o, _ := op(i); return o.Key }) {
		for _, i := range group {
			add(i)
		}
		if len(c.ops) >= per {
			c = nil
		}
	}
	return calls
}

// incidentGroups are the indexes 0..n-1 grouped by key(i), each group in
// order and the groups in the order of their first index.
func incidentGroups(n int, key func(i int) string) [][]int {
	var groups [][]int
	index := make(map[string]int, n)
	for i := range n {
		g, ok := index[key(i)]
		if !ok {
			g = len(groups)
			index[key(i)] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// appendIncidentArgs appends op's arguments to the incident script's ARGV:
// their count, then the count of its claim keys, step, token, lease ms, ttl
// ms, ref, aux (a Join's Retrigger in ms; an Untrigger's PrevTriggered, its
// Triggered in place of ref; a Join's, Leave's and Unjoin's Group in place
// of ref) and the members' fingerprint/startsAt pairs
// (fingerprint/endsAt for a Leave and an Unjoin).
func appendIncidentArgs(a []any, op IncidentOp, claims int) []any {
	ref, aux := op.Ref, any(op.Retrigger.Milliseconds())
	switch op.Step {
	case StepUntrigger:
		ref, aux = op.Triggered, op.PrevTriggered
	case StepTriggered:
		ref = op.Triggered
	case StepJoin, StepLeave, StepUnjoin:
		ref = op.Group
	}
	a = append(a, 7+2*len(op.Members), claims, string(op.Step), op.Token, op.Lease.Milliseconds(), op.TTL.Milliseconds(), ref, aux)
	for _, m := range op.Members {
		switch {
		case op.Step == StepLeave || op.Step == StepUnjoin:
			a = append(a, m.Fingerprint, m.EndsAt)
		case op.Step == StepAbort && m.held != "":
			a = append(a, m.Fingerprint, m.held) // put back as it was
		default:
			a = append(a, m.Fingerprint, m.StartsAt)
		}
	}
	return a
}

// incidentReplies parses the replies of calls into the results of the n
// ops, in the ops' order (each call's ops); a call's error is the error.
func incidentReplies(calls []*scripted, n int) ([]IncidentResult, error) {
	out := make([]IncidentResult, n)
	got := 0
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil {
			return nil, err
		}
		replies, ok := c.cmd.Val().([]any)
		if !ok || len(replies) != len(c.ops) {
			return nil, errors.New("unexpected incident script reply")
		}
		for j, v := range replies {
			res, err := parseIncidentReply(v)
			if err != nil {
				return nil, err
			}
			out[c.ops[j]] = res
		}
		got += len(replies)
	}
	if got != n {
		return nil, errors.New("unexpected incident script reply")
	}
	return out, nil
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
	if len(arr) < 5 {
		return res, nil
	}
	leave := res.Outcome == OutcomeClosing || res.Outcome == OutcomeStillOpen
	if leave {
		if restored, _ := arr[3].(string); restored != "" {
			res.Restored = strings.Split(restored, ",")
		}
	} else {
		res.Retriggered, _ = arr[3].(string)
		res.PrevTriggered, _ = arr[4].(string)
	}
	for i := 5; i+1 < len(arr); i += 2 {
		fp, _ := arr[i].(string)
		sa, _ := arr[i+1].(string)
		if leave {
			start, _, _ := strings.Cut(sa, ";")
			res.Removed = append(res.Removed, Member{Fingerprint: fp, StartsAt: start, held: sa})
		} else {
			res.Added = append(res.Added, Member{Fingerprint: fp, StartsAt: sa})
		}
	}
	return res, nil
}

// ClaimJoin implements ClaimJoiner: on a single node or through Sentinel,
// SET NX PX of every claim, SET PX of every entry of also and the incident
// script on ops, each step carrying its members' claim keys, in one
// pipeline; Redis runs the commands of one connection in order, so the
// script finds the claims this call took. On a Cluster, where a claim and an
// incident hash to different slots, it is Claim then Incidents (two round
// trips).
func (r *Redis) ClaimJoin(ctx context.Context, claims, also []Entry, ops []ClaimedOp) ClaimJoinResult {
	if r.cluster() {
		return claimThenJoin(ctx, r, claims, also, ops)
	}
	start := time.Now()
	calls := r.claimedCalls(len(ops), func(i int) (IncidentOp, []string) {
		keys := make([]string, len(ops[i].Claims))
		for j, c := range ops[i].Claims {
			keys[j] = claims[c].Key
		}
		return ops[i].Op, keys
	})
	cmds := make([]*redis.StatusCmd, len(claims))
	var sets []*redis.StatusCmd
	var res ClaimJoinResult
	var then func(redis.Pipeliner)
	var after *redis.SliceCmd
	keys := afterKeys(ops)
	if len(keys) > 0 {
		// One MGET behind the steps (few keys: a webhook's incidents' marks).
		then = func(p redis.Pipeliner) { after = p.MGet(ctx, keys...) }
	}
	if err := r.runScriptsThen(ctx, calls, func(p redis.Pipeliner) {
		sets = queueClaims(ctx, p, claims, also, cmds)
	}, then); err != nil {
		err = r.observe(opClaimJoin, start, err)
		return ClaimJoinResult{ClaimErr: err, AlsoErr: err, IncidentsErr: err}
	}
	res.AlsoErr = r.setsErr(sets)
	res.Won, res.ClaimErr = claimReplies(cmds, claims)
	if res.ClaimErr != nil {
		// A claim that failed is not this call's: its members were left out
		// of their steps, but the steps' answers are not trusted either.
		res.ClaimErr = r.observe(opClaimJoin, start, res.ClaimErr)
		res.IncidentsErr = res.ClaimErr
		return res
	}
	res.Incidents, res.IncidentsErr = incidentReplies(calls, len(ops))
	res.IncidentsErr = r.observe(opClaimJoin, start, res.IncidentsErr)
	if after != nil {
		res.After, res.AfterErr = afterReplies(after, ops, len(keys))
	}
	return res
}

// afterReplies reads the MGET of ClaimJoin's After keys (n of them).
func afterReplies(c *redis.SliceCmd, ops []ClaimedOp, n int) ([]AfterRead, error) {
	vals, err := c.Result()
	if err != nil {
		return nil, err
	}
	if len(vals) != n {
		return nil, fmt.Errorf("MGET answered %d values for %d keys", len(vals), n)
	}
	values, found := make([]string, n), make([]bool, n)
	for i, v := range vals {
		values[i], found[i] = v.(string)
	}
	return splitAfter(ops, values, found), nil
}

// RenewIncidents sets the time to live of each incident's state and
// members that exist (PEXPIRE does nothing to a missing key), in one
// pipeline.
func (r *Redis) RenewIncidents(ctx context.Context, keys []string, ttl time.Duration) error {
	if len(keys) == 0 || ttl <= 0 {
		return nil
	}
	start := time.Now()
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.PExpire(ctx, k, ttl)
			p.PExpire(ctx, membersKey(k), ttl)
		}
		return nil
	})
	return r.observe(opRenewIncidents, start, err)
}
