-- vigil warehouse, migration 10: whose runs and jobs are (issue 30).
--
-- A run's uid, program, argv and start are its first process's, set when
-- vigil-txd makes the run and never changed after (until now every batch
-- described a run again from its earliest process, so a process of
-- another user that claimed an earlier start took the run over). A
-- process whose uid is not its run's is stored, with every process of its
-- uid that names the same key, in a run of its own whose key is
-- "KEY@uidUID" (core/run_key.c, vigil_run_key_apart): asked_run_key keeps
-- the key those processes named, so that the split is visible.
--
-- A job's user, uid, node list, begin and end are what root (the prolog,
-- the SPANK plugin) told once it told them: root_fields says which it
-- told (bits: 1 user_name, 2 uid, 4 node_list, 8 begin_time, 16 end_time),
-- and a notice from the job's user (vigild marks root's, wire JOBS flag
-- VIGIL_WIRE_JOB_FROM_ROOT) changes none of those, nor tells of a job root
-- said is another uid's. Rows from before this migration are taken as
-- told by no one: root's next notice sets them.

ALTER TABLE runs
    ADD COLUMN asked_run_key text;  -- NULL: the run's own key; else the key its processes named

ALTER TABLE jobs
    ADD COLUMN root_fields smallint NOT NULL DEFAULT 0
        CHECK (root_fields BETWEEN 0 AND 31);
