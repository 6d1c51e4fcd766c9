/* vigild — the JSON sink as a capture consumer: each forwarded cycle's
 * statistics and activities, each window and each cycle's counts as one
 * line of the sink's file (capture_sink.c). docs/architecture.md lists
 * the lines.
 *
 * Every file names the paths its own lines use: an "activities" line
 * carries the names the file has not had yet, so that one file read
 * alone, or one left after older ones were deleted, still names every
 * path. That is the one thing this consumer remembers: which names each
 * process's lines have given in the current file. */
#include <string.h>

#include "vigil/ontology.h"
#include "capture_consumer.h"
#include "capture_json.h"
#include "capture_sink.h"
#include "vigil/json_members.h"

#define SINK_NAME "sink"

struct capture_json {
    struct vigild_capture_sink *sink;
    const vigil_metric_catalog *catalog;
    uint64_t rotations;     /* the sink's rotations when names were last sent */
    GHashTable *names_sent; /* process id → the set of its file ids the file has had */
};

/* A new file has none of the names the old one had. */
static void check_sink_file(struct capture_json *j)
{
    struct vigild_capture_sink_stats stats;
    vigild_capture_sink_stats(j->sink, &stats);
    if (stats.rotations != j->rotations) {
        j->rotations = stats.rotations;
        g_hash_table_remove_all(j->names_sent);
    }
}

static GHashTable *names_sent_of(struct capture_json *j, uint64_t process_id)
{
    GHashTable *sent = g_hash_table_lookup(j->names_sent, &process_id);
    if (sent == NULL) {
        sent = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_insert(j->names_sent, g_memdup2(&process_id, sizeof process_id), sent);
    }
    return sent;
}

/* A line about a subject's window: its type, the window and the subject. */
static JsonBuilder *begin_window_line(const char *type, const struct vigild_capture_subject *s)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_string(b, "type", type);
    vigil_json_int(b, "window", (int64_t)s->window);
    vigil_json_int(b, "process", (int64_t)s->process_id);
    if (s->process_id != 0) {
        vigil_json_int(b, "pid", s->pid);
        vigil_json_string(b, "program", s->program);
        vigil_json_int(b, "rank", s->mpi_rank);
    }
    return b;
}

static const char *const activity_fields[] = {
    "seq",   "layer",    "op",     "file",      "offset_bytes",    "bytes_asked", "result",
    "errno", "start_ns", "end_ns", "thread_id", "parent_start_ns", "flags",
};

static void add_activity(JsonBuilder *b, const struct vigil_activity *a)
{
    json_builder_begin_array(b);
    const int64_t values[] = {
        (int64_t)a->seq,    a->layer,        a->op,
        a->file_id,         a->offset_bytes, (int64_t)a->bytes_asked,
        a->result,          a->errno_value,  (int64_t)a->start_ns,
        (int64_t)a->end_ns, a->thread_id,    (int64_t)a->parent_start_ns,
        a->flags,
    };
    G_STATIC_ASSERT(G_N_ELEMENTS(values) == G_N_ELEMENTS(activity_fields));
    for (size_t i = 0; i < G_N_ELEMENTS(values); i++)
        json_builder_add_int_value(b, values[i]);
    json_builder_end_array(b);
}

/* The cycle's activities, with the names of files the sink's file has not
 * had; FALSE when the line needed a new file and must be built again. */
static gboolean write_activities_once(struct capture_json *j,
                                      const struct vigild_capture_subject *s,
                                      const struct vigild_capture_cycle *h)
{
    check_sink_file(j);
    GHashTable *names_sent = names_sent_of(j, s->process_id);
    JsonBuilder *b = begin_window_line("activities", s);
    vigil_json_int(b, "cycle", (int64_t)h->cycle);
    vigil_json_int(b, "start_ns", (int64_t)h->start_ns);
    vigil_json_int(b, "end_ns", (int64_t)h->end_ns);
    json_builder_set_member_name(b, "files");
    json_builder_begin_object(b);
    for (guint i = 0; i < h->activities->len; i++) {
        uint32_t id = g_array_index(h->activities, struct vigil_activity, i).file_id;
        const char *path = g_hash_table_lookup(s->names, GUINT_TO_POINTER(id));
        if (path == NULL || g_hash_table_contains(names_sent, GUINT_TO_POINTER(id)))
            continue;
        char key[16];
        g_snprintf(key, sizeof key, "%u", id);
        /* Paths are bytes, not text: a Latin-1 name would make the sink's
         * line invalid JSON. Invalid sequences become U+FFFD. */
        char *shown = g_utf8_make_valid(path, -1);
        vigil_json_string(b, key, shown);
        g_free(shown);
        g_hash_table_add(names_sent, GUINT_TO_POINTER(id));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "fields");
    json_builder_begin_array(b);
    for (size_t i = 0; i < G_N_ELEMENTS(activity_fields); i++)
        json_builder_add_string_value(b, activity_fields[i]);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "activities");
    json_builder_begin_array(b);
    for (guint i = 0; i < h->activities->len; i++)
        add_activity(b, &g_array_index(h->activities, struct vigil_activity, i));
    json_builder_end_array(b);
    json_builder_end_object(b);
    gboolean written = vigild_capture_sink_write_or_rotate(j->sink, b);
    g_object_unref(b);
    return written;
}

static void write_activities(void *context, const struct vigild_capture_subject *s,
                             const struct vigild_capture_cycle *cycle)
{
    /* A second time into the new file the first started: it fits or is
     * dropped, counted, but is never refused again. */
    if (!write_activities_once(context, s, cycle))
        write_activities_once(context, s, cycle);
}

static void write_statistics(void *context, const struct vigild_capture_cycle *cycle,
                             const GArray *samples)
{
    struct capture_json *j = context;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_string(b, "type", "statistics");
    vigil_json_int(b, "cycle", (int64_t)cycle->cycle);
    vigil_json_int(b, "start_ns", (int64_t)cycle->start_ns);
    vigil_json_int(b, "end_ns", (int64_t)cycle->end_ns);
    json_builder_set_member_name(b, "samples");
    json_builder_begin_array(b);
    for (guint i = 0; i < samples->len; i++) {
        const struct vigil_sample *x = &g_array_index(samples, struct vigil_sample, i);
        const struct vigil_metric_desc *m = vigil_metric_get(j->catalog, x->metric_id);
        json_builder_begin_array(b);
        json_builder_add_string_value(b, m != NULL ? m->name : "?");
        json_builder_add_int_value(b, (int64_t)x->t_ns);
        json_builder_add_double_value(b, x->value);
        json_builder_add_int_value(b, x->flags);
        json_builder_end_array(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    vigild_capture_sink_write(j->sink, b);
    g_object_unref(b);
}

static void add_verdict(JsonBuilder *b, const struct vigild_verdict *v)
{
    json_builder_begin_object(b);
    vigil_json_string(b, "level", vigil_level_name(v->level));
    vigil_json_string(b, "state", vigil_health_name(v->decision.own));
    vigil_json_bool(b, "held", v->decision.own_held);
    vigil_json_int(b, "bad", v->decision.bad);
    vigil_json_int(b, "good", v->decision.good);
    vigil_json_int(b, "other", v->decision.other);
    json_builder_set_member_name(b, "overloaded");
    json_builder_begin_array(b);
    for (size_t i = 0; i < v->decision.n_overloaded; i++)
        json_builder_add_string_value(b, v->decision.overloaded[i]);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "issues");
    json_builder_begin_array(b);
    for (guint i = 0; i < v->n_issues; i++) {
        const struct vigild_issue *x = &v->issues[i];
        json_builder_begin_object(b);
        vigil_json_string(b, "plugin", x->plugin);
        vigil_json_string(b, "health", vigil_health_name(x->issue.health));
        vigil_json_string(b, "metric", x->issue.metric);
        vigil_json_number(b, "value", x->issue.value);
        vigil_json_number(b, "expected_min", x->issue.expected_min);
        vigil_json_number(b, "expected_max", x->issue.expected_max);
        vigil_json_string(b, "message", x->issue.message);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

/* Why cycle k of a window was forwarded: every level abnormal in it. */
static void add_reason(JsonBuilder *b, const struct vigild_capture_reason *r)
{
    json_builder_begin_object(b);
    vigil_json_int(b, "cycle", (int64_t)r->cycle);
    json_builder_set_member_name(b, "levels");
    json_builder_begin_array(b);
    if (r->process != NULL)
        add_verdict(b, r->process);
    if (r->node != NULL)
        add_verdict(b, r->node);
    if (vigil_health_is_abnormal(r->system_state)) {
        json_builder_begin_object(b);
        vigil_json_string(b, "level", "system");
        vigil_json_string(b, "state", vigil_health_name(r->system_state));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

static void write_window(void *context, const struct vigild_capture_subject *s,
                         enum vigild_capture_mode mode)
{
    struct capture_json *j = context;
    JsonBuilder *b = begin_window_line("window", s);
    vigil_json_int(b, "first_cycle", (int64_t)s->window_first);
    vigil_json_int(b, "last_cycle", (int64_t)s->window_last);
    vigil_json_int(b, "activities", (int64_t)s->window_activities);
    vigil_json_string(b, "mode", vigild_capture_mode_name(mode));
    json_builder_set_member_name(b, "reasons");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->reasons->len; i++)
        add_reason(b, &g_array_index(s->reasons, struct vigild_capture_reason, i));
    json_builder_end_array(b);
    vigil_json_int(b, "reasons_left_out", (int64_t)s->reasons_left_out);
    json_builder_end_object(b);
    vigild_capture_sink_write(j->sink, b);
    g_object_unref(b);
}

/* A health name as a JSON value: the names are upper-case words, which
 * need no escaping; a missing one is null. */
static const char *health_json(unsigned health, char *buffer, gsize size)
{
    const char *name = vigil_health_name(health);
    if (name == NULL)
        return "null";
    g_snprintf(buffer, size, "\"%s\"", name);
    return buffer;
}

/* Every cycle's line, printed rather than built: the same text a
 * JsonBuilder gives (members in this order, no blanks). Then the file is
 * flushed, so that a reader sees whole cycles. */
static void write_cycle(void *context, const struct vigild_cycle_verdicts *v, guint processes,
                        const struct vigild_capture_counts *total)
{
    struct capture_json *j = context;
    char node[32], system[32], line[512];
    int length = g_snprintf(
        line, sizeof line,
        "{\"type\":\"cycle\",\"cycle\":%" G_GINT64_FORMAT ",\"start_ns\":%" G_GINT64_FORMAT
        ",\"end_ns\":%" G_GINT64_FORMAT
        ",\"node_state\":%s,\"system_state\":%s,\"processes\":%" G_GINT64_FORMAT
        ",\"observed\":%" G_GINT64_FORMAT ",\"forwarded\":%" G_GINT64_FORMAT
        ",\"dropped\":%" G_GINT64_FORMAT ",\"lost\":%" G_GINT64_FORMAT ",\"held\":%" G_GINT64_FORMAT
        "}",
        (gint64)v->cycle, (gint64)v->start_ns, (gint64)v->end_ns,
        v->node != NULL ? health_json(v->node->decision.state, node, sizeof node) : "null",
        v->system_state != 0 ? health_json(v->system_state, system, sizeof system) : "null",
        (gint64)processes, (gint64)total->observed, (gint64)total->forwarded,
        (gint64)total->dropped, (gint64)total->lost, (gint64)total->held);
    vigild_capture_sink_write_text(j->sink, line, (gsize)length);
    vigild_capture_sink_flush(j->sink);
}

/* A file id used again for another path must be sent again. */
static void unsend_name(void *context, uint64_t process_id, uint32_t file_id)
{
    struct capture_json *j = context;
    GHashTable *sent = g_hash_table_lookup(j->names_sent, &process_id);
    if (sent != NULL)
        g_hash_table_remove(sent, GUINT_TO_POINTER(file_id));
}

static void forget_process(void *context, uint64_t process_id)
{
    struct capture_json *j = context;
    g_hash_table_remove(j->names_sent, &process_id);
}

static void close_json(void *context)
{
    struct capture_json *j = context;
    vigild_capture_sink_close(j->sink);
    g_hash_table_destroy(j->names_sent);
    g_free(j);
}

gboolean vigild_capture_open_sink(struct vigild_capture *c, const char *path, uint64_t max_bytes,
                                  guint keep_files, GError **error)
{
    struct vigild_capture_sink *old = vigild_capture_sink(c);
    if (old != NULL && path != NULL && strcmp(vigild_capture_sink_path(old), path) == 0) {
        vigild_capture_sink_set_bounds(old, max_bytes, keep_files);
        return TRUE;
    }
    struct vigild_capture_sink *sink = NULL;
    if (path != NULL &&
        (sink = vigild_capture_sink_open(path, max_bytes, keep_files, error)) == NULL)
        return FALSE;
    if (sink == NULL) {
        vigild_capture_set_consumer(c, SINK_NAME, NULL);
        return TRUE;
    }
    struct capture_json *j = g_new0(struct capture_json, 1);
    j->sink = sink;
    j->catalog = c->catalog;
    j->names_sent = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                          (GDestroyNotify)g_hash_table_destroy);
    const struct vigild_capture_consumer consumer = {
        .name = SINK_NAME,
        .context = j,
        .statistics = write_statistics,
        .activities = write_activities,
        .window = write_window,
        .cycle_closed = write_cycle,
        .file_named = unsend_name,
        .forget = forget_process,
        .close = close_json,
    };
    vigild_capture_set_consumer(c, SINK_NAME, &consumer);
    return TRUE;
}

struct vigild_capture_sink *vigild_capture_sink(const struct vigild_capture *c)
{
    const struct capture_json *j = vigild_capture_consumer_context(c, SINK_NAME);
    return j != NULL ? j->sink : NULL;
}

const char *vigild_capture_path(const struct vigild_capture *c)
{
    const struct vigild_capture_sink *sink = vigild_capture_sink(c);
    return sink != NULL ? vigild_capture_sink_path(sink) : NULL;
}
