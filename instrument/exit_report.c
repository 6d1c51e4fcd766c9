/* vigil — the end-of-run report: this process's figures gathered at exit,
 * printed in text for people or JSON for programs (report/report_text.c
 * renders both), and the JSON form kept for vigild, which stores it so that
 * `vigil report` prints it again exactly as it was printed here.
 *
 * It runs at exit, in normal context, with the calling thread's guard set:
 * its own writes go straight to libc and are not counted. It is formatted
 * into a buffer and written with write(2): the program's stdio may be in
 * any state by then, and the report never touches stdout. Nothing here
 * uses the heap: _exit may bring us here from a signal handler that
 * interrupted malloc, whose lock we would then wait on forever. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "regions.h"
#include "vigil/local_protocol.h"
#include "exit_report.h"

enum report_format { REPORT_TEXT, REPORT_JSON };

static struct {
    bool off;
    bool per_rank; /* under MPI, each rank's own report too */
    enum report_format format;
    char path[4096]; /* "" for stderr */
} config;

/* The JSON kept for vigild: a sealed memfd, or -1. */
static struct {
    int fd;
    uint64_t bytes;
} kept = {.fd = -1};

bool preload_report_per_rank(void)
{
    return config.per_rank;
}

bool preload_report_off(void)
{
    return config.off;
}

void preload_report_init(void)
{
    const char *target = getenv("VIGIL_REPORT");
    const char *format = getenv("VIGIL_REPORT_FORMAT");
    const char *per_rank = getenv("VIGIL_REPORT_PER_RANK");
    config.per_rank = per_rank != NULL && strcmp(per_rank, "1") == 0;
    if (target != NULL && strcmp(target, "off") == 0)
        config.off = true;
    else if (target != NULL && target[0] != '\0' && strcmp(target, "stderr") != 0)
        snprintf(config.path, sizeof config.path, "%s", target);
    if (format == NULL || format[0] == '\0' || strcmp(format, "text") == 0)
        config.format = REPORT_TEXT;
    else if (strcmp(format, "json") == 0)
        config.format = REPORT_JSON;
    else
        dprintf(2, "vigil: VIGIL_REPORT_FORMAT=%s is neither text nor json; using text\n", format);
}

/* ---- figures ------------------------------------------------------------------------------- */

void preload_link_view(const struct preload_link_figures *l, struct vigil_report_link *view)
{
    *view = (struct vigil_report_link){
        .state = (enum vigil_report_link_state)l->state,
        .ranks_with_summary = l->ranks_with_summary,
        .process_id = l->process_id,
        .activities_drained = l->activities_drained,
        .names_drained = l->names_drained,
        .gaps = l->gaps,
        .dropped = l->dropped,
        .anomalies = l->anomalies,
        .cpu_s = l->cpu_s,
        .energy_j = l->energy_j,
        .energy_flags = l->energy_flags,
        .energy_source = l->energy_source,
        .energy_note = l->energy_note,
        .reason = l->reason,
        .cycles = l->cycles,
        .abnormal_cycles = l->abnormal_cycles,
        .capture_observed = l->capture_observed,
        .capture_forwarded = l->capture_forwarded,
        .capture_dropped = l->capture_dropped,
        .capture_lost = l->capture_lost,
        .capture_held = l->capture_held,
        .capture_mode = l->capture_mode,
    };
}

void preload_report_gather(struct preload_report *p)
{
    memset(p, 0, sizeof *p);
    struct vigil_report *r = &p->r;
    static struct preload_totals totals; /* 10 KiB: not on the stack of whatever thread exits */
    preload_counters_sum(&totals);
    struct vigil_tick_anchor now;
    struct vigil_tick_clock clock;
    vigil_tick_anchor_now(preload.tick_source, &now);
    vigil_tick_clock_init(&clock, preload.tick_source, &preload.start, &now);
    r->runtime_ms = (double)(now.ns - preload.start.ns) / 1e6;

    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        r->cpu_seconds = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                         (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    if (gethostname(p->host, sizeof p->host - 1) != 0)
        strcpy(p->host, "unknown");
    r->host = p->host;
    r->run_key = preload_link_run_key();
    r->program =
        preload.argc > 0 && preload.argv && preload.argv[0] ? preload.argv[0] : "(unknown)";
    r->argv = (const char *const *)preload.argv;
    while (preload.argv != NULL && r->argc < preload.argc && preload.argv[r->argc] != NULL)
        r->argc++;
    r->pid = (int32_t)preload.pid;
    r->rank = preload.mpi_rank;
    r->in_job_report = preload.joint_reported;

    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
        const struct preload_op_counter *c = &totals.ops[op];
        double ns = vigil_tick_clock_duration_ns(&clock, c->ticks);
        r->ops[op] = (struct vigil_report_op){
            .calls = c->calls,
            .bytes = c->bytes,
            .time_ns = ns > 0 ? (uint64_t)(ns + 0.5) : 0,
            .errors = c->errors,
        };
        r->observed += c->calls;
        if (preload_op_is_network(op))
            r->network_bytes += c->bytes;
        if (preload_op_reads_files(op))
            r->io_read_bytes += c->bytes;
        if (preload_op_writes_files(op))
            r->io_written_bytes += c->bytes;
    }
    r->recorded = totals.recorded;
    r->dropped = totals.dropped;
    r->excluded = totals.excluded;
    r->io_read_bytes -= totals.nested_read_bytes;
    r->io_written_bytes -= totals.nested_written_bytes;
    preload_report_gather_files(r, &clock);
    preload_link_figures(&p->link);
    preload_link_view(&p->link, &r->link);
    preload_regions_report(r);
    preload_report_findings(r);
}

void preload_report_findings(struct vigil_report *r)
{
    static struct vigil_insight_findings findings; /* 8 KiB: not on an exiting thread's stack */
    struct vigil_insight_thresholds thresholds;
    bool from_vigild = preload_link_insight(&thresholds);
    /* A job's report merges the ranks' files: rank 0's streams are not
     * the job's (each rank's own report has its own). */
    static struct vigil_insight_process process;
    process.unbuffered_count =
        r->ranks > 0 ? 0
                     : preload_unbuffered_paths(process.unbuffered_paths, process.unbuffered_bytes);
    vigil_insight_find(r, &thresholds, &process, from_vigild ? "vigild" : "defaults", &findings);
}

/* ---- where it goes ------------------------------------------------------------------------- */

static void write_fd(void *user, const char *bytes, size_t length)
{
    int fd = *(const int *)user;
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(fd, bytes + done, length - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* nowhere to write: the report is lost, the program is not */
        done += (size_t)n;
    }
}

/* The report path with %p replaced by `pid_text` (and %% by %). */
static void expand_path(char *out, size_t size, const char *pid_text)
{
    size_t n = 0;
    for (const char *p = config.path; *p && n + 1 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            n += (size_t)snprintf(out + n, size - n, "%s", pid_text);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[n++] = '%';
            p++;
        } else {
            out[n++] = *p;
        }
        if (n >= size)
            n = size - 1;
    }
    out[n] = '\0';
}

void preload_report_emit(const struct vigil_report *r)
{
    if (config.off)
        return;
    static struct vigil_report_sink sink; /* not on the stack of whatever thread exits */
    /* The program's stderr as it is now, or as it was at start if the
     * program has closed it by now. */
    int fd = fcntl(2, F_GETFD) >= 0 || preload.saved_stderr < 0 ? 2 : preload.saved_stderr;
    bool to_file = config.path[0] != '\0';
    if (to_file) {
        /* An MPI job's report is "PID-job", so that rank 0's own report
         * (VIGIL_REPORT_PER_RANK=1) cannot overwrite it. */
        char pid_text[32], path[sizeof config.path + 64];
        snprintf(pid_text, sizeof pid_text, r->ranks > 0 ? "%d-job" : "%d", (int)preload.pid);
        expand_path(path, sizeof path, pid_text);
        int file_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (file_fd >= 0) {
            fd = file_fd;
        } else {
            /* Not lost: on stderr instead, saying why. The program's exit
             * status stays the program's. */
            dprintf(fd, "vigil: cannot write the report to %s: %s; here it is instead:\n", path,
                    strerror(errno));
            to_file = false;
        }
    }
    vigil_report_sink_init(&sink, write_fd, &fd);
    if (config.format == REPORT_JSON)
        vigil_report_write_json(&sink, r);
    else
        vigil_report_write_text(&sink, r);
    vigil_report_sink_flush(&sink);
    if (to_file)
        close(fd);
}

/* ---- the JSON for vigild ------------------------------------------------------------------- */

struct counted_fd {
    int fd;
    uint64_t bytes;
    bool failed;
};

static void write_counted(void *user, const char *bytes, size_t length)
{
    struct counted_fd *c = user;
    size_t done = 0;
    while (!c->failed && done < length) {
        ssize_t n = write(c->fd, bytes + done, length - done);
        if (n < 0 && errno == EINTR)
            continue;
        c->failed = n <= 0;
        done += n > 0 ? (size_t)n : 0;
    }
    c->bytes += done;
}

void preload_report_keep_json(const struct vigil_report *r)
{
    if (kept.fd >= 0)
        return;
    int saved_errno = errno;
    /* A memfd, as STATUS uses: a report outgrows a message, and vigild
     * reads a sealed one knowing nobody can change it under it. */
    int first = memfd_create("vigil-report", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (first < 0) {
        errno = saved_errno;
        return;
    }
    int fd = fcntl(first, F_DUPFD_CLOEXEC, preload.private_fd_floor);
    if (fd >= 0)
        close(first);
    else
        fd = first; /* where it is is fine too: it is closed before anyone could mind */
    static struct vigil_report_sink sink;
    struct counted_fd out = {.fd = fd};
    vigil_report_sink_init(&sink, write_counted, &out);
    vigil_report_write_json(&sink, r);
    vigil_report_sink_flush(&sink);
    /* vigild takes at most VIGIL_LOCAL_REPORT_MAX_BYTES: past it, fewer
     * files (the busiest; files_total still counts them all). */
    static struct vigil_report fewer;
    fewer = *r;
    while (!out.failed && out.bytes > VIGIL_LOCAL_REPORT_MAX_BYTES && fewer.file_count > 0) {
        uint64_t per_file = out.bytes / (uint64_t)(fewer.file_count + 1) + 1;
        uint64_t over = out.bytes - VIGIL_LOCAL_REPORT_MAX_BYTES;
        uint64_t cut = over / per_file + 1 + (uint64_t)fewer.file_count / 16;
        fewer.file_count = cut >= (uint64_t)fewer.file_count ? 0 : fewer.file_count - (int)cut;
        out = (struct counted_fd){.fd = fd};
        if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
            out.failed = true;
            break;
        }
        vigil_report_sink_init(&sink, write_counted, &out);
        vigil_report_write_json(&sink, &fewer);
        vigil_report_sink_flush(&sink);
    }
    if (out.failed ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        close(fd);
    } else {
        kept.fd = fd;
        kept.bytes = out.bytes;
    }
    errno = saved_errno;
}

int preload_report_kept_json(uint64_t *bytes)
{
    *bytes = kept.fd >= 0 ? kept.bytes : 0;
    return kept.fd;
}

void preload_report_reset_after_fork(void)
{
    if (kept.fd >= 0)
        close(kept.fd);
    kept.fd = -1;
    kept.bytes = 0;
}

/* ---- per-rank figures ---------------------------------------------------------------------- */

void preload_report_rank_values(const struct vigil_report *r,
                                double values[VIGIL_REPORT_RANK_METRIC_COUNT])
{
    double layer_read[VIGIL_LAYER_COUNT + 1] = {0}, layer_written[VIGIL_LAYER_COUNT + 1] = {0};
    double layer_calls[VIGIL_LAYER_COUNT + 1] = {0}, io_time_ns = 0;
    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
        const struct vigil_report_op *c = &r->ops[op];
        unsigned layer = vigil_op_layer(op);
        if (layer == 0)
            continue;
        layer_calls[layer] += (double)c->calls;
        if (preload_op_reads_files(op))
            layer_read[layer] += (double)c->bytes;
        if (preload_op_writes_files(op))
            layer_written[layer] += (double)c->bytes;
        io_time_ns += (double)c->time_ns;
    }
    values[VIGIL_REPORT_RANK_RUNTIME_MS] = r->runtime_ms;
    values[VIGIL_REPORT_RANK_CPU_SECONDS] = r->cpu_seconds;
    values[VIGIL_REPORT_RANK_IO_TIME_SECONDS] = io_time_ns / 1e9;
    values[VIGIL_REPORT_RANK_IO_BYTES_READ] = (double)r->io_read_bytes;
    values[VIGIL_REPORT_RANK_IO_BYTES_WRITTEN] = (double)r->io_written_bytes;
    values[VIGIL_REPORT_RANK_NETWORK_BYTES] = (double)r->network_bytes;
    values[VIGIL_REPORT_RANK_POSIX_BYTES_READ] = layer_read[VIGIL_LAYER_POSIX];
    values[VIGIL_REPORT_RANK_POSIX_BYTES_WRITTEN] = layer_written[VIGIL_LAYER_POSIX];
    values[VIGIL_REPORT_RANK_STDIO_BYTES_READ] = layer_read[VIGIL_LAYER_STDIO];
    values[VIGIL_REPORT_RANK_STDIO_BYTES_WRITTEN] = layer_written[VIGIL_LAYER_STDIO];
    values[VIGIL_REPORT_RANK_MPIIO_BYTES_READ] = layer_read[VIGIL_LAYER_MPIIO];
    values[VIGIL_REPORT_RANK_MPIIO_BYTES_WRITTEN] = layer_written[VIGIL_LAYER_MPIIO];
    values[VIGIL_REPORT_RANK_POSIX_CALLS] = layer_calls[VIGIL_LAYER_POSIX];
    values[VIGIL_REPORT_RANK_STDIO_CALLS] = layer_calls[VIGIL_LAYER_STDIO];
    values[VIGIL_REPORT_RANK_MPIIO_CALLS] = layer_calls[VIGIL_LAYER_MPIIO];
    values[VIGIL_REPORT_RANK_OBSERVED] = (double)r->observed;
    values[VIGIL_REPORT_RANK_RECORDED] = (double)r->recorded;
    values[VIGIL_REPORT_RANK_DROPPED] = (double)r->dropped;
    values[VIGIL_REPORT_RANK_EXCLUDED] = (double)r->excluded;
}
