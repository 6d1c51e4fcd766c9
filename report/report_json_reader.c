/* vigil — the strict member readers of a report's JSON
 * (report_json_reader.h). */
#include <math.h>
#include <string.h>

#include "report_json_reader.h"

#define REPORT_ERROR (g_quark_from_static_string("vigil-report-json"))

void report_fail(struct report_reader *rd, const char *where, const char *fmt, ...)
{
    if (rd->failed)
        return;
    rd->failed = TRUE;
    va_list ap;
    va_start(ap, fmt);
    g_propagate_error(rd->error, g_error_new_valist(REPORT_ERROR, 0, fmt, ap));
    va_end(ap);
    g_prefix_error(rd->error, "report: %s: ", where);
}

char *report_path(const char *where, const char *name)
{
    return where[0] != '\0' ? g_strdup_printf("%s.%s", where, name) : g_strdup(name);
}

void report_wrong_type(struct report_reader *rd, const char *where, const char *name,
                       const char *expected, JsonNode *node)
{
    char *path = report_path(where, name);
    report_fail(rd, path, "expected %s, found %s", expected, vigil_json_kind(node));
    g_free(path);
}

JsonNode *report_member(struct report_reader *rd, JsonObject *o, const char *where,
                        const char *name)
{
    JsonNode *node = o != NULL ? json_object_get_member(o, name) : NULL;
    if (node == NULL && o != NULL) {
        char *path = report_path(where, name);
        report_fail(rd, path, "missing");
        g_free(path);
    }
    return node;
}

gboolean report_is_null(JsonNode *node)
{
    return node != NULL && JSON_NODE_HOLDS_NULL(node);
}

/* Whether `node` is a value of `type` (G_TYPE_DOUBLE: any number). */
static gboolean holds(JsonNode *node, GType type)
{
    if (!JSON_NODE_HOLDS_VALUE(node))
        return FALSE;
    GType t = json_node_get_value_type(node);
    return t == type || (type == G_TYPE_DOUBLE && t == G_TYPE_INT64);
}

/* An integer in [min, max]; 0 after a failure. */
static int64_t integer_in(struct report_reader *rd, JsonNode *node, const char *where,
                          const char *name, int64_t min, int64_t max, const char *expected)
{
    if (node == NULL)
        return 0;
    if (!holds(node, G_TYPE_INT64) || json_node_get_int(node) < min ||
        json_node_get_int(node) > max) {
        report_wrong_type(rd, where, name, expected, node);
        return 0;
    }
    return json_node_get_int(node);
}

/* The member when it is a `type` node; NULL, named, when it is another
 * (or null, when `nullable`). */
static JsonNode *member_of_type(struct report_reader *rd, JsonObject *o, const char *where,
                                const char *name, JsonNodeType type, gboolean nullable,
                                const char *expected)
{
    JsonNode *node = report_member(rd, o, where, name);
    if (node == NULL || (nullable && report_is_null(node)))
        return NULL;
    if (json_node_get_node_type(node) != type) {
        report_wrong_type(rd, where, name, expected, node);
        return NULL;
    }
    return node;
}

JsonObject *report_object_member(struct report_reader *rd, JsonObject *o, const char *where,
                                 const char *name)
{
    JsonNode *node = member_of_type(rd, o, where, name, JSON_NODE_OBJECT, FALSE, "an object");
    return node != NULL ? json_node_get_object(node) : NULL;
}

JsonObject *report_object_or_null(struct report_reader *rd, JsonObject *o, const char *where,
                                  const char *name)
{
    JsonNode *node =
        member_of_type(rd, o, where, name, JSON_NODE_OBJECT, TRUE, "an object or null");
    return node != NULL ? json_node_get_object(node) : NULL;
}

JsonArray *report_array_member(struct report_reader *rd, JsonObject *o, const char *where,
                               const char *name)
{
    JsonNode *node = member_of_type(rd, o, where, name, JSON_NODE_ARRAY, FALSE, "an array");
    return node != NULL ? json_node_get_array(node) : NULL;
}

JsonObject *report_object_of(struct report_reader *rd, JsonNode *node, const char *where)
{
    if (node == NULL)
        return NULL;
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        report_fail(rd, where, "expected an object, found %s", vigil_json_kind(node));
        return NULL;
    }
    return json_node_get_object(node);
}

uint64_t report_count_of(struct report_reader *rd, JsonNode *node, const char *where,
                         const char *name)
{
    return (uint64_t)integer_in(rd, node, where, name, 0, G_MAXINT64,
                                "a count (an integer of 0 or more)");
}

uint64_t report_count_member(struct report_reader *rd, JsonObject *o, const char *where,
                             const char *name)
{
    return report_count_of(rd, report_member(rd, o, where, name), where, name);
}

uint64_t report_count_or_null(struct report_reader *rd, JsonObject *o, const char *where,
                              const char *name, gboolean *present)
{
    JsonNode *node = report_member(rd, o, where, name);
    if (present != NULL)
        *present = node != NULL && !report_is_null(node);
    return report_is_null(node) ? 0 : report_count_of(rd, node, where, name);
}

void report_counts_member(struct report_reader *rd, JsonObject *o, const char *where,
                          const char *name, uint64_t *out, guint n)
{
    JsonArray *a = report_array_member(rd, o, where, name);
    if (a == NULL)
        return;
    char *path = report_path(where, name);
    if (json_array_get_length(a) != n)
        report_fail(rd, path, "%u entries, not %u", json_array_get_length(a), n);
    for (guint i = 0; i < n && !rd->failed; i++) {
        char *index = g_strdup_printf("%u", i);
        out[i] = report_count_of(rd, json_array_get_element(a, i), path, index);
        g_free(index);
    }
    g_free(path);
}

int32_t report_int32_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name)
{
    return (int32_t)integer_in(rd, report_member(rd, o, where, name), where, name, INT32_MIN,
                               INT32_MAX, "a 32-bit integer");
}

int32_t report_rank_member(struct report_reader *rd, JsonObject *o, const char *where,
                           const char *name)
{
    return (int32_t)integer_in(rd, report_member(rd, o, where, name), where, name, 0, INT32_MAX,
                               "a rank (an integer of 0 or more)");
}

int64_t report_i64_member(struct report_reader *rd, JsonObject *o, const char *where,
                          const char *name)
{
    return integer_in(rd, report_member(rd, o, where, name), where, name, G_MININT64, G_MAXINT64,
                      "an integer");
}

double report_number_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name, gboolean nullable)
{
    JsonNode *node = report_member(rd, o, where, name);
    if (node == NULL || (nullable && report_is_null(node)))
        return NAN;
    if (!holds(node, G_TYPE_DOUBLE)) {
        report_wrong_type(rd, where, name, nullable ? "a number or null" : "a number", node);
        return NAN;
    }
    return json_node_get_double(node);
}

double report_amount_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name)
{
    double value = report_number_member(rd, o, where, name, FALSE);
    if (isnan(value))
        return 0;
    if (!isfinite(value) || value < 0) {
        char *path = report_path(where, name);
        report_fail(rd, path, "expected a number of 0 or more");
        g_free(path);
        return 0;
    }
    return value;
}

gboolean report_bool_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name)
{
    JsonNode *node = report_member(rd, o, where, name);
    if (node == NULL)
        return FALSE;
    if (!holds(node, G_TYPE_BOOLEAN)) {
        report_wrong_type(rd, where, name, "true or false", node);
        return FALSE;
    }
    return json_node_get_boolean(node);
}

const char *report_string_of(struct report_reader *rd, JsonNode *node, const char *where,
                             const char *name, gboolean nullable)
{
    if (node == NULL || (nullable && report_is_null(node)))
        return "";
    if (!holds(node, G_TYPE_STRING)) {
        report_wrong_type(rd, where, name, nullable ? "a string or null" : "a string", node);
        return "";
    }
    return g_string_chunk_insert(rd->out->strings, json_node_get_string(node));
}

const char *report_string_member(struct report_reader *rd, JsonObject *o, const char *where,
                                 const char *name, gboolean nullable)
{
    return report_string_of(rd, report_member(rd, o, where, name), where, name, nullable);
}
