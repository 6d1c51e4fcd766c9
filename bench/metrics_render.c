/* vigil — what one /metrics scrape costs vigild: rendering a snapshot of a
 * busy node (64 running jobs and the folded rest, 4 disks, 8 network
 * interfaces) in both formats, and, given a URL, whole scrapes of a
 * running vigild (HTTP on loopback, the snapshot taken, rendered, sent).
 *
 *   bench-metrics-render [URL]
 *
 * A scrape runs on vigild's main loop between two ticks: its cost is time
 * a tick may wait. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libsoup/soup.h>

#include "metrics.h"
#include "bench_clock.h"

#define RENDERS 20000
#define SCRAPES 500
#define JOBS    64

static uint64_t now_ns(void)
{
    return bench_clock_ns(CLOCK_MONOTONIC);
}

static void add_devices(GArray *devices, const char *prefix, int n)
{
    for (int i = 0; i < n; i++) {
        struct vigild_metrics_device d = {g_strdup_printf("%s%d", prefix, i), 1e12 + i, 2e12 + i};
        g_array_append_val(devices, d);
    }
}

static void busy_snapshot(struct vigild_metrics_snapshot *s)
{
    vigild_metrics_snapshot_init(s);
    s->version = "bench";
    s->energy_j = 123456789.123;
    s->energy_source = "energy/powercap";
    s->power_w = 412.5;
    for (int m = 0; m < VIGILD_CPU_MODES; m++)
        s->cpu_s[m] = 1e6 + m * 0.01;
    s->memory_total_bytes = 512e9;
    s->memory_available_bytes = 300e9;
    s->memory_used_bytes = 200e9;
    add_devices(s->disks, "nvme", 4);
    add_devices(s->networks, "ib", 8);
    for (int i = 0; i <= JOBS; i++) {
        struct vigild_metrics_job j = {i < JOBS ? g_strdup_printf("%d", 4000000 + i)
                                                : g_strdup(VIGILD_METRICS_OTHER_JOBS),
                                       1e5 + i * 0.5, 1e10 + i, 2e10 + i, 32};
        g_array_append_val(s->jobs, j);
    }
    s->jobs_running = 80;
    s->jobs_folded = 16;
    s->ticks = 123456789;
    s->tick_s = 1234.5678;
    s->cpu_self_s = 2345.678;
    s->processes = JOBS * 32;
    s->uplink = true;
    s->spool_bytes = 1 << 20;
    s->batches_unacked = 3;
}

static void bench_render(const struct vigild_metrics_snapshot *s, enum vigild_metrics_format format,
                         const char *name)
{
    GString *out = g_string_sized_new(65536);
    /* CPU time as well as wall time: on a shared machine the wall time
     * includes other programs' turns. */
    uint64_t start = now_ns(), start_cpu = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < RENDERS; i++) {
        g_string_truncate(out, 0);
        vigild_metrics_render(s, format, out);
    }
    double us = (now_ns() - start) / 1e3 / RENDERS;
    double cpu_us = (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - start_cpu) / 1e3 / RENDERS;
    printf("render %-11s %d jobs: %6.1f us CPU, %6.1f us wall a scrape, %" G_GSIZE_FORMAT
           " bytes\n",
           name, JOBS, cpu_us, us, out->len);
    g_string_free(out, TRUE);
}

static void bench_scrapes(const char *url)
{
    SoupSession *session = soup_session_new();
    uint64_t total = 0, worst = 0;
    gsize bytes = 0;
    for (int i = 0; i < SCRAPES; i++) {
        SoupMessage *msg = soup_message_new("GET", url);
        soup_message_headers_replace(soup_message_get_request_headers(msg), "Accept",
                                     "application/openmetrics-text; version=1.0.0");
        uint64_t start = now_ns();
        GError *error = NULL;
        GBytes *body = soup_session_send_and_read(session, msg, NULL, &error);
        uint64_t took = now_ns() - start;
        if (body == NULL) {
            fprintf(stderr, "bench-metrics-render: GET %s: %s\n", url, error->message);
            exit(1);
        }
        bytes = g_bytes_get_size(body);
        total += took;
        worst = took > worst ? took : worst;
        g_bytes_unref(body);
        g_object_unref(msg);
    }
    printf("scrape %s: %.1f us mean, %.1f us max over %d (keep-alive), %" G_GSIZE_FORMAT " bytes\n",
           url, total / 1e3 / SCRAPES, worst / 1e3, SCRAPES, bytes);
    g_object_unref(session);
}

int main(int argc, char **argv)
{
    struct vigild_metrics_snapshot s;
    busy_snapshot(&s);
    bench_render(&s, VIGILD_METRICS_OPENMETRICS, "OpenMetrics");
    bench_render(&s, VIGILD_METRICS_PROMETHEUS, "0.0.4");
    vigild_metrics_snapshot_clear(&s);
    if (argc > 1)
        bench_scrapes(argv[1]);
    return 0;
}
