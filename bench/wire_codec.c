/* bench-wire-codec: what core/wire.c costs per item, on the two loads that
 * matter: one ACTIVITIES message of many activities (vigild forwards most
 * items as activities), and one captured cycle's batch as vigild makes it
 * (bench/node_batch.c, at bench/fanin-load's defaults). For each, the
 * writer's adds (or the whole batch, inner messages finished and added),
 * the decoder, and the freeing of the decoded message.
 *
 *   bench-wire-codec [--passes N] [--phase NAME]
 *
 * Each figure is the best of N passes (default 50) in process CPU time,
 * the phases taking turns pass by pass, so that a busy machine slows all
 * alike and the best pass is the least disturbed. With --phase, only that
 * phase runs: once to warm up, then once through bench_measured, the one
 * function that bench/wire_codec.py has callgrind count instructions in.
 *
 * The same source is built against the codec of an earlier commit
 * (bench/meson.build): bench/wire_codec.py runs both side by side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "node_batch.h"
#include "bench_clock.h"
#include "vigil/health.h"
#include "vigil/ontology.h"

#define ACTIVITIES 20000
#define PASSES     50
/* A captured cycle on a node as bench/fanin-load's defaults make it. */
#define CORES          48
#define DISKS          2
#define NETS           2
#define RANKS          48
#define RANK_IO        (2000 / RANKS) /* activities per rank in the cycle */
#define CYCLE_NS       UINT64_C(1000000000)
#define TICK_NS        UINT64_C(100000000)
#define CYCLE_START_NS UINT64_C(5000000000000)

struct load {
    struct vigil_activity *activities;
    GBytes *activity_message, *batch;
    uint32_t batch_items;
    struct vigil_metric_desc *metrics;
    unsigned metric_count;
    struct vigil_wire_process processes[RANKS];
    /* What a phase works on: made by its prepare, kept or freed by its done. */
    vigil_wire_writer *writer;
    struct vigil_wire_message decoded;
    GBytes *encoded;
};

static struct vigil_activity activity_at(uint64_t seq, uint32_t thread_id)
{
    uint64_t size = seq % 4 == 3 ? 1048576 : 4096;
    uint64_t start_ns = CYCLE_START_NS + seq * 20000;
    return (struct vigil_activity){
        .record_type = VIGIL_RECORD_ACTIVITY,
        .layer = VIGIL_LAYER_POSIX,
        .op = seq % 3 == 0 ? VIGIL_OP_POSIX_READ : VIGIL_OP_POSIX_WRITE,
        .file_id = 1,
        .seq = seq,
        .start_ns = start_ns,
        .end_ns = start_ns + 2000 + (seq * 7919) % 50000,
        .offset_bytes = (int64_t)(seq * 4096),
        .bytes_asked = size,
        .result = (int64_t)size,
        .thread_id = thread_id,
    };
}

static void add_activities(vigil_wire_writer *w, const struct vigil_activity *a, unsigned count)
{
    GError *error = NULL;
    for (unsigned i = 0; i < count; i++)
        bench_check(vigil_wire_add_activity(w, &a[i], &error), error);
}

/* The ranks' names, activities and windows of the cycle. */
static void add_rank_io(bench_batch *b, const struct load *l)
{
    GError *error = NULL;
    vigil_wire_writer *windows = bench_batch_message(b, VIGIL_WIRE_WINDOWS, 0);
    for (unsigned k = 0; k < RANKS; k++) {
        uint64_t process_id = k + 1;
        char path[64];
        g_snprintf(path, sizeof path, "/scratch/run/out.%05u", k);
        vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_NAMES, process_id);
        bench_check(vigil_wire_add_name(w, 1, path, strlen(path), &error), error);
        bench_batch_add(b, w);
        w = bench_batch_message(b, VIGIL_WIRE_ACTIVITIES, process_id);
        add_activities(w, &l->activities[k * RANK_IO], RANK_IO);
        bench_batch_add(b, w);
        struct vigil_wire_window window = {
            .process_id = process_id,
            .first_cycle = 1,
            .last_cycle = 1,
            .start_ns = CYCLE_START_NS,
            .end_ns = CYCLE_START_NS + CYCLE_NS,
            .activities_forwarded = RANK_IO,
            .reasons = "process ABNORMAL_BAD (latency-histogram: posix.write)"};
        bench_check(vigil_wire_add_window(windows, &window, &error), error);
    }
    bench_batch_add(b, windows);
}

static GBytes *make_batch(const struct load *l)
{
    GError *error = NULL;
    const uint64_t end_ns = CYCLE_START_NS + CYCLE_NS;
    struct vigil_wire_node node = {.cycle = 1,
                                   .cycle_start_ns = CYCLE_START_NS,
                                   .cycle_end_ns = end_ns,
                                   .cycle_ms = CYCLE_NS / 1000000,
                                   .hostname = "cn00001"};
    bench_batch *b = bench_batch_new(1, 1, &node);
    bench_batch_add_processes(b, l->processes, RANKS);
    bench_batch_add_metrics(b, l->metrics, l->metric_count);
    bench_batch_add_rollups(b, l->metrics, l->metric_count, CYCLE_START_NS, end_ns,
                            CYCLE_NS / TICK_NS);
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_STATES, 0);
    for (unsigned k = 0; k <= RANKS; k++) {
        struct vigil_wire_state s = {.cycle = 1,
                                     .process_id = k,
                                     .level = k == 0 ? VIGIL_LEVEL_NODE : VIGIL_LEVEL_PROCESS,
                                     .health = VIGIL_HEALTH_OK};
        bench_check(vigil_wire_add_state(w, &s, &error), error);
    }
    bench_batch_add(b, w);
    add_rank_io(b, l);
    bench_batch_add_samples(b, l->metrics, l->metric_count, CYCLE_START_NS, end_ns, TICK_NS);
    return bench_batch_finish(b);
}

static void decode(GBytes *bytes, struct vigil_wire_message *m)
{
    gsize length;
    const void *data = g_bytes_get_data(bytes, &length);
    GError *error = NULL;
    if (!vigil_wire_decode(data, length, m, &error))
        bench_die("the codec refused its own message: %s", error->message);
}

/* ---- the phases ----------------------------------------------------------- */

static void new_activity_writer(struct load *l)
{
    l->writer = vigil_wire_writer_new(VIGIL_WIRE_ACTIVITIES, 1, 1, 1);
}
static void add_all_activities(struct load *l)
{
    add_activities(l->writer, l->activities, ACTIVITIES);
}
static void free_writer(struct load *l)
{
    vigil_wire_writer_free(l->writer);
}
static void decode_activities(struct load *l)
{
    decode(l->activity_message, &l->decoded);
}
static void clear_decoded(struct load *l)
{
    vigil_wire_message_clear(&l->decoded);
}
static void encode_batch(struct load *l)
{
    l->encoded = make_batch(l);
}
static void unref_encoded(struct load *l)
{
    g_bytes_unref(l->encoded);
}
static void decode_batch(struct load *l)
{
    decode(l->batch, &l->decoded);
}

struct phase {
    const char *name;
    gboolean batch; /* per item of the batch, else per activity */
    void (*prepare)(struct load *), (*run)(struct load *), (*done)(struct load *);
};

static const struct phase phases[] = {
    {"activity-add", FALSE, new_activity_writer, add_all_activities, free_writer},
    {"activity-decode", FALSE, NULL, decode_activities, clear_decoded},
    {"activity-clear", FALSE, decode_activities, clear_decoded, NULL},
    {"batch-encode", TRUE, NULL, encode_batch, unref_encoded},
    {"batch-decode", TRUE, NULL, decode_batch, clear_decoded},
    {"batch-clear", TRUE, decode_batch, clear_decoded, NULL},
};

/* Not inlined, and not static: callgrind counts by its name. */
G_GNUC_NO_INLINE void bench_measured(const struct phase *p, struct load *l);
G_GNUC_NO_INLINE void bench_measured(const struct phase *p, struct load *l)
{
    p->run(l);
}

/* A warm-up pass is not run through bench_measured: callgrind counts one
 * pass only. */
static double run_phase(const struct phase *p, struct load *l, gboolean warm_up)
{
    if (p->prepare != NULL)
        p->prepare(l);
    double t0 = bench_cpu_s();
    if (warm_up)
        p->run(l);
    else
        bench_measured(p, l);
    double t1 = bench_cpu_s();
    if (p->done != NULL)
        p->done(l);
    return t1 - t0;
}

static void load_init(struct load *l)
{
    l->activities = g_new(struct vigil_activity, ACTIVITIES);
    for (unsigned i = 0; i < ACTIVITIES; i++)
        l->activities[i] = activity_at(i, 20000 + i / RANK_IO);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ACTIVITIES, 1, 1, 1);
    add_activities(w, l->activities, ACTIVITIES);
    l->activity_message = vigil_wire_writer_finish(w);
    l->metrics = bench_node_metrics(CORES, DISKS, NETS, &l->metric_count);
    static char *argv[] = {"/apps/wrf/bin/wrf.exe", "-i", "namelist.input", NULL};
    for (unsigned k = 0; k < RANKS; k++)
        l->processes[k] = (struct vigil_wire_process){.process_id = k + 1,
                                                      .pid = (int32_t)(20000 + k),
                                                      .uid = 1000,
                                                      .rank = (int32_t)k,
                                                      .exit_code = -1,
                                                      .start_ns = CYCLE_START_NS / 2,
                                                      .run_key = "fanin-bench-job0",
                                                      .job = "100000",
                                                      .program = argv[0],
                                                      .cwd = "/scratch/run",
                                                      .argc = 3,
                                                      .argv = argv};
    l->batch = make_batch(l);
    decode(l->batch, &l->decoded);
    for (uint32_t i = 0; i < l->decoded.header.count; i++)
        l->batch_items += l->decoded.inner[i].header.count;
    vigil_wire_message_clear(&l->decoded);
}

static void load_clear(struct load *l)
{
    g_free(l->activities);
    g_free(l->metrics);
    g_bytes_unref(l->activity_message);
    g_bytes_unref(l->batch);
}

int main(int argc, char **argv)
{
    bench_set_program_name("bench-wire-codec");
    int passes = PASSES;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc)
            passes = atoi(argv[++i]);
        else if (strcmp(argv[i], "--phase") == 0 && i + 1 < argc)
            only = argv[++i];
        else
            bench_die("usage: bench-wire-codec [--passes N] [--phase NAME]");
    }
    struct load l = {0};
    load_init(&l);
    double best_s[G_N_ELEMENTS(phases)];
    for (size_t k = 0; k < G_N_ELEMENTS(phases); k++)
        best_s[k] = G_MAXDOUBLE;
    for (int pass = 0; pass <= MAX(passes, 1); pass++) /* pass 0 warms up */
        for (size_t k = 0; k < G_N_ELEMENTS(phases); k++) {
            if (only != NULL && (strcmp(only, phases[k].name) != 0 || pass > 1))
                continue;
            double s = run_phase(&phases[k], &l, pass == 0);
            if (pass > 0)
                best_s[k] = MIN(best_s[k], s);
        }
    printf("phase            items  ns/item (best of %d)\n", passes);
    for (size_t k = 0; k < G_N_ELEMENTS(phases); k++) {
        uint32_t items = phases[k].batch ? l.batch_items : ACTIVITIES;
        if (only == NULL || strcmp(only, phases[k].name) == 0)
            printf("%-15s %6u  %.1f\n", phases[k].name, items, best_s[k] / items * 1e9);
    }
    load_clear(&l);
    return 0;
}
