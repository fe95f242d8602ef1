-- Owner transfer, prepended to the scripts that can end the last hold of a reentrant lock
-- (release, rollback, leave): Redis scripts cannot call each other.
-- The queue is a sorted set next to the lock: member '<owner field>:<ticket>', one per waiting
-- acquisition, scored by the server time (ms) after which the entry counts as abandoned, and in
-- the order the entries came (see lock_acquire.lua).
-- The lock hash carries two bookkeeping fields besides its owner: 'relock:queued' (a waiter
-- queued, so the release must look at the queue) and 'relock:granted' (the ticket of the
-- waiter the lock was handed to, so that waiter's own late attempt takes the hold instead of
-- counting a re-entry). Both hold numbers; lock_info.lua skips fields named 'relock:*'.

-- How long a handed-over hold lasts until its waiter claims it (its next attempt, see
-- lock_acquire.lua): the whole delay a waiter that died while next in line costs. The client
-- knows it as Acquisition.GRANT_LEASE_MILLIS.
local RELOCK_GRANT_LEASE_MS = 2000

-- Owner fields of the hash, bookkeeping not counted.
local function relock_owners(key)
    return redis.call('hlen', key) - redis.call('hexists', key, 'relock:queued')
        - redis.call('hexists', key, 'relock:granted')
end

-- The last hold of `key` is gone (by `releaser`): hand it to the first live queued waiter and
-- publish that waiter's ticket, or, with none left, delete the lock and its queue and publish
-- `message` as a plain release does.
local function relock_pass_on(key, channel, queue, releaser, message)
    local time = redis.call('time')
    local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    redis.call('zremrangebyscore', queue, '-inf', now)
    while true do
        local first = redis.call('zrange', queue, 0, 0)
        if #first == 0 then
            break
        end
        local member = first[1]
        redis.call('zrem', queue, member)
        local cut = string.find(member, ':[^:]*$')
        local field = string.sub(member, 1, cut - 1)
        local ticket = string.sub(member, cut + 1)
        -- The releaser's own entry is stale (it acquired meanwhile): never hand it back.
        if field ~= releaser then
            redis.call('del', key)
            if redis.call('zcard', queue) > 0 then
                redis.call('hset', key, field, 1, 'relock:granted', ticket, 'relock:queued', 1)
            else
                redis.call('hset', key, field, 1, 'relock:granted', ticket)
            end
            redis.call('pexpire', key, RELOCK_GRANT_LEASE_MS)
            redis.call('publish', channel, ticket)
            return
        end
    end
    redis.call('del', key, queue)
    redis.call('publish', channel, message)
end

-- Takes one of `field`'s `count` holds away (an undone acquire, a hand-off its waiter gave up):
-- the last hold of the lock gone, it goes to the next queued waiter or is released.
local function relock_drop_hold(key, channel, queue, field, count, message)
    if count > 1 then
        redis.call('hincrby', key, field, -1)
        return
    end
    redis.call('hdel', key, field)
    if relock_owners(key) == 0 then
        if redis.call('hexists', key, 'relock:queued') == 1 then
            relock_pass_on(key, channel, queue, field, message)
        else
            redis.call('del', key)
            redis.call('publish', channel, message)
        end
    end
end
