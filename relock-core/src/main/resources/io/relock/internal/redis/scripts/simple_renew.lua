-- Watchdog renewal of many plain locks. KEYS[i] lock key held with token ARGV[i + 1];
-- ARGV[1] lease in ms. Returns one entry per key: 1 renewed, 0 no longer held by that token,
-- 2 not because a force-release removed it lately (see lock_rule.lua).
local renewed = {}
for i, key in ipairs(KEYS) do
    if redis.call('get', key) == ARGV[i + 1] then
        redis.call('pexpire', key, ARGV[1])
        renewed[i] = 1
    else
        renewed[i] = relock_was_forced(key, ARGV[i + 1]) and 2 or 0
    end
end
return renewed
