-- Fair (FIFO) acquire. The lock is the reentrant hash; waiters queue in a list and keep a
-- deadline in a sorted set, both under the lock's hash tag. Deadlines use this server's clock,
-- never a client's. A waiter refreshes its deadline with every attempt; one that stops (its
-- process died) is dropped when it reaches the head of the queue and its deadline has passed.
-- Work per call does not grow with the queue: only dead heads are removed, each once.
-- KEYS[1] lock key, KEYS[2] queue, KEYS[3] deadlines;
-- ARGV[1] lease in ms, ARGV[2] owner field, ARGV[3] waiter timeout (threadWaitTime) in ms,
-- ARGV[4] the owner's hold count before this call, ARGV[5] '1' when this call may repeat one
-- that already took effect (queueing twice is harmless; acquiring twice is not).
-- Returns nil when acquired, else how long to wait before trying again, in ms.
if ARGV[5] == '1' and tonumber(redis.call('hget', KEYS[1], ARGV[2]) or '0') == tonumber(ARGV[4]) + 1 then
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
local time = redis.call('time')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], '1')
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
local head = redis.call('lindex', KEYS[2], '0')
while head do
    local deadline = tonumber(redis.call('zscore', KEYS[3], head))
    if deadline ~= nil and deadline > now then
        break
    end
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], head)
    head = redis.call('lindex', KEYS[2], '0')
end
if redis.call('exists', KEYS[1]) == 0 and (head == false or head == ARGV[2]) then
    if head == ARGV[2] then
        redis.call('lpop', KEYS[2])
        redis.call('zrem', KEYS[3], ARGV[2])
    end
    redis.call('hincrby', KEYS[1], ARGV[2], '1')
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if redis.call('zadd', KEYS[3], now + tonumber(ARGV[3]), ARGV[2]) == 1 then
    redis.call('rpush', KEYS[2], ARGV[2])
end
-- Wait for the release message, but come back before this waiter's deadline runs out.
local wait = redis.call('pttl', KEYS[1])
local heartbeat = math.floor(tonumber(ARGV[3]) / 3)
if wait < 0 or wait > heartbeat then
    wait = heartbeat
end
return wait
