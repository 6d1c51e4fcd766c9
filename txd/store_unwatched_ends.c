/* vigil-txd — a batch's UNWATCHED_ENDS items (wire.h): processes that ended
 * while no vigild ran. The bound of the end goes into the process's own row
 * with it (store.c); what vigild had counted of the process, since its
 * report never came, into process_unwatched_ends
 * (warehouse/migrations/0012_unwatched_ends.sql). Replaying a batch writes the same
 * values again. */
#include <math.h>

#include "txd.h"

GHashTable *txd_unwatched_ends_of(const struct vigil_wire_message *batch)
{
    GHashTable *ends = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (uint32_t i = 0; i < batch->header.count; i++) {
        const struct vigil_wire_message *m = &batch->inner[i];
        for (uint32_t k = 0; m->header.type == VIGIL_WIRE_UNWATCHED_ENDS && k < m->header.count;
             k++)
            g_hash_table_insert(ends, (gpointer)&m->unwatched_ends[k].process_id,
                                (gpointer)&m->unwatched_ends[k]);
    }
    return ends;
}

static char *figure_text(double value)
{
    return isnan(value) ? NULL : g_strdup_printf("%.17g", value);
}

gboolean txd_store_unwatched_end(PGconn *db, int64_t process_id,
                                 const struct vigil_wire_unwatched_end *e, GError **error)
{
    static const char sql[] =
        "INSERT INTO process_unwatched_ends (process_id, activities, dropped, seq_gaps, cpu_s, "
        "energy_j, energy_estimated, energy_uncertain, ring_read) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (process_id) DO UPDATE SET "
        "activities = EXCLUDED.activities, dropped = EXCLUDED.dropped, "
        "seq_gaps = EXCLUDED.seq_gaps, cpu_s = EXCLUDED.cpu_s, energy_j = EXCLUDED.energy_j, "
        "energy_estimated = EXCLUDED.energy_estimated, "
        "energy_uncertain = EXCLUDED.energy_uncertain, ring_read = EXCLUDED.ring_read";
    char *id = g_strdup_printf("%" G_GINT64_FORMAT, process_id);
    char *activities = g_strdup_printf("%" G_GUINT64_FORMAT, e->activities);
    char *dropped = g_strdup_printf("%" G_GUINT64_FORMAT, e->dropped);
    char *gaps = g_strdup_printf("%" G_GUINT64_FORMAT, e->seq_gaps);
    char *cpu = figure_text(e->cpu_s), *energy = figure_text(e->energy_j);
    const char *values[] = {
        id,
        activities,
        dropped,
        gaps,
        cpu,
        energy,
        e->flags & VIGIL_WIRE_UNWATCHED_ENERGY_ESTIMATED ? "t" : "f",
        e->flags & VIGIL_WIRE_UNWATCHED_ENERGY_UNCERTAIN ? "t" : "f",
        e->flags & VIGIL_WIRE_UNWATCHED_RING_READ ? "t" : "f",
    };
    gboolean ok = txd_exec_params(db, sql, G_N_ELEMENTS(values), values, error);
    g_free(id);
    g_free(activities);
    g_free(dropped);
    g_free(gaps);
    g_free(cpu);
    g_free(energy);
    return ok;
}
