-- Reentrant release. KEYS[1] lock key, KEYS[2] unlock channel;
-- ARGV[1] unlock message, ARGV[2] lease in ms kept while still held, ARGV[3] owner field.
-- Returns nil when the caller is not a holder, 0 when still held (count decremented),
-- 1 when released (key deleted, waiters notified).
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
