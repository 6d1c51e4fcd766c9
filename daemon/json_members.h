/* vigild — JSON members as status and the capture sink write them
 * (json_members.c). */
#ifndef VIGILD_JSON_MEMBERS_H
#define VIGILD_JSON_MEMBERS_H

#include <stdint.h>
#include <glib.h>

#include <json-glib/json-glib.h>

/* A member of the object being built; a NaN or infinite number and a NULL
 * text are written as null. */
void vigild_json_int(JsonBuilder *b, const char *name, int64_t value);
void vigild_json_number(JsonBuilder *b, const char *name, double value);
void vigild_json_string(JsonBuilder *b, const char *name, const char *value);
void vigild_json_bool(JsonBuilder *b, const char *name, gboolean value);

#endif
