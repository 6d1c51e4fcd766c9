/* vigil — the web suite's fixture: warehouse, vigil-web children, HTTP. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <libsoup/soup.h>

#include "test_report.h"
#include "test_support.h"
#include "test_web.h"

#define LISTENING "vigil-web: listening on http://127.0.0.1:"

/* ---- vigil-web children ------------------------------------------------------------------- */

static gpointer read_stderr(gpointer data)
{
    struct test_web *web = data;
    char buf[4096];
    for (;;) {
        ssize_t n = read(web->stderr_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        g_mutex_lock(&web->lock);
        if (n > 0)
            g_string_append_len(web->log, buf, n);
        else
            web->eof = TRUE;
        g_cond_broadcast(&web->changed);
        g_mutex_unlock(&web->lock);
        if (n <= 0)
            return NULL;
    }
}

/* The child dies with the test program, whatever ends it. */
static void die_with_parent(gpointer data)
{
    (void)data;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void test_web_start(struct test_web *web, const char *dir, const char *name,
                    const char *config_text)
{
    memset(web, 0, sizeof *web);
    web->name = g_strdup(name);
    char *file = g_strdup_printf("%s.conf", name);
    char *path = g_build_filename(dir, file, NULL);
    g_free(file);
    assert_true(g_file_set_contents(path, config_text, -1, NULL));
    const char *argv[] = {test_env_or_fail("VIGIL_WEB"), "--config", path, NULL};
    char **env = test_clean_environment(NULL);
    GError *error = NULL;
    gboolean ok = g_spawn_async_with_pipes(
        dir, (char **)argv, env,
        G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDIN_FROM_DEV_NULL | G_SPAWN_STDOUT_TO_DEV_NULL,
        die_with_parent, NULL, &web->pid, NULL, NULL, &web->stderr_fd, &error);
    g_strfreev(env);
    g_free(path);
    if (!ok)
        fail_msg("cannot start vigil-web (%s): %s", name, error->message);
    g_mutex_init(&web->lock);
    g_cond_init(&web->changed);
    web->log = g_string_new(NULL);
    web->reader = g_thread_new("vigil-web stderr", read_stderr, web);

    gint64 deadline = g_get_monotonic_time() + TEST_WEB_GUARD_S * G_USEC_PER_SEC;
    g_mutex_lock(&web->lock);
    const char *line = NULL;
    while ((line = strstr(web->log->str, LISTENING)) == NULL ||
           strchr(line + strlen(LISTENING), '/') == NULL) {
        if (web->eof || !g_cond_wait_until(&web->changed, &web->lock, deadline)) {
            char *said = g_strdup(web->log->str);
            g_mutex_unlock(&web->lock);
            fail_msg("vigil-web (%s) %s before it listened; it said:\n%s", name,
                     web->eof ? "ended" : "said nothing for " G_STRINGIFY(TEST_WEB_GUARD_S) " s",
                     said);
        }
    }
    guint64 port = g_ascii_strtoull(line + strlen(LISTENING), NULL, 10);
    g_mutex_unlock(&web->lock);
    assert_true(port > 0 && port < 65536);
    web->port = (guint16)port;
    web->base_url = g_strdup_printf("http://127.0.0.1:%u", web->port);
}

char *test_web_log(struct test_web *web)
{
    g_mutex_lock(&web->lock);
    char *text = g_strdup(web->log->str);
    g_mutex_unlock(&web->lock);
    return text;
}

void test_web_startf(struct test_web *web, const char *dir, const char *name, const char *format,
                     ...)
{
    va_list args;
    va_start(args, format);
    char *config = g_strdup_vprintf(format, args);
    va_end(args);
    test_web_start(web, dir, name, config);
    g_free(config);
}

void test_web_stop(struct test_web *web)
{
    if (web->pid == 0)
        return;
    kill(web->pid, SIGTERM);
    int status = 0;
    while (waitpid(web->pid, &status, 0) < 0 && errno == EINTR)
        ;
    g_spawn_close_pid(web->pid);
    web->pid = 0;
    g_thread_join(web->reader);
    close(web->stderr_fd);
    char *said = test_web_log(web);
    gboolean clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    g_string_free(web->log, TRUE);
    g_mutex_clear(&web->lock);
    g_cond_clear(&web->changed);
    char *name = web->name;
    g_free(web->base_url);
    web->base_url = NULL;
    if (!clean)
        fail_msg("vigil-web (%s) did not stop cleanly on SIGTERM (status 0x%x); it said:\n%s", name,
                 status, said);
    g_free(said);
    g_free(name);
}

/* ---- the warehouse ------------------------------------------------------------------------ */

char *test_web_folder_new(const char *name)
{
    char *template = g_strdup_printf("vigil-web-%s-XXXXXX", name);
    GError *error = NULL;
    char *dir = g_dir_make_tmp(template, &error);
    assert_null(error);
    char *static_dir = g_build_filename(dir, "static", NULL);
    assert_int_equal(g_mkdir_with_parents(static_dir, 0755), 0);
    g_free(test_new_file(static_dir, "index.html", "<!doctype html><title>vigil</title>\n"));
    g_free(test_new_file(static_dir, "ok.txt", TEST_WEB_OK_TXT));
    g_free(static_dir);
    g_free(template);
    return dir;
}

void test_web_warehouse_start(struct test_pg *pg, const char *dir)
{
    test_pg_start(pg);
    char *path = g_build_filename(dir, "migrate.conf", NULL);
    char *config = g_strdup_printf("[warehouse]\nconninfo = %s\n", test_pg_conninfo(pg));
    assert_true(g_file_set_contents(path, config, -1, NULL));
    struct test_run run =
        test_run_vigil(dir, "db", (const char *[]){"migrate", "--config", path, NULL});
    test_assert_status(&run, 0, "vigil db migrate");
    test_run_clear(&run);
    char *psql = g_find_program_in_path("psql");
    if (psql == NULL)
        fail_msg("psql is not installed: it loads the fixture");
    const char *load[] = {psql,
                          "-X",
                          "-q",
                          "-v",
                          "ON_ERROR_STOP=1",
                          test_pg_conninfo(pg),
                          "-f",
                          test_env_or_fail("VIGIL_WEB_FIXTURE"),
                          NULL};
    char **env = test_clean_environment(NULL);
    run = test_run_program(dir, load, env);
    test_assert_status(&run, 0, "psql -f tests/web/fixture.sql");
    test_run_clear(&run);
    g_strfreev(env);
    g_free(psql);
    g_free(config);
    g_free(path);
}

char *test_web_sql_text(const struct test_pg *pg, const char *sql)
{
    return test_pg_query_text_in(test_pg_conninfo(pg), sql);
}

double test_web_sql_number(const struct test_pg *pg, const char *sql)
{
    char *text = test_web_sql_text(pg, sql);
    if (text == NULL)
        fail_msg("%s: NULL, expected a number", sql);
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0')
        fail_msg("%s: %s is not a number", sql, text);
    g_free(text);
    return v;
}

/* ---- answers ------------------------------------------------------------------------------ */

void test_http_clear(struct test_http *answer)
{
    g_free(answer->content_type);
    g_free(answer->headers);
    g_free(answer->body);
    g_clear_object(&answer->parser);
    memset(answer, 0, sizeof *answer);
}

static void parse_json_body(struct test_http *answer)
{
    if (answer->content_type == NULL || strcmp(answer->content_type, "application/json") != 0)
        return;
    answer->parser = json_parser_new();
    if (json_parser_load_from_data(answer->parser, answer->body, (gssize)answer->length, NULL))
        answer->json = json_parser_get_root(answer->parser);
}

static SoupSession *session(void)
{
    static SoupSession *s;
    if (s == NULL) {
        s = soup_session_new_with_options("timeout", TEST_WEB_GUARD_S, NULL);
        /* Loopback, whatever http_proxy says. */
        soup_session_set_proxy_resolver(s, NULL);
    }
    return s;
}

static struct test_http send_message(struct test_web *web, SoupMessage *msg, const char *what)
{
    GError *error = NULL;
    GBytes *body = soup_session_send_and_read(session(), msg, NULL, &error);
    if (body == NULL)
        fail_msg("%s on vigil-web (%s): %s", what, web->name, error->message);
    struct test_http answer = {.status = soup_message_get_status(msg)};
    const char *type =
        soup_message_headers_get_content_type(soup_message_get_response_headers(msg), NULL);
    answer.content_type = g_strdup(type);
    gsize n = 0;
    const char *data = g_bytes_get_data(body, &n);
    answer.body = g_strndup(data != NULL ? data : "", n);
    answer.length = n;
    g_bytes_unref(body);
    parse_json_body(&answer);
    return answer;
}

struct test_http test_web_get(struct test_web *web, const char *path_and_query, const char *user)
{
    char *url = g_strconcat(web->base_url, path_and_query, NULL);
    SoupMessage *msg = soup_message_new("GET", url);
    if (msg == NULL)
        fail_msg("libsoup refuses the URL %s: make the request raw", url);
    if (user != NULL)
        soup_message_headers_replace(soup_message_get_request_headers(msg), "X-Remote-User", user);
    char *what = g_strdup_printf("GET %s", path_and_query);
    struct test_http answer = send_message(web, msg, what);
    g_free(what);
    g_object_unref(msg);
    g_free(url);
    return answer;
}

JsonNode *test_web_get_json(struct test_web *web, const char *path_and_query, const char *user,
                            guint want_status, struct test_http *answer)
{
    *answer = test_web_get(web, path_and_query, user);
    if (answer->status != want_status)
        fail_msg("GET %s (%s): status %u, expected %u; body: %.2000s", path_and_query, web->name,
                 answer->status, want_status, answer->body);
    if (answer->json == NULL)
        fail_msg("GET %s (%s): not a JSON answer (Content-Type %s): %.2000s", path_and_query,
                 web->name, answer->content_type, answer->body);
    return answer->json;
}

struct test_http test_web_request(struct test_web *web, const char *method,
                                  const char *path_and_query)
{
    char *url = g_strconcat(web->base_url, path_and_query, NULL);
    SoupMessage *msg = soup_message_new(method, url);
    assert_non_null(msg);
    if (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0) {
        GBytes *body = g_bytes_new_static("{}", 2);
        soup_message_set_request_body_from_bytes(msg, "application/json", body);
        g_bytes_unref(body);
    }
    char *what = g_strdup_printf("%s %s", method, path_and_query);
    struct test_http answer = send_message(web, msg, what);
    g_free(what);
    g_object_unref(msg);
    g_free(url);
    return answer;
}

/* ---- raw requests ------------------------------------------------------------------------- */

GSocketConnection *test_web_connect(guint16 port, const char *local_address)
{
    GSocketClient *client = g_socket_client_new();
    g_socket_client_set_enable_proxy(client, FALSE);
    g_socket_client_set_timeout(client, TEST_WEB_GUARD_S);
    if (local_address != NULL) {
        GSocketAddress *local = g_inet_socket_address_new_from_string(local_address, 0);
        assert_non_null(local);
        g_socket_client_set_local_address(client, local);
        g_object_unref(local);
    }
    GSocketAddress *to = g_inet_socket_address_new_from_string("127.0.0.1", port);
    GError *error = NULL;
    GSocketConnection *c = g_socket_client_connect(client, G_SOCKET_CONNECTABLE(to), NULL, &error);
    if (c == NULL)
        fail_msg("cannot connect to 127.0.0.1:%u: %s", port, error->message);
    g_object_unref(to);
    g_object_unref(client);
    return c;
}

void test_web_write(GSocketConnection *connection, const char *bytes)
{
    GError *error = NULL;
    if (!g_output_stream_write_all(g_io_stream_get_output_stream(G_IO_STREAM(connection)), bytes,
                                   strlen(bytes), NULL, NULL, &error))
        fail_msg("cannot write a request: %s", error->message);
}

char *test_web_read_to_eof(GSocketConnection *connection, gsize *length)
{
    GInputStream *in = g_io_stream_get_input_stream(G_IO_STREAM(connection));
    GByteArray *got = g_byte_array_new();
    for (;;) {
        guint8 buf[8192];
        GError *error = NULL;
        gssize n = g_input_stream_read(in, buf, sizeof buf, NULL, &error);
        if (n > 0) {
            g_byte_array_append(got, buf, (guint)n);
            continue;
        }
        if (n < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            fail_msg("the server neither answered nor closed within %d s (%u bytes so far)",
                     TEST_WEB_GUARD_S, got->len);
        /* A reset is the server closing too. */
        g_clear_error(&error);
        break;
    }
    *length = got->len;
    g_byte_array_append(got, (const guint8 *)"", 1);
    return (char *)g_byte_array_free(got, FALSE);
}

/* A chunked body made whole. */
static char *unchunk(const char *body, gsize *length)
{
    GString *out = g_string_new(NULL);
    const char *p = body;
    for (;;) {
        char *end = NULL;
        guint64 size = g_ascii_strtoull(p, &end, 16);
        const char *data = end != NULL ? strstr(end, "\r\n") : NULL;
        if (data == NULL || size == 0)
            break;
        data += 2;
        if (strlen(data) < size)
            break;
        g_string_append_len(out, data, (gssize)size);
        p = data + size + 2;
    }
    *length = out->len;
    return g_string_free(out, FALSE);
}

struct test_http test_web_parse_answer(char *text, gsize n)
{
    struct test_http answer = {0};
    char *split = strstr(text, "\r\n\r\n");
    if (split == NULL || !g_str_has_prefix(text, "HTTP/1.")) {
        answer.headers = g_strdup("");
        answer.body = text;
        answer.length = n;
        return answer;
    }
    answer.headers = g_strndup(text, (gsize)(split - text));
    answer.status = (guint)g_ascii_strtoull(text + strlen("HTTP/1.1 "), NULL, 10);
    char **lines = g_strsplit(answer.headers, "\r\n", -1);
    gboolean chunked = FALSE;
    for (char **l = lines; *l != NULL; l++) {
        if (g_ascii_strncasecmp(*l, "Content-Type:", 13) == 0) {
            char *type = g_strstrip(g_strdup(*l + 13));
            char *semi = strchr(type, ';');
            if (semi != NULL)
                *semi = '\0';
            answer.content_type = g_strdup(g_strstrip(type));
            g_free(type);
        } else if (g_ascii_strncasecmp(*l, "Transfer-Encoding:", 18) == 0 &&
                   strstr(*l, "chunked") != NULL) {
            chunked = TRUE;
        }
    }
    g_strfreev(lines);
    const char *body = split + 4;
    if (chunked) {
        answer.body = unchunk(body, &answer.length);
    } else {
        answer.length = n - (gsize)(body - text);
        answer.body = g_strndup(body, answer.length);
    }
    g_free(text);
    parse_json_body(&answer);
    return answer;
}

struct test_http test_web_raw(guint16 port, const char *local_address, const char *request)
{
    GSocketConnection *c = test_web_connect(port, local_address);
    test_web_write(c, request);
    gsize n = 0;
    char *text = test_web_read_to_eof(c, &n);
    g_object_unref(c);
    return test_web_parse_answer(text, n);
}

/* The Content-Length of the headers in `text` (up to `end`), -1 without one. */
static gint64 content_length(const char *text, const char *end)
{
    char *headers = g_strndup(text, (gsize)(end - text));
    char **lines = g_strsplit(headers, "\r\n", -1);
    gint64 length = -1;
    for (char **l = lines; *l != NULL; l++)
        if (g_ascii_strncasecmp(*l, "Content-Length:", 15) == 0)
            length = (gint64)g_ascii_strtoull(*l + 15, NULL, 10);
    g_strfreev(lines);
    g_free(headers);
    return length;
}

struct test_http test_web_read_answer(GSocketConnection *connection)
{
    GInputStream *in = g_io_stream_get_input_stream(G_IO_STREAM(connection));
    GByteArray *got = g_byte_array_new();
    gint64 want = -1; /* the whole answer's bytes, once the headers say */
    while (want < 0 || got->len < (guint64)want) {
        guint8 buf[8192];
        /* Never past this answer: the connection may carry the next. */
        gsize ask = want < 0 ? 1 : MIN(sizeof buf, (gsize)want - got->len);
        GError *error = NULL;
        gssize n = g_input_stream_read(in, buf, ask, NULL, &error);
        if (n < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            fail_msg("the server neither answered nor closed within %d s (%u bytes so far)",
                     TEST_WEB_GUARD_S, got->len);
        g_clear_error(&error);
        if (n <= 0)
            break; /* closed (or reset) before the answer was whole */
        g_byte_array_append(got, buf, (guint)n);
        if (want < 0 && got->len >= 4 && memcmp(got->data + got->len - 4, "\r\n\r\n", 4) == 0) {
            const char *text = (const char *)got->data;
            gint64 body = content_length(text, text + got->len);
            if (body < 0)
                fail_msg("a kept-alive answer without Content-Length: %.*s", (int)got->len, text);
            want = (gint64)got->len + body;
        }
    }
    gboolean whole = want >= 0 && got->len == (guint64)want;
    gsize n = got->len;
    g_byte_array_append(got, (const guint8 *)"", 1);
    char *text = (char *)g_byte_array_free(got, FALSE);
    if (!whole) {
        struct test_http answer = {.headers = g_strdup(""), .body = text, .length = n};
        return answer;
    }
    return test_web_parse_answer(text, n);
}

guint64 test_web_rss_kib(struct test_web *web)
{
    char *path = g_strdup_printf("/proc/%d/status", (int)web->pid);
    char *text = test_read_file(path);
    const char *line = strstr(text, "\nVmRSS:");
    if (line == NULL)
        fail_msg("%s has no VmRSS", path);
    guint64 kib = g_ascii_strtoull(line + strlen("\nVmRSS:"), NULL, 10);
    g_free(text);
    g_free(path);
    return kib;
}

#define OPEN_CONNECTIONS "connections: "

/* The count of vigil-web's last "connections: N open" line, -1 before any. */
static gint64 last_open_connections(const char *log)
{
    const char *line = g_strrstr(log, OPEN_CONNECTIONS);
    if (line == NULL)
        return -1;
    return (gint64)g_ascii_strtoull(line + strlen(OPEN_CONNECTIONS), NULL, 10);
}

void test_web_wait_open_connections(struct test_web *web, guint want)
{
    gint64 deadline = g_get_monotonic_time() + TEST_WEB_GUARD_S * G_USEC_PER_SEC;
    g_mutex_lock(&web->lock);
    gint64 open = -1;
    while ((open = last_open_connections(web->log->str)) != (gint64)want) {
        if (web->eof || !g_cond_wait_until(&web->changed, &web->lock, deadline)) {
            g_mutex_unlock(&web->lock);
            fail_msg("vigil-web (%s) still has %" G_GINT64_FORMAT
                     " connections open (its last \"" OPEN_CONNECTIONS "N open\" line; -1: none)"
                     " after %d s, expected %u",
                     web->name, open, TEST_WEB_GUARD_S, want);
        }
    }
    g_mutex_unlock(&web->lock);
}

/* ---- assertions --------------------------------------------------------------------------- */

char *test_web_error_mismatch(const struct test_http *answer, guint status, const char *code,
                              const char *parameter)
{
    if (answer->status != status || answer->json == NULL)
        return g_strdup_printf("expected a JSON error %u %s, got status %u (%s): %.1000s", status,
                               code, answer->status, answer->content_type, answer->body);
    JsonNode *e = test_json_node(answer->json, "error");
    JsonObject *o = e != NULL && JSON_NODE_HOLDS_OBJECT(e) ? json_node_get_object(e) : NULL;
    if (o == NULL || json_object_get_int_member_with_default(o, "status", 0) != status ||
        g_strcmp0(json_object_get_string_member_with_default(o, "code", NULL), code) != 0)
        return g_strdup_printf("expected error %u %s, got %.1000s", status, code, answer->body);
    if (parameter != NULL &&
        g_strcmp0(json_object_get_string_member_with_default(o, "parameter", NULL), parameter) != 0)
        return g_strdup_printf("expected an error naming parameter %s, got %.1000s", parameter,
                               answer->body);
    const char *message = json_object_get_string_member_with_default(o, "message", "");
    if (message == NULL || message[0] == '\0')
        return g_strdup_printf("an error without a message: %.1000s", answer->body);
    return NULL;
}

void test_web_assert_error(const struct test_http *answer, guint status, const char *code,
                           const char *parameter)
{
    char *mismatch = test_web_error_mismatch(answer, status, code, parameter);
    if (mismatch != NULL)
        fail_msg("%s", mismatch);
}

char *test_web_ids(JsonArray *array, const char *member)
{
    GString *ids = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonObject *o = json_array_get_object_element(array, i);
        if (o == NULL || !json_object_has_member(o, member))
            fail_msg("element %u has no %s", i, member);
        g_string_append_printf(ids, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "",
                               json_object_get_int_member(o, member));
    }
    return g_string_free(ids, FALSE);
}

JsonArray *test_web_array(JsonNode *root, const char *where, const char *dotted)
{
    JsonNode *node = test_json_node(root, dotted);
    if (node == NULL || !JSON_NODE_HOLDS_ARRAY(node))
        fail_msg("%s: %s is not an array", where, dotted);
    return json_node_get_array(node);
}
