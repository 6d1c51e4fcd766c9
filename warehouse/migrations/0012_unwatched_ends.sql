-- Issue 30: a process that ended while no vigild ran (vigild was stopped,
-- killed or restarting) had no end in the warehouse, and its run stayed
-- open for ever. A restarted vigild finds it gone and stores its end as a
-- bound: end_time is when a vigild found it gone, end_time_earliest when a
-- vigild last saw it running (wire UNWATCHED_ENDS). end_time_earliest is
-- NULL when the end is exact, as for every process before.
ALTER TABLE processes
    ADD COLUMN end_time_earliest timestamptz,
    ADD CONSTRAINT processes_end_bound CHECK (end_time_earliest <= end_time);

-- A run's end is bounded when its last end is: from the latest of its
-- processes' earliest ends to the latest of their ends (vigil-txd's
-- description of the run).
ALTER TABLE runs
    ADD COLUMN end_time_earliest timestamptz,
    ADD CONSTRAINT runs_end_bound CHECK (end_time_earliest <= end_time);

-- Such a process's report never reached a vigild: what vigild had counted of
-- it, as of the last commit before it ended, is kept instead.
CREATE TABLE process_unwatched_ends (
    process_id        bigint PRIMARY KEY REFERENCES processes,
    activities        bigint NOT NULL,  -- drained from its ring
    dropped           bigint NOT NULL,  -- records its ring had no room for
    seq_gaps          bigint NOT NULL,  -- ring positions missing between records
    cpu_s             double precision, -- its CPU time while vigild watched; NULL: unknown
    energy_j          double precision, -- its share of the node's energy; NULL: unknown
    energy_estimated  boolean NOT NULL,
    energy_uncertain  boolean NOT NULL,
    -- What its ring held after that commit was read (the ring was still
    -- reachable); else it went with the process.
    ring_read         boolean NOT NULL
);
