-- Holders, remaining lease and type of whatever lock lives under a key, Relock's or Redisson's,
-- judged by lock_rule.lua.
-- KEYS[1] lock key; KEYS[2], KEYS[3] Relock's fair queue and deadlines; KEYS[4] Relock's
-- fencing token (all in one slot, and all under the key prefix, so a user limited to the prefix
-- may read them: Redisson's own fair-lock keys are not, and are left out).
-- Returns {{owner1, count1, ...}, pttl, type}: a hash lock's holders (bookkeeping such as a
-- read-write lock's 'mode' or the grant bookkeeping's 'relock:*' fields is skipped), a simple lock its
-- token. The type: 'read-write' (a mode field), 'fair' (a waiter queue), 'fenced' (a token),
-- 'reentrant', 'simple', 'none' (nothing there) or 'other' (data that no lock writes: no
-- holders, and -2 as for a free lock).
local layout, holders, mode = relock_lock(KEYS[1])
local lockType
if layout == 'other' then
    return {{}, -2, 'other'}
elseif layout == 'string' then
    lockType = 'simple'
elseif mode then
    lockType = 'read-write'
elseif relock_is_fair_queue(KEYS[2], KEYS[3]) then
    lockType = 'fair'
elseif relock_is_token(KEYS[4]) then
    lockType = 'fenced'
elseif layout == 'hash' then
    lockType = 'reentrant'
else
    lockType = 'none'
end
return {holders or {}, redis.call('pttl', KEYS[1]), lockType}
