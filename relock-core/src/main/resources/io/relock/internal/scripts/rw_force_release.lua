-- Releases a read-write lock in the given mode, whoever holds it. KEYS[1] lock key, KEYS[2]
-- unlock channel; ARGV[1] unlock message, ARGV[2] 'read' or 'write'. Returns 1 if released.
if redis.call('hget', KEYS[1], 'mode') == ARGV[2] then
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
return 0
