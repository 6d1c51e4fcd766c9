/* vigil-web — what every answer carries. */
#include <string.h>
#include <json-glib/json-glib.h>

#include "answer.h"
#include "request.h"
#include "vigil/json_members.h"

void web_answer_common_headers(SoupMessageHeaders *h)
{
    soup_message_headers_replace(h, "X-Content-Type-Options", "nosniff");
    soup_message_headers_replace(h, "X-Frame-Options", "DENY");
    soup_message_headers_replace(h, "Referrer-Policy", "same-origin");
    soup_message_headers_replace(h, "Content-Security-Policy",
                                 "default-src 'self'; img-src 'self' data: blob:; "
                                 "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
}

GBytes *web_answer_error_json(const GError *error, const char *parameter)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "error");
    json_builder_begin_object(b);
    vigil_json_int(b, "status", web_error_status(error));
    vigil_json_string(b, "code", web_error_code_name(error));
    if (parameter != NULL)
        vigil_json_string(b, "parameter", parameter);
    vigil_json_string(b, "message", error->message);
    json_builder_end_object(b);
    json_builder_end_object(b);
    char *text = vigil_json_builder_text(b, FALSE);
    /* A final newline, for people reading answers with curl. */
    gsize n = strlen(text);
    GBytes *bytes = g_bytes_new_take(g_strconcat(text, "\n", NULL), n + 1);
    g_free(text);
    return bytes;
}

void web_answer_error(SoupServerMessage *msg, const GError *error, const char *parameter)
{
    GBytes *body = web_answer_error_json(error, parameter);
    soup_server_message_set_status(msg, web_error_status(error), NULL);
    soup_server_message_set_response(msg, "application/json; charset=utf-8", SOUP_MEMORY_COPY,
                                     g_bytes_get_data(body, NULL), g_bytes_get_size(body));
    g_bytes_unref(body);
}
