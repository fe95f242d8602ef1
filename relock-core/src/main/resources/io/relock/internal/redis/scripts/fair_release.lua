-- Fair release: as the reentrant release, but the release is announced only to the next live
-- waiter, on its own channel. KEYS[1] lock key, KEYS[2] queue, KEYS[3] deadlines;
-- ARGV[1] unlock message, ARGV[2] lease in ms kept while still held, ARGV[3] owner field,
-- ARGV[4] waiter channel prefix, ARGV[5] for an undo the count before the lost acquire, else '';
-- ARGV[6] the owner's hold count before this release as the client knows it ('0' if unknown),
-- ARGV[7] '1' when this call may repeat one that already took effect.
-- Returns nil when not the owner (-1: nothing to undo), 0 when still held, 1 when released.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[3]) or '0')
if ARGV[5] == '' and ARGV[7] == '1' and count == tonumber(ARGV[6]) - 1 then
    -- The first run took effect; answer as it did.
    return count > 0 and 0 or 1
end
if ARGV[5] ~= '' then
    -- An undo also takes the owner out of the queue, wherever the lost attempt left it.
    redis.call('lrem', KEYS[2], '0', ARGV[3])
    redis.call('zrem', KEYS[3], ARGV[3])
    if count ~= tonumber(ARGV[5]) + 1 then
        return -1
    end
end
if count == 0 then
    return nil
end
if redis.call('hincrby', KEYS[1], ARGV[3], '-1') > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 0
end
redis.call('del', KEYS[1])
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local head = redis.call('lindex', KEYS[2], '0')
while head do
    local deadline = tonumber(redis.call('zscore', KEYS[3], head))
    if deadline ~= nil and deadline > now then
        redis.call('publish', ARGV[4] .. ':' .. head, ARGV[1])
        break
    end
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], head)
    head = redis.call('lindex', KEYS[2], '0')
end
return 1
