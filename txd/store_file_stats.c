/* vigil-txd — the per-file characterization of the reports a batch stores:
 * each report's "files" as file_stats rows and its "timeline" as a
 * process_io_timelines row (warehouse/migrations/0008_file_stats.sql, and
 * 0017_darshan_counters.sql for issue 33's counters), from the JSON that
 * run_summaries keeps whole.
 *
 * A report comes from a process the node does not control: its files part
 * is checked member by member against the report's contract before any of
 * it is written. When a part is wrong, only that part of that report is
 * left out, with a warning naming the member and what is wrong with it;
 * the report itself (run_summaries) and the rest of the batch are stored,
 * since refusing the batch would lose a cycle of the node's data for a
 * summary table. (A group rolled back and tried again logs it again.)
 *
 * Both tables take one binary COPY per batch. A report's rows are
 * written as they are checked and cut off again when a member is wrong. */
#include <string.h>

#include <json-glib/json-glib.h>

#include "txd.h"
#include "vigil/json_members.h"

/* How a member is checked and written. */
enum member_kind {
    TEXT,    /* a string */
    COUNT,   /* an integer 0 … INT64_MAX */
    OFFSET,  /* an integer -1 … INT64_MAX (-1: none) */
    RANK,    /* an integer -1 … INT32_MAX */
    RANKS,   /* an integer 1 … INT32_MAX */
    FLAG,    /* true or false */
    SECONDS, /* a number >= 0 */
    INSTANT, /* a number >= 0, or -1: none (NULL) */
    HIST,    /* an array of 10 counts (bigint[]) */
    SIZES,   /* <= 4 of {"size": count, "count": count[, "exact": flag]} (jsonb) */
    STRIDES, /* <= 4 of {"stride": integer, "count": count[, "exact": flag]} (jsonb) */
    MODE,    /* an integer -1 … INT32_MAX (-1: not known, NULL) */
    MARK,    /* true when the object has the member (whatever it holds), else NULL */
};

/* A group of members: top level of a file (always there) or one of its
 * objects, which may be absent or null (its columns NULL: a report from
 * before issue 18, a file not opened through MPI-IO, a process's report). */
struct member {
    const char *name;
    const char *old_name; /* what reports before issue 18 called it, or NULL */
    const char *column;
    enum member_kind kind;
    const char *fallback; /* for a missing TEXT member, or NULL: required */
    gboolean optional;    /* NULL when missing (added after the contract) */
};

static const struct member file_members[] = {
    {"path", NULL, "path", TEXT, NULL, FALSE},
    {"mount", NULL, "mount", TEXT, "/", FALSE},
    {"fs_type", NULL, "fs_type", TEXT, "", FALSE},
    {"calls", NULL, "calls", COUNT, NULL, FALSE},
    {"read_bytes", "bytes_read", "read_bytes", COUNT, NULL, FALSE},
    {"written_bytes", "bytes_written", "written_bytes", COUNT, NULL, FALSE},
};

static const struct member posix_members[] = {
    {"reads", NULL, "posix_reads", COUNT, NULL, FALSE},
    {"writes", NULL, "posix_writes", COUNT, NULL, FALSE},
    {"opens", NULL, "posix_opens", COUNT, NULL, FALSE},
    {"seeks", NULL, "posix_seeks", COUNT, NULL, FALSE},
    {"stats", NULL, "posix_stats", COUNT, NULL, FALSE},
    {"fsyncs", NULL, "posix_fsyncs", COUNT, NULL, FALSE},
    {"other", NULL, "posix_other", COUNT, NULL, FALSE},
    {"read_bytes", NULL, "posix_read_bytes", COUNT, NULL, FALSE},
    {"written_bytes", NULL, "posix_written_bytes", COUNT, NULL, FALSE},
    {"max_read_offset", NULL, "max_read_offset", OFFSET, NULL, FALSE},
    {"max_written_offset", NULL, "max_written_offset", OFFSET, NULL, FALSE},
    {"seq_reads", NULL, "seq_reads", COUNT, NULL, FALSE},
    {"seq_writes", NULL, "seq_writes", COUNT, NULL, FALSE},
    {"consec_reads", NULL, "consec_reads", COUNT, NULL, FALSE},
    {"consec_writes", NULL, "consec_writes", COUNT, NULL, FALSE},
    {"read_size_hist", NULL, "read_size_hist", HIST, NULL, FALSE},
    {"write_size_hist", NULL, "write_size_hist", HIST, NULL, FALSE},
    {"common_sizes", NULL, "common_sizes", SIZES, NULL, FALSE},
    {"common_strides", NULL, "common_strides", STRIDES, NULL, FALSE},
    {"read_time_s", NULL, "read_time_s", SECONDS, NULL, FALSE},
    {"write_time_s", NULL, "write_time_s", SECONDS, NULL, FALSE},
    {"meta_time_s", NULL, "meta_time_s", SECONDS, NULL, FALSE},
    {"first_open_s", NULL, "first_open_s", INSTANT, NULL, FALSE},
    {"last_close_s", NULL, "last_close_s", INSTANT, NULL, FALSE},
    {"first_io_s", NULL, "first_io_s", INSTANT, NULL, FALSE},
    {"last_io_s", NULL, "last_io_s", INSTANT, NULL, FALSE},
    /* Issue 33's (warehouse/migrations/0017_darshan_counters.sql): NULL
     * in reports from before. Those bin an access of a bin edge one bin
     * up: the mark says which convention a row's histograms follow. */
    {"rw_switches", NULL, "size_bins_upper_inclusive", MARK, NULL, TRUE},
    {"rw_switches", NULL, "posix_rw_switches", COUNT, NULL, TRUE},
    {"fdatasyncs", NULL, "posix_fdatasyncs", COUNT, NULL, TRUE},
    {"filenos", NULL, "posix_filenos", COUNT, NULL, TRUE},
    {"dups", NULL, "posix_dups", COUNT, NULL, TRUE},
    {"mode", NULL, "posix_mode", MODE, NULL, TRUE},
    {"file_alignment_bytes", NULL, "posix_file_alignment_bytes", COUNT, NULL, TRUE},
    {"file_not_aligned", NULL, "posix_file_not_aligned", COUNT, NULL, TRUE},
    {"mem_alignment_bytes", NULL, "posix_mem_alignment_bytes", COUNT, NULL, TRUE},
    {"mem_not_aligned", NULL, "posix_mem_not_aligned", COUNT, NULL, TRUE},
    {"max_read_time_s", NULL, "posix_max_read_time_s", SECONDS, NULL, TRUE},
    {"max_read_time_size", NULL, "posix_max_read_time_size", COUNT, NULL, TRUE},
    {"max_write_time_s", NULL, "posix_max_write_time_s", SECONDS, NULL, TRUE},
    {"max_write_time_size", NULL, "posix_max_write_time_size", COUNT, NULL, TRUE},
};

static const struct member mpiio_members[] = {
    {"indep_reads", NULL, "mpiio_indep_reads", COUNT, NULL, FALSE},
    {"indep_writes", NULL, "mpiio_indep_writes", COUNT, NULL, FALSE},
    {"coll_reads", NULL, "mpiio_coll_reads", COUNT, NULL, FALSE},
    {"coll_writes", NULL, "mpiio_coll_writes", COUNT, NULL, FALSE},
    {"split_reads", NULL, "mpiio_split_reads", COUNT, NULL, FALSE},
    {"split_writes", NULL, "mpiio_split_writes", COUNT, NULL, FALSE},
    {"nb_reads", NULL, "mpiio_nb_reads", COUNT, NULL, FALSE},
    {"nb_writes", NULL, "mpiio_nb_writes", COUNT, NULL, FALSE},
    {"read_bytes", NULL, "mpiio_read_bytes", COUNT, NULL, FALSE},
    {"written_bytes", NULL, "mpiio_written_bytes", COUNT, NULL, FALSE},
    /* Issue 33's: NULL in reports from before. */
    {"indep_opens", NULL, "mpiio_indep_opens", COUNT, NULL, TRUE},
    {"coll_opens", NULL, "mpiio_coll_opens", COUNT, NULL, TRUE},
    {"syncs", NULL, "mpiio_syncs", COUNT, NULL, TRUE},
    {"hints", NULL, "mpiio_hints", COUNT, NULL, TRUE},
    {"views", NULL, "mpiio_views", COUNT, NULL, TRUE},
    {"rw_switches", NULL, "mpiio_rw_switches", COUNT, NULL, TRUE},
    {"mode", NULL, "mpiio_mode", MODE, NULL, TRUE},
    {"read_size_hist", NULL, "mpiio_read_size_hist", HIST, NULL, TRUE},
    {"write_size_hist", NULL, "mpiio_write_size_hist", HIST, NULL, TRUE},
    {"common_sizes", NULL, "mpiio_common_sizes", SIZES, NULL, TRUE},
    {"max_read_time_s", NULL, "mpiio_max_read_time_s", SECONDS, NULL, TRUE},
    {"max_read_time_size", NULL, "mpiio_max_read_time_size", COUNT, NULL, TRUE},
    {"max_write_time_s", NULL, "mpiio_max_write_time_s", SECONDS, NULL, TRUE},
    {"max_write_time_size", NULL, "mpiio_max_write_time_size", COUNT, NULL, TRUE},
};

static const struct member ranks_members[] = {
    {"count", NULL, "rank_count", RANKS, NULL, FALSE},
    {"shared", NULL, "shared", FLAG, NULL, FALSE},
    {"fastest_rank", NULL, "fastest_rank", RANK, NULL, FALSE},
    {"fastest_s", NULL, "fastest_s", SECONDS, NULL, FALSE},
    {"fastest_bytes", NULL, "fastest_bytes", COUNT, NULL, FALSE},
    {"slowest_rank", NULL, "slowest_rank", RANK, NULL, FALSE},
    {"slowest_s", NULL, "slowest_s", SECONDS, NULL, FALSE},
    {"slowest_bytes", NULL, "slowest_bytes", COUNT, NULL, FALSE},
    {"time_variance_s2", NULL, "time_variance_s2", SECONDS, NULL, FALSE},
    {"bytes_variance", NULL, "bytes_variance", SECONDS, NULL, FALSE},
    /* From helper mpifiles: who moved the most and fewest POSIX bytes. */
    {"most_posix_rank", NULL, "most_posix_rank", RANK, NULL, TRUE},
    {"most_posix_bytes", NULL, "most_posix_bytes", COUNT, NULL, TRUE},
    {"least_posix_rank", NULL, "least_posix_rank", RANK, NULL, TRUE},
    {"least_posix_bytes", NULL, "least_posix_bytes", COUNT, NULL, TRUE},
};

static const struct {
    const char *object; /* NULL: the file's own members */
    const struct member *members;
    guint n;
} groups[] = {
    {NULL, file_members, G_N_ELEMENTS(file_members)},
    {"posix", posix_members, G_N_ELEMENTS(posix_members)},
    {"mpiio", mpiio_members, G_N_ELEMENTS(mpiio_members)},
    {"ranks", ranks_members, G_N_ELEMENTS(ranks_members)},
};

#define HIST_BINS         10
#define COMMON_MAX        4
#define TIMELINE_BINS_MAX 64
#define FIXED_COLUMNS     3 /* process_id, position, in_job_report */
/* A member's name for the log ("files[12].posix.common_sizes[3].count"),
 * formatted on the stack: it is shown only when something is wrong. */
#define WHERE_MAX 96

static guint column_count(void)
{
    guint n = FIXED_COLUMNS;
    for (guint g = 0; g < G_N_ELEMENTS(groups); g++)
        n += groups[g].n;
    return n;
}

static char *copy_statement(void)
{
    GString *s = g_string_new("COPY file_stats (process_id, position, in_job_report");
    for (guint g = 0; g < G_N_ELEMENTS(groups); g++)
        for (guint i = 0; i < groups[g].n; i++)
            g_string_append_printf(s, ", %s", groups[g].members[i].column);
    g_string_append(s, ") FROM STDIN (FORMAT binary)");
    return g_string_free(s, FALSE);
}

/* Why a report's part is left out; `where` names the member. */
static void fail(GError **error, const char *where, const char *format, ...) G_GNUC_PRINTF(3, 4);
static void fail(GError **error, const char *where, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_propagate_error(error, g_error_new_valist(TXD_ERROR, TXD_ERROR_REFUSE, format, args));
    va_end(args);
    g_prefix_error(error, "%s: ", where);
}

/* An integer in [min, max]. json-glib reads integers as int64; a number
 * beyond that range comes as a double and is refused as not an integer. */
static gboolean integer_in(JsonNode *node, int64_t min, int64_t max, int64_t *out,
                           const char *where, GError **error)
{
    if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
        json_node_get_value_type(node) != G_TYPE_INT64) {
        fail(error, where, "expected an integer, found %s", vigil_json_kind(node));
        return FALSE;
    }
    *out = json_node_get_int(node);
    if (*out < min || *out > max) {
        fail(error, where,
             "%" G_GINT64_FORMAT " is out of range %" G_GINT64_FORMAT "…%" G_GINT64_FORMAT, *out,
             min, max);
        return FALSE;
    }
    return TRUE;
}

static gboolean number_of(JsonNode *node, double *out, const char *where, GError **error)
{
    GType t = node != NULL && JSON_NODE_HOLDS_VALUE(node) ? json_node_get_value_type(node)
                                                          : G_TYPE_INVALID;
    if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE) {
        fail(error, where, "expected a number, found %s", vigil_json_kind(node));
        return FALSE;
    }
    *out = json_node_get_double(node);
    return TRUE;
}

/* Whether `node` is a `type` node; else what it is instead, as "expected
 * EXPECTED, found …". */
static gboolean holds(JsonNode *node, JsonNodeType type, const char *expected, const char *where,
                      GError **error)
{
    if (node != NULL && json_node_get_node_type(node) == type)
        return TRUE;
    fail(error, where, "expected %s, found %s", expected, vigil_json_kind(node));
    return FALSE;
}

static gboolean counts(JsonNode *node, guint min, guint max, int64_t *out, guint *n,
                       const char *where, GError **error)
{
    if (!holds(node, JSON_NODE_ARRAY, "an array", where, error))
        return FALSE;
    JsonArray *a = json_node_get_array(node);
    *n = json_array_get_length(a);
    if (*n < min || *n > max) {
        fail(error, where, min == max ? "%u entries, %u expected" : "%u entries, %u to %u expected",
             *n, min, max);
        return FALSE;
    }
    for (guint i = 0; i < *n; i++) {
        char at[WHERE_MAX];
        g_snprintf(at, sizeof at, "%s[%u]", where, i);
        if (!integer_in(json_array_get_element(a, i), 0, G_MAXINT64, &out[i], at, error))
            return FALSE;
    }
    return TRUE;
}

static gboolean flag_of(JsonNode *node)
{
    return node != NULL && JSON_NODE_HOLDS_VALUE(node) &&
           json_node_get_value_type(node) == G_TYPE_BOOLEAN;
}

/* common_sizes or common_strides, as the jsonb text written. */
static gboolean common_values(JsonNode *node, const char *key, int64_t key_min,
                              struct vigil_copy *c, const char *where, GError **error)
{
    if (!holds(node, JSON_NODE_ARRAY, "an array", where, error))
        return FALSE;
    JsonArray *a = json_node_get_array(node);
    guint n = json_array_get_length(a);
    if (n > COMMON_MAX) {
        fail(error, where, "%u entries, at most %d expected", n, COMMON_MAX);
        return FALSE;
    }
    GString *json = g_string_new("[");
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < n; i++) {
        char at[WHERE_MAX];
        g_snprintf(at, sizeof at, "%s[%u]", where, i);
        JsonNode *e = json_array_get_element(a, i);
        int64_t value = 0, count = 0;
        JsonNode *exact = NULL; /* issue 33's: absent before */
        ok = holds(e, JSON_NODE_OBJECT, "an object", at, error);
        if (ok) {
            JsonObject *o = json_node_get_object(e);
            char key_at[WHERE_MAX], count_at[WHERE_MAX];
            g_snprintf(key_at, sizeof key_at, "%s.%s", at, key);
            g_snprintf(count_at, sizeof count_at, "%s.count", at);
            ok = integer_in(json_object_get_member(o, key), key_min, G_MAXINT64, &value, key_at,
                            error) &&
                 integer_in(json_object_get_member(o, "count"), 0, G_MAXINT64, &count, count_at,
                            error);
            exact = json_object_get_member(o, "exact");
            if (ok && exact != NULL && !flag_of(exact)) {
                char exact_at[WHERE_MAX];
                g_snprintf(exact_at, sizeof exact_at, "%s.exact", at);
                fail(error, exact_at, "expected true or false, found %s", vigil_json_kind(exact));
                ok = FALSE;
            }
        }
        if (ok)
            g_string_append_printf(
                json, "%s{\"%s\": %" G_GINT64_FORMAT ", \"count\": %" G_GINT64_FORMAT "%s}",
                i > 0 ? ", " : "", key, value, count,
                exact == NULL                  ? ""
                : json_node_get_boolean(exact) ? ", \"exact\": true"
                                               : ", \"exact\": false");
    }
    g_string_append_c(json, ']');
    if (ok)
        vigil_copy_jsonb(c, json->str);
    g_string_free(json, TRUE);
    return ok;
}

/* One member, checked and written as its column's field. */
static gboolean copy_member(struct vigil_copy *c, JsonObject *o, const struct member *m,
                            const char *where, GError **error)
{
    JsonNode *node = json_object_get_member(o, m->name);
    if (node == NULL && m->old_name != NULL)
        node = json_object_get_member(o, m->old_name);
    char at[WHERE_MAX];
    g_snprintf(at, sizeof at, "%s.%s", where, m->name);
    gboolean ok = TRUE;
    int64_t v = 0;
    double d = 0;
    if (node == NULL && m->optional) {
        vigil_copy_null(c);
        return TRUE;
    }
    switch (m->kind) {
    case MARK:
        vigil_copy_bool(c, TRUE);
        break;
    case MODE:
        ok = integer_in(node, -1, G_MAXINT32, &v, at, error);
        if (ok && v == -1)
            vigil_copy_null(c);
        else if (ok)
            vigil_copy_int4(c, (int32_t)v);
        break;
    case TEXT:
        if (node == NULL && m->fallback != NULL)
            vigil_copy_text(c, m->fallback);
        else if (node != NULL && JSON_NODE_HOLDS_VALUE(node) &&
                 json_node_get_value_type(node) == G_TYPE_STRING)
            vigil_copy_text(c, json_node_get_string(node));
        else {
            fail(error, at, "expected a string, found %s", vigil_json_kind(node));
            ok = FALSE;
        }
        break;
    case COUNT:
    case OFFSET:
    case RANK:
    case RANKS: {
        int64_t min = m->kind == COUNT ? 0 : m->kind == RANKS ? 1 : -1;
        int64_t max = m->kind == RANK || m->kind == RANKS ? G_MAXINT32 : G_MAXINT64;
        ok = integer_in(node, min, max, &v, at, error);
        if (ok && (m->kind == RANK || m->kind == RANKS))
            vigil_copy_int4(c, (int32_t)v);
        else if (ok)
            vigil_copy_int8(c, v);
        break;
    }
    case FLAG:
        ok = flag_of(node);
        if (ok)
            vigil_copy_bool(c, json_node_get_boolean(node));
        else
            fail(error, at, "expected true or false, found %s", vigil_json_kind(node));
        break;
    case SECONDS:
    case INSTANT:
        ok = number_of(node, &d, at, error);
        if (ok && m->kind == INSTANT && d == -1)
            vigil_copy_null(c);
        else if (ok && d >= 0 && d < 1e15)
            vigil_copy_float8(c, d);
        else if (ok) {
            fail(error, at, "%g is out of range (%s)", d,
                 m->kind == INSTANT ? "0 or more seconds, or -1 for none" : "0 or more");
            ok = FALSE;
        }
        break;
    case HIST: {
        int64_t bins[HIST_BINS];
        guint n = 0;
        ok = counts(node, HIST_BINS, HIST_BINS, bins, &n, at, error);
        if (ok)
            vigil_copy_int8_array(c, bins, n);
        break;
    }
    case SIZES:
        ok = common_values(node, "size", 0, c, at, error);
        break;
    case STRIDES:
        ok = common_values(node, "stride", G_MININT64, c, at, error);
        break;
    }
    return ok;
}

/* files[index]: one row, or FALSE with what is wrong (the row half written). */
static gboolean copy_file(struct vigil_copy *c, int64_t process_id, guint index,
                          gboolean in_job_report, JsonNode *node, GError **error)
{
    char *where = g_strdup_printf("files[%u]", index);
    gboolean ok = holds(node, JSON_NODE_OBJECT, "an object", where, error);
    JsonObject *file = ok ? json_node_get_object(node) : NULL;
    if (ok) {
        vigil_copy_row(c, (uint16_t)column_count());
        vigil_copy_int8(c, process_id);
        vigil_copy_int4(c, (int32_t)index);
        vigil_copy_bool(c, in_job_report);
    }
    for (guint g = 0; ok && g < G_N_ELEMENTS(groups); g++) {
        JsonObject *o = file;
        char *at = g_strdup(where);
        if (groups[g].object != NULL) {
            JsonNode *sub = json_object_get_member(file, groups[g].object);
            g_free(at);
            at = g_strdup_printf("%s.%s", where, groups[g].object);
            if (sub == NULL || JSON_NODE_HOLDS_NULL(sub)) {
                for (guint i = 0; i < groups[g].n; i++)
                    vigil_copy_null(c);
                o = NULL;
            } else if (!JSON_NODE_HOLDS_OBJECT(sub)) {
                fail(error, at, "expected an object or null, found %s", vigil_json_kind(sub));
                ok = FALSE;
                o = NULL;
            } else {
                o = json_node_get_object(sub);
            }
        }
        for (guint i = 0; ok && o != NULL && i < groups[g].n; i++)
            ok = copy_member(c, o, &groups[g].members[i], at, error);
        g_free(at);
    }
    /* Name the file too, when it has a readable path. */
    const char *path =
        file != NULL ? json_object_get_string_member_with_default(file, "path", NULL) : NULL;
    if (!ok && path != NULL && error != NULL && *error != NULL) {
        char *shown = g_utf8_make_valid(path, MIN(strlen(path), 80));
        char *message =
            g_strdup_printf("%s (\"%s%s\")%s", where, shown, strlen(path) > 80 ? "…" : "",
                            (*error)->message + strlen(where));
        g_free((*error)->message);
        (*error)->message = message;
        g_free(shown);
    }
    g_free(where);
    return ok;
}

static gboolean copy_files(struct vigil_copy *c, int64_t process_id, JsonObject *report,
                           gboolean in_job_report, GError **error)
{
    JsonNode *node = json_object_get_member(report, "files");
    if (node == NULL || JSON_NODE_HOLDS_NULL(node))
        return TRUE;
    if (!holds(node, JSON_NODE_ARRAY, "an array", "files", error))
        return FALSE;
    JsonArray *files = json_node_get_array(node);
    guint n = json_array_get_length(files);
    JsonNode *total = json_object_get_member(report, "files_total");
    int64_t files_total = 0;
    if (total != NULL && !integer_in(total, 0, G_MAXINT64, &files_total, "files_total", error))
        return FALSE;
    /* More files than listed is a report cut to fit its bound (the least
     * busy left out: run_files_unlisted counts them); fewer is wrong. */
    if (total != NULL && files_total < (int64_t)n) {
        fail(error, "files_total", "%" G_GINT64_FORMAT " files, but \"files\" lists %u",
             files_total, n);
        return FALSE;
    }
    for (guint i = 0; i < n; i++)
        if (!copy_file(c, process_id, i, in_job_report, json_array_get_element(files, i), error))
            return FALSE;
    return TRUE;
}

static gboolean copy_timeline(struct vigil_copy *c, int64_t process_id, JsonObject *report,
                              gboolean in_job_report, GError **error)
{
    JsonNode *node = json_object_get_member(report, "timeline");
    if (node == NULL || JSON_NODE_HOLDS_NULL(node))
        return TRUE;
    if (!holds(node, JSON_NODE_OBJECT, "an object", "timeline", error))
        return FALSE;
    JsonObject *t = json_node_get_object(node);
    double bin_s = 0;
    int64_t read[TIMELINE_BINS_MAX], written[TIMELINE_BINS_MAX];
    guint reads = 0, writes = 0;
    if (!number_of(json_object_get_member(t, "bin_s"), &bin_s, "timeline.bin_s", error))
        return FALSE;
    if (!(bin_s > 0 && bin_s < 1e15)) {
        fail(error, "timeline.bin_s", "%g is out of range (more than 0 seconds)", bin_s);
        return FALSE;
    }
    if (!counts(json_object_get_member(t, "read_bytes"), 0, TIMELINE_BINS_MAX, read, &reads,
                "timeline.read_bytes", error) ||
        !counts(json_object_get_member(t, "written_bytes"), 0, TIMELINE_BINS_MAX, written, &writes,
                "timeline.written_bytes", error))
        return FALSE;
    if (reads != writes) {
        fail(error, "timeline", "%u bins of read_bytes but %u of written_bytes", reads, writes);
        return FALSE;
    }
    vigil_copy_row(c, 5);
    vigil_copy_int8(c, process_id);
    vigil_copy_bool(c, in_job_report);
    vigil_copy_float8(c, bin_s);
    vigil_copy_int8_array(c, read, reads);
    vigil_copy_int8_array(c, written, writes);
    return TRUE;
}

typedef gboolean (*copy_part_fn)(struct vigil_copy *c, int64_t process_id, JsonObject *report,
                                 gboolean in_job_report, GError **error);

/* One part of one report; when it is wrong, its rows are cut off again
 * and the warning says why. */
static void copy_part(struct vigil_copy *c, copy_part_fn part, const char *what,
                      const struct txd_report_ref *ref, JsonObject *report, gboolean in_job_report)
{
    size_t length = c->length;
    uint64_t rows = c->rows;
    GError *why = NULL;
    if (!part(c, ref->process_id, report, in_job_report, &why)) {
        c->length = length;
        c->rows = rows;
        g_warning("%s: the report's %s are not stored (%s); the report and the rest of the "
                  "batch are",
                  ref->label, what, why->message);
        g_error_free(why);
    }
}

static gboolean run(PGconn *db, const char *sql, const char *param, GError **error)
{
    const char *values[] = {param};
    return txd_exec_params(db, sql, 1, values, error);
}

gboolean txd_store_file_stats(PGconn *db, const struct txd_report_ref *reports, guint n,
                              uint64_t *rows, GError **error)
{
    if (n == 0)
        return TRUE;
    struct vigil_copy files, timelines;
    vigil_copy_init(&files);
    vigil_copy_init(&timelines);
    GString *ids = g_string_new("{");
    for (guint i = 0; i < n; i++) {
        /* A process's report twice in one batch: its last one counts. */
        gboolean later = FALSE;
        for (guint k = i + 1; k < n && !later; k++)
            later = reports[k].process_id == reports[i].process_id;
        if (later)
            continue;
        g_string_append_printf(ids, "%s%" G_GINT64_FORMAT, ids->len > 1 ? "," : "",
                               reports[i].process_id);
        JsonParser *parser = json_parser_new_immutable();
        GError *why = NULL;
        if (!json_parser_load_from_data(parser, reports[i].report_json, -1, &why) ||
            !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
            g_warning("%s: the report's files and timeline are not stored (%s)", reports[i].label,
                      why != NULL ? why->message : "the report is not a JSON object");
            g_clear_error(&why);
            g_object_unref(parser);
            continue;
        }
        JsonObject *report = json_node_get_object(json_parser_get_root(parser));
        gboolean in_job_report =
            json_object_get_boolean_member_with_default(report, "in_job_report", FALSE);
        copy_part(&files, copy_files, "files", &reports[i], report, in_job_report);
        copy_part(&timelines, copy_timeline, "timeline", &reports[i], report, in_job_report);
        g_object_unref(parser);
    }
    g_string_append_c(ids, '}');
    /* A report stored again (its summary resent in a later batch)
     * replaces its rows, as it replaces its run_summaries row. */
    char *statement = copy_statement();
    gboolean ok =
        run(db, "DELETE FROM file_stats WHERE process_id = ANY ($1::bigint[])", ids->str, error) &&
        run(db, "DELETE FROM process_io_timelines WHERE process_id = ANY ($1::bigint[])", ids->str,
            error) &&
        txd_copy_send(db, statement, &files, error) &&
        txd_copy_send(db,
                      "COPY process_io_timelines (process_id, in_job_report, bin_s, read_bytes, "
                      "written_bytes) FROM STDIN (FORMAT binary)",
                      &timelines, error);
    if (ok)
        *rows += files.rows + timelines.rows;
    g_free(statement);
    g_string_free(ids, TRUE);
    vigil_copy_clear(&files);
    vigil_copy_clear(&timelines);
    return ok;
}
