/* vigil-txd — a batch's DROPS items (wire.h): what a node's vigild
 * dropped of a process's forwarded activities after its ring (its
 * uplink's and spool's bounds), into uplink_drops (warehouse/migrations/0011). A count
 * is cumulative per vigild (its counter): the highest figure is kept, so
 * a batch replayed late or out of order never lowers it; the process's
 * uplink_dropped_activities follows by trigger. */
#include <stdlib.h>

#include "txd.h"

static gint compare_drops(gconstpointer a, gconstpointer b)
{
    const struct vigil_wire_drop *x = *(const struct vigil_wire_drop *const *)a;
    const struct vigil_wire_drop *y = *(const struct vigil_wire_drop *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->counter > y->counter) - (x->counter < y->counter);
}

static gboolean store_drop(PGconn *db, int64_t node_id, const struct vigil_wire_drop *d,
                           GError **error)
{
    /* Only a higher figure is written: an UPDATE that changes nothing
     * would still run the trigger. EXCLUDED's updated_at is its default,
     * now(): Citus takes no now() in DO UPDATE SET (not immutable). */
    static const char sql[] =
        "INSERT INTO uplink_drops AS d (node_id, pid, start_monotonic_ns, counter, activities, "
        "batches) VALUES ($1::bigint, $2::integer, $3::bigint, $4::bigint, $5::bigint, "
        "$6::bigint) "
        "ON CONFLICT (node_id, pid, start_monotonic_ns, counter) DO UPDATE SET "
        "activities = greatest(d.activities, EXCLUDED.activities), "
        "batches = greatest(d.batches, EXCLUDED.batches), updated_at = EXCLUDED.updated_at "
        "WHERE EXCLUDED.activities > d.activities OR EXCLUDED.batches > d.batches";
    char node[24], pid[16], start[24], counter[24], activities[24], batches[24];
    g_snprintf(node, sizeof node, "%" G_GINT64_FORMAT, node_id);
    g_snprintf(pid, sizeof pid, "%d", (int)d->pid);
    /* bigint: the wire's u64 figures are far below 2^63 (ns of uptime,
     * sequences, counts). */
    g_snprintf(start, sizeof start, "%" G_GINT64_FORMAT, (gint64)d->start_ns);
    g_snprintf(counter, sizeof counter, "%" G_GINT64_FORMAT, (gint64)d->counter);
    g_snprintf(activities, sizeof activities, "%" G_GINT64_FORMAT, (gint64)d->activities);
    g_snprintf(batches, sizeof batches, "%" G_GINT64_FORMAT, (gint64)d->batches);
    const char *values[] = {node, pid, start, counter, activities, batches};
    return txd_exec_params(db, sql, 6, values, error);
}

gboolean txd_store_drops(PGconn *db, int64_t node_id, const struct vigil_wire_message *batch,
                         uint64_t *rows, GError **error)
{
    /* In key order, so that two servers writing one node's counts never
     * wait for each other's row locks in a circle. */
    GPtrArray *drops = TXD_BATCH_ITEMS(batch, VIGIL_WIRE_DROPS, drops, compare_drops);
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < drops->len; i++) {
        ok = store_drop(db, node_id, g_ptr_array_index(drops, i), error);
        *rows += ok ? 1 : 0;
    }
    g_ptr_array_unref(drops);
    return ok;
}
