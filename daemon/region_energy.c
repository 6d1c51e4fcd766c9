/* vigild — each process's energy published into its ring's header once a
 * tick, for its code regions (instrument/regions.c reads it at a region's
 * begin and end, without asking vigild anything).
 *
 * A statistics subscriber after the energy sharing (energy_share.c), so
 * that the figure is this tick's. A process that never had a share of the
 * node's energy (no energy metric on the node, or no CPU sample of it yet)
 * gets nothing published: its regions then say that they have no energy,
 * rather than show 0 J. */
#include "daemon.h"
#include "energy_share.h"
#include "processes.h"
#include "region_energy.h"
#include "tick_samples.h"

void vigild_region_energy_publish(void *user, const struct vigild_tick_samples *samples,
                                  const vigil_metric_catalog *catalog)
{
    (void)catalog;
    struct vigild *d = user;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, d->processes.by_id);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const struct vigild_process *p = value;
        if (p->ring == NULL)
            continue;
        const struct vigild_energy_account *a = vigild_energy_share_account(&d->energy, p->id);
        if (a == NULL || !a->shared)
            continue;
        /* VIGIL_RING_ENERGY_* are VIGIL_LOCAL_ENERGY_*'s bits. */
        vigil_ring_publish_energy(p->ring, a->energy_j, samples->t_ns, a->flags);
    }
}
