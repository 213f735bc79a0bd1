-- One call decides one request for every limit of a quota: all or nothing, atomically.
-- KEYS[1]: the state of one (quota, key): a msgpack map, limit layout -> that limit's state array
-- (a limit whose layout changed starts fresh; layouts no longer used are dropped on write).
-- ARGV[1]: 'acquire' (charge when admitted) or 'decide' (dry run); ARGV[2]: number of limits n;
-- then 7 values per limit: field, algorithm, limit, windowMs, bucketMs, ringSize, capacity;
-- then n costs. Time is Redis's own (TIME), never a replica's clock.
-- Reply: { allowed (1|0), now, retryAfterMs, refusing limit (1-based, 0: none),
--          then per limit: used, resetMs }.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local charge = ARGV[1] == 'acquire'
local n = tonumber(ARGV[2])
local limits, fields = {}, {}
for i = 1, n do
  local b = 2 + (i - 1) * 7
  local algorithm = ALGORITHMS[ARGV[b + 2]]
  if algorithm == nil then return redis.error_reply('unknown algorithm ' .. ARGV[b + 2]) end
  limits[i] = {
    impl = algorithm,
    limit = tonumber(ARGV[b + 3]),
    windowMs = tonumber(ARGV[b + 4]),
    bucketMs = tonumber(ARGV[b + 5]),
    ringSize = tonumber(ARGV[b + 6]),
    capacity = tonumber(ARGV[b + 7]),
    cost = tonumber(ARGV[2 + n * 7 + i]),
  }
  fields[i] = ARGV[b + 1]
end

local blob = redis.call('GET', KEYS[1])
local saved = blob and cmsgpack.unpack(blob) or {}
local states = {}
for i = 1, n do
  local l = limits[i]
  local s = saved[fields[i]] or l.impl.fresh(l)
  l.impl.sync(s, l, now)
  states[i] = s
end

-- The refusing limit is the one that frees last: waiting for it frees them all.
local refusing, retry = 0, 0
for i = 1, n do
  local l = limits[i]
  if l.cost > 0 then
    local r = l.impl.retryAfter(states[i], l, now, l.cost)
    if r > 0 and (refusing == 0 or r > retry) then
      refusing, retry = i, r
    end
  end
end

-- A dry run charges too, in memory only, so that it answers exactly as acquire would.
if refusing == 0 then
  local map, idle = {}, 0
  for i = 1, n do
    local l = limits[i]
    if l.cost > 0 then l.impl.charge(states[i], l, now, l.cost) end
    map[fields[i]] = states[i]
    idle = math.max(idle, l.impl.idleAt(states[i], l))
  end
  if charge and idle > now then
    -- State past its idle instant equals a fresh one: Redis drops it, memory returns to baseline.
    redis.call('SET', KEYS[1], cmsgpack.pack(map), 'PX', idle - now)
  end
end

local out = { refusing == 0 and 1 or 0, now, retry, refusing }
for i = 1, n do
  local l = limits[i]
  out[#out + 1] = l.impl.used(states[i], l)
  out[#out + 1] = l.impl.resetMs(states[i], l, now)
end
return out
