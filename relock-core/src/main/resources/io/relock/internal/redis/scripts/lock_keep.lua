-- A release with a minimum hold (DistributedLock.unlock(Duration)): the owner's last hold is
-- not released but kept until its lease ends, the lease set to what is left of the minimum.
-- KEYS[1] lock key, KEYS[2] its unlock channel; ARGV[1] ms left, ARGV[2] owner field, ARGV[3]
-- the layout, 'hash' (owners' hold counts) or 'string' (a simple lock's token), ARGV[4] the
-- unlock message. Only while the owner holds it; a repeat sets the same lease again.
-- Publishes the unlock message so that parked waiters look again and park until the new, often
-- shorter, expiry instead of the one they saw; none of them gets the lock before it.
-- Returns 1 kept, 0 the owner no longer holds it, 2 not because a force-release removed it lately.
local held
if ARGV[3] == 'hash' then
    held = redis.call('hexists', KEYS[1], ARGV[2]) == 1
else
    held = redis.call('get', KEYS[1]) == ARGV[2]
end
if not held then
    return relock_was_forced(KEYS[1], ARGV[2]) and 2 or 0
end
redis.call('pexpire', KEYS[1], ARGV[1])
redis.call('publish', KEYS[2], ARGV[4])
return 1
