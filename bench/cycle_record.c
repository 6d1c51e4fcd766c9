/* bench-cycle-record: what [daemon] record costs vigild, in CPU time (the
 * machine is shared: wall-clock time would measure the other programs):
 * per activity recorded, and per tick of 70 node samples (the default
 * providers' count on a small node), with the bytes each takes. Five runs
 * of 1,000,000 activities and 100,000 ticks, each printed, so the spread
 * shows. The file goes to a temporary folder and is deleted. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cycle_record.h"
#include "bench_clock.h"
#include "energy_share.h"
#include "tick_samples.h"

#define RUNS       5
#define ACTIVITIES 1000000
#define TICKS      100000
#define METRICS    70

int main(void)
{
    char *dir = g_dir_make_tmp("bench-cycle-record-XXXXXX", NULL);
    if (dir == NULL)
        return 1;
    char *path = g_build_filename(dir, "rec.bin", NULL);
    vigil_metric_catalog *catalog = vigil_metric_catalog_new();
    struct vigild_energy_share energy;
    vigild_energy_share_init(&energy);
    struct vigild_tick_samples samples = {
        .node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample)),
        .process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample)),
    };
    for (uint32_t m = 1; m <= METRICS; m++) {
        struct vigil_sample s = {.metric_id = m, .value = m * 1234.5678};
        g_array_append_val(samples.node, s);
    }
    printf("run  ns/activity  bytes/activity  us/tick(%d samples)  bytes/tick\n", METRICS);
    for (int run = 1; run <= RUNS; run++) {
        GError *error = NULL;
        struct vigild_cycle_record *w =
            vigild_cycle_record_open(path, UINT64_MAX, 0, "bench", &error);
        if (w == NULL) {
            fprintf(stderr, "bench-cycle-record: %s\n", error->message);
            return 1;
        }
        /* A write stream: sequential offsets, durations that vary. */
        struct vigil_activity a = {.record_type = VIGIL_RECORD_ACTIVITY,
                                   .layer = 1,
                                   .op = 6,
                                   .file_id = 3,
                                   .start_ns = 1000000000,
                                   .bytes_asked = 4096,
                                   .result = 4096,
                                   .thread_id = 77};
        double t0 = bench_cpu_s();
        for (int i = 0; i < ACTIVITIES; i++) {
            a.seq++;
            a.start_ns += 3000 + (uint64_t)(i % 7) * 100;
            a.end_ns = a.start_ns + 1500 + (uint64_t)(i % 13) * 10;
            a.offset_bytes += 4096;
            vigild_cycle_record_activity(w, 1, &a);
        }
        /* The last batch goes out with the next record: counted here. */
        vigild_cycle_record_process(w, 1, TRUE);
        double t1 = bench_cpu_s();
        uint64_t activity_bytes = vigild_cycle_record_bytes(w);
        for (int k = 0; k < TICKS; k++) {
            samples.t_ns = (uint64_t)k * 100000000u;
            for (guint m = 0; m < METRICS; m++) {
                struct vigil_sample *s = &g_array_index(samples.node, struct vigil_sample, m);
                s->t_ns = samples.t_ns;
                s->value += k;
            }
            vigild_cycle_record_samples(w, &samples, catalog, &energy);
        }
        double t2 = bench_cpu_s();
        uint64_t tick_bytes = vigild_cycle_record_bytes(w) - activity_bytes;
        vigild_cycle_record_close(w);
        printf("%3d  %11.1f  %14.1f  %19.2f  %10.1f\n", run, (t1 - t0) / ACTIVITIES * 1e9,
               (double)activity_bytes / ACTIVITIES, (t2 - t1) / TICKS * 1e6,
               (double)tick_bytes / TICKS);
    }
    unlink(path);
    rmdir(dir);
    g_free(path);
    g_free(dir);
    g_array_free(samples.node, TRUE);
    g_array_free(samples.process, TRUE);
    vigild_energy_share_clear(&energy);
    vigil_metric_catalog_free(catalog);
    return 0;
}
