/* vigild — the outbox: what each cycle sends to the warehouse.
 *
 * Through a cycle, capture hands it the activities it forwards (with their
 * files' names, read at once: the process may be forgotten before the
 * cycle's end), the forwarded cycles' node samples and the windows that
 * close; the roll-ups come from the statistics multiplexer. At the cycle's
 * end it adds the reasoners' states and issues, the processes that
 * registered or ended and the reports that came, and builds the batch.
 *
 * vigil-txd refuses a batch that names a process, a metric or a file it
 * does not describe, so every batch describes what it names, whatever
 * earlier batches carried: a batch may be replayed from the spool days
 * later, or arrive after a later one. A cycle whose batch would pass
 * BATCH_BYTES_SOFT_MAX goes in several, each with its own sequence and its
 * own NODE, cut between items.
 *
 * An item the wire cannot carry (an issue whose value is not finite, a
 * roll-up out of order) is left out, logged and counted, and the batch goes
 * without it: one bad item must not keep the rest of the cycle from the
 * warehouse. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "vigil/health.h"
#include "vigil/run_key.h"
#include "vigil/wire.h"
#include "capture_consumer.h"
#include "jobs.h"
#include "outbox.h"
#include "processes.h"
#include "reasoning.h"
#include "rollup.h"
#include "tick_samples.h"
#include "uplink.h"
#include "uplink_drops.h"
#include "verdicts.h"
#include "vigild_error.h"

/* A batch is cut once it would pass this; the wire's own limit is 64 MiB.
 * A smaller batch is stored by vigil-txd in a shorter transaction and is
 * less to send again when an acknowledgement is lost. */
#define BATCH_BYTES_SOFT_MAX (16u << 20)
/* What each message and item costs on the wire, about: enough to cut
 * batches near the soft limit, never near the hard one. */
#define MESSAGE_WIRE_BYTES   (VIGIL_WIRE_HEADER_BYTES + 8 + 4) /* header, process id, length */
#define ACTIVITY_WIRE_BYTES  80
#define NAME_WIRE_BYTES      6 /* and the path */
#define SAMPLE_WIRE_BYTES    24
#define METRIC_WIRE_BYTES    16 /* and its strings */
#define PROCESS_WIRE_BYTES   48 /* and its strings */
#define ROLLUP_WIRE_BYTES    64
#define WINDOW_WIRE_BYTES    52 /* and its reasons */
#define SUMMARY_WIRE_BYTES   12 /* and the report */
#define ANOMALY_WIRE_BYTES   50 /* and its strings */
#define STATE_WIRE_BYTES     32
#define JOB_WIRE_BYTES       24 /* and its strings */
#define DROP_WIRE_BYTES      40
#define UNWATCHED_WIRE_BYTES 72
#define STRING_WIRE_BYTES    2 /* and the bytes */
/* An ended process is still described this many cycles after its end:
 * capture decides its last cycle at the next cycle's end, and its report
 * may be read after its end was seen. */
#define ENDED_KEPT_CYCLES 3
/* A line of a window's reasons at most: a window keeps 64 lines (capture's
 * REASONS_MAX), well under the wire's 1 MiB for the text. */
#define REASON_LINE_MAX_BYTES 4096
#define LOG_FIRST             10
#define LOG_EVERY             1000

/* Bits of a state's overloaded_mask, by the node's load categories
 * (reasoning.c's node_load); any other category sets the last bit. */
static const char *const overload_categories[] = {"cpu", "memory", "io"};
#define OVERLOAD_OTHER_BIT 31u

/* What the warehouse is told of a process; kept from its registration to a
 * few cycles after its end. */
struct outbox_process {
    struct vigil_wire_process item; /* its strings owned; argv NULL-terminated */
    gboolean ended;
    uint64_t ended_ns;    /* the daemon's record's, to find it in the ended list */
    uint64_t ended_cycle; /* the first cycle closed after it ended */
    gboolean summarised;
    /* The daemon's record, while one cycle's batch is built; NULL when the
     * daemon no longer keeps it. */
    const struct vigild_process *live;
    /* What the last item sent said: a change is sent again. */
    gboolean sent;
    int32_t sent_rank, sent_exit_code;
    uint64_t sent_end_ns;
    gboolean unnamed_logged; /* a file of it had no name: said once */
    /* It ended while no vigild watched: its end's bounds and the counts,
     * sent with it (unwatched.process_id 0: it did not). */
    struct vigil_wire_unwatched_end unwatched;
};

/* A process's forwarded activities of this cycle and the paths they use. */
struct outbox_subject {
    uint64_t process_id;
    GPtrArray *chunks; /* GArray of struct vigil_activity, one per forwarded cycle */
    GHashTable *paths; /* file id → path bytes (owned) */
};

struct vigild_outbox {
    struct vigild_uplink *uplink;
    uint64_t node_id;
    char *hostname;
    const vigil_metric_catalog *catalog;
    const struct vigild_processes *processes;
    const struct vigild_rollup *rollup;
    uint64_t rollups_taken;       /* the roll-up's windows_closed when last taken */
    uint64_t rollup_taken_end_ns; /* the end of the last window taken */
    GHashTable *known;            /* process id → struct outbox_process * */
    struct vigild_jobs *jobs;     /* whose notices go in the batch; NULL: none */
    /* This cycle's. */
    GHashTable *subjects;   /* process id → struct outbox_subject * */
    GQueue subject_order;   /* of the subjects, as they came */
    GArray *samples;        /* struct vigil_sample */
    GArray *rollups;        /* struct vigil_wire_rollup */
    GArray *windows;        /* struct vigil_wire_window, reasons owned */
    uint64_t last_sequence; /* of the last batch handed to the uplink; 0: none yet */
    uint64_t drops_sent;    /* the uplink's drop counts' generation last put in a batch */
    struct vigild_outbox_stats stats;
};

/* ---- text as the wire takes it ------------------------------------------------ */

/* `text` made valid UTF-8 and cut to `max_bytes` at a character's start. */
static char *wire_text(const char *text, gsize max_bytes)
{
    char *valid = g_utf8_make_valid(text != NULL ? text : "", -1);
    gsize length = strlen(valid);
    if (length > max_bytes) {
        gsize cut = max_bytes;
        while (cut > 0 && (valid[cut] & 0xC0) == 0x80)
            cut--;
        valid[cut] = '\0';
    }
    return valid;
}

static char *wire_string(const char *text)
{
    return wire_text(text, VIGIL_WIRE_STRING_MAX);
}

static gboolean worth_logging(uint64_t count)
{
    return count <= LOG_FIRST || count % LOG_EVERY == 0;
}

static void skip_item(struct vigild_outbox *o, const char *what, const GError *error)
{
    if (worth_logging(++o->stats.items_skipped))
        g_warning("uplink: %s is left out of the batch: %s (%" PRIu64 " items left out so far)",
                  what, error != NULL ? error->message : "", o->stats.items_skipped);
}

/* ---- processes ----------------------------------------------------------------- */

static void outbox_process_free(struct outbox_process *p)
{
    g_free(p->item.run_key);
    g_free(p->item.job);
    g_free(p->item.program);
    g_free(p->item.cwd);
    g_strfreev(p->item.argv);
    g_free(p);
}

/* What may change while the process is known: its rank, its end and its
 * exit status. */
static void refresh_process(struct outbox_process *op, const struct vigild_process *p)
{
    op->item.rank = p->mpi_rank >= -1 ? p->mpi_rank : -1;
    op->item.exit_code = p->exit_code >= -1 && p->exit_code <= 255 ? p->exit_code : -1;
    if (p->state != VIGILD_PROCESS_RUNNING && p->ended_ns != 0)
        op->item.end_ns = MAX(p->ended_ns, op->item.start_ns);
    if (p->end_earliest_ns != 0 && op->item.end_ns != 0) {
        uint32_t energy = p->energy_flags;
        op->unwatched = (struct vigil_wire_unwatched_end){
            .process_id = op->item.process_id,
            .earliest_end_ns = MIN(MAX(p->end_earliest_ns, op->item.start_ns), op->item.end_ns),
            .latest_end_ns = op->item.end_ns,
            .activities = p->activities,
            .dropped = p->dropped,
            .seq_gaps = p->seq_gaps,
            .cpu_s = isfinite(p->cpu_s) && p->cpu_s >= 0 ? p->cpu_s : NAN,
            .energy_j = isfinite(p->energy_j) && p->energy_j >= 0 ? p->energy_j : NAN,
            .flags =
                (energy & VIGIL_LOCAL_ENERGY_ESTIMATED ? VIGIL_WIRE_UNWATCHED_ENERGY_ESTIMATED
                                                       : 0) |
                (energy & VIGIL_LOCAL_ENERGY_UNCERTAIN ? VIGIL_WIRE_UNWATCHED_ENERGY_UNCERTAIN : 0),
        };
    }
}

uint64_t vigild_outbox_process_start_ns(const struct vigild_process *p)
{
    /* The warehouse keys a process by (node, pid, start): the start must
     * not move between batches, so it is the process's own monotonic
     * start, not realtime converted now. One in the future is a process
     * that lied; its registration is the best start there is then. */
    return p->start_monotonic_ns != 0 && p->start_monotonic_ns <= p->registered_ns
               ? p->start_monotonic_ns
               : p->registered_ns;
}

static struct outbox_process *describe_new_process(const struct vigild_outbox *o,
                                                   const struct vigild_process *p)
{
    struct outbox_process *op = g_new0(struct outbox_process, 1);
    struct vigil_wire_process *w = &op->item;
    w->process_id = p->id;
    w->pid = p->pid;
    w->uid = p->uid;
    w->start_ns = vigild_outbox_process_start_ns(p);
    if (p->run_key != NULL && p->run_key[0] != '\0') {
        w->run_key = wire_string(p->run_key);
    } else {
        char key[VIGIL_RUN_KEY_MAX + 1];
        vigil_run_key_fresh(key, o->hostname, p->pid, p->start_realtime_ns);
        w->run_key = g_strdup(key);
    }
    w->job = wire_string(p->job);
    w->program = wire_string(p->program);
    w->cwd = wire_string(p->cwd);
    w->argc = MIN(p->argv->len, VIGIL_WIRE_ARGV_MAX);
    w->argv = g_new0(char *, w->argc + 1);
    for (uint32_t i = 0; i < w->argc; i++)
        w->argv[i] = wire_string(g_ptr_array_index(p->argv, i));
    refresh_process(op, p);
    return op;
}

void vigild_outbox_process_started(struct vigild_outbox *o, const struct vigild_process *p)
{
    if (g_hash_table_contains(o->known, &p->id))
        return;
    struct outbox_process *op = describe_new_process(o, p);
    g_hash_table_insert(o->known, &op->item.process_id, op);
}

void vigild_outbox_process_ended(struct vigild_outbox *o, const struct vigild_process *p)
{
    struct outbox_process *op = g_hash_table_lookup(o->known, &p->id);
    if (op == NULL)
        return;
    refresh_process(op, p);
    op->ended = TRUE;
    op->ended_ns = p->ended_ns;
}

/* The daemon's own record of an ended process, newest first in its list:
 * only recently ended processes are looked for. */
static const struct vigild_process *find_ended(const struct vigild_outbox *o,
                                               const struct outbox_process *op)
{
    for (GList *l = o->processes->ended->tail; l != NULL; l = l->prev) {
        const struct vigild_process *p = l->data;
        if (p->id == op->item.process_id)
            return p;
        if (p->ended_ns < op->ended_ns)
            break;
    }
    return NULL;
}

/* Reads again what may have changed in each process known, before
 * anything is described. */
static void refresh_known(struct vigild_outbox *o)
{
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, o->known);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct outbox_process *op = value;
        op->live =
            op->ended ? find_ended(o, op) : vigild_processes_get(o->processes, op->item.process_id);
        if (op->live != NULL)
            refresh_process(op, op->live);
    }
}

/* ---- what capture and the roll-ups hand in ---------------------------------------- */

static void subject_free(struct outbox_subject *s)
{
    g_ptr_array_free(s->chunks, TRUE);
    g_hash_table_destroy(s->paths);
    g_free(s);
}

static void activities_free(gpointer array)
{
    g_array_unref(array); /* capture's may still hold it */
}

void vigild_outbox_activities(struct vigild_outbox *o, uint64_t process_id, GArray *activities,
                              GHashTable *names)
{
    struct outbox_subject *s = g_hash_table_lookup(o->subjects, &process_id);
    if (s == NULL) {
        s = g_new0(struct outbox_subject, 1);
        s->process_id = process_id;
        s->chunks = g_ptr_array_new_with_free_func(activities_free);
        s->paths = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        g_hash_table_insert(o->subjects, &s->process_id, s);
        g_queue_push_tail(&o->subject_order, s);
    }
    g_ptr_array_add(s->chunks, activities);
    uint32_t last_id = VIGIL_FILE_NONE;
    for (guint i = 0; i < activities->len; i++) {
        uint32_t id = g_array_index(activities, struct vigil_activity, i).file_id;
        if (id == VIGIL_FILE_NONE || id == last_id)
            continue;
        last_id = id;
        if (g_hash_table_contains(s->paths, GUINT_TO_POINTER(id)))
            continue;
        const char *path = g_hash_table_lookup(names, GUINT_TO_POINTER(id));
        if (path != NULL)
            g_hash_table_insert(s->paths, GUINT_TO_POINTER(id), g_strdup(path));
    }
}

void vigild_outbox_samples(struct vigild_outbox *o, const GArray *samples)
{
    g_array_append_vals(o->samples, samples->data, samples->len);
}

void vigild_outbox_window(struct vigild_outbox *o, const struct vigil_wire_window *window)
{
    struct vigil_wire_window copy = *window;
    copy.reasons = wire_text(window->reasons, VIGIL_WIRE_TEXT_MAX);
    g_array_append_val(o->windows, copy);
}

void vigild_outbox_take_rollups(void *outbox, const struct vigild_tick_samples *samples,
                                const vigil_metric_catalog *catalog)
{
    (void)samples;
    (void)catalog;
    struct vigild_outbox *o = outbox;
    const struct vigild_rollup *r = o->rollup;
    if (r->windows_closed == o->rollups_taken)
        return;
    o->rollups_taken = r->windows_closed;
    /* Every metric's last window is kept; those of metrics not sampled in
     * the window that just closed are older ones, taken before. */
    uint64_t newest_end_ns = o->rollup_taken_end_ns;
    for (uint32_t id = 1; id < r->latest->len; id++) {
        const struct vigild_rollup_window *w = vigild_rollup_latest(r, id);
        if (w == NULL || w->end_ns <= o->rollup_taken_end_ns)
            continue;
        newest_end_ns = MAX(newest_end_ns, w->end_ns);
        /* A window without a value (a counter sampled once has no rate)
         * has count 0 and NaN figures: the wire refuses such a roll-up,
         * since it says nothing. */
        if (w->count == 0 || isnan(w->min) || isnan(w->mean) || isnan(w->max))
            continue;
        struct vigil_wire_rollup item = {
            .metric_id = w->metric_id,
            .flags = w->flags,
            .start_ns = w->start_ns,
            .end_ns = w->end_ns,
            .count = w->count,
            .min = w->min,
            .mean = w->mean,
            .max = w->max,
            .delta = w->delta,
        };
        g_array_append_val(o->rollups, item);
    }
    o->rollup_taken_end_ns = newest_end_ns;
}

/* ---- a window's reasons ----------------------------------------------------------- */

static void append_verdict(GString *s, const char *level, const struct vigild_verdict *v)
{
    g_string_append_printf(s, " %s %s", level, vigil_health_name(v->decision.own));
    const char *separator = " (";
    for (guint i = 0; i < v->n_issues; i++) {
        const struct vigild_issue *x = &v->issues[i];
        if (!vigil_health_is_abnormal(x->issue.health))
            continue;
        g_string_append_printf(s, "%s%s: %s", separator, x->plugin, x->issue.message);
        separator = "; ";
    }
    if (v->decision.n_overloaded > 0) {
        g_string_append_printf(s, "%soverloaded:", separator);
        for (size_t i = 0; i < v->decision.n_overloaded; i++)
            g_string_append_printf(s, " %s", v->decision.overloaded[i]);
        separator = "; ";
    }
    if (separator[0] == ';')
        g_string_append_c(s, ')');
    g_string_append_c(s, ';');
}

/* One line of a window's reasons: the levels abnormal in its cycle. */
static char *reason_line(const struct vigild_capture_reason *r)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "cycle %" PRIu64 ":", r->cycle);
    if (r->process != NULL)
        append_verdict(s, "process", r->process);
    if (r->node != NULL)
        append_verdict(s, "node", r->node);
    if (vigil_health_is_abnormal(r->system_state))
        g_string_append_printf(s, " system %s;", vigil_health_name(r->system_state));
    if (s->str[s->len - 1] == ';')
        g_string_truncate(s, s->len - 1);
    char *line = wire_text(s->str, REASON_LINE_MAX_BYTES);
    g_string_free(s, TRUE);
    return line;
}

/* ---- the outbox as a capture consumer ----------------------------------------------- */

static void take_statistics(void *outbox, const struct vigild_capture_cycle *cycle,
                            const GArray *samples)
{
    (void)cycle;
    vigild_outbox_samples(outbox, samples);
}

static void take_activities(void *outbox, const struct vigild_capture_subject *s,
                            const struct vigild_capture_cycle *cycle)
{
    if (cycle->activities->len > 0)
        vigild_outbox_activities(outbox, s->process_id, g_array_ref(cycle->activities), s->names);
}

/* The window as the warehouse keeps it: its reasons one cycle a line. */
static void take_window(void *outbox, const struct vigild_capture_subject *s,
                        enum vigild_capture_mode mode)
{
    (void)mode;
    GString *reasons = g_string_new(NULL);
    /* The first line says why the window was kept (the run's report card
     * prints it); under mode = all no cycle needs to be abnormal. */
    if (s->window_keeps_all)
        g_string_append(reasons, "[capture] mode = all keeps every cycle");
    for (guint i = 0; i < s->reasons->len; i++) {
        char *line = reason_line(&g_array_index(s->reasons, struct vigild_capture_reason, i));
        g_string_append_printf(reasons, "%s%s", reasons->len > 0 ? "\n" : "", line);
        g_free(line);
    }
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
    vigild_outbox_window(outbox, &w);
    g_string_free(reasons, TRUE);
}

void vigild_outbox_consumer(struct vigild_outbox *o, struct vigild_capture_consumer *out)
{
    *out = (struct vigild_capture_consumer){
        .name = "outbox",
        .context = o,
        .statistics = take_statistics,
        .activities = take_activities,
        .window = take_window,
    };
}

/* ---- building batches --------------------------------------------------------------- */

/* The batch being built and what it describes. */
struct batch {
    struct vigild_outbox *o;
    const struct vigil_wire_node *node;
    uint64_t sequence;
    vigil_wire_writer *batch;
    size_t bytes;
    gboolean has_items; /* beyond its NODE */
    /* The open message of each type; ACTIVITIES and NAMES are `process_id`'s. */
    vigil_wire_writer *open[VIGIL_WIRE_TYPE_COUNT + 1];
    uint64_t process_id;
    GHashTable *processes; /* process ids described (uint64_t keys, not owned) */
    GHashTable *metrics;   /* metric ids described */
    GHashTable *files;     /* file ids of `process_id` described */
};

/* Adds a finished message to the batch; only a bug can make it fail, since
 * every item was checked when it was added. */
static void add_message(struct batch *b, vigil_wire_writer *message, const char *what)
{
    GError *error = NULL;
    if (!vigil_wire_add_writer(b->batch, message, &error)) {
        g_critical("uplink: the %s message of batch %" PRIu64 " could not be added: %s", what,
                   b->sequence, error->message);
        g_error_free(error);
    }
}

static void close_message(struct batch *b, enum vigil_wire_type type)
{
    vigil_wire_writer *w = b->open[type];
    if (w == NULL)
        return;
    b->open[type] = NULL;
    add_message(b, w, vigil_wire_type_name(type));
}

static void batch_begin(struct batch *b)
{
    struct vigild_outbox *o = b->o;
    b->sequence = vigild_uplink_next_sequence(o->uplink);
    b->batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, o->node_id, b->sequence, 0);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NODE, o->node_id, b->sequence, 0);
    GError *error = NULL;
    if (!vigil_wire_add_node(w, b->node, &error)) {
        /* Only a bug: every field is the daemon's own. */
        g_critical("uplink: the node item is refused: %s", error->message);
        g_error_free(error);
    }
    add_message(b, w, "node");
    b->bytes = MESSAGE_WIRE_BYTES * 2 + 40 + strlen(b->node->hostname);
    b->has_items = FALSE;
    b->process_id = 0;
    g_hash_table_remove_all(b->processes);
    g_hash_table_remove_all(b->metrics);
    g_hash_table_remove_all(b->files);
}

static void batch_end(struct batch *b)
{
    for (unsigned type = 1; type <= VIGIL_WIRE_TYPE_COUNT; type++)
        close_message(b, type);
    GBytes *bytes = vigil_wire_writer_finish(b->batch);
    b->batch = NULL;
    if (bytes == NULL)
        return;
    b->o->stats.batches++;
    b->o->stats.bytes += g_bytes_get_size(bytes);
    /* Whether it is durable is the uplink's to say, later too: the daemon
     * frees the rings only below vigild_uplink_durable_below. */
    vigild_uplink_send(b->o->uplink, b->sequence, bytes);
    b->o->last_sequence = b->sequence;
    g_bytes_unref(bytes);
}

/* Room for `bytes` more: a batch that would pass the soft limit is sent
 * and the next one begun (which describes nothing yet). */
static void make_room(struct batch *b, size_t bytes)
{
    if (b->has_items && b->bytes + bytes > BATCH_BYTES_SOFT_MAX) {
        batch_end(b);
        batch_begin(b);
    }
    b->bytes += bytes;
    b->has_items = TRUE;
}

static vigil_wire_writer *writer(struct batch *b, enum vigil_wire_type type, uint64_t process_id)
{
    if (b->open[type] == NULL) {
        b->open[type] = vigil_wire_writer_new(type, b->o->node_id, b->sequence, process_id);
        b->bytes += MESSAGE_WIRE_BYTES;
    }
    return b->open[type];
}

static size_t process_bytes(const struct outbox_process *op)
{
    const struct vigil_wire_process *w = &op->item;
    size_t bytes = PROCESS_WIRE_BYTES + 4 * STRING_WIRE_BYTES + strlen(w->run_key) +
                   strlen(w->job) + strlen(w->program) + strlen(w->cwd) + 4;
    for (uint32_t i = 0; i < w->argc; i++)
        bytes += STRING_WIRE_BYTES + strlen(w->argv[i]);
    return bytes + (op->unwatched.process_id != 0 ? UNWATCHED_WIRE_BYTES : 0);
}

static void add_process_item(struct batch *b, struct outbox_process *op)
{
    GError *error = NULL;
    if (!vigil_wire_add_process(writer(b, VIGIL_WIRE_PROCESSES, 0), &op->item, &error)) {
        /* Every field was made valid when it was copied: only a bug. */
        g_critical("uplink: process %" PRIu64 " is refused: %s", op->item.process_id,
                   error->message);
        g_error_free(error);
        return;
    }
    g_hash_table_add(b->processes, &op->item.process_id);
    /* Its end's bounds go with every description of it: each batch stands
     * on its own. */
    if (op->unwatched.process_id != 0 &&
        !vigil_wire_add_unwatched_end(writer(b, VIGIL_WIRE_UNWATCHED_ENDS, 0), &op->unwatched,
                                      &error)) {
        skip_item(b->o, "an unwatched end", error);
        g_clear_error(&error);
    }
    op->sent = TRUE;
    op->sent_rank = op->item.rank;
    op->sent_exit_code = op->item.exit_code;
    op->sent_end_ns = op->item.end_ns;
}

/* Makes room for an item of `bytes` that names `process_id` (0: the node),
 * and describes the process in the batch if it is not yet. NULL when the
 * process is not known: the item cannot go. */
static gboolean room_for_process_item(struct batch *b, uint64_t process_id, size_t bytes)
{
    if (process_id == 0) {
        make_room(b, bytes);
        return TRUE;
    }
    struct outbox_process *op = g_hash_table_lookup(b->o->known, &process_id);
    if (op == NULL)
        return FALSE;
    gboolean described = g_hash_table_contains(b->processes, &process_id);
    make_room(b, bytes + (described ? 0 : process_bytes(op)));
    /* A new batch describes nothing, whatever the old one did. */
    if (!g_hash_table_contains(b->processes, &process_id))
        add_process_item(b, op);
    return TRUE;
}

static void unknown_process(struct vigild_outbox *o, const char *what, uint64_t process_id)
{
    GError *error = g_error_new(VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                                "process %" PRIu64 " is no longer known", process_id);
    skip_item(o, what, error);
    g_error_free(error);
}

static size_t metric_bytes(const struct vigil_metric_desc *m)
{
    return METRIC_WIRE_BYTES + 3 * STRING_WIRE_BYTES + strlen(m->name) + strlen(m->unit) +
           strlen(m->source);
}

/* As room_for_process_item, for an item that names metric `id`. */
static gboolean room_for_metric_item(struct batch *b, uint32_t id, size_t bytes)
{
    const struct vigil_metric_desc *m = vigil_metric_get(b->o->catalog, id);
    if (m == NULL)
        return FALSE;
    gboolean described = g_hash_table_contains(b->metrics, GUINT_TO_POINTER(id));
    make_room(b, bytes + (described ? 0 : metric_bytes(m)));
    if (!g_hash_table_contains(b->metrics, GUINT_TO_POINTER(id))) {
        GError *error = NULL;
        if (!vigil_wire_add_metric(writer(b, VIGIL_WIRE_METRICS, 0), m, &error)) {
            skip_item(b->o, "a metric's description", error);
            g_error_free(error);
            return FALSE;
        }
        g_hash_table_add(b->metrics, GUINT_TO_POINTER(id));
    }
    return TRUE;
}

/* ---- each part of the cycle ------------------------------------------------------------ */

static uint32_t overloaded_mask(const struct vigild_verdict *v)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < v->decision.n_overloaded; i++) {
        unsigned bit = OVERLOAD_OTHER_BIT;
        for (unsigned k = 0; k < G_N_ELEMENTS(overload_categories); k++)
            if (strcmp(v->decision.overloaded[i], overload_categories[k]) == 0)
                bit = k;
        mask |= 1u << bit;
    }
    return mask;
}

/* What a parent counts (upward_raw): this cycle's own evidence and the
 * children's, without the parent's part, so that the system reasoner in
 * vigil-txd does not count its own state back, nor a hold twice. */
static void add_state(struct batch *b, uint64_t cycle, const struct vigild_verdict *v)
{
    if (!room_for_process_item(b, v->process_id, STATE_WIRE_BYTES)) {
        unknown_process(b->o, "a reasoner state", v->process_id);
        return;
    }
    struct vigil_wire_state s = {
        .cycle = cycle,
        .process_id = v->process_id,
        .level = (uint8_t)v->level,
        .health = (uint8_t)v->decision.upward_raw,
        .overloaded_mask = overloaded_mask(v),
        .bad_issues = v->decision.bad,
        .good_issues = v->decision.good,
        .other_issues = v->decision.other,
    };
    GError *error = NULL;
    if (!vigil_wire_add_state(writer(b, VIGIL_WIRE_STATES, 0), &s, &error)) {
        skip_item(b->o, "a reasoner state", error);
        g_error_free(error);
    }
}

static void add_anomalies(struct batch *b, uint64_t cycle, const struct vigild_verdict *v)
{
    for (guint i = 0; i < v->n_issues; i++) {
        const struct vigild_issue *x = &v->issues[i];
        char *metric = wire_string(x->issue.metric);
        char *message = wire_string(x->issue.message);
        struct vigil_wire_anomaly a = {
            .cycle = cycle,
            .process_id = v->process_id,
            .level = (uint8_t)v->level,
            .health = (uint8_t)x->issue.health,
            .value = x->issue.value,
            /* An ADPI leaves an open end NaN; the wire says it with an
             * infinity. */
            .expected_min = isnan(x->issue.expected_min) ? -INFINITY : x->issue.expected_min,
            .expected_max = isnan(x->issue.expected_max) ? INFINITY : x->issue.expected_max,
            .plugin = (char *)x->plugin,
            .metric = metric,
            .message = message,
        };
        size_t bytes = ANOMALY_WIRE_BYTES + strlen(x->plugin) + strlen(metric) + strlen(message);
        GError *error = NULL;
        if (!room_for_process_item(b, v->process_id, bytes))
            unknown_process(b->o, "an anomaly", v->process_id);
        else if (!vigil_wire_add_anomaly(writer(b, VIGIL_WIRE_ANOMALIES, 0), &a, &error))
            skip_item(b->o, "an anomaly", error);
        g_clear_error(&error);
        g_free(metric);
        g_free(message);
    }
}

/* The node's verdict every cycle, each process's when it is not OK; every
 * issue of every level. */
static void add_verdicts(struct batch *b, const struct vigild_cycle_verdicts *v,
                         const struct vigild_reasoning *reasoning)
{
    if (v->node != NULL) {
        add_state(b, v->cycle, v->node);
        add_anomalies(b, v->cycle, v->node);
    }
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, reasoning->processes);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        const struct vigild_reasoner *x = value;
        if (!x->decided)
            continue;
        if (x->verdict.decision.upward_raw != VIGIL_HEALTH_OK)
            add_state(b, v->cycle, &x->verdict);
        add_anomalies(b, v->cycle, &x->verdict);
    }
}

static void add_windows(struct batch *b)
{
    struct vigild_outbox *o = b->o;
    for (guint i = 0; i < o->windows->len; i++) {
        const struct vigil_wire_window *w = &g_array_index(o->windows, struct vigil_wire_window, i);
        GError *error = NULL;
        if (!room_for_process_item(b, w->process_id, WINDOW_WIRE_BYTES + strlen(w->reasons)))
            unknown_process(o, "a captured window", w->process_id);
        else if (!vigil_wire_add_window(writer(b, VIGIL_WIRE_WINDOWS, 0), w, &error))
            skip_item(o, "a captured window", error);
        g_clear_error(&error);
    }
}

/* A cycle's items of one metric's kind, `list` of the outbox: each whose
 * metric the batch has room to describe. The same for roll-ups and
 * samples but for these. */
#define ADD_METRIC_ITEMS(function, type, list, wire_bytes, section, add, what)                     \
    static void function(struct batch *b)                                                          \
    {                                                                                              \
        struct vigild_outbox *o = b->o;                                                            \
        for (guint i = 0; i < o->list->len; i++) {                                                 \
            const type *item = &g_array_index(o->list, type, i);                                   \
            GError *error = NULL;                                                                  \
            if (!room_for_metric_item(b, item->metric_id, wire_bytes))                             \
                continue;                                                                          \
            if (!add(writer(b, section, 0), item, &error)) {                                       \
                skip_item(o, what, error);                                                         \
                g_error_free(error);                                                               \
            }                                                                                      \
        }                                                                                          \
    }
ADD_METRIC_ITEMS(add_rollups, struct vigil_wire_rollup, rollups, ROLLUP_WIRE_BYTES,
                 VIGIL_WIRE_ROLLUPS, vigil_wire_add_rollup, "a roll-up")
ADD_METRIC_ITEMS(add_samples, struct vigil_sample, samples, SAMPLE_WIRE_BYTES, VIGIL_WIRE_SAMPLES,
                 vigil_wire_add_sample, "a sample")

/* Each process's report once it has come, and an item for every process
 * that registered, ended or changed since its last one. */
static void add_processes(struct batch *b)
{
    struct vigild_outbox *o = b->o;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, o->known);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct outbox_process *op = value;
        const struct vigild_process *live = op->live;
        if (live != NULL && live->report_json != NULL && !op->summarised) {
            struct vigil_wire_summary s = {.process_id = op->item.process_id,
                                           .report_json = live->report_json};
            GError *error = NULL;
            room_for_process_item(b, op->item.process_id,
                                  SUMMARY_WIRE_BYTES + strlen(live->report_json));
            if (!vigil_wire_add_summary(writer(b, VIGIL_WIRE_SUMMARIES, 0), &s, &error)) {
                skip_item(o, "a process's report", error);
                g_error_free(error);
            }
            op->summarised = TRUE;
        }
        gboolean changed = !op->sent || op->sent_rank != op->item.rank ||
                           op->sent_exit_code != op->item.exit_code ||
                           op->sent_end_ns != op->item.end_ns;
        if (changed && !g_hash_table_contains(b->processes, &op->item.process_id)) {
            make_room(b, process_bytes(op));
            add_process_item(b, op);
        }
    }
}

static void add_job(void *user, const struct vigild_job *job)
{
    struct batch *b = user;
    struct vigil_wire_job item = {
        .begin_ns = job->begin_ns,
        .end_ns = job->end_ns,
        .uid = job->uid,
        .flags = job->from_root ? VIGIL_WIRE_JOB_FROM_ROOT : 0,
        .job_id = job->job_id,
        .step_id = job->step_id != NULL ? job->step_id : "",
        .user = job->user,
        .nodes = job->nodes,
    };
    make_room(b, JOB_WIRE_BYTES + 4 * STRING_WIRE_BYTES + strlen(item.job_id) +
                     strlen(item.step_id) + strlen(item.user) + strlen(item.nodes));
    GError *error = NULL;
    /* jobs.c kept only what the local protocol checked: ASCII and UTF-8. */
    if (!vigil_wire_add_job(writer(b, VIGIL_WIRE_JOBS, 0), &item, &error)) {
        skip_item(b->o, "a job", error);
        g_error_free(error);
    }
}

/* The jobs whose begin or end vigild was told of since the last cycle. */
static void add_jobs(struct batch *b)
{
    vigild_jobs_take_pending(b->o->jobs, add_job, b);
}

/* What the uplink and the spool dropped, every process's cumulative count,
 * whenever the counts moved since they last went in a batch: a drop after
 * the batch that carried a process's activities still reaches the
 * warehouse, and so does one of the batch that carried the counts (it
 * moves them). */
static void add_drops(struct batch *b)
{
    struct vigild_drops *drops = vigild_uplink_drops(b->o->uplink);
    uint64_t generation = vigild_drops_generation(drops);
    if (generation == b->o->drops_sent)
        return;
    GArray *counts = vigild_drops_list(drops);
    for (guint i = 0; i < counts->len; i++) {
        const struct vigild_drop_count *c = &g_array_index(counts, struct vigild_drop_count, i);
        struct vigil_wire_drop item = {
            .pid = c->pid,
            .start_ns = c->start_ns,
            .counter = vigild_drops_counter(drops),
            .activities = c->activities,
            .batches = c->batches,
        };
        make_room(b, DROP_WIRE_BYTES);
        GError *error = NULL;
        if (!vigil_wire_add_drop(writer(b, VIGIL_WIRE_DROPS, 0), &item, &error)) {
            skip_item(b->o, "a process's drop count", error);
            g_error_free(error);
        }
    }
    g_array_free(counts, TRUE);
    b->o->drops_sent = generation;
}

/* Opens the ACTIVITIES and NAMES messages of `process_id`, closing another
 * process's. */
static void begin_process_messages(struct batch *b, uint64_t process_id)
{
    if (b->process_id == process_id && b->open[VIGIL_WIRE_ACTIVITIES] != NULL)
        return;
    close_message(b, VIGIL_WIRE_ACTIVITIES);
    close_message(b, VIGIL_WIRE_NAMES);
    b->process_id = process_id;
    g_hash_table_remove_all(b->files);
    writer(b, VIGIL_WIRE_ACTIVITIES, process_id);
}

static void add_activity(struct batch *b, struct outbox_subject *s, const struct vigil_activity *a)
{
    struct vigild_outbox *o = b->o;
    struct vigil_activity copy = *a;
    uint32_t file = a->file_id;
    gboolean in_batch =
        b->process_id == s->process_id && g_hash_table_contains(b->files, GUINT_TO_POINTER(file));
    const char *path = NULL;
    if (file != VIGIL_FILE_NONE && !in_batch) {
        path = g_hash_table_lookup(s->paths, GUINT_TO_POINTER(file));
        if (path == NULL) {
            /* Its name record was lost (the ring was full when the file
             * was opened): vigil-txd would refuse the whole batch for a
             * file it cannot name, so the activity goes without one. Said
             * once a process; `vigil status` counts them all. */
            o->stats.names_missing++;
            struct outbox_process *op = g_hash_table_lookup(o->known, &s->process_id);
            if (op != NULL && !op->unnamed_logged) {
                op->unnamed_logged = TRUE;
                g_warning("uplink: process %" PRIu64 ": file %u has no name (its name record "
                          "was lost); its activities of files without a name are sent without "
                          "one (counted in names_missing)",
                          s->process_id, file);
            }
            copy.file_id = file = VIGIL_FILE_NONE;
        }
    }
    size_t bytes = ACTIVITY_WIRE_BYTES + (path != NULL ? NAME_WIRE_BYTES + strlen(path) : 0);
    if (!room_for_process_item(b, s->process_id, bytes)) {
        unknown_process(o, "an activity", s->process_id);
        return;
    }
    begin_process_messages(b, s->process_id);
    GError *error = NULL;
    if (file != VIGIL_FILE_NONE && !g_hash_table_contains(b->files, GUINT_TO_POINTER(file))) {
        /* Named in the batch before, which has just been cut: the new one
         * needs the name too. */
        if (path == NULL)
            path = g_hash_table_lookup(s->paths, GUINT_TO_POINTER(file));
        if (path != NULL && vigil_wire_add_name(writer(b, VIGIL_WIRE_NAMES, s->process_id), file,
                                                path, strlen(path), &error)) {
            g_hash_table_add(b->files, GUINT_TO_POINTER(file));
        } else {
            skip_item(o, "a file's name", error);
            g_clear_error(&error);
            copy.file_id = VIGIL_FILE_NONE;
        }
    }
    if (!vigil_wire_add_activity(b->open[VIGIL_WIRE_ACTIVITIES], &copy, &error)) {
        skip_item(o, "an activity", error);
        g_error_free(error);
    }
}

static void add_activities(struct batch *b)
{
    struct vigild_outbox *o = b->o;
    for (GList *l = o->subject_order.head; l != NULL; l = l->next) {
        struct outbox_subject *s = l->data;
        if (!g_hash_table_contains(o->known, &s->process_id)) {
            unknown_process(o, "a cycle's activities", s->process_id);
            continue;
        }
        for (guint c = 0; c < s->chunks->len; c++) {
            const GArray *chunk = g_ptr_array_index(s->chunks, c);
            for (guint i = 0; i < chunk->len; i++)
                add_activity(b, s, &g_array_index(chunk, struct vigil_activity, i));
        }
    }
}

/* Forgets what this cycle gathered, and processes ended long enough ago. */
static void forget_cycle(struct vigild_outbox *o, uint64_t cycle)
{
    g_queue_clear(&o->subject_order);
    g_hash_table_remove_all(o->subjects);
    g_array_set_size(o->samples, 0);
    g_array_set_size(o->rollups, 0);
    for (guint i = 0; i < o->windows->len; i++)
        g_free(g_array_index(o->windows, struct vigil_wire_window, i).reasons);
    g_array_set_size(o->windows, 0);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, o->known);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct outbox_process *op = value;
        op->live = NULL; /* the daemon may free it before the next cycle */
        if (op->ended && op->ended_cycle == 0)
            op->ended_cycle = cycle;
        if (op->ended && op->sent && cycle >= op->ended_cycle + ENDED_KEPT_CYCLES)
            g_hash_table_iter_remove(&it);
    }
}

void vigild_outbox_close_cycle(struct vigild_outbox *o, const struct vigild_cycle_verdicts *v,
                               const struct vigild_reasoning *reasoning, uint32_t cycle_ms)
{
    struct vigil_clock_offset offset;
    vigil_clock_offset_measure(&offset);
    struct vigil_wire_node node = {
        .realtime_offset_ns = offset.realtime_minus_monotonic_ns,
        .cycle = v->cycle,
        .cycle_start_ns = v->start_ns,
        .cycle_end_ns = MAX(v->end_ns, v->start_ns),
        .cycle_ms = MAX(cycle_ms, 1u),
        .hostname = o->hostname,
    };
    struct batch b = {
        .o = o,
        .node = &node,
        .processes = g_hash_table_new(g_int64_hash, g_int64_equal),
        .metrics = g_hash_table_new(g_direct_hash, g_direct_equal),
        .files = g_hash_table_new(g_direct_hash, g_direct_equal),
    };
    refresh_known(o);
    batch_begin(&b);
    /* The small parts first, so that a cycle cut in several batches has
     * them in its first. */
    add_verdicts(&b, v, reasoning);
    add_windows(&b);
    add_rollups(&b);
    add_samples(&b);
    add_processes(&b);
    add_jobs(&b);
    add_drops(&b);
    add_activities(&b);
    batch_end(&b);
    g_hash_table_destroy(b.processes);
    g_hash_table_destroy(b.metrics);
    g_hash_table_destroy(b.files);
    forget_cycle(o, v->cycle);
}

/* ---- the whole ---------------------------------------------------------------------- */

struct vigild_outbox *vigild_outbox_new(struct vigild_uplink *uplink, uint64_t node_id,
                                        const char *hostname, const vigil_metric_catalog *catalog,
                                        const struct vigild_processes *processes,
                                        const struct vigild_rollup *rollup)
{
    struct vigild_outbox *o = g_new0(struct vigild_outbox, 1);
    o->uplink = uplink;
    o->node_id = node_id;
    o->hostname = wire_string(hostname != NULL ? hostname : g_get_host_name());
    if (o->hostname[0] == '\0') {
        g_free(o->hostname);
        o->hostname = g_strdup("localhost"); /* the wire wants a name */
    }
    o->catalog = catalog;
    o->processes = processes;
    o->rollup = rollup;
    o->rollups_taken = rollup->windows_closed;
    o->known = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL,
                                     (GDestroyNotify)outbox_process_free);
    o->subjects =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, (GDestroyNotify)subject_free);
    g_queue_init(&o->subject_order);
    o->samples = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    o->rollups = g_array_new(FALSE, FALSE, sizeof(struct vigil_wire_rollup));
    o->windows = g_array_new(FALSE, FALSE, sizeof(struct vigil_wire_window));
    return o;
}

void vigild_outbox_set_jobs(struct vigild_outbox *o, struct vigild_jobs *jobs)
{
    o->jobs = jobs;
}

uint64_t vigild_outbox_last_sequence(const struct vigild_outbox *o)
{
    return o->last_sequence;
}

void vigild_outbox_stats(const struct vigild_outbox *o, struct vigild_outbox_stats *out)
{
    *out = o->stats;
}

void vigild_outbox_free(struct vigild_outbox *o)
{
    if (o == NULL)
        return;
    forget_cycle(o, 0);
    g_hash_table_destroy(o->known);
    g_hash_table_destroy(o->subjects);
    g_array_free(o->samples, TRUE);
    g_array_free(o->rollups, TRUE);
    g_array_free(o->windows, TRUE);
    g_free(o->hostname);
    g_free(o);
}
