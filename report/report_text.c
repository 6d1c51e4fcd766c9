/* vigil — the end-of-run report's two forms, from its figures
 * (vigil/report.h).
 *
 * Called on libvigil-preload.so's way out: no heap, no locks, nothing but
 * formatting into the sink's buffer. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/local_protocol.h"
#include "report_put.h"
#include "vigil/report.h"

/* ---- the sink ------------------------------------------------------------------------------ */

void vigil_report_sink_init(struct vigil_report_sink *sink, vigil_report_write_fn write, void *user)
{
    sink->write = write;
    sink->user = user;
    sink->length = 0;
}

void vigil_report_sink_flush(struct vigil_report_sink *sink)
{
    if (sink->length > 0 && sink->write != NULL)
        sink->write(sink->user, sink->buffer, sink->length);
    sink->length = 0;
}

static void put_bytes(struct vigil_report_sink *s, const char *bytes, size_t length)
{
    while (length > 0) {
        if (s->length == sizeof s->buffer)
            vigil_report_sink_flush(s);
        size_t room = sizeof s->buffer - s->length;
        size_t chunk = length < room ? length : room;
        memcpy(s->buffer + s->length, bytes, chunk);
        s->length += chunk;
        bytes += chunk;
        length -= chunk;
    }
}

static void put_text(struct vigil_report_sink *s, const char *text)
{
    put_bytes(s, text, strlen(text));
}

void vigil_report_put_printf(struct vigil_report_sink *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        put_bytes(s, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

#define put_printf vigil_report_put_printf

/* ---- figures as both forms print them ------------------------------------------------------ */

double vigil_report_round(double value, int decimals)
{
    /* Beyond 2^53 a double is an integer and prints exactly. */
    if (!isfinite(value) || fabs(value) >= 9007199254740992.0)
        return value;
    char text[64];
    snprintf(text, sizeof text, "%.*f", decimals, value);
    return strtod(text, NULL);
}

/* Decimals the JSON gives each kind of double. */
#define RUNTIME_DECIMALS 3
#define FIGURE_DECIMALS  6

const char *vigil_report_name_at(const char *const *names, int count, int index)
{
    return index >= 0 && index < count ? names[index] : "?";
}

int vigil_report_name_index(const char *const *names, int count, const char *name)
{
    int i = 0;
    while (i < count && strcmp(names[i], name) != 0)
        i++;
    return i;
}

static const char *const rank_metric_names[] = {VIGIL_REPORT_RANK_METRICS(VIGIL_REPORT_NAME_OF)};

const char *vigil_report_rank_metric_name(enum vigil_report_rank_metric metric)
{
    return vigil_report_name_at(rank_metric_names, VIGIL_REPORT_RANK_METRIC_COUNT, (int)metric);
}

enum vigil_report_rank_metric vigil_report_rank_metric_from_name(const char *name)
{
    return (enum vigil_report_rank_metric)vigil_report_name_index(
        rank_metric_names, VIGIL_REPORT_RANK_METRIC_COUNT, name);
}

static const char *const link_state_names[] = {
    [VIGIL_REPORT_STANDALONE] = "standalone",
    [VIGIL_REPORT_CONNECTED] = "connected",
    [VIGIL_REPORT_SUMMARY] = "summary",
};

const char *vigil_report_link_state_name(enum vigil_report_link_state state)
{
    return vigil_report_name_at(
        link_state_names, (int)(sizeof link_state_names / sizeof link_state_names[0]), (int)state);
}

/* ---- strings: bytes read as characters ----------------------------------------------------- */

/* The character at s (at most `left` bytes) and its length in bytes: a
 * valid UTF-8 sequence (no overlong forms, surrogates or values past
 * U+10FFFF), or else one byte, read as Latin-1. */
static size_t next_char(const unsigned char *s, size_t left, uint32_t *cp)
{
    unsigned char b = s[0];
    size_t n = b < 0x80                 ? 1
               : b >= 0xC2 && b <= 0xDF ? 2
               : b >= 0xE0 && b <= 0xEF ? 3
               : b >= 0xF0 && b <= 0xF4 ? 4
                                        : 0;
    if (n == 1 || n == 0 || n > left) {
        *cp = b;
        return 1;
    }
    /* The second byte's range rules out overlong forms, surrogates and
     * values past U+10FFFF. */
    unsigned char low = 0x80, high = 0xBF;
    if (b == 0xE0)
        low = 0xA0;
    else if (b == 0xED)
        high = 0x9F;
    else if (b == 0xF0)
        low = 0x90;
    else if (b == 0xF4)
        high = 0x8F;
    if (s[1] < low || s[1] > high) {
        *cp = b;
        return 1;
    }
    uint32_t value = b & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = b;
            return 1;
        }
        value = value << 6 | (s[i] & 0x3Fu);
    }
    *cp = value;
    return n;
}

static void put_utf8(struct vigil_report_sink *s, uint32_t cp)
{
    char out[4];
    size_t n;
    if (cp < 0x80) {
        out[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | cp >> 18);
        out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    put_bytes(s, out, n);
}

/* For a terminal, on one line: control characters as \xNN, padded with
 * spaces to `width` characters. Returns the characters written, padding
 * included. */
static int put_clean_bytes(struct vigil_report_sink *s, const char *text, size_t length, int width)
{
    const unsigned char *p = (const unsigned char *)text;
    int written = 0;
    for (size_t i = 0; i < length;) {
        uint32_t cp;
        i += next_char(p + i, length - i, &cp);
        if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) {
            put_printf(s, "\\x%02x", (unsigned)cp);
            written += 4;
        } else {
            put_utf8(s, cp);
            written++;
        }
    }
    for (; written < width; written++)
        put_bytes(s, " ", 1);
    return written;
}

static void put_clean(struct vigil_report_sink *s, const char *text)
{
    put_clean_bytes(s, text, strlen(text), 0);
}

/* A JSON string in plain ASCII. */
static void put_json_bytes(struct vigil_report_sink *s, const char *text, size_t length)
{
    const unsigned char *p = (const unsigned char *)text;
    put_bytes(s, "\"", 1);
    for (size_t i = 0; i < length;) {
        uint32_t cp;
        i += next_char(p + i, length - i, &cp);
        if (cp == '"')
            put_bytes(s, "\\\"", 2);
        else if (cp == '\\')
            put_bytes(s, "\\\\", 2);
        else if (cp < 0x20 || (cp >= 0x7F && cp < 0x10000))
            put_printf(s, "\\u%04x", (unsigned)cp);
        else if (cp >= 0x10000)
            put_printf(s, "\\u%04x\\u%04x", (unsigned)(0xD800 + ((cp - 0x10000) >> 10)),
                       (unsigned)(0xDC00 + ((cp - 0x10000) & 0x3FF)));
        else
            put_bytes(s, &(char){(char)cp}, 1);
    }
    put_bytes(s, "\"", 1);
}

static void put_json_string(struct vigil_report_sink *s, const char *text)
{
    put_json_bytes(s, text, strlen(text));
}

/* ---- text ---------------------------------------------------------------------------------- */

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

/* vigild's figures are known when at least one summary came. */
static bool drained(const struct vigil_report_link *l)
{
    return l->ranks_with_summary > 0;
}

/* "energy/powercap", or for a figure vigild took from more than one
 * ("energy/powercap+energy/estimate": the source changed while the
 * process ran, or the ranks' nodes had different ones) "energy from two
 * sources: energy/powercap, energy/estimate". */
static void text_energy_sources(struct vigil_report_sink *s, const char *sources)
{
    static const char *const counts[] = {"two", "three", "four", "five"};
    size_t joins = 0;
    for (const char *p = strchr(sources, '+'); p != NULL; p = strchr(p + 1, '+'))
        joins++;
    if (joins == 0) {
        put_clean(s, sources);
        return;
    }
    if (joins <= sizeof counts / sizeof counts[0])
        put_printf(s, "energy from %s sources: ", counts[joins - 1]);
    else
        put_printf(s, "energy from %zu sources: ", joins + 1);
    char name[64];
    for (const char *p = sources; *p != '\0';) {
        const char *end = strchr(p, '+');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        put_clean(s, name);
        if (end == NULL)
            break;
        put_text(s, ", ");
        p = end + 1;
    }
}

/* "12.345 (energy/powercap)", "3.210 (energy/estimate, estimated)", "n/a (why)". */
static void text_energy(struct vigil_report_sink *s, const struct vigil_report_link *l)
{
    if (isnan(l->energy_j)) {
        put_text(s, "n/a (");
        put_clean(s, l->energy_note[0] != '\0' ? l->energy_note : "no reason known");
    } else {
        put_printf(s, "%.3f (", vigil_report_round(l->energy_j, FIGURE_DECIMALS));
        if (l->energy_source[0] != '\0')
            text_energy_sources(s, l->energy_source);
        else
            put_text(s, "unknown source");
        if (l->energy_flags & VIGIL_LOCAL_ENERGY_ESTIMATED)
            put_text(s, ", estimated");
        if (l->energy_flags & VIGIL_LOCAL_ENERGY_UNCERTAIN)
            put_text(s, ", uncertain");
    }
    put_text(s, ")");
}

/* "4.750 on 2 nodes (energy/powercap); per node: min 1.250 (node-a), mean
 * 2.375, max 3.500 (node-b)", and how many processes had no figure. */
void vigil_report_write_job_energy_text(struct vigil_report_sink *s,
                                        const struct vigil_report_job_energy *j)
{
    put_printf(s, "JOB_ENERGY_JOULE           %.3f on %d node%s (",
               vigil_report_round(j->energy_j, FIGURE_DECIMALS), (int)j->nodes,
               j->nodes == 1 ? "" : "s");
    text_energy_sources(s, j->sources[0] != '\0' ? j->sources : "unknown source");
    if (j->flags & VIGIL_LOCAL_ENERGY_ESTIMATED)
        put_text(s, ", estimated");
    if (j->flags & VIGIL_LOCAL_ENERGY_UNCERTAIN)
        put_text(s, ", uncertain");
    put_printf(s, "); per node: min %.3f (", vigil_report_round(j->node_min_j, FIGURE_DECIMALS));
    put_clean(s, j->min_host);
    put_printf(s, "), mean %.3f, max %.3f (", vigil_report_round(j->node_mean_j, FIGURE_DECIMALS),
               vigil_report_round(j->node_max_j, FIGURE_DECIMALS));
    put_clean(s, j->max_host);
    put_text(s, ")");
    if (j->processes_with_energy < j->processes)
        put_printf(s, "; %d of %d processes without a figure",
                   (int)(j->processes - j->processes_with_energy), (int)j->processes);
    put_text(s, "\n");
}

static void text_vigild(struct vigil_report_sink *s, const struct vigil_report *r)
{
    const struct vigil_report_link *l = &r->link;
    put_text(s, "VIGILD                     ");
    if (l->state == VIGIL_REPORT_STANDALONE) {
        put_text(s, "standalone: ");
        put_clean(s, l->reason);
    } else if (r->ranks > 0 || l->state == VIGIL_REPORT_SUMMARY) {
        if (r->ranks > 0)
            put_printf(s, "%u of %d ranks: ", l->ranks_with_summary, (int)r->ranks);
        else
            put_printf(s, "process %llu: ", (unsigned long long)l->process_id);
        bool known = drained(l);
        put_printf(s, "%llu activities drained, %llu gaps, %llu dropped",
                   (unsigned long long)(known ? l->activities_drained : 0),
                   (unsigned long long)(known ? l->gaps : 0),
                   (unsigned long long)(known ? l->dropped : 0));
        if (l->state != VIGIL_REPORT_SUMMARY) {
            put_text(s, "; ");
            put_clean(s, l->reason);
        }
    } else {
        if (l->process_id != 0)
            put_printf(s, "process %llu, no summary: ", (unsigned long long)l->process_id);
        else
            put_text(s, "connected, no summary: ");
        put_clean(s, l->reason);
    }
    put_text(s, "\n");
}

/* What vigild's capture made of the activities: kept, for the cycles
 * around abnormal ones (the windows), or dropped. Where there is no
 * summary, why, as on the energy line. */
static void text_capture(struct vigil_report_sink *s, const struct vigil_report *r)
{
    const struct vigil_report_link *l = &r->link;
    put_text(s, "CAPTURE                    ");
    if (!drained(l)) {
        put_text(s, "n/a (");
        put_clean(s, l->reason[0] != '\0' ? l->reason : "no summary from vigild");
        put_text(s, ")\n");
        return;
    }
    if (strcmp(l->capture_mode, "none") == 0 && l->capture_forwarded == 0 && l->capture_lost == 0) {
        put_printf(s, "capture off: %llu activities observed, none forwarded\n",
                   (unsigned long long)l->capture_observed);
        return;
    }
    put_clean(s, l->capture_mode[0] != '\0' ? l->capture_mode : "unknown mode");
    put_printf(s, ": %llu abnormal cycles of %llu; %llu of %llu activities forwarded",
               (unsigned long long)l->abnormal_cycles, (unsigned long long)l->cycles,
               (unsigned long long)l->capture_forwarded, (unsigned long long)l->capture_observed);
    if (l->capture_observed > 0)
        put_printf(s, " (%.1f %%)",
                   100.0 * (double)l->capture_forwarded / (double)l->capture_observed);
    put_printf(s, ", %llu dropped, ", (unsigned long long)l->capture_dropped);
    /* A joint report's summaries were taken at MPI_Finalize, not at exit. */
    const char *when = r->ranks > 0 ? "MPI_Finalize" : "exit";
    /* Lost ones may include some a window needed, which calls for action
     * on vigild's side: said last, with why, after the ordinary figures. */
    if (l->capture_lost == 0)
        put_printf(s, "0 lost, %llu held at %s\n", (unsigned long long)l->capture_held, when);
    else
        put_printf(s, "%llu held at %s, %llu lost: vigild's capture memory bound was hit\n",
                   (unsigned long long)l->capture_held, when, (unsigned long long)l->capture_lost);
}

static void text_rank_energy(struct vigil_report_sink *s, const struct vigil_report *r)
{
    put_printf(s, "\n%-24s %s\n", "energy by rank", "joule; activities vigild forwarded");
    for (int i = 0; i < r->ranks; i++) {
        const struct vigil_report_link *l = &r->rank_links[i];
        put_printf(s, "rank %-19d ", i);
        text_energy(s, l);
        if (l->state == VIGIL_REPORT_SUMMARY)
            put_printf(s, "; %llu forwarded", (unsigned long long)l->capture_forwarded);
        put_text(s, "\n");
    }
}

static void text_ranks(struct vigil_report_sink *s, const struct vigil_report *r)
{
    char title[32];
    snprintf(title, sizeof title, "per rank (%d ranks)", (int)r->ranks);
    put_printf(s, "\n%-24s %16s %16s %16s %18s  %s\n", title, "min", "mean", "max", "sum",
               "max at");
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT; m++) {
        const struct vigil_report_rank_stats *st = &r->per_rank[m];
        put_printf(s, "%-24s %16.3f %16.3f %16.3f %18.3f  rank %d\n",
                   vigil_report_rank_metric_name((enum vigil_report_rank_metric)m),
                   vigil_report_round(st->min, FIGURE_DECIMALS),
                   vigil_report_round(st->mean, FIGURE_DECIMALS),
                   vigil_report_round(st->max, FIGURE_DECIMALS),
                   vigil_report_round(st->sum, FIGURE_DECIMALS), (int)st->max_rank);
    }
    if (r->rank_links != NULL)
        text_rank_energy(s, r);
}

static void text_header(struct vigil_report_sink *s, const struct vigil_report *r)
{
    if (r->ranks > 0)
        put_text(s, "\n== vigil MPI report: ");
    else
        put_text(s, "\n== vigil report: ");
    put_clean(s, r->program);
    if (r->ranks > 0)
        put_printf(s, ", %d ranks (rank 0: pid %d on ", (int)r->ranks, (int)r->pid);
    else if (r->rank >= 0)
        put_printf(s, " (rank %d, pid %d on ", (int)r->rank, (int)r->pid);
    else
        put_printf(s, " (pid %d on ", (int)r->pid);
    put_clean(s, r->host);
    put_text(s, ") ==\n");
}

void vigil_report_write_text(struct vigil_report_sink *s, const struct vigil_report *r)
{
    char total[32], read[32], written[32], network[32];
    human_bytes(total, sizeof total, r->io_read_bytes + r->io_written_bytes);
    human_bytes(read, sizeof read, r->io_read_bytes);
    human_bytes(written, sizeof written, r->io_written_bytes);
    human_bytes(network, sizeof network, r->network_bytes);

    text_header(s, r);
    put_text(s, "RUN                        ");
    put_clean(s, r->run_key);
    put_text(s, "\n");
    put_printf(s, "CONSUMED_CPU_SECONDS       %.3f\n",
               vigil_report_round(r->cpu_seconds, FIGURE_DECIMALS));
    put_text(s, "CONSUMED_ENERGY_JOULE      ");
    text_energy(s, &r->link);
    put_text(s, "\n");
    if (r->job_energy.nodes > 0)
        vigil_report_write_job_energy_text(s, &r->job_energy);
    put_printf(s, "ACCESSED_IO_BYTES          %llu (%s: read %s, written %s)\n",
               (unsigned long long)(r->io_read_bytes + r->io_written_bytes), total, read, written);
    put_printf(s, "TRANSFERRED_NETWORK_BYTES  %llu (%s)\n", (unsigned long long)r->network_bytes,
               network);
    put_printf(s, "OBSERVED_RUNTIME_MS        %.3f\n",
               vigil_report_round(r->runtime_ms, RUNTIME_DECIMALS));
    text_vigild(s, r);
    text_capture(s, r);
    if (r->uplink_lost_known && r->uplink_lost_activities > 0)
        put_printf(s,
                   "UPLINK_LOST_ACTIVITIES     %llu (forwarded, then dropped by vigild's uplink "
                   "or spool before the warehouse stored them)\n",
                   (unsigned long long)r->uplink_lost_activities);
    put_text(s, "\n");

    put_printf(s, "%-6s %-20s %12s %16s %12s %8s\n", "layer", "operation", "calls", "bytes",
               "time_ms", "errors");
    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
        const struct vigil_report_op *c = &r->ops[op];
        if (c->calls == 0 || !vigil_op_is_valid(op))
            continue;
        put_printf(s, "%-6s %-20s %12llu %16llu %12.3f %8llu\n",
                   vigil_layer_name(vigil_op_layer(op)), vigil_op_name(op),
                   (unsigned long long)c->calls, (unsigned long long)c->bytes,
                   (double)c->time_ns / 1e6, (unsigned long long)c->errors);
    }
    vigil_report_text_files(s, r);
    vigil_report_text_files_mpi(s, r);
    /* Without a node daemon to drain it, the ring keeps the first records
     * and drops the rest: say so, lest the drops look like a fault. */
    put_printf(s,
               "\nactivities: %llu observed, %llu recorded, %llu dropped (ring full%s), %llu "
               "excluded (counted only)\n",
               (unsigned long long)r->observed, (unsigned long long)r->recorded,
               (unsigned long long)r->dropped,
               r->link.state == VIGIL_REPORT_STANDALONE ? ": no vigild drains it" : "",
               (unsigned long long)r->excluded);
    if (r->ranks > 0)
        text_ranks(s, r);
    vigil_report_text_regions(s, r);
    vigil_report_text_findings(s, r);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_count(struct vigil_report_sink *s, const char *name, uint64_t value, bool known)
{
    if (known)
        put_printf(s, ",\"%s\":%llu", name, (unsigned long long)value);
    else
        put_printf(s, ",\"%s\":null", name);
}

static void json_figure(struct vigil_report_sink *s, const char *name, double value)
{
    if (isnan(value))
        put_printf(s, ",\"%s\":null", name);
    else
        put_printf(s, ",\"%s\":%.6f", name, vigil_report_round(value, FIGURE_DECIMALS));
}

/* energy_joule, energy_source, energy_estimated, energy_uncertain and
 * energy_note, each after a comma. */
static void json_energy(struct vigil_report_sink *s, const struct vigil_report_link *l)
{
    bool known = !isnan(l->energy_j);
    json_figure(s, "energy_joule", l->energy_j);
    put_text(s, ",\"energy_source\":");
    put_json_string(s, known ? l->energy_source : "none");
    put_printf(s, ",\"energy_estimated\":%s,\"energy_uncertain\":%s,\"energy_note\":",
               l->energy_flags & VIGIL_LOCAL_ENERGY_ESTIMATED ? "true" : "false",
               l->energy_flags & VIGIL_LOCAL_ENERGY_UNCERTAIN ? "true" : "false");
    if (known)
        put_text(s, "null");
    else
        put_json_string(s, l->energy_note);
}

static void json_vigild(struct vigil_report_sink *s, const struct vigil_report *r)
{
    const struct vigil_report_link *l = &r->link;
    put_text(s, ",\"vigild\":{\"state\":");
    put_json_string(s, vigil_report_link_state_name(l->state));
    if (r->ranks > 0)
        put_printf(s, ",\"ranks_with_summary\":%u", l->ranks_with_summary);
    else
        json_count(s, "process_id", l->process_id, l->process_id != 0);
    put_text(s, ",\"reason\":");
    if (l->state == VIGIL_REPORT_SUMMARY)
        put_text(s, "null");
    else
        put_json_string(s, l->reason);
    bool known = drained(l);
    json_count(s, "activities_drained", l->activities_drained, known);
    json_count(s, "names_drained", l->names_drained, known);
    json_count(s, "gaps", l->gaps, known);
    json_count(s, "dropped", l->dropped, known);
    json_count(s, "anomalies", l->anomalies, known);
    json_figure(s, "cpu_seconds", known ? l->cpu_s : NAN);
    /* The same keys with or without a summary, null when unknown. */
    put_text(s, ",\"capture\":{\"mode\":");
    if (known)
        put_json_string(s, l->capture_mode);
    else
        put_text(s, "null");
    json_count(s, "cycles", l->cycles, known);
    json_count(s, "abnormal_cycles", l->abnormal_cycles, known);
    json_count(s, "observed", l->capture_observed, known);
    json_count(s, "forwarded", l->capture_forwarded, known);
    json_count(s, "dropped", l->capture_dropped, known);
    json_count(s, "lost", l->capture_lost, known);
    json_count(s, "held", l->capture_held, known);
    put_text(s, "}}");
}

static void json_rank_energy(struct vigil_report_sink *s, const struct vigil_report *r)
{
    put_text(s, ",\"energy_by_rank\":[");
    for (int i = 0; i < r->ranks; i++) {
        const struct vigil_report_link *l = &r->rank_links[i];
        put_printf(s, "%s{\"rank\":%d", i > 0 ? "," : "", i);
        json_energy(s, l);
        json_count(s, "vigild_process_id", l->process_id, l->process_id != 0);
        json_count(s, "capture_forwarded", l->capture_forwarded, l->state == VIGIL_REPORT_SUMMARY);
        put_text(s, ",\"vigild_state\":");
        put_json_string(s, vigil_report_link_state_name(l->state));
        put_text(s, "}");
    }
    put_text(s, "]");
}

static void json_ranks(struct vigil_report_sink *s, const struct vigil_report *r)
{
    put_printf(s, ",\"ranks\":%d,\"per_rank\":{", (int)r->ranks);
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT; m++) {
        const struct vigil_report_rank_stats *st = &r->per_rank[m];
        put_printf(
            s, "%s\"%s\":{\"min\":%.6f,\"mean\":%.6f,\"max\":%.6f,\"sum\":%.6f,\"max_rank\":%d}",
            m ? "," : "", vigil_report_rank_metric_name((enum vigil_report_rank_metric)m),
            vigil_report_round(st->min, FIGURE_DECIMALS),
            vigil_report_round(st->mean, FIGURE_DECIMALS),
            vigil_report_round(st->max, FIGURE_DECIMALS),
            vigil_report_round(st->sum, FIGURE_DECIMALS), (int)st->max_rank);
    }
    put_text(s, "}");
    if (r->rank_links != NULL)
        json_rank_energy(s, r);
}

static void json_layers(struct vigil_report_sink *s, const struct vigil_report *r)
{
    put_text(s, ",\"layers\":{");
    for (unsigned layer = 1; layer <= VIGIL_LAYER_COUNT; layer++) {
        put_printf(s, "%s\"%s\":{", layer > 1 ? "," : "", vigil_layer_name(layer));
        bool first = true;
        for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
            const struct vigil_report_op *c = &r->ops[op];
            if (c->calls == 0 || !vigil_op_is_valid(op) || vigil_op_layer(op) != layer)
                continue;
            put_printf(s,
                       "%s\"%s\":{\"calls\":%llu,\"bytes\":%llu,\"time_ns\":%llu,\"errors\":%llu}",
                       first ? "" : ",", vigil_op_name(op), (unsigned long long)c->calls,
                       (unsigned long long)c->bytes, (unsigned long long)c->time_ns,
                       (unsigned long long)c->errors);
            first = false;
        }
        put_text(s, "}");
    }
    put_text(s, "}");
}

void vigil_report_write_job_energy_json(struct vigil_report_sink *s,
                                        const struct vigil_report_job_energy *j)
{
    put_printf(s, "\"job_energy\":{\"nodes\":%d,\"processes\":%d,\"processes_with_energy\":%d",
               (int)j->nodes, (int)j->processes, (int)j->processes_with_energy);
    json_figure(s, "energy_joule", j->energy_j);
    json_figure(s, "node_min_joule", j->node_min_j);
    put_text(s, ",\"node_min_host\":");
    put_json_string(s, j->min_host);
    json_figure(s, "node_mean_joule", j->node_mean_j);
    json_figure(s, "node_max_joule", j->node_max_j);
    put_text(s, ",\"node_max_host\":");
    put_json_string(s, j->max_host);
    put_text(s, ",\"sources\":");
    put_json_string(s, j->sources);
    put_printf(s, ",\"estimated\":%s,\"uncertain\":%s}",
               j->flags & VIGIL_LOCAL_ENERGY_ESTIMATED ? "true" : "false",
               j->flags & VIGIL_LOCAL_ENERGY_UNCERTAIN ? "true" : "false");
}

void vigil_report_write_json(struct vigil_report_sink *s, const struct vigil_report *r)
{
    put_printf(s, "{\"vigil_report\":%d,\"program\":", VIGIL_REPORT_VERSION);
    put_json_string(s, r->program);
    put_text(s, ",\"argv\":[");
    for (int i = 0; i < r->argc; i++) {
        if (i > 0)
            put_text(s, ",");
        put_json_string(s, r->argv[i]);
    }
    put_printf(s, "],\"pid\":%d,", (int)r->pid);
    if (r->ranks == 0 && r->rank >= 0)
        put_printf(s, "\"rank\":%d,", (int)r->rank); /* a rank's own report */
    put_text(s, "\"host\":");
    put_json_string(s, r->host);
    put_printf(s, ",\"runtime_ms\":%.3f", vigil_report_round(r->runtime_ms, RUNTIME_DECIMALS));
    json_figure(s, "cpu_seconds", r->cpu_seconds);
    json_energy(s, &r->link);
    json_vigild(s, r);
    put_printf(s,
               ",\"io_bytes_read\":%llu,\"io_bytes_written\":%llu,\"network_bytes\":%llu,"
               "\"activities\":{\"observed\":%llu,\"recorded\":%llu,\"dropped\":%llu,"
               "\"excluded\":%llu}",
               (unsigned long long)r->io_read_bytes, (unsigned long long)r->io_written_bytes,
               (unsigned long long)r->network_bytes, (unsigned long long)r->observed,
               (unsigned long long)r->recorded, (unsigned long long)r->dropped,
               (unsigned long long)r->excluded);
    json_layers(s, r);
    vigil_report_json_files(s, r);
    if (r->ranks > 0)
        json_ranks(s, r);
    /* Added after the first version's keys, which stay where they were. */
    put_text(s, ",\"run_key\":");
    put_json_string(s, r->run_key);
    if (r->ranks == 0 && r->rank >= 0)
        put_printf(s, ",\"in_job_report\":%s", r->in_job_report ? "true" : "false");
    if (r->job_energy.nodes > 0) {
        put_text(s, ",");
        vigil_report_write_job_energy_json(s, &r->job_energy);
    }
    if (r->uplink_lost_known && r->uplink_lost_activities > 0)
        put_printf(s, ",\"uplink_lost_activities\":%llu",
                   (unsigned long long)r->uplink_lost_activities);
    vigil_report_json_regions(s, r);
    vigil_report_json_timeline(s, r);
    vigil_report_json_findings(s, r);
    put_text(s, "}\n");
}

/* ---- for the other parts of the report (report_put.h) ------------------------------------ */

void vigil_report_put_text(struct vigil_report_sink *s, const char *text)
{
    put_text(s, text);
}

void vigil_report_put_clean(struct vigil_report_sink *s, const char *text, int width)
{
    put_clean_bytes(s, text, strlen(text), width);
}

void vigil_report_put_json_string(struct vigil_report_sink *s, const char *text)
{
    put_json_string(s, text);
}

void vigil_report_put_cell_bytes(struct vigil_report_sink *s, const char *text, size_t length,
                                 int width)
{
    if (put_clean_bytes(s, text, length, width) <= width)
        return;
    put_bytes(s, "\n", 1);
    for (int i = 0; i < width; i++)
        put_bytes(s, " ", 1);
}

void vigil_report_put_clean_bytes(struct vigil_report_sink *s, const char *text, size_t length)
{
    put_clean_bytes(s, text, length, 0);
}

void vigil_report_put_cell(struct vigil_report_sink *s, const char *text, int width)
{
    vigil_report_put_cell_bytes(s, text, strlen(text), width);
}

void vigil_report_put_json_bytes(struct vigil_report_sink *s, const char *text, size_t length)
{
    put_json_bytes(s, text, length);
}
