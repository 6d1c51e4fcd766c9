/* vigild — /metrics for Prometheus.
 *
 *   metrics_exposition.c  a snapshot of the figures → OpenMetrics or
 *                         Prometheus 0.0.4 text (pure: the unit tests' part)
 *   metrics_jobs.c        what the figures need across processes' lives:
 *                         each running job's totals, the ring drops of
 *                         processes that ended
 *   metrics_snapshot.c    the figures, from the daemon's snapshot
 *                         (snapshot.h), and the endpoint's start, reload
 *                         and stop with the daemon
 *   metrics_http.c        the HTTP server (libsoup 3) on the main loop
 *
 * A scrape renders the newest figures vigild holds: it never reads a
 * provider, so it costs the same whatever Prometheus's interval is. */
#ifndef VIGILD_METRICS_H
#define VIGILD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/metric.h"

/* The label value of the folded jobs' series. The label is job_id, not
 * job: Prometheus gives every scraped series its scrape job's name as
 * job=…, and would rename ours exported_job. */
#define VIGILD_METRICS_OTHER_JOBS "_other"

enum vigild_metrics_cpu_mode {
    VIGILD_CPU_USER,
    VIGILD_CPU_NICE,
    VIGILD_CPU_SYSTEM,
    VIGILD_CPU_IDLE,
    VIGILD_CPU_IOWAIT,
    VIGILD_CPU_IRQ,
    VIGILD_CPU_SOFTIRQ,
    VIGILD_CPU_STEAL,
    VIGILD_CPU_MODES
};
/* "user", …: the mode label, and procstat's metric cpu.MODE_s. */
const char *vigild_metrics_cpu_mode_name(enum vigild_metrics_cpu_mode mode);

/* A disk or a network interface: bytes read and written, received and sent. */
struct vigild_metrics_device {
    char *name;
    double in_bytes, out_bytes; /* NaN: not sampled */
};

struct vigild_metrics_job {
    char *job; /* the scheduler's job id, or VIGILD_METRICS_OTHER_JOBS */
    double energy_j;
    double read_bytes, written_bytes; /* the process provider's rchar, wchar */
    guint processes;                  /* running now */
};

/* Every figure one scrape shows. NaN (or a NULL string) is a figure vigild
 * does not have: its sample is left out, its family's metadata stays. */
struct vigild_metrics_snapshot {
    const char *version;
    /* node.energy_j: the node's one running sum, its source ("energy/powercap"). */
    double energy_j;
    const char *energy_source;
    bool energy_estimated;
    double power_w; /* node.energy_j's last roll-up: delta / window */
    double cpu_s[VIGILD_CPU_MODES];
    double memory_total_bytes, memory_available_bytes, memory_used_bytes;
    GArray *disks;    /* struct vigild_metrics_device */
    GArray *networks; /* struct vigild_metrics_device */
    GArray *jobs;     /* struct vigild_metrics_job, the labelled ones first */
    guint jobs_running, jobs_folded;
    /* vigild itself */
    uint64_t ticks, ticks_missed;
    double tick_s;      /* wall-clock time inside ticks */
    double cpu_self_s;  /* vigild's CPU time, all threads */
    uint64_t processes; /* registered and running */
    uint64_t ring_records_dropped;
    bool uplink; /* the two below are only with an uplink */
    uint64_t spool_bytes, batches_unacked;
};

void vigild_metrics_snapshot_init(struct vigild_metrics_snapshot *s);
void vigild_metrics_snapshot_clear(struct vigild_metrics_snapshot *s);

enum vigild_metrics_format {
    VIGILD_METRICS_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
    VIGILD_METRICS_PROMETHEUS,  /* text/plain; version=0.0.4 */
};
/* The content type of a format, charset included. */
const char *vigild_metrics_content_type(enum vigild_metrics_format format);
/* The format an Accept header asks for: OpenMetrics when it names
 * application/openmetrics-text, else Prometheus's text format. */
enum vigild_metrics_format vigild_metrics_format_for_accept(const char *accept);
/* The exposition of `s`, appended to `out`. */
void vigild_metrics_render(const struct vigild_metrics_snapshot *s,
                           enum vigild_metrics_format format, GString *out);
/* A label value as the text formats quote it: \ " and newline escaped. */
void vigild_metrics_append_label_value(GString *out, const char *value);

/* ---- metrics_jobs.c -------------------------------------------------- */

struct vigild_metrics_jobs {
    GHashTable *jobs;      /* job id → struct metrics_job * */
    GHashTable *processes; /* process id → struct metrics_process * */
    guint max_jobs;
    guint labelled; /* running jobs with series of their own */
    uint64_t next_order;
    uint32_t read_metric_id, written_metric_id; /* 0: not seen yet */
    uint64_t ended_ring_dropped;                /* records dropped by processes that ended */
    /* The folded jobs' running sums: only ever grow. */
    double other_energy_j, other_read_bytes, other_written_bytes;
};

void vigild_metrics_jobs_init(struct vigild_metrics_jobs *j, guint max_jobs);
void vigild_metrics_jobs_set_max(struct vigild_metrics_jobs *j, guint max_jobs);
/* A process registered: `job` NULL or "" is no job. */
void vigild_metrics_jobs_process_started(struct vigild_metrics_jobs *j, uint64_t process_id,
                                         const char *job);
/* A process ended: its final energy (NaN: none) and ring drops. */
void vigild_metrics_jobs_process_ended(struct vigild_metrics_jobs *j, uint64_t process_id,
                                       double energy_j, uint64_t ring_dropped);
/* A statmux subscriber: each process's newest I/O counters. */
struct vigild_tick_samples;
void vigild_metrics_jobs_samples(void *jobs, const struct vigild_tick_samples *samples,
                                 const vigil_metric_catalog *catalog);
/* The jobs' figures into `out` (struct vigild_metrics_job): `energy_of`
 * tells a running process's energy so far (NaN: none). */
void vigild_metrics_jobs_collect(struct vigild_metrics_jobs *j,
                                 double (*energy_of)(void *user, uint64_t process_id), void *user,
                                 GArray *out, guint *running, guint *folded);
void vigild_metrics_jobs_clear(struct vigild_metrics_jobs *j);

/* ---- metrics_http.c ---------------------------------------------------- */

struct vigild_metrics_http;
typedef void (*vigild_metrics_fill_fn)(void *user, struct vigild_metrics_snapshot *s);

/* Listens on host:port (port 0: any free one) and answers GET /metrics
 * with `fill`'s snapshot; NULL with error set when it cannot listen. */
struct vigild_metrics_http *vigild_metrics_http_new(const char *host, guint16 port,
                                                    vigild_metrics_fill_fn fill, void *user,
                                                    GError **error);
/* "http://127.0.0.1:9470/metrics", as bound. */
const char *vigild_metrics_http_url(const struct vigild_metrics_http *h);
void vigild_metrics_http_free(struct vigild_metrics_http *h);

/* ---- metrics_snapshot.c ------------------------------------------------ */

struct vigild_metrics;
struct vigild_process;
struct vigild_processes;
struct vigild_statmux;
/* The [metrics] endpoint when `config`'s listen is set, into *out (NULL
 * without one): its address read at the start only (max_jobs follows
 * reloads). A scrape serves what `fill` (vigild_metrics_fill) makes with
 * `user`; the jobs' figures follow `statmux`'s samples and start from the
 * processes already running (taken back after a restart). FALSE with error
 * set when it cannot listen. Every call below is a no-op without an
 * endpoint (NULL). */
gboolean vigild_metrics_start(const vigil_config *config, struct vigild_statmux *statmux,
                              const struct vigild_processes *processes, vigild_metrics_fill_fn fill,
                              void *user, struct vigild_metrics **out, GError **error);
void vigild_metrics_process_started(struct vigild_metrics *m, const struct vigild_process *p);
/* After the process's energy account was copied into it. */
void vigild_metrics_process_ended(struct vigild_metrics *m, const struct vigild_process *p);
/* The configuration goes from `was` to `now`. */
void vigild_metrics_reload(struct vigild_metrics *m, const vigil_config *was,
                           const vigil_config *now);
/* Stops the endpoint and frees `m`. */
void vigild_metrics_stop(struct vigild_metrics *m);
/* The endpoint's URL as bound, or NULL. */
const char *vigild_metrics_url(const struct vigild_metrics *m);
/* What the endpoint serves: `daemon` is the struct vigild its snapshot
 * is taken of (snapshot.h); for vigild_metrics_start, a bench or a test. */
void vigild_metrics_fill(void *daemon, struct vigild_metrics_snapshot *s);

#endif
