/* vigil-web — one API request as its handler sees it: the path, the
 * query's parameters (checked by the typed getters below), who asks, a
 * warehouse connection, and the answer.
 *
 * A handler runs on a worker thread, never on the main loop: it must not
 * touch the SoupServerMessage, only this struct. */
#ifndef VIGIL_WEB_REQUEST_H
#define VIGIL_WEB_REQUEST_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <libpq-fe.h>

#include "web_settings.h"

#define WEB_ERROR (web_error_quark())
GQuark web_error_quark(void);

/* Each code is one HTTP status and one "code" in the JSON error. */
enum web_error_code {
    WEB_ERROR_BAD_PARAMETER, /* 400 */
    WEB_ERROR_FORBIDDEN,     /* 403 */
    WEB_ERROR_NOT_FOUND,     /* 404 */
    WEB_ERROR_METHOD,        /* 405 */
    WEB_ERROR_BODY,          /* 413: a request with a body (vigil-web reads none) */
    WEB_ERROR_UNAVAILABLE,   /* 503: the warehouse is away or too slow */
    WEB_ERROR_INTERNAL,      /* 500 */
};
guint web_error_status(const GError *error);
const char *web_error_code_name(const GError *error);

/* Who is asking. */
struct web_viewer {
    char *user; /* NULL with auth = none */
    gint64 uid; /* -1 with auth = none */
    gboolean admin;
};

struct web_db_pool;

struct web_request {
    char *path;           /* "/api/v1/runs/7" */
    char **segments;      /* after /api/v1/: {"runs", "7", NULL} */
    GHashTable *query;    /* name → value, copied from the message */
    GHashTable *consumed; /* names a getter has read */
    struct web_viewer viewer;
    const struct web_settings *settings;
    const struct web_context *context;
    PGconn *db; /* while the handler runs */

    /* The answer: a JSON body, or bytes of another type (CSV). */
    JsonNode *body;
    GBytes *raw_body;
    char *raw_content_type;
    char *raw_filename;    /* Content-Disposition, for downloads */
    char *error_parameter; /* the parameter a 400 is about */
};

/* Everything a handler may need besides the request (the config for
 * thresholds, the plugin registry). Read-only once serving. */
struct web_context {
    const struct web_settings *settings;
    struct web_db_pool *pool;
    const void *config; /* vigil_config */
    void *registry;     /* vigil_plugin_registry, guarded by registry_lock */
    GMutex *registry_lock;
};

/* ---- parameters (request.c) ------------------------------------------------
 * Each getter marks the parameter as read. A parameter that is absent
 * leaves *out at the default given; one that is malformed is an error
 * (WEB_ERROR_BAD_PARAMETER) naming it and saying what was expected. */
gboolean web_param_int(struct web_request *req, const char *name, gint64 fallback, gint64 min,
                       gint64 max, gint64 *out, GError **error);
/* Text of at most max_len bytes, valid UTF-8 without control characters;
 * NULL when absent or empty. */
gboolean web_param_text(struct web_request *req, const char *name, gsize max_len, const char **out,
                        GError **error);
/* A time: ISO 8601 (UTC unless it says) or seconds since the epoch; µs
 * since the epoch in *out_us, *given FALSE when absent. */
gboolean web_param_time(struct web_request *req, const char *name, gint64 *out_us, gboolean *given,
                        GError **error);
/* One of `choices` (NULL-terminated); its index, or `fallback` when absent. */
gboolean web_param_choice(struct web_request *req, const char *name, const char *const *choices,
                          int fallback, int *out, GError **error);
/* After the getters: any parameter nobody read is an error (a misspelt
 * filter must not silently return everything). */
gboolean web_params_done(struct web_request *req, GError **error);

/* A path segment that must be an id (1 … 2^63-1). */
gboolean web_path_id(struct web_request *req, const char *segment, const char *what, gint64 *out,
                     GError **error);
/* The id of a path /api/v1/THINGS/ID (its second segment) that takes no
 * parameter at all. */
gboolean web_path_id_only(struct web_request *req, const char *what, gint64 *out, GError **error);

/* Sets error to a 400 about `parameter` (and remembers it for the JSON). */
void web_bad_parameter(struct web_request *req, GError **error, const char *parameter,
                       const char *format, ...) G_GNUC_PRINTF(4, 5);

/* Answer helpers. */
void web_answer_json(struct web_request *req, JsonNode *body);     /* takes it */
void web_answer_object(struct web_request *req, JsonObject *body); /* takes it */
void web_answer_bytes(struct web_request *req, GBytes *body, const char *content_type,
                      const char *filename); /* takes it */

/* A page's "next": the cursor of the page after (taken and freed), or
 * null when `next` is NULL (the last page). */
void web_json_set_next(JsonObject *page, char *next);
/* Answers a page of a list: `page` (NULL: a new object) with `items` as
 * its member `name`, then "next" as web_json_set_next says. Takes `page`,
 * `items` and `next`. */
void web_answer_page(struct web_request *req, JsonObject *page, const char *name, JsonArray *items,
                     char *next);

/* The time µs since the epoch as the API writes it: ISO 8601, UTC, µs. */
char *web_time_text(gint64 us);
/* The members "from" and "to" of `out`, two such times. */
void web_json_set_span(JsonObject *out, gint64 from_us, gint64 to_us);

/* The viewer's uid as a query parameter: NULL for an admin (sees all). */
const char *web_viewer_uid_param(const struct web_request *req, char buf[24]);

#endif
