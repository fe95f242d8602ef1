-- Undo an acquire whose outcome the caller never learnt, but only if it took effect: the owner's
-- count is then exactly one more than before the attempt (acquires never apply twice, see
-- lock_acquire.lua). Running this again changes nothing more.
-- KEYS[1] lock key, KEYS[2] unlock channel;
-- ARGV[1] owner field, ARGV[2] hold count before the attempt, ARGV[3] unlock message.
-- Returns 1 when an applied acquire was undone, 0 when there was nothing to undo.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
if count ~= tonumber(ARGV[2]) + 1 then
    return 0
end
if count > 1 then
    redis.call('hincrby', KEYS[1], ARGV[1], -1)
    return 1
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) == 0 then
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], ARGV[3])
end
return 1
