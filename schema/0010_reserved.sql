-- Placeholder: migration 10 is another branch's of issue 30. It keeps the
-- numbers without a gap on this branch, so that 0011 builds and is tested
-- here; the merge takes the other branch's file instead of this one.
SELECT 1;
