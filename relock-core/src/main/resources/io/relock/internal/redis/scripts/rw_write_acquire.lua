-- Write lock (Redisson's layout): 'mode' = 'write' and the field '<owner>:write'.
-- KEYS[1] lock key; ARGV[1] lease in ms, ARGV[2] the owner's write field, ARGV[3] the owner's
-- read field, ARGV[4] the owner's write hold count before this call, ARGV[5] '1' when a write
-- hold of this owner that its client does not know of may be taken over (see lock_acquire.lua),
-- ARGV[6] '1' when this call may repeat one that already took effect.
-- Returns nil when acquired, -3 when the owner holds only a read lock (an upgrade,
-- refused: it would wait for itself), else the lock's TTL in ms.
if ARGV[6] == '1' and tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0') == tonumber(ARGV[4]) + 1 then
    redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
    return nil
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], '1')
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    if ARGV[5] == '1' then
        -- A write hold its client no longer knows of (see lock_acquire.lua): a new hold.
        redis.call('hset', KEYS[1], ARGV[2], '1')
    else
        redis.call('hincrby', KEYS[1], ARGV[2], '1')
    end
    redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
    return nil
end
if mode == 'read' and redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
    return -3
end
return redis.call('pttl', KEYS[1])
