-- One call runs one or more requests of one quota, in order and atomically: each request checks
-- and charges every limit of the quota, all or nothing. Time is Redis's own (TIME), never a
-- replica's clock. Nothing is written until every request has been decided, so an error leaves
-- Redis as it was.
--
-- KEYS[j]: the (quota, key) of request j, a hash:
--   s        msgpack array: next admission sequence, stats window, approved, denied, until when
--            answers are remembered, leases {{id, expiresAt, requestId}...}, the limits' layouts
--            (joined by newlines), then each limit's state (a limit whose layout changed is
--            carried over by adopt.lua, or starts fresh)
--   r<slot>  receipt ring (slot = seq % RECEIPTS): {seq, chargedAt, requestId, live, cost per limit}
--   g        capacity leases (docs/architecture.md): msgpack map holder -> {seq, t, expiresAt,
--            granted per limit, until per limit}; one live grant per replica
--   n        notes for a lease holder: msgpack map holder -> {kind, admission id...}, releases
--            (1) and usage settled here (2) of admissions it made from its slices
--   i<id>    a client requestId's first answer: {seq, at, reply}
-- ARGV: n limits; 10 per limit: field (name|layoutKey), algorithm (its implementation: a
--   sliding_window that keeps a log is sliding_log), limit, windowMs, bucketMs, ringSize,
--   capacity, calendar boundaries ('' or comma list), logSize, logUnits (1 or 0); concurrency max
--   (0: none), leaseTtlMs, RECEIPTS, MEMO_MS; then per request its op and the op's arguments:
--   acquire | wait (an acquire whose refusal is not final: not remembered) | decide (dry run) |
--   release | usage | stats | reset: requestId ('' none), leaseId, n costs;
--   lease: holder, prevSeq, replicas, ttlMs, horizonMs, approvedDelta, deniedDelta, then (want,
--   need, unspent) per limit: gives the holder's grant prevSeq back, takes a new one;
--   settle: chargedAt, then (until, delta) per limit: a leased admission's cost changed.
-- Reply, one array per request: {code (0 OK, 1 RATE_LIMITED, 2 CONCURRENCY_LIMITED; release and
--   reset: 1 done, 0 not), now, retryAfterMs, refusing limit (1-based, 0 none), seq, replayed,
--   inFlight, approved, denied, then used and resetMs per limit}; a lease's reply then has
--   (granted, until) per limit.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = tonumber(ARGV[1])
local limits, fields = {}, {}
local PER_LIMIT = 10
for i = 1, n do
  local b = 1 + (i - 1) * PER_LIMIT
  local impl = ALGORITHMS[ARGV[b + 2]]
  if impl == nil then return redis.error_reply('unknown algorithm ' .. ARGV[b + 2]) end
  local calendar = nil
  if ARGV[b + 8] ~= '' then
    calendar = {}
    for v in string.gmatch(ARGV[b + 8], '%d+') do calendar[#calendar + 1] = tonumber(v) end
  end
  fields[i] = ARGV[b + 1]
  limits[i] = {
    impl = impl,
    limit = tonumber(ARGV[b + 3]),
    windowMs = tonumber(ARGV[b + 4]),
    bucketMs = tonumber(ARGV[b + 5]),
    ringSize = tonumber(ARGV[b + 6]),
    capacity = tonumber(ARGV[b + 7]),
    calendar = calendar,
    logSize = tonumber(ARGV[b + 9]),
    logUnits = ARGV[b + 10] == '1',
  }
end
local h = 1 + n * PER_LIMIT
local MAX_LEASES, LEASE_MS = tonumber(ARGV[h + 1]), tonumber(ARGV[h + 2])
local RECEIPTS, MEMO_MS = tonumber(ARGV[h + 3]), tonumber(ARGV[h + 4])
local FIRST = h + 5
local LAYOUTS = table.concat(fields, '\n')

-- Redis's clock stepped back: what a key's records dated after now hold, they hold from now for
-- no longer than they were given (as the algorithms date their state, and the engine its leases).
-- A grant keeps its span; its deadlines move with it, as the log dates the grant's units.
local function stepBack(c)
  for _, g in pairs(c.grants) do
    if g[2] > now then
      local by = g[2] - now
      g[2], g[3] = now, g[3] - by
      for i = 1, n do
        local redate = limits[i].impl.redate
        if g[5][i] > 0 then
          g[5][i] = redate and redate(c.states[i], limits[i], now, g[5][i]) or g[5][i] - by
        end
      end
      c.grantsDirty = true
    end
  end
  for _, lease in ipairs(c.leases) do lease[2] = math.min(lease[2], now + LEASE_MS) end
  c.m = math.min(c.m, now + MEMO_MS)
end

-- Grants past their expiresAt end without a give-back, oldest first: each limit is synced to that
-- instant before the grant's units stop being held (token bucket), so refill never runs early.
local function expireGrants(c)
  local gone = {}
  for holder, g in pairs(c.grants) do
    if g[3] <= now then gone[#gone + 1] = holder end
  end
  if #gone == 0 then return end
  table.sort(gone, function(a, b) return c.grants[a][3] < c.grants[b][3] end)
  for _, holder in ipairs(gone) do
    local g = c.grants[holder]
    for i = 1, n do
      local l = limits[i]
      l.impl.sync(c.states[i], l, g[3])
      l.impl.expire(c.states[i], l, g[2], g[5][i], g[4][i])
    end
    c.grants[holder] = nil
  end
  c.grantsDirty = true
end

-- Per key touched by this call: its state, synced to now, and the fields to write at the end.
local open = {}
local order = {}
local function state(k)
  local c = open[k]
  if c then return c end
  local got = redis.call('HMGET', k, 's', 'g', 'n') -- false where the key holds nothing
  local blob = got[1]
  local states = {}
  c = { states = states, existed = blob ~= false, sets = {}, dels = {}, dirty = false }
  c.grants = got[2] and cmsgpack.unpack(got[2]) or {}
  c.notes = got[3] and cmsgpack.unpack(got[3]) or {}
  if blob then
    local saved = cmsgpack.unpack(blob)
    c.seq, c.w, c.a, c.d, c.m, c.leases = saved[1], saved[2], saved[3], saved[4], saved[5], saved[6]
    if saved[7] == LAYOUTS then
      for i = 1, n do states[i] = saved[7 + i] end
    else
      -- Grants were charged in the old layout: they end with it (replicas drop their slices when
      -- they apply the change). A hold they left would keep a token bucket from refilling.
      c.grants, c.grantsDirty = {}, got[2] ~= false
      -- Limits are matched by name; one whose layout changed is adopted, or starts fresh.
      local old, j = {}, 0
      for f in string.gmatch(saved[7], '[^\n]+') do
        j = j + 1
        local name, layout = string.match(f, '^(.-)|(.*)$')
        old[name] = { layout = layout, state = saved[7 + j] }
      end
      for i = 1, n do
        local name, layout = string.match(fields[i], '^(.-)|(.*)$')
        local was = old[name]
        if was and was.layout == layout then
          states[i] = was.state
        elseif was then
          states[i] = adopt(limits[i], was.layout, was.state, now)
        end
      end
    end
  else
    -- Sequences start from the clock, so ids of a key that expired and came back never repeat.
    c.seq, c.w, c.a, c.d, c.m, c.leases = now * 1024, 0, 0, 0, 0, {}
  end
  for i = 1, n do
    local s = states[i] or limits[i].impl.fresh(limits[i])
    if c.grantsDirty and s[3] ~= nil and limits[i].impl == ALGORITHMS.token_bucket then s[3] = nil end
    states[i] = s
  end
  stepBack(c)
  expireGrants(c)
  for i = 1, n do limits[i].impl.sync(states[i], limits[i], now) end
  open[k] = c
  order[#order + 1] = k
  return c
end

local function field(k, c, f)
  local v = c.sets[f]
  if v == nil then v = redis.call('HGET', k, f) end
  if not v then return nil end
  return cmsgpack.unpack(v)
end

local function liveLeases(c)
  local kept = {}
  for _, lease in ipairs(c.leases) do
    if lease[2] > now then kept[#kept + 1] = lease end
  end
  c.leases = kept
  return kept
end

-- Stats count in the current window of the first limit, as the engine does.
local function touchStats(c)
  local l = limits[1]
  if l == nil then return end
  local w = l.impl.windowStart(c.states[1], l, now)
  if c.w ~= w then c.w, c.a, c.d = w, 0, 0 end
end

local function reply(c, code, retry, refusing, seq, states)
  local inFlight = MAX_LEASES > 0 and #liveLeases(c) or 0
  local out = { code, now, retry, refusing, seq, 0, inFlight, c.a, c.d }
  for i = 1, n do
    local l = limits[i]
    out[#out + 1] = l.impl.used(states[i], l)
    out[#out + 1] = l.impl.resetMs(states[i], l, now)
  end
  return out
end

local function copy(states)
  local out = {}
  for i = 1, n do
    local s = {}
    for j, v in ipairs(states[i]) do s[j] = v end
    out[i] = s
  end
  return out
end

-- A ring slot is reused: the client requestId it answered for is forgotten with it.
local function putReceipt(k, c, rec)
  local f = 'r' .. string.format('%d', rec[1] % RECEIPTS)
  if c.m > now then
    local old = field(k, c, f)
    if old and old[3] ~= '' then
      c.sets['i' .. old[3]] = false
      c.dels[#c.dels + 1] = 'i' .. old[3]
    end
  end
  c.sets[f] = cmsgpack.pack(rec)
end

local function receiptOf(k, c, rid)
  local seq
  local memo = field(k, c, 'i' .. rid)
  if memo then
    seq = memo[1]
  elseif string.match(rid, '^cs%-%d+$') then
    seq = tonumber(string.sub(rid, 4))
  end
  if seq == nil then return nil end
  local rec = field(k, c, 'r' .. string.format('%d', seq % RECEIPTS))
  if rec == nil or rec[1] ~= seq or rec[4] ~= 1 then return nil end
  return rec
end

local function decide(k, op, rid, costs)
  local c = state(k)
  if rid ~= '' and op ~= 'decide' then
    local memo = field(k, c, 'i' .. rid)
    if memo and memo[2] + MEMO_MS > now then
      local out = memo[3]
      out[6] = 1
      return out
    end
  end
  local states = c.states
  local refusing, retry = 0, 0
  for i = 1, n do
    local l = limits[i]
    if costs[i] > 0 then
      local r = l.impl.retryAfter(states[i], l, now, costs[i])
      -- The refusing limit is the one that frees last: waiting for it frees them all.
      if r > 0 and (refusing == 0 or r > retry) then refusing, retry = i, r end
    end
  end
  local code = refusing > 0 and 1 or 0
  if code == 0 and MAX_LEASES > 0 then
    local leases = liveLeases(c)
    if #leases >= MAX_LEASES then
      code = 2
      local first = leases[1][2]
      for _, lease in ipairs(leases) do first = math.min(first, lease[2]) end
      retry = math.max(1, first - now)
    end
  end
  if op == 'decide' then
    -- Charged on a copy, so the reply is exactly what acquire would answer.
    local shown = states
    if code == 0 then
      shown = copy(states)
      for i = 1, n do
        if costs[i] > 0 then limits[i].impl.charge(shown[i], limits[i], now, costs[i]) end
      end
    end
    return reply(c, code, retry, refusing, 0, shown)
  end
  -- A waiter's refusal is not its answer: it retries, and nothing is written or counted.
  if op == 'wait' and code ~= 0 then return reply(c, code, retry, refusing, 0, states) end
  c.dirty = true
  touchStats(c)
  local seq = 0
  if code == 0 then
    for i = 1, n do
      if costs[i] > 0 then limits[i].impl.charge(states[i], limits[i], now, costs[i]) end
    end
    c.a = c.a + 1
    seq = c.seq
    c.seq = seq + 1
    local rec = { seq, now, rid, 1 }
    for i = 1, n do rec[4 + i] = costs[i] end
    putReceipt(k, c, rec)
    if MAX_LEASES > 0 then
      local leases = c.leases
      local id = string.format('%d', seq)
      leases[#leases + 1] = { 'cl-' .. id, now + LEASE_MS, rid ~= '' and rid or ('cs-' .. id) }
    end
  else
    c.d = c.d + 1
  end
  local out = reply(c, code, retry, refusing, seq, states)
  if rid ~= '' and (code == 0 or op == 'acquire') then
    if seq == 0 then
      -- A remembered refusal takes a ring slot too, so remembered answers stay bounded.
      seq = c.seq
      c.seq = seq + 1
      putReceipt(k, c, { seq, now, rid, 0 })
    end
    c.sets['i' .. rid] = cmsgpack.pack({ seq, now, out })
    c.m = now + MEMO_MS
  end
  return out
end

-- Notes kept per holder: its next lease call takes them.
local MAX_NOTES = 1024

-- An admission a replica made from its slice (`<holder>l<n>`): only that replica has its receipt.
-- While it holds a grant on the key, a note tells it at its next lease call (within a TTL).
local function noted(c, rid, kind)
  local holder = string.match(rid, '^(%w+%.)l%w+$')
  if holder == nil or c.grants[holder] == nil then return false end
  local list = c.notes[holder] or {}
  if #list >= 2 * MAX_NOTES then return false end
  list[#list + 1], list[#list + 2] = kind, rid
  c.notes[holder] = list
  c.notesDirty, c.dirty = true, true
  return true
end

local function release(k, rid, leaseId)
  local c = state(k)
  if not c.existed then return { 0, now } end
  if MAX_LEASES == 0 and rid ~= '' and field(k, c, 'i' .. rid) == nil and noted(c, rid, 1) then
    return { 1, now }
  end
  if MAX_LEASES > 0 then
    local leases = liveLeases(c)
    for j, lease in ipairs(leases) do
      if (leaseId ~= '' and lease[1] == leaseId) or (leaseId == '' and lease[3] == rid) then
        table.remove(leases, j)
        c.dirty = true
        return { 1, now }
      end
    end
    return { 0, now }
  end
  if rid == '' then return { 0, now } end
  local rec = receiptOf(k, c, rid)
  if rec == nil then return { 0, now } end
  -- Charged before Redis's clock stepped back: where it counts now is not known, so nothing is
  -- given back (never more than was charged).
  for i = 1, n do
    local cost = rec[4 + i]
    if cost > 0 and rec[2] <= now then limits[i].impl.refund(c.states[i], limits[i], rec[2], cost) end
  end
  rec[4] = 0
  c.sets['r' .. string.format('%d', rec[1] % RECEIPTS)] = cmsgpack.pack(rec)
  c.dirty = true
  return { 1, now }
end

-- Settles an admitted request's estimate to its actual cost, or records usage nobody acquired.
local function usage(k, rid, costs)
  local c = state(k)
  local rec = rid ~= '' and c.existed and receiptOf(k, c, rid) or nil
  -- A leased admission: charged whole here; its holder gives its estimate back when told.
  if rec == nil and rid ~= '' and field(k, c, 'i' .. rid) == nil then noted(c, rid, 2) end
  for i = 1, n do
    local l = limits[i]
    local delta = costs[i] - (rec and rec[4 + i] or 0)
    if delta > 0 then
      l.impl.charge(c.states[i], l, now, delta)
    elseif delta < 0 and rec[2] <= now then
      l.impl.refund(c.states[i], l, rec[2], -delta)
    end
  end
  if rec then
    for i = 1, n do rec[4 + i] = costs[i] end
    c.sets['r' .. string.format('%d', rec[1] % RECEIPTS)] = cmsgpack.pack(rec)
  end
  c.dirty = true
  return reply(c, 0, 0, 0, 0, c.states)
end

-- Forgets the counts; leases and remembered answers stay.
local function reset(k)
  local c = state(k)
  if not c.existed then return { 0, now } end
  for i = 1, n do
    c.states[i] = limits[i].impl.fresh(limits[i])
    limits[i].impl.sync(c.states[i], limits[i], now)
  end
  -- Slices outstanding still count: a reset must not let their units be admitted twice.
  for _, g in pairs(c.grants) do
    for i = 1, n do
      if g[4][i] > 0 then limits[i].impl.grant(c.states[i], limits[i], now, g[4][i], g[5][i]) end
    end
  end
  c.w, c.a, c.d = 0, 0, 0
  c.dirty = true
  return { 1, now }
end

local function liveHolders(c, except)
  local count = 0
  for holder in pairs(c.grants) do
    if holder ~= except then count = count + 1 end
  end
  return count
end

-- A replica's capacity lease: its previous grant (prevSeq) is given back with what it left
-- unspent, then a new slice is charged, sized by the replica's demand (want) and capped at a fair
-- share of what remains. All or nothing on `need` (the request waiting for it): a refusal charges
-- nothing and answers as that request would be answered.
local function lease(k, holder, prevSeq, replicas, ttlMs, horizonMs, approved, denied, wants,
                     needs, unspent)
  local c = state(k)
  local states = c.states
  local notes = c.notes[holder] or {}
  if c.notes[holder] then
    c.notes[holder] = nil
    c.notesDirty, c.dirty = true, true
  end
  local old = c.grants[holder]
  if old then
    if old[1] == prevSeq then
      for i = 1, n do
        limits[i].impl.giveBack(states[i], limits[i], old[2], old[5][i], old[4][i], unspent[i])
      end
    else
      -- A grant whose reply never reached the holder: it is never spent, its hold can end.
      for i = 1, n do limits[i].impl.expire(states[i], limits[i], old[2], old[5][i], old[4][i]) end
    end
    c.grants[holder] = nil
    c.grantsDirty, c.dirty = true, true
  end
  if approved > 0 or denied > 0 then
    touchStats(c)
    c.a, c.d = c.a + approved, c.d + denied
    -- Kept for the stats window even when every unit went back.
    c.statsUntil = c.w + limits[1].windowMs
    c.dirty = true
  end
  local wanted = false
  for i = 1, n do
    if wants[i] > 0 then wanted = true end
  end
  local granted, untils = {}, {}
  for i = 1, n do granted[i], untils[i] = 0, 0 end
  if not wanted then return reply(c, 0, 0, 0, 0, states), granted, untils, notes end
  local refusing, retry = 0, 0
  for i = 1, n do
    local l = limits[i]
    local r = 0
    if needs[i] > 0 then r = l.impl.retryAfter(states[i], l, now, needs[i]) end
    if r > 0 and (refusing == 0 or r > retry) then refusing, retry = i, r end
  end
  local share = math.max(replicas, liveHolders(c, holder) + 1)
  local any = false
  for i = 1, n do untils[i] = limits[i].impl.leaseUntil(states[i], limits[i], now, ttlMs, horizonMs) end
  if refusing == 0 then
    for i = 1, n do
      local l = limits[i]
      if wants[i] > 0 then
        local remaining = math.max(0, l.capacity - l.impl.used(states[i], l))
        -- Demand is for the horizon: a slice that must be spent sooner (a window or sub-bucket
        -- about to end) is as much smaller, so little is stranded at the end.
        local want, span = wants[i], untils[i] - now
        if span < horizonMs then want = math.max(needs[i], math.ceil(want * span / horizonMs)) end
        local g = math.min(want, math.max(needs[i], math.floor(remaining / share)), remaining)
        -- Never more than a request of that cost would be admitted for, whatever used() says.
        while g > needs[i] and l.impl.retryAfter(states[i], l, now, g) > 0 do
          g = math.max(needs[i], math.floor(g / 2))
        end
        if g > 0 then
          any = true
          granted[i] = g
        end
      end
    end
    if not any then
      -- Nothing left on some limit this replica needs: refused like a request of one unit.
      for i = 1, n do
        local l = limits[i]
        if wants[i] > 0 then
          local r = l.impl.retryAfter(states[i], l, now, 1)
          if r > 0 and (refusing == 0 or r > retry) then refusing, retry = i, r end
        end
      end
      if refusing == 0 then refusing, retry = 1, 1 end
    end
  end
  if refusing > 0 then
    for i = 1, n do granted[i], untils[i] = 0, 0 end
    -- An empty record for a TTL: the holder still shares the key, and still takes notes of its
    -- admissions with its next call.
    c.grants[holder] = { 0, now, now + ttlMs, granted, untils }
    c.grantsDirty, c.dirty = true, true
    return reply(c, 1, retry, refusing, 0, states), granted, untils, notes
  end
  local expiresAt = now + 1
  for i = 1, n do
    local l = limits[i]
    if granted[i] > 0 then
      l.impl.grant(states[i], l, now, granted[i], untils[i])
      expiresAt = math.max(expiresAt, untils[i])
    end
  end
  local seq = c.seq
  c.seq = seq + 1
  -- Kept a TTL past the last deadline: unspent units may still come back after it (the holder
  -- stops spending at the deadline), and a token bucket's hold ends then at the latest.
  c.grants[holder] = { seq, now, expiresAt + ttlMs, granted, untils }
  c.grantsDirty, c.dirty = true, true
  return reply(c, 0, 0, 0, seq, states), granted, untils, notes
end

-- A leased admission's cost changed after its grant ended (release, usage settle): more is charged
-- now, less is given back where the grant charged it.
local function settle(k, chargedAt, untils, deltas)
  local c = state(k)
  for i = 1, n do
    local l, d = limits[i], deltas[i]
    if d > 0 then
      l.impl.charge(c.states[i], l, now, d)
    elseif d < 0 and chargedAt <= now then
      l.impl.giveBack(c.states[i], l, chargedAt, untils[i], 0, -d)
    end
  end
  c.dirty = true
  return reply(c, 0, 0, 0, 0, c.states)
end

local results = {}
local b = FIRST
for j = 1, #KEYS do
  local op, k = ARGV[b], KEYS[j]
  if op == 'lease' then
    local wants, needs, unspent = {}, {}, {}
    local at = b + 8
    for i = 1, n do
      wants[i] = tonumber(ARGV[at])
      needs[i] = tonumber(ARGV[at + 1])
      unspent[i] = tonumber(ARGV[at + 2])
      at = at + 3
    end
    local out, granted, untils, notes = lease(k, ARGV[b + 1], tonumber(ARGV[b + 2]),
      tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), tonumber(ARGV[b + 5]), tonumber(ARGV[b + 6]),
      tonumber(ARGV[b + 7]), wants, needs, unspent)
    for i = 1, n do
      out[#out + 1] = granted[i]
      out[#out + 1] = untils[i]
    end
    for _, v in ipairs(notes) do out[#out + 1] = v end
    results[j] = out
    b = at
  elseif op == 'settle' then
    local untils, deltas = {}, {}
    for i = 1, n do
      untils[i] = tonumber(ARGV[b + 2 * i])
      deltas[i] = tonumber(ARGV[b + 2 * i + 1])
    end
    results[j] = settle(k, tonumber(ARGV[b + 1]), untils, deltas)
    b = b + 2 + 2 * n
  else
    local rid = ARGV[b + 1]
    local costs = {}
    for i = 1, n do costs[i] = tonumber(ARGV[b + 2 + i]) end
    if op == 'acquire' or op == 'wait' or op == 'decide' then
      results[j] = decide(k, op, rid, costs)
    elseif op == 'release' then
      results[j] = release(k, rid, ARGV[b + 2])
    elseif op == 'usage' then
      results[j] = usage(k, rid, costs)
    elseif op == 'stats' then
      results[j] = reply(state(k), 0, 0, 0, 0, state(k).states)
    elseif op == 'reset' then
      results[j] = reset(k)
    else
      return redis.error_reply('unknown op ' .. op)
    end
    b = b + 3 + n
  end
end

-- State past its idle instant equals a fresh one: the key lives until then, or while a lease or a
-- remembered answer does, so Redis's memory returns to baseline by itself.
for _, k in ipairs(order) do
  local c = open[k]
  if c.dirty then
    local saved, until_ = { c.seq, c.w, c.a, c.d, c.m, c.leases, LAYOUTS }, c.m
    for i = 1, n do
      saved[7 + i] = c.states[i]
      until_ = math.max(until_, limits[i].impl.idleAt(c.states[i], limits[i]))
    end
    for _, lease in ipairs(c.leases) do until_ = math.max(until_, lease[2]) end
    local grants = next(c.grants) ~= nil
    -- A hold keeps a token bucket from refilling: after it ends the deficit still has to refill,
    -- which takes at most as long as it would from now.
    local idleSpan = math.max(0, until_ - now)
    for _, g in pairs(c.grants) do until_ = math.max(until_, g[3] + idleSpan) end
    if c.statsUntil then until_ = math.max(until_, c.statsUntil) end
    if c.grantsDirty then
      if grants then
        c.sets.g = cmsgpack.pack(c.grants)
      else
        c.dels[#c.dels + 1] = 'g'
      end
    end
    if c.notesDirty then
      if next(c.notes) ~= nil then
        c.sets.n = cmsgpack.pack(c.notes)
      else
        c.dels[#c.dels + 1] = 'n'
      end
    end
    if until_ > now then
      if #c.dels > 0 then redis.call('HDEL', k, unpack(c.dels)) end
      local args = { 's', cmsgpack.pack(saved) }
      for f, v in pairs(c.sets) do
        if v then
          args[#args + 1] = f
          args[#args + 1] = v
        end
      end
      redis.call('HSET', k, unpack(args))
      redis.call('PEXPIRE', k, until_ - now)
    elseif c.existed then
      redis.call('DEL', k)
    end
  end
end
return results
