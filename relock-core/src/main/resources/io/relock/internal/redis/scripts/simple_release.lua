-- Compare-and-delete: only the owner's token releases. KEYS[1] lock key, KEYS[2] unlock channel;
-- ARGV[1] unlock message, ARGV[2] owner token, ARGV[3] '1' when this call may repeat one that
-- already took effect. Returns 1 when released, nil when not the owner.
if redis.call('get', KEYS[1]) == ARGV[2] then
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
if ARGV[3] == '1' then
    -- The first run deleted it; answer as it did.
    return 1
end
return nil
