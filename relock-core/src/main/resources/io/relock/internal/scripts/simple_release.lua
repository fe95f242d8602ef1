-- Compare-and-delete: only the owner's token releases. KEYS[1] lock key, KEYS[2] unlock channel;
-- ARGV[1] unlock message, ARGV[2] owner token. Returns 1 when released, nil when not the owner.
if redis.call('get', KEYS[1]) == ARGV[2] then
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
return nil
