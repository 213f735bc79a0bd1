-- A limit whose layout changed (a config change), the engine's convertRow: when both layouts are
-- sliding windows of one length (another precision, sub-buckets and a log), what still counts is
-- carried over, each cost until at least the instant it counted until. Any other change starts
-- fresh (nil). `layout` is the limit's layoutKey when the state was written (compile.ts):
-- 'sliding_window/<windowMs>/<bucketMs>/<ringSize>/' or 'sliding_window/<windowMs>/<units|costs>/<logSize>/'.
local function layoutLimit(layout)
  local algorithm, windowMs, shape, size = string.match(layout, '^([%w_]+)/(%d+)/(%w+)/(%d+)/')
  if algorithm ~= 'sliding_window' then return nil end
  local l = { windowMs = tonumber(windowMs) }
  if shape == 'units' or shape == 'costs' then
    l.impl, l.logSize, l.logUnits = ALGORITHMS.sliding_log, tonumber(size), shape == 'units'
  else
    l.impl, l.bucketMs, l.ringSize = ALGORITHMS.sliding_window, tonumber(shape), tonumber(size)
  end
  return l
end

local function adopt(l, layout, old, now)
  local from = layoutLimit(layout)
  if from == nil or from.impl == nil or l.impl.chargeUntil == nil then return nil end
  if from.windowMs ~= l.windowMs then return nil end
  from.impl.sync(old, from, now)
  local s = l.impl.fresh(l)
  l.impl.sync(s, l, now)
  local pieces = from.impl.counted(old, from)
  for i = 1, #pieces, 2 do l.impl.chargeUntil(s, l, now, pieces[i + 1], pieces[i]) end
  return s
end
