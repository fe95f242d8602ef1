-- Holders and remaining lease of any Relock lock type. KEYS[1] lock key.
-- Returns {{owner1, count1, owner2, count2, ...}, pttl}: hash locks list their numeric fields
-- (bookkeeping fields such as a read-write lock's 'mode' are skipped); plain locks their token.
local holders = {}
local kind = redis.call('type', KEYS[1])['ok']
if kind == 'hash' then
    local fields = redis.call('hgetall', KEYS[1])
    for i = 1, #fields, 2 do
        if tonumber(fields[i + 1]) ~= nil then
            holders[#holders + 1] = fields[i]
            holders[#holders + 1] = fields[i + 1]
        end
    end
elseif kind == 'string' then
    holders = {redis.call('get', KEYS[1]), '1'}
end
return {holders, redis.call('pttl', KEYS[1])}
