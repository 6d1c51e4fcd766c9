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
 * Where forwarded cycles and windows go is not capture's business: it tells
 * each of its consumers (capture_consumer.h: the JSON sink, the outbox) the
 * same events, and keeps once what they share.
 *
 * Capture decides on each level's `own` state: what that level's ADPIs and
 * load say, without its children's or its parent's. Capture looks at every
 * level itself; a node state that echoed one process's would forward every
 * process on the node, and a process state that echoed the node's would
 * stretch every node window by the hold.
 */
#include <string.h>

#include "vigil/clock.h"
#include "vigil/ontology.h"
#include "capture.h"
#include "capture_consumer.h"
#include "verdicts.h"

/* Reasons a window keeps: an anomaly that lasts for hours keeps its window
 * open for hours, and its first cycles say why well enough. */
#define REASONS_MAX 64

struct capture_subject {
    struct vigild_capture_subject view; /* what consumers are shown */
    gboolean ended;
    struct vigild_capture_cycle *open; /* the cycle being filled */
    GQueue *held;                      /* closed cycles not decided on yet, oldest first */
    guint post_left;
    struct vigild_capture_counts counts;
};

/* A consumer and the cycles whose statistics it has had: each is told a
 * cycle's once, and a new one (a new sink file) starts again. */
struct consumer_slot {
    struct vigild_capture_consumer consumer;
    GHashTable *statistics_sent;
};

static struct consumer_slot *slot_at(const struct vigild_capture *c, guint i)
{
    return &g_array_index(c->consumers, struct consumer_slot, i);
}

const char *vigild_capture_mode_name(enum vigild_capture_mode mode)
{
    static const char *const names[] = {[VIGILD_CAPTURE_ANOMALIES] = "anomalies",
                                        [VIGILD_CAPTURE_ALL] = "all",
                                        [VIGILD_CAPTURE_NONE] = "none"};
    return (unsigned)mode < G_N_ELEMENTS(names) ? names[mode] : "unknown";
}

static struct vigild_capture_cycle *held_cycle_new(uint64_t cycle, uint64_t start_ns)
{
    struct vigild_capture_cycle *h = g_new0(struct vigild_capture_cycle, 1);
    h->cycle = cycle;
    h->start_ns = start_ns;
    h->activities = g_array_new(FALSE, FALSE, sizeof(struct vigil_activity));
    return h;
}

static void held_cycle_free(struct vigild_capture_cycle *h)
{
    g_array_unref(h->activities); /* a consumer may keep a reference */
    g_free(h);
}

static struct vigild_verdict *verdict_copy(const struct vigild_verdict *v)
{
    struct vigild_verdict *copy = g_memdup2(v, sizeof *v);
    copy->issues = g_memdup2(v->issues, v->n_issues * sizeof *v->issues);
    /* The load's category names point into the cycle's input; they are
     * a handful of words, kept interned. */
    for (size_t i = 0; i < v->decision.n_overloaded; i++)
        copy->decision.overloaded[i] = g_intern_string(v->decision.overloaded[i]);
    return copy;
}

static void verdict_free(struct vigild_verdict *v)
{
    if (v == NULL)
        return;
    g_free((gpointer)v->issues);
    g_free(v);
}

static void reason_clear(gpointer data)
{
    struct vigild_capture_reason *r = data;
    verdict_free(r->process);
    verdict_free(r->node);
}

static void subject_free(struct capture_subject *s)
{
    if (s->open != NULL)
        held_cycle_free(s->open);
    g_queue_free_full(s->held, (GDestroyNotify)held_cycle_free);
    g_hash_table_destroy(s->view.names);
    g_array_free(s->view.reasons, TRUE);
    g_free(s->view.program);
    g_free(s);
}

static struct capture_subject *subject_new(struct vigild_capture *c, uint64_t process_id, pid_t pid,
                                           const char *program, int32_t mpi_rank)
{
    struct capture_subject *s = g_new0(struct capture_subject, 1);
    s->view.process_id = process_id;
    s->view.pid = pid;
    s->view.program = g_strdup(program);
    s->view.mpi_rank = mpi_rank;
    s->view.names = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    s->view.reasons = g_array_new(FALSE, FALSE, sizeof(struct vigild_capture_reason));
    g_array_set_clear_func(s->view.reasons, reason_clear);
    s->open = held_cycle_new(c->cycle, c->cycle_start_ns);
    s->held = g_queue_new();
    g_hash_table_insert(c->subjects, &s->view.process_id, s);
    return s;
}

static void slot_clear(gpointer data)
{
    struct consumer_slot *slot = data;
    if (slot->consumer.close != NULL)
        slot->consumer.close(slot->consumer.context);
    g_hash_table_destroy(slot->statistics_sent);
}

void vigild_capture_init(struct vigild_capture *c, const vigil_metric_catalog *catalog)
{
    memset(c, 0, sizeof *c);
    c->catalog = catalog;
    c->subjects =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, (GDestroyNotify)subject_free);
    c->consumers = g_array_new(FALSE, FALSE, sizeof(struct consumer_slot));
    g_array_set_clear_func(c->consumers, slot_clear);
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

static gint slot_of(const struct vigild_capture *c, const char *name)
{
    for (guint i = 0; i < c->consumers->len; i++)
        if (strcmp(slot_at(c, i)->consumer.name, name) == 0)
            return (gint)i;
    return -1;
}

void vigild_capture_set_consumer(struct vigild_capture *c, const char *name,
                                 const struct vigild_capture_consumer *consumer)
{
    gint i = slot_of(c, name);
    if (consumer == NULL) {
        if (i >= 0)
            g_array_remove_index(c->consumers, (guint)i);
        return;
    }
    struct consumer_slot fresh = {
        .consumer = *consumer,
        .statistics_sent = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
    };
    if (i < 0) {
        g_array_append_val(c->consumers, fresh);
        return;
    }
    struct consumer_slot *slot = slot_at(c, (guint)i);
    slot_clear(slot);
    *slot = fresh;
}

void *vigild_capture_consumer_context(const struct vigild_capture *c, const char *name)
{
    gint i = slot_of(c, name);
    return i >= 0 ? slot_at(c, (guint)i)->consumer.context : NULL;
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
        s->view.mpi_rank = mpi_rank;
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
    g_hash_table_replace(s->view.names, GUINT_TO_POINTER(file_id), g_strdup(path));
    for (guint i = 0; i < c->consumers->len; i++) {
        const struct vigild_capture_consumer *x = &slot_at(c, i)->consumer;
        if (x->file_named != NULL)
            x->file_named(x->context, process_id, file_id);
    }
}

void vigild_capture_end_process(struct vigild_capture *c, uint64_t process_id)
{
    struct capture_subject *s = subject_get(c, process_id);
    if (s != NULL && process_id != 0)
        s->ended = TRUE;
}

/* Deciding ----------------------------------------------------------------------------------- */

/* The node's samples of a forwarded cycle, for a consumer that has not had
 * them: read once, for the first consumer that needs them. */
static void tell_statistics(struct vigild_capture *c, struct consumer_slot *slot,
                            const struct vigild_capture_cycle *h, GArray **samples)
{
    if (c->statistics == NULL || g_hash_table_contains(slot->statistics_sent, &h->cycle))
        return;
    g_hash_table_add(slot->statistics_sent, g_memdup2(&h->cycle, sizeof h->cycle));
    if (*samples == NULL) {
        *samples = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
        c->statistics(c->statistics_user, h->start_ns, h->end_ns, *samples);
    }
    slot->consumer.statistics(slot->consumer.context, h, *samples);
}

static void forward(struct vigild_capture *c, struct capture_subject *s,
                    struct vigild_capture_cycle *h)
{
    struct vigild_capture_subject *w = &s->view;
    if (w->window == 0) {
        w->window = ++c->next_window;
        w->window_keeps_all = c->mode == VIGILD_CAPTURE_ALL;
        w->window_first = h->cycle;
        w->window_start_ns = h->start_ns;
        w->window_activities = 0;
        s->counts.windows++;
        c->total.windows++;
    }
    w->window_last = h->cycle;
    w->window_end_ns = h->end_ns;
    uint64_t n = h->activities->len;
    w->window_activities += n;
    s->counts.forwarded += n;
    c->total.forwarded += n;
    c->held -= n;
    /* Each consumer has the cycle's statistics before its activities. */
    GArray *samples = NULL;
    for (guint i = 0; i < c->consumers->len; i++) {
        struct consumer_slot *slot = slot_at(c, i);
        if (slot->consumer.statistics != NULL)
            tell_statistics(c, slot, h, &samples);
        if (slot->consumer.activities != NULL && w->process_id != 0)
            slot->consumer.activities(slot->consumer.context, w, h);
    }
    if (samples != NULL)
        g_array_free(samples, TRUE);
    held_cycle_free(h);
}

static void drop(struct vigild_capture *c, struct capture_subject *s,
                 struct vigild_capture_cycle *h)
{
    uint64_t n = h->activities->len;
    s->counts.dropped += n;
    c->total.dropped += n;
    c->held -= n;
    held_cycle_free(h);
}

static void close_window(struct vigild_capture *c, struct capture_subject *s)
{
    if (s->view.window == 0)
        return;
    for (guint i = 0; i < c->consumers->len; i++) {
        const struct vigild_capture_consumer *x = &slot_at(c, i)->consumer;
        if (x->window != NULL)
            x->window(x->context, &s->view, c->mode);
    }
    s->view.window = 0;
    s->post_left = 0;
    g_array_set_size(s->view.reasons, 0);
    s->view.reasons_left_out = 0;
}

static gboolean is_evidence(const struct vigild_verdict *v)
{
    return v != NULL && vigil_health_is_abnormal(v->decision.own) && !v->decision.own_held;
}

static gboolean is_abnormal(const struct vigild_verdict *v)
{
    return v != NULL && vigil_health_is_abnormal(v->decision.own);
}

/* Why abnormal cycle `v` is in the window: the levels abnormal in it. */
static void note_reason(struct capture_subject *s, const struct vigild_cycle_verdicts *v,
                        const struct vigild_verdict *own)
{
    if (s->view.reasons->len >= REASONS_MAX) {
        s->view.reasons_left_out++;
        return;
    }
    struct vigild_capture_reason r = {
        .cycle = v->cycle,
        .process = is_abnormal(own) ? verdict_copy(own) : NULL,
        .node = is_abnormal(v->node) ? verdict_copy(v->node) : NULL,
        .system_state = v->system_state,
    };
    g_array_append_val(s->view.reasons, r);
}

static void decide(struct vigild_capture *c, struct capture_subject *s,
                   const struct vigild_cycle_verdicts *v)
{
    uint64_t process_id = s->view.process_id;
    const struct vigild_verdict *own =
        process_id != 0 && v->process != NULL ? v->process(v->user, process_id) : NULL;
    gboolean system = vigil_health_is_abnormal(v->system_state);
    gboolean abnormal = is_abnormal(own) || is_abnormal(v->node) || system;
    gboolean evidence = is_evidence(own) || is_evidence(v->node) || system;
    struct vigild_capture_cycle *h = s->open;
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
            note_reason(s, v, own);
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
        note_reason(s, v, own);
        forward(c, s, h);
        /* post counts from the last cycle with evidence: a held state's
         * cycles are part of it, so hold and post overlap, not add up. */
        if (evidence)
            s->post_left = c->post;
        else if (s->post_left > 0)
            s->post_left--;
        return;
    }
    if (s->view.window != 0 && s->post_left > 0) {
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

static void forget(struct vigild_capture *c, struct capture_subject *s)
{
    uint64_t process_id = s->view.process_id;
    if (c->finished != NULL)
        c->finished(c->finished_user, process_id, &s->counts);
    for (guint i = 0; i < c->consumers->len; i++) {
        const struct vigild_capture_consumer *x = &slot_at(c, i)->consumer;
        if (x->forget != NULL)
            x->forget(x->context, process_id);
    }
    g_hash_table_remove(c->subjects, &process_id);
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
        if (s->view.process_id != 0) /* the node's stays, for its counts */
            forget(c, s);
    }
    g_ptr_array_free(ended, TRUE);
    c->cycle = v->cycle + 1;
    c->cycle_start_ns = v->end_ns;
    struct vigild_capture_counts total;
    vigild_capture_counts(c, 0, &total);
    for (guint i = 0; i < c->consumers->len; i++) {
        struct consumer_slot *slot = slot_at(c, i);
        /* A cycle older than every held one cannot be forwarded again. */
        GHashTableIter sit;
        gpointer key;
        g_hash_table_iter_init(&sit, slot->statistics_sent);
        while (g_hash_table_iter_next(&sit, &key, NULL))
            if (*(uint64_t *)key + c->pre + 1 < c->cycle)
                g_hash_table_iter_remove(&sit);
        if (slot->consumer.cycle_closed != NULL)
            slot->consumer.cycle_closed(slot->consumer.context, v,
                                        g_hash_table_size(c->subjects) - 1, &total);
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
        const struct vigild_capture_cycle *h = l->data;
        if (h->activities->len > 0) {
            *seq = g_array_index(h->activities, struct vigil_activity, 0).seq;
            return TRUE;
        }
    }
    if (s->open != NULL && s->open->activities->len > 0) {
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
    g_array_free(c->consumers, TRUE);
    c->consumers = NULL;
}
