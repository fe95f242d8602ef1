-- Releases one read hold, or undoes one whose acquire reply was lost.
-- KEYS[1] lock key, KEYS[2] unlock channel, KEYS[3] this owner's timeout prefix, KEYS[4] the
-- lock's timeout prefix; ARGV[1] unlock message, ARGV[2] owner field, ARGV[3] for an undo the
-- count before the lost acquire, else ''; ARGV[4] the owner's read hold count before this
-- release as the client knows it ('0' if unknown), ARGV[5] '1' when this call may repeat one
-- that already took effect.
-- Returns nil when the owner holds no read lock, -1 when there is nothing to undo, 0 when the
-- owner still holds it, 1 when the owner's last read hold is gone.
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0')
if ARGV[3] == '' and ARGV[5] == '1' and count == tonumber(ARGV[4]) - 1 then
    return count > 0 and 0 or 1
end
if ARGV[3] ~= '' and count ~= tonumber(ARGV[3]) + 1 then
    return -1
end
if count == 0 then
    return nil
end
count = redis.call('hincrby', KEYS[1], ARGV[2], '-1')
if count == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (count + 1))
local mine = (count > 0) and 0 or 1
local mode = redis.call('hget', KEYS[1], 'mode')
if redis.call('hlen', KEYS[1]) > 1 then
    -- Others still hold it: the lock lives as long as the longest remaining read lease.
    local longest = -3
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        local held = tonumber(redis.call('hget', KEYS[1], field))
        if held ~= nil then
            for n = held, 1, -1 do
                longest = math.max(longest, redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. n))
            end
        end
    end
    if longest > 0 then
        redis.call('pexpire', KEYS[1], longest)
        return mine
    end
    if mode == 'write' then
        return mine
    end
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return mine
