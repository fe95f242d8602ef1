-- Watchdog renewal of many locks in one call. KEYS[i] lock key whose owner field is ARGV[i + 1];
-- ARGV[1] lease in ms. Returns one entry per key: 1 renewed, 0 the owner no longer holds it,
-- 2 it does not because a force-release removed it lately (see lock_rule.lua).
local renewed = {}
for i, key in ipairs(KEYS) do
    if redis.call('hexists', key, ARGV[i + 1]) == 1 then
        redis.call('pexpire', key, ARGV[1])
        renewed[i] = 1
    else
        renewed[i] = relock_was_forced(key, ARGV[i + 1]) and 2 or 0
    end
end
return renewed
