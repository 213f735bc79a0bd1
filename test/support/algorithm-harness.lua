-- A test harness for the cluster scripts' algorithm files (test/sliding-window-lua.e2e-spec.ts):
-- runs one table of instants on one limit with `now` given by each step, as driver.lua drives the
-- algorithms, state packed and unpacked between steps as it is between calls.
-- ARGV[1]: JSON {limit, steps}; a limit {algorithm, limit, windowMs, bucketMs, ringSize, capacity,
-- logSize, logUnits, layout}; a step {op, at, ...} with op take (cost), usage (cost), refund
-- (chargedAt, cost), state, change (limit). Reply: per step, take {retryAfterMs}, state {used,
-- resetMs}, the others {}.
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
    elseif op == 'state' then
      out[i] = { l.impl.used(s, l), l.impl.resetMs(s, l, at) }
    end
  end
end
return out
