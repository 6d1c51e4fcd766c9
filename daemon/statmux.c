/* vigild — the statistics multiplexer: every tick's samples go to each
 * subscriber in the order they subscribed (roll-ups, history, energy
 * shares; the anomaly-detection plugins next). */
#include "vigild.h"

struct subscriber {
    vigild_samples_fn fn;
    void *user;
};

void vigild_statmux_init(struct vigild_statmux *m)
{
    m->subscribers = g_array_new(FALSE, FALSE, sizeof(struct subscriber));
}

void vigild_statmux_subscribe(struct vigild_statmux *m, vigild_samples_fn fn, void *user)
{
    struct subscriber s = {fn, user};
    g_array_append_val(m->subscribers, s);
}

void vigild_statmux_publish(const struct vigild_statmux *m,
                            const struct vigild_tick_samples *samples,
                            const vigil_metric_catalog *catalog)
{
    for (guint i = 0; i < m->subscribers->len; i++) {
        const struct subscriber *s = &g_array_index(m->subscribers, struct subscriber, i);
        s->fn(s->user, samples, catalog);
    }
}

void vigild_statmux_clear(struct vigild_statmux *m)
{
    if (m->subscribers != NULL)
        g_array_free(m->subscribers, TRUE);
    m->subscribers = NULL;
}
