/* vigil-txd — the coarser roll-up levels (migration 15): building them
 * beside the groups, and keeping them exact when batches come late.
 *
 * Building is vigil_warehouse_build_levels (the aggregation in C, several
 * statements in one transaction), run every [txd] levels_interval_s on a
 * thread of its own with a connection of its own, its answer collected at
 * a later turn: the groups never wait for a pass, however long it takes.
 * An hour of blocks at most a pass; several vigil-txd take turns (the
 * pass's try-lock). Only blocks that ended 120 s ago or more are built.
 * On shutdown the pass is cancelled (between statements, and the one
 * running on the server) and rolls back.
 *
 * A batch whose roll-ups started more than 60 s ago (a spool replayed after
 * an outage, a node catching up) marks the blocks they fall in, at every
 * level, in statistics_level_stale, in the group's own transaction: one
 * statement, only for such a group. The next pass builds those blocks
 * again. Why that is exact: a roll-up not marked started less than 60 s
 * before its group's transaction, so its block ends after that and is
 * built no sooner than 120 s after its end. An ingest transaction lasts
 * far less than the 60 s between the two margins (statement_timeout, 60 s
 * by default, bounds each of its statements), so it committed before the
 * build reads the roll-ups. The margins are reckoned on vigil-txd's clock
 * here and PostgreSQL's there: the two must agree to well within that
 * difference (NTP). */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "store_batch.h"
#include "txd.h"

/* A roll-up that started longer ago than this marks its blocks stale. */
#define LATE_MARGIN_NS G_GINT64_CONSTANT(60000000000)

/* A pass may take long on a large warehouse: it holds no lock the groups
 * wait for, so each statement is given minutes, not the groups'
 * statement_timeout. */
#define LEVELS_STATEMENT_TIMEOUT "10min"

/* How often shutdown asks the server again to cancel a pass that has not
 * ended: a cancel that came between two statements cancelled nothing. */
#define CANCEL_AGAIN_NS 100000000L

struct txd_levels_pass {
    GThread *thread; /* while a pass runs, until joined */
    GCancellable *cancel;
    char *conninfo;
    guint connect_timeout_s;
    PGconn *db; /* the pass's own; only its thread uses it */
    /* pthread's, as store_thread.c's, so that ThreadSanitizer sees them. */
    pthread_mutex_t lock;
    pthread_cond_t ended_cond; /* on CLOCK_MONOTONIC */
    /* Under lock. */
    gboolean ended;
    PGcancel *server_cancel; /* while the thread is connected */
    /* The pass's answer, read once it ended. */
    gboolean ok, busy, caught_up;
    guint64 rows;
    GError *error;
};

void txd_store_set_levels_interval(struct txd_store *s, guint seconds)
{
    s->levels_interval_s = seconds;
}

static void levels_disconnect(struct txd_levels_pass *p)
{
    pthread_mutex_lock(&p->lock);
    PQfreeCancel(p->server_cancel);
    p->server_cancel = NULL;
    pthread_mutex_unlock(&p->lock);
    if (p->db != NULL)
        PQfinish(p->db);
    p->db = NULL;
}

static gboolean levels_connect(struct txd_levels_pass *p, GError **error)
{
    if (p->db != NULL && PQstatus(p->db) == CONNECTION_OK)
        return TRUE;
    levels_disconnect(p);
    p->db = vigil_warehouse_connect_timeout(p->conninfo, p->connect_timeout_s, error);
    if (p->db == NULL)
        return FALSE;
    PGresult *r = PQexec(
        p->db, "SET TIME ZONE 'UTC'; SET statement_timeout = '" LEVELS_STATEMENT_TIMEOUT "'");
    gboolean ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT,
                    "setting up its connection: %s", PQerrorMessage(p->db));
    PQclear(r);
    if (!ok) {
        levels_disconnect(p);
        return FALSE;
    }
    pthread_mutex_lock(&p->lock);
    p->server_cancel = PQgetCancel(p->db);
    pthread_mutex_unlock(&p->lock);
    return TRUE;
}

static gpointer levels_run(gpointer data)
{
    struct txd_levels_pass *p = data;
    gboolean connected = levels_connect(p, &p->error);
    if (!connected)
        g_prefix_error(&p->error, "building the roll-up levels: cannot connect: ");
    p->ok = connected && vigil_warehouse_build_levels(p->db, "1 hour", p->cancel, &p->busy,
                                                      &p->caught_up, &p->rows, &p->error);
    /* A failed pass starts the next one on a new connection. */
    if (!p->ok)
        levels_disconnect(p);
    pthread_mutex_lock(&p->lock);
    p->ended = TRUE;
    pthread_cond_signal(&p->ended_cond);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void txd_store_levels_close(struct txd_store *s)
{
    struct txd_levels_pass *p = s->levels;
    if (p == NULL)
        return;
    if (p->thread != NULL) {
        g_cancellable_cancel(p->cancel);
        pthread_mutex_lock(&p->lock);
        while (!p->ended) {
            /* Not left running on the server after we are gone. */
            if (p->server_cancel != NULL) {
                char why[256];
                PQcancel(p->server_cancel, why, sizeof why);
            }
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_nsec += CANCEL_AGAIN_NS;
            until.tv_sec += until.tv_nsec / 1000000000;
            until.tv_nsec %= 1000000000;
            pthread_cond_timedwait(&p->ended_cond, &p->lock, &until);
        }
        pthread_mutex_unlock(&p->lock);
        g_thread_join(p->thread);
        g_clear_error(&p->error);
    }
    levels_disconnect(p);
    g_object_unref(p->cancel);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->ended_cond);
    g_free(p->conninfo);
    g_free(p);
    s->levels = NULL;
}

/* The pass that ended: its answer, and when the next one goes. */
static void levels_collect(struct txd_store *s, int64_t now_ns)
{
    struct txd_levels_pass *p = s->levels;
    g_thread_join(p->thread);
    p->thread = NULL;
    if (!p->ok) {
        /* The next pass tries again; batches are stored meanwhile. */
        g_warning("%s (tried again in %u s)", p->error->message, s->levels_interval_s);
        g_clear_error(&p->error);
        return;
    }
    /* A backlog of blocks with roll-ups: the next pass goes at the next
     * turn. Hours without any (a new warehouse's days before its first
     * batch) wait the interval: such passes back to back (each a
     * distributed transaction on Citus) left prepared transactions on a
     * restarting worker, and the groups' batches waited over a minute, until
     * Citus recovered them (suite citus; not seen with passes at the
     * interval). */
    if (!p->busy && !p->caught_up && p->rows > 0)
        s->next_levels_ns = now_ns;
    if (p->rows > 0)
        g_debug("built %" G_GUINT64_FORMAT " roll-up level blocks%s", p->rows,
                p->caught_up ? "" : " (more to build)");
}

void txd_store_levels_when_due(struct txd_store *s)
{
    if (s->levels_interval_s == 0)
        return;
    int64_t now_ns = g_get_monotonic_time() * 1000;
    struct txd_levels_pass *p = s->levels;
    if (p != NULL && p->thread != NULL) {
        pthread_mutex_lock(&p->lock);
        gboolean ended = p->ended;
        pthread_mutex_unlock(&p->lock);
        if (ended)
            levels_collect(s, now_ns);
        return;
    }
    if (!txd_store_connected(s) || now_ns < s->next_levels_ns)
        return;
    s->next_levels_ns = now_ns + (int64_t)s->levels_interval_s * G_GINT64_CONSTANT(1000000000);
    if (p == NULL) {
        p = s->levels = g_new0(struct txd_levels_pass, 1);
        p->cancel = g_cancellable_new();
        pthread_mutex_init(&p->lock, NULL);
        pthread_condattr_t monotonic;
        pthread_condattr_init(&monotonic);
        pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
        pthread_cond_init(&p->ended_cond, &monotonic);
        pthread_condattr_destroy(&monotonic);
    }
    g_free(p->conninfo);
    p->conninfo = g_strdup(s->settings.conninfo);
    p->connect_timeout_s = s->settings.connect_timeout_s;
    p->ended = p->ok = p->busy = p->caught_up = FALSE;
    p->rows = 0;
    p->thread = g_thread_new("txd-levels", levels_run, p);
}

struct txd_levels_late {
    GHashTable *seen; /* "node:µs" of each late roll-up window */
    GString *nodes, *times_us;
};

struct txd_levels_late *txd_levels_late_new(void)
{
    struct txd_levels_late *l = g_new0(struct txd_levels_late, 1);
    l->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    l->nodes = g_string_new("{");
    l->times_us = g_string_new("{");
    return l;
}

static void late_free(struct txd_levels_late *l)
{
    g_hash_table_destroy(l->seen);
    g_string_free(l->nodes, TRUE);
    g_string_free(l->times_us, TRUE);
    g_free(l);
}

void txd_levels_late_add(struct txd_levels_late *l, const struct batch_context *b)
{
    int64_t late_before_ns = g_get_real_time() * 1000 - LATE_MARGIN_NS;
    for (uint32_t i = 0; i < b->batch->header.count; i++) {
        const struct vigil_wire_message *m = &b->batch->inner[i];
        if (m->header.type != VIGIL_WIRE_ROLLUPS)
            continue;
        for (uint32_t k = 0; k < m->header.count; k++) {
            int64_t start_ns = realtime(b, m->rollups[k].start_ns);
            if (start_ns >= late_before_ns)
                continue;
            int64_t start_us = start_ns >= 0 ? start_ns / 1000 : -((-start_ns + 999) / 1000);
            char *key =
                g_strdup_printf("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, b->node_id, start_us);
            if (!g_hash_table_add(l->seen, key))
                continue;
            g_string_append_printf(l->nodes, "%s%" G_GINT64_FORMAT, l->nodes->len > 1 ? "," : "",
                                   b->node_id);
            g_string_append_printf(l->times_us, "%s%" G_GINT64_FORMAT,
                                   l->times_us->len > 1 ? "," : "", start_us);
        }
    }
}

gboolean txd_levels_late_store(struct txd_levels_late *l, PGconn *db, GError **error)
{
    if (g_hash_table_size(l->seen) == 0) {
        late_free(l);
        return TRUE;
    }
    static const char sql[] =
        "INSERT INTO statistics_level_stale (node_id, level_s, block_start) "
        "SELECT DISTINCT r.node_id, l.level_s, vigil_level_block_start("
        "timestamptz 'epoch' + r.t_us * interval '1 microsecond', l.level_s, l.block_slots) "
        "FROM unnest($1::bigint[], $2::bigint[]) AS r (node_id, t_us) CROSS JOIN statistics_levels "
        "l "
        "ON CONFLICT DO NOTHING";
    g_string_append_c(l->nodes, '}');
    g_string_append_c(l->times_us, '}');
    const char *values[] = {l->nodes->str, l->times_us->str};
    PGresult *result = PQexecParams(db, sql, 2, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok)
        txd_set_pg_error(error, db, result, sql);
    PQclear(result);
    late_free(l);
    return ok;
}
