-- Holders, remaining lease and type of whatever lock lives under a key, Relock's or Redisson's.
-- KEYS[1] lock key; KEYS[2], KEYS[3] Relock's fair queue and deadlines; KEYS[4] Relock's
-- fencing token (all in one slot, and all under the key prefix, so a user limited to the prefix
-- may read them: Redisson's own fair-lock keys are not, and are left out).
-- Returns {{owner1, count1, ...}, pttl, type}: hash locks list their numeric fields (bookkeeping
-- such as a read-write lock's 'mode' or the hand-off's 'relock:*' fields is skipped), plain
-- locks their token. The type is told from the data: 'read-write' (a mode field), 'fair' (a
-- waiter queue), 'fenced' (a token key), 'reentrant', 'simple' (a string), 'none' (nothing
-- there) or 'other' (a key no lock writes).
local holders = {}
local kind = redis.call('type', KEYS[1])['ok']
local queued = redis.call('exists', KEYS[2], KEYS[3]) > 0
local fenced = redis.call('exists', KEYS[4]) > 0
local lockType
if kind == 'hash' then
    local fields = redis.call('hgetall', KEYS[1])
    local mode = false
    local foreign = false
    for i = 1, #fields, 2 do
        if string.sub(fields[i], 1, 7) == 'relock:' then
            -- a reentrant lock's hand-off bookkeeping (see handoff.lua), not a holder
        elseif tonumber(fields[i + 1]) ~= nil then
            holders[#holders + 1] = fields[i]
            holders[#holders + 1] = fields[i + 1]
        elseif fields[i] == 'mode' then
            mode = true
        else
            foreign = true
        end
    end
    if foreign then
        lockType = 'other'
    elseif mode then
        lockType = 'read-write'
    elseif #holders == 0 then
        lockType = 'other'
    elseif queued then
        lockType = 'fair'
    elseif fenced then
        lockType = 'fenced'
    else
        lockType = 'reentrant'
    end
elseif kind == 'string' then
    holders = {redis.call('get', KEYS[1]), '1'}
    lockType = 'simple'
elseif kind == 'none' then
    if queued then
        lockType = 'fair'
    elseif fenced then
        lockType = 'fenced'
    else
        lockType = 'none'
    end
else
    lockType = 'other'
end
return {holders, redis.call('pttl', KEYS[1]), lockType}
