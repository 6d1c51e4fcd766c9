/* fuzz-wire-seeds DIR: writes one valid message of each type to
 * DIR/seed-<type>.bin, a seed corpus for fuzz-wire. Starting from valid
 * messages lets the fuzzer reach the item decoders at once. */
#include <math.h>
#include <stdio.h>

#include "vigil/health.h"
#include "vigil/ontology.h"
#include "vigil/wire.h"
#include "fuzz_seeds.h"

static gboolean add_batch_items(vigil_wire_writer *w, GError **error);

/* One item of each type but ACK's, which has none, and BATCH's, which are
 * messages. */
static gboolean add_items(vigil_wire_writer *w, enum vigil_wire_type type, GError **error)
{
    switch (type) {
    case VIGIL_WIRE_ACTIVITIES: {
        static const struct vigil_activity activity = {VIGIL_RECORD_ACTIVITY,
                                                       VIGIL_LAYER_POSIX,
                                                       VIGIL_OP_POSIX_PWRITE,
                                                       3,
                                                       17,
                                                       0,
                                                       1000,
                                                       1800,
                                                       4096,
                                                       512,
                                                       512,
                                                       0,
                                                       4242,
                                                       0,
                                                       0};
        return vigil_wire_add_activity(w, &activity, error);
    }
    case VIGIL_WIRE_NAMES:
        return vigil_wire_add_name(w, 3, "/scratch/out.dat", 16, error);
    case VIGIL_WIRE_METRICS: {
        static const struct vigil_metric_desc metric = {
            1,   VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED, "energy.pkg0_j",
            "J", "energy/powercap"};
        return vigil_wire_add_metric(w, &metric, error);
    }
    case VIGIL_WIRE_SAMPLES: {
        static const struct vigil_sample sample = {1, VIGIL_SAMPLE_UNCERTAIN, 123456789, 42.5};
        return vigil_wire_add_sample(w, &sample, error);
    }
    case VIGIL_WIRE_ANOMALIES: {
        const struct vigil_wire_anomaly anomaly = {9,
                                                   4242,
                                                   VIGIL_LEVEL_PROCESS,
                                                   VIGIL_HEALTH_ABNORMAL_BAD,
                                                   0.25,
                                                   -INFINITY,
                                                   0.1,
                                                   "io-latency",
                                                   "posix.pwrite",
                                                   "write latency above the expected range"};
        return vigil_wire_add_anomaly(w, &anomaly, error);
    }
    case VIGIL_WIRE_STATES: {
        static const struct vigil_wire_state state = {
            9, 4242, VIGIL_LEVEL_PROCESS, VIGIL_HEALTH_BAD, 0x5, 2, 1, 0};
        return vigil_wire_add_state(w, &state, error);
    }
    case VIGIL_WIRE_ACK:
        return TRUE;
    case VIGIL_WIRE_BATCH:
        return add_batch_items(w, error);
    case VIGIL_WIRE_NODE: {
        static const struct vigil_wire_node node = {
            1700000000000000000, 9, 1000, 2000, 1000, 0, "node-01"};
        return vigil_wire_add_node(w, &node, error);
    }
    case VIGIL_WIRE_PROCESSES: {
        static char *argv[] = {"/usr/bin/ior", "-w", NULL};
        static const struct vigil_wire_process process = {
            4242, 4242, 1000, 0, -1, 900, 0, "job-981", "981", "/usr/bin/ior", "/scratch", 2, argv};
        return vigil_wire_add_process(w, &process, error);
    }
    case VIGIL_WIRE_ROLLUPS: {
        static const struct vigil_wire_rollup rollup = {1, 0, 1000, 2000, 4, 0, 1.0, 2.0, 3.0, NAN};
        return vigil_wire_add_rollup(w, &rollup, error);
    }
    case VIGIL_WIRE_WINDOWS: {
        static const struct vigil_wire_window window = {
            4242, 8, 9, 900, 2000, 12, "process ABNORMAL_BAD (io-latency)"};
        return vigil_wire_add_window(w, &window, error);
    }
    case VIGIL_WIRE_SUMMARIES: {
        static const struct vigil_wire_summary summary = {4242, "{\"calls\":12}"};
        return vigil_wire_add_summary(w, &summary, error);
    }
    case VIGIL_WIRE_REFUSED: {
        static const struct vigil_wire_refusal refusal = {"duplicate key"};
        return vigil_wire_add_refusal(w, &refusal, error);
    }
    case VIGIL_WIRE_JOBS: {
        static const struct vigil_wire_job job = {900,   2000, 1000,    VIGIL_WIRE_JOB_FROM_ROOT,
                                                  "981", "0",  "alice", "n[01-02]"};
        return vigil_wire_add_job(w, &job, error);
    }
    case VIGIL_WIRE_DROPS: {
        static const struct vigil_wire_drop drop = {981, 0, 900, 1700000000000000, 5, 1};
        return vigil_wire_add_drop(w, &drop, error);
    }
    case VIGIL_WIRE_UNWATCHED_ENDS: {
        static const struct vigil_wire_unwatched_end unwatched_end = {
            4242, 1500, 2000, 12, 0, 0, 0.5, NAN, VIGIL_WIRE_UNWATCHED_ENERGY_UNCERTAIN, 0};
        return vigil_wire_add_unwatched_end(w, &unwatched_end, error);
    }
    }
    return FALSE;
}

static gboolean has_process_id(enum vigil_wire_type type)
{
    return type == VIGIL_WIRE_ACTIVITIES || type == VIGIL_WIRE_NAMES;
}

static uint64_t seed_sequence(enum vigil_wire_type type)
{
    return 100 + type;
}

/* A batch as vigild sends one: its node first, then a message of each
 * kind it carries, all of the batch's (node, sequence). */
static gboolean add_batch_items(vigil_wire_writer *w, GError **error)
{
    static const enum vigil_wire_type inner[] = {
        VIGIL_WIRE_NODE,       VIGIL_WIRE_PROCESSES, VIGIL_WIRE_METRICS,       VIGIL_WIRE_ROLLUPS,
        VIGIL_WIRE_ACTIVITIES, VIGIL_WIRE_STATES,    VIGIL_WIRE_WINDOWS,       VIGIL_WIRE_SUMMARIES,
        VIGIL_WIRE_JOBS,       VIGIL_WIRE_DROPS,     VIGIL_WIRE_UNWATCHED_ENDS};
    for (size_t i = 0; i < G_N_ELEMENTS(inner); i++) {
        vigil_wire_writer *m = vigil_wire_writer_new(inner[i], 7, seed_sequence(VIGIL_WIRE_BATCH),
                                                     has_process_id(inner[i]) ? 4242 : 0);
        if (!add_items(m, inner[i], error)) {
            vigil_wire_writer_free(m);
            return FALSE;
        }
        GBytes *message = vigil_wire_writer_finish(m);
        gboolean ok = vigil_wire_add_message(w, message, error);
        g_bytes_unref(message);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

static gboolean write_seed(const char *dir, enum vigil_wire_type type, GError **error)
{
    vigil_wire_writer *w =
        vigil_wire_writer_new(type, 7, seed_sequence(type), has_process_id(type) ? 4242 : 0);
    if (!add_items(w, type, error)) {
        vigil_wire_writer_free(w);
        return FALSE;
    }
    GBytes *msg = vigil_wire_writer_finish(w);
    char *file = g_strconcat(vigil_wire_type_name(type), ".bin", NULL);
    gsize size;
    const char *data = g_bytes_get_data(msg, &size);
    write_seed_file(dir, file, data, size);
    g_free(file);
    g_bytes_unref(msg);
    return TRUE;
}

int main(int argc, char **argv)
{
    const char *dir = seeds_dir(argc, argv);
    for (unsigned type = 1; type <= VIGIL_WIRE_TYPE_COUNT; type++) {
        if (vigil_wire_type_name(type) == NULL)
            continue; /* a number no type has */
        GError *error = NULL;
        if (!write_seed(dir, (enum vigil_wire_type)type, &error)) {
            fprintf(stderr, "%s: %s seed: %s\n", argv[0], vigil_wire_type_name(type),
                    error->message);
            g_error_free(error);
            return 1;
        }
    }
    return 0;
}
