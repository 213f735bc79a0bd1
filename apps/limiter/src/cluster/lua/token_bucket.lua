-- token_bucket: state {deficit, lastRefill}, the deficit in units of 1/windowMs token so refill
-- (elapsed * limit) and charges are exact integers, as in libs/engine.
ALGORITHMS.token_bucket = {
  fresh = function(l) return { 0, 0 } end,
  sync = function(s, l, now)
    if now <= s[2] then return end
    if s[1] > 0 then
      local refill = (now - s[2]) * l.limit
      if refill >= s[1] then s[1] = 0 else s[1] = s[1] - refill end
    end
    s[2] = now
  end,
  charge = function(s, l, now, cost) s[1] = s[1] + cost * l.windowMs end,
  refund = function(s, l, chargedAt, cost) s[1] = math.max(0, s[1] - cost * l.windowMs) end,
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
}
