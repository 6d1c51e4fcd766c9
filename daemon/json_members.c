/* vigild — JSON members as the status and the capture sink write them: a
 * number that is not finite and a text that is missing become null, which
 * JSON can say and a reader can test. */
#include <math.h>

#include "json_members.h"

void vigild_json_int(JsonBuilder *b, const char *name, int64_t value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, value);
}

void vigild_json_number(JsonBuilder *b, const char *name, double value)
{
    json_builder_set_member_name(b, name);
    if (isfinite(value))
        json_builder_add_double_value(b, value);
    else
        json_builder_add_null_value(b);
}

void vigild_json_string(JsonBuilder *b, const char *name, const char *value)
{
    json_builder_set_member_name(b, name);
    if (value != NULL)
        json_builder_add_string_value(b, value);
    else
        json_builder_add_null_value(b);
}

void vigild_json_bool(JsonBuilder *b, const char *name, gboolean value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_boolean_value(b, value);
}
