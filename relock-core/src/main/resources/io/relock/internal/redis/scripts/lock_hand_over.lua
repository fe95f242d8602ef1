-- The hand-over (see Turn.java): a holder's last release gives the lock to another owner of the
-- same client (a thread of the same process waiting for it), without the lock ever being free: the releaser's field goes and
-- the receiver's comes with count 1 and the receiver's lease.
-- KEYS[1] lock key, KEYS[2] ticket queue, KEYS[3] unlock channel; ARGV[1] releaser's owner field, ARGV[2] receiver's
-- owner field, ARGV[3] receiver's lease in ms, ARGV[4] the ticket the receiver queued with ('0'
-- if it did not queue): it leaves the queue; ARGV[5] '1' to count the clients other than Relock's
-- listening on the channel too (see grant.lua's yields), '0' not to; ARGV[6] '1' when this
-- call may repeat one that already took effect.
-- Returns {-1, 0} when the releaser does not hold exactly one hold (no hand-over happened), else
-- how many tickets are queued (of other clients, and this client's if it has one) and how many
-- clients other than Relock's listen (0 unless asked).
local function others()
    if ARGV[5] ~= '1' then
        return 0
    end
    local counts = redis.call('pubsub', 'numsub', KEYS[3], 'relock:' .. KEYS[3])
    return counts[2] - counts[4]
end
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
if count ~= 1 then
    if ARGV[6] == '1' and count == 0 and redis.call('hget', KEYS[1], ARGV[2]) == '1' then
        -- The first run took effect; its reply was lost.
        return {redis.call('zcard', KEYS[2]), others()}
    end
    return {-1, 0}
end
redis.call('hdel', KEYS[1], ARGV[1])
redis.call('hset', KEYS[1], ARGV[2], '1')
redis.call('pexpire', KEYS[1], ARGV[3])
if ARGV[4] ~= '0' then
    redis.call('zrem', KEYS[2], ARGV[2] .. ':' .. ARGV[4])
end
return {redis.call('zcard', KEYS[2]), others()}
