/* vigil — the end-of-run report, in text for people or JSON for programs.
 *
 * It runs at exit, in normal context, with the calling thread's guard set:
 * its own writes go straight to libc and are not counted. It is formatted
 * into a buffer and written with write(2): the program's stdio may be in
 * any state by then, and the report never touches stdout. */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "report.h"
#include "vigil/local_protocol.h"

enum report_format { REPORT_TEXT, REPORT_JSON };

static struct {
    bool off;
    bool per_rank; /* under MPI, each rank's own report too */
    enum report_format format;
    char path[4096]; /* "" for stderr */
} config;

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

/* ---- output ------------------------------------------------------------- */

struct out {
    int fd;
    size_t length;
    char buffer[16384];
};

static void out_flush(struct out *o)
{
    size_t done = 0;
    while (done < o->length) {
        ssize_t n = write(o->fd, o->buffer + done, o->length - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* nowhere to write: the report is lost, the program is not */
        done += (size_t)n;
    }
    o->length = 0;
}

static void out_bytes(struct out *o, const char *bytes, size_t length)
{
    while (length > 0) {
        if (o->length == sizeof o->buffer)
            out_flush(o);
        size_t room = sizeof o->buffer - o->length;
        size_t chunk = length < room ? length : room;
        memcpy(o->buffer + o->length, bytes, chunk);
        o->length += chunk;
        bytes += chunk;
        length -= chunk;
    }
}

static void out_text(struct out *o, const char *text)
{
    out_bytes(o, text, strlen(text));
}

__attribute__((format(printf, 2, 3))) static void out_printf(struct out *o, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        out_bytes(o, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Length of the valid UTF-8 sequence at s (at most `left` bytes), or 0. */
static size_t utf8_sequence(const unsigned char *s, size_t left)
{
    size_t n = s[0] < 0x80             ? 1
               : (s[0] & 0xE0) == 0xC0 ? 2
               : (s[0] & 0xF0) == 0xE0 ? 3
               : (s[0] & 0xF8) == 0xF0 ? 4
                                       : 0;
    if (n == 0 || n > left || (n == 2 && s[0] < 0xC2))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* A JSON string. Paths are bytes, not always UTF-8: a byte that is not part
 * of a valid sequence is written as \u00XX, its Latin-1 reading. */
static void out_json_string(struct out *o, const char *text, size_t length)
{
    const unsigned char *s = (const unsigned char *)text;
    out_bytes(o, "\"", 1);
    for (size_t i = 0; i < length;) {
        size_t n = utf8_sequence(s + i, length - i);
        if (n == 1 && s[i] == '"')
            out_bytes(o, "\\\"", 2);
        else if (n == 1 && s[i] == '\\')
            out_bytes(o, "\\\\", 2);
        else if (n == 1 && s[i] < 0x20)
            out_printf(o, "\\u%04x", s[i]);
        else if (n > 0)
            out_bytes(o, text + i, n);
        else
            out_printf(o, "\\u%04x", s[i]);
        i += n ? n : 1;
    }
    out_bytes(o, "\"", 1);
}

/* A path for a terminal: anything unprintable as \xNN. */
static void out_text_path(struct out *o, const char *path, size_t length, int width)
{
    int written = 0;
    for (size_t i = 0; i < length; i++, written++) {
        unsigned char c = (unsigned char)path[i];
        if (c < 0x20 || c == 0x7f) {
            out_printf(o, "\\x%02x", c);
            written += 3;
        } else {
            out_bytes(o, path + i, 1);
        }
    }
    for (; written < width; written++)
        out_bytes(o, " ", 1);
}

/* ---- figures ----------------------------------------------------------------- */

/* Every file's counts, by id, while the busiest are picked. */
struct file_table {
    struct preload_file_figure *files;
    uint32_t slots;
};

static void add_pending(uint32_t file_id, uint64_t calls, uint64_t read_bytes,
                        uint64_t written_bytes, void *user)
{
    struct file_table *t = user;
    if (t->files == NULL || file_id >= t->slots)
        return;
    t->files[file_id].calls += calls;
    t->files[file_id].read_bytes += read_bytes;
    t->files[file_id].written_bytes += written_bytes;
}

static bool busier(const struct preload_file_figure *a, const struct preload_file_figure *b)
{
    uint64_t bytes_a = a->read_bytes + a->written_bytes, bytes_b = b->read_bytes + b->written_bytes;
    return bytes_a != bytes_b ? bytes_a > bytes_b : a->calls > b->calls;
}

static void pick_top_files(struct preload_figures *f)
{
    uint32_t used = preload_file_count_used();
    struct file_table t = {NULL, 1};
    for (uint32_t i = 0; i < used; i++)
        if (preload_file_used_id(i) + 1 > t.slots)
            t.slots = preload_file_used_id(i) + 1;
    /* mmap, not the heap: _exit may bring us here from a signal handler
     * that interrupted malloc, whose lock we would then wait on forever. */
    size_t bytes = t.slots * sizeof *t.files;
    t.files = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t.files == MAP_FAILED)
        return;
    for (uint32_t i = 0; i < used; i++) {
        uint32_t id = preload_file_used_id(i);
        struct preload_file_figure *ff = &t.files[id];
        ff->file_id = id;
        preload_file_counts(id, &ff->calls, &ff->read_bytes, &ff->written_bytes);
    }
    preload_counters_visit_pending(add_pending, &t);
    /* A small insertion sort of the busiest few. */
    for (uint32_t id = 1; id < t.slots; id++) {
        const struct preload_file_figure *ff = &t.files[id];
        if (ff->calls == 0)
            continue;
        int at = f->top_count;
        while (at > 0 && busier(ff, &f->top[at - 1]))
            at--;
        if (at >= PRELOAD_TOP_FILES)
            continue;
        int last = f->top_count < PRELOAD_TOP_FILES ? f->top_count : PRELOAD_TOP_FILES - 1;
        memmove(&f->top[at + 1], &f->top[at], (size_t)(last - at) * sizeof f->top[0]);
        f->top[at] = *ff;
        if (f->top_count < PRELOAD_TOP_FILES)
            f->top_count++;
    }
    munmap(t.files, bytes);
}

void preload_report_gather(struct preload_figures *f)
{
    memset(f, 0, sizeof *f);
    preload_counters_sum(&f->totals);
    struct vigil_tick_anchor now;
    vigil_tick_anchor_now(preload.tick_source, &now);
    vigil_tick_clock_init(&f->clock, preload.tick_source, &preload.start, &now);
    f->runtime_ms = (double)(now.ns - preload.start.ns) / 1e6;

    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        f->cpu_seconds = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                         (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    if (gethostname(f->host, sizeof f->host - 1) != 0)
        strcpy(f->host, "unknown");

    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
        const struct preload_op_counter *c = &f->totals.ops[op];
        f->observed += c->calls;
        if (preload_op_is_network(op))
            f->network_bytes += c->bytes;
        else if (vigil_op_class(op) == VIGIL_OP_READS)
            f->io_read_bytes += c->bytes;
        else if (vigil_op_class(op) == VIGIL_OP_WRITES)
            f->io_written_bytes += c->bytes;
    }
    f->observed += f->totals.excluded;
    f->io_read_bytes -= f->totals.nested_read_bytes;
    f->io_written_bytes -= f->totals.nested_written_bytes;
    pick_top_files(f);
    preload_link_figures(&f->link);
}

static const char *program_name(void)
{
    return preload.argc > 0 && preload.argv && preload.argv[0] ? preload.argv[0] : "(unknown)";
}

/* ---- text ---------------------------------------------------------------------- */

static void human_bytes(char *out, size_t size, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024 && unit < 5) {
        value /= 1024;
        unit++;
    }
    snprintf(out, size, unit ? "%.1f %s" : "%.0f %s", value, units[unit]);
}

/* Text that came from vigild or from the system: on one line, whatever it holds. */
static void out_text_clean(struct out *o, const char *text)
{
    out_text_path(o, text, strlen(text), 0);
}

/* "12.345 (energy/powercap)", "3.210 (energy/estimate, estimated)", "n/a (why)". */
static void out_text_energy(struct out *o, const struct preload_link_figures *l)
{
    if (isnan(l->energy_j)) {
        out_text(o, "n/a (");
        out_text_clean(o, l->energy_note[0] != '\0' ? l->energy_note : "no reason known");
    } else {
        out_printf(o, "%.3f (", l->energy_j);
        out_text_clean(o, l->energy_source[0] != '\0' ? l->energy_source : "unknown source");
        if (l->energy_flags & VIGIL_LOCAL_ENERGY_ESTIMATED)
            out_text(o, ", estimated");
        if (l->energy_flags & VIGIL_LOCAL_ENERGY_UNCERTAIN)
            out_text(o, ", uncertain");
    }
    out_text(o, ")");
}

static void write_text_vigild(struct out *o, const struct preload_link_figures *l,
                              const struct preload_mpi_figures *mpi)
{
    out_text(o, "VIGILD                     ");
    if (l->state == PRELOAD_LINK_STANDALONE) {
        out_text(o, "standalone: ");
        out_text_clean(o, l->reason);
    } else if (mpi != NULL || l->state == PRELOAD_LINK_SUMMARY) {
        if (mpi != NULL)
            out_printf(o, "%u of %d ranks: ", l->ranks_with_summary, mpi->ranks);
        else
            out_printf(o, "process %llu: ", (unsigned long long)l->process_id);
        out_printf(o, "%llu activities drained, %llu gaps, %llu dropped",
                   (unsigned long long)l->activities_drained, (unsigned long long)l->gaps,
                   (unsigned long long)l->dropped);
        if (l->state != PRELOAD_LINK_SUMMARY) {
            out_text(o, "; ");
            out_text_clean(o, l->reason);
        }
    } else {
        if (l->process_id != 0)
            out_printf(o, "process %llu, no summary: ", (unsigned long long)l->process_id);
        else
            out_text(o, "connected, no summary: ");
        out_text_clean(o, l->reason);
    }
    out_text(o, "\n");
}

/* What vigild's capture made of the activities: kept, for the cycles
 * around abnormal ones (the windows), or dropped. Where there is no
 * summary, why, as on the energy line. */
static void write_text_capture(struct out *o, const struct preload_link_figures *l,
                               const struct preload_mpi_figures *mpi)
{
    out_text(o, "CAPTURE                    ");
    if (l->ranks_with_summary == 0) {
        out_text(o, "n/a (");
        out_text_clean(o, l->reason[0] != '\0' ? l->reason : "no summary from vigild");
        out_text(o, ")\n");
        return;
    }
    if (strcmp(l->capture_mode, "none") == 0 && l->capture_forwarded == 0 && l->capture_lost == 0) {
        out_printf(o, "capture off: %llu activities observed, none forwarded\n",
                   (unsigned long long)l->capture_observed);
        return;
    }
    out_text_clean(o, l->capture_mode[0] != '\0' ? l->capture_mode : "unknown mode");
    out_printf(o, ": %llu abnormal cycles of %llu; %llu of %llu activities forwarded",
               (unsigned long long)l->abnormal_cycles, (unsigned long long)l->cycles,
               (unsigned long long)l->capture_forwarded, (unsigned long long)l->capture_observed);
    if (l->capture_observed > 0)
        out_printf(o, " (%.1f %%)",
                   100.0 * (double)l->capture_forwarded / (double)l->capture_observed);
    out_printf(o, ", %llu dropped, ", (unsigned long long)l->capture_dropped);
    /* A joint report's summaries were taken at MPI_Finalize, not at exit. */
    const char *when = mpi != NULL ? "MPI_Finalize" : "exit";
    /* Lost ones may include some a window needed, which calls for action
     * on vigild's side: said last, with why, after the ordinary figures. */
    if (l->capture_lost == 0)
        out_printf(o, "0 lost, %llu held at %s\n", (unsigned long long)l->capture_held, when);
    else
        out_printf(o, "%llu held at %s, %llu lost: vigild's capture memory bound was hit\n",
                   (unsigned long long)l->capture_held, when, (unsigned long long)l->capture_lost);
}

static void write_text_rank_energy(struct out *o, const struct preload_mpi_figures *mpi)
{
    out_printf(o, "\n%-24s %s\n", "energy by rank", "joule; activities vigild forwarded");
    for (int r = 0; r < mpi->ranks; r++) {
        const struct preload_link_figures *l = &mpi->rank_links[r];
        out_printf(o, "rank %-19d ", r);
        out_text_energy(o, l);
        if (l->state == PRELOAD_LINK_SUMMARY)
            out_printf(o, "; %llu forwarded", (unsigned long long)l->capture_forwarded);
        out_text(o, "\n");
    }
}

static void write_text_ranks(struct out *o, const struct preload_mpi_figures *mpi)
{
    char title[32];
    snprintf(title, sizeof title, "per rank (%d ranks)", mpi->ranks);
    out_printf(o, "\n%-24s %16s %16s %16s %18s  %s\n", title, "min", "mean", "max", "sum",
               "max at");
    for (int m = 0; m < PRELOAD_RANK_METRIC_COUNT; m++) {
        const struct preload_rank_stats *st = &mpi->stats[m];
        out_printf(o, "%-24s %16.3f %16.3f %16.3f %18.3f  rank %d\n",
                   preload_rank_metric_name((enum preload_rank_metric)m), st->min, st->mean,
                   st->max, st->sum, st->max_rank);
    }
    if (mpi->rank_links != NULL)
        write_text_rank_energy(o, mpi);
}

static void write_text(struct out *o, const struct preload_figures *f,
                       const struct preload_mpi_figures *mpi)
{
    char total[32], read[32], written[32], network[32];
    human_bytes(total, sizeof total, f->io_read_bytes + f->io_written_bytes);
    human_bytes(read, sizeof read, f->io_read_bytes);
    human_bytes(written, sizeof written, f->io_written_bytes);
    human_bytes(network, sizeof network, f->network_bytes);

    if (mpi != NULL)
        out_printf(o, "\n== vigil MPI report: %s, %d ranks (rank 0: pid %d on %s) ==\n",
                   program_name(), mpi->ranks, (int)preload.pid, f->host);
    else if (preload.mpi_rank >= 0)
        out_printf(o, "\n== vigil report: %s (rank %d, pid %d on %s) ==\n", program_name(),
                   preload.mpi_rank, (int)preload.pid, f->host);
    else
        out_printf(o, "\n== vigil report: %s (pid %d on %s) ==\n", program_name(), (int)preload.pid,
                   f->host);
    out_printf(o, "CONSUMED_CPU_SECONDS       %.3f\n", f->cpu_seconds);
    out_text(o, "CONSUMED_ENERGY_JOULE      ");
    out_text_energy(o, &f->link);
    out_text(o, "\n");
    out_printf(o, "ACCESSED_IO_BYTES          %llu (%s: read %s, written %s)\n",
               (unsigned long long)(f->io_read_bytes + f->io_written_bytes), total, read, written);
    out_printf(o, "TRANSFERRED_NETWORK_BYTES  %llu (%s)\n", (unsigned long long)f->network_bytes,
               network);
    out_printf(o, "OBSERVED_RUNTIME_MS        %.3f\n", f->runtime_ms);
    write_text_vigild(o, &f->link, mpi);
    write_text_capture(o, &f->link, mpi);
    out_text(o, "\n");

    out_printf(o, "%-6s %-20s %12s %16s %12s %8s\n", "layer", "operation", "calls", "bytes",
               "time_ms", "errors");
    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
        const struct preload_op_counter *c = &f->totals.ops[op];
        if (c->calls == 0)
            continue;
        out_printf(
            o, "%-6s %-20s %12llu %16llu %12.3f %8llu\n", vigil_layer_name(vigil_op_layer(op)),
            vigil_op_name(op), (unsigned long long)c->calls, (unsigned long long)c->bytes,
            vigil_tick_clock_duration_ns(&f->clock, c->ticks) / 1e6, (unsigned long long)c->errors);
    }
    if (f->top_count > 0) {
        out_printf(o, "\n%-44s %10s %16s %16s\n", "top files", "calls", "read_bytes",
                   "written_bytes");
        for (int i = 0; i < f->top_count; i++) {
            size_t length;
            const char *path = preload_file_path(f->top[i].file_id, &length);
            out_text_path(o, path ? path : "?", path ? length : 1, 44);
            out_printf(o, " %10llu %16llu %16llu\n", (unsigned long long)f->top[i].calls,
                       (unsigned long long)f->top[i].read_bytes,
                       (unsigned long long)f->top[i].written_bytes);
        }
    }
    /* Without a node daemon to drain it, the ring keeps the first records
     * and drops the rest: say so, lest the drops look like a fault. */
    out_printf(o,
               "\nactivities: %llu observed, %llu recorded, %llu dropped (ring full%s), %llu "
               "excluded (counted only)\n",
               (unsigned long long)f->observed, (unsigned long long)f->totals.recorded,
               (unsigned long long)f->totals.dropped,
               f->link.state == PRELOAD_LINK_STANDALONE ? ": no vigild drains it" : "",
               (unsigned long long)f->totals.excluded);
    if (mpi != NULL)
        write_text_ranks(o, mpi);
}

/* ---- JSON ----------------------------------------------------------------------- */

static void out_json_text(struct out *o, const char *text)
{
    out_json_string(o, text, strlen(text));
}

static void out_json_count(struct out *o, const char *name, uint64_t value, bool known)
{
    if (known)
        out_printf(o, ",\"%s\":%llu", name, (unsigned long long)value);
    else
        out_printf(o, ",\"%s\":null", name);
}

/* energy_joule, energy_source, energy_estimated, energy_uncertain and
 * energy_note, each after a comma. */
static void write_json_energy(struct out *o, const struct preload_link_figures *l)
{
    bool known = !isnan(l->energy_j);
    if (known)
        out_printf(o, ",\"energy_joule\":%.6f,\"energy_source\":", l->energy_j);
    else
        out_text(o, ",\"energy_joule\":null,\"energy_source\":");
    out_json_text(o, known && l->energy_source[0] != '\0' ? l->energy_source : "none");
    out_printf(o, ",\"energy_estimated\":%s,\"energy_uncertain\":%s,\"energy_note\":",
               l->energy_flags & VIGIL_LOCAL_ENERGY_ESTIMATED ? "true" : "false",
               l->energy_flags & VIGIL_LOCAL_ENERGY_UNCERTAIN ? "true" : "false");
    if (known)
        out_text(o, "null");
    else
        out_json_text(o, l->energy_note);
}

static void write_json_vigild(struct out *o, const struct preload_link_figures *l,
                              const struct preload_mpi_figures *mpi)
{
    static const char *const states[] = {
        [PRELOAD_LINK_STANDALONE] = "standalone",
        [PRELOAD_LINK_CONNECTED] = "connected",
        [PRELOAD_LINK_SUMMARY] = "summary",
    };
    out_text(o, ",\"vigild\":{\"state\":");
    out_json_text(o, l->state <= PRELOAD_LINK_SUMMARY ? states[l->state] : "?");
    if (mpi != NULL)
        out_printf(o, ",\"ranks_with_summary\":%u", l->ranks_with_summary);
    else
        out_json_count(o, "process_id", l->process_id, l->process_id != 0);
    out_text(o, ",\"reason\":");
    if (l->state == PRELOAD_LINK_SUMMARY)
        out_text(o, "null");
    else
        out_json_text(o, l->reason);
    bool drained = l->ranks_with_summary > 0;
    out_json_count(o, "activities_drained", l->activities_drained, drained);
    out_json_count(o, "names_drained", l->names_drained, drained);
    out_json_count(o, "gaps", l->gaps, drained);
    out_json_count(o, "dropped", l->dropped, drained);
    out_json_count(o, "anomalies", l->anomalies, drained);
    if (drained && !isnan(l->cpu_s))
        out_printf(o, ",\"cpu_seconds\":%.6f", l->cpu_s);
    else
        out_text(o, ",\"cpu_seconds\":null");
    /* The same keys with or without a summary, null when unknown. */
    out_text(o, ",\"capture\":{\"mode\":");
    if (drained)
        out_json_text(o, l->capture_mode);
    else
        out_text(o, "null");
    out_json_count(o, "cycles", l->cycles, drained);
    out_json_count(o, "abnormal_cycles", l->abnormal_cycles, drained);
    out_json_count(o, "observed", l->capture_observed, drained);
    out_json_count(o, "forwarded", l->capture_forwarded, drained);
    out_json_count(o, "dropped", l->capture_dropped, drained);
    out_json_count(o, "lost", l->capture_lost, drained);
    out_json_count(o, "held", l->capture_held, drained);
    out_text(o, "}}");
}

static void write_json_rank_energy(struct out *o, const struct preload_mpi_figures *mpi)
{
    out_text(o, ",\"energy_by_rank\":[");
    for (int r = 0; r < mpi->ranks; r++) {
        const struct preload_link_figures *l = &mpi->rank_links[r];
        out_printf(o, "%s{\"rank\":%d", r > 0 ? "," : "", r);
        write_json_energy(o, l);
        out_json_count(o, "vigild_process_id", l->process_id, l->process_id != 0);
        out_json_count(o, "capture_forwarded", l->capture_forwarded,
                       l->state == PRELOAD_LINK_SUMMARY);
        out_text(o, "}");
    }
    out_text(o, "]");
}

static void write_json_ranks(struct out *o, const struct preload_mpi_figures *mpi)
{
    out_printf(o, ",\"ranks\":%d,\"per_rank\":{", mpi->ranks);
    for (int m = 0; m < PRELOAD_RANK_METRIC_COUNT; m++) {
        const struct preload_rank_stats *st = &mpi->stats[m];
        out_printf(
            o, "%s\"%s\":{\"min\":%.6f,\"mean\":%.6f,\"max\":%.6f,\"sum\":%.6f,\"max_rank\":%d}",
            m ? "," : "", preload_rank_metric_name((enum preload_rank_metric)m), st->min, st->mean,
            st->max, st->sum, st->max_rank);
    }
    out_text(o, "}");
    if (mpi->rank_links != NULL)
        write_json_rank_energy(o, mpi);
}

static void write_json(struct out *o, const struct preload_figures *f,
                       const struct preload_mpi_figures *mpi)
{
    out_text(o, "{\"vigil_report\":1,\"program\":");
    const char *program = program_name();
    out_json_string(o, program, strlen(program));
    out_text(o, ",\"argv\":[");
    for (int i = 0; i < preload.argc && preload.argv && preload.argv[i]; i++) {
        if (i > 0)
            out_text(o, ",");
        out_json_string(o, preload.argv[i], strlen(preload.argv[i]));
    }
    out_printf(o, "],\"pid\":%d,", (int)preload.pid);
    if (mpi == NULL && preload.mpi_rank >= 0)
        out_printf(o, "\"rank\":%d,", preload.mpi_rank); /* a rank's own report */
    out_text(o, "\"host\":");
    out_json_string(o, f->host, strlen(f->host));
    out_printf(o, ",\"runtime_ms\":%.3f,\"cpu_seconds\":%.6f", f->runtime_ms, f->cpu_seconds);
    write_json_energy(o, &f->link);
    write_json_vigild(o, &f->link, mpi);
    out_printf(o,
               ",\"io_bytes_read\":%llu,\"io_bytes_written\":%llu,\"network_bytes\":%llu,"
               "\"activities\":{\"observed\":%llu,\"recorded\":%llu,\"dropped\":%llu,"
               "\"excluded\":%llu}",
               (unsigned long long)f->io_read_bytes, (unsigned long long)f->io_written_bytes,
               (unsigned long long)f->network_bytes, (unsigned long long)f->observed,
               (unsigned long long)f->totals.recorded, (unsigned long long)f->totals.dropped,
               (unsigned long long)f->totals.excluded);
    out_text(o, ",\"layers\":{");
    for (unsigned layer = 1; layer <= VIGIL_LAYER_COUNT; layer++) {
        out_printf(o, "%s\"%s\":{", layer > 1 ? "," : "", vigil_layer_name(layer));
        bool first = true;
        for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
            const struct preload_op_counter *c = &f->totals.ops[op];
            if (c->calls == 0 || vigil_op_layer(op) != layer)
                continue;
            out_printf(
                o, "%s\"%s\":{\"calls\":%llu,\"bytes\":%llu,\"time_ns\":%.0f,\"errors\":%llu}",
                first ? "" : ",", vigil_op_name(op), (unsigned long long)c->calls,
                (unsigned long long)c->bytes, vigil_tick_clock_duration_ns(&f->clock, c->ticks),
                (unsigned long long)c->errors);
            first = false;
        }
        out_text(o, "}");
    }
    out_text(o, "},\"files\":[");
    for (int i = 0; i < f->top_count; i++) {
        size_t length;
        const char *path = preload_file_path(f->top[i].file_id, &length);
        out_text(o, i > 0 ? ",{\"path\":" : "{\"path\":");
        out_json_string(o, path ? path : "?", path ? length : 1);
        out_printf(o, ",\"calls\":%llu,\"bytes_read\":%llu,\"bytes_written\":%llu}",
                   (unsigned long long)f->top[i].calls, (unsigned long long)f->top[i].read_bytes,
                   (unsigned long long)f->top[i].written_bytes);
    }
    out_text(o, "]");
    if (mpi != NULL)
        write_json_ranks(o, mpi);
    out_text(o, "}\n");
}

/* ---- where it goes ------------------------------------------------------------------ */

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

void preload_report_emit(const struct preload_figures *f, const struct preload_mpi_figures *mpi)
{
    if (config.off)
        return;
    static struct out o; /* 16 KiB: not on the stack of whatever thread exits */
    /* The program's stderr as it is now, or as it was at start if the
     * program has closed it by now. */
    o.fd = fcntl(2, F_GETFD) >= 0 || preload.saved_stderr < 0 ? 2 : preload.saved_stderr;
    o.length = 0;
    if (config.path[0] != '\0') {
        /* An MPI job's report is "PID-job", so that rank 0's own report
         * (VIGIL_REPORT_PER_RANK=1) cannot overwrite it. */
        char pid_text[32], path[sizeof config.path + 64];
        snprintf(pid_text, sizeof pid_text, mpi != NULL ? "%d-job" : "%d", (int)preload.pid);
        expand_path(path, sizeof path, pid_text);
        o.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (o.fd < 0) {
            dprintf(2, "vigil: cannot write the report to %s: %s\n", path, strerror(errno));
            return;
        }
    }
    if (config.format == REPORT_JSON)
        write_json(&o, f, mpi);
    else
        write_text(&o, f, mpi);
    out_flush(&o);
    if (config.path[0] != '\0')
        close(o.fd);
}

void preload_report_write(void)
{
    if (config.off)
        return;
    static struct preload_figures f;
    preload_report_gather(&f);
    preload_report_emit(&f, NULL);
}

/* ---- per-rank figures ------------------------------------------------------------- */

const char *preload_rank_metric_name(enum preload_rank_metric metric)
{
    static const char *const names[] = {
#define PRELOAD_RANK_METRIC_NAME(suffix, name) name,
        PRELOAD_RANK_METRICS(PRELOAD_RANK_METRIC_NAME)
#undef PRELOAD_RANK_METRIC_NAME
    };
    return metric < PRELOAD_RANK_METRIC_COUNT ? names[metric] : "?";
}

void preload_report_rank_values(const struct preload_figures *f,
                                double values[PRELOAD_RANK_METRIC_COUNT])
{
    double layer_read[VIGIL_LAYER_COUNT + 1] = {0}, layer_written[VIGIL_LAYER_COUNT + 1] = {0};
    double layer_calls[VIGIL_LAYER_COUNT + 1] = {0}, io_time_ns = 0;
    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
        const struct preload_op_counter *c = &f->totals.ops[op];
        unsigned layer = vigil_op_layer(op);
        if (layer == 0)
            continue;
        layer_calls[layer] += (double)c->calls;
        if (vigil_op_class(op) == VIGIL_OP_READS)
            layer_read[layer] += (double)c->bytes;
        else if (vigil_op_class(op) == VIGIL_OP_WRITES)
            layer_written[layer] += (double)c->bytes;
        io_time_ns += vigil_tick_clock_duration_ns(&f->clock, c->ticks);
    }
    values[PRELOAD_RANK_RUNTIME_MS] = f->runtime_ms;
    values[PRELOAD_RANK_CPU_SECONDS] = f->cpu_seconds;
    values[PRELOAD_RANK_IO_TIME_SECONDS] = io_time_ns / 1e9;
    values[PRELOAD_RANK_IO_BYTES_READ] = (double)f->io_read_bytes;
    values[PRELOAD_RANK_IO_BYTES_WRITTEN] = (double)f->io_written_bytes;
    values[PRELOAD_RANK_NETWORK_BYTES] = (double)f->network_bytes;
    values[PRELOAD_RANK_POSIX_BYTES_READ] = layer_read[VIGIL_LAYER_POSIX];
    values[PRELOAD_RANK_POSIX_BYTES_WRITTEN] = layer_written[VIGIL_LAYER_POSIX];
    values[PRELOAD_RANK_STDIO_BYTES_READ] = layer_read[VIGIL_LAYER_STDIO];
    values[PRELOAD_RANK_STDIO_BYTES_WRITTEN] = layer_written[VIGIL_LAYER_STDIO];
    values[PRELOAD_RANK_MPIIO_BYTES_READ] = layer_read[VIGIL_LAYER_MPIIO];
    values[PRELOAD_RANK_MPIIO_BYTES_WRITTEN] = layer_written[VIGIL_LAYER_MPIIO];
    values[PRELOAD_RANK_POSIX_CALLS] = layer_calls[VIGIL_LAYER_POSIX];
    values[PRELOAD_RANK_STDIO_CALLS] = layer_calls[VIGIL_LAYER_STDIO];
    values[PRELOAD_RANK_MPIIO_CALLS] = layer_calls[VIGIL_LAYER_MPIIO];
    values[PRELOAD_RANK_OBSERVED] = (double)f->observed;
    values[PRELOAD_RANK_RECORDED] = (double)f->totals.recorded;
    values[PRELOAD_RANK_DROPPED] = (double)f->totals.dropped;
    values[PRELOAD_RANK_EXCLUDED] = (double)f->totals.excluded;
}
