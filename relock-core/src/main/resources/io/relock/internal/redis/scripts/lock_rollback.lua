-- Undo an acquire whose outcome the caller never learnt, but only if it took effect: the owner's
-- count is then exactly one more than before the attempt (acquires never apply twice, see
-- lock_acquire.lua). A hold handed over or granted to the caller counts as its acquire. Running this again
-- changes nothing more.
-- KEYS[1] lock key, KEYS[2] unlock channel, KEYS[3] ticket queue, KEYS[4] yield;
-- ARGV[1] owner field, ARGV[2] hold count before the attempt, ARGV[3] unlock message.
-- Returns 1 when an applied acquire was undone, 0 when there was nothing to undo.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
if count ~= tonumber(ARGV[2]) + 1 then
    return 0
end
relock_drop_hold(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], count, ARGV[3])
return 1
