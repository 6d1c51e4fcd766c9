/* vigil — what the /metrics tests share. */
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <libsoup/soup.h>

#include <cmocka.h>

#include "metrics_fetch.h"
#include "test_support.h"

void metrics_require_tool(const char *program, const char *why)
{
    char *path = g_find_program_in_path(program);
    if (path != NULL) {
        g_free(path);
        return;
    }
    gboolean ci = g_strcmp0(g_getenv("CI"), "true") == 0;
    printf("%s: %s is not installed (Debian package prometheus, tools/bootstrap): %s\n",
           ci ? "FAILED under CI" : "skipped", program, why);
    exit(ci ? 1 : 77);
}

char *metrics_daemon_start(struct test_daemon *d, const char *dir, const char *metrics_lines)
{
    char *more = g_strdup_printf("[metrics]\nlisten = 127.0.0.1:0\n%s",
                                 metrics_lines != NULL ? metrics_lines : "");
    test_daemon_start(d, dir, "providers = procstat;meminfo;diskstats;netdev;process;energy\n",
                      more);
    g_free(more);
    /* vigild logs the address it bound before it detaches. */
    char *log = test_read_file(d->log_path);
    const char *at = strstr(log, "metrics on http://");
    if (at == NULL)
        fail_msg("vigild's log does not say where /metrics is: %s", log);
    at += strlen("metrics on ");
    char *url = g_strndup(at, strcspn(at, " \n"));
    g_free(log);
    return url;
}

static char *get(const char *url, const char *accept, guint *status, char **content_type,
                 GError **error)
{
    SoupSession *session = soup_session_new_with_options("timeout", 20, NULL);
    SoupMessage *msg = soup_message_new("GET", url);
    assert_non_null(msg);
    if (accept != NULL)
        soup_message_headers_replace(soup_message_get_request_headers(msg), "Accept", accept);
    GBytes *body = soup_session_send_and_read(session, msg, NULL, error);
    if (body == NULL) {
        g_object_unref(msg);
        g_object_unref(session);
        return NULL;
    }
    if (status != NULL)
        *status = soup_message_get_status(msg);
    if (content_type != NULL)
        *content_type = g_strdup(
            soup_message_headers_get_one(soup_message_get_response_headers(msg), "Content-Type"));
    gsize length = 0;
    const char *data = g_bytes_get_data(body, &length);
    char *text = g_strndup(data != NULL ? data : "", length);
    g_bytes_unref(body);
    g_object_unref(msg);
    g_object_unref(session);
    return text;
}

char *metrics_get(const char *url, const char *accept, guint *status, char **content_type)
{
    GError *error = NULL;
    char *text = get(url, accept, status, content_type, &error);
    if (text == NULL)
        fail_msg("GET %s: %s", url, error->message);
    return text;
}

char *metrics_try_get(const char *url, guint *status)
{
    return get(url, NULL, status, NULL, NULL);
}

guint16 metrics_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    assert_int_equal(bind(fd, (struct sockaddr *)&address, sizeof address), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&address, &length), 0);
    close(fd);
    return ntohs(address.sin_port);
}

double metrics_sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        if (end == NULL)
            end = line + strlen(line);
        gboolean labels_follow = line[n] == '{' && series[n - 1] != '}';
        if (strncmp(line, series, n) == 0 && (line[n] == ' ' || labels_follow)) {
            /* The value is the line's last field (no timestamps here). */
            const char *value = end;
            while (value > line && value[-1] != ' ')
                value--;
            return g_ascii_strtod(value, NULL);
        }
        line = *end != '\0' ? end + 1 : NULL;
    }
    return NAN;
}
