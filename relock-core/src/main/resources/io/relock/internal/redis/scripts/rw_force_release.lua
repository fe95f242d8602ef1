-- Releases a read-write lock in the given mode, whoever holds it; the lock is judged by
-- lock_rule.lua. KEYS[1] lock key, KEYS[2] unlock channel; ARGV[1] unlock message, ARGV[2]
-- 'read' or 'write', ARGV[3] how long the note for the removed holders' watchdogs lives, in ms.
-- Returns 1 if released, 0 when it is not held in that mode, -1 when the key holds data no lock
-- writes (it is left untouched).
local layout, holders, mode = relock_lock(KEYS[1])
if layout == 'other' then
    return -1
end
if mode ~= ARGV[2] then
    return 0
end
redis.call('del', KEYS[1])
relock_mark_forced(KEYS[1], holders, ARGV[3])
redis.call('publish', KEYS[2], ARGV[1])
return 1
