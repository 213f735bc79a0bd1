-- sliding_window as an exact log, the engine's sliding-log.ts: a cost charged at t counts for the
-- instants [t, t + windowMs), and retryAfter is the instant the oldest needed cost leaves. State
-- {seen, total, carry, carryUntil, t1, c1, t2, c2, ...}: entries oldest first, one per instant
-- (the engine keeps a unit per entry in a log of units; the same units, grouped). `seen` is the
-- latest now synced; a clock that steps back before it dates later entries at now (redate).
-- More than the log holds: a log of units (l.logUnits) counts the units that
-- do not fit as carry, until the latest instant one of them stops counting; a log of pairs merges
-- the two neighbouring entries closest in time into the later one (the oldest such on a tie).
local E = 5 -- the first entry's instant; its cost at E + 1

local function newest(s)
  if #s >= E then return s[#s - 1] end
  return 0
end

-- Units in the log (the carry aside), or its entries: what logSize bounds.
local function held(s, l)
  if l.logUnits then return s[2] - s[3] end
  return (#s - E + 1) / 2
end

local function removeAt(s, i)
  table.remove(s, i + 1)
  table.remove(s, i)
end

-- A full log of pairs takes an entry at t: the closest neighbours (t itself the newest's) merge.
local function mergeClosest(s, t)
  local last = #s - 1
  local best, gap = last, t - s[last]
  for i = E, last - 2, 2 do
    local d = s[i + 2] - s[i]
    if d < gap or (d == gap and i < best) then best, gap = i, d end
  end
  if best == last then return false end
  s[best + 3] = s[best + 3] + s[best + 1]
  removeAt(s, best)
  return true
end

local function add(s, l, t, cost)
  local inLog = held(s, l)
  s[2] = s[2] + cost
  local fits = cost
  if l.logUnits then
    fits = math.min(cost, l.logSize - inLog)
    if fits < cost then
      s[3] = s[3] + cost - fits
      s[4] = math.max(s[4], t + l.windowMs)
    end
    if fits <= 0 then return end
  end
  local n = #s
  if n >= E and s[n - 1] == t then
    s[n] = s[n] + fits
  elseif l.logUnits or inLog < l.logSize or mergeClosest(s, t) then
    s[#s + 1] = t
    s[#s + 1] = fits
  else
    s[n - 1] = t
    s[n] = s[n] + fits
  end
end

-- An instant of the state when the clock stepped back from `seen` to `now` (sliding-log.ts): at
-- now if it was no later than seen, else keeping its lead over the clock (a lease's deadline).
local function redate(seen, now, t)
  if t <= seen then return math.min(t, now) end
  return now + (t - seen)
end

local function stepBack(s, l, now)
  local seen, n, w = s[1], #s, E
  for i = E, n - 1, 2 do
    local t, c = redate(seen, now, s[i]), s[i + 1]
    if w > E and s[w - 2] == t then
      s[w - 1] = s[w - 1] + c
    else
      s[w], s[w + 1] = t, c
      w = w + 2
    end
  end
  for i = n, w, -1 do s[i] = nil end
  if s[3] > 0 then s[4] = redate(seen, now, s[4] - l.windowMs) + l.windowMs end
end

ALGORITHMS.sliding_log = {
  fresh = function(l) return { 0, 0, 0, 0 } end,
  sync = function(s, l, now)
    if now < s[1] then stepBack(s, l, now) end
    s[1] = now
    local seen, i = s[1], E
    while i < #s and s[i] + l.windowMs <= seen do
      s[2] = s[2] - s[i + 1]
      i = i + 2
    end
    if i > E then
      local gone = i - E
      for j = E, #s do s[j] = s[j + gone] end
    end
    if s[3] > 0 and s[4] <= seen then
      s[2] = s[2] - s[3]
      s[3], s[4] = 0, 0
    end
  end,
  charge = function(s, l, now, cost)
    if cost <= 0 then return end
    if now > s[1] then s[1] = now end
    add(s, l, math.max(s[1], newest(s)), cost)
  end,
  retryAfter = function(s, l, now, cost)
    local need = s[2] + cost - l.limit
    if need <= 0 then return 0 end
    local freed, carry, carryUntil = 0, s[3], s[4]
    for i = E, #s - 1, 2 do
      local leaves = s[i] + l.windowMs
      if carry > 0 and carryUntil <= leaves then
        freed, carry = freed + carry, 0
        if freed >= need then return math.max(1, carryUntil - now) end
      end
      freed = freed + s[i + 1]
      if freed >= need then return math.max(1, leaves - now) end
    end
    return math.max(1, ALGORITHMS.sliding_log.idleAt(s, l) - now)
  end,
  -- From the newest entries charged at or before chargedAt (never frees more than it should).
  refund = function(s, l, chargedAt, cost)
    local i = #s - 1
    while i >= E and s[i] > chargedAt do i = i - 2 end
    while i >= E and cost > 0 do
      local back = math.min(cost, s[i + 1])
      s[i + 1] = s[i + 1] - back
      s[2] = s[2] - back
      cost = cost - back
      if s[i + 1] == 0 then removeAt(s, i) end
      i = i - 2
    end
  end,
  used = function(s, l) return s[2] end,
  windowStart = function(s, l, now) return now - (now % l.windowMs) end,
  idleAt = function(s, l)
    if s[2] <= 0 then return 0 end
    local last = 0
    if #s >= E then last = newest(s) + l.windowMs end
    if s[3] > 0 then return math.max(last, s[4]) end
    return last
  end,
  -- {until, cost, ...}: when each cost stops counting, in that order (a change of layout).
  counted = function(s, l)
    local out, carry = {}, s[3]
    for i = E, #s - 1, 2 do
      local leaves = s[i] + l.windowMs
      if carry > 0 and s[4] <= leaves then
        out[#out + 1], out[#out + 2] = s[4], carry
        carry = 0
      end
      out[#out + 1], out[#out + 2] = leaves, s[i + 1]
    end
    if carry > 0 then out[#out + 1], out[#out + 2] = s[4], carry end
    return out
  end,
  chargeUntil = function(s, l, now, cost, until_)
    if cost <= 0 or until_ <= math.max(now, s[1]) then return end
    add(s, l, math.max(until_ - l.windowMs, newest(s)), cost)
  end,
}
-- Capacity leases (issue 15): a grant's units may be spent at any instant before its deadline,
-- so they are dated at the deadline (or at the newest entry, the log staying in order): each
-- counts from the grant until a whole window after the latest instant it can be spent. That is
-- up to the deadline's distance longer than a request's count: at most a fiftieth of the window,
-- so a steady overload still fills at least 98% of it.
ALGORITHMS.sliding_log.leaseUntil = function(s, l, now, ttlMs, horizonMs)
  return now + math.max(1, math.min(horizonMs, ttlMs, math.floor(l.windowMs / 50)))
end
ALGORITHMS.sliding_log.grant = function(s, l, now, g, until_)
  if g <= 0 then return end
  if now > s[1] then s[1] = now end
  add(s, l, math.max(until_, s[1], newest(s)), g)
end
-- The unspent units leave from the newest entries dated at or before the deadline: the grant's
-- own, or older ones (which stop counting sooner, so the rest counts longer, never shorter).
-- Once the deadline's entry stopped counting there is nothing left to take back.
ALGORITHMS.sliding_log.giveBack = function(s, l, t, until_, granted, unspent)
  if unspent > 0 then ALGORITHMS.sliding_log.refund(s, l, until_, unspent) end
end
ALGORITHMS.sliding_log.expire = function(s, l, t, until_, granted) end
-- A grant's deadline when the clock stepped back to now: dated as its units are (driver.lua).
ALGORITHMS.sliding_log.redate = function(s, l, now, t)
  if s[1] <= now then return t end
  return redate(s[1], now, t)
end
ALGORITHMS.sliding_log.resetMs = function(s, l, now)
  if s[2] <= 0 then return 0 end
  return math.max(0, ALGORITHMS.sliding_log.idleAt(s, l) - now)
end
