-- A stand-in for migration 0002, which another branch of issue 14 brings
-- (timeouts, partitions, retention). Versions are numbered without gaps, so
-- 0003 cannot be built without a 0002; when the branches meet, the real
-- 0002 replaces this file and nothing else changes.
SELECT 1;
