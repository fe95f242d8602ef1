-- Releases a fair lock whoever holds it and tells the next waiter; the lock is judged by
-- lock_rule.lua. KEYS[1] lock key, KEYS[2] queue; ARGV[1] unlock message, ARGV[2] waiter
-- channel prefix, ARGV[3] how long the note for the removed holders' watchdogs lives, in ms.
-- Returns 1 if a lock was deleted, 0 when there was none, -1 when the key holds data no lock
-- writes (it is left untouched).
local layout, holders, mode = relock_lock(KEYS[1])
if layout == 'other' then
    return -1
end
if layout ~= 'hash' or mode then
    return 0
end
redis.call('del', KEYS[1])
relock_mark_forced(KEYS[1], holders, ARGV[3])
local head = redis.call('type', KEYS[2])['ok'] == 'list' and redis.call('lindex', KEYS[2], '0')
if relock_is_owner(head, false) then
    redis.call('publish', ARGV[2] .. ':' .. head, ARGV[1])
end
return 1
