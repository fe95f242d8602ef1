-- The seeds' plain lock: SET key owner NX PX lease. Not reentrant.
-- KEYS[1] lock key; ARGV[1] lease in ms, ARGV[2] owner token, ARGV[3] '1' when this call may
-- repeat one that already took effect.
-- Returns nil when acquired, -3 when the caller already holds it, else the holder's TTL in ms.
if redis.call('set', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[1]) then
    return nil
end
if redis.call('get', KEYS[1]) == ARGV[2] then
    if ARGV[3] == '1' then
        -- The first run took effect; its reply was lost.
        redis.call('pexpire', KEYS[1], ARGV[1])
        return nil
    end
    return -3
end
return redis.call('pttl', KEYS[1])
