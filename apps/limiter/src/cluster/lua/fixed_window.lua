-- fixed_window: state {start, end, used}; windows aligned to multiples of windowMs since the
-- epoch, as in libs/engine, so a key moved between the engine and Redis agrees on its window.
-- A calendar limit (align: calendar) is given its window boundaries by the caller, computed from
-- the IANA zone (Redis has no time zone data); Redis's own clock picks the window among them.
local function bounds(s, l, now)
  local b = l.calendar
  if b == nil then
    s[1] = now - (now % l.windowMs)
    s[2] = s[1] + l.windowMs
    return
  end
  for i = 1, #b - 1 do
    if b[i] <= now and now < b[i + 1] then
      s[1], s[2] = b[i], b[i + 1]
      return
    end
  end
  error('calendar: no window boundary given around ' .. now)
end

ALGORITHMS.fixed_window = {
  fresh = function(l) return { 0, 0, 0 } end,
  sync = function(s, l, now)
    if now >= s[2] then
      s[3] = 0
      bounds(s, l, now)
    elseif now < s[1] then
      -- A window that starts after now: the clock stepped back. What it counts was charged no
      -- later than now, so it counts in a window of the same length from now (fixed-window.ts).
      if s[3] == 0 then
        bounds(s, l, now)
      else
        s[1], s[2] = now, now + (s[2] - s[1])
      end
    end
  end,
  charge = function(s, l, now, cost) s[3] = s[3] + cost end,
  -- GoCC gives a released request back to the current window only.
  refund = function(s, l, chargedAt, cost)
    if chargedAt >= s[1] and chargedAt < s[2] then s[3] = math.max(0, s[3] - cost) end
  end,
  retryAfter = function(s, l, now, cost)
    if s[3] + cost <= l.limit then return 0 end
    return math.max(1, s[2] - now)
  end,
  used = function(s, l) return s[3] end,
  resetMs = function(s, l, now) return math.max(0, s[2] - now) end,
  windowStart = function(s, l, now) return s[1] end,
  idleAt = function(s, l) if s[3] > 0 then return s[2] end return 0 end,
  -- Capacity leases (issue 15): a grant is a charge whose units are spent within its own window.
  leaseUntil = function(s, l, now, ttlMs, horizonMs) return math.min(s[2], now + ttlMs) end,
  grant = function(s, l, now, g, until_) s[3] = s[3] + g end,
  giveBack = function(s, l, t, until_, granted, unspent)
    ALGORITHMS.fixed_window.refund(s, l, t, unspent)
  end,
  expire = function(s, l, t, until_, granted) end,
}
