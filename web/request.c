/* vigil-web — a request's parameters, errors and answer. */
#include <stdarg.h>
#include <string.h>

#include "request.h"
#include "vigil/json_members.h"

G_DEFINE_QUARK(vigil - web - error - quark, web_error)

static const struct {
    guint status;
    const char *code;
} error_kinds[] = {
    [WEB_ERROR_BAD_PARAMETER] = {400, "bad_parameter"},
    [WEB_ERROR_FORBIDDEN] = {403, "forbidden"},
    [WEB_ERROR_NOT_FOUND] = {404, "not_found"},
    [WEB_ERROR_METHOD] = {405, "method_not_allowed"},
    [WEB_ERROR_BODY] = {413, "content_too_large"},
    [WEB_ERROR_UNAVAILABLE] = {503, "database_unavailable"},
    [WEB_ERROR_INTERNAL] = {500, "internal"},
};

guint web_error_status(const GError *error)
{
    if (error->domain != WEB_ERROR || error->code < 0 ||
        (gsize)error->code >= G_N_ELEMENTS(error_kinds))
        return 500;
    return error_kinds[error->code].status;
}

const char *web_error_code_name(const GError *error)
{
    if (error->domain != WEB_ERROR || error->code < 0 ||
        (gsize)error->code >= G_N_ELEMENTS(error_kinds))
        return "internal";
    return error_kinds[error->code].code;
}

void web_bad_parameter(struct web_request *req, GError **error, const char *parameter,
                       const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_propagate_error(error, g_error_new_valist(WEB_ERROR, WEB_ERROR_BAD_PARAMETER, format, args));
    va_end(args);
    g_prefix_error(error, "%s: ", parameter);
    g_free(req->error_parameter);
    req->error_parameter = g_strdup(parameter);
}

/* A value quoted for an error message: at most 60 characters, so that a
 * hostile megabyte of query string is not echoed back. */
static char *quoted(const char *value)
{
    gboolean utf8 = g_utf8_validate(value, -1, NULL);
    glong length = utf8 ? g_utf8_strlen(value, -1) : 0;
    /* g_utf8_substring reads up to its end position: never past the text. */
    char *cut = utf8 ? g_utf8_substring(value, 0, MIN(length, 60)) : g_strdup("(not UTF-8)");
    char *escaped = g_strescape(cut, NULL);
    char *q = g_strdup_printf("\"%s%s\"", escaped, length > 60 ? "…" : "");
    g_free(cut);
    g_free(escaped);
    return q;
}

static const char *param_get(struct web_request *req, const char *name)
{
    g_hash_table_add(req->consumed, g_strdup(name));
    const char *value = req->query != NULL ? g_hash_table_lookup(req->query, name) : NULL;
    return value != NULL && value[0] != '\0' ? value : NULL;
}

gboolean web_param_int(struct web_request *req, const char *name, gint64 fallback, gint64 min,
                       gint64 max, gint64 *out, GError **error)
{
    const char *value = param_get(req, name);
    *out = fallback;
    if (value == NULL)
        return TRUE;
    gint64 v = 0;
    if (!g_ascii_string_to_signed(value, 10, min, max, &v, NULL)) {
        char *q = quoted(value);
        web_bad_parameter(req, error, name,
                          "expected a whole number from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                          ", not %s",
                          min, max, q);
        g_free(q);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean web_param_text(struct web_request *req, const char *name, gsize max_len, const char **out,
                        GError **error)
{
    const char *value = param_get(req, name);
    *out = NULL;
    if (value == NULL)
        return TRUE;
    if (!g_utf8_validate(value, -1, NULL)) {
        web_bad_parameter(req, error, name, "not valid UTF-8");
        return FALSE;
    }
    if (strlen(value) > max_len) {
        web_bad_parameter(req, error, name, "longer than %" G_GSIZE_FORMAT " bytes", max_len);
        return FALSE;
    }
    for (const char *p = value; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            web_bad_parameter(req, error, name, "holds a control character");
            return FALSE;
        }
    *out = value;
    return TRUE;
}

gboolean web_param_time(struct web_request *req, const char *name, gint64 *out_us, gboolean *given,
                        GError **error)
{
    const char *value = param_get(req, name);
    *given = FALSE;
    if (value == NULL)
        return TRUE;
    /* Seconds since the epoch, as the plots' axes give them (fractions too). */
    char *end = NULL;
    double seconds = g_ascii_strtod(value, &end);
    if (end != value && *end == '\0' && seconds >= 0 && seconds < 253402300800.0) {
        *out_us = (gint64)(seconds * 1e6 + 0.5);
        *given = TRUE;
        return TRUE;
    }
    /* ISO 8601 lets the seconds go ("2026-11-20T10:00Z", as browsers'
     * datetime fields write it); GLib wants them. */
    char *full = NULL;
    const char *tee = strchr(value, 'T');
    if (tee != NULL && strlen(tee) >= 6 && tee[3] == ':' &&
        (tee[6] == '\0' || tee[6] == 'Z' || tee[6] == '+' || tee[6] == '-'))
        full = g_strdup_printf("%.*s:00%s", (int)(tee + 6 - value), value, tee + 6);
    GTimeZone *utc = g_time_zone_new_utc();
    GDateTime *t =
        strlen(value) <= 64 ? g_date_time_new_from_iso8601(full != NULL ? full : value, utc) : NULL;
    g_free(full);
    g_time_zone_unref(utc);
    if (t == NULL) {
        char *q = quoted(value);
        web_bad_parameter(req, error, name,
                          "expected a time: ISO 8601 (2026-11-20T10:00:00Z) or seconds since "
                          "the epoch, not %s",
                          q);
        g_free(q);
        return FALSE;
    }
    *out_us = g_date_time_to_unix(t) * G_USEC_PER_SEC + g_date_time_get_microsecond(t);
    g_date_time_unref(t);
    *given = TRUE;
    return TRUE;
}

gboolean web_param_choice(struct web_request *req, const char *name, const char *const *choices,
                          int fallback, int *out, GError **error)
{
    const char *value = param_get(req, name);
    *out = fallback;
    if (value == NULL)
        return TRUE;
    for (int i = 0; choices[i] != NULL; i++)
        if (strcmp(value, choices[i]) == 0) {
            *out = i;
            return TRUE;
        }
    char *list = g_strjoinv(", ", (char **)choices);
    char *q = quoted(value);
    web_bad_parameter(req, error, name, "expected one of %s, not %s", list, q);
    g_free(q);
    g_free(list);
    return FALSE;
}

gboolean web_params_done(struct web_request *req, GError **error)
{
    if (req->query == NULL)
        return TRUE;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, req->query);
    while (g_hash_table_iter_next(&it, &key, NULL))
        if (!g_hash_table_contains(req->consumed, key)) {
            char *q = quoted(key);
            web_bad_parameter(req, error, key, "unknown parameter %s for %s", q, req->path);
            g_free(q);
            return FALSE;
        }
    return TRUE;
}

gboolean web_path_id_only(struct web_request *req, const char *what, gint64 *out, GError **error)
{
    return web_path_id(req, req->segments[1], what, out, error) && web_params_done(req, error);
}

gboolean web_path_id(struct web_request *req, const char *segment, const char *what, gint64 *out,
                     GError **error)
{
    guint64 v = 0;
    if (!g_ascii_string_to_unsigned(segment, 10, 1, G_MAXINT64, &v, NULL)) {
        char *q = quoted(segment);
        web_bad_parameter(req, error, what, "expected a whole number from 1 on, not %s", q);
        g_free(q);
        return FALSE;
    }
    *out = (gint64)v;
    return TRUE;
}

void web_answer_json(struct web_request *req, JsonNode *body)
{
    if (req->body != NULL)
        json_node_unref(req->body);
    req->body = body;
}

void web_answer_object(struct web_request *req, JsonObject *body)
{
    web_answer_json(req, vigil_json_object_node(body));
}

void web_answer_bytes(struct web_request *req, GBytes *body, const char *content_type,
                      const char *filename)
{
    if (req->raw_body != NULL)
        g_bytes_unref(req->raw_body);
    req->raw_body = body;
    g_free(req->raw_content_type);
    req->raw_content_type = g_strdup(content_type);
    g_free(req->raw_filename);
    req->raw_filename = g_strdup(filename);
}

void web_json_set_next(JsonObject *page, char *next)
{
    if (next != NULL)
        json_object_set_string_member(page, "next", next);
    else
        json_object_set_null_member(page, "next");
    g_free(next);
}

void web_answer_page(struct web_request *req, JsonObject *page, const char *name, JsonArray *items,
                     char *next)
{
    if (page == NULL)
        page = json_object_new();
    json_object_set_array_member(page, name, items);
    web_json_set_next(page, next);
    web_answer_object(req, page);
}

char *web_time_text(gint64 us)
{
    GDateTime *t = g_date_time_new_from_unix_utc(us / G_USEC_PER_SEC);
    if (t == NULL)
        return g_strdup("");
    gint64 frac = us % G_USEC_PER_SEC;
    if (frac < 0) { /* before 1970: a whole second back, a positive fraction */
        GDateTime *back = g_date_time_add_seconds(t, -1);
        g_date_time_unref(t);
        t = back;
        frac += G_USEC_PER_SEC;
    }
    char *whole = g_date_time_format(t, "%Y-%m-%dT%H:%M:%S");
    char *text = g_strdup_printf("%s.%06" G_GINT64_FORMAT "Z", whole, frac);
    g_free(whole);
    g_date_time_unref(t);
    return text;
}

const char *web_viewer_uid_param(const struct web_request *req, char buf[24])
{
    if (req->viewer.admin)
        return NULL;
    g_snprintf(buf, 24, "%" G_GINT64_FORMAT, req->viewer.uid);
    return buf;
}

void web_json_set_span(JsonObject *out, gint64 from_us, gint64 to_us)
{
    char *from_iso = web_time_text(from_us), *to_iso = web_time_text(to_us);
    json_object_set_string_member(out, "from", from_iso);
    json_object_set_string_member(out, "to", to_iso);
    g_free(from_iso);
    g_free(to_iso);
}
