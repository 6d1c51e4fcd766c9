/* vigil — a report's code regions read back from its JSON: the top-level
 * "regions" array and "region_notes" object (report/report_regions.c writes
 * them), both absent in a report without regions. As strict as the rest of
 * report_json.c (report_json_reader.h). */
#include <string.h>

#include "report_json_reader.h"
#include "vigil/local_protocol.h"

static void read_per_rank(struct report_reader *rd, JsonObject *o, const char *where,
                          struct vigil_report_region *g)
{
    char *at = report_path(where, "per_rank");
    JsonObject *per_rank = report_object_member(rd, o, where, "per_rank");
    for (int f = 0; f < VIGIL_REPORT_REGION_FIGURE_COUNT && per_rank != NULL && !rd->failed; f++) {
        const char *name = vigil_report_region_figure_name((enum vigil_report_region_figure)f);
        char *fwhere = report_path(at, name);
        JsonObject *st = report_object_member(rd, per_rank, at, name);
        int32_t max_rank = report_rank_member(rd, st, fwhere, "max_rank");
        g->per_rank[f] = (struct vigil_report_rank_stats){
            .max_rank = max_rank,
            .min = report_number_member(rd, st, fwhere, "min", TRUE),
            .mean = report_number_member(rd, st, fwhere, "mean", TRUE),
            .max = report_number_member(rd, st, fwhere, "max", TRUE),
            .sum = report_number_member(rd, st, fwhere, "sum", TRUE),
        };
        g_free(fwhere);
    }
    g_free(at);
}

static void read_region(struct report_reader *rd, JsonObject *o, const char *where,
                        struct vigil_report_region *g)
{
    g->name = report_string_member(rd, o, where, "name", FALSE);
    g->entered = report_count_member(rd, o, where, "entered");
    g->calls = report_count_member(rd, o, where, "calls");
    g->read_bytes = report_count_member(rd, o, where, "bytes_read");
    g->written_bytes = report_count_member(rd, o, where, "bytes_written");
    g->wall_s = report_number_member(rd, o, where, "wall_seconds", TRUE);
    g->cpu_s = report_number_member(rd, o, where, "cpu_seconds", TRUE);
    g->energy_j = report_number_member(rd, o, where, "energy_joule", TRUE);
    g->energy_missing = report_count_member(rd, o, where, "energy_missing");
    g->energy_flags =
        (report_bool_member(rd, o, where, "energy_estimated") ? VIGIL_LOCAL_ENERGY_ESTIMATED : 0) |
        (report_bool_member(rd, o, where, "energy_uncertain") ? VIGIL_LOCAL_ENERGY_UNCERTAIN : 0);
    g->open = report_count_member(rd, o, where, "open");
    if (json_object_has_member(o, "ranks")) {
        uint64_t ranks = report_count_member(rd, o, where, "ranks");
        if (ranks == 0 || ranks > INT32_MAX)
            report_fail(rd, where, "ranks: %" G_GUINT64_FORMAT " ranks", ranks);
        g->ranks = (int32_t)ranks;
        read_per_rank(rd, o, where, g);
    }
}

void report_read_regions(struct report_reader *rd, JsonObject *root)
{
    struct vigil_cli_report *out = rd->out;
    struct vigil_report *r = &out->r;
    gboolean has_regions = json_object_has_member(root, "regions");
    if (has_regions != json_object_has_member(root, "region_notes")) {
        report_fail(rd, has_regions ? "region_notes" : "regions", "missing beside %s",
                    has_regions ? "regions" : "region_notes");
        return;
    }
    if (!has_regions)
        return;
    JsonArray *a = report_array_member(rd, root, "", "regions");
    if (a == NULL)
        return;
    guint n = json_array_get_length(a);
    if (n > VIGIL_REPORT_REGIONS_MAX) {
        report_fail(rd, "regions", "%u entries, more than the %d a process tracks", n,
                    VIGIL_REPORT_REGIONS_MAX);
        return;
    }
    out->regions = g_new0(struct vigil_report_region, n > 0 ? n : 1);
    for (guint i = 0; i < n && !rd->failed; i++) {
        char *where = g_strdup_printf("regions.%u", i);
        JsonObject *o = report_object_of(rd, json_array_get_element(a, i), where);
        if (o != NULL)
            read_region(rd, o, where, &out->regions[i]);
        g_free(where);
    }
    JsonObject *notes = report_object_member(rd, root, "", "region_notes");
    struct vigil_report_region_notes *rn = &r->region_notes;
    rn->names_dropped = report_count_member(rd, notes, "region_notes", "names_dropped");
    rn->unmatched_ends = report_count_member(rd, notes, "region_notes", "unmatched_ends");
    rn->closed_by_outer = report_count_member(rd, notes, "region_notes", "closed_by_outer");
    rn->too_deep = report_count_member(rd, notes, "region_notes", "too_deep");
    rn->dropped_calls = report_count_member(rd, notes, "region_notes", "dropped_calls");
    r->regions = out->regions;
    r->region_count = (int)n;
}
