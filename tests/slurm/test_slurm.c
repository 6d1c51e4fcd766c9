/* A real single-node Slurm (Debian's munged, slurmctld and slurmd, started
 * here with a slurm.conf this test writes for this host) with vigil's SPANK
 * plugin and Prolog/Epilog scripts, a private vigild, vigil-txd and
 * PostgreSQL: `srun --vigil` of dd and an `sbatch --wait` script with two
 * steps are instrumented (their reports say so), and the warehouse holds the
 * job with its id, its steps as runs and their bytes; so is `vigil run`
 * as an srun task, without --vigil. Slurm runs without
 * cgroups (proctrack/linuxproc, task/none): none are needed for this.
 *
 * The programs, the plugin, the library and the scripts are the ones the
 * environment names: the build tree's (tests/slurm/meson.build), or a
 * moved install's (tests/install/test_install.sh); nothing else is looked
 * up in either tree.
 *
 * Skipped (77) only where Slurm's programs are not installed, and not
 * under CI, where a missing Slurm is a failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "holder.h"
#include "test_daemon.h"
#include "test_pg.h"
#include "test_report.h"
#include "test_support.h"
#include "test_txd.h"
#include "vigil/local_protocol.h"

/* Bounds that only a failure reaches. */
#define SLURM_READY_TIMEOUT_S 60
#define STOP_TIMEOUT_S        20

static const char *const slurm_programs[] = {"/usr/sbin/munged", "/usr/sbin/slurmctld",
                                             "/usr/sbin/slurmd", "/usr/bin/srun",
                                             "/usr/bin/sbatch",  "/usr/bin/sinfo"};

struct cluster {
    char *dir;
    char *conf_path;
    char *node;
    char *munge_pid_path;
    pid_t slurmctld, slurmd;
    struct test_pg pg;
    char *conninfo;
    struct test_txd txd;
    struct test_daemon vigild;
    gboolean txd_started, vigild_started;
};

static struct cluster cluster;

static char *path_in(const char *name)
{
    return g_build_filename(cluster.dir, name, NULL);
}

/* The environment of Slurm's commands: our clean one with the test's
 * slurm.conf, and what `vars` add. */
static char **slurm_environment(const char *const *vars)
{
    GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(all, g_strconcat("SLURM_CONF=", cluster.conf_path, NULL));
    for (; vars != NULL && *vars != NULL; vars++)
        g_ptr_array_add(all, g_strdup(*vars));
    g_ptr_array_add(all, NULL);
    char **env = test_clean_environment((const char *const *)all->pdata);
    g_ptr_array_free(all, TRUE);
    return env;
}

/* Runs a Slurm command (under `timeout`, so that a Slurm that never
 * answers fails the test instead of hanging it). */
static struct test_run slurm_command(const char *const *argv, const char *const *vars)
{
    GPtrArray *full = g_ptr_array_new();
    const char *bounded[] = {"timeout", "-k", "5", "60"};
    for (size_t i = 0; i < G_N_ELEMENTS(bounded); i++)
        g_ptr_array_add(full, (gpointer)bounded[i]);
    for (; *argv != NULL; argv++)
        g_ptr_array_add(full, (gpointer)*argv);
    g_ptr_array_add(full, NULL);
    char **env = slurm_environment(vars);
    struct test_run run = test_run_program(cluster.dir, (const char *const *)full->pdata, env);
    g_strfreev(env);
    g_ptr_array_free(full, TRUE);
    return run;
}

/* A daemon in the foreground (-D), its output in DIR/NAME.out. */
static pid_t start_foreground(const char *program, const char *name)
{
    char *out = g_strdup_printf("%s/%s.out", cluster.dir, name);
    const char *argv[] = {
        "/bin/sh", "-c", "exec \"$0\" -D -f \"$1\" >\"$2\" 2>&1", program, cluster.conf_path,
        out,       NULL};
    char **env = slurm_environment(NULL);
    GPid pid = 0;
    GError *error = NULL;
    if (!g_spawn_async(cluster.dir, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                       &error))
        fail_msg("cannot start %s: %s", program, error->message);
    g_strfreev(env);
    g_free(out);
    return pid;
}

/* SIGTERM, then SIGKILL if it is still there after a while; reaps it. */
static void stop_child(pid_t *pid)
{
    if (*pid <= 0)
        return;
    kill(*pid, SIGTERM);
    gint64 deadline = g_get_monotonic_time() + STOP_TIMEOUT_S * G_USEC_PER_SEC;
    while (waitpid(*pid, NULL, WNOHANG) == 0) {
        if (g_get_monotonic_time() > deadline) {
            kill(*pid, SIGKILL);
            waitpid(*pid, NULL, 0);
            break;
        }
        g_usleep(20000); /* polling for its end, with a deadline */
    }
    *pid = 0;
}

/* munged daemonizes and writes its pid file; it is stopped by that pid. */
static void stop_munged(void)
{
    char *text = NULL;
    if (cluster.munge_pid_path == NULL ||
        !g_file_get_contents(cluster.munge_pid_path, &text, NULL, NULL))
        return;
    pid_t pid = (pid_t)g_ascii_strtoll(text, NULL, 10);
    g_free(text);
    if (pid <= 0 || kill(pid, SIGTERM) != 0)
        return;
    gint64 deadline = g_get_monotonic_time() + STOP_TIMEOUT_S * G_USEC_PER_SEC;
    while (kill(pid, 0) == 0 && g_get_monotonic_time() < deadline)
        g_usleep(20000); /* polling for its end, with a deadline */
    if (kill(pid, 0) == 0)
        kill(pid, SIGKILL);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    assert_true(g_file_set_contents(path, text, -1, NULL));
    assert_int_equal(chmod(path, mode), 0);
}

static void start_munged(void)
{
    char *key = path_in("munge.key"), *socket_path = path_in("munge.socket");
    cluster.munge_pid_path = path_in("munged.pid");
    char *log = path_in("munged.log"), *seed = path_in("munged.seed");
    guint8 bytes[1024];
    for (size_t i = 0; i < sizeof bytes; i += 4) {
        guint32 r = g_random_int();
        memcpy(bytes + i, &r, 4);
    }
    assert_true(g_file_set_contents(key, (const char *)bytes, sizeof bytes, NULL));
    assert_int_equal(chmod(key, 0600), 0);
    /* --force: the test's folder is under /tmp, which munged finds too open
     * for a socket; what it guards against is not a concern here. */
    const char *argv[] = {"/usr/sbin/munged",
                          "--force",
                          "--socket",
                          socket_path,
                          "--key-file",
                          key,
                          "--pid-file",
                          cluster.munge_pid_path,
                          "--log-file",
                          log,
                          "--seed-file",
                          seed,
                          NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(cluster.dir, argv, env);
    g_strfreev(env);
    test_assert_status(&run, 0, "munged");
    test_run_clear(&run);
    g_free(key);
    g_free(socket_path);
    g_free(log);
    g_free(seed);
}

/* plugstack.conf: the plugin with $VIGIL_PRELOAD_LIB, the test's vigild
 * and `more` arguments. srun and each step's slurmstepd read it anew. */
static void write_plugstack(const char *more)
{
    char *path = path_in("plugstack.conf"), *next = path_in("plugstack.conf.new");
    char *text =
        g_strdup_printf("required %s preload=%s socket=%s %s\n", test_env_or_fail("VIGIL_SPANK"),
                        test_env_or_fail("VIGIL_PRELOAD_LIB"), cluster.vigild.socket_path, more);
    write_file(next, text, 0644);
    assert_int_equal(rename(next, path), 0);
    g_free(text);
    g_free(next);
    g_free(path);
}

/* slurm.conf for one node, this host, on ports the kernel gave, with the
 * plugin and the scripts; no cgroups: processes are tracked by their
 * parents (proctrack/linuxproc) and tasks are not bound (task/none). */
static void write_slurm_conf(void)
{
    char *state = path_in("state"), *spool = path_in("spool");
    assert_int_equal(mkdir(state, 0700), 0);
    assert_int_equal(mkdir(spool, 0700), 0);
    char *plugstack = path_in("plugstack.conf");
    /* bogus=1: a mistake in plugstack.conf is logged and fails no job. */
    write_plugstack("bogus=1");
    /* slurmd gives a prolog only Slurm's variables: the wrappers add where
     * $VIGIL_CLI and the test's vigild are, as an installed
     * script would find them from its configured path and vigil.conf. */
    const char *scripts[] = {"prolog", "epilog"};
    for (size_t i = 0; i < G_N_ELEMENTS(scripts); i++) {
        char *wrapper = path_in(scripts[i]);
        char *text = g_strdup_printf("#!/bin/sh\nexport VIGIL_CLI='%s' VIGIL_SOCKET='%s'\nexec "
                                     "'%s/vigil-%s' 2>>'%s/%s.log'\n",
                                     test_env_or_fail("VIGIL_CLI"), cluster.vigild.socket_path,
                                     test_env_or_fail("VIGIL_SLURM_SCRIPTS"), scripts[i],
                                     cluster.dir, scripts[i]);
        write_file(wrapper, text, 0755);
        g_free(text);
        g_free(wrapper);
    }
    char *conf =
        g_strdup_printf("ClusterName=vigiltest\n"
                        "SlurmctldHost=localhost\n"
                        "SlurmUser=root\n"
                        "SlurmdUser=root\n"
                        "AuthType=auth/munge\n"
                        "AuthInfo=socket=%s/munge.socket\n"
                        "CredType=cred/munge\n"
                        "SlurmctldPort=%d\n"
                        "SlurmdPort=%d\n"
                        "StateSaveLocation=%s\n"
                        "SlurmdSpoolDir=%s\n"
                        "SlurmctldPidFile=%s/slurmctld.pid\n"
                        "SlurmdPidFile=%s/slurmd.pid\n"
                        "SlurmctldLogFile=%s/slurmctld.log\n"
                        "SlurmdLogFile=%s/slurmd.log\n"
                        "ProctrackType=proctrack/linuxproc\n"
                        "TaskPlugin=task/none\n"
                        "JobAcctGatherType=jobacct_gather/none\n"
                        "SelectType=select/cons_tres\n"
                        "SelectTypeParameters=CR_Core\n"
                        "MpiDefault=none\n"
                        "ReturnToService=2\n"
                        "PlugStackConfig=%s\n"
                        "Prolog=%s/prolog\n"
                        "Epilog=%s/epilog\n"
                        "NodeName=%s NodeAddr=127.0.0.1 CPUs=%ld State=UNKNOWN\n"
                        "PartitionName=vigil Nodes=%s Default=YES MaxTime=INFINITE State=UP\n",
                        cluster.dir, test_free_port(), test_free_port(), state, spool, cluster.dir,
                        cluster.dir, cluster.dir, cluster.dir, plugstack, cluster.dir, cluster.dir,
                        cluster.node, sysconf(_SC_NPROCESSORS_ONLN), cluster.node);
    write_file(cluster.conf_path, conf, 0644);
    g_free(conf);
    g_free(plugstack);
    g_free(state);
    g_free(spool);
}

/* Polls sinfo until the node is idle (a deadline, not a sleep). */
static void wait_for_idle_node(void)
{
    gint64 deadline = g_get_monotonic_time() + SLURM_READY_TIMEOUT_S * G_USEC_PER_SEC;
    const char *argv[] = {"sinfo", "-h", "-o", "%T", "-n", cluster.node, NULL};
    for (;;) {
        struct test_run run = slurm_command(argv, NULL);
        gboolean idle = run.status == 0 && g_str_has_prefix(run.out, "idle");
        char *said = g_strdup_printf("%s%s", run.out, run.err);
        test_run_clear(&run);
        if (idle) {
            g_free(said);
            return;
        }
        if (g_get_monotonic_time() > deadline) {
            char *log = NULL;
            char *log_path = path_in("slurmd.log");
            g_file_get_contents(log_path, &log, NULL, NULL);
            fail_msg("node %s not idle after %d s (sinfo: %s); slurmd.log:\n%s", cluster.node,
                     SLURM_READY_TIMEOUT_S, said, log != NULL ? log : "(none)");
        }
        g_free(said);
        g_usleep(100000); /* polling a condition, with a deadline */
    }
}

static gboolean slurm_installed(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(slurm_programs); i++)
        if (!g_file_test(slurm_programs[i], G_FILE_TEST_IS_EXECUTABLE))
            return FALSE;
    return TRUE;
}

static int cluster_setup(void **state)
{
    (void)state;
    cluster.dir = g_dir_make_tmp("vigil-slurm-XXXXXX", NULL);
    assert_non_null(cluster.dir);
    cluster.conf_path = path_in("slurm.conf");
    char host[256];
    assert_int_equal(gethostname(host, sizeof host), 0);
    host[sizeof host - 1] = '\0';
    cluster.node = g_strndup(host, strcspn(host, "."));

    test_pg_start(&cluster.pg);
    cluster.conninfo = test_pg_new_database(&cluster.pg);
    test_txd_start(&cluster.txd, cluster.dir, cluster.conninfo, NULL);
    cluster.txd_started = TRUE;
    char *uplink = g_strdup_printf("[uplink]\nendpoint = %s\nspool_dir = %s/vigild-spool\n"
                                   "[warehouse]\nconninfo = %s\n",
                                   cluster.txd.endpoint, cluster.dir, cluster.conninfo);
    test_daemon_start(&cluster.vigild, cluster.dir,
                      "providers = procstat;process\ncycle_ms = 200\n", uplink);
    cluster.vigild_started = TRUE;
    g_free(uplink);

    start_munged();
    write_slurm_conf();
    cluster.slurmctld = start_foreground("/usr/sbin/slurmctld", "slurmctld");
    cluster.slurmd = start_foreground("/usr/sbin/slurmd", "slurmd");
    wait_for_idle_node();
    return 0;
}

static int cluster_teardown(void **state)
{
    (void)state;
    stop_child(&cluster.slurmd);
    stop_child(&cluster.slurmctld);
    stop_munged();
    if (cluster.vigild_started)
        g_free(test_daemon_stop(&cluster.vigild));
    if (cluster.txd_started) {
        g_free(test_txd_stop(&cluster.txd));
        test_txd_clear(&cluster.txd);
    }
    test_pg_cleanup(&cluster.pg);
    test_remove_tree(cluster.dir);
    g_free(cluster.dir);
    g_free(cluster.conf_path);
    g_free(cluster.node);
    g_free(cluster.munge_pid_path);
    g_free(cluster.conninfo);
    return 0;
}

/* The one report in the test's folder whose name starts with `prefix`. */
static char *only_report(const char *prefix)
{
    GDir *dir = g_dir_open(cluster.dir, 0, NULL);
    assert_non_null(dir);
    char *found = NULL;
    for (const char *name; (name = g_dir_read_name(dir)) != NULL;)
        if (g_str_has_prefix(name, prefix) && g_str_has_suffix(name, ".json")) {
            if (found != NULL)
                fail_msg("two reports %s*.json: %s and %s", prefix, found, name);
            found = path_in(name);
        }
    g_dir_close(dir);
    if (found == NULL)
        fail_msg("no report %s*.json in %s: the step was not instrumented", prefix, cluster.dir);
    return found;
}

/* Waits until the warehouse has the finished process of run `run_key`, then
 * gives the run's bytes written and the scheduler job id it is filed
 * under. */
static gint64 warehouse_run_bytes(const char *run_key, const char *job_id)
{
    char *done = g_strdup_printf("SELECT count(*) FROM run_summaries JOIN processes p USING "
                                 "(process_id) JOIN runs r USING (run_id) WHERE r.run_key = '%s' "
                                 "AND p.end_time IS NOT NULL",
                                 run_key);
    test_pg_wait_for_count_in(cluster.conninfo, done, 1);
    g_free(done);
    test_pg_assert_text_printf(cluster.conninfo, job_id,
                               "SELECT coalesce(scheduler_job_id, '') FROM run_overview WHERE "
                               "run_key = '%s'",
                               run_key);
    char *bytes =
        g_strdup_printf("SELECT bytes_written FROM run_overview WHERE run_key = '%s'", run_key);
    gint64 written = (gint64)test_pg_query_u64_in(cluster.conninfo, bytes);
    g_free(bytes);
    return written;
}

/* Waits until vigild's log has the notice "job WHAT begins|ends (user
 * root, nodes NODE)": the epilog's and the plugin's last notices come after
 * srun and sbatch --wait return. */
static void wait_for_notice(const char *what, const char *verb)
{
    char *line = g_strdup_printf("job %s %s (user root, nodes %s)", what, verb, cluster.node);
    gint64 deadline = g_get_monotonic_time() + SLURM_READY_TIMEOUT_S * G_USEC_PER_SEC;
    for (;;) {
        char *log = NULL;
        g_file_get_contents(cluster.vigild.log_path, &log, NULL, NULL);
        gboolean found = log != NULL && strstr(log, line) != NULL;
        if (!found && g_get_monotonic_time() > deadline)
            fail_msg("vigild never logged \"%s\"; its log:\n%s", line, log != NULL ? log : "");
        g_free(log);
        if (found)
            break;
        g_usleep(50000); /* polling a condition, with a deadline */
    }
    g_free(line);
}

static gboolean vigild_logged(const char *what, const char *verb)
{
    char *line = g_strdup_printf("job %s %s (", what, verb), *log = NULL;
    assert_true(g_file_get_contents(cluster.vigild.log_path, &log, NULL, NULL));
    gboolean found = strstr(log, line) != NULL;
    g_free(log);
    g_free(line);
    return found;
}

/* The Prolog/Epilog scripts said nothing: `vigil job` succeeded (they
 * print only its failures, and exit 0 either way). */
static void assert_scripts_quiet(void)
{
    const char *logs[] = {"prolog.log", "epilog.log"};
    for (size_t i = 0; i < G_N_ELEMENTS(logs); i++) {
        char *path = path_in(logs[i]), *text = NULL;
        if (g_file_get_contents(path, &text, NULL, NULL) && text[0] != '\0')
            fail_msg("%s: %s", logs[i], text);
        g_free(text);
        g_free(path);
    }
}

/* The job id a command printed: a task's $SLURM_JOB_ID, or sbatch
 * --parsable's "ID" or "ID;CLUSTER"; the test fails when there is none.
 * g_free it. */
static char *job_id_of(const struct test_run *run)
{
    char *job_id = g_strstrip(g_strdup(run->out));
    job_id[strcspn(job_id, ";")] = '\0';
    assert_true(job_id[0] != '\0');
    return job_id;
}

/* A step's report: its run key, and the bytes dd wrote, which the
 * warehouse has too. */
static void check_step(const char *report_prefix, const char *job_id, const char *step,
                       gint64 bytes)
{
    char *path = only_report(report_prefix);
    struct test_report rep = test_report_load(path);
    char *run_key = g_strdup_printf("slurm-%s.%s", job_id, step);
    assert_string_equal(test_report_string(&rep, "run_key"), run_key);
    /* srun gives the task its program's full path as argv[0]. */
    char *program = g_path_get_basename(test_report_string(&rep, "program"));
    assert_string_equal(program, "dd");
    g_free(program);
    assert_int_equal(test_report_int(&rep, "io_bytes_written"), bytes);
    assert_int_equal(warehouse_run_bytes(run_key, job_id), bytes);
    test_report_free(&rep);
    g_free(run_key);
    g_free(path);
}

static void test_srun_vigil_instruments_the_step(void **state)
{
    (void)state;
    char *report = g_strdup_printf("--vigil=%s/srun-%%p.json", cluster.dir);
    char *of = g_strdup_printf("of=%s/srun.out", cluster.dir);
    const char *argv[] = {"srun",
                          report,
                          "/bin/sh",
                          "-c",
                          "echo $SLURM_JOB_ID; exec dd if=/dev/zero \"$0\" bs=4096 count=256 "
                          "status=none",
                          of,
                          NULL};
    const char *vars[] = {"VIGIL_REPORT_FORMAT=json", NULL};
    struct test_run run = slurm_command(argv, vars);
    test_assert_status(&run, 0, "srun --vigil");
    /* plugstack.conf's mistake is the admin's to read, not the user's. */
    assert_null(strstr(run.err, "spank_vigil"));
    char *job_id = job_id_of(&run);
    test_run_clear(&run);
    check_step("srun-", job_id, "0", 256 * 4096);
    /* vigild was told of the job (the plugin's job prolog and the Prolog
     * script) and of its step (the plugin in slurmstepd), begin and end. */
    char *step = g_strdup_printf("%s.0", job_id);
    wait_for_notice(job_id, "begins");
    wait_for_notice(step, "begins");
    wait_for_notice(step, "ends");
    wait_for_notice(job_id, "ends");
    assert_scripts_quiet();
    g_free(step);

    /* The plugin's mistake in plugstack.conf was said in slurmd's log,
     * and failed no job. */
    char *log = NULL, *log_path = path_in("slurmd.log");
    assert_true(g_file_get_contents(log_path, &log, NULL, NULL));
    test_assert_contains(log, "spank_vigil: plugstack.conf: unknown argument 'bogus=1'");
    g_free(log);
    g_free(log_path);
    g_free(job_id);
    g_free(of);
    g_free(report);
}

/* `vigil run` as the task, without --vigil: the same step, instrumented by
 * vigil run alone (its run key from Slurm's job and step ids), as a site
 * without the plugin, or a moved install, has it. */
static void test_vigil_run_under_srun_instruments_the_step(void **state)
{
    (void)state;
    char *report = g_strdup_printf("--report=json:%s/plain-run-%%p.json", cluster.dir);
    char *of = g_strdup_printf("of=%s/plain-run.out", cluster.dir);
    const char *argv[] = {"srun",
                          test_env_or_fail("VIGIL_CLI"),
                          "run",
                          report,
                          "--",
                          "/bin/sh",
                          "-c",
                          "echo $SLURM_JOB_ID; exec dd if=/dev/zero \"$0\" bs=4096 count=32 "
                          "status=none",
                          of,
                          NULL};
    char *socket_var = g_strconcat("VIGIL_SOCKET=", cluster.vigild.socket_path, NULL);
    const char *vars[] = {socket_var, NULL};
    struct test_run run = slurm_command(argv, vars);
    test_assert_status(&run, 0, "srun vigil run");
    char *job_id = job_id_of(&run);
    test_run_clear(&run);
    check_step("plain-run-", job_id, "0", 32 * 4096);
    g_free(job_id);
    g_free(socket_var);
    g_free(of);
    g_free(report);
}

/* What an srun task finds in LD_PRELOAD, with `option` (or none); its job
 * id in *job_id (g_free it). */
static char *task_preload(const char *option, char **job_id)
{
    const char *script = "echo \"$SLURM_JOB_ID\"; echo \"$LD_PRELOAD\"";
    const char *with[] = {"srun", option, "/bin/sh", "-c", script, NULL};
    const char *without[] = {"srun", "/bin/sh", "-c", script, NULL};
    struct test_run run = slurm_command(option != NULL ? with : without, NULL);
    test_assert_status(&run, 0, "srun");
    char **lines = g_strsplit(run.out, "\n", 3);
    assert_non_null(lines[0]);
    assert_non_null(lines[1]);
    *job_id = g_strdup(lines[0]);
    char *out = g_strdup(lines[1]);
    g_strfreev(lines);
    test_run_clear(&run);
    return out;
}

static void test_without_vigil_a_step_is_not_instrumented(void **state)
{
    (void)state;
    char *plain_job, *off_job;
    char *plain = task_preload(NULL, &plain_job);
    char *off = task_preload("--vigil=off", &off_job);
    assert_string_equal(plain, "");
    assert_string_equal(off, "");
    /* The Prolog and Epilog scripts tell vigild of every job, monitored or
     * not; the plugin tells of no step it does not monitor. */
    wait_for_notice(plain_job, "begins");
    wait_for_notice(plain_job, "ends");
    wait_for_notice(off_job, "ends");
    char *step = g_strdup_printf("%s.0", plain_job);
    assert_false(vigild_logged(step, "begins"));
    assert_scripts_quiet();
    g_free(step);
    g_free(off_job);
    g_free(plain_job);
    g_free(off);
    g_free(plain);
}

/* default=on in plugstack.conf: every job, without --vigil, unless the
 * user says --vigil=off. */
static void test_default_on_monitors_every_job_unless_off(void **state)
{
    (void)state;
    write_plugstack("default=on");
    char *plain_job, *off_job;
    char *plain = task_preload(NULL, &plain_job);
    char *off = task_preload("--vigil=off", &off_job);
    write_plugstack("bogus=1");
    g_free(plain_job);
    g_free(off_job);
    assert_string_equal(plain, test_env_or_fail("VIGIL_PRELOAD_LIB"));
    assert_string_equal(off, "");
    g_free(off);
    g_free(plain);
}

/* The warehouse's job, from the notices vigild forwarded (user, uid, node
 * list, begin and end; each step's begin and end on this node) and from its
 * runs (a step's from its run key), and `vigil report --job`. */
static void check_job_in_warehouse(const char *job_id)
{
    char *ended = g_strdup_printf("SELECT count(*) FROM jobs j JOIN job_steps s USING (job_id) "
                                  "WHERE j.scheduler_job_id = '%s' AND j.end_time IS NOT NULL "
                                  "AND s.step_id = '1' AND s.end_time IS NOT NULL",
                                  job_id);
    test_pg_wait_for_count_in(cluster.conninfo, ended, 1);
    g_free(ended);
    char *sql = g_strdup_printf("SELECT user_name || ' ' || uid || ' ' || node_list || ' ' || "
                                "(begin_time < end_time) FROM jobs WHERE scheduler_job_id = '%s'",
                                job_id);
    char *job = test_pg_query_text_in(cluster.conninfo, sql);
    char *want = g_strdup_printf("root 0 %s true", cluster.node);
    assert_string_equal(job, want);
    g_free(want);
    g_free(job);
    g_free(sql);
    /* '' is the whole job (the prolog's and the plugin's job notices). */
    test_pg_assert_text_printf(
        cluster.conninfo, ":true 0:true 1:true batch:true",
        "SELECT string_agg(s.step_id || ':' || (s.begin_time <= s.end_time), "
        "' ' ORDER BY s.step_id) FROM job_steps s JOIN jobs USING (job_id) "
        "WHERE scheduler_job_id = '%s'",
        job_id);
    sql = g_strdup_printf("SELECT string_agg(step_id || ':' || run_key || ':' || hosts || ':' || "
                          "bytes_written, ' ' ORDER BY step_id) FROM job_runs WHERE "
                          "scheduler_job_id = '%s' AND step_id IS NOT NULL",
                          job_id);
    char *runs = test_pg_query_text_in(cluster.conninfo, sql);
    /* cppcheck 2.10 reads %1$s as the third argument. */
    // cppcheck-suppress invalidPrintfArgType_s
    char *want_runs = g_strdup_printf("0:slurm-%1$s.0:%2$s:%3$d 1:slurm-%1$s.1:%2$s:%4$d", job_id,
                                      cluster.node, 128 * 4096, 64 * 4096);
    assert_string_equal(runs, want_runs);
    g_free(want_runs);
    g_free(runs);
    g_free(sql);

    const char *args[] = {"--config", cluster.vigild.config_path, "--job", job_id, NULL};
    struct test_run run = test_run_vigil(cluster.dir, "report", args);
    char *step0 = g_strdup_printf("STEP 0                     dd on %s, 1 process, read 512.0 KiB "
                                  "(524288 B), written 512.0 KiB (524288 B), ",
                                  cluster.node);
    test_assert_out(&run, 0, "vigil report --job", "USER                       root (uid 0)\n",
                    step0, NULL);
    test_run_clear(&run);
    g_free(step0);
}

static void test_sbatch_vigil_instruments_each_step(void **state)
{
    (void)state;
    char *script_path = path_in("job.sh");
    char *script = g_strdup_printf(
        "#!/bin/sh\n"
        "srun --vigil=%1$s/step0-%%p.json dd if=/dev/zero of=%1$s/step0.out bs=4096 count=128 "
        "status=none\n"
        "srun --vigil=%1$s/step1-%%p.json dd if=/dev/zero of=%1$s/step1.out bs=4096 count=64 "
        "status=none\n",
        cluster.dir);
    write_file(script_path, script, 0755);
    char *output = g_strdup_printf("--output=%s/job.out", cluster.dir);
    const char *argv[] = {"sbatch", "--vigil", "--wait", "--parsable", output, script_path, NULL};
    const char *vars[] = {"VIGIL_REPORT_FORMAT=json", NULL};
    struct test_run run = slurm_command(argv, vars);
    test_assert_status(&run, 0, "sbatch --vigil --wait");
    char *job_id = job_id_of(&run);
    test_run_clear(&run);
    check_step("step0-", job_id, "0", 128 * 4096);
    check_step("step1-", job_id, "1", 64 * 4096);
    const char *steps[] = {"batch", "0", "1"};
    for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
        char *step = g_strdup_printf("%s.%s", job_id, steps[i]);
        wait_for_notice(step, "begins");
        wait_for_notice(step, "ends");
        g_free(step);
    }
    wait_for_notice(job_id, "ends");
    check_job_in_warehouse(job_id);
    /* The batch script itself ran under the library too: its report went
     * to its stderr, the job's output, under the job's run key. */
    char *out_path = path_in("job.out"), *out = NULL;
    assert_true(g_file_get_contents(out_path, &out, NULL, NULL));
    test_assert_contains(out, "\"vigil_report\"");
    char *batch_key = g_strdup_printf("\"slurm-%s\"", job_id);
    test_assert_contains(out, batch_key);
    g_free(batch_key);
    g_free(out);
    g_free(out_path);
    g_free(job_id);
    g_free(output);
    g_free(script);
    g_free(script_path);
}

/* Polls squeue until job `job_id` has left the queue, with a deadline. */
static void wait_for_job_end(const char *job_id)
{
    const char *argv[] = {"squeue", "-h", "-j", job_id, NULL};
    gint64 deadline = g_get_monotonic_time() + SLURM_READY_TIMEOUT_S * G_USEC_PER_SEC;
    for (;;) {
        struct test_run run = slurm_command(argv, NULL);
        gboolean queued = run.status == 0 && g_strstrip(run.out)[0] != '\0';
        test_run_clear(&run);
        if (!queued)
            return;
        if (g_get_monotonic_time() > deadline)
            fail_msg("job %s was still queued after %d s", job_id, SLURM_READY_TIMEOUT_S);
        g_usleep(100000); /* polling a condition, with a deadline */
    }
}

/* Job ids are predictable: nobody registers the first step's run key of a
 * job that is held, before it runs. The job's step is still its own
 * user's run (root's, who submitted it), with dd's bytes; nobody's process
 * is in a run of its own (issue 30). */
static void test_a_squatted_slurm_key_stays_the_jobs(void **state)
{
    (void)state;
    char *report = g_strdup_printf("--vigil=%s/squat-%%p.json", cluster.dir);
    char *wrap = g_strdup_printf("--wrap=srun %s dd if=/dev/zero of=%s/squat.out bs=4096 "
                                 "count=16 status=none",
                                 report, cluster.dir);
    char *output = g_strdup_printf("--output=%s/squat-job.out", cluster.dir);
    const char *submit[] = {"sbatch", "--hold", "--parsable", output, wrap, NULL};
    const char *vars[] = {"VIGIL_REPORT_FORMAT=json", NULL};
    struct test_run run = slurm_command(submit, vars);
    test_assert_status(&run, 0, "sbatch --hold");
    char *job_id = job_id_of(&run);
    test_run_clear(&run);

    assert_int_equal(chmod(cluster.dir, 0755), 0);
    char *step_key = g_strdup_printf("slurm-%s.0", job_id);
    char *apart_key = g_strdup_printf("%s@uid65534", step_key);
    struct holder squatter;
    holder_start(&squatter, cluster.vigild.socket_path, 65534, step_key);
    assert_int_equal(squatter.answer.type, VIGIL_LOCAL_REGISTERED_APART);
    assert_string_equal(squatter.answer.run_key, apart_key);

    const char *release[] = {"scontrol", "release", job_id, NULL};
    run = slurm_command(release, NULL);
    test_assert_status(&run, 0, "scontrol release");
    test_run_clear(&run);
    wait_for_job_end(job_id);
    check_step("squat-", job_id, "0", 16 * 4096);
    char *sql = g_strdup_printf("SELECT count(*) FROM runs r JOIN processes p USING (run_id) "
                                "WHERE r.run_key = '%s' AND r.uid = 65534 AND p.uid = 65534",
                                apart_key);
    test_pg_wait_for_count_in(cluster.conninfo, sql, 1);
    g_free(sql);
    sql = g_strdup_printf("SELECT count(*) FROM runs r WHERE r.run_key = '%s' AND r.uid = 0 AND "
                          "NOT EXISTS (SELECT 1 FROM processes p WHERE p.run_id = r.run_id AND "
                          "p.uid <> 0)",
                          step_key);
    assert_int_equal(test_pg_query_u64_in(cluster.conninfo, sql), 1);
    g_free(sql);
    holder_release(&squatter);
    assert_int_equal(chmod(cluster.dir, 0700), 0);
    g_free(apart_key);
    g_free(step_key);
    g_free(job_id);
    g_free(output);
    g_free(wrap);
    g_free(report);
}

/* Runs $VIGIL_SLURM_SCRIPTS/vigil-prolog as slurmd would (Slurm's variables only),
 * with `cli` as its `vigil`; returns what it said on stderr. */
static char *run_prolog(const char *cli, const char *socket_path)
{
    char *script = g_build_filename(test_env_or_fail("VIGIL_SLURM_SCRIPTS"), "vigil-prolog", NULL);
    char *cli_var = g_strconcat("VIGIL_CLI=", cli, NULL);
    char *socket_var = g_strconcat("VIGIL_SOCKET=", socket_path, NULL);
    const char *argv[] = {script, NULL};
    char *env[] = {"SLURM_JOB_ID=42",
                   "SLURM_JOB_USER=root",
                   "SLURM_JOB_UID=0",
                   "SLURM_NODELIST=node1",
                   cli_var,
                   socket_var,
                   NULL};
    struct test_run run = test_run_program(cluster.dir, argv, env);
    /* Whatever happened, 0: a failing prolog drains the node. */
    test_assert_status(&run, 0, "vigil-prolog");
    char *err = g_strdup(run.err);
    test_run_clear(&run);
    g_free(socket_var);
    g_free(cli_var);
    g_free(script);
    return err;
}

static void test_the_prolog_exits_0_without_vigild_or_when_vigil_hangs(void **state)
{
    (void)state;
    char *nobody = path_in("nobody.sock");
    char *err = run_prolog(test_env_or_fail("VIGIL_CLI"), nobody);
    test_assert_contains(err, "vigil-prolog: job 42: ");
    test_assert_contains(err, nobody);
    g_free(err);
    /* A `vigil` that never returns (as one stuck on a hung vigild would):
     * the script's timeout ends it, says so, and the prolog still exits 0.
     * Without the timeout this would outlast the test's own. */
    char *hung = path_in("hung-vigil");
    write_file(hung, "#!/bin/sh\nexec sleep 3600\n", 0755);
    err = run_prolog(hung, nobody);
    test_assert_contains(err, "vigil-prolog: job 42: ");
    g_free(err);
    g_free(hung);
    g_free(nobody);
}

int main(void)
{
    if (!slurm_installed())
        return test_skip_program("Slurm's programs (munged, slurmctld, slurmd, srun) are not "
                                 "installed (tools/bootstrap installs them)");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_srun_vigil_instruments_the_step),
        cmocka_unit_test(test_vigil_run_under_srun_instruments_the_step),
        cmocka_unit_test(test_without_vigil_a_step_is_not_instrumented),
        cmocka_unit_test(test_default_on_monitors_every_job_unless_off),
        cmocka_unit_test(test_sbatch_vigil_instruments_each_step),
        cmocka_unit_test(test_a_squatted_slurm_key_stays_the_jobs),
        cmocka_unit_test(test_the_prolog_exits_0_without_vigild_or_when_vigil_hangs),
    };
    return test_pg_run_group_tests(tests, cluster_setup, cluster_teardown);
}
