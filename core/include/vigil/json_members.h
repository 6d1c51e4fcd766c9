/* vigil — JSON members as vigil's programs write and read them with
 * json-glib (json_members.c, library vigil-json): vigild's status and
 * capture, the `vigil` subcommands' --format json, vigil-web's answers. */
#ifndef VIGIL_JSON_MEMBERS_H
#define VIGIL_JSON_MEMBERS_H

#include <stdint.h>
#include <glib.h>

#include <json-glib/json-glib.h>

/* A member of the object being built. A number that is not finite and a
 * missing text become null, which JSON can say and a reader can test. */
void vigil_json_int(JsonBuilder *b, const char *name, int64_t value);
void vigil_json_number(JsonBuilder *b, const char *name, double value);
void vigil_json_string(JsonBuilder *b, const char *name, const char *value);
void vigil_json_bool(JsonBuilder *b, const char *name, gboolean value);

/* The text of what `b` built, indented when `pretty`, else on one line;
 * g_free it. Unrefs `b`. */
char *vigil_json_builder_text(JsonBuilder *b, gboolean pretty);

/* A node holding `object` (`array`), which it takes. */
JsonNode *vigil_json_object_node(JsonObject *object);
JsonNode *vigil_json_array_node(JsonArray *array);

/* A member read leniently, as the tools read vigild's status (a vigild
 * older or newer than the tool may lack a member or give it as null): its
 * value, or NaN, 0 and NULL when `o` is NULL or the member is missing or
 * not a value. */
double vigil_json_get_number(JsonObject *o, const char *name);
gint64 vigil_json_get_int(JsonObject *o, const char *name);
const char *vigil_json_get_string(JsonObject *o, const char *name);

/* What a node is, for messages that refuse it: "nothing" (NULL), "null",
 * "an object", "an array", "a string", "a boolean", "an integer" or "a
 * fractional number". */
const char *vigil_json_kind(JsonNode *node);

#endif
