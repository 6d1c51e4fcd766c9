/* vigil status: the node's running energy sum and its segments, from
 * vigild's status JSON ("energy": total_j, segments_total, segments). */
#include <math.h>
#include <stdio.h>

#include "status_energy.h"
#include "vigil/json_members.h"

void vigil_cli_status_energy_segments(JsonObject *energy)
{
    double total_j = vigil_json_get_number(energy, "total_j");
    JsonArray *segments = energy != NULL && json_object_has_member(energy, "segments")
                              ? json_object_get_array_member(energy, "segments")
                              : NULL;
    if (isnan(total_j) || segments == NULL)
        return;
    gint64 count = json_object_get_int_member_with_default(energy, "segments_total", 0);
    guint kept = json_array_get_length(segments);
    printf("  node total %.3f J in %" G_GINT64_FORMAT " segment%s%s:\n", total_j, count,
           count == 1 ? "" : "s", (gint64)kept < count ? " (the last shown)" : "");
    for (guint i = 0; i < kept; i++) {
        JsonObject *s = json_array_get_object_element(segments, i);
        gint64 unix_ns = json_object_get_int_member_with_default(s, "start_unix_ns", 0);
        GDateTime *t = g_date_time_new_from_unix_utc(unix_ns / 1000000000);
        char *when = t != NULL ? g_date_time_format(t, "%Y-%m-%d %H:%M:%S UTC") : g_strdup("?");
        printf("    %-3" G_GINT64_FORMAT " %s, %s ×%" G_GINT64_FORMAT ", from %s: %.3f J\n",
               json_object_get_int_member_with_default(s, "number", 0),
               json_object_get_string_member_with_default(s, "source", "?"),
               json_object_get_string_member_with_default(s, "zones", "?"),
               json_object_get_int_member_with_default(s, "zone_count", 0), when,
               vigil_json_get_number(s, "energy_j"));
        g_free(when);
        if (t != NULL)
            g_date_time_unref(t);
    }
}
