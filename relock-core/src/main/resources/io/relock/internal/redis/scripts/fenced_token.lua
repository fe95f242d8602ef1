-- The current holder's fencing token, or nil when the lock is free.
-- KEYS[1] lock key, KEYS[2] token key.
if redis.call('exists', KEYS[1]) == 0 then
    return nil
end
return tonumber(redis.call('get', KEYS[2]))
