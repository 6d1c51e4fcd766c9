/* vigil — a report's JSON read back into its figures (report_json.h).
 *
 * The inverse of vigil_report_write_json, member for member: what it
 * writes as null (a figure vigild did not give) comes back as the value
 * the renderer treats as unknown (NaN, 0, ""), so that rendering the result
 * gives the same text and the same JSON again. */
#include <json-glib/json-glib.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "report_json.h"
#include "vigil/local_protocol.h"

#define REPORT_ERROR (g_quark_from_static_string("vigil-report-json"))

/* Where we are in the document, for error messages: "vigild.capture". */
struct reader {
    struct vigil_cli_report *out;
    GError **error;
    gboolean failed;
};

__attribute__((format(printf, 3, 4))) static void fail(struct reader *rd, const char *where,
                                                       const char *fmt, ...)
{
    if (rd->failed)
        return;
    rd->failed = TRUE;
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(rd->error, REPORT_ERROR, 0, "report: %s: %s", where, what);
    g_free(what);
}

static char *path_of(const char *parent, const char *name)
{
    return parent[0] != '\0' ? g_strdup_printf("%s.%s", parent, name) : g_strdup(name);
}

static const char *kind_of(JsonNode *node)
{
    if (node == NULL)
        return "nothing";
    switch (json_node_get_node_type(node)) {
    case JSON_NODE_OBJECT:
        return "an object";
    case JSON_NODE_ARRAY:
        return "an array";
    case JSON_NODE_NULL:
        return "null";
    case JSON_NODE_VALUE:
        break;
    }
    GType type = json_node_get_value_type(node);
    return type == G_TYPE_STRING    ? "a string"
           : type == G_TYPE_BOOLEAN ? "a boolean"
           : type == G_TYPE_INT64   ? "an integer"
                                    : "a number";
}

/* The member `name` of `o`, which must be there (null allowed). */
static JsonNode *member(struct reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = o != NULL ? json_object_get_member(o, name) : NULL;
    if (node == NULL && o != NULL) {
        char *path = path_of(where, name);
        fail(rd, path, "missing");
        g_free(path);
    }
    return node;
}

static gboolean is_null(JsonNode *node)
{
    return node != NULL && JSON_NODE_HOLDS_NULL(node);
}

static void wrong_type(struct reader *rd, const char *where, const char *name, const char *expected,
                       JsonNode *node)
{
    char *path = path_of(where, name);
    fail(rd, path, "expected %s, found %s", expected, kind_of(node));
    g_free(path);
}

static JsonObject *object_member(struct reader *rd, JsonObject *o, const char *where,
                                 const char *name)
{
    JsonNode *node = member(rd, o, where, name);
    if (node == NULL)
        return NULL;
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        wrong_type(rd, where, name, "an object", node);
        return NULL;
    }
    return json_node_get_object(node);
}

static JsonArray *array_member(struct reader *rd, JsonObject *o, const char *where,
                               const char *name)
{
    JsonNode *node = member(rd, o, where, name);
    if (node == NULL)
        return NULL;
    if (!JSON_NODE_HOLDS_ARRAY(node)) {
        wrong_type(rd, where, name, "an array", node);
        return NULL;
    }
    return json_node_get_array(node);
}

static uint64_t count_of(struct reader *rd, JsonNode *node, const char *where, const char *name)
{
    if (node == NULL)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64 ||
        json_node_get_int(node) < 0) {
        wrong_type(rd, where, name, "a count (an integer of 0 or more)", node);
        return 0;
    }
    return (uint64_t)json_node_get_int(node);
}

static uint64_t count_member(struct reader *rd, JsonObject *o, const char *where, const char *name)
{
    return count_of(rd, member(rd, o, where, name), where, name);
}

/* A count that is null when vigild did not give it: 0 then. */
static uint64_t count_or_null(struct reader *rd, JsonObject *o, const char *where, const char *name,
                              gboolean *present)
{
    JsonNode *node = member(rd, o, where, name);
    if (present != NULL)
        *present = node != NULL && !is_null(node);
    return is_null(node) ? 0 : count_of(rd, node, where, name);
}

static int32_t int_member(struct reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = member(rd, o, where, name);
    if (node == NULL)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64 ||
        json_node_get_int(node) < INT32_MIN || json_node_get_int(node) > INT32_MAX) {
        wrong_type(rd, where, name, "a 32-bit integer", node);
        return 0;
    }
    return (int32_t)json_node_get_int(node);
}

/* A number; null for NaN when `nullable`. */
static double number_member(struct reader *rd, JsonObject *o, const char *where, const char *name,
                            gboolean nullable)
{
    JsonNode *node = member(rd, o, where, name);
    if (node == NULL)
        return NAN;
    if (nullable && is_null(node))
        return NAN;
    if (!JSON_NODE_HOLDS_VALUE(node) || (json_node_get_value_type(node) != G_TYPE_INT64 &&
                                         json_node_get_value_type(node) != G_TYPE_DOUBLE)) {
        wrong_type(rd, where, name, nullable ? "a number or null" : "a number", node);
        return NAN;
    }
    return json_node_get_double(node);
}

static gboolean bool_member(struct reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = member(rd, o, where, name);
    if (node == NULL)
        return FALSE;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_BOOLEAN) {
        wrong_type(rd, where, name, "true or false", node);
        return FALSE;
    }
    return json_node_get_boolean(node);
}

/* A string, kept in the report's chunk; "" for null when `nullable`. */
static const char *string_of(struct reader *rd, JsonNode *node, const char *where, const char *name,
                             gboolean nullable)
{
    if (node == NULL)
        return "";
    if (nullable && is_null(node))
        return "";
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING) {
        wrong_type(rd, where, name, nullable ? "a string or null" : "a string", node);
        return "";
    }
    return g_string_chunk_insert(rd->out->strings, json_node_get_string(node));
}

static const char *string_member(struct reader *rd, JsonObject *o, const char *where,
                                 const char *name, gboolean nullable)
{
    return string_of(rd, member(rd, o, where, name), where, name, nullable);
}

static enum vigil_report_link_state state_member(struct reader *rd, JsonObject *o,
                                                 const char *where, const char *name)
{
    const char *text = string_member(rd, o, where, name, FALSE);
    for (int s = VIGIL_REPORT_STANDALONE; s <= VIGIL_REPORT_SUMMARY; s++)
        if (strcmp(text, vigil_report_link_state_name((enum vigil_report_link_state)s)) == 0)
            return (enum vigil_report_link_state)s;
    if (!rd->failed) {
        char *path = path_of(where, name);
        fail(rd, path, "\"%s\" is none of standalone, connected and summary", text);
        g_free(path);
    }
    return VIGIL_REPORT_STANDALONE;
}

/* ---- the parts ----------------------------------------------------------------------------- */

/* energy_joule, energy_source, energy_estimated, energy_uncertain, energy_note. */
static void read_energy(struct reader *rd, JsonObject *o, const char *where,
                        struct vigil_report_link *l)
{
    l->energy_j = number_member(rd, o, where, "energy_joule", TRUE);
    const char *source = string_member(rd, o, where, "energy_source", FALSE);
    l->energy_source = isnan(l->energy_j) ? "" : source; /* "none" when there is no energy */
    l->energy_flags = 0;
    if (bool_member(rd, o, where, "energy_estimated"))
        l->energy_flags |= VIGIL_LOCAL_ENERGY_ESTIMATED;
    if (bool_member(rd, o, where, "energy_uncertain"))
        l->energy_flags |= VIGIL_LOCAL_ENERGY_UNCERTAIN;
    l->energy_note = string_member(rd, o, where, "energy_note", TRUE);
}

/* A string into one of the job energy's arrays: a longer one would not
 * print back as it was. */
static void text_into(struct reader *rd, JsonObject *o, const char *name, char *out, size_t size)
{
    const char *text = string_member(rd, o, "job_energy", name, FALSE);
    if (strlen(text) >= size && !rd->failed)
        fail(rd, "job_energy", "%s: longer than %zu bytes", name, size - 1);
    g_strlcpy(out, text, size);
}

/* "job_energy": a job's energy across its nodes (report.h). */
static void read_job_energy(struct reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonObject *o = object_member(rd, root, "", "job_energy");
    if (o == NULL)
        return;
    struct vigil_report_job_energy *j = &r->job_energy;
    j->nodes = int_member(rd, o, "job_energy", "nodes");
    if (j->nodes <= 0 && !rd->failed)
        fail(rd, "job_energy", "nodes: %d", (int)j->nodes);
    j->processes = int_member(rd, o, "job_energy", "processes");
    j->processes_with_energy = int_member(rd, o, "job_energy", "processes_with_energy");
    j->energy_j = number_member(rd, o, "job_energy", "energy_joule", TRUE);
    j->node_min_j = number_member(rd, o, "job_energy", "node_min_joule", TRUE);
    j->node_mean_j = number_member(rd, o, "job_energy", "node_mean_joule", TRUE);
    j->node_max_j = number_member(rd, o, "job_energy", "node_max_joule", TRUE);
    text_into(rd, o, "node_min_host", j->min_host, sizeof j->min_host);
    text_into(rd, o, "node_max_host", j->max_host, sizeof j->max_host);
    text_into(rd, o, "sources", j->sources, sizeof j->sources);
    j->flags = (bool_member(rd, o, "job_energy", "estimated") ? VIGIL_LOCAL_ENERGY_ESTIMATED : 0) |
               (bool_member(rd, o, "job_energy", "uncertain") ? VIGIL_LOCAL_ENERGY_UNCERTAIN : 0);
}

static void read_vigild(struct reader *rd, JsonObject *root, struct vigil_report *r)
{
    const char *where = "vigild";
    JsonObject *o = object_member(rd, root, "", where);
    struct vigil_report_link *l = &r->link;
    l->state = state_member(rd, o, where, "state");
    gboolean drained = FALSE;
    if (r->ranks > 0)
        l->ranks_with_summary = (uint32_t)count_member(rd, o, where, "ranks_with_summary");
    else
        l->process_id = count_or_null(rd, o, where, "process_id", NULL);
    l->reason = string_member(rd, o, where, "reason", TRUE);
    l->activities_drained = count_or_null(rd, o, where, "activities_drained", &drained);
    /* A process's own report gives vigild's figures when its one summary came. */
    if (r->ranks == 0)
        l->ranks_with_summary = drained ? 1 : 0;
    l->names_drained = count_or_null(rd, o, where, "names_drained", NULL);
    l->gaps = count_or_null(rd, o, where, "gaps", NULL);
    l->dropped = count_or_null(rd, o, where, "dropped", NULL);
    l->anomalies = count_or_null(rd, o, where, "anomalies", NULL);
    l->cpu_s = number_member(rd, o, where, "cpu_seconds", TRUE);
    const char *cwhere = "vigild.capture";
    JsonObject *c = object_member(rd, o, where, "capture");
    l->capture_mode = string_member(rd, c, cwhere, "mode", TRUE);
    l->cycles = count_or_null(rd, c, cwhere, "cycles", NULL);
    l->abnormal_cycles = count_or_null(rd, c, cwhere, "abnormal_cycles", NULL);
    l->capture_observed = count_or_null(rd, c, cwhere, "observed", NULL);
    l->capture_forwarded = count_or_null(rd, c, cwhere, "forwarded", NULL);
    l->capture_dropped = count_or_null(rd, c, cwhere, "dropped", NULL);
    l->capture_lost = count_or_null(rd, c, cwhere, "lost", NULL);
    l->capture_held = count_or_null(rd, c, cwhere, "held", NULL);
}

static void read_layers(struct reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonObject *layers = object_member(rd, root, "", "layers");
    if (layers == NULL)
        return;
    GList *names = json_object_get_members(layers);
    for (GList *n = names; n != NULL && !rd->failed; n = n->next) {
        const char *layer_name = n->data;
        char *where = g_strdup_printf("layers.%s", layer_name);
        unsigned layer = vigil_layer_from_name(layer_name);
        JsonObject *ops = object_member(rd, layers, "layers", layer_name);
        if (layer == 0)
            fail(rd, where, "no such layer");
        GList *op_names = ops != NULL && layer != 0 ? json_object_get_members(ops) : NULL;
        for (GList *m = op_names; m != NULL && !rd->failed; m = m->next) {
            const char *op_name = m->data;
            char *op_where = g_strdup_printf("%s.%s", where, op_name);
            unsigned op = vigil_op_from_name(layer, op_name);
            JsonObject *c = object_member(rd, ops, where, op_name);
            if (op == 0 || !vigil_op_is_valid(op))
                fail(rd, op_where, "no such operation");
            else if (c != NULL)
                r->ops[op] = (struct vigil_report_op){
                    .calls = count_member(rd, c, op_where, "calls"),
                    .bytes = count_member(rd, c, op_where, "bytes"),
                    .time_ns = count_member(rd, c, op_where, "time_ns"),
                    .errors = count_member(rd, c, op_where, "errors"),
                };
            g_free(op_where);
        }
        g_list_free(op_names);
        g_free(where);
    }
    g_list_free(names);
}

/* A signed integer (an offset, a stride). */
static int64_t i64_member(struct reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = member(rd, o, where, name);
    if (node == NULL)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64) {
        wrong_type(rd, where, name, "an integer", node);
        return 0;
    }
    return json_node_get_int(node);
}

/* An array of exactly `n` counts. */
static void counts_member(struct reader *rd, JsonObject *o, const char *where, const char *name,
                          uint64_t *out, guint n)
{
    JsonArray *a = array_member(rd, o, where, name);
    if (a == NULL)
        return;
    char *path = path_of(where, name);
    if (json_array_get_length(a) != n)
        fail(rd, path, "%u entries, not %u", json_array_get_length(a), n);
    for (guint i = 0; i < n && !rd->failed; i++) {
        char *index = g_strdup_printf("%u", i);
        out[i] = count_of(rd, json_array_get_element(a, i), path, index);
        g_free(index);
    }
    g_free(path);
}

/* common_sizes or common_strides: at most VIGIL_REPORT_COMMON objects. */
static int read_common(struct reader *rd, JsonObject *o, const char *where, const char *name,
                       const char *value_name, struct vigil_report_common *out)
{
    JsonArray *a = array_member(rd, o, where, name);
    guint count = a != NULL ? json_array_get_length(a) : 0;
    char *path = path_of(where, name);
    if (count > VIGIL_REPORT_COMMON)
        fail(rd, path, "%u entries, more than %d", count, VIGIL_REPORT_COMMON);
    for (guint i = 0; i < count && !rd->failed; i++) {
        char *at = g_strdup_printf("%s.%u", path, i);
        JsonNode *node = json_array_get_element(a, i);
        JsonObject *e = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
        if (e == NULL)
            fail(rd, at, "expected an object, found %s", kind_of(node));
        else
            out[i] = (struct vigil_report_common){
                .value = i64_member(rd, e, at, value_name),
                .count = count_member(rd, e, at, "count"),
            };
        g_free(at);
    }
    g_free(path);
    return rd->failed ? 0 : (int)count;
}

static void read_layer(struct reader *rd, JsonObject *o, const char *where,
                       struct vigil_report_file_layer *l)
{
    l->reads = count_member(rd, o, where, "reads");
    l->writes = count_member(rd, o, where, "writes");
    l->opens = count_member(rd, o, where, "opens");
    l->seeks = count_member(rd, o, where, "seeks");
    l->stats = count_member(rd, o, where, "stats");
    l->fsyncs = count_member(rd, o, where, "fsyncs");
    l->other = count_member(rd, o, where, "other");
    l->read_bytes = count_member(rd, o, where, "read_bytes");
    l->written_bytes = count_member(rd, o, where, "written_bytes");
    l->max_read_offset = i64_member(rd, o, where, "max_read_offset");
    l->max_written_offset = i64_member(rd, o, where, "max_written_offset");
    l->seq_reads = count_member(rd, o, where, "seq_reads");
    l->seq_writes = count_member(rd, o, where, "seq_writes");
    l->consec_reads = count_member(rd, o, where, "consec_reads");
    l->consec_writes = count_member(rd, o, where, "consec_writes");
    counts_member(rd, o, where, "read_size_hist", l->read_size_hist, VIGIL_REPORT_SIZE_BINS);
    counts_member(rd, o, where, "write_size_hist", l->write_size_hist, VIGIL_REPORT_SIZE_BINS);
    l->common_size_count = read_common(rd, o, where, "common_sizes", "size", l->common_sizes);
    l->common_stride_count =
        read_common(rd, o, where, "common_strides", "stride", l->common_strides);
    l->read_time_s = number_member(rd, o, where, "read_time_s", FALSE);
    l->write_time_s = number_member(rd, o, where, "write_time_s", FALSE);
    l->meta_time_s = number_member(rd, o, where, "meta_time_s", FALSE);
    l->first_open_s = number_member(rd, o, where, "first_open_s", FALSE);
    l->last_close_s = number_member(rd, o, where, "last_close_s", FALSE);
    l->first_io_s = number_member(rd, o, where, "first_io_s", FALSE);
    l->last_io_s = number_member(rd, o, where, "last_io_s", FALSE);
}

/* A member that is null or an object: the object, or NULL for null. */
static JsonObject *object_or_null(struct reader *rd, JsonObject *o, const char *where,
                                  const char *name)
{
    JsonNode *node = member(rd, o, where, name);
    if (node == NULL || is_null(node))
        return NULL;
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        wrong_type(rd, where, name, "an object or null", node);
        return NULL;
    }
    return json_node_get_object(node);
}

static void read_file(struct reader *rd, JsonObject *o, const char *where,
                      struct vigil_report_file *f)
{
    f->path = string_member(rd, o, where, "path", FALSE);
    f->path_bytes = strlen(f->path);
    f->calls = count_member(rd, o, where, "calls");
    f->mount = "/";
    f->fs_type = "";
    /* A report from before the counters: only these. */
    f->has_layers = json_object_has_member(o, "posix");
    if (!f->has_layers) {
        f->read_bytes = count_member(rd, o, where, "bytes_read");
        f->written_bytes = count_member(rd, o, where, "bytes_written");
        return;
    }
    f->mount = string_member(rd, o, where, "mount", FALSE);
    f->fs_type = string_member(rd, o, where, "fs_type", FALSE);
    f->read_bytes = count_member(rd, o, where, "read_bytes");
    f->written_bytes = count_member(rd, o, where, "written_bytes");
    char *path = path_of(where, "posix");
    read_layer(rd, object_member(rd, o, where, "posix"), path, &f->posix);
    g_free(path);
    JsonObject *stdio = object_or_null(rd, o, where, "stdio");
    f->has_stdio = stdio != NULL;
    if (stdio != NULL) {
        path = path_of(where, "stdio");
        read_layer(rd, stdio, path, &f->stdio);
        g_free(path);
    }
    /* "mpiio" and "ranks" (report_json_files_mpi.c) */
    if (!rd->failed && !vigil_cli_report_read_file_mpi(o, where, f, rd->error))
        rd->failed = TRUE;
}

static void read_files(struct reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonArray *files = array_member(rd, root, "", "files");
    guint count = files != NULL ? json_array_get_length(files) : 0;
    if (count > INT_MAX / 2) {
        fail(rd, "files", "%u entries, more than a report can hold", count);
        return;
    }
    rd->out->files = g_new0(struct vigil_report_file, count > 0 ? count : 1);
    for (guint i = 0; i < count && !rd->failed; i++) {
        char *where = g_strdup_printf("files.%u", i);
        JsonNode *node = json_array_get_element(files, i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
        if (o == NULL)
            fail(rd, where, "expected an object, found %s", kind_of(node));
        else
            read_file(rd, o, where, &rd->out->files[i]);
        if (i > 0 && !rd->failed && rd->out->files[i].has_layers != rd->out->files[0].has_layers)
            fail(rd, where, "%s per-file counters where files.0 %s",
                 rd->out->files[i].has_layers ? "has" : "lacks",
                 rd->out->files[0].has_layers ? "has them" : "does not");
        g_free(where);
    }
    r->files = rd->out->files;
    r->file_count = (int)count;
}

/* "files_total", "files_untracked" (only when not 0) and "timeline", which a
 * report from an older vigil lacks. */
static void read_timeline(struct reader *rd, JsonObject *root, struct vigil_report *r)
{
    if (!json_object_has_member(root, "timeline") && !json_object_has_member(root, "files_total"))
        return;
    uint64_t total = count_member(rd, root, "", "files_total");
    if (!rd->failed && total < (uint64_t)r->file_count)
        fail(rd, "files_total", "%" G_GUINT64_FORMAT " files, but \"files\" lists %d", total,
             r->file_count);
    r->files_total = total;
    if (json_object_has_member(root, "files_untracked"))
        r->files_untracked = count_member(rd, root, "", "files_untracked");
    JsonObject *t = object_member(rd, root, "", "timeline");
    if (t == NULL)
        return;
    struct vigil_report_timeline *tl = &r->timeline;
    tl->bin_s = number_member(rd, t, "timeline", "bin_s", FALSE);
    if (!rd->failed && !(tl->bin_s > 0))
        fail(rd, "timeline.bin_s", "%g: not a width", tl->bin_s);
    JsonArray *read = array_member(rd, t, "timeline", "read_bytes");
    JsonArray *written = array_member(rd, t, "timeline", "written_bytes");
    if (rd->failed)
        return;
    guint n = json_array_get_length(read);
    if (n > VIGIL_REPORT_TIMELINE_BINS)
        fail(rd, "timeline.read_bytes", "%u bins, more than %d", n, VIGIL_REPORT_TIMELINE_BINS);
    else if (json_array_get_length(written) != n)
        fail(rd, "timeline.written_bytes", "%u bins, where read_bytes has %u",
             json_array_get_length(written), n);
    tl->bins = rd->failed ? 0 : (int)n;
    counts_member(rd, t, "timeline", "read_bytes", tl->read_bytes, (guint)tl->bins);
    counts_member(rd, t, "timeline", "written_bytes", tl->written_bytes, (guint)tl->bins);
}

static void read_rank_energy(struct reader *rd, JsonArray *a, struct vigil_report *r)
{
    if (json_array_get_length(a) != (guint)r->ranks) {
        fail(rd, "energy_by_rank", "%u entries for %d ranks", json_array_get_length(a),
             (int)r->ranks);
        return;
    }
    rd->out->rank_links = g_new0(struct vigil_report_link, r->ranks);
    for (int i = 0; i < r->ranks && !rd->failed; i++) {
        char *where = g_strdup_printf("energy_by_rank.%d", i);
        JsonNode *node = json_array_get_element(a, (guint)i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
        struct vigil_report_link *l = &rd->out->rank_links[i];
        l->reason = l->capture_mode = "";
        l->cpu_s = NAN;
        if (o == NULL) {
            fail(rd, where, "expected an object, found %s", kind_of(node));
        } else if (int_member(rd, o, where, "rank") != i && !rd->failed) {
            fail(rd, where, "its rank is not %d", i);
        } else {
            read_energy(rd, o, where, l);
            l->process_id = count_or_null(rd, o, where, "vigild_process_id", NULL);
            l->capture_forwarded = count_or_null(rd, o, where, "capture_forwarded", NULL);
            l->state = state_member(rd, o, where, "vigild_state");
            l->ranks_with_summary = l->state == VIGIL_REPORT_SUMMARY;
        }
        g_free(where);
    }
    r->rank_links = rd->out->rank_links;
}

static void read_ranks(struct reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonObject *per_rank = object_member(rd, root, "", "per_rank");
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT && per_rank != NULL; m++) {
        const char *name = vigil_report_rank_metric_name((enum vigil_report_rank_metric)m);
        char *where = g_strdup_printf("per_rank.%s", name);
        JsonObject *o = object_member(rd, per_rank, "per_rank", name);
        r->per_rank[m] = (struct vigil_report_rank_stats){
            .min = number_member(rd, o, where, "min", FALSE),
            .mean = number_member(rd, o, where, "mean", FALSE),
            .max = number_member(rd, o, where, "max", FALSE),
            .sum = number_member(rd, o, where, "sum", FALSE),
            .max_rank = int_member(rd, o, where, "max_rank"),
        };
        g_free(where);
    }
    if (json_object_has_member(root, "energy_by_rank")) {
        JsonArray *a = array_member(rd, root, "", "energy_by_rank");
        if (a != NULL)
            read_rank_energy(rd, a, r);
    }
}

static void read_report(struct reader *rd, JsonObject *root)
{
    struct vigil_report *r = &rd->out->r;
    JsonNode *version = member(rd, root, "", "vigil_report");
    if (version != NULL && !rd->failed &&
        (!JSON_NODE_HOLDS_VALUE(version) || json_node_get_value_type(version) != G_TYPE_INT64 ||
         json_node_get_int(version) < 1))
        wrong_type(rd, "", "vigil_report", "a version number", version);
    else if (version != NULL && json_node_get_int(version) > VIGIL_REPORT_VERSION)
        fail(rd, "vigil_report",
             "version %" G_GINT64_FORMAT " comes from a newer vigil; this one reads %d",
             json_node_get_int(version), VIGIL_REPORT_VERSION);

    r->program = string_member(rd, root, "", "program", FALSE);
    JsonArray *argv = array_member(rd, root, "", "argv");
    r->argc = argv != NULL ? (int)json_array_get_length(argv) : 0;
    rd->out->argv = g_new0(const char *, r->argc + 1);
    for (int i = 0; i < r->argc; i++) {
        char *name = g_strdup_printf("%d", i);
        rd->out->argv[i] =
            string_of(rd, json_array_get_element(argv, (guint)i), "argv", name, FALSE);
        g_free(name);
    }
    r->argv = rd->out->argv;
    r->pid = int_member(rd, root, "", "pid");
    r->ranks = json_object_has_member(root, "ranks") ? int_member(rd, root, "", "ranks") : 0;
    if (r->ranks < 0 || (r->ranks == 0 && json_object_has_member(root, "ranks")))
        fail(rd, "ranks", "%d ranks", (int)r->ranks);
    r->rank = -1;
    if (json_object_has_member(root, "rank")) {
        r->rank = int_member(rd, root, "", "rank");
        if (r->rank < 0 || r->ranks > 0)
            fail(rd, "rank", "rank %d%s", (int)r->rank,
                 r->ranks > 0 ? " in a job's report, which has ranks" : "");
        r->in_job_report = bool_member(rd, root, "", "in_job_report");
    }
    r->host = string_member(rd, root, "", "host", FALSE);
    r->runtime_ms = number_member(rd, root, "", "runtime_ms", FALSE);
    r->cpu_seconds = number_member(rd, root, "", "cpu_seconds", TRUE);
    read_energy(rd, root, "", &r->link);
    read_vigild(rd, root, r);
    r->io_read_bytes = count_member(rd, root, "", "io_bytes_read");
    r->io_written_bytes = count_member(rd, root, "", "io_bytes_written");
    r->network_bytes = count_member(rd, root, "", "network_bytes");
    JsonObject *activities = object_member(rd, root, "", "activities");
    r->observed = count_member(rd, activities, "activities", "observed");
    r->recorded = count_member(rd, activities, "activities", "recorded");
    r->dropped = count_member(rd, activities, "activities", "dropped");
    r->excluded = count_member(rd, activities, "activities", "excluded");
    read_layers(rd, root, r);
    read_files(rd, root, r);
    if (r->ranks > 0)
        read_ranks(rd, root, r);
    r->run_key = string_member(rd, root, "", "run_key", FALSE);
    if (json_object_has_member(root, "uplink_lost_activities")) {
        r->uplink_lost_known = true;
        r->uplink_lost_activities = count_member(rd, root, "", "uplink_lost_activities");
    }
    if (json_object_has_member(root, "job_energy"))
        read_job_energy(rd, root, r);
    if (!rd->failed && !vigil_cli_report_read_regions(root, rd->out, rd->error))
        rd->failed = TRUE;
    read_timeline(rd, root, r);
}

gboolean vigil_cli_report_parse(const char *json, gssize length, struct vigil_cli_report *out,
                                GError **error)
{
    memset(out, 0, sizeof *out);
    out->strings = g_string_chunk_new(1024);
    struct vigil_report *r = &out->r;
    /* What stays unknown if the document says nothing: as the renderer
     * reads it. */
    r->run_key = r->program = r->host = "";
    r->rank = -1;
    r->link.energy_source = r->link.energy_note = r->link.reason = r->link.capture_mode = "";
    r->link.energy_j = r->link.cpu_s = NAN;

    JsonParser *parser = json_parser_new_immutable();
    GError *parse_error = NULL;
    if (!json_parser_load_from_data(parser, json, length, &parse_error)) {
        g_set_error(error, REPORT_ERROR, 0, "report: not JSON: %s", parse_error->message);
        g_error_free(parse_error);
        g_object_unref(parser);
        vigil_cli_report_clear(out);
        return FALSE;
    }
    JsonNode *root = json_parser_get_root(parser);
    struct reader rd = {.out = out, .error = error};
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        fail(&rd, "its top", "expected an object, found %s", kind_of(root));
    else
        read_report(&rd, json_node_get_object(root));
    g_object_unref(parser);
    if (rd.failed)
        vigil_cli_report_clear(out);
    return !rd.failed;
}

void vigil_cli_report_clear(struct vigil_cli_report *report)
{
    if (report->strings != NULL)
        g_string_chunk_free(report->strings);
    g_free(report->argv);
    g_free(report->rank_links);
    g_free(report->regions);
    g_free(report->files);
    memset(report, 0, sizeof *report);
}

static void append_to_string(void *user, const char *bytes, size_t length)
{
    g_string_append_len(user, bytes, (gssize)length);
}

static char *render(const struct vigil_report *r, gboolean json)
{
    GString *out = g_string_new(NULL);
    struct vigil_report_sink *sink = g_new(struct vigil_report_sink, 1);
    vigil_report_sink_init(sink, append_to_string, out);
    if (json)
        vigil_report_write_json(sink, r);
    else
        vigil_report_write_text(sink, r);
    vigil_report_sink_flush(sink);
    g_free(sink);
    return g_string_free(out, FALSE);
}

char *vigil_cli_report_text(const struct vigil_report *r)
{
    return render(r, FALSE);
}

char *vigil_cli_report_json(const struct vigil_report *r)
{
    return render(r, TRUE);
}
