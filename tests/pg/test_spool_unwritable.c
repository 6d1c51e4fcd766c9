/* A spool that cannot be written and a SIGKILL of vigild lose nothing: a
 * program writes 25,000 times while vigild's spool is on a full file
 * system and vigil-txd is down, so no batch is durable; vigild is killed
 * (SIGKILL) and started again with a spool it can write and vigil-txd up;
 * the program writes 25,000 more and exits. The warehouse holds all
 * 50,000: the first vigild released no ring slot of a batch that was
 * neither spooled nor acknowledged, so the second read them again.
 *
 * The full file system is a tmpfs of 64 KiB, filled, in a mount namespace
 * of this test's own (the tests run as root, as tests/daemon/test_clients.c
 * does). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "writer.h"

#define FIRST_WRITES  25000
#define SECOND_WRITES 25000

/* DIR/full: a filled 64 KiB tmpfs holding spool/, seen by this test and
 * the daemons it starts only. */
static char *full_spool(const char *dir)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        fail_msg("a mount namespace of the test's own: %s (the tests run as root)",
                 g_strerror(errno));
    char *mount_point = g_build_filename(dir, "full", NULL);
    assert_int_equal(g_mkdir_with_parents(mount_point, 0700), 0);
    if (mount("tmpfs", mount_point, "tmpfs", 0, "size=64k,mode=0700") != 0)
        fail_msg("mount tmpfs on %s: %s", mount_point, g_strerror(errno));
    char *spool = g_build_filename(mount_point, "spool", NULL);
    assert_int_equal(g_mkdir_with_parents(spool, 0700), 0);
    char *filler = g_build_filename(mount_point, "filler", NULL);
    int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    static const char block[4096];
    while (write(fd, block, sizeof block) > 0)
        ;
    assert_int_equal(errno, ENOSPC);
    close(fd);
    g_free(filler);
    g_free(mount_point);
    return spool;
}

static void unmount_full(const char *dir)
{
    char *mount_point = g_build_filename(dir, "full", NULL);
    umount2(mount_point, MNT_DETACH);
    g_free(mount_point);
}

static gint64 uplink_member(const struct test_daemon *d, const char *name)
{
    JsonNode *status = test_daemon_status(d, 0);
    gint64 value = test_daemon_json_int(json_node_get_object(status), "uplink", name, NULL);
    json_node_unref(status);
    return value;
}

static void test_unwritable_spool_and_sigkill_lose_nothing(void **state)
{
    struct test_txd_fixture *f = *state;
    char *spool = full_spool(f->dir);
    char *config = writer_daemon_config(f, spool, "");
    struct test_daemon d;
    test_daemon_start(&d, f->dir, WRITER_DAEMON_LINES, config);
    struct writer w;
    writer_start(&w, &d, f->dir, FIRST_WRITES, SECOND_WRITES, NULL);
    writer_wait_for_drained(&d, w.pid, FIRST_WRITES);
    /* Not one batch could be spooled, nor sent. */
    assert_true(uplink_member(&d, "spool_errors") > 0);
    assert_int_equal(uplink_member(&d, "acked"), 0);
    g_free(test_daemon_kill(&d));
    unmount_full(f->dir);

    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    char *working = g_build_filename(f->dir, "spool", NULL);
    char *working_config = writer_daemon_config(f, working, "");
    test_daemon_start(&d, f->dir, WRITER_DAEMON_LINES, working_config);
    JsonNode *status = test_daemon_status(&d, 0);
    assert_int_equal(
        test_daemon_json_int(json_node_get_object(status), "processes", "recovered_total", NULL),
        1);
    json_node_unref(status);
    writer_finish(&w);
    writer_wait_for_report(f->conninfo, f->dir, w.pid);
    guint64 stored = writer_writes_stored(f->conninfo, w.pid);
    print_message("%" G_GUINT64_FORMAT " of %d writes stored\n", stored,
                  FIRST_WRITES + SECOND_WRITES);
    assert_int_equal(stored, FIRST_WRITES + SECOND_WRITES);
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT count(*) - count(DISTINCT seq) FROM activities JOIN "
                                 "processes USING (process_id) WHERE pid = %d",
                                 (int)w.pid),
        0);
    g_free(test_daemon_stop(&d));
    g_free(working_config);
    g_free(working);
    g_free(config);
    g_free(spool);
}

static int teardown_all(void **state)
{
    test_daemon_kill_all(); /* before the unmount: it holds the spool open */
    unmount_full(((struct test_txd_fixture *)*state)->dir);
    return test_txd_fixture_teardown(state);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             cmocka_unit_test_setup_teardown(test_unwritable_spool_and_sigkill_lose_nothing,
                                             test_txd_fixture_setup, teardown_all))
