-- Releases one write hold, or undoes one whose acquire reply was lost. When the writer also
-- holds read locks (a downgrade), the lock stays in 'read' mode for them.
-- KEYS[1] lock key, KEYS[2] unlock channel; ARGV[1] unlock message (wakes every waiter),
-- ARGV[2] lease in ms kept while still held, ARGV[3] the owner's write field, ARGV[4] for an
-- undo the count before the lost acquire, else ''; ARGV[5] the owner's write hold count before
-- this release as the client knows it ('0' if unknown), ARGV[6] '1' when this call may repeat
-- one that already took effect.
-- Returns nil when the owner holds no write lock, -1 when there is nothing to undo, 0 when
-- still held, 1 when released.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[3]) or '0')
if ARGV[4] == '' and ARGV[6] == '1' and count == tonumber(ARGV[5]) - 1 then
    return count > 0 and 0 or 1
end
if ARGV[4] ~= '' and count ~= tonumber(ARGV[4]) + 1 then
    return -1
end
if count == 0 or redis.call('hget', KEYS[1], 'mode') ~= 'write' then
    return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], '-1') > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 0
end
redis.call('hdel', KEYS[1], ARGV[3])
if redis.call('hlen', KEYS[1]) == 1 then
    redis.call('del', KEYS[1])
else
    redis.call('hset', KEYS[1], 'mode', 'read')
end
if redis.call('publish', KEYS[2], ARGV[1]) > 0 then
    -- Redisson's waiters take this message as permits for the threads parked at that moment; one
    -- between its attempt and its park misses it and sleeps until the lease it was told (Redisson's
    -- own race, as after its own write releases). While clients other than Relock's listen (see
    -- grant.lua), an unlock message follows: a permit that waits for that thread.
    local counts = redis.call('pubsub', 'numsub', KEYS[2], 'relock:' .. KEYS[2])
    if counts[2] > counts[4] then
        redis.call('publish', KEYS[2], '0')
    end
end
return 1
