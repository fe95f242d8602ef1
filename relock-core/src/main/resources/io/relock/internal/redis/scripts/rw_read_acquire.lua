-- Read lock (Redisson's layout): the hash has 'mode' = 'read' | 'write' and one field per
-- holder with its hold count; every read hold also has its own timeout key
-- <prefix>:<n>, so that a crashed reader stops counting once its own lease is over.
-- KEYS[1] lock key, KEYS[2] this owner's timeout prefix;
-- ARGV[1] lease in ms, ARGV[2] owner field, ARGV[3] the owner's write field, ARGV[4] the
-- owner's read hold count before this call, ARGV[5] '1' when this call may repeat one that
-- already took effect.
-- Returns nil when acquired, else the lock's TTL in ms.
if ARGV[5] == '1' and tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0') == tonumber(ARGV[4]) + 1 then
    redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
    return nil
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], '1')
    redis.call('set', KEYS[2] .. ':1', '1', 'px', ARGV[1])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
    local count = redis.call('hincrby', KEYS[1], ARGV[2], '1')
    redis.call('set', KEYS[2] .. ':' .. count, '1', 'px', ARGV[1])
    redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
    return nil
end
return redis.call('pttl', KEYS[1])
