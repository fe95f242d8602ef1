-- Relock's lease table on MySQL 8+ and MariaDB 10.11+: one row per lock name. Rename {table} to
-- the name configured with RelockJdbc.Builder.table (default relock_lock); usable as a Flyway or
-- Liquibase migration as it is. A free lock's row stays (its token must keep growing) until it
-- has been free for the configured retention, then a client deletes it. Names compare byte for
-- byte (utf8mb4_bin), as on Redis; times are UTC in DATETIME(6), never TIMESTAMP.
CREATE TABLE IF NOT EXISTS {table} (
    name       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    owner      VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin,
    holds      INT         NOT NULL,
    token      BIGINT      NOT NULL,
    expires_at DATETIME(6) NOT NULL,
    forced_owner VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin
) ENGINE = InnoDB;
