/* vigil-web — what every answer carries, whoever sends it (http_server.c
 * through libsoup, connections.c on a connection it took back): the
 * security headers, and errors as JSON. */
#ifndef VIGIL_WEB_ANSWER_H
#define VIGIL_WEB_ANSWER_H

#include <libsoup/soup.h>

/* nosniff, no framing, same-origin referrers, a default-src 'self'
 * content security policy. */
void web_answer_common_headers(SoupMessageHeaders *headers);

/* {"error": {"status", "code", "parameter", "message"}} and a newline;
 * `parameter` may be NULL. */
GBytes *web_answer_error_json(const GError *error, const char *parameter);

/* Sets `msg`'s status and JSON body to `error`'s. */
void web_answer_error(SoupServerMessage *msg, const GError *error, const char *parameter);

#endif
