-- Relock's lease table on PostgreSQL 15+: one row per lock name. Rename {table} to the name
-- configured with RelockJdbc.Builder.table (default relock_lock); usable as a Flyway or Liquibase
-- migration as it is. A free lock's row stays (its token must keep growing) until it has been
-- free for the configured retention, then a client deletes it.
CREATE TABLE IF NOT EXISTS {table} (
    name       VARCHAR(255)   NOT NULL PRIMARY KEY, -- the lock's name
    owner      VARCHAR(100),                        -- <clientId>:<ownerId> of the holder, NULL when released
    holds      INTEGER        NOT NULL,             -- the holder's hold count
    token      BIGINT         NOT NULL,             -- the fencing token of the latest hold; only grows
    expires_at TIMESTAMPTZ(6) NOT NULL,             -- lease end by the database's clock; release time once free
    waiters_until TIMESTAMPTZ(6),                   -- until when a waiter may be parked: a release announces itself (NOTIFY) only before then
    forced_owner  VARCHAR(100)                      -- the holder the last force-unlock removed, so its renewal can tell why it lost
);
