/* vigil — an MPI job of the mpi suite (see mpi_job.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <cmocka.h>

#include "mpi_job.h"
#include "test_report.h"

struct test_run mpi_job_run(const char *dir, const char *const *vars, const char *program, ...)
{
    char *report = g_strdup_printf("--report=json:%s/report-%%p.json", dir);
    const char *head[] = {"timeout",
                          "-k",
                          "10",
                          MPI_JOB_TIMEOUT_S,
                          "mpirun",
                          "--oversubscribe",
                          "-np",
                          G_STRINGIFY(MPI_JOB_RANKS),
                          test_env_or_fail("VIGIL_CLI"),
                          "run",
                          report,
                          "--",
                          program};
    GPtrArray *argv = g_ptr_array_new();
    for (size_t i = 0; i < G_N_ELEMENTS(head); i++)
        g_ptr_array_add(argv, (gpointer)head[i]);
    va_list ap;
    va_start(ap, program);
    for (const char *a = va_arg(ap, const char *); a != NULL; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);

    char **env = test_clean_environment(vars);
    env = g_environ_setenv(env, "OMPI_ALLOW_RUN_AS_ROOT", "1", TRUE);
    env = g_environ_setenv(env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", TRUE);
    /* The job's session directory in the test's own: under the shared
     * /tmp/ompi.HOST.UID, one job's cleanup removed that directory while a
     * job of another test, run at the same time, was making its own in it
     * (orte_init failed, on CI). */
    env = g_environ_setenv(env, "OMPI_MCA_orte_tmpdir_base", dir, TRUE);
    struct test_run r = test_run_program(dir, (const char *const *)argv->pdata, env);
    if (r.status == 124 || r.status == 128 + 9)
        fail_msg("the job did not end within %s s\nstdout: %s\nstderr: %s", MPI_JOB_TIMEOUT_S,
                 r.out, r.err);
    g_strfreev(env);
    g_ptr_array_free(argv, TRUE);
    g_free(report);
    return r;
}

void mpi_job_reports_load(const char *dir, struct test_report *joint_report,
                          struct test_report own_reports[MPI_JOB_RANKS])
{
    bool joint = false, own[MPI_JOB_RANKS] = {false};
    GDir *d = g_dir_open(dir, 0, NULL);
    assert_non_null(d);
    for (const char *name = g_dir_read_name(d); name != NULL; name = g_dir_read_name(d)) {
        if (!g_str_has_prefix(name, "report-") || !g_str_has_suffix(name, ".json"))
            continue;
        char *path = g_build_filename(dir, name, NULL);
        struct test_report rep = test_report_load(path);
        g_free(path);
        if (g_str_has_suffix(name, "-job.json")) {
            assert_false(joint);
            joint = true;
            *joint_report = rep;
            continue;
        }
        gint64 rank = test_report_int(&rep, "rank");
        if (rank < 0 || rank >= MPI_JOB_RANKS || own[rank])
            fail_msg("%s: rank %" G_GINT64_FORMAT " is no rank, or a second report of it", rep.path,
                     rank);
        own[rank] = true;
        own_reports[rank] = rep;
    }
    g_dir_close(d);
    if (!joint)
        fail_msg("no job report in %s", dir);
    for (int rank = 0; rank < MPI_JOB_RANKS; rank++)
        if (!own[rank])
            fail_msg("no report of rank %d in %s", rank, dir);
}

void mpi_job_reports_free(struct test_report *joint_report,
                          struct test_report own_reports[MPI_JOB_RANKS])
{
    test_report_free(joint_report);
    for (int rank = 0; rank < MPI_JOB_RANKS; rank++)
        test_report_free(&own_reports[rank]);
}
