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

#include "report_json_reader.h"
#include "report_layer_fields.h"
#include "vigil/local_protocol.h"

static enum vigil_report_link_state state_member(struct report_reader *rd, JsonObject *o,
                                                 const char *where, const char *name)
{
    const char *text = report_string_member(rd, o, where, name, FALSE);
    for (int s = VIGIL_REPORT_STANDALONE; s <= VIGIL_REPORT_SUMMARY; s++)
        if (strcmp(text, vigil_report_link_state_name((enum vigil_report_link_state)s)) == 0)
            return (enum vigil_report_link_state)s;
    if (!rd->failed) {
        char *path = report_path(where, name);
        report_fail(rd, path, "\"%s\" is none of standalone, connected and summary", text);
        g_free(path);
    }
    return VIGIL_REPORT_STANDALONE;
}

/* ---- the parts ----------------------------------------------------------------------------- */

/* energy_joule, energy_source, energy_estimated, energy_uncertain, energy_note. */
static void read_energy(struct report_reader *rd, JsonObject *o, const char *where,
                        struct vigil_report_link *l)
{
    l->energy_j = report_number_member(rd, o, where, "energy_joule", TRUE);
    const char *source = report_string_member(rd, o, where, "energy_source", FALSE);
    l->energy_source = isnan(l->energy_j) ? "" : source; /* "none" when there is no energy */
    l->energy_flags = 0;
    if (report_bool_member(rd, o, where, "energy_estimated"))
        l->energy_flags |= VIGIL_LOCAL_ENERGY_ESTIMATED;
    if (report_bool_member(rd, o, where, "energy_uncertain"))
        l->energy_flags |= VIGIL_LOCAL_ENERGY_UNCERTAIN;
    l->energy_note = report_string_member(rd, o, where, "energy_note", TRUE);
}

/* A string into one of the job energy's arrays: a longer one would not
 * print back as it was. */
static void text_into(struct report_reader *rd, JsonObject *o, const char *name, char *out,
                      size_t size)
{
    const char *text = report_string_member(rd, o, "job_energy", name, FALSE);
    if (strlen(text) >= size && !rd->failed)
        report_fail(rd, "job_energy", "%s: longer than %zu bytes", name, size - 1);
    g_strlcpy(out, text, size);
}

/* "job_energy": a job's energy across its nodes (report.h). */
static void read_job_energy(struct report_reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonObject *o = report_object_member(rd, root, "", "job_energy");
    if (o == NULL)
        return;
    struct vigil_report_job_energy *j = &r->job_energy;
    j->nodes = report_int32_member(rd, o, "job_energy", "nodes");
    if (j->nodes <= 0 && !rd->failed)
        report_fail(rd, "job_energy", "nodes: %d", (int)j->nodes);
    j->processes = report_int32_member(rd, o, "job_energy", "processes");
    j->processes_with_energy = report_int32_member(rd, o, "job_energy", "processes_with_energy");
    j->energy_j = report_number_member(rd, o, "job_energy", "energy_joule", TRUE);
    j->node_min_j = report_number_member(rd, o, "job_energy", "node_min_joule", TRUE);
    j->node_mean_j = report_number_member(rd, o, "job_energy", "node_mean_joule", TRUE);
    j->node_max_j = report_number_member(rd, o, "job_energy", "node_max_joule", TRUE);
    text_into(rd, o, "node_min_host", j->min_host, sizeof j->min_host);
    text_into(rd, o, "node_max_host", j->max_host, sizeof j->max_host);
    text_into(rd, o, "sources", j->sources, sizeof j->sources);
    j->flags =
        (report_bool_member(rd, o, "job_energy", "estimated") ? VIGIL_LOCAL_ENERGY_ESTIMATED : 0) |
        (report_bool_member(rd, o, "job_energy", "uncertain") ? VIGIL_LOCAL_ENERGY_UNCERTAIN : 0);
}

static void read_vigild(struct report_reader *rd, JsonObject *root, struct vigil_report *r)
{
    const char *where = "vigild";
    JsonObject *o = report_object_member(rd, root, "", where);
    struct vigil_report_link *l = &r->link;
    l->state = state_member(rd, o, where, "state");
    gboolean drained = FALSE;
    if (r->ranks > 0)
        l->ranks_with_summary = (uint32_t)report_count_member(rd, o, where, "ranks_with_summary");
    else
        l->process_id = report_count_or_null(rd, o, where, "process_id", NULL);
    l->reason = report_string_member(rd, o, where, "reason", TRUE);
    l->activities_drained = report_count_or_null(rd, o, where, "activities_drained", &drained);
    /* A process's own report gives vigild's figures when its one summary came. */
    if (r->ranks == 0)
        l->ranks_with_summary = drained ? 1 : 0;
    l->names_drained = report_count_or_null(rd, o, where, "names_drained", NULL);
    l->gaps = report_count_or_null(rd, o, where, "gaps", NULL);
    l->dropped = report_count_or_null(rd, o, where, "dropped", NULL);
    l->anomalies = report_count_or_null(rd, o, where, "anomalies", NULL);
    l->cpu_s = report_number_member(rd, o, where, "cpu_seconds", TRUE);
    const char *cwhere = "vigild.capture";
    JsonObject *c = report_object_member(rd, o, where, "capture");
    l->capture_mode = report_string_member(rd, c, cwhere, "mode", TRUE);
    l->cycles = report_count_or_null(rd, c, cwhere, "cycles", NULL);
    l->abnormal_cycles = report_count_or_null(rd, c, cwhere, "abnormal_cycles", NULL);
    l->capture_observed = report_count_or_null(rd, c, cwhere, "observed", NULL);
    l->capture_forwarded = report_count_or_null(rd, c, cwhere, "forwarded", NULL);
    l->capture_dropped = report_count_or_null(rd, c, cwhere, "dropped", NULL);
    l->capture_lost = report_count_or_null(rd, c, cwhere, "lost", NULL);
    l->capture_held = report_count_or_null(rd, c, cwhere, "held", NULL);
}

static void read_layers(struct report_reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonObject *layers = report_object_member(rd, root, "", "layers");
    if (layers == NULL)
        return;
    GList *names = json_object_get_members(layers);
    for (GList *n = names; n != NULL && !rd->failed; n = n->next) {
        const char *layer_name = n->data;
        char *where = g_strdup_printf("layers.%s", layer_name);
        unsigned layer = vigil_layer_from_name(layer_name);
        JsonObject *ops = report_object_member(rd, layers, "layers", layer_name);
        if (layer == 0)
            report_fail(rd, where, "no such layer");
        GList *op_names = ops != NULL && layer != 0 ? json_object_get_members(ops) : NULL;
        for (GList *m = op_names; m != NULL && !rd->failed; m = m->next) {
            const char *op_name = m->data;
            char *op_where = g_strdup_printf("%s.%s", where, op_name);
            unsigned op = vigil_op_from_name(layer, op_name);
            JsonObject *c = report_object_member(rd, ops, where, op_name);
            if (op == 0 || !vigil_op_is_valid(op))
                report_fail(rd, op_where, "no such operation");
            else if (c != NULL)
                r->ops[op] = (struct vigil_report_op){
                    .calls = report_count_member(rd, c, op_where, "calls"),
                    .bytes = report_count_member(rd, c, op_where, "bytes"),
                    .time_ns = report_count_member(rd, c, op_where, "time_ns"),
                    .errors = report_count_member(rd, c, op_where, "errors"),
                };
            g_free(op_where);
        }
        g_list_free(op_names);
        g_free(where);
    }
    g_list_free(names);
}

/* common_sizes or common_strides (report_json_reader.h). */
int report_read_common(struct report_reader *rd, JsonObject *o, const char *where, const char *name,
                       const char *value_name, struct vigil_report_common *out)
{
    JsonArray *a = report_array_member(rd, o, where, name);
    guint count = a != NULL ? json_array_get_length(a) : 0;
    char *path = report_path(where, name);
    if (count > VIGIL_REPORT_COMMON)
        report_fail(rd, path, "%u entries, more than %d", count, VIGIL_REPORT_COMMON);
    bool sizes = strcmp(value_name, "size") == 0; /* a size is never negative; a stride may be */
    for (guint i = 0; i < count && !rd->failed; i++) {
        char *at = g_strdup_printf("%s.%u", path, i);
        JsonObject *e = report_object_of(rd, json_array_get_element(a, i), at);
        if (e != NULL)
            out[i] = (struct vigil_report_common){
                .value = sizes ? (int64_t)report_count_member(rd, e, at, value_name)
                               : report_i64_member(rd, e, at, value_name),
                .count = report_count_member(rd, e, at, "count"),
                /* Before issue 33 counts could overstate: none exact. */
                .exact =
                    json_object_has_member(e, "exact") && report_bool_member(rd, e, at, "exact"),
            };
        g_free(at);
    }
    g_free(path);
    return rd->failed ? 0 : (int)count;
}

static void read_layer(struct report_reader *rd, JsonObject *o, const char *where,
                       struct vigil_report_file_layer *l)
{
    for (size_t i = 0; i < vigil_report_layer_field_count; i++) {
        const struct vigil_report_layer_field *field = &vigil_report_layer_fields[i];
        void *at = (char *)l + field->offset;
        if (field->added && o != NULL && !json_object_has_member(o, field->name)) {
            if (field->kind == VIGIL_REPORT_LAYER_INTEGER)
                *(int64_t *)at = -1;
            else if (field->kind == VIGIL_REPORT_LAYER_SECONDS)
                *(double *)at = 0;
            else
                *(uint64_t *)at = 0;
            continue;
        }
        switch (field->kind) {
        case VIGIL_REPORT_LAYER_COUNT:
            *(uint64_t *)at = report_count_member(rd, o, where, field->name);
            break;
        case VIGIL_REPORT_LAYER_OFFSET:
        case VIGIL_REPORT_LAYER_INTEGER:
            *(int64_t *)at = report_i64_member(rd, o, where, field->name);
            break;
        case VIGIL_REPORT_LAYER_SIZE_HIST:
            report_counts_member(rd, o, where, field->name, (uint64_t *)at, VIGIL_REPORT_SIZE_BINS);
            break;
        case VIGIL_REPORT_LAYER_COMMON:
            *(int *)((char *)l + field->count_offset) = report_read_common(
                rd, o, where, field->name, field->value_name, (struct vigil_report_common *)at);
            break;
        case VIGIL_REPORT_LAYER_SECONDS:
            *(double *)at = report_number_member(rd, o, where, field->name, FALSE);
            break;
        }
    }
}

static void read_file(struct report_reader *rd, JsonObject *o, const char *where,
                      struct vigil_report_file *f)
{
    f->path = report_string_member(rd, o, where, "path", FALSE);
    f->path_bytes = strlen(f->path);
    f->calls = report_count_member(rd, o, where, "calls");
    f->mount = "/";
    f->fs_type = "";
    /* A report from before the counters: only these. */
    f->has_layers = json_object_has_member(o, "posix");
    if (!f->has_layers) {
        f->read_bytes = report_count_member(rd, o, where, "bytes_read");
        f->written_bytes = report_count_member(rd, o, where, "bytes_written");
        return;
    }
    f->mount = report_string_member(rd, o, where, "mount", FALSE);
    f->fs_type = report_string_member(rd, o, where, "fs_type", FALSE);
    f->read_bytes = report_count_member(rd, o, where, "read_bytes");
    f->written_bytes = report_count_member(rd, o, where, "written_bytes");
    char *path = report_path(where, "posix");
    read_layer(rd, report_object_member(rd, o, where, "posix"), path, &f->posix);
    g_free(path);
    JsonObject *stdio = report_object_or_null(rd, o, where, "stdio");
    f->has_stdio = stdio != NULL;
    if (stdio != NULL) {
        path = report_path(where, "stdio");
        read_layer(rd, stdio, path, &f->stdio);
        g_free(path);
    }
    if (!rd->failed)
        report_read_file_mpi(rd, o, where, f);
}

static void read_files(struct report_reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonArray *files = report_array_member(rd, root, "", "files");
    guint count = files != NULL ? json_array_get_length(files) : 0;
    if (count > INT_MAX / 2) {
        report_fail(rd, "files", "%u entries, more than a report can hold", count);
        return;
    }
    rd->out->files = g_new0(struct vigil_report_file, count > 0 ? count : 1);
    for (guint i = 0; i < count && !rd->failed; i++) {
        char *where = g_strdup_printf("files.%u", i);
        JsonObject *o = report_object_of(rd, json_array_get_element(files, i), where);
        if (o != NULL)
            read_file(rd, o, where, &rd->out->files[i]);
        if (i > 0 && !rd->failed && rd->out->files[i].has_layers != rd->out->files[0].has_layers)
            report_fail(rd, where, "%s per-file counters where files.0 %s",
                        rd->out->files[i].has_layers ? "has" : "lacks",
                        rd->out->files[0].has_layers ? "has them" : "does not");
        g_free(where);
    }
    r->files = rd->out->files;
    r->file_count = (int)count;
}

/* "files_total", "files_untracked" (only when not 0) and "timeline", which a
 * report from an older vigil lacks. */
static void read_timeline(struct report_reader *rd, JsonObject *root, struct vigil_report *r)
{
    if (!json_object_has_member(root, "timeline") && !json_object_has_member(root, "files_total"))
        return;
    uint64_t total = report_count_member(rd, root, "", "files_total");
    if (!rd->failed && total < (uint64_t)r->file_count)
        report_fail(rd, "files_total", "%" G_GUINT64_FORMAT " files, but \"files\" lists %d", total,
                    r->file_count);
    r->files_total = total;
    if (json_object_has_member(root, "files_untracked"))
        r->files_untracked = report_count_member(rd, root, "", "files_untracked");
    JsonObject *t = report_object_member(rd, root, "", "timeline");
    if (t == NULL)
        return;
    struct vigil_report_timeline *tl = &r->timeline;
    tl->bin_s = report_number_member(rd, t, "timeline", "bin_s", FALSE);
    if (!rd->failed && !(tl->bin_s > 0))
        report_fail(rd, "timeline.bin_s", "%g: not a width", tl->bin_s);
    JsonArray *read = report_array_member(rd, t, "timeline", "read_bytes");
    JsonArray *written = report_array_member(rd, t, "timeline", "written_bytes");
    if (rd->failed)
        return;
    guint n = json_array_get_length(read);
    if (n > VIGIL_REPORT_TIMELINE_BINS)
        report_fail(rd, "timeline.read_bytes", "%u bins, more than %d", n,
                    VIGIL_REPORT_TIMELINE_BINS);
    else if (json_array_get_length(written) != n)
        report_fail(rd, "timeline.written_bytes", "%u bins, where read_bytes has %u",
                    json_array_get_length(written), n);
    tl->bins = rd->failed ? 0 : (int)n;
    report_counts_member(rd, t, "timeline", "read_bytes", tl->read_bytes, (guint)tl->bins);
    report_counts_member(rd, t, "timeline", "written_bytes", tl->written_bytes, (guint)tl->bins);
}

static void read_rank_energy(struct report_reader *rd, JsonArray *a, struct vigil_report *r)
{
    if (json_array_get_length(a) != (guint)r->ranks) {
        report_fail(rd, "energy_by_rank", "%u entries for %d ranks", json_array_get_length(a),
                    (int)r->ranks);
        return;
    }
    rd->out->rank_links = g_new0(struct vigil_report_link, r->ranks);
    for (int i = 0; i < r->ranks && !rd->failed; i++) {
        char *where = g_strdup_printf("energy_by_rank.%d", i);
        JsonObject *o = report_object_of(rd, json_array_get_element(a, (guint)i), where);
        struct vigil_report_link *l = &rd->out->rank_links[i];
        l->reason = l->capture_mode = "";
        l->cpu_s = NAN;
        if (o != NULL && report_int32_member(rd, o, where, "rank") != i && !rd->failed) {
            report_fail(rd, where, "its rank is not %d", i);
        } else if (o != NULL) {
            read_energy(rd, o, where, l);
            l->process_id = report_count_or_null(rd, o, where, "vigild_process_id", NULL);
            l->capture_forwarded = report_count_or_null(rd, o, where, "capture_forwarded", NULL);
            l->state = state_member(rd, o, where, "vigild_state");
            l->ranks_with_summary = l->state == VIGIL_REPORT_SUMMARY;
        }
        g_free(where);
    }
    r->rank_links = rd->out->rank_links;
}

static void read_ranks(struct report_reader *rd, JsonObject *root, struct vigil_report *r)
{
    JsonObject *per_rank = report_object_member(rd, root, "", "per_rank");
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT && per_rank != NULL; m++) {
        const char *name = vigil_report_rank_metric_name((enum vigil_report_rank_metric)m);
        char *where = g_strdup_printf("per_rank.%s", name);
        JsonObject *o = report_object_member(rd, per_rank, "per_rank", name);
        r->per_rank[m] = (struct vigil_report_rank_stats){
            .min = report_number_member(rd, o, where, "min", FALSE),
            .mean = report_number_member(rd, o, where, "mean", FALSE),
            .max = report_number_member(rd, o, where, "max", FALSE),
            .sum = report_number_member(rd, o, where, "sum", FALSE),
            .max_rank = report_int32_member(rd, o, where, "max_rank"),
        };
        g_free(where);
    }
    if (json_object_has_member(root, "energy_by_rank")) {
        JsonArray *a = report_array_member(rd, root, "", "energy_by_rank");
        if (a != NULL)
            read_rank_energy(rd, a, r);
    }
}

static void read_report(struct report_reader *rd, JsonObject *root)
{
    struct vigil_report *r = &rd->out->r;
    JsonNode *version = report_member(rd, root, "", "vigil_report");
    if (version != NULL && !rd->failed &&
        (!JSON_NODE_HOLDS_VALUE(version) || json_node_get_value_type(version) != G_TYPE_INT64 ||
         json_node_get_int(version) < 1))
        report_wrong_type(rd, "", "vigil_report", "a version number", version);
    else if (version != NULL && json_node_get_int(version) > VIGIL_REPORT_VERSION)
        report_fail(rd, "vigil_report",
                    "version %" G_GINT64_FORMAT " comes from a newer vigil; this one reads %d",
                    json_node_get_int(version), VIGIL_REPORT_VERSION);

    r->program = report_string_member(rd, root, "", "program", FALSE);
    JsonArray *argv = report_array_member(rd, root, "", "argv");
    r->argc = argv != NULL ? (int)json_array_get_length(argv) : 0;
    rd->out->argv = g_new0(const char *, r->argc + 1);
    for (int i = 0; i < r->argc; i++) {
        char *name = g_strdup_printf("%d", i);
        rd->out->argv[i] =
            report_string_of(rd, json_array_get_element(argv, (guint)i), "argv", name, FALSE);
        g_free(name);
    }
    r->argv = rd->out->argv;
    r->pid = report_int32_member(rd, root, "", "pid");
    r->ranks =
        json_object_has_member(root, "ranks") ? report_int32_member(rd, root, "", "ranks") : 0;
    if (r->ranks < 0 || (r->ranks == 0 && json_object_has_member(root, "ranks")))
        report_fail(rd, "ranks", "%d ranks", (int)r->ranks);
    r->rank = -1;
    if (json_object_has_member(root, "rank")) {
        r->rank = report_int32_member(rd, root, "", "rank");
        if (r->rank < 0 || r->ranks > 0)
            report_fail(rd, "rank", "rank %d%s", (int)r->rank,
                        r->ranks > 0 ? " in a job's report, which has ranks" : "");
        r->in_job_report = report_bool_member(rd, root, "", "in_job_report");
    }
    r->host = report_string_member(rd, root, "", "host", FALSE);
    r->runtime_ms = report_number_member(rd, root, "", "runtime_ms", FALSE);
    r->cpu_seconds = report_number_member(rd, root, "", "cpu_seconds", TRUE);
    read_energy(rd, root, "", &r->link);
    read_vigild(rd, root, r);
    r->io_read_bytes = report_count_member(rd, root, "", "io_bytes_read");
    r->io_written_bytes = report_count_member(rd, root, "", "io_bytes_written");
    r->network_bytes = report_count_member(rd, root, "", "network_bytes");
    JsonObject *activities = report_object_member(rd, root, "", "activities");
    r->observed = report_count_member(rd, activities, "activities", "observed");
    r->recorded = report_count_member(rd, activities, "activities", "recorded");
    r->dropped = report_count_member(rd, activities, "activities", "dropped");
    r->excluded = report_count_member(rd, activities, "activities", "excluded");
    read_layers(rd, root, r);
    read_files(rd, root, r);
    if (r->ranks > 0)
        read_ranks(rd, root, r);
    r->run_key = report_string_member(rd, root, "", "run_key", FALSE);
    if (json_object_has_member(root, "uplink_lost_activities")) {
        r->uplink_lost_known = true;
        r->uplink_lost_activities = report_count_member(rd, root, "", "uplink_lost_activities");
    }
    if (json_object_has_member(root, "job_energy"))
        read_job_energy(rd, root, r);
    if (!rd->failed)
        report_read_regions(rd, root);
    read_timeline(rd, root, r);
    if (!rd->failed)
        report_read_findings(rd, root);
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

    struct report_reader rd = {.out = out, .error = error};
    JsonParser *parser = json_parser_new_immutable();
    GError *parse_error = NULL;
    if (!json_parser_load_from_data(parser, json, length, &parse_error)) {
        report_fail(&rd, "not JSON", "%s", parse_error->message);
        g_error_free(parse_error);
        g_object_unref(parser);
        vigil_cli_report_clear(out);
        return FALSE;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        report_fail(&rd, "its top", "expected an object, found %s", vigil_json_kind(root));
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
    g_free(report->findings);
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
