-- Runs one schedule of capacity leases (issue 15) and plain requests on one limit, in one call, for
-- test/lease-invariant-lua.e2e-spec.ts: the algorithms' lease functions driven as driver.lua's
-- lease op drives them, with `now` given by each step and the state packed and unpacked between
-- steps as it is between calls. Grant records live until their deadline (expiresAt = until, one
-- limit); one not given back by then is expired at the next step, in expiresAt order (synced to
-- expiresAt, expired, then synced to the step's instant).
-- ARGV[1]: JSON {limit, ttlMs, horizonMs, steps}; limit as in algorithm-harness.lua; a step
-- {op, at, ...}: take (cost), grant (id, holder, want, need, n: the driver's N), giveBack (id, spent:
-- the units the holder meant to spend; it spent at most its grant, and gives back the rest).
-- Reply, per step: take {retryAfterMs}, grant {granted, until} ({0, 0} refused), giveBack
-- {1, unspent} when the record was still there, else {0, 0}.
local input = cjson.decode(ARGV[1])
local l = input.limit
l.impl = ALGORITHMS[l.algorithm]
local ttlMs, horizonMs = input.ttlMs, input.horizonMs
local s = l.impl.fresh(l)
local live = {}
local out = {}

local function expireDue(at)
  while true do
    local first = nil
    for id, r in pairs(live) do
      if r['until'] <= at and (first == nil or r['until'] < live[first]['until']) then first = id end
    end
    if first == nil then break end
    local r = live[first]
    l.impl.sync(s, l, r['until'])
    l.impl.expire(s, l, r.t, r['until'], r.granted)
    live[first] = nil
  end
  l.impl.sync(s, l, at)
end

for i, step in ipairs(input.steps) do
  local at = step.at
  s = cmsgpack.unpack(cmsgpack.pack(s))
  expireDue(at)
  if step.op == 'take' then
    local retry = l.impl.retryAfter(s, l, at, step.cost)
    if retry == 0 then l.impl.charge(s, l, at, step.cost) end
    out[i] = { retry }
  elseif step.op == 'grant' then
    local active = 1
    for _, r in pairs(live) do
      if r.holder ~= step.holder then active = active + 1 end
    end
    local remaining = math.max(0, l.capacity - l.impl.used(s, l))
    if step.need > remaining or l.impl.retryAfter(s, l, at, step.need) > 0 then
      out[i] = { 0, 0 }
    else
      local share = math.floor(remaining / math.max(step.n, active))
      local g = math.min(step.want, math.max(step.need, share), remaining)
      local until_ = l.impl.leaseUntil(s, l, at, ttlMs, horizonMs)
      l.impl.grant(s, l, at, g, until_)
      local r = { t = at, granted = g, holder = step.holder }
      r['until'] = until_
      live[step.id] = r
      out[i] = { g, until_ }
    end
  elseif step.op == 'giveBack' then
    local r = live[step.id]
    if r then
      local unspent = r.granted - math.min(step.spent, r.granted)
      l.impl.giveBack(s, l, r.t, r['until'], r.granted, unspent)
      live[step.id] = nil
      out[i] = { 1, unspent }
    else
      out[i] = { 0, 0 }
    end
  else
    return redis.error_reply('unknown op ' .. tostring(step.op))
  end
end
return out
