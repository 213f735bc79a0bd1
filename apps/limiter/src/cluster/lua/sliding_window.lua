-- sliding_window in sub-buckets (limits too large for a log, sliding_log.lua), the engine's
-- sliding-window.ts: state {head, total, ring[ringSize]}: a decision at bucket K counts buckets
-- K-ringSize+1..K, the oldest whole, so no interval of windowMs ever admits more than the limit.
local function slot(j, r) return 3 + (j % r) end

ALGORITHMS.sliding_window = {
  fresh = function(l)
    local s = { 0, 0 }
    for i = 1, l.ringSize do s[2 + i] = 0 end
    return s
  end,
  sync = function(s, l, now)
    local k = math.floor(now / l.bucketMs)
    local head = s[1]
    local r = l.ringSize
    if k < head then
      -- The clock stepped back: later buckets move into the bucket of now (sliding-window.ts).
      local moved = 0
      for j = math.max(k + 1, head - r + 1), head do
        local at = slot(j, r)
        moved = moved + s[at]
        s[at] = 0
      end
      local at = slot(k, r)
      s[at] = s[at] + moved
      s[1] = k
      return
    end
    if k == head then return end
    if k - head >= r then
      for i = 1, r do s[2 + i] = 0 end
      s[2] = 0
    else
      for j = head + 1, k do
        local at = slot(j, r)
        s[2] = s[2] - s[at]
        s[at] = 0
      end
    end
    s[1] = k
  end,
  charge = function(s, l, now, cost)
    local at = slot(s[1], l.ringSize)
    s[at] = s[at] + cost
    s[2] = s[2] + cost
  end,
  retryAfter = function(s, l, now, cost)
    local need = s[2] + cost - l.limit
    if need <= 0 then return 0 end
    local r = l.ringSize
    local freed = 0
    for j = s[1] - r + 1, s[1] do
      freed = freed + s[slot(j, r)]
      -- Bucket j stops counting once the head reaches j + r.
      if freed >= need then return math.max(1, (j + r) * l.bucketMs - now) end
    end
    return math.max(1, (s[1] + r) * l.bucketMs - now)
  end,
  -- Back into the bucket it was charged to, while that bucket still counts.
  refund = function(s, l, chargedAt, cost)
    local k = math.floor(chargedAt / l.bucketMs)
    if k > s[1] or k <= s[1] - l.ringSize then return end
    local at = slot(k, l.ringSize)
    local back = math.min(cost, s[at])
    s[at] = s[at] - back
    s[2] = s[2] - back
  end,
  used = function(s, l) return s[2] end,
  windowStart = function(s, l, now) return now - (now % l.windowMs) end,
  idleAt = function(s, l)
    if s[2] <= 0 then return 0 end
    local r = l.ringSize
    for j = s[1], s[1] - r + 1, -1 do
      if s[slot(j, r)] > 0 then return (j + r) * l.bucketMs end
    end
    return 0
  end,
  -- {until, cost, ...}: when each bucket stops counting, in that order (a change of layout).
  counted = function(s, l)
    local out, r = {}, l.ringSize
    for j = s[1] - r + 1, s[1] do
      local cost = s[slot(j, r)]
      if cost > 0 then
        out[#out + 1], out[#out + 2] = (j + r) * l.bucketMs, cost
      end
    end
    return out
  end,
  -- Into the first bucket that counts until until_ (the head, if that would be a later one).
  chargeUntil = function(s, l, now, cost, until_)
    local r = l.ringSize
    local k = math.min(s[1], math.ceil(until_ / l.bucketMs) - r)
    if k <= s[1] - r or cost <= 0 then return end
    local at = slot(k, r)
    s[at] = s[at] + cost
    s[2] = s[2] + cost
  end,
}
-- Capacity leases (issue 15): a grant is a charge whose units are spent within the grant's own
-- sub-bucket, so they count exactly as that many requests decided in it.
ALGORITHMS.sliding_window.leaseUntil = function(s, l, now, ttlMs, horizonMs)
  return math.min((s[1] + 1) * l.bucketMs, now + ttlMs)
end
ALGORITHMS.sliding_window.grant = function(s, l, now, g, until_)
  ALGORITHMS.sliding_window.charge(s, l, now, g)
end
ALGORITHMS.sliding_window.giveBack = function(s, l, t, until_, granted, unspent)
  ALGORITHMS.sliding_window.refund(s, l, t, unspent)
end
ALGORITHMS.sliding_window.expire = function(s, l, t, until_, granted) end
ALGORITHMS.sliding_window.resetMs = function(s, l, now)
  if s[2] <= 0 then return 0 end
  return math.max(0, ALGORITHMS.sliding_window.idleAt(s, l) - now)
end
