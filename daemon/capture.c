/* vigild — the capture buffer: anomaly-driven trace capture.
 *
 * It works like an oscilloscope's trigger. Each process's activities are
 * held per cycle; when cycle k is abnormal at any level (the process's own
 * reasoner, the node's, or the system's as received from upstream), cycles
 * k−pre … k are forwarded, and the next `post` cycles after the last cycle
 * abnormal on its own evidence (not merely held) follow as they end. Other
 * cycles are dropped once they are more than `pre` cycles old; only their
 * counts are kept. Forwarded cycles that touch form one window, so windows
 * that overlap are merged and no cycle is forwarded twice.
 *
 * The node is a subject too (process id 0): it has no activities, but its
 * windows say when the node or the system was abnormal, and any forwarded
 * cycle carries the node's statistics at full resolution.
 *
 * Capture decides on each level's `own` state: what that level's ADPIs and
 * load say, without its children's or its parent's. Capture looks at every
 * level itself; a node state that echoed one process's would forward every
 * process on the node, and a process state that echoed the node's would
 * stretch every node window by the hold.
 */
#include <math.h>
#include <string.h>

#include "vigil/clock.h"
#include "vigil/ontology.h"
#include "vigil/wire.h"
#include "capture.h"
#include "capture_sink.h"
#include "vigil/json_members.h"
#include "outbox.h"
#include "verdicts.h"

/* Reasons a window keeps: an anomaly that lasts for hours keeps its window
 * open for hours, and its first cycles say why well enough. */
#define REASONS_MAX 64

struct held_cycle {
    uint64_t cycle;
    uint64_t start_ns, end_ns;
    GArray *activities; /* struct vigil_activity */
};

struct capture_subject {
    uint64_t process_id; /* 0: the node */
    pid_t pid;
    char *program;
    int32_t mpi_rank;
    gboolean ended;
    struct held_cycle *open; /* the cycle being filled */
    GQueue *held;            /* closed cycles not decided on yet, oldest first */
    GHashTable *names;       /* file id → path, its bytes as the ring gave them */
    GHashTable *names_sent;  /* file ids the sink has had */
    /* The window being forwarded; 0 when none is open. */
    uint64_t window;
    gboolean window_keeps_all; /* opened under mode = all, which is its reason */
    uint64_t window_first, window_last, window_activities;
    uint64_t window_start_ns, window_end_ns;
    guint post_left;
    GPtrArray *reasons;        /* JsonNode *, one per abnormal cycle of the window */
    GPtrArray *reason_lines;   /* the same as text, for the outbox; empty without one */
    uint64_t reasons_left_out; /* abnormal cycles past REASONS_MAX */
    struct vigild_capture_counts counts;
};

const char *vigild_capture_mode_name(enum vigild_capture_mode mode)
{
    switch (mode) {
    case VIGILD_CAPTURE_ANOMALIES:
        return "anomalies";
    case VIGILD_CAPTURE_ALL:
        return "all";
    case VIGILD_CAPTURE_NONE:
        return "none";
    }
    return "unknown";
}

static struct held_cycle *held_cycle_new(uint64_t cycle, uint64_t start_ns)
{
    struct held_cycle *h = g_new0(struct held_cycle, 1);
    h->cycle = cycle;
    h->start_ns = start_ns;
    h->activities = g_array_new(FALSE, FALSE, sizeof(struct vigil_activity));
    return h;
}

static void held_cycle_free(struct held_cycle *h)
{
    if (h->activities != NULL) /* NULL: the outbox took them */
        g_array_free(h->activities, TRUE);
    g_free(h);
}

static void subject_free(struct capture_subject *s)
{
    if (s->open != NULL)
        held_cycle_free(s->open);
    g_queue_free_full(s->held, (GDestroyNotify)held_cycle_free);
    g_hash_table_destroy(s->names);
    g_hash_table_destroy(s->names_sent);
    g_ptr_array_free(s->reasons, TRUE);
    g_ptr_array_free(s->reason_lines, TRUE);
    g_free(s->program);
    g_free(s);
}

static struct capture_subject *subject_new(struct vigild_capture *c, uint64_t process_id, pid_t pid,
                                           const char *program, int32_t mpi_rank)
{
    struct capture_subject *s = g_new0(struct capture_subject, 1);
    s->process_id = process_id;
    s->pid = pid;
    s->program = g_strdup(program);
    s->mpi_rank = mpi_rank;
    s->open = held_cycle_new(c->cycle, c->cycle_start_ns);
    s->held = g_queue_new();
    s->names = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    s->names_sent = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->reasons = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
    s->reason_lines = g_ptr_array_new_with_free_func(g_free);
    g_hash_table_insert(c->subjects, &s->process_id, s);
    return s;
}

void vigild_capture_init(struct vigild_capture *c, const vigil_metric_catalog *catalog)
{
    memset(c, 0, sizeof *c);
    c->catalog = catalog;
    c->subjects =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, (GDestroyNotify)subject_free);
    c->statistics_sent = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    c->statistics_uplinked = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    c->cycle = 1;
    c->cycle_start_ns = vigil_clock_monotonic_ns();
    c->mode = VIGILD_CAPTURE_ANOMALIES;
    c->pre = c->post = 1;
    c->max_held = UINT64_MAX;
    subject_new(c, 0, 0, NULL, -1);
}

void vigild_capture_configure(struct vigild_capture *c, enum vigild_capture_mode mode, guint pre,
                              guint post, uint64_t max_held)
{
    c->mode = mode;
    c->pre = pre;
    c->post = post;
    c->max_held = max_held;
}

/* A new file has none of the names the old one had. */
static void forget_names_sent(struct vigild_capture *c)
{
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, c->subjects);
    while (g_hash_table_iter_next(&it, NULL, &value))
        g_hash_table_remove_all(((struct capture_subject *)value)->names_sent);
}

gboolean vigild_capture_open_sink(struct vigild_capture *c, const char *path, uint64_t max_bytes,
                                  guint keep_files, GError **error)
{
    if (c->sink != NULL && path != NULL && strcmp(vigild_capture_sink_path(c->sink), path) == 0) {
        vigild_capture_sink_set_bounds(c->sink, max_bytes, keep_files);
        return TRUE;
    }
    struct vigild_capture_sink *sink = NULL;
    if (path != NULL &&
        (sink = vigild_capture_sink_open(path, max_bytes, keep_files, error)) == NULL)
        return FALSE;
    vigild_capture_sink_close(c->sink);
    c->sink = sink;
    c->sink_rotations = 0;
    g_hash_table_remove_all(c->statistics_sent);
    forget_names_sent(c);
    return TRUE;
}

/* The sink started a new file since names were last sent. */
static void check_sink_file(struct vigild_capture *c)
{
    struct vigild_capture_sink_stats stats;
    vigild_capture_sink_stats(c->sink, &stats);
    if (stats.rotations != c->sink_rotations) {
        c->sink_rotations = stats.rotations;
        forget_names_sent(c);
    }
}

const char *vigild_capture_path(const struct vigild_capture *c)
{
    return c->sink != NULL ? vigild_capture_sink_path(c->sink) : NULL;
}

static struct capture_subject *subject_get(const struct vigild_capture *c, uint64_t process_id)
{
    return g_hash_table_lookup(c->subjects, &process_id);
}

void vigild_capture_add_process(struct vigild_capture *c, uint64_t process_id, pid_t pid,
                                const char *program, int32_t mpi_rank)
{
    if (process_id != 0 && subject_get(c, process_id) == NULL)
        subject_new(c, process_id, pid, program, mpi_rank);
}

void vigild_capture_set_rank(struct vigild_capture *c, uint64_t process_id, int32_t mpi_rank)
{
    struct capture_subject *s = subject_get(c, process_id);
    if (s != NULL)
        s->mpi_rank = mpi_rank;
}

void vigild_capture_activity(struct vigild_capture *c, uint64_t process_id,
                             const struct vigil_activity *activity)
{
    struct capture_subject *s = subject_get(c, process_id);
    if (s == NULL || process_id == 0)
        return;
    s->counts.observed++;
    c->total.observed++;
    if (c->mode == VIGILD_CAPTURE_NONE) {
        s->counts.dropped++;
        c->total.dropped++;
        return;
    }
    if (c->held >= c->max_held) {
        if (c->total.lost++ == 0)
            g_warning("capture: %" G_GUINT64_FORMAT " activities held, [capture] max_held is "
                      "reached; activities are lost until windows are decided (counted as lost)",
                      c->held);
        s->counts.lost++;
        return;
    }
    g_array_append_vals(s->open->activities, activity, 1);
    c->held++;
}

void vigild_capture_name(struct vigild_capture *c, uint64_t process_id, uint32_t file_id,
                         const char *path)
{
    struct capture_subject *s = subject_get(c, process_id);
    if (s == NULL || process_id == 0)
        return;
    /* Kept as bytes: the warehouse keys a file by its path's bytes, and
     * the sink makes them valid UTF-8 when it writes them. */
    g_hash_table_replace(s->names, GUINT_TO_POINTER(file_id), g_strdup(path));
    /* A file id used again for another path must be sent again. */
    g_hash_table_remove(s->names_sent, GUINT_TO_POINTER(file_id));
}

void vigild_capture_end_process(struct vigild_capture *c, uint64_t process_id)
{
    struct capture_subject *s = subject_get(c, process_id);
    if (s != NULL && process_id != 0)
        s->ended = TRUE;
}

/* Writing ------------------------------------------------------------------------------------ */

static void add_subject(JsonBuilder *b, const struct capture_subject *s)
{
    vigil_json_int(b, "process", (int64_t)s->process_id);
    if (s->process_id == 0)
        return;
    vigil_json_int(b, "pid", s->pid);
    vigil_json_string(b, "program", s->program);
    vigil_json_int(b, "rank", s->mpi_rank);
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
 * had: each file names its own, so that one read alone, or one left after
 * older ones were deleted, still names every path. */
static gboolean write_activities_once(struct vigild_capture *c, struct capture_subject *s,
                                      const struct held_cycle *h)
{
    check_sink_file(c);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_string(b, "type", "activities");
    vigil_json_int(b, "window", (int64_t)s->window);
    add_subject(b, s);
    vigil_json_int(b, "cycle", (int64_t)h->cycle);
    vigil_json_int(b, "start_ns", (int64_t)h->start_ns);
    vigil_json_int(b, "end_ns", (int64_t)h->end_ns);
    json_builder_set_member_name(b, "files");
    json_builder_begin_object(b);
    for (guint i = 0; i < h->activities->len; i++) {
        uint32_t id = g_array_index(h->activities, struct vigil_activity, i).file_id;
        const char *path = g_hash_table_lookup(s->names, GUINT_TO_POINTER(id));
        if (path == NULL || g_hash_table_contains(s->names_sent, GUINT_TO_POINTER(id)))
            continue;
        char key[16];
        g_snprintf(key, sizeof key, "%u", id);
        /* Paths are bytes, not text: a Latin-1 name would make the sink's
         * line invalid JSON. Invalid sequences become U+FFFD. */
        char *shown = g_utf8_make_valid(path, -1);
        vigil_json_string(b, key, shown);
        g_free(shown);
        g_hash_table_add(s->names_sent, GUINT_TO_POINTER(id));
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
    gboolean written = vigild_capture_sink_write_or_rotate(c->sink, b);
    g_object_unref(b);
    return written;
}

static void write_activities(struct vigild_capture *c, struct capture_subject *s,
                             const struct held_cycle *h)
{
    /* A second time into the new file the first started: it fits or is
     * dropped, counted, but is never refused again. */
    if (!write_activities_once(c, s, h))
        write_activities_once(c, s, h);
}

/* The node's samples of a forwarded cycle, once per cycle whoever
 * forwards it. */
static void write_statistics(struct vigild_capture *c, uint64_t cycle, uint64_t start_ns,
                             uint64_t end_ns)
{
    if (c->statistics == NULL || g_hash_table_contains(c->statistics_sent, &cycle))
        return;
    g_hash_table_add(c->statistics_sent, g_memdup2(&cycle, sizeof cycle));
    GArray *samples = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    c->statistics(c->statistics_user, start_ns, end_ns, samples);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_string(b, "type", "statistics");
    vigil_json_int(b, "cycle", (int64_t)cycle);
    vigil_json_int(b, "start_ns", (int64_t)start_ns);
    vigil_json_int(b, "end_ns", (int64_t)end_ns);
    json_builder_set_member_name(b, "samples");
    json_builder_begin_array(b);
    for (guint i = 0; i < samples->len; i++) {
        const struct vigil_sample *x = &g_array_index(samples, struct vigil_sample, i);
        const struct vigil_metric_desc *m = vigil_metric_get(c->catalog, x->metric_id);
        json_builder_begin_array(b);
        json_builder_add_string_value(b, m != NULL ? m->name : "?");
        json_builder_add_int_value(b, (int64_t)x->t_ns);
        json_builder_add_double_value(b, x->value);
        json_builder_add_int_value(b, x->flags);
        json_builder_end_array(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    vigild_capture_sink_write(c->sink, b);
    g_object_unref(b);
    g_array_free(samples, TRUE);
}

/* The same samples for the outbox, once per cycle too: the sink's record
 * starts again with a new file, the warehouse's does not. */
static void uplink_statistics(struct vigild_capture *c, uint64_t cycle, uint64_t start_ns,
                              uint64_t end_ns)
{
    if (c->statistics == NULL || g_hash_table_contains(c->statistics_uplinked, &cycle))
        return;
    g_hash_table_add(c->statistics_uplinked, g_memdup2(&cycle, sizeof cycle));
    GArray *samples = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    c->statistics(c->statistics_user, start_ns, end_ns, samples);
    vigild_outbox_samples(c->outbox, samples);
    g_array_free(samples, TRUE);
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
static JsonNode *reason_node(const struct vigild_cycle_verdicts *v,
                             const struct vigild_verdict *process)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_int(b, "cycle", (int64_t)v->cycle);
    json_builder_set_member_name(b, "levels");
    json_builder_begin_array(b);
    if (process != NULL && vigil_health_is_abnormal(process->decision.own))
        add_verdict(b, process);
    if (v->node != NULL && vigil_health_is_abnormal(v->node->decision.own))
        add_verdict(b, v->node);
    if (vigil_health_is_abnormal(v->system_state)) {
        json_builder_begin_object(b);
        vigil_json_string(b, "level", "system");
        vigil_json_string(b, "state", vigil_health_name(v->system_state));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    JsonNode *node = json_builder_get_root(b);
    g_object_unref(b);
    return node;
}

static void write_window(struct vigild_capture *c, struct capture_subject *s)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_string(b, "type", "window");
    vigil_json_int(b, "window", (int64_t)s->window);
    add_subject(b, s);
    vigil_json_int(b, "first_cycle", (int64_t)s->window_first);
    vigil_json_int(b, "last_cycle", (int64_t)s->window_last);
    vigil_json_int(b, "activities", (int64_t)s->window_activities);
    vigil_json_string(b, "mode", vigild_capture_mode_name(c->mode));
    json_builder_set_member_name(b, "reasons");
    json_builder_begin_array(b);
    for (guint i = 0; i < s->reasons->len; i++)
        json_builder_add_value(b, json_node_ref(g_ptr_array_index(s->reasons, i)));
    json_builder_end_array(b);
    vigil_json_int(b, "reasons_left_out", (int64_t)s->reasons_left_out);
    json_builder_end_object(b);
    vigild_capture_sink_write(c->sink, b);
    g_object_unref(b);
}

/* Deciding ----------------------------------------------------------------------------------- */

static void forward(struct vigild_capture *c, struct capture_subject *s, struct held_cycle *h)
{
    if (s->window == 0) {
        s->window = ++c->next_window;
        s->window_keeps_all = c->mode == VIGILD_CAPTURE_ALL;
        s->window_first = h->cycle;
        s->window_start_ns = h->start_ns;
        s->window_activities = 0;
        s->counts.windows++;
        c->total.windows++;
    }
    s->window_last = h->cycle;
    s->window_end_ns = h->end_ns;
    uint64_t n = h->activities->len;
    s->window_activities += n;
    s->counts.forwarded += n;
    c->total.forwarded += n;
    c->held -= n;
    if (c->sink != NULL) {
        write_statistics(c, h->cycle, h->start_ns, h->end_ns);
        if (s->process_id != 0)
            write_activities(c, s, h);
    }
    if (c->outbox != NULL) {
        uplink_statistics(c, h->cycle, h->start_ns, h->end_ns);
        if (s->process_id != 0 && n > 0) {
            vigild_outbox_activities(c->outbox, s->process_id, h->activities, s->names);
            h->activities = NULL;
        }
    }
    held_cycle_free(h);
}

/* The window as the warehouse keeps it: its reasons one cycle a line. */
static void uplink_window(struct vigild_capture *c, const struct capture_subject *s)
{
    GString *reasons = g_string_new(NULL);
    /* The first line says why the window was kept (the run's report card
     * prints it); under mode = all no cycle needs to be abnormal. */
    if (s->window_keeps_all)
        g_string_append(reasons, "[capture] mode = all keeps every cycle");
    for (guint i = 0; i < s->reason_lines->len; i++)
        g_string_append_printf(reasons, "%s%s", reasons->len > 0 ? "\n" : "",
                               (const char *)g_ptr_array_index(s->reason_lines, i));
    if (s->reasons_left_out > 0)
        g_string_append_printf(reasons, "\nand %" G_GUINT64_FORMAT " more abnormal cycles",
                               s->reasons_left_out);
    struct vigil_wire_window w = {
        .process_id = s->process_id,
        .first_cycle = s->window_first,
        .last_cycle = s->window_last,
        .start_ns = s->window_start_ns,
        .end_ns = MAX(s->window_end_ns, s->window_start_ns),
        .activities_forwarded = s->window_activities,
        .reasons = reasons->str,
    };
    vigild_outbox_window(c->outbox, &w);
    g_string_free(reasons, TRUE);
}

static void drop(struct vigild_capture *c, struct capture_subject *s, struct held_cycle *h)
{
    uint64_t n = h->activities->len;
    s->counts.dropped += n;
    c->total.dropped += n;
    c->held -= n;
    held_cycle_free(h);
}

static void close_window(struct vigild_capture *c, struct capture_subject *s)
{
    if (s->window == 0)
        return;
    if (c->sink != NULL)
        write_window(c, s);
    if (c->outbox != NULL)
        uplink_window(c, s);
    s->window = 0;
    s->post_left = 0;
    g_ptr_array_set_size(s->reasons, 0);
    g_ptr_array_set_size(s->reason_lines, 0);
    s->reasons_left_out = 0;
}

static gboolean is_evidence(const struct vigild_verdict *v)
{
    return v != NULL && vigil_health_is_abnormal(v->decision.own) && !v->decision.own_held;
}

static gboolean is_abnormal(const struct vigild_verdict *v)
{
    return v != NULL && vigil_health_is_abnormal(v->decision.own);
}

/* Why abnormal cycle `v` is in the window, for the sink and the outbox. */
static void note_reason(struct vigild_capture *c, struct capture_subject *s,
                        const struct vigild_cycle_verdicts *v, const struct vigild_verdict *own)
{
    if (s->reasons->len < REASONS_MAX) {
        g_ptr_array_add(s->reasons, reason_node(v, own));
        if (c->outbox != NULL)
            g_ptr_array_add(s->reason_lines, vigild_outbox_reason_line(v, own));
    } else {
        s->reasons_left_out++;
    }
}

static void decide(struct vigild_capture *c, struct capture_subject *s,
                   const struct vigild_cycle_verdicts *v)
{
    const struct vigild_verdict *own =
        s->process_id != 0 && v->process != NULL ? v->process(v->user, s->process_id) : NULL;
    gboolean system = vigil_health_is_abnormal(v->system_state);
    gboolean abnormal = is_abnormal(own) || is_abnormal(v->node) || system;
    gboolean evidence = is_evidence(own) || is_evidence(v->node) || system;
    struct held_cycle *h = s->open;
    s->open = NULL;
    h->end_ns = v->end_ns;
    s->counts.cycles++;
    if (abnormal)
        s->counts.abnormal_cycles++;
    /* Cycles still held from before a reload to another mode go the way
     * the new mode sends the current one. */
    if (c->mode == VIGILD_CAPTURE_ALL) {
        while (!g_queue_is_empty(s->held))
            forward(c, s, g_queue_pop_head(s->held));
        if (abnormal)
            note_reason(c, s, v, own);
        forward(c, s, h);
        return;
    }
    if (c->mode == VIGILD_CAPTURE_NONE) {
        close_window(c, s);
        while (!g_queue_is_empty(s->held))
            drop(c, s, g_queue_pop_head(s->held));
        drop(c, s, h);
        return;
    }
    if (abnormal) {
        /* The trigger: the cycles before it that are still held go first. */
        while (!g_queue_is_empty(s->held))
            forward(c, s, g_queue_pop_head(s->held));
        note_reason(c, s, v, own);
        forward(c, s, h);
        /* post counts from the last cycle with evidence: a held state's
         * cycles are part of it, so hold and post overlap, not add up. */
        if (evidence)
            s->post_left = c->post;
        else if (s->post_left > 0)
            s->post_left--;
        return;
    }
    if (s->window != 0 && s->post_left > 0) {
        s->post_left--;
        forward(c, s, h);
        return;
    }
    /* The window stays open while the cycle after it is held: a trigger
     * within `pre` cycles forwards it, and the two windows are one. */
    g_queue_push_tail(s->held, h);
    if (c->pre == 0)
        close_window(c, s);
    while (g_queue_get_length(s->held) > c->pre) {
        drop(c, s, g_queue_pop_head(s->held));
        close_window(c, s);
    }
}

static void finish(struct vigild_capture *c, struct capture_subject *s)
{
    /* Nothing follows a process's last cycle: its window ends there. */
    close_window(c, s);
    while (!g_queue_is_empty(s->held))
        drop(c, s, g_queue_pop_head(s->held));
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
 * JsonBuilder gives (members in this order, no blanks). */
static void write_cycle(struct vigild_capture *c, const struct vigild_cycle_verdicts *v)
{
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
        (gint64)g_hash_table_size(c->subjects) - 1, (gint64)c->total.observed,
        (gint64)c->total.forwarded, (gint64)c->total.dropped, (gint64)c->total.lost,
        (gint64)c->held);
    vigild_capture_sink_write_text(c->sink, line, (gsize)length);
}

void vigild_capture_close_cycle(struct vigild_capture *c, const struct vigild_cycle_verdicts *v)
{
    c->total.cycles++;
    GPtrArray *ended = g_ptr_array_new();
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, c->subjects);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct capture_subject *s = value;
        decide(c, s, v);
        s->open = held_cycle_new(v->cycle + 1, v->end_ns);
        if (s->ended || v->final)
            g_ptr_array_add(ended, s);
    }
    for (guint i = 0; i < ended->len; i++) {
        struct capture_subject *s = g_ptr_array_index(ended, i);
        finish(c, s);
        if (s->process_id == 0)
            continue; /* the node's stays, for its counts */
        if (c->finished != NULL)
            c->finished(c->finished_user, s->process_id, &s->counts);
        g_hash_table_remove(c->subjects, &s->process_id);
    }
    g_ptr_array_free(ended, TRUE);
    c->cycle = v->cycle + 1;
    c->cycle_start_ns = v->end_ns;
    /* Statistics are written once per cycle; a cycle older than every
     * held one cannot be forwarded again. */
    GHashTableIter sit;
    gpointer key;
    g_hash_table_iter_init(&sit, c->statistics_sent);
    while (g_hash_table_iter_next(&sit, &key, NULL))
        if (*(uint64_t *)key + c->pre + 1 < c->cycle)
            g_hash_table_iter_remove(&sit);
    g_hash_table_iter_init(&sit, c->statistics_uplinked);
    while (g_hash_table_iter_next(&sit, &key, NULL))
        if (*(uint64_t *)key + c->pre + 1 < c->cycle)
            g_hash_table_iter_remove(&sit);
    if (c->sink != NULL) {
        write_cycle(c, v);
        vigild_capture_sink_flush(c->sink);
    }
}

gboolean vigild_capture_oldest_held(const struct vigild_capture *c, uint64_t process_id,
                                    uint64_t *seq, uint64_t *held)
{
    const struct capture_subject *s = subject_get(c, process_id);
    if (s == NULL || process_id == 0)
        return FALSE;
    *held = s->counts.observed - s->counts.forwarded - s->counts.dropped - s->counts.lost;
    /* Held cycles are in drain order, so the first activity found is the
     * oldest. */
    for (const GList *l = s->held->head; l != NULL; l = l->next) {
        const struct held_cycle *h = l->data;
        if (h->activities != NULL && h->activities->len > 0) {
            *seq = g_array_index(h->activities, struct vigil_activity, 0).seq;
            return TRUE;
        }
    }
    if (s->open != NULL && s->open->activities != NULL && s->open->activities->len > 0) {
        *seq = g_array_index(s->open->activities, struct vigil_activity, 0).seq;
        return TRUE;
    }
    return FALSE;
}

void vigild_capture_restore(struct vigild_capture *c, uint64_t process_id,
                            const struct vigild_capture_counts *counts)
{
    struct capture_subject *s = subject_get(c, process_id);
    if (s == NULL || process_id == 0)
        return;
    s->counts = *counts;
    s->counts.held = 0;
    c->total.observed += counts->observed;
    c->total.forwarded += counts->forwarded;
    c->total.dropped += counts->dropped;
    c->total.lost += counts->lost;
}

gboolean vigild_capture_counts(const struct vigild_capture *c, uint64_t process_id,
                               struct vigild_capture_counts *out)
{
    if (process_id == 0) {
        *out = c->total;
        out->held = c->held;
        out->abnormal_cycles = subject_get(c, 0)->counts.abnormal_cycles;
        return TRUE;
    }
    const struct capture_subject *s = subject_get(c, process_id);
    if (s == NULL)
        return FALSE;
    *out = s->counts;
    out->held = s->counts.observed - s->counts.forwarded - s->counts.dropped - s->counts.lost;
    return TRUE;
}

void vigild_capture_clear(struct vigild_capture *c)
{
    if (c->subjects == NULL)
        return;
    g_hash_table_destroy(c->subjects);
    c->subjects = NULL;
    g_hash_table_destroy(c->statistics_sent);
    g_hash_table_destroy(c->statistics_uplinked);
    c->outbox = NULL;
    vigild_capture_sink_close(c->sink);
    c->sink = NULL;
}
