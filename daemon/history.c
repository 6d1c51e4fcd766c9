/* vigild — the full-resolution history: the node's samples of the last
 * `length` ticks, so that a captured window can carry the statistics
 * around an anomaly tick by tick.
 *
 * It is kept tick by tick, one frame per tick in a circular buffer, each
 * frame all the tick's samples side by side: a tick then writes one
 * contiguous block instead of one cache line per metric, which is what the
 * daemon does ten times a second. Looking up a metric scans the frames,
 * which a capture does rarely. */
#include <string.h>

#include "history.h"
#include "tick_samples.h"

void vigild_history_init(struct vigild_history *h, guint length)
{
    h->length = length;
    h->frames = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    h->count = 0;
    h->next = 0;
}

/* The i-th oldest frame. */
static GArray *frame_at(const struct vigild_history *h, guint i)
{
    guint first = (h->next + h->length - h->count) % h->length;
    return g_ptr_array_index(h->frames, (first + i) % h->length);
}

void vigild_history_resize(struct vigild_history *h, guint length)
{
    if (length == h->length)
        return;
    GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    guint keep = MIN(h->count, length);
    for (guint i = 0; i < keep; i++)
        g_ptr_array_add(frames, g_array_ref(frame_at(h, h->count - keep + i)));
    g_ptr_array_free(h->frames, TRUE);
    h->frames = frames;
    h->length = length;
    h->count = keep;
    h->next = length > 0 ? keep % length : 0;
}

void vigild_history_add(void *history, const struct vigild_tick_samples *samples,
                        const vigil_metric_catalog *catalog)
{
    (void)catalog;
    struct vigild_history *h = history;
    if (h->length == 0)
        return;
    /* Every frame is made, sized and touched at once, on the first tick
     * (and after a resize that lengthens the history): made one per tick
     * instead, each new frame was a malloc and page faults in the tick
     * for the first history_s seconds (30 µs of a 300 µs tick). */
    while (h->frames->len < h->length) {
        GArray *frame =
            g_array_sized_new(FALSE, TRUE, sizeof(struct vigil_sample), samples->node->len);
        g_array_set_size(frame, samples->node->len);
        g_array_set_size(frame, 0);
        g_ptr_array_add(h->frames, frame);
    }
    GArray *frame = g_ptr_array_index(h->frames, h->next);
    g_array_set_size(frame, samples->node->len);
    if (samples->node->len > 0)
        memcpy(frame->data, samples->node->data,
               (gsize)samples->node->len * sizeof(struct vigil_sample));
    h->next = (h->next + 1) % h->length;
    if (h->count < h->length)
        h->count++;
}

guint vigild_history_get(const struct vigild_history *h, uint32_t metric_id, uint64_t since_ns,
                         GArray *out)
{
    guint added = 0;
    for (guint i = 0; i < h->count; i++) {
        const GArray *frame = frame_at(h, i);
        for (guint k = 0; k < frame->len; k++) {
            const struct vigil_sample *s = &g_array_index(frame, struct vigil_sample, k);
            if (s->metric_id == metric_id && s->t_ns >= since_ns) {
                g_array_append_vals(out, s, 1);
                added++;
            }
        }
    }
    return added;
}

guint vigild_history_span(const struct vigild_history *h, uint64_t after_ns, uint64_t until_ns,
                          GArray *out)
{
    guint added = 0;
    for (guint i = 0; i < h->count; i++) {
        const GArray *frame = frame_at(h, i);
        if (frame->len == 0)
            continue;
        /* A frame is one tick: its samples share one time. */
        uint64_t t_ns = g_array_index(frame, struct vigil_sample, 0).t_ns;
        if (t_ns <= after_ns || t_ns > until_ns)
            continue;
        g_array_append_vals(out, frame->data, frame->len);
        added += frame->len;
    }
    return added;
}

void vigild_history_clear(struct vigild_history *h)
{
    if (h->frames != NULL)
        g_ptr_array_free(h->frames, TRUE);
    h->frames = NULL;
}
