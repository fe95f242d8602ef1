-- Reentrant acquire (Redisson's layout): a hash of owner -> hold count, expiring after the lease.
-- KEYS[1] lock key, KEYS[2] ticket queue, KEYS[3] yield (see grant.lua); ARGV[1] lease in ms; ARGV[2] owner
-- field; ARGV[3] '0' when a hold of this owner that its client does not know of may be taken over
-- (no other acquire of the owner is under way and it holds none, see LockDriver.Request), '1' if
-- it counts as a re-entry; ARGV[4] the owner's hold count before this call; ARGV[5] the ticket to
-- queue with when the lock is busy, '0' for an attempt that does not queue (a first attempt, a spin
-- lock, a claim); ARGV[6] the ticket this waiter queued with before, '0' if none: it leaves the
-- queue, and a grant to it is claimed; ARGV[7] '1' when this call may repeat one that already took
-- effect. Trailing '0's may be left out (Script.Arguments): a first lock() sends two arguments,
-- since every argument costs Redis a string and a slot in ARGV at each call.
-- A waiter queues with a new ticket at each attempt, so a ticket names the one attempt that
-- queued it: a grant to it happened after that attempt ran and before the next one did.
-- Returns nil when acquired (or re-entered, or claimed a grant to one of these tickets), else the
-- holder's remaining TTL in ms.
local lease, field = ARGV[1], ARGV[2]
local ticket, queued = ARGV[5] or '0', ARGV[6] or '0'
if ARGV[7] == '1' and tonumber(redis.call('hget', KEYS[1], field) or '0') == tonumber(ARGV[4]) + 1 then
    -- The first run took effect; its reply was lost. The PEXPIRE is this connection's write for WAIT.
    if queued ~= '0' then
        redis.call('hdel', KEYS[1], 'relock:granted')
    end
    redis.call('pexpire', KEYS[1], lease)
    return nil
end
-- One EXISTS tells the common case, a free lock with nothing around it, from the others. An
-- attempt that queues or has queued comes after one that found the lock busy and expects it
-- busy (or granted to it) still: it skips the EXISTS; a free lock then takes the path below
-- for a free lock with Relock waiters queued, which ends the same.
if ticket == '0' and queued == '0' and redis.call('exists', KEYS[1], KEYS[2], KEYS[3]) == 0 then
    redis.call('hincrby', KEYS[1], field, '1')
    redis.call('pexpire', KEYS[1], lease)
    return nil
end
local ttl
local held = true
-- The owner's count, the granted ticket and the note of queued waiters, in one read.
local fields = redis.call('hmget', KEYS[1], field, 'relock:granted', 'relock:queued')
if fields[1] then
    if queued ~= '0' and fields[2] == queued then
        -- A release granted the lock to this waiter before this call arrived: the claim. The
        -- grant is the hold (count 1), not a re-entry on top of it; the lease becomes the caller's.
        redis.call('hdel', KEYS[1], 'relock:granted')
        redis.call('pexpire', KEYS[1], lease)
        return nil
    end
    if ARGV[3] == '1' then
        redis.call('hincrby', KEYS[1], field, '1')
    else
        -- A hold its client no longer knows of (a failover lost its release, or an undo never
        -- arrived): this is a new hold, not a re-entry on top of it, or every later release
        -- would leave one behind and the lock would never be free again.
        redis.call('hset', KEYS[1], field, '1')
    end
    redis.call('pexpire', KEYS[1], lease)
    if queued ~= '0' then
        redis.call('zrem', KEYS[2], field .. ':' .. queued)
    end
    return nil
end
-- PTTL tells a missing key (-2) from a held one (-1 without expiry).
ttl = redis.call('pttl', KEYS[1])
if ttl == -2 then
    ttl = redis.call('pttl', KEYS[3])
    if ttl < 0 then
        -- Free, with Relock waiters queued (another library's release, or a yield that passed):
        -- take it, and note the queue so that the release hands the lock on to them.
        redis.call('hincrby', KEYS[1], field, '1')
        redis.call('pexpire', KEYS[1], lease)
        if queued ~= '0' then
            redis.call('zrem', KEYS[2], field .. ':' .. queued)
        end
        if redis.call('zcard', KEYS[2]) > 0 then
            redis.call('hset', KEYS[1], 'relock:queued', '1')
        end
        return nil
    end
    -- A yield: the lock is free for other clients' waiters; this attempt waits as for a holder
    -- (and must not create the key, which would keep them out).
    held = false
end
if queued ~= '0' then
    redis.call('zrem', KEYS[2], field .. ':' .. queued)
end
if ticket ~= '0' then
    -- Queue a ticket for a grant; it goes stale unless replaced by the next attempt, which comes
    -- at the latest when the holder's lease would run out. The score is when it goes stale, but
    -- never ahead of a ticket already queued: one queued while the lease was short (a grant
    -- lease, a holder's short lease) would otherwise jump the queue, and its client could do so
    -- at every turn while the others starve.
    local time = redis.call('time')
    local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    local deadline = now + math.max(ttl, 0) + 5000
    local last = redis.call('zrange', KEYS[2], '-1', '-1', 'withscores')
    if #last > 0 and tonumber(last[2]) >= deadline then
        deadline = tonumber(last[2]) + 1
    end
    redis.call('zadd', KEYS[2], deadline, field .. ':' .. ticket)
    -- This entry's deadline is the latest of the queue's (see above): the queue lives as long
    -- as it, and no live entry goes with the key before its own deadline.
    redis.call('pexpire', KEYS[2], deadline - now)
    if held and not fields[3] then
        redis.call('hset', KEYS[1], 'relock:queued', '1')
    end
end
return ttl
