/* vigil — JSON members as vigil's programs write and read them
 * (vigil/json_members.h). */
#include <math.h>

#include "vigil/json_members.h"

void vigil_json_int(JsonBuilder *b, const char *name, int64_t value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, value);
}

void vigil_json_number(JsonBuilder *b, const char *name, double value)
{
    json_builder_set_member_name(b, name);
    if (isfinite(value))
        json_builder_add_double_value(b, value);
    else
        json_builder_add_null_value(b);
}

void vigil_json_string(JsonBuilder *b, const char *name, const char *value)
{
    json_builder_set_member_name(b, name);
    if (value != NULL)
        json_builder_add_string_value(b, value);
    else
        json_builder_add_null_value(b);
}

void vigil_json_bool(JsonBuilder *b, const char *name, gboolean value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_boolean_value(b, value);
}

char *vigil_json_builder_text(JsonBuilder *b, gboolean pretty)
{
    JsonNode *root = json_builder_get_root(b);
    char *text = json_to_string(root, pretty);
    json_node_unref(root);
    g_object_unref(b);
    return text;
}

JsonNode *vigil_json_object_node(JsonObject *object)
{
    JsonNode *n = json_node_init_object(json_node_alloc(), object);
    json_object_unref(object);
    return n;
}

JsonNode *vigil_json_array_node(JsonArray *array)
{
    JsonNode *n = json_node_init_array(json_node_alloc(), array);
    json_array_unref(array);
    return n;
}

/* The member when it is a value; NULL when it is missing, null, an
 * object or an array. */
static JsonNode *value_member(JsonObject *o, const char *name)
{
    JsonNode *n = o != NULL ? json_object_get_member(o, name) : NULL;
    return n != NULL && JSON_NODE_HOLDS_VALUE(n) ? n : NULL;
}

double vigil_json_get_number(JsonObject *o, const char *name)
{
    JsonNode *n = value_member(o, name);
    return n != NULL ? json_node_get_double(n) : NAN;
}

gint64 vigil_json_get_int(JsonObject *o, const char *name)
{
    JsonNode *n = value_member(o, name);
    return n != NULL ? json_node_get_int(n) : 0;
}

const char *vigil_json_get_string(JsonObject *o, const char *name)
{
    JsonNode *n = value_member(o, name);
    return n != NULL ? json_node_get_string(n) : NULL;
}

const char *vigil_json_kind(JsonNode *node)
{
    if (node == NULL)
        return "nothing";
    switch (json_node_get_node_type(node)) {
    case JSON_NODE_OBJECT:
        return "an object";
    case JSON_NODE_ARRAY:
        return "an array";
    case JSON_NODE_NULL:
        return "null";
    case JSON_NODE_VALUE:
        break;
    }
    GType type = json_node_get_value_type(node);
    return type == G_TYPE_STRING    ? "a string"
           : type == G_TYPE_BOOLEAN ? "a boolean"
           : type == G_TYPE_INT64   ? "an integer"
                                    : "a fractional number";
}
