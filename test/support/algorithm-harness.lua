-- A test harness for the cluster scripts' algorithm files (test/sliding-window-lua.e2e-spec.ts):
-- runs one table of instants on one limit with `now` given by each step, as driver.lua drives the
-- algorithms, state packed and unpacked between steps as it is between calls.
-- ARGV[1]: JSON {limit, steps}; a limit {algorithm, limit, windowMs, bucketMs, ringSize, capacity,
-- logSize, logUnits, layout}; a step {op, at, ...} with op take (cost), usage (cost), refund
-- (chargedAt, cost), state, change (limit), and a capacity lease's (issue 15) grant (g, ttlMs,
-- horizonMs), giveBack (t, until, granted, unspent), expire (t, until, granted, expiresAt: synced
-- to expiresAt, expired, then synced to at, as driver.lua expires a record). Reply: per step, take
-- {retryAfterMs}, state {used, resetMs}, grant {g, until}, the others {}.
local input = cjson.decode(ARGV[1])
local function limitOf(x)
  x.impl = ALGORITHMS[x.algorithm]
  return x
end
local l = limitOf(input.limit)
local s = l.impl.fresh(l)
local out = {}
for i, step in ipairs(input.steps) do
  local op, at = step.op, step.at
  s = cmsgpack.unpack(cmsgpack.pack(s))
  if op == 'change' then
    local next = limitOf(step.limit)
    s = adopt(next, l.layout, s, at) or next.impl.fresh(next)
    l = next
    out[i] = {}
  elseif op == 'expire' then
    l.impl.sync(s, l, step.expiresAt)
    l.impl.expire(s, l, step.t, step['until'], step.granted)
    l.impl.sync(s, l, at)
    out[i] = {}
  else
    l.impl.sync(s, l, at)
    if op == 'take' then
      local retry = 0
      if step.cost > 0 then retry = l.impl.retryAfter(s, l, at, step.cost) end
      if retry == 0 then l.impl.charge(s, l, at, step.cost) end
      out[i] = { retry }
    elseif op == 'usage' then
      l.impl.charge(s, l, at, step.cost)
      out[i] = {}
    elseif op == 'refund' then
      l.impl.refund(s, l, step.chargedAt, step.cost)
      out[i] = {}
    elseif op == 'grant' then
      local until_ = l.impl.leaseUntil(s, l, at, step.ttlMs, step.horizonMs)
      l.impl.grant(s, l, at, step.g, until_)
      out[i] = { step.g, until_ }
    elseif op == 'giveBack' then
      l.impl.giveBack(s, l, step.t, step['until'], step.granted, step.unspent)
      out[i] = {}
    elseif op == 'state' then
      out[i] = { l.impl.used(s, l), l.impl.resetMs(s, l, at) }
    end
  end
end
return out
