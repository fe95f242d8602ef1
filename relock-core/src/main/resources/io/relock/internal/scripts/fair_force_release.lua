-- Releases a fair lock whoever holds it and tells the next waiter. KEYS[1] lock key, KEYS[2]
-- queue; ARGV[1] unlock message, ARGV[2] waiter channel prefix. Returns 1 if a lock was deleted.
if redis.call('del', KEYS[1]) == 0 then
    return 0
end
local head = redis.call('lindex', KEYS[2], 0)
if head then
    redis.call('publish', ARGV[2] .. ':' .. head, ARGV[1])
end
return 1
