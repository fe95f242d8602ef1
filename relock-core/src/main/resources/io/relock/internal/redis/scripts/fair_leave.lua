-- A waiter gives up (timeout, interrupt): it leaves the queue, and if the lock is free the new
-- head is told, so the queue does not stall behind a waiter that left.
-- KEYS[1] lock key, KEYS[2] queue, KEYS[3] deadlines; ARGV[1] unlock message,
-- ARGV[2] owner field, ARGV[3] waiter channel prefix. Returns 1 if it was queued.
local removed = redis.call('lrem', KEYS[2], '0', ARGV[2])
redis.call('zrem', KEYS[3], ARGV[2])
if removed > 0 and redis.call('exists', KEYS[1]) == 0 then
    local head = redis.call('lindex', KEYS[2], '0')
    if head then
        redis.call('publish', ARGV[3] .. ':' .. head, ARGV[1])
    end
end
return removed > 0 and 1 or 0
