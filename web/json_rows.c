/* vigil-web — query results as JSON. */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "json_rows.h"
#include "db_pool.h"
#include "warehouse_query.h"

char *web_json_time_from_pg(const char *text)
{
    /* "2026-11-20 10:00:00+00" or "2026-11-20 10:00:00.5+00" */
    size_t n = strlen(text);
    if (n < 19 || text[10] != ' ')
        return strcmp(text, "infinity") == 0 || strcmp(text, "-infinity") == 0 ? NULL
                                                                               : g_strdup(text);
    GString *out = g_string_new_len(text, 10);
    g_string_append_c(out, 'T');
    g_string_append_len(out, text + 11, 8);
    const char *p = text + 19;
    char frac[7] = "000000";
    if (*p == '.') {
        p++;
        for (int i = 0; i < 6 && *p >= '0' && *p <= '9'; i++, p++)
            frac[i] = *p;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    g_string_append_printf(out, ".%sZ", frac);
    return g_string_free(out, FALSE);
}

static JsonNode *number_node(const char *text)
{
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v))
        return json_node_init_null(json_node_alloc());
    return json_node_init_double(json_node_alloc(), v);
}

JsonNode *web_json_value(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return json_node_init_null(json_node_alloc());
    const char *text = PQgetvalue(r, row, col);
    gint64 i = 0;
    switch (PQftype(r, col)) {
    case VIGIL_OID_BOOL:
        return json_node_init_boolean(json_node_alloc(), text[0] == 't');
    case VIGIL_OID_INT2:
    case VIGIL_OID_INT4:
    case VIGIL_OID_INT8:
    case VIGIL_OID_OID:
        return json_node_init_int(json_node_alloc(), g_ascii_strtoll(text, NULL, 10));
    case VIGIL_OID_NUMERIC:
        /* sum() of bigint is numeric: whole ones stay integers. */
        if (g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &i, NULL))
            return json_node_init_int(json_node_alloc(), i);
        return number_node(text);
    case VIGIL_OID_FLOAT4:
    case VIGIL_OID_FLOAT8:
        return number_node(text);
    case VIGIL_OID_JSON:
    case VIGIL_OID_JSONB: {
        JsonNode *node = json_from_string(text, NULL);
        return node != NULL ? node : json_node_init_null(json_node_alloc());
    }
    case VIGIL_OID_TIMESTAMPTZ:
    case VIGIL_OID_TIMESTAMP: {
        char *t = web_json_time_from_pg(text);
        JsonNode *node = t != NULL ? json_node_init_string(json_node_alloc(), t)
                                   : json_node_init_null(json_node_alloc());
        g_free(t);
        return node;
    }
    default:
        return json_node_init_string(json_node_alloc(), text);
    }
}

JsonObject *web_json_row(const PGresult *r, int row)
{
    JsonObject *o = json_object_new();
    for (int c = 0; c < PQnfields(r); c++)
        json_object_set_member(o, PQfname(r, c), web_json_value(r, row, c));
    return o;
}

JsonArray *web_json_rows(const PGresult *r)
{
    JsonArray *a = json_array_sized_new((guint)PQntuples(r));
    for (int row = 0; row < PQntuples(r); row++)
        json_array_add_object_element(a, web_json_row(r, row));
    return a;
}

gboolean web_json_query_rows(struct web_request *req, JsonObject *out, const char *member,
                             const char *sql, int n_params, const char *const *params,
                             GError **error)
{
    PGresult *r = web_db_query(req, sql, n_params, params, error);
    if (r == NULL)
        return FALSE;
    json_object_set_array_member(out, member, web_json_rows(r));
    PQclear(r);
    return TRUE;
}
