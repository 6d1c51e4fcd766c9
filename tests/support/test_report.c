/* vigil — reading the JSON reports of libvigil-preload.so in tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_report.h"

struct test_report test_report_load(const char *path)
{
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR))
        fail_msg("no report at %s", path);
    struct test_report rep = {.parser = json_parser_new(), .path = g_strdup(path)};
    GError *error = NULL;
    if (!json_parser_load_from_file(rep.parser, path, &error))
        fail_msg("%s is not JSON: %s", path, error->message);
    JsonNode *root = json_parser_get_root(rep.parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        fail_msg("%s does not hold a JSON object", path);
    rep.root = json_node_get_object(root);
    if (!json_object_has_member(rep.root, "vigil_report") ||
        json_object_get_int_member(rep.root, "vigil_report") != 1)
        fail_msg("%s is not a vigil report (no \"vigil_report\":1)", path);
    return rep;
}

void test_report_free(struct test_report *rep)
{
    g_object_unref(rep->parser);
    g_free(rep->path);
}

/* ---- any JSON document ----------------------------------------------------------------- */

JsonNode *test_json_node(JsonNode *root, const char *dotted)
{
    char **parts = g_strsplit(dotted, ".", -1);
    JsonNode *node = root;
    for (char **p = parts; *p != NULL && node != NULL; p++) {
        if (JSON_NODE_HOLDS_ARRAY(node)) { /* "argv.1": an index */
            JsonArray *array = json_node_get_array(node);
            char *end;
            guint64 index = g_ascii_strtoull(*p, &end, 10);
            node = *end == '\0' && end != *p && index < json_array_get_length(array)
                       ? json_array_get_element(array, (guint)index)
                       : NULL;
        } else if (JSON_NODE_HOLDS_OBJECT(node) &&
                   json_object_has_member(json_node_get_object(node), *p)) {
            node = json_object_get_member(json_node_get_object(node), *p);
        } else {
            node = NULL;
        }
    }
    g_strfreev(parts);
    return node;
}

gint64 test_json_int(JsonNode *root, const char *where, const char *dotted)
{
    JsonNode *node = test_json_node(root, dotted);
    if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
        json_node_get_value_type(node) != G_TYPE_INT64)
        fail_msg("%s: no integer at %s", where, dotted);
    return json_node_get_int(node);
}

double test_json_number(JsonNode *root, const char *where, const char *dotted)
{
    JsonNode *node = test_json_node(root, dotted);
    if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
        (json_node_get_value_type(node) != G_TYPE_INT64 &&
         json_node_get_value_type(node) != G_TYPE_DOUBLE))
        fail_msg("%s: no number at %s", where, dotted);
    return json_node_get_double(node);
}

const char *test_json_string(JsonNode *root, const char *where, const char *dotted)
{
    JsonNode *node = test_json_node(root, dotted);
    if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
        json_node_get_value_type(node) != G_TYPE_STRING)
        fail_msg("%s: no string at %s", where, dotted);
    return json_node_get_string(node);
}

JsonObject *test_json_object(JsonNode *root, const char *where, const char *dotted)
{
    JsonNode *node = test_json_node(root, dotted);
    if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node))
        fail_msg("%s: no object at %s", where, dotted);
    return json_node_get_object(node);
}

/* ---- a report -------------------------------------------------------------------------- */

JsonNode *test_report_node(const struct test_report *rep, const char *dotted)
{
    return test_json_node(json_parser_get_root(rep->parser), dotted);
}

gint64 test_report_int(const struct test_report *rep, const char *dotted)
{
    return test_json_int(json_parser_get_root(rep->parser), rep->path, dotted);
}

double test_report_number(const struct test_report *rep, const char *dotted)
{
    return test_json_number(json_parser_get_root(rep->parser), rep->path, dotted);
}

const char *test_report_string(const struct test_report *rep, const char *dotted)
{
    return test_json_string(json_parser_get_root(rep->parser), rep->path, dotted);
}

JsonObject *test_report_object(const struct test_report *rep, const char *dotted)
{
    return test_json_object(json_parser_get_root(rep->parser), rep->path, dotted);
}

JsonObject *test_report_region(const struct test_report *rep, const char *name)
{
    JsonNode *regions = test_report_node(rep, "regions");
    if (regions == NULL || !JSON_NODE_HOLDS_ARRAY(regions))
        fail_msg("%s: no regions array", rep->path);
    JsonArray *a = json_node_get_array(regions);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);
        if (g_strcmp0(json_object_get_string_member(o, "name"), name) == 0)
            return o;
    }
    fail_msg("%s: no region \"%s\"", rep->path, name);
    return NULL;
}

gint64 test_report_op(const struct test_report *rep, const char *layer, const char *op,
                      const char *field)
{
    char *layer_path = g_strdup_printf("layers.%s", layer);
    JsonNode *node = test_report_node(rep, layer_path);
    if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node))
        fail_msg("%s: no layer %s (no object at %s)", rep->path, layer, layer_path);
    g_free(layer_path);
    if (!json_object_has_member(json_node_get_object(node), op))
        return 0;
    char *field_path = g_strdup_printf("layers.%s.%s.%s", layer, op, field);
    gint64 value = test_report_int(rep, field_path);
    g_free(field_path);
    return value;
}
