-- A waiter of a reentrant lock stops waiting (timeout, interrupt, client close): its ticket
-- leaves the queue, and a grant that reached it meanwhile is passed on, so nothing stays granted to an
-- acquisition that reported failure.
-- KEYS[1] lock key, KEYS[2] unlock channel, KEYS[3] ticket queue, KEYS[4] yield;
-- ARGV[1] owner field, ARGV[2] the waiter's ticket, ARGV[3] unlock message.
-- Returns 1 when a grant to this waiter was passed on, else 0.
redis.call('zrem', KEYS[3], ARGV[1] .. ':' .. ARGV[2])
if redis.call('hget', KEYS[1], 'relock:granted') ~= ARGV[2] then
    return 0
end
redis.call('hdel', KEYS[1], 'relock:granted')
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
if count == 0 then
    return 0
end
relock_drop_hold(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], count, ARGV[3])
return 1
