-- Grants, put before the scripts that can end the last hold of a reentrant lock (release,
-- rollback, leave), or where such a script has its '--@prelude' line (see Script.java): Redis
-- scripts cannot call each other. The words (ticket, hand-over, grant, claim, yield, mark) are
-- defined once, in Turn.java.
-- The queue is a sorted set next to the lock: member '<owner field>:<ticket>', one ticket per
-- waiting acquisition, scored by the server time (ms) after which the entry counts as abandoned, and in
-- the order the entries came (see lock_acquire.lua).
-- The lock hash carries two bookkeeping fields besides its owner: 'relock:queued' (a waiter
-- queued, so the release must look at the queue) and 'relock:granted' (the ticket of the
-- waiter the lock was granted to, so that waiter's own late attempt claims the hold instead of
-- counting a re-entry). Both hold numbers; lock_info.lua skips fields named 'relock:*'.
--
-- Yields. Clients that are not Relock's (Redisson's, during a migration) wait on the same
-- channel, hear only the unlock message and never hold a ticket; under steady contention
-- among Relock clients the lock would never be free for them. So a release that would grant the
-- lock, or free it, while such clients listen frees it and announces it instead, and leaves
-- '{name}:yield' behind for RELOCK_YIELD_MS: Relock's attempts find the lock taken until it
-- expires (see lock_acquire.lua), and the other clients, woken later than Relock's, get their
-- turn. The queue stays: Relock's waiters go on in their order once the lock is theirs again.
-- Every Relock client subscribes to 'relock:<channel>' (its mark) in the same command as to the channel,
-- so the difference of the two subscriber counts is exactly the other clients listening.

-- The grant lease: how long a granted hold lasts until its waiter claims it (its next attempt,
-- see lock_acquire.lua): the whole delay a waiter that died while next in line costs. Written
-- once, as Script.GRANT_LEASE_MILLIS, which the client puts here when it loads the script.
local RELOCK_GRANT_LEASE_MS = '@GRANT_LEASE_MILLIS@'

-- How long a yield keeps Relock's attempts off a lock freed for other clients: a woken Redisson
-- waiter takes it within about a third of that here, even on a loaded machine, and a longer
-- yield lets Redisson's threads take it many times over while Relock's wait (MixedFleetTest).
-- If none takes it, Relock's waiters go on after it.
local RELOCK_YIELD_MS = '1'

-- How many clients listen on `channel` that are not Relock clients.
local function relock_others_listening(channel)
    local counts = redis.call('pubsub', 'numsub', channel, 'relock:' .. channel)
    return counts[2] - counts[4]
end

-- Gives clients other than Relock's that listen on `channel` a yield (see above), after a
-- release they heard.
local function relock_yield_to_others(channel, yield)
    if relock_others_listening(channel) > 0 then
        redis.call('set', yield, '1', 'px', RELOCK_YIELD_MS)
    end
end

-- Deletes `key` and announces `message`; if clients other than Relock's heard it, they get a
-- yield. An announcement nobody hears costs nothing more.
local function relock_free(key, channel, yield, message)
    redis.call('del', key)
    if redis.call('publish', channel, message) > 0 then
        relock_yield_to_others(channel, yield)
    end
end

-- Owner fields of the hash, bookkeeping not counted.
local function relock_owners(key)
    return redis.call('hlen', key) - redis.call('hexists', key, 'relock:queued')
        - redis.call('hexists', key, 'relock:granted')
end

-- The last hold of `key` is gone (by `releaser`): grant it to the first live ticket and
-- publish that ticket, or, with none left, delete the lock and its queue and publish
-- `message` as a plain release does. While clients other than Relock's listen, free it for them
-- instead (a yield), keeping the queue.
local function relock_pass_on(key, channel, queue, yield, releaser, message)
    local time = redis.call('time')
    local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    if relock_others_listening(channel) > 0 then
        redis.call('zremrangebyscore', queue, '-inf', now)
        redis.call('del', key)
        redis.call('publish', channel, message)
        redis.call('set', yield, '1', 'px', RELOCK_YIELD_MS)
        return
    end
    -- The entries come in the order of their scores (see lock_acquire.lua), so the abandoned
    -- ones are the first: each is taken off as it comes (ZPOPMIN would save a command per
    -- grant, but is one more for the ACL of Relock's users, see docs/operations.md). The first two
    -- entries are read at once: whether a second one follows tells if a waiter stays queued.
    while true do
        local first = redis.call('zrange', queue, '0', '1', 'withscores')
        if #first == 0 then
            break
        end
        local member = first[1]
        redis.call('zrem', queue, member)
        local cut = string.find(member, ':[^:]*$')
        local field = string.sub(member, 1, cut - 1)
        local ticket = string.sub(member, cut + 1)
        -- An abandoned entry goes. The releaser's own entry is stale (it acquired meanwhile):
        -- never hand it back.
        if tonumber(first[2]) > now and field ~= releaser then
            redis.call('del', key)
            if #first > 2 then
                redis.call('hset', key, field, '1', 'relock:granted', ticket, 'relock:queued', '1')
            else
                redis.call('hset', key, field, '1', 'relock:granted', ticket)
            end
            redis.call('pexpire', key, RELOCK_GRANT_LEASE_MS)
            redis.call('publish', channel, ticket)
            return
        end
    end
    redis.call('del', key, queue)
    redis.call('publish', channel, message)
end

-- Takes one of `field`'s `count` holds away (an undone acquire, a grant its waiter gave up):
-- the last hold of the lock gone, it is granted to the next ticket or released.
local function relock_drop_hold(key, channel, queue, yield, field, count, message)
    if count > 1 then
        redis.call('hincrby', key, field, '-1')
        return
    end
    redis.call('hdel', key, field)
    if relock_owners(key) == 0 then
        if redis.call('hexists', key, 'relock:queued') == 1 then
            relock_pass_on(key, channel, queue, yield, field, message)
        else
            relock_free(key, channel, yield, message)
        end
    end
end
