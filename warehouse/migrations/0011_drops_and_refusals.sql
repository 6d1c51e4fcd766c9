-- Issue 30: what vigild's uplink and spool dropped of the activities it
-- forwarded (at memory_max_bytes, at spool_max_bytes, a batch lost), as
-- the batches' DROPS items (wire type 16) tell it; and the batches
-- vigil-txd refused because their node id belongs to another key.

-- Each vigild counts per process from its start, and names its count by
-- `counter` (the first sequence number it took): a later batch's figure of
-- a counter is never lower, so the highest is kept whatever order batches
-- come in, and a process's drops are the sum over the counters (a process
-- that lived through a restart of vigild has two). Keyed as processes are,
-- by node, pid and monotonic start, with no reference to them: a drop can
-- be told before the process's own row is stored, or without it, when the
-- batches that described it were the ones dropped.
CREATE TABLE uplink_drops (
    node_id            bigint NOT NULL,
    pid                integer NOT NULL,
    start_monotonic_ns bigint NOT NULL,
    counter            bigint NOT NULL,
    activities         bigint NOT NULL CHECK (activities >= 0),
    batches            bigint NOT NULL CHECK (batches >= 0),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (node_id, pid, start_monotonic_ns, counter)
);

-- The process's figure: the sum of its counters, kept by the two triggers
-- below whichever of its row and its counts comes first.
ALTER TABLE processes ADD COLUMN uplink_dropped_activities bigint NOT NULL DEFAULT 0;

CREATE FUNCTION vigil_uplink_dropped(node bigint, process_pid integer, start_ns bigint)
RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(activities), 0)::bigint FROM uplink_drops
     WHERE node_id = node AND pid = process_pid AND start_monotonic_ns = start_ns
$$;

CREATE FUNCTION vigil_uplink_drops_to_process() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    d uplink_drops;
BEGIN
    IF TG_OP = 'DELETE' THEN d := OLD; ELSE d := NEW; END IF;
    UPDATE processes
       SET uplink_dropped_activities =
           vigil_uplink_dropped(d.node_id, d.pid, d.start_monotonic_ns)
     WHERE node_id = d.node_id AND pid = d.pid AND start_monotonic_ns = d.start_monotonic_ns;
    RETURN NULL;
END
$$;
CREATE TRIGGER uplink_drops_to_process AFTER INSERT OR UPDATE OR DELETE ON uplink_drops
    FOR EACH ROW EXECUTE FUNCTION vigil_uplink_drops_to_process();

CREATE FUNCTION vigil_process_uplink_dropped() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.uplink_dropped_activities :=
        vigil_uplink_dropped(NEW.node_id, NEW.pid, NEW.start_monotonic_ns);
    RETURN NEW;
END
$$;
CREATE TRIGGER process_uplink_dropped BEFORE INSERT ON processes
    FOR EACH ROW EXECUTE FUNCTION vigil_process_uplink_dropped();

-- A run's figure: the sum over its processes, as the run's last column.
CREATE OR REPLACE VIEW run_overview AS
SELECT r.run_id, r.run_key, j.scheduler_job_id, r.program, r.argv, r.uid,
       r.start_time, r.end_time, r.exit_status,
       count(DISTINCT p.process_id) AS processes,
       count(DISTINCT p.node_id) AS nodes,
       sum(s.calls) AS calls,
       sum(s.bytes_read) AS bytes_read,
       sum(s.bytes_written) AS bytes_written,
       sum(s.energy_j) AS energy_j,
       (SELECT count(*) FROM captures c JOIN processes cp USING (process_id)
         WHERE cp.run_id = r.run_id) AS captures,
       (SELECT coalesce(sum(dp.uplink_dropped_activities), 0)::bigint FROM processes dp
         WHERE dp.run_id = r.run_id) AS uplink_dropped_activities
  FROM runs r
  LEFT JOIN jobs j USING (job_id)
  LEFT JOIN processes p USING (run_id)
  LEFT JOIN run_summaries s USING (process_id)
 GROUP BY r.run_id, j.scheduler_job_id;

-- Node ids are trusted on first use (node_keys, migration 3): another key
-- that claimed a node id first gets the real node's batches all refused.
-- Each refusal for a node's key is counted on its row, with the key it
-- came with, when and why, so that `vigil node keys` shows a wrong claim
-- and its cost, and an administrator can undo it (--forget, --set).
ALTER TABLE node_keys
    ADD COLUMN refused_batches bigint NOT NULL DEFAULT 0,
    ADD COLUMN refused_key text CHECK (refused_key IS NULL OR length(refused_key) = 40),
    ADD COLUMN refused_at timestamptz,
    ADD COLUMN refused_reason text;
