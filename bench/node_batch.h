/* bench/node_batch: one cycle's BATCH as vigild makes it, for the
 * benchmarks that stand in for nodes (ingest-sender, fanin-load): a NODE
 * item first, then whole messages of one type each (processes, metrics,
 * names, activities, roll-ups, samples, states, windows), each item
 * checked as it is added. Anything the writer refuses ends the program: a
 * benchmark that sends something other than it says measures nothing. */
#ifndef VIGIL_BENCH_NODE_BATCH_H
#define VIGIL_BENCH_NODE_BATCH_H

#include <stdint.h>
#include <glib.h>

#include "vigil/metric.h"
#include "vigil/wire.h"

void bench_die(const char *format, ...) G_GNUC_NORETURN G_GNUC_PRINTF(1, 2);
/* The name bench_die puts before its message ("ingest-sender"). */
void bench_set_program_name(const char *name);
int64_t bench_monotonic_ns(void);

typedef struct bench_batch bench_batch;

/* A batch of (node, sequence) whose first message is `node`. */
bench_batch *bench_batch_new(uint64_t node_id, uint64_t sequence,
                             const struct vigil_wire_node *node);
/* A message of `type` for the batch (`process_id` for ACTIVITIES and
 * NAMES), to fill with vigil_wire_add_* and hand to bench_batch_add. */
vigil_wire_writer *bench_batch_message(bench_batch *b, enum vigil_wire_type type,
                                       uint64_t process_id);
/* Adds a filled message to the batch; `message` is freed. */
void bench_batch_add(bench_batch *b, vigil_wire_writer *message);
/* Ends the program when an item was refused. */
void bench_check(gboolean ok, GError *error);
/* The whole batch; frees `b`. */
GBytes *bench_batch_finish(bench_batch *b);

/* The usual messages, each added whole: */
void bench_batch_add_processes(bench_batch *b, const struct vigil_wire_process *processes,
                               unsigned count);
void bench_batch_add_metrics(bench_batch *b, const struct vigil_metric_desc *metrics,
                             unsigned count);
/* One roll-up per metric over [start_ns, end_ns], `samples` values in each. */
void bench_batch_add_rollups(bench_batch *b, const struct vigil_metric_desc *metrics,
                             unsigned count, uint64_t start_ns, uint64_t end_ns, uint32_t samples);
/* Every metric at every tick of [start_ns, end_ns): a captured window's
 * statistics at full resolution. */
void bench_batch_add_samples(bench_batch *b, const struct vigil_metric_desc *metrics,
                             unsigned count, uint64_t start_ns, uint64_t end_ns, uint64_t tick_ns);

/* The metrics a vigild with every provider on reports on a node of
 * `cores` CPUs, `disks` disks and `nets` network interfaces, named as its
 * providers name them (procstat, meminfo, loadavg, diskstats, netdev,
 * process, energy), ids from 1. g_free the array (the names are static
 * or interned). */
struct vigil_metric_desc *bench_node_metrics(unsigned cores, unsigned disks, unsigned nets,
                                             unsigned *count);

#endif
