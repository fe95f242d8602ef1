-- Watchdog renewal of many read holds: each owner's own timeout keys, and the lock key for at
-- least the lease. KEYS[i] lock key whose reader field is ARGV[i + 1]; ARGV[1] lease in ms.
-- Returns one entry per key: 1 renewed, 0 that owner holds no read lock there any more, 2 not
-- because a force-release removed it lately (see lock_rule.lua).
local renewed = {}
for i, key in ipairs(KEYS) do
    local field = ARGV[i + 1]
    local count = tonumber(redis.call('hget', key, field))
    if count ~= nil and redis.call('hget', key, 'mode') ~= false then
        local prefix = (string.find(key, '{', 1, true) and key or ('{' .. key .. '}')) .. ':' .. field .. ':rwlock_timeout:'
        for n = count, 1, -1 do
            redis.call('pexpire', prefix .. n, ARGV[1])
        end
        redis.call('pexpire', key, math.max(redis.call('pttl', key), tonumber(ARGV[1])))
        renewed[i] = 1
    else
        renewed[i] = relock_was_forced(key, ARGV[i + 1]) and 2 or 0
    end
end
return renewed
