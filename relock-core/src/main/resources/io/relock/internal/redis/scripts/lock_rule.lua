-- What counts as a lock: put before every script that reads a lock whoever holds it or removes
-- it (lock_info, the force-releases, the renewals), so that all of them judge a key by one rule
-- and a force-release never deletes data that no lock wrote.
-- * A holder field is '<clientId>:<threadId>' (a write holder's ends in ':write'), the client id
--   a UUID as Relock and Redisson make them, the thread id an integer (Relock's async owners are
--   negative); its value is a positive hold count.
-- * A lock hash holds at least one holder, and besides holders only 'mode' ('read' or 'write',
--   the read-write lock) and Relock's bookkeeping 'relock:*' fields, which hold integers.
-- * A simple lock is a string holding one holder's '<clientId>:<threadId>' with a lease (its
--   acquire always sets one).
-- * A fair lock's queue is a list whose head is a holder field, its deadlines a sorted set
--   whose first member is one; a fenced lock's token is a string holding a whole number.
-- Anything else is not a lock.

local RELOCK_UUID = string.rep('%x', 8) .. '%-' .. string.rep('%x', 4) .. '%-' .. string.rep('%x', 4) .. '%-'
    .. string.rep('%x', 4) .. '%-' .. string.rep('%x', 12)

-- Whether `field` names a holder: '<uuid>:<threadId>', or with ':write' when `write` is allowed.
local function relock_is_owner(field, write)
    if type(field) ~= 'string' then
        return false
    end
    if string.match(field, '^' .. RELOCK_UUID .. ':%-?%d+$') then
        return true
    end
    return write and string.match(field, '^' .. RELOCK_UUID .. ':%-?%d+:write$') ~= nil
end

local function relock_is_count(value)
    return string.match(value, '^%d+$') ~= nil and tonumber(value) > 0
end

-- The holders of the lock hash `key` as a flat list {field1, count1, ...} and its mode (or
-- false), or nil when the hash holds anything a lock does not write.
local function relock_hash_holders(key)
    local fields = redis.call('hgetall', key)
    local holders = {}
    local mode = false
    for i = 1, #fields, 2 do
        local field, value = fields[i], fields[i + 1]
        if field == 'mode' then
            if value ~= 'read' and value ~= 'write' then
                return nil
            end
            mode = value
        elseif string.sub(field, 1, 7) == 'relock:' then
            if not string.match(value, '^%-?%d+$') then
                return nil
            end
        elseif relock_is_owner(field, true) and relock_is_count(value) then
            holders[#holders + 1] = field
            holders[#holders + 1] = value
        else
            return nil
        end
    end
    if #holders == 0 then
        return nil
    end
    return holders, mode
end

-- What lives under `key`: 'none'; 'hash' with its holders and mode; 'string' (a simple lock)
-- with its holder; or 'other', data that no lock writes.
local function relock_lock(key)
    local layout = redis.call('type', key)['ok']
    if layout == 'none' then
        return 'none'
    elseif layout == 'hash' then
        local holders, mode = relock_hash_holders(key)
        if holders then
            return 'hash', holders, mode
        end
    elseif layout == 'string' then
        local token = redis.call('get', key)
        if relock_is_owner(token, false) and redis.call('pttl', key) > 0 then
            return 'string', {token, '1'}, false
        end
    end
    return 'other'
end

-- Whether `queue` and `deadlines` are a fair lock's waiter queue (either suffices).
local function relock_is_fair_queue(queue, deadlines)
    if redis.call('type', queue)['ok'] == 'list' and relock_is_owner(redis.call('lindex', queue, '0'), false) then
        return true
    end
    return redis.call('type', deadlines)['ok'] == 'zset'
        and relock_is_owner(redis.call('zrange', deadlines, '0', '0')[1], false)
end

-- Whether `key` is a fenced lock's token.
local function relock_is_token(key)
    return redis.call('type', key)['ok'] == 'string' and string.match(redis.call('get', key), '^%d+$') ~= nil
end

-- Where a force-release leaves the holders it removed, for their watchdogs to read: a hash next
-- to the lock (the key naming of LockKeys.ownKey), each removed holder a field whose value is
-- 'forced' (not a count, so the note never reads as a lock), living one watchdog timeout.
local function relock_forced_key(key)
    local open = string.find(key, '{', 1, true)
    local close = open and string.find(key, '}', open + 1, true)
    if close and close > open + 1 then
        return key .. '::relock:forced'
    end
    return '{' .. key .. '}:relock:forced'
end

-- Notes that a force-release removed `holders` (a flat {field, count, ...} list) from `key`; a
-- key of that name that is not such a note (another type, or without expiry) is left alone.
local function relock_mark_forced(key, holders, ttl)
    local marker = relock_forced_key(key)
    local layout = redis.call('type', marker)['ok']
    if layout ~= 'none' and (layout ~= 'hash' or redis.call('pttl', marker) < 0) then
        return
    end
    for i = 1, #holders, 2 do
        redis.call('hset', marker, holders[i], 'forced')
    end
    redis.call('pexpire', marker, ttl)
end

-- Whether a force-release removed holder `field` of `key` lately.
local function relock_was_forced(key, field)
    local marker = relock_forced_key(key)
    return redis.call('type', marker)['ok'] == 'hash' and redis.call('hget', marker, field) == 'forced'
end
