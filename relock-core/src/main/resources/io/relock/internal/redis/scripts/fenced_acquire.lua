-- Fenced acquire: the reentrant layout plus a token key that never expires and is incremented
-- each time the lock passes to a new holder. While the lock is held nobody else increments it,
-- so its value is the current holder's token.
-- KEYS[1] lock key, KEYS[2] token key; ARGV[1] lease in ms, ARGV[2] owner field, ARGV[3] the
-- owner's hold count before this call, ARGV[4] '1' when a hold of this owner that its client does
-- not know of may be taken over (see lock_acquire.lua), ARGV[5] '1' when this call may repeat one
-- that took effect.
-- Returns {1, token} when acquired or re-entered, {0, holder's TTL in ms} otherwise.
if ARGV[5] == '1' and tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0') == tonumber(ARGV[3]) + 1 then
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, tonumber(redis.call('get', KEYS[2]))}
end
if redis.call('exists', KEYS[1]) == 0 then
    redis.call('hincrby', KEYS[1], ARGV[2], '1')
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, redis.call('incr', KEYS[2])}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    if ARGV[4] == '1' then
        -- A hold its client no longer knows of (see lock_acquire.lua): a new hold, with a new token.
        redis.call('hset', KEYS[1], ARGV[2], '1')
        redis.call('pexpire', KEYS[1], ARGV[1])
        return {1, redis.call('incr', KEYS[2])}
    end
    redis.call('hincrby', KEYS[1], ARGV[2], '1')
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, tonumber(redis.call('get', KEYS[2]))}
end
return {0, redis.call('pttl', KEYS[1])}
