/* vigil-txd — a batch's statistics grouped by roll-up window or tick.
 *
 * The warehouse keeps a node's statistics as one row per window (roll-ups)
 * or tick (samples) with every metric's value in arrays (migration 13).
 * vigild sends a cycle's roll-ups one a metric, nearly always all of one
 * window; grouping them here by their times makes that window one row. */
#include <string.h>

#include "txd.h"

static guint key_hash(gconstpointer p)
{
    const uint64_t *k = p;
    return g_int64_hash(&k[0]) ^ (g_int64_hash(&k[1]) * 31u);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, 2 * sizeof(uint64_t)) == 0;
}

GPtrArray *txd_store_groups(const uint64_t (*keys)[2], guint n)
{
    GPtrArray *groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    GArray *last = NULL;
    guint last_item = 0;
    GHashTable *by_key = g_hash_table_new(key_hash, key_equal);
    for (guint i = 0; i < n; i++) {
        /* Consecutive items of one key, the common case, need no look-up. */
        GArray *group = last != NULL && key_equal(keys[i], keys[last_item]) ? last : NULL;
        if (group == NULL)
            group = g_hash_table_lookup(by_key, keys[i]);
        if (group == NULL) {
            group = g_array_new(FALSE, FALSE, sizeof(guint));
            g_ptr_array_add(groups, group);
            g_hash_table_insert(by_key, (gpointer)keys[i], group);
        }
        g_array_append_val(group, i);
        last = group;
        last_item = i;
    }
    g_hash_table_destroy(by_key);
    return groups;
}
