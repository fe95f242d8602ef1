-- Reentrant acquire (Redisson's layout): a hash of owner -> hold count, expiring after the lease.
-- KEYS[1] lock key; ARGV[1] lease in ms; ARGV[2] owner field.
-- Returns nil when acquired (or re-entered), else the holder's remaining TTL in ms.
if (redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
