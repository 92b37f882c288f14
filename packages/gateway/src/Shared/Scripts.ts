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
 * A token bucket in a hash (`t` tokens, `u` last update). KEYS: the bucket. ARGV: capacity, tokens per ms, now,
 * ttlMs. Answers `{1, "0"}` when a token was taken, else `{0, ms until one is back}`.
 */
export const takeScript = `
local cap = tonumber(ARGV[1])
local per = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = cap
  at = now
end
tokens = math.min(cap, tokens + math.max(0, now - at) * per)
local ok = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if ok == 1 then return {1, '0'} end
return {0, tostring((1 - tokens) / per)}
`
