/* vigil status: where vigild's tick goes, from its status JSON
 * ("tick_costs": parts, subscribers, adpis; "daemon": ticks). Every figure
 * is a total over vigild's life divided by its ticks, so that the parts
 * add up to the tick's mean cost whatever runs only once a cycle. */
#include <math.h>
#include <stdio.h>

#include "status_costs.h"

static double per_tick_us(JsonObject *o, const char *cost_name, gint64 ticks)
{
    JsonObject *cost =
        json_object_has_member(o, cost_name) ? json_object_get_object_member(o, cost_name) : NULL;
    JsonNode *total = cost != NULL ? json_object_get_member(cost, "total") : NULL;
    if (total == NULL || !JSON_NODE_HOLDS_VALUE(total) || ticks <= 0)
        return NAN;
    return json_node_get_double(total) / (double)ticks;
}

static void print_named(JsonArray *items, gint64 ticks)
{
    for (guint i = 0; i < json_array_get_length(items); i++) {
        JsonObject *item = json_array_get_object_element(items, i);
        printf("%s%s %.1f", i == 0 ? "" : ", ", json_object_get_string_member(item, "name"),
               per_tick_us(item, "cost_us", ticks));
    }
    printf("\n");
}

void vigil_cli_status_tick_costs(JsonObject *root)
{
    if (!json_object_has_member(root, "tick_costs"))
        return;
    JsonObject *costs = json_object_get_object_member(root, "tick_costs");
    gint64 ticks = json_object_get_int_member_with_default(
        json_object_get_object_member(root, "daemon"), "ticks", 0);
    if (ticks <= 0) {
        printf("\nwhere a tick goes: no tick yet\n");
        return;
    }
    printf("\nwhere a tick goes, mean µs per tick over %" G_GINT64_FORMAT " ticks:\n  ", ticks);
    print_named(json_object_get_array_member(costs, "parts"), ticks);
    printf("  publish: ");
    print_named(json_object_get_array_member(costs, "subscribers"), ticks);
    JsonArray *adpis = json_object_get_array_member(costs, "adpis");
    for (guint i = 0; i < json_array_get_length(adpis); i++) {
        JsonObject *a = json_array_get_object_element(adpis, i);
        printf("  adpi %-8s %-20s samples %.1f, activities ~%.1f, cycle %.1f\n",
               json_object_get_string_member(a, "level"), json_object_get_string_member(a, "name"),
               per_tick_us(a, "samples", ticks), per_tick_us(a, "activities", ticks),
               per_tick_us(a, "cycle", ticks));
    }
}
