-- vigil warehouse, migration 9: `vigil tune --store` keeps its comparison
-- (issue 18), for the web UI's thresholds page (GET /api/v1/tune-trials).
--
-- A trial is one `vigil tune --replay FILE [--config CANDIDATE] [--truth
-- TRUTH] --store`: a cycle recording of vigild ([daemon] record) replayed
-- with the configuration it was recorded with ("recorded") and, when one
-- was given, a candidate. Only trials whose recorded replay reproduced
-- vigild's decisions are stored: other figures are not what vigild does.
--
-- A recording's cycle times are the node's CLOCK_MONOTONIC, not wall-clock
-- time: span_s is exact, recorded_until is the file's modification time
-- (when vigild last wrote it), so a wall-clock start is recorded_until less
-- span_s. The recording does not name its node: `vigil tune --node`, else
-- the host `vigil tune` ran on.

CREATE TABLE tune_trials (
    trial_id           bigserial PRIMARY KEY,
    stored_at          timestamptz NOT NULL DEFAULT now(),
    stored_by          text NOT NULL,         -- the user who ran vigil tune
    recording          text NOT NULL,         -- the recording's path as given
    node               text NOT NULL,
    recorded_until     timestamptz NOT NULL,  -- the file's modification time
    span_s             float8 NOT NULL CHECK (span_s >= 0),
    vigil_version      text NOT NULL,         -- of the vigild that recorded
    cycles             bigint NOT NULL CHECK (cycles > 0),
    judged_cycles      bigint NOT NULL,
    processes          bigint NOT NULL,
    activities         bigint NOT NULL,
    reloads            bigint NOT NULL,       -- configurations reloaded while recording
    limited            boolean NOT NULL,      -- stopped at record_max_bytes
    ended              boolean NOT NULL,      -- vigild stopped cleanly
    decisions_compared bigint NOT NULL,       -- the recorded replay against vigild
    decisions_matched  bigint NOT NULL,
    candidate_file     text,                  -- NULL: only the recorded configuration
    truth_file         text,                  -- NULL: no ground truth, no recall
    -- Every key the replay applies ([adpi.*], [reasoner.*], [capture]'s
    -- mode, pre_cycles, post_cycles and max_held) whose effective value
    -- differs between the recording's first configuration and the
    -- candidate: [{"section", "key", "recorded", "candidate"}] (null where
    -- a side lacks the key), by section and key.
    changed_keys       jsonb NOT NULL DEFAULT '[]',
    CHECK (decisions_matched = decisions_compared)
);
-- The pages of one node's trials, newest first (GET /api/v1/tune-trials?node=).
CREATE INDEX tune_trials_node ON tune_trials (node, trial_id DESC);

-- What one configuration of a trial decided over the recording. The truth
-- columns are NULL when the trial has no ground truth.
CREATE TABLE tune_trial_results (
    trial_id                bigint NOT NULL REFERENCES tune_trials ON DELETE CASCADE,
    config                  text NOT NULL CHECK (config IN ('recorded', 'candidate')),
    flagged_cycles          bigint NOT NULL,  -- capture triggered
    process_abnormal_cycles bigint NOT NULL,  -- a process reasoner's own state was abnormal
    node_abnormal_cycles    bigint NOT NULL,  -- the node reasoner's
    own_states              jsonb NOT NULL,   -- {"process": {"warning": n, …}, "node": {…}}
    windows                 bigint NOT NULL,  -- capture windows
    observed                bigint NOT NULL,  -- activities capture saw
    forwarded               bigint NOT NULL,
    dropped                 bigint NOT NULL,
    lost                    bigint NOT NULL,
    anomalous_cycles        bigint,
    caught                  bigint,
    clean_cycles            bigint,
    false_flags             bigint,
    replay_s                float8 NOT NULL,
    PRIMARY KEY (trial_id, config)
);

-- Each ADPI that reported an issue in a configuration's replay: the cycles
-- it did in, its issues, and why ([{"reason": "METRIC HEALTH", "issues",
-- "example": the first issue's message}], most issues first).
CREATE TABLE tune_trial_adpis (
    trial_id bigint NOT NULL,
    config   text NOT NULL,
    level    text NOT NULL CHECK (level IN ('process', 'node')),
    plugin   text NOT NULL,
    cycles   bigint NOT NULL,
    issues   bigint NOT NULL,
    reasons  jsonb NOT NULL,
    PRIMARY KEY (trial_id, config, level, plugin),
    FOREIGN KEY (trial_id, config) REFERENCES tune_trial_results ON DELETE CASCADE
);

-- One row per trial, current (recorded) and candidate side by side: what
-- vigil-web's GET /api/v1/tune-trials returns. "recorded" and "candidate"
-- hold a result's figures (candidate null without one), with
-- forwarded_share and, with truth, recall; "adpis" every ADPI of either
-- side, [{"level", "plugin", "recorded": {"cycles", "issues", "reasons"}
-- or null, "candidate": … }]; "changes" each changed key with what it
-- moved: an [adpi.X] key the cycles ADPI X reported in (both levels), a
-- [reasoner.L] key the cycles reasoner L was abnormal in, a [capture] key
-- the activities forwarded (anything else: the cycles flagged).
--
-- Every part is a LATERAL subquery on one trial's rows (the keys lead with
-- trial_id), so a page of the newest trials reads only those trials: with
-- 10,000 trials, CTEs joined over all trials took 950 s for one page.
CREATE VIEW tune_comparisons AS
SELECT t.trial_id, t.stored_at, t.stored_by, t.recording, t.node,
       t.recorded_until - t.span_s * interval '1 second' AS recorded_from,
       t.recorded_until, t.span_s, t.vigil_version, t.cycles, t.judged_cycles,
       t.processes, t.activities, t.reloads, t.limited, t.ended,
       t.decisions_compared, t.decisions_matched, t.candidate_file, t.truth_file,
       sides.recorded, sides.candidate, adpis.adpis, changes.changes
  FROM tune_trials t
  CROSS JOIN LATERAL (
      SELECT (jsonb_object_agg(r.config, to_jsonb(r) - 'trial_id' - 'config'
                  || jsonb_build_object(
                       'forwarded_share', CASE WHEN r.observed > 0
                                               THEN r.forwarded::float8 / r.observed ELSE 0 END,
                       'recall', CASE WHEN r.anomalous_cycles > 0
                                      THEN r.caught::float8 / r.anomalous_cycles END)))
               AS both_sides
        FROM tune_trial_results r WHERE r.trial_id = t.trial_id
  ) AS results
  CROSS JOIN LATERAL (
      SELECT results.both_sides -> 'recorded' AS recorded,
             results.both_sides -> 'candidate' AS candidate
  ) AS sides
  CROSS JOIN LATERAL (
      SELECT coalesce(jsonb_agg(jsonb_build_object(
                 'level', p.level, 'plugin', p.plugin,
                 'recorded', p.by_side -> 'recorded', 'candidate', p.by_side -> 'candidate')
               ORDER BY p.most DESC, p.level, p.plugin), '[]'::jsonb) AS adpis
        FROM (SELECT a.level, a.plugin, max(a.cycles) AS most,
                     jsonb_object_agg(a.config, jsonb_build_object(
                         'cycles', a.cycles, 'issues', a.issues, 'reasons', a.reasons)) AS by_side
                FROM tune_trial_adpis a WHERE a.trial_id = t.trial_id
               GROUP BY a.level, a.plugin) AS p
  ) AS adpis
  CROSS JOIN LATERAL (
      SELECT coalesce(jsonb_agg(c.change || jsonb_build_object(
                 'measure', m.measure,
                 'measured_recorded', m.recorded,
                 'measured_candidate', CASE WHEN sides.candidate IS NOT NULL THEN m.candidate END)
               ORDER BY c.ord), '[]'::jsonb) AS changes
        FROM jsonb_array_elements(t.changed_keys) WITH ORDINALITY AS c(change, ord)
        CROSS JOIN LATERAL (SELECT c.change ->> 'section' AS s) AS sec
        CROSS JOIN LATERAL (
            SELECT CASE WHEN sec.s LIKE 'adpi.%' THEN 'cycles ADPI ' || substr(sec.s, 6) || ' reported in'
                        WHEN sec.s = 'reasoner.process' THEN 'cycles a process reasoner was abnormal in'
                        WHEN sec.s = 'reasoner.node' THEN 'cycles the node reasoner was abnormal in'
                        WHEN sec.s = 'capture' THEN 'activities forwarded'
                        ELSE 'cycles flagged' END AS measure,
                   CASE WHEN sec.s LIKE 'adpi.%' THEN
                             (SELECT coalesce(sum(a.cycles), 0) FROM tune_trial_adpis a
                               WHERE a.trial_id = t.trial_id AND a.config = 'recorded'
                                 AND a.plugin = substr(sec.s, 6))
                        ELSE (sides.recorded ->> CASE sec.s
                                  WHEN 'reasoner.process' THEN 'process_abnormal_cycles'
                                  WHEN 'reasoner.node' THEN 'node_abnormal_cycles'
                                  WHEN 'capture' THEN 'forwarded'
                                  ELSE 'flagged_cycles' END)::bigint END AS recorded,
                   CASE WHEN sec.s LIKE 'adpi.%' THEN
                             (SELECT coalesce(sum(a.cycles), 0) FROM tune_trial_adpis a
                               WHERE a.trial_id = t.trial_id AND a.config = 'candidate'
                                 AND a.plugin = substr(sec.s, 6))
                        ELSE (sides.candidate ->> CASE sec.s
                                  WHEN 'reasoner.process' THEN 'process_abnormal_cycles'
                                  WHEN 'reasoner.node' THEN 'node_abnormal_cycles'
                                  WHEN 'capture' THEN 'forwarded'
                                  ELSE 'flagged_cycles' END)::bigint END AS candidate
        ) AS m
  ) AS changes
 WHERE results.both_sides ? 'recorded';
