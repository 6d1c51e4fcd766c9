-- A placeholder, on branch i30-lifecycle only: migration 0010 belongs to
-- another branch of issue 30, and migrations are numbered without gaps, so
-- that 0012 (this branch's) applies here. Replaced by the real 0010 when the
-- branches are merged; it changes nothing.
SELECT 1;
