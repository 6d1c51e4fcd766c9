/* vigild — where a tick's time goes (tick_costs.h). */
#include <math.h>
#include <string.h>

#include "vigil/clock.h"
#include "vigil/health.h"
#include "vigil/json_members.h"
#include "statmux.h"
#include "tick_costs.h"

static const char *const part_names[VIGILD_PART_COUNT] = {
    [VIGILD_PART_PROVIDERS] = "providers", [VIGILD_PART_ENERGY_SHARE] = "energy_share",
    [VIGILD_PART_PUBLISH] = "publish",     [VIGILD_PART_DRAIN] = "drain",
    [VIGILD_PART_REASONERS] = "reasoners", [VIGILD_PART_CAPTURE] = "capture",
    [VIGILD_PART_OUTBOX] = "outbox",       [VIGILD_PART_COMMIT] = "commit",
};

void vigild_cost_json(JsonBuilder *b, const char *name, const struct vigild_cost *c)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    vigil_json_int(b, "count", (gint64)c->count);
    vigil_json_number(b, "last", c->last_ns / 1e3);
    vigil_json_number(b, "mean", c->count > 0 ? c->total_ns / 1e3 / (double)c->count : NAN);
    vigil_json_number(b, "max", c->max_ns / 1e3);
    vigil_json_number(b, "total", c->total_ns / 1e3);
    json_builder_end_object(b);
}

uint64_t vigild_tick_costs_mark(struct vigild_tick_costs *costs, enum vigild_tick_part part,
                                uint64_t since_ns)
{
    uint64_t now_ns = vigil_clock_monotonic_ns();
    vigild_cost_add(&costs->part[part], now_ns - since_ns);
    return now_ns;
}

struct vigild_adpi_cost *vigild_adpi_costs_for(GPtrArray *costs, unsigned level, const char *name)
{
    for (guint i = 0; i < costs->len; i++) {
        struct vigild_adpi_cost *c = g_ptr_array_index(costs, i);
        if (c->level == level && strcmp(c->name, name) == 0)
            return c;
    }
    struct vigild_adpi_cost *c = g_new0(struct vigild_adpi_cost, 1);
    c->level = level;
    c->name = g_strdup(name);
    g_ptr_array_add(costs, c);
    return c;
}

void vigild_adpi_cost_free(struct vigild_adpi_cost *c)
{
    g_free(c->name);
    g_free(c);
}

static void adpis_json(JsonBuilder *b, const GPtrArray *costs)
{
    json_builder_set_member_name(b, "adpis");
    json_builder_begin_array(b);
    for (guint i = 0; costs != NULL && i < costs->len; i++) {
        const struct vigild_adpi_cost *c = g_ptr_array_index(costs, i);
        json_builder_begin_object(b);
        vigil_json_string(b, "level", vigil_level_name((enum vigil_level)c->level));
        vigil_json_string(b, "name", c->name);
        vigild_cost_json(b, "samples", &c->samples);
        vigild_cost_json(b, "activities", &c->activities);
        vigil_json_int(b, "activities_timed_one_in", VIGILD_ACTIVITY_SAMPLE_EVERY);
        vigild_cost_json(b, "cycle", &c->cycle);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

void vigild_tick_costs_status(JsonBuilder *b, const struct vigild_tick_costs *costs,
                              const struct vigild_statmux *statmux, const GPtrArray *adpi_costs)
{
    json_builder_set_member_name(b, "tick_costs");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "parts");
    json_builder_begin_array(b);
    for (guint i = 0; i < VIGILD_PART_COUNT; i++) {
        json_builder_begin_object(b);
        vigil_json_string(b, "name", part_names[i]);
        vigild_cost_json(b, "cost_us", &costs->part[i]);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    vigild_statmux_json(b, statmux);
    adpis_json(b, adpi_costs);
    json_builder_end_object(b);
}
