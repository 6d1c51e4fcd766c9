/* vigil — the web suite's fixture: a private warehouse loaded with
 * tests/web/fixture.sql, vigil-web instances started as children (each
 * waited for by its "listening on" line, never by time), and HTTP to them,
 * through libsoup's SoupSession or raw bytes on a socket for the requests
 * a well-behaved client never sends. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_WEB_H
#define VIGIL_TEST_WEB_H

#include <glib.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "test_pg.h"

/* A failure guard for anything the tests wait for (a line, an EOF): far
 * beyond what a slow machine needs, never a timing assertion. */
#define TEST_WEB_GUARD_S 30

/* One vigil-web child. */
struct test_web {
    char *name;      /* for messages: "admin", "remote-user"… */
    GPid pid;        /* 0 when not running */
    guint16 port;    /* on 127.0.0.1 */
    char *base_url;  /* "http://127.0.0.1:PORT" */
    int stderr_fd;   /* read by `reader` for as long as the child lives */
    GThread *reader; /* keeps the pipe drained, so the child never blocks */
    GMutex lock;
    GCond changed;
    GString *log; /* everything the child wrote to stderr */
    gboolean eof;
};

/* Writes `config_text` (its [warehouse] and [web] sections, with listen =
 * 127.0.0.1:0) to DIR/NAME.conf, starts
 * $VIGIL_WEB --config on it and waits for its "listening on" line; fails
 * the test, with what it said, when it ends first. */
void test_web_start(struct test_web *web, const char *dir, const char *name,
                    const char *config_text);
/* The same with the configuration printf makes of `format`, …. */
void test_web_startf(struct test_web *web, const char *dir, const char *name, const char *format,
                     ...) G_GNUC_PRINTF(4, 5);
/* SIGTERM, then waits for it; asserts that it stopped cleanly (status 0). */
void test_web_stop(struct test_web *web);
/* What it said on stderr so far (g_free it). */
char *test_web_log(struct test_web *web);

/* A new folder for a test program (vigil-web-NAME-XXXXXX) whose static/
 * holds index.html and ok.txt (TEST_WEB_OK_TXT); its path (g_free it). */
#define TEST_WEB_OK_TXT "ok-file\n"
char *test_web_folder_new(const char *name);

/* ---- the warehouse ------------------------------------------------------------------------ */

/* Starts a private cluster, migrates it with `vigil db migrate` (config in
 * `dir`) and loads $VIGIL_WEB_FIXTURE with psql. */
void test_web_warehouse_start(struct test_pg *pg, const char *dir);
/* The one text `sql` returns on the cluster's database (NULL for NULL). */
char *test_web_sql_text(const struct test_pg *pg, const char *sql);
double test_web_sql_number(const struct test_pg *pg, const char *sql);

/* ---- answers ------------------------------------------------------------------------------ */

struct test_http {
    guint status;       /* 0: the connection closed without an answer */
    char *content_type; /* its media type only ("application/json"), or NULL */
    char *headers;      /* raw requests: the status line and headers */
    char *body;         /* NUL-terminated */
    gsize length;
    JsonParser *parser;
    JsonNode *json; /* when the body is JSON */
};
void test_http_clear(struct test_http *answer);

/* GET base_url + path_and_query through a SoupSession; `user` (or NULL)
 * is sent as X-Remote-User. */
struct test_http test_web_get(struct test_web *web, const char *path_and_query, const char *user);
/* The same, asserting the status and a JSON body; the JSON's root. The
 * answer (and with it the root) lives until test_http_clear. */
JsonNode *test_web_get_json(struct test_web *web, const char *path_and_query, const char *user,
                            guint want_status, struct test_http *answer);
/* A request made with another method. */
struct test_http test_web_request(struct test_web *web, const char *method,
                                  const char *path_and_query);

/* Raw: connects to 127.0.0.1:port (from `local_address` when not NULL),
 * writes `request` as given, reads until the server closes (guarded by
 * TEST_WEB_GUARD_S), and parses the answer's status line, headers and body. */
struct test_http test_web_raw(guint16 port, const char *local_address, const char *request);
/* A connection to 127.0.0.1:port, with the guard as its socket timeout. */
GSocketConnection *test_web_connect(guint16 port, const char *local_address);
/* Reads until EOF; fails when the guard fires first. The bytes read (g_free). */
char *test_web_read_to_eof(GSocketConnection *connection, gsize *length);
void test_web_write(GSocketConnection *connection, const char *bytes);

/* The answer in `text` (n bytes, taken, NUL-terminated): its status line,
 * headers and body as test_web_raw gives them. */
struct test_http test_web_parse_answer(char *text, gsize n);
/* One answer read from a connection that stays open (keep-alive): up to
 * the end of its headers, then Content-Length bytes, never more; status 0
 * (and what came in `body`) when the server closed before it was whole. */
struct test_http test_web_read_answer(GSocketConnection *connection);

/* vigil-web's resident memory now (VmRSS of /proc/PID/status), in KiB. */
guint64 test_web_rss_kib(struct test_web *web);
/* Waits, guarded, until the last "connections: N open" line vigil-web
 * logged (at [log] level = info) says `want`; fails with the last count. */
void test_web_wait_open_connections(struct test_web *web, guint want);

/* An error answer as docs/web-api.md gives it: this status, this code,
 * and (when not NULL) this parameter; the message is not empty. */
void test_web_assert_error(const struct test_http *answer, guint status, const char *code,
                           const char *parameter);
/* The same as a description of what differs (g_free it), NULL when nothing
 * does: for tests that list every disagreement before failing. */
char *test_web_error_mismatch(const struct test_http *answer, guint status, const char *code,
                              const char *parameter);

/* "1,2,3": the member `member` (an integer) of each object of `array`. */
char *test_web_ids(JsonArray *array, const char *member);
/* The array at `dotted` of the answer (fails when it is not one). */
JsonArray *test_web_array(JsonNode *root, const char *where, const char *dotted);

#endif
