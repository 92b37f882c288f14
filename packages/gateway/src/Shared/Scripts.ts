/**
 * The Lua scripts of the Valkey store. Each runs atomically on the server, which is what keeps the session caps
 * and rate limits exact when replicas race. Times are the caller's Clock in milliseconds; key TTLs only collect
 * garbage and are only ever extended (a short-lived slot must not cut a longer one's set short).
 */

/** Extends `key`'s TTL to at least `ms`. */
const extend = `
local function extend(key, ms)
  if redis.call('PTTL', key) < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end
`

export const slotScripts = {
  /**
   * KEYS: all slots, the owner's slots (sorted sets scored by expiry). ARGV: id, now, expiresAt, total, perUser, ttlMs.
   * Answers `admitted`, `user-full` or `total-full`.
   */
  acquire: `${extend}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 'user-full' end
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 'total-full' end
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
extend(KEYS[1], ARGV[6])
extend(KEYS[2], ARGV[6])
return 'admitted'
`,
  /** KEYS as `acquire`. ARGV: id, now, expiresAt, ttlMs. Renews a live slot only. */
  touch: `${extend}
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not at or tonumber(at) <= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', ARGV[3], ARGV[1])
extend(KEYS[1], ARGV[4])
extend(KEYS[2], ARGV[4])
return 1
`
} as const

/**
 * Token buckets in hashes (`t` tokens, `u` last update), one token from each in turn, stopping at the first that has
 * none: several limits of one request in one round trip, each bucket left as a lone take would leave it. KEYS: the
 * buckets. ARGV: now, then capacity, tokens per ms and ttlMs per bucket. Answers `{0, "0"}` when every token was
 * taken, else `{i, ms until one is back}` for the (1-based) bucket `i` that refused.
 */
export const takeScript = `
local now = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local cap = tonumber(ARGV[3 * i - 1])
  local per = tonumber(ARGV[3 * i])
  local b = redis.call('HMGET', key, 't', 'u')
  local tokens = tonumber(b[1])
  local at = tonumber(b[2])
  if tokens == nil or at == nil then
    tokens = cap
    at = now
  end
  tokens = math.min(cap, tokens + math.max(0, now - at) * per)
  local ok = tokens >= 1
  if ok then tokens = tokens - 1 end
  redis.call('HSET', key, 't', tostring(tokens), 'u', ARGV[1])
  redis.call('PEXPIRE', key, ARGV[3 * i + 1])
  if not ok then return {i, tostring((1 - tokens) / per)} end
end
return {0, '0'}
`

/**
 * One token back into the bucket (a hash as `takeScript` keeps it), up to its capacity: a take that turned out not to
 * count. A bucket that is gone stays gone (a new one starts full). KEYS: the bucket. ARGV: now, capacity, tokens per
 * ms, ttlMs.
 */
export const giveBackScript = `
local b = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then return 0 end
local now = tonumber(ARGV[1])
tokens = math.min(tonumber(ARGV[2]), tokens + math.max(0, now - at) * tonumber(ARGV[3]) + 1)
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`
