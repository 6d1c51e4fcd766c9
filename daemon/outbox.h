/* vigild — each cycle's batch for vigil-txd (outbox.c). */
#ifndef VIGILD_OUTBOX_H
#define VIGILD_OUTBOX_H

#include <stdint.h>
#include <glib.h>

#include "vigil/metric.h"
#include "verdicts.h"

struct vigild_uplink;       /* uplink.h */
struct vigild_jobs;         /* jobs.h */
struct vigild_processes;    /* processes.h */
struct vigild_process;      /* processes.h */
struct vigild_rollup;       /* rollup.h */
struct vigild_reasoning;    /* reasoning.h */
struct vigild_tick_samples; /* tick_samples.h */

/* Built only when [uplink] endpoint is set. Through a cycle it gathers what
 * the warehouse keeps (the activities capture forwards with their files'
 * names, the forwarded cycles' statistics, closed windows and roll-ups);
 * at the cycle's end it adds the reasoners' states and issues and the
 * processes, and hands the uplink one BATCH, or several of about 16 MiB
 * each, every one self-contained: it describes every process, metric and
 * file its items name. */

struct vigild_outbox;
struct vigil_wire_window;

struct vigild_outbox_stats {
    uint64_t batches; /* handed to the uplink */
    uint64_t bytes;
    uint64_t items_skipped; /* items the wire cannot carry, left out (logged) */
    uint64_t names_missing; /* activities whose file's name never came: sent without a file */
};

/* The jobs whose notices go in each cycle's batch (jobs.h). */
void vigild_outbox_set_jobs(struct vigild_outbox *o, struct vigild_jobs *jobs);
/* `hostname`: the node's name in its batches and fresh run keys (NULL: the
 * machine's). */
struct vigild_outbox *vigild_outbox_new(struct vigild_uplink *uplink, uint64_t node_id,
                                        const char *hostname, const vigil_metric_catalog *catalog,
                                        const struct vigild_processes *processes,
                                        const struct vigild_rollup *rollup);
void vigild_outbox_free(struct vigild_outbox *o);
/* A process registered, or ended: it is described in this cycle's batch. */
void vigild_outbox_process_started(struct vigild_outbox *o, const struct vigild_process *p);
void vigild_outbox_process_ended(struct vigild_outbox *o, const struct vigild_process *p);
/* From capture, through the consumer below: a forwarded cycle's activities
 * (the array is taken) and the process's file names (file id → path
 * bytes, read now); a forwarded cycle's node samples (copied); a window
 * that closed. */
void vigild_outbox_activities(struct vigild_outbox *o, uint64_t process_id, GArray *activities,
                              GHashTable *names);
void vigild_outbox_samples(struct vigild_outbox *o, const GArray *samples);
void vigild_outbox_window(struct vigild_outbox *o, const struct vigil_wire_window *window);
/* The outbox as capture's consumer "outbox" (capture_consumer.h). */
struct vigild_capture_consumer;
void vigild_outbox_consumer(struct vigild_outbox *o, struct vigild_capture_consumer *out);
/* A statmux subscriber after the roll-ups: takes each window they close. */
void vigild_outbox_take_rollups(void *outbox, const struct vigild_tick_samples *samples,
                                const vigil_metric_catalog *catalog);
/* The cycle's end, after capture has acted on it: builds and sends. */
void vigild_outbox_close_cycle(struct vigild_outbox *o, const struct vigild_cycle_verdicts *v,
                               const struct vigild_reasoning *reasoning, uint32_t cycle_ms);
void vigild_outbox_stats(const struct vigild_outbox *o, struct vigild_outbox_stats *out);
/* A process's start as its batches give it (the warehouse's key, with its
 * pid): its own monotonic start, else its registration. */
uint64_t vigild_outbox_process_start_ns(const struct vigild_process *p);
/* The sequence of the last batch handed to the uplink (0: none yet): what
 * a cycle's end has read is in batches up to it. */
uint64_t vigild_outbox_last_sequence(const struct vigild_outbox *o);

#endif
