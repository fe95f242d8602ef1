-- Reentrant release. KEYS[1] lock key, KEYS[2] unlock channel, KEYS[3] ticket queue, KEYS[4] yield;
-- ARGV[1] owner field, ARGV[2] lease in ms kept while still held, '0' when the client knows of this
-- hold only (a count Redis has above it then keeps its expiry), ARGV[3] the owner's hold count
-- after this call as the client knows it ('-1' if unknown), ARGV[4] unlock message, ARGV[5] '1'
-- when this call may repeat one that already took effect. Trailing '0's may be left out
-- (Script.Arguments): the release of a last hold sends the field alone.
-- Returns nil when the caller is not a holder, 0 when still held (count decremented),
-- 1 when released (granted to the next ticket, or deleted with waiters notified).
-- The uncontended release runs 3 commands (HMGET, DEL, PUBLISH), all above the grant functions
-- (grant.lua, put at the '--@prelude' line), so it does not even define them: the note of queued
-- waiters comes with the owner's count, and a last hold is not counted down, because every
-- path that ends it deletes the key (freed, granted anew, or yielded).
local field, lease, message = ARGV[1], ARGV[2] or '0', ARGV[4] or '0'
local held = redis.call('hmget', KEYS[1], field, 'relock:queued')
local count = tonumber(held[1] or '0')
if ARGV[5] == '1' and count == tonumber(ARGV[3]) then
    -- The first run took effect; answer as it did.
    return count > 0 and 0 or 1
end
if count == 0 then
    return nil
end
if count > 1 then
    redis.call('hincrby', KEYS[1], field, '-1')
    if lease ~= '0' then
        redis.call('pexpire', KEYS[1], lease)
    end
    return 0
end
if not held[2] then
    -- No waiter ever queued: free it; only a release somebody heard may owe a yield.
    redis.call('del', KEYS[1])
    if redis.call('publish', KEYS[2], message) == 0 then
        return 1
    end
end
--@prelude
if held[2] then
    relock_pass_on(KEYS[1], KEYS[2], KEYS[3], KEYS[4], field, message)
else
    relock_yield_to_others(KEYS[2], KEYS[4])
end
return 1
