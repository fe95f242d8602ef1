-- A waiter of a reentrant lock stops waiting (timeout, interrupt, client close): its queue entry
-- goes, and a hand-off that reached it meanwhile is passed on, so nothing stays granted to an
-- acquisition that reported failure.
-- KEYS[1] lock key, KEYS[2] unlock channel, KEYS[3] hand-off queue;
-- ARGV[1] owner field, ARGV[2] the waiter's ticket, ARGV[3] unlock message.
-- Returns 1 when a hand-off to this waiter was passed on, else 0.
redis.call('zrem', KEYS[3], ARGV[1] .. ':' .. ARGV[2])
if redis.call('hget', KEYS[1], 'relock:granted') ~= ARGV[2] then
    return 0
end
redis.call('hdel', KEYS[1], 'relock:granted')
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
if count == 0 then
    return 0
end
if count > 1 then
    redis.call('hincrby', KEYS[1], ARGV[1], -1)
    return 1
end
redis.call('hdel', KEYS[1], ARGV[1])
if relock_owners(KEYS[1]) == 0 then
    if redis.call('hexists', KEYS[1], 'relock:queued') == 1 then
        relock_pass_on(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[3])
    else
        redis.call('del', KEYS[1])
        redis.call('publish', KEYS[2], ARGV[3])
    end
end
return 1
