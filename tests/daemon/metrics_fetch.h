/* vigil — what the /metrics tests share: a vigild with its endpoint on a
 * port the kernel chose, an HTTP GET, and the tools they need. Include
 * after <cmocka.h>. */
#ifndef VIGIL_TEST_METRICS_FETCH_H
#define VIGIL_TEST_METRICS_FETCH_H

#include <glib.h>

#include "test_daemon.h"

#define METRICS_OPENMETRICS_ACCEPT "application/openmetrics-text; version=1.0.0"

/* Exits 77 saying why when `program` is not on the PATH; under CI
 * (CI=true) that is a failure (exit 1) instead. */
void metrics_require_tool(const char *program, const char *why);

/* Starts vigild with [metrics] listen = 127.0.0.1:0 and `metrics_lines`
 * after it; returns the endpoint's URL, as vigild logged it (g_free it). */
char *metrics_daemon_start(struct test_daemon *d, const char *dir, const char *metrics_lines);

/* GET `url` with `accept` (NULL: none); the body (g_free it), the status
 * and content type (g_free it) when asked for. Fails the test when nothing
 * answers. */
char *metrics_get(const char *url, const char *accept, guint *status, char **content_type);

/* GET `url`: NULL when nothing answers (a server not up yet). */
char *metrics_try_get(const char *url, guint *status);

/* A free TCP port on 127.0.0.1, as the kernel gives one for port 0. */
guint16 metrics_free_port(void);

/* The value of the first sample line that starts with `series` (a name and
 * its labels as written, "vigil_jobs_folded" or
 * "vigil_job_processes{job=\"7\"}"), or NaN when there is none. */
double metrics_sample(const char *text, const char *series);

#endif
