/* vigil — the energy provider's per-tick cost, by source, side by side in
 * one run: ns per read of
 *   likwid    the likwid source on the liblikwid test double (1 socket:
 *             PKG, PP0, DRAM), i.e. the source's own work around
 *             power_read; a real power_read adds a pread of /dev/cpu/N/msr
 *             per domain, which this machine cannot do
 *   powercap  the powercap source on a fixture tree of the same three zones
 *             (regular files: a real energy_uj read also makes the kernel
 *             read the MSR)
 *   estimate  the estimate on this machine's /proc/stat
 * each through the chain of sources, as the provider's read() calls it.
 * Rounds alternate the sources; the median round is printed, with the
 * ratios to the likwid double.
 *
 *   bench-energy-read [READS_PER_ROUND [ROUNDS]] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "energy_source.h"
#include "likwid_double.h"

#define N_SOURCES 3

static void discard(void *user, uint32_t metric_id, double value, uint32_t flags)
{
    (void)metric_id;
    (void)value;
    (void)flags;
    (*(guint64 *)user)++;
}

static void discard_process(void *user, uint64_t process_id, uint32_t metric_id, double value,
                            uint32_t flags)
{
    (void)user;
    (void)process_id;
    (void)metric_id;
    (void)value;
    (void)flags;
}

static void quiet(const gchar *domain, GLogLevelFlags level, const gchar *message,
                  gpointer user_data)
{
    (void)domain;
    (void)level;
    (void)message;
    (void)user_data;
}

static guint64 now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (guint64)ts.tv_sec * 1000000000u + (guint64)ts.tv_nsec;
}

static void write_file(const char *dir, const char *relative, const char *text)
{
    char *path = g_build_filename(dir, relative, NULL);
    char *parent = g_path_get_dirname(path);
    if (g_mkdir_with_parents(parent, 0755) != 0 || !g_file_set_contents(path, text, -1, NULL)) {
        fprintf(stderr, "bench-energy-read: cannot write %s\n", path);
        exit(1);
    }
    g_free(parent);
    g_free(path);
}

static void write_powercap_tree(const char *root)
{
    static const char *const zones[][2] = {
        {"intel-rapl:0", "package-0"}, {"intel-rapl:0:0", "core"}, {"intel-rapl:0:1", "dram"}};
    for (size_t i = 0; i < G_N_ELEMENTS(zones); i++) {
        char *dir = g_build_filename("sys/class/powercap", zones[i][0], NULL);
        char *name = g_build_filename(dir, "name", NULL);
        char *range = g_build_filename(dir, "max_energy_range_uj", NULL);
        char *energy = g_build_filename(dir, "energy_uj", NULL);
        char *name_text = g_strconcat(zones[i][1], "\n", NULL);
        write_file(root, name, name_text);
        write_file(root, range, "262143328850\n");
        write_file(root, energy, "123456789\n");
        g_free(name_text);
        g_free(energy);
        g_free(range);
        g_free(name);
        g_free(dir);
    }
}

struct subject {
    const char *label;
    const char *source;
    struct energy_settings settings;
    struct energy_chain chain;
    vigil_metric_catalog *catalog;
    double *ns_per_read; /* one per round */
};

static void start(struct subject *s)
{
    const char *names[] = {s->source, NULL};
    s->catalog = vigil_metric_catalog_new();
    GError *error = NULL;
    if (!energy_chain_start(&s->chain, names, &s->settings, s->catalog, &error)) {
        fprintf(stderr, "bench-energy-read: %s: %s\n", s->label, error->message);
        exit(1);
    }
}

static double round_ns_per_read(struct subject *s, int reads, guint64 *tick_ns)
{
    guint64 emitted = 0;
    struct vigil_sample_sink sink = {
        .emit = discard, .emit_process = discard_process, .user = &emitted};
    GError *error = NULL;
    guint64 begin = now_ns();
    for (int i = 0; i < reads; i++) {
        *tick_ns += 100000000u; /* 100 ms ticks, as vigild's default */
        if (!energy_chain_read(&s->chain, *tick_ns, &sink, &error)) {
            fprintf(stderr, "bench-energy-read: %s: %s\n", s->label, error->message);
            exit(1);
        }
    }
    return (double)(now_ns() - begin) / reads;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int reads = argc > 1 ? atoi(argv[1]) : 20000;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    if (reads <= 0 || rounds <= 0) {
        fprintf(stderr, "usage: bench-energy-read [READS_PER_ROUND [ROUNDS]]\n");
        return 2;
    }
    /* The sources log at start; the figures are what matters here. */
    g_log_set_handler("vigil-provider-energy", G_LOG_LEVEL_MESSAGE, quiet, NULL);
    char *fixture = g_dir_make_tmp("vigil-bench-energy-XXXXXX", NULL);
    write_powercap_tree(fixture);
    likwid_double_reset_intel(1);

    struct subject subjects[N_SOURCES] = {
        {.label = "likwid (test double)",
         .source = "likwid",
         .settings = {.root = "/", .max_power_w = 1000, .likwid = &likwid_double_api}},
        {.label = "powercap (fixture tree)",
         .source = "powercap",
         .settings = {.root = fixture, .max_power_w = 1000}},
        {.label = "estimate (/proc/stat)",
         .source = "estimate",
         .settings = {.root = "/", .idle_w = 50, .max_w = 150, .sockets = 1}},
    };
    guint64 tick_ns[N_SOURCES] = {0};
    for (int i = 0; i < N_SOURCES; i++) {
        start(&subjects[i]);
        subjects[i].ns_per_read = g_new0(double, rounds);
        round_ns_per_read(&subjects[i], reads / 10 + 1, &tick_ns[i]); /* warm-up */
    }
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < N_SOURCES; k++) {
            int i = (r + k) % N_SOURCES; /* each source goes first in turn */
            subjects[i].ns_per_read[r] = round_ns_per_read(&subjects[i], reads, &tick_ns[i]);
        }

    printf("energy provider, ns per read() (%d reads a round, %d rounds, median [min, max]):\n",
           reads, rounds);
    double median[N_SOURCES];
    for (int i = 0; i < N_SOURCES; i++) {
        qsort(subjects[i].ns_per_read, (size_t)rounds, sizeof(double), compare_doubles);
        median[i] = subjects[i].ns_per_read[rounds / 2];
    }
    for (int i = 0; i < N_SOURCES; i++) {
        char range[64];
        g_snprintf(range, sizeof range, "[%.0f, %.0f]", subjects[i].ns_per_read[0],
                   subjects[i].ns_per_read[rounds - 1]);
        printf("  %-24s %8.0f ns  %-18s %u metrics  %8.2fx the likwid double\n", subjects[i].label,
               median[i], range, vigil_metric_count(subjects[i].catalog), median[i] / median[0]);
    }
    printf("  powercap / estimate: %.2fx\n", median[1] / median[2]);

    for (int i = 0; i < N_SOURCES; i++) {
        energy_chain_clear(&subjects[i].chain);
        vigil_metric_catalog_free(subjects[i].catalog);
        g_free(subjects[i].ns_per_read);
    }
    char *argv_rm[] = {"rm", "-rf", fixture, NULL};
    g_spawn_sync(NULL, argv_rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
    g_free(fixture);
    return 0;
}
