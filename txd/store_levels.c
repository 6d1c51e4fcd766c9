/* vigil-txd — the coarser roll-up levels (migration 15): building them
 * beside the groups, and keeping them exact when batches come late.
 *
 * Building is vigil_build_levels (SQL), sent every [txd] levels_interval_s
 * on a connection of its own and collected at a later turn: the groups
 * never wait for a pass, however long it takes (it aggregates every value
 * again: see docs/scaling.md). An hour of blocks at most a pass; several
 * vigil-txd take turns (the SQL's try-lock). Only blocks that ended 120 s
 * ago or more are built.
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
#include <string.h>

#include "store_batch.h"
#include "txd.h"

/* A roll-up that started longer ago than this marks its blocks stale. */
#define LATE_MARGIN_NS G_GINT64_CONSTANT(60000000000)

/* A pass may take long on a large warehouse: it holds no lock the groups
 * wait for, so it is given minutes, not the groups' statement_timeout. */
#define LEVELS_STATEMENT_TIMEOUT "10min"

void txd_store_set_levels_interval(struct txd_store *s, guint seconds)
{
    s->levels_interval_s = seconds;
}

void txd_store_levels_close(struct txd_store *s)
{
    if (s->levels_db == NULL)
        return;
    if (s->levels_sent) {
        /* Not left running on the server after we are gone. */
        PGcancel *cancel = PQgetCancel(s->levels_db);
        if (cancel != NULL) {
            char why[256];
            PQcancel(cancel, why, sizeof why);
        }
        PQfreeCancel(cancel);
    }
    PQfinish(s->levels_db);
    s->levels_db = NULL;
    s->levels_sent = FALSE;
}

static void levels_failed(struct txd_store *s, const char *what, const char *message)
{
    g_warning("building the roll-up levels: %s, tried again in %u s: %s", what,
              s->levels_interval_s, message);
    txd_store_levels_close(s);
}

static gboolean levels_connect(struct txd_store *s)
{
    if (s->levels_db != NULL && PQstatus(s->levels_db) == CONNECTION_OK)
        return TRUE;
    txd_store_levels_close(s);
    GError *error = NULL;
    s->levels_db = vigil_warehouse_connect_timeout(s->settings.conninfo,
                                                   s->settings.connect_timeout_s, &error);
    if (s->levels_db == NULL) {
        g_warning("building the roll-up levels: cannot connect, tried again in %u s: %s",
                  s->levels_interval_s, error->message);
        g_error_free(error);
        return FALSE;
    }
    PGresult *r =
        PQexec(s->levels_db,
               "SET TIME ZONE 'UTC'; SET statement_timeout = '" LEVELS_STATEMENT_TIMEOUT "'");
    gboolean ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        levels_failed(s, "setting up its connection", PQerrorMessage(s->levels_db));
    PQclear(r);
    return ok;
}

/* The pass sent earlier, if its answer is all here. */
static void levels_collect(struct txd_store *s, int64_t now_ns)
{
    if (!PQconsumeInput(s->levels_db)) {
        levels_failed(s, "reading the answer", PQerrorMessage(s->levels_db));
        return;
    }
    if (PQisBusy(s->levels_db))
        return;
    PGresult *result = PQgetResult(s->levels_db);
    for (PGresult *more; (more = PQgetResult(s->levels_db)) != NULL;)
        PQclear(more);
    s->levels_sent = FALSE;
    gboolean busy = FALSE, caught_up = FALSE;
    guint64 rows = 0;
    GError *error = NULL;
    if (!vigil_warehouse_build_levels_answer(s->levels_db, result, &busy, &caught_up, &rows,
                                             &error)) {
        /* The next pass tries again; batches are stored meanwhile. */
        levels_failed(s, "the pass failed", error->message);
        g_error_free(error);
        return;
    }
    /* A backlog: the next pass goes at the next turn. */
    if (!busy && !caught_up)
        s->next_levels_ns = now_ns;
    if (rows > 0)
        g_debug("built %" G_GUINT64_FORMAT " roll-up level blocks%s", rows,
                caught_up ? "" : " (more to build)");
}

void txd_store_levels_when_due(struct txd_store *s)
{
    if (s->levels_interval_s == 0)
        return;
    int64_t now_ns = g_get_monotonic_time() * 1000;
    if (s->levels_sent) {
        levels_collect(s, now_ns);
        return;
    }
    if (!txd_store_connected(s) || now_ns < s->next_levels_ns)
        return;
    s->next_levels_ns = now_ns + (int64_t)s->levels_interval_s * G_GINT64_CONSTANT(1000000000);
    if (!levels_connect(s))
        return;
    const char *values[] = {"1 hour"};
    if (!PQsendQueryParams(s->levels_db, vigil_warehouse_build_levels_sql, 1, NULL, values, NULL,
                           NULL, 0)) {
        levels_failed(s, "sending the pass", PQerrorMessage(s->levels_db));
        return;
    }
    s->levels_sent = TRUE;
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
