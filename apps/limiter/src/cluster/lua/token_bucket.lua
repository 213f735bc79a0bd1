-- token_bucket: state {deficit, lastRefill, held}, the deficit in units of 1/windowMs token so refill
-- (elapsed * limit) and charges are exact integers, as in libs/engine. `held` (same units; absent
-- reads 0, so a state written before leases reads as one with nothing held, and it is dropped again
-- at 0) is what capacity leases (issue 15) granted and may still spend: refill and refunds never
-- take the deficit below it, so the tokens available plus those held never exceed the burst.
local function heldOf(s) return s[3] or 0 end

local function setHeld(s, v)
  if v > 0 then s[3] = v else s[3] = nil end
end

-- The most a bucket owes: one burst past empty (token-bucket.ts, maxDeficit).
local function maxDeficit(l) return math.min(2 * l.capacity * l.windowMs, 9007199254740991) end

ALGORITHMS.token_bucket = {
  fresh = function(l) return { 0, 0 } end,
  sync = function(s, l, now)
    if now <= s[2] then
      -- The clock stepped back: refill goes on from now, what is owed is owed from now.
      if now < s[2] then s[2] = now end
      return
    end
    local held = heldOf(s)
    if s[1] > held then
      local refill = (now - s[2]) * l.limit
      if refill >= s[1] - held then s[1] = held else s[1] = s[1] - refill end
    end
    s[2] = now
  end,
  charge = function(s, l, now, cost)
    local next = s[1] + cost * l.windowMs
    if next <= maxDeficit(l) then s[1] = next else s[1] = math.max(maxDeficit(l), s[1]) end
  end,
  refund = function(s, l, chargedAt, cost)
    s[1] = math.max(heldOf(s), s[1] - cost * l.windowMs)
  end,
  retryAfter = function(s, l, now, cost)
    local need = s[1] + cost * l.windowMs - l.capacity * l.windowMs
    if need <= 0 then return 0 end
    local ms = math.ceil(need / l.limit)
    if ms * l.limit < need then ms = ms + 1 end
    return ms
  end,
  used = function(s, l)
    return l.capacity - math.floor((l.capacity * l.windowMs - s[1]) / l.windowMs)
  end,
  resetMs = function(s, l, now) return math.ceil(s[1] / l.limit) end,
  windowStart = function(s, l, now) return now - (now % l.windowMs) end,
  idleAt = function(s, l)
    if s[1] > 0 then return s[2] + math.ceil(s[1] / l.limit) end
    return 0
  end,
  -- Capacity leases: a grant is charged at once and held until given back or expired.
  leaseUntil = function(s, l, now, ttlMs, horizonMs) return now + ttlMs end,
  grant = function(s, l, now, g, until_)
    s[1] = s[1] + g * l.windowMs
    setHeld(s, heldOf(s) + g * l.windowMs)
  end,
  giveBack = function(s, l, t, until_, granted, unspent)
    setHeld(s, math.max(0, heldOf(s) - granted * l.windowMs))
    if unspent > 0 then ALGORITHMS.token_bucket.refund(s, l, t, unspent) end
  end,
  -- The driver synced the state to the record's expiry: from then on its units refill.
  expire = function(s, l, t, until_, granted)
    setHeld(s, math.max(0, heldOf(s) - granted * l.windowMs))
  end,
}
