-- Release whoever holds the lock. KEYS[1] lock key, KEYS[2] unlock channel; ARGV[1] unlock message.
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
return 0
