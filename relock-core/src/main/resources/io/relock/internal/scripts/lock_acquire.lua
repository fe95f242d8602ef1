-- Reentrant acquire (Redisson's layout): a hash of owner -> hold count, expiring after the lease.
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] owner field; ARGV[3] the owner's hold count
-- before this call; ARGV[4] '1' when this call may repeat one that already took effect.
-- Returns nil when acquired (or re-entered), else the holder's remaining TTL in ms.
if ARGV[4] == '1' and tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0') == tonumber(ARGV[3]) + 1 then
    -- The first run took effect; its reply was lost. The PEXPIRE is this connection's write for WAIT.
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
