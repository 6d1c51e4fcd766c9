/* vigild — the full-resolution history: the node's last samples of each
 * metric, in a circular buffer per metric, so that a captured window can
 * carry the statistics around an anomaly tick by tick. */
#include <string.h>

#include "vigild.h"

struct history_row {
    guint capacity;
    guint count;
    guint next; /* where the next sample goes */
    struct vigil_sample samples[];
};

void vigild_history_init(struct vigild_history *h, guint length)
{
    h->length = length;
    h->rows = g_ptr_array_new_with_free_func(g_free);
}

static struct history_row *row_new(guint capacity)
{
    struct history_row *row =
        g_malloc0(sizeof *row + (gsize)capacity * sizeof(struct vigil_sample));
    row->capacity = capacity;
    return row;
}

/* The i-th oldest sample. */
static const struct vigil_sample *row_at(const struct history_row *row, guint i)
{
    guint first = (row->next + row->capacity - row->count) % row->capacity;
    return &row->samples[(first + i) % row->capacity];
}

void vigild_history_resize(struct vigild_history *h, guint length)
{
    if (length == h->length)
        return;
    for (guint id = 0; id < h->rows->len; id++) {
        struct history_row *old = g_ptr_array_index(h->rows, id);
        if (old == NULL)
            continue;
        struct history_row *row = NULL;
        if (length > 0) {
            row = row_new(length);
            guint keep = MIN(old->count, length);
            for (guint i = 0; i < keep; i++)
                row->samples[i] = *row_at(old, old->count - keep + i);
            row->count = keep;
            row->next = keep % length;
        }
        g_ptr_array_index(h->rows, id) = row;
        g_free(old);
    }
    h->length = length;
}

void vigild_history_add(void *history, const struct vigild_tick_samples *samples,
                        const vigil_metric_catalog *catalog)
{
    (void)catalog;
    struct vigild_history *h = history;
    if (h->length == 0)
        return;
    for (guint i = 0; i < samples->node->len; i++) {
        const struct vigil_sample *s = &g_array_index(samples->node, struct vigil_sample, i);
        if (s->metric_id >= h->rows->len)
            g_ptr_array_set_size(h->rows, (gint)s->metric_id + 1);
        struct history_row *row = g_ptr_array_index(h->rows, s->metric_id);
        if (row == NULL) {
            row = row_new(h->length);
            g_ptr_array_index(h->rows, s->metric_id) = row;
        }
        row->samples[row->next] = *s;
        row->next = (row->next + 1) % row->capacity;
        if (row->count < row->capacity)
            row->count++;
    }
}

guint vigild_history_get(const struct vigild_history *h, uint32_t metric_id, uint64_t since_ns,
                         GArray *out)
{
    if (metric_id >= h->rows->len || g_ptr_array_index(h->rows, metric_id) == NULL)
        return 0;
    const struct history_row *row = g_ptr_array_index(h->rows, metric_id);
    guint added = 0;
    for (guint i = 0; i < row->count; i++) {
        const struct vigil_sample *s = row_at(row, i);
        if (s->t_ns >= since_ns) {
            g_array_append_vals(out, s, 1);
            added++;
        }
    }
    return added;
}

void vigild_history_clear(struct vigild_history *h)
{
    if (h->rows != NULL)
        g_ptr_array_free(h->rows, TRUE);
    h->rows = NULL;
}
