/* vigil — the code regions' part of the end-of-run report, text and JSON
 * (vigil/report.h, struct vigil_report_region).
 *
 * As the rest of the report: heap-free, and every double rounded to the
 * decimals the JSON gives it before either form prints it, so that a
 * stored report reads back as it was printed. */
#include <math.h>
#include <string.h>

#include "report_put.h"
#include "vigil/local_protocol.h"

#define DECIMALS VIGIL_REPORT_FIGURE_DECIMALS

static const char *const region_figure_names[] = {
    VIGIL_REPORT_REGION_FIGURES(VIGIL_REPORT_NAME_OF)};

const char *vigil_report_region_figure_name(enum vigil_report_region_figure figure)
{
    return vigil_report_name_at(region_figure_names, VIGIL_REPORT_REGION_FIGURE_COUNT, (int)figure);
}

enum vigil_report_region_figure vigil_report_region_figure_from_name(const char *name)
{
    return (enum vigil_report_region_figure)vigil_report_name_index(
        region_figure_names, VIGIL_REPORT_REGION_FIGURE_COUNT, name);
}

static bool has_regions(const struct vigil_report *r)
{
    const struct vigil_report_region_notes *n = &r->region_notes;
    return r->region_count > 0 || n->names_dropped || n->unmatched_ends || n->closed_by_outer ||
           n->too_deep || n->dropped_calls;
}

static double rounded(double value)
{
    return vigil_report_round(value, DECIMALS);
}

/* ---- text ---------------------------------------------------------------------------------- */

static void text_notes(struct vigil_report_sink *s, const struct vigil_report *r)
{
    uint64_t missing = 0, entered = 0, open = 0;
    uint32_t flags = 0;
    for (int i = 0; i < r->region_count; i++) {
        missing += r->regions[i].energy_missing;
        entered += r->regions[i].entered;
        open += r->regions[i].open;
        flags |= r->regions[i].energy_flags;
    }
    if (missing > 0)
        vigil_report_put_printf(s, "region energy: none for %llu of %llu entries (%s)\n",
                                (unsigned long long)missing, (unsigned long long)entered,
                                r->link.state == VIGIL_REPORT_STANDALONE
                                    ? "no vigild: it publishes each process's energy"
                                    : "vigild had published no energy for the process at "
                                      "their begin or end");
    if (flags & VIGIL_LOCAL_ENERGY_ESTIMATED)
        vigil_report_put_text(s, "region energy: * estimated (the node's energy is a model's)\n");
    if (flags & VIGIL_LOCAL_ENERGY_UNCERTAIN)
        vigil_report_put_text(s, "region energy: uncertain (a region begun before vigild's "
                                 "first figure for the process, counted from its start; or a "
                                 "gap in the node's energy)\n");
    if (open > 0)
        vigil_report_put_printf(s, "regions: %llu entries still open at the report, not counted\n",
                                (unsigned long long)open);
    const struct vigil_report_region_notes *n = &r->region_notes;
    if (n->names_dropped || n->unmatched_ends || n->closed_by_outer || n->too_deep ||
        n->dropped_calls)
        vigil_report_put_printf(
            s,
            "regions not followed: %llu begins past %d names, %llu ends without their begin, "
            "%llu closed by an outer end, %llu too deep, %llu calls dropped\n",
            (unsigned long long)n->names_dropped, VIGIL_REPORT_REGIONS_MAX,
            (unsigned long long)n->unmatched_ends, (unsigned long long)n->closed_by_outer,
            (unsigned long long)n->too_deep, (unsigned long long)n->dropped_calls);
}

static void text_region_ranks(struct vigil_report_sink *s, const struct vigil_report_region *g)
{
    vigil_report_put_text(s, "\nregion ");
    vigil_report_put_clean(s, g->name, 0);
    vigil_report_put_printf(s, " per rank (%d ranks)\n", (int)g->ranks);
    vigil_report_put_printf(s, "%-24s %16s %16s %16s %18s  %s\n", "", "min", "mean", "max", "sum",
                            "max at");
    for (int f = 0; f < VIGIL_REPORT_REGION_FIGURE_COUNT; f++) {
        const struct vigil_report_rank_stats *st = &g->per_rank[f];
        if (f == VIGIL_REPORT_REGION_ENERGY_JOULE && isnan(st->sum)) {
            vigil_report_put_printf(s, "%-24s %16s\n", vigil_report_region_figure_name(f), "n/a");
            continue;
        }
        vigil_report_put_printf(s, "%-24s %16.3f %16.3f %16.3f %18.3f  rank %d\n",
                                vigil_report_region_figure_name(f), rounded(st->min),
                                rounded(st->mean), rounded(st->max), rounded(st->sum),
                                (int)st->max_rank);
    }
}

void vigil_report_text_regions(struct vigil_report_sink *s, const struct vigil_report *r)
{
    if (!has_regions(r))
        return;
    vigil_report_put_printf(s, "\n%-24s %8s %10s %14s %14s %12s %12s %12s\n", "regions (inclusive)",
                            "entered", "calls", "bytes_read", "bytes_written", "wall_s", "cpu_s",
                            "energy_j");
    for (int i = 0; i < r->region_count; i++) {
        const struct vigil_report_region *g = &r->regions[i];
        vigil_report_put_cell(s, g->name, 24);
        vigil_report_put_printf(
            s, " %8llu %10llu %14llu %14llu %12.3f %12.3f", (unsigned long long)g->entered,
            (unsigned long long)g->calls, (unsigned long long)g->read_bytes,
            (unsigned long long)g->written_bytes, rounded(g->wall_s), rounded(g->cpu_s));
        if (isnan(g->energy_j))
            vigil_report_put_printf(s, " %12s\n", "n/a");
        else
            vigil_report_put_printf(s, " %12.3f%s\n", rounded(g->energy_j),
                                    g->energy_flags & VIGIL_LOCAL_ENERGY_ESTIMATED ? "*" : "");
    }
    text_notes(s, r);
    for (int i = 0; i < r->region_count; i++)
        if (r->regions[i].ranks > 0)
            text_region_ranks(s, &r->regions[i]);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_number(struct vigil_report_sink *s, const char *name, double value)
{
    if (isnan(value))
        vigil_report_put_printf(s, ",\"%s\":null", name);
    else
        vigil_report_put_printf(s, ",\"%s\":%.6f", name, rounded(value));
}

static void json_region(struct vigil_report_sink *s, const struct vigil_report_region *g)
{
    vigil_report_put_text(s, "{\"name\":");
    vigil_report_put_json_string(s, g->name);
    vigil_report_put_printf(
        s, ",\"entered\":%llu,\"calls\":%llu,\"bytes_read\":%llu,\"bytes_written\":%llu",
        (unsigned long long)g->entered, (unsigned long long)g->calls,
        (unsigned long long)g->read_bytes, (unsigned long long)g->written_bytes);
    json_number(s, "wall_seconds", g->wall_s);
    json_number(s, "cpu_seconds", g->cpu_s);
    json_number(s, "energy_joule", g->energy_j);
    vigil_report_put_printf(
        s, ",\"energy_missing\":%llu,\"energy_estimated\":%s,\"energy_uncertain\":%s,\"open\":%llu",
        (unsigned long long)g->energy_missing,
        g->energy_flags & VIGIL_LOCAL_ENERGY_ESTIMATED ? "true" : "false",
        g->energy_flags & VIGIL_LOCAL_ENERGY_UNCERTAIN ? "true" : "false",
        (unsigned long long)g->open);
    if (g->ranks > 0) {
        vigil_report_put_printf(s, ",\"ranks\":%d,\"per_rank\":{", (int)g->ranks);
        for (int f = 0; f < VIGIL_REPORT_REGION_FIGURE_COUNT; f++) {
            const struct vigil_report_rank_stats *st = &g->per_rank[f];
            vigil_report_put_printf(s, "%s\"%s\":{", f ? "," : "",
                                    vigil_report_region_figure_name(f));
            /* Without the leading comma json_number writes. */
            vigil_report_put_printf(s, "\"max_rank\":%d", (int)st->max_rank);
            json_number(s, "min", st->min);
            json_number(s, "mean", st->mean);
            json_number(s, "max", st->max);
            json_number(s, "sum", st->sum);
            vigil_report_put_text(s, "}");
        }
        vigil_report_put_text(s, "}");
    }
    vigil_report_put_text(s, "}");
}

void vigil_report_json_regions(struct vigil_report_sink *s, const struct vigil_report *r)
{
    if (!has_regions(r))
        return;
    vigil_report_put_text(s, ",\"regions\":[");
    for (int i = 0; i < r->region_count; i++) {
        if (i > 0)
            vigil_report_put_text(s, ",");
        json_region(s, &r->regions[i]);
    }
    const struct vigil_report_region_notes *n = &r->region_notes;
    vigil_report_put_printf(s,
                            "],\"region_notes\":{\"names_dropped\":%llu,\"unmatched_ends\":%llu,"
                            "\"closed_by_outer\":%llu,\"too_deep\":%llu,\"dropped_calls\":%llu}",
                            (unsigned long long)n->names_dropped,
                            (unsigned long long)n->unmatched_ends,
                            (unsigned long long)n->closed_by_outer, (unsigned long long)n->too_deep,
                            (unsigned long long)n->dropped_calls);
}
