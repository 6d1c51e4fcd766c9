/* vigil — a report's code regions read back from its JSON: the top-level
 * "regions" array and "region_notes" object (report/report_regions.c writes
 * them), both absent in a report without regions. As strict as the rest of
 * report_json.c: a member missing or of the wrong type is named. */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "report_json.h"
#include "vigil/local_protocol.h"

#define REGIONS_ERROR (g_quark_from_static_string("vigil-report-json"))

struct region_reader {
    GError **error;
    gboolean failed;
};

__attribute__((format(printf, 3, 4))) static void fail(struct region_reader *rd, const char *where,
                                                       const char *fmt, ...)
{
    if (rd->failed)
        return;
    rd->failed = TRUE;
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(rd->error, REGIONS_ERROR, 0, "report: %s: %s", where, what);
    g_free(what);
}

static JsonNode *need(struct region_reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = o != NULL ? json_object_get_member(o, name) : NULL;
    if (node == NULL && o != NULL)
        fail(rd, where, "%s: missing", name);
    return node;
}

static uint64_t count(struct region_reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = need(rd, o, where, name);
    if (node == NULL)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64 ||
        json_node_get_int(node) < 0) {
        fail(rd, where, "%s: expected a count (an integer of 0 or more)", name);
        return 0;
    }
    return (uint64_t)json_node_get_int(node);
}

/* A number; null is NaN. */
static double number(struct region_reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = need(rd, o, where, name);
    if (node == NULL || JSON_NODE_HOLDS_NULL(node))
        return NAN;
    if (!JSON_NODE_HOLDS_VALUE(node) || (json_node_get_value_type(node) != G_TYPE_INT64 &&
                                         json_node_get_value_type(node) != G_TYPE_DOUBLE)) {
        fail(rd, where, "%s: expected a number or null", name);
        return NAN;
    }
    return json_node_get_double(node);
}

static gboolean boolean(struct region_reader *rd, JsonObject *o, const char *where,
                        const char *name)
{
    JsonNode *node = need(rd, o, where, name);
    if (node == NULL)
        return FALSE;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_BOOLEAN) {
        fail(rd, where, "%s: expected true or false", name);
        return FALSE;
    }
    return json_node_get_boolean(node);
}

static JsonObject *object_of(struct region_reader *rd, JsonNode *node, const char *where)
{
    if (node == NULL)
        return NULL;
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        fail(rd, where, "expected an object");
        return NULL;
    }
    return json_node_get_object(node);
}

static void read_per_rank(struct region_reader *rd, JsonObject *o, const char *where,
                          struct vigil_report_region *g)
{
    JsonObject *per_rank = object_of(rd, need(rd, o, where, "per_rank"), where);
    for (int f = 0; f < VIGIL_REPORT_REGION_FIGURE_COUNT && per_rank != NULL && !rd->failed; f++) {
        const char *name = vigil_report_region_figure_name((enum vigil_report_region_figure)f);
        char *fwhere = g_strdup_printf("%s.per_rank.%s", where, name);
        JsonObject *st = object_of(rd, need(rd, per_rank, fwhere, name), fwhere);
        JsonNode *max_rank = need(rd, st, fwhere, "max_rank");
        if (max_rank != NULL &&
            (!JSON_NODE_HOLDS_VALUE(max_rank) ||
             json_node_get_value_type(max_rank) != G_TYPE_INT64 ||
             json_node_get_int(max_rank) < 0 || json_node_get_int(max_rank) > INT32_MAX))
            fail(rd, fwhere, "max_rank: expected a rank");
        g->per_rank[f] = (struct vigil_report_rank_stats){
            .min = number(rd, st, fwhere, "min"),
            .mean = number(rd, st, fwhere, "mean"),
            .max = number(rd, st, fwhere, "max"),
            .sum = number(rd, st, fwhere, "sum"),
            .max_rank = max_rank != NULL && !rd->failed ? (int32_t)json_node_get_int(max_rank) : 0,
        };
        g_free(fwhere);
    }
}

static void read_region(struct region_reader *rd, JsonObject *o, const char *where,
                        struct vigil_cli_report *out, struct vigil_report_region *g)
{
    JsonNode *name = need(rd, o, where, "name");
    if (name != NULL &&
        (!JSON_NODE_HOLDS_VALUE(name) || json_node_get_value_type(name) != G_TYPE_STRING))
        fail(rd, where, "name: expected a string");
    g->name = rd->failed || name == NULL
                  ? ""
                  : g_string_chunk_insert(out->strings, json_node_get_string(name));
    g->entered = count(rd, o, where, "entered");
    g->calls = count(rd, o, where, "calls");
    g->read_bytes = count(rd, o, where, "bytes_read");
    g->written_bytes = count(rd, o, where, "bytes_written");
    g->wall_s = number(rd, o, where, "wall_seconds");
    g->cpu_s = number(rd, o, where, "cpu_seconds");
    g->energy_j = number(rd, o, where, "energy_joule");
    g->energy_missing = count(rd, o, where, "energy_missing");
    g->energy_flags =
        (boolean(rd, o, where, "energy_estimated") ? VIGIL_LOCAL_ENERGY_ESTIMATED : 0) |
        (boolean(rd, o, where, "energy_uncertain") ? VIGIL_LOCAL_ENERGY_UNCERTAIN : 0);
    g->open = count(rd, o, where, "open");
    if (json_object_has_member(o, "ranks")) {
        uint64_t ranks = count(rd, o, where, "ranks");
        if (ranks == 0 || ranks > INT32_MAX)
            fail(rd, where, "ranks: %" G_GUINT64_FORMAT " ranks", ranks);
        g->ranks = (int32_t)ranks;
        read_per_rank(rd, o, where, g);
    }
}

gboolean vigil_cli_report_read_regions(JsonObject *root, struct vigil_cli_report *out,
                                       GError **error)
{
    struct region_reader rd = {.error = error};
    struct vigil_report *r = &out->r;
    gboolean has_regions = json_object_has_member(root, "regions");
    if (has_regions != json_object_has_member(root, "region_notes")) {
        fail(&rd, has_regions ? "region_notes" : "regions", "missing beside %s",
             has_regions ? "regions" : "region_notes");
        return FALSE;
    }
    if (!has_regions)
        return TRUE;
    JsonNode *node = json_object_get_member(root, "regions");
    if (!JSON_NODE_HOLDS_ARRAY(node)) {
        fail(&rd, "regions", "expected an array");
        return FALSE;
    }
    JsonArray *a = json_node_get_array(node);
    guint n = json_array_get_length(a);
    if (n > VIGIL_REPORT_REGIONS_MAX) {
        fail(&rd, "regions", "%u entries, more than the %d a process tracks", n,
             VIGIL_REPORT_REGIONS_MAX);
        return FALSE;
    }
    out->regions = g_new0(struct vigil_report_region, n > 0 ? n : 1);
    for (guint i = 0; i < n && !rd.failed; i++) {
        char *where = g_strdup_printf("regions.%u", i);
        JsonObject *o = object_of(&rd, json_array_get_element(a, i), where);
        if (o != NULL)
            read_region(&rd, o, where, out, &out->regions[i]);
        g_free(where);
    }
    JsonObject *notes =
        object_of(&rd, json_object_get_member(root, "region_notes"), "region_notes");
    struct vigil_report_region_notes *rn = &r->region_notes;
    rn->names_dropped = count(&rd, notes, "region_notes", "names_dropped");
    rn->unmatched_ends = count(&rd, notes, "region_notes", "unmatched_ends");
    rn->closed_by_outer = count(&rd, notes, "region_notes", "closed_by_outer");
    rn->too_deep = count(&rd, notes, "region_notes", "too_deep");
    rn->dropped_calls = count(&rd, notes, "region_notes", "dropped_calls");
    r->regions = out->regions;
    r->region_count = (int)n;
    return !rd.failed;
}
