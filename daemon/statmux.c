/* vigild — the statistics multiplexer: every tick's samples go to each
 * subscriber in the order they subscribed (roll-ups, history, energy
 * shares; the anomaly-detection plugins next), each one's cost measured
 * for `vigil status`, so that a tick's publishing is not one opaque sum. */
#include "vigil/json_members.h"
#include "statmux.h"
#include "tick_costs.h"
#include "tick_samples.h"
#include "vigil/clock.h"

struct subscriber {
    const char *name; /* static */
    vigild_samples_fn fn;
    void *user;
    struct vigild_cost cost;
};

void vigild_statmux_init(struct vigild_statmux *m)
{
    m->subscribers = g_array_new(FALSE, FALSE, sizeof(struct subscriber));
}

void vigild_statmux_subscribe_named(struct vigild_statmux *m, const char *name,
                                    vigild_samples_fn fn, void *user)
{
    struct subscriber s = {.name = name, .fn = fn, .user = user};
    g_array_append_val(m->subscribers, s);
}

void vigild_statmux_subscribe(struct vigild_statmux *m, vigild_samples_fn fn, void *user)
{
    vigild_statmux_subscribe_named(m, "subscriber", fn, user);
}

void vigild_statmux_publish(const struct vigild_statmux *m,
                            const struct vigild_tick_samples *samples,
                            const vigil_metric_catalog *catalog)
{
    uint64_t since_ns = vigil_clock_monotonic_ns();
    for (guint i = 0; i < m->subscribers->len; i++) {
        struct subscriber *s = &g_array_index(m->subscribers, struct subscriber, i);
        s->fn(s->user, samples, catalog);
        uint64_t now_ns = vigil_clock_monotonic_ns();
        vigild_cost_add(&s->cost, now_ns - since_ns);
        since_ns = now_ns;
    }
}

void vigild_statmux_json(JsonBuilder *b, const struct vigild_statmux *m)
{
    json_builder_set_member_name(b, "subscribers");
    json_builder_begin_array(b);
    for (guint i = 0; i < m->subscribers->len; i++) {
        const struct subscriber *s = &g_array_index(m->subscribers, struct subscriber, i);
        json_builder_begin_object(b);
        vigil_json_string(b, "name", s->name);
        vigild_cost_json(b, "cost_us", &s->cost);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

void vigild_statmux_clear(struct vigild_statmux *m)
{
    if (m->subscribers != NULL)
        g_array_free(m->subscribers, TRUE);
    m->subscribers = NULL;
}
