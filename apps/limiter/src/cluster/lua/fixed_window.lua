-- fixed_window: state {start, end, used}; windows aligned to multiples of windowMs since the
-- epoch, as in libs/engine, so a key moved between the engine and Redis agrees on its window.
ALGORITHMS.fixed_window = {
  fresh = function(l) return { 0, 0, 0 } end,
  sync = function(s, l, now)
    if now >= s[2] then
      s[1] = now - (now % l.windowMs)
      s[2] = s[1] + l.windowMs
      s[3] = 0
    end
  end,
  available = function(s, l) return l.limit - s[3] end,
  charge = function(s, l, now, cost) s[3] = s[3] + cost end,
  retryAfter = function(s, l, now, cost)
    if s[3] + cost <= l.limit then return 0 end
    return math.max(1, s[2] - now)
  end,
  used = function(s, l) return s[3] end,
  resetMs = function(s, l, now) return math.max(0, s[2] - now) end,
  idleAt = function(s, l) if s[3] > 0 then return s[2] end return 0 end,
}
