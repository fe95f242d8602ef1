-- Releases whoever holds the lock: a hash lock of holders without a mode (reentrant, spin,
-- fenced) or a simple lock, as judged by lock_rule.lua. KEYS[1] lock key, KEYS[2] unlock
-- channel; ARGV[1] unlock message, ARGV[2] the layout, 'hash' or 'string', ARGV[3] how long the
-- note for the removed holders' watchdogs lives, in ms.
-- Returns 1 when the lock was deleted, 0 when there was no lock of this layout (nothing there,
-- or another lock type's), -1 when the key holds data no lock writes (it is left untouched).
local layout, holders, mode = relock_lock(KEYS[1])
if layout == 'other' then
    return -1
end
if layout ~= ARGV[2] or mode then
    return 0
end
redis.call('del', KEYS[1])
relock_mark_forced(KEYS[1], holders, ARGV[3])
redis.call('publish', KEYS[2], ARGV[1])
return 1
