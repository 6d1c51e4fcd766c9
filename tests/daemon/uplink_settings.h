/* vigil — the uplink's settings for vigild's unit tests that run it
 * against a ZeroMQ ROUTER of their own (test_uplink.c,
 * test_outbox_batches.c). */
#ifndef VIGIL_TEST_DAEMON_UPLINK_SETTINGS_H
#define VIGIL_TEST_DAEMON_UPLINK_SETTINGS_H

#include <stdint.h>
#include <glib.h>

#include "test_support.h"
#include "uplink.h"

/* Node `node_id` sending to ipc://DIR/txd.sock and spooling in DIR/spool
 * (endpoint and spool_dir are new strings: g_free them), in memory up to
 * `memory_max_bytes`; the other bounds far above what a test sends, and
 * the timers an hour away unless the test sets them; reconnects quick and
 * the first connect at once. */
static inline void test_uplink_settings(struct vigild_uplink_settings *s, const char *dir,
                                        uint64_t node_id, uint64_t memory_max_bytes)
{
    s->endpoint = g_strdup_printf("ipc://%s/txd.sock", dir);
    s->node_id = node_id;
    s->spool_dir = g_build_filename(dir, "spool", NULL);
    s->spool_max_bytes = 1u << 30;
    s->spool_after_ms = 3600000;
    s->resend_after_ms = 3600000;
    s->memory_max_bytes = memory_max_bytes;
    s->in_flight_max_bytes = 64u << 20;
    s->refused_max_bytes = 64u << 20;
    s->reconnect_ivl_ms = 100;
    s->reconnect_ivl_max_ms = 5000;
    s->connect_delay_max_ms = 0; /* at once, unless the test says */
}

/* A fresh folder for the test in *dir (test_make_dir; test_remove_dir
 * removes it) and the uplink's settings in it, as test_uplink_settings;
 * FALSE when the folder could not be made. */
static inline gboolean test_uplink_settings_in_new_dir(struct vigild_uplink_settings *s, char **dir,
                                                       uint64_t node_id, uint64_t memory_max_bytes)
{
    void *made = NULL;
    if (test_make_dir(&made) != 0)
        return FALSE;
    *dir = made;
    test_uplink_settings(s, *dir, node_id, memory_max_bytes);
    return TRUE;
}

#endif
