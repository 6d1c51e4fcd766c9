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
CREATE INDEX tune_trials_stored_at ON tune_trials (stored_at DESC, trial_id DESC);

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
CREATE VIEW tune_comparisons AS
WITH results AS (
    SELECT r.trial_id, r.config,
           to_jsonb(r) - 'trial_id' - 'config'
             || jsonb_build_object(
                  'forwarded_share', CASE WHEN r.observed > 0
                                          THEN r.forwarded::float8 / r.observed ELSE 0 END,
                  'recall', CASE WHEN r.anomalous_cycles > 0
                                 THEN r.caught::float8 / r.anomalous_cycles END) AS figures,
           r.flagged_cycles, r.process_abnormal_cycles, r.node_abnormal_cycles, r.forwarded
      FROM tune_trial_results r
),
adpi_pairs AS (
    SELECT coalesce(a.trial_id, b.trial_id) AS trial_id,
           coalesce(a.level, b.level) AS level,
           coalesce(a.plugin, b.plugin) AS plugin,
           CASE WHEN a.trial_id IS NOT NULL THEN
                jsonb_build_object('cycles', a.cycles, 'issues', a.issues, 'reasons', a.reasons)
           END AS recorded,
           CASE WHEN b.trial_id IS NOT NULL THEN
                jsonb_build_object('cycles', b.cycles, 'issues', b.issues, 'reasons', b.reasons)
           END AS candidate,
           coalesce(a.cycles, 0) AS recorded_cycles,
           coalesce(b.cycles, 0) AS candidate_cycles
      FROM (SELECT * FROM tune_trial_adpis WHERE config = 'recorded') a
      FULL JOIN (SELECT * FROM tune_trial_adpis WHERE config = 'candidate') b
        ON a.trial_id = b.trial_id AND a.level = b.level AND a.plugin = b.plugin
)
SELECT t.trial_id, t.stored_at, t.stored_by, t.recording, t.node,
       t.recorded_until - t.span_s * interval '1 second' AS recorded_from,
       t.recorded_until, t.span_s, t.vigil_version, t.cycles, t.judged_cycles,
       t.processes, t.activities, t.reloads, t.limited, t.ended,
       t.decisions_compared, t.decisions_matched, t.candidate_file, t.truth_file,
       rr.figures AS recorded,
       cr.figures AS candidate,
       (SELECT coalesce(jsonb_agg(jsonb_build_object(
                  'level', p.level, 'plugin', p.plugin,
                  'recorded', p.recorded, 'candidate', p.candidate)
                ORDER BY greatest(p.recorded_cycles, p.candidate_cycles) DESC, p.level, p.plugin),
                '[]'::jsonb)
          FROM adpi_pairs p WHERE p.trial_id = t.trial_id) AS adpis,
       (SELECT coalesce(jsonb_agg(k.change || jsonb_build_object(
                  'measure', k.measure, 'measured_recorded', k.before, 'measured_candidate', k.after)
                ORDER BY k.ord), '[]'::jsonb)
          FROM (SELECT c.change, c.ord,
                       CASE WHEN s LIKE 'adpi.%' THEN 'cycles ADPI ' || substr(s, 6) || ' reported in'
                            WHEN s = 'reasoner.process' THEN 'cycles a process reasoner was abnormal in'
                            WHEN s = 'reasoner.node' THEN 'cycles the node reasoner was abnormal in'
                            WHEN s = 'capture' THEN 'activities forwarded'
                            ELSE 'cycles flagged' END AS measure,
                       CASE WHEN s LIKE 'adpi.%' THEN
                                 (SELECT coalesce(sum(p.recorded_cycles), 0) FROM adpi_pairs p
                                   WHERE p.trial_id = t.trial_id AND p.plugin = substr(s, 6))
                            WHEN s = 'reasoner.process' THEN rr.process_abnormal_cycles
                            WHEN s = 'reasoner.node' THEN rr.node_abnormal_cycles
                            WHEN s = 'capture' THEN rr.forwarded
                            ELSE rr.flagged_cycles END AS before,
                       CASE WHEN cr.trial_id IS NULL THEN NULL
                            WHEN s LIKE 'adpi.%' THEN
                                 (SELECT coalesce(sum(p.candidate_cycles), 0) FROM adpi_pairs p
                                   WHERE p.trial_id = t.trial_id AND p.plugin = substr(s, 6))
                            WHEN s = 'reasoner.process' THEN cr.process_abnormal_cycles
                            WHEN s = 'reasoner.node' THEN cr.node_abnormal_cycles
                            WHEN s = 'capture' THEN cr.forwarded
                            ELSE cr.flagged_cycles END AS after
                  FROM jsonb_array_elements(t.changed_keys) WITH ORDINALITY AS c(change, ord),
                       LATERAL (SELECT c.change ->> 'section' AS s) AS sec) AS k) AS changes
  FROM tune_trials t
  JOIN results rr ON rr.trial_id = t.trial_id AND rr.config = 'recorded'
  LEFT JOIN results cr ON cr.trial_id = t.trial_id AND cr.config = 'candidate';
