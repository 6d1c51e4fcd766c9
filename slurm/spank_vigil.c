/* vigil — the SPANK plugin (spank_vigil.so): `srun --vigil ./app`, or
 * every job when the admin writes `default=on` in plugstack.conf.
 *
 *   required /usr/lib/x86_64-linux-gnu/vigil/spank_vigil.so [default=on]
 *            [preload=PATH] [socket=PATH]
 *
 * For a monitored job it puts libvigil-preload.so first in the tasks'
 * LD_PRELOAD (the library reads SLURM_JOB_ID and SLURM_STEP_ID, already in
 * the tasks' environment, for the job and the run key), points them at
 * vigild's socket when `socket=` is given, and tells vigild when the job,
 * and each of its steps, begins and ends on this node.
 *
 * Nothing here may fail a job. A monitoring tool that kills jobs when it is
 * broken (a missing library, a vigild that is down, a typo in
 * plugstack.conf) does more harm than the figures it would have gathered
 * are worth: every callback logs what went wrong with slurm_error and
 * returns ESPANK_SUCCESS, and the job runs unmonitored. A `required` line
 * in plugstack.conf then only means "load it", never "the job depends on
 * it". The price is that a broken set-up is silent to the user: the
 * admin sees it in slurmd's log, and the user sees no report. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "spank_vigil_build.h"

#include "vigil/job_notice.h"

SPANK_PLUGIN(vigil, 1);

/* What plugstack.conf says (every context reads it; only the remote and
 * job-script contexts act on it). */
static struct {
    bool default_on;
    char preload[PATH_MAX];
    char socket[PATH_MAX]; /* "": vigild's default socket */
} settings;

/* What the user said on the command line (remote context: the option's
 * callback runs in slurmstepd before slurm_spank_init_post_opt). */
static struct {
    bool given;
    char argument[PATH_MAX]; /* "": none; "off": not monitored; else the report path */
} asked;

/* The step this slurmstepd announced, so that its end is told only after
 * its beginning was. */
static bool step_announced;

static int option_seen(int val, const char *argument, int remote);

static struct spank_option vigil_option = {
    "vigil",
    "[report-path|off]",
    "Monitor this job's I/O and energy with vigil. With a path, each process also writes "
    "its report there (%p: its pid); 'off' turns monitoring off where the site turned it on "
    "for every job.",
    2, /* optional argument: --vigil or --vigil=PATH */
    0,
    option_seen,
};

static int option_seen(int val, const char *argument, int remote)
{
    (void)val;
    (void)remote;
    asked.given = true;
    /* A step started inside `sbatch --vigil` gets the option through the
     * environment, where Slurm writes a missing argument as "(null)". */
    if (argument == NULL || strcmp(argument, "(null)") == 0)
        argument = "";
    snprintf(asked.argument, sizeof asked.argument, "%s", argument);
    return ESPANK_SUCCESS;
}

/* Whether plugstack.conf's mistakes are said here: in slurmd's and
 * slurmstepd's log for the admin, not on every user's srun and sbatch,
 * which load the plugin too (only for its option). */
static bool say_config_errors;

static bool copy_setting(char *out, size_t out_bytes, const char *value, const char *name)
{
    if (value[0] != '/' || strlen(value) >= out_bytes) {
        if (say_config_errors)
            slurm_error("spank_vigil: plugstack.conf: %s=%s is not an absolute path shorter than "
                        "%zu bytes; ignored",
                        name, value, out_bytes);
        return false;
    }
    memcpy(out, value, strlen(value) + 1);
    return true;
}

/* plugstack.conf's arguments. A bad one is logged and ignored: the
 * defaults are safe (off, the installed library, vigild's default socket). */
static void read_arguments(int argc, char **argv)
{
    snprintf(settings.preload, sizeof settings.preload, "%s", VIGIL_SPANK_PRELOAD_DEFAULT);
    settings.socket[0] = '\0';
    settings.default_on = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "default=on") == 0)
            settings.default_on = true;
        else if (strcmp(a, "default=off") == 0)
            settings.default_on = false;
        else if (strncmp(a, "preload=", 8) == 0)
            copy_setting(settings.preload, sizeof settings.preload, a + 8, "preload");
        else if (strncmp(a, "socket=", 7) == 0)
            copy_setting(settings.socket, sizeof settings.socket, a + 7, "socket");
        else if (say_config_errors)
            slurm_error("spank_vigil: plugstack.conf: unknown argument '%s' (known: "
                        "default=on|off, preload=PATH, socket=PATH); ignored",
                        a);
    }
}

/* Whether this job is monitored, and the user's --vigil argument. Where
 * the option's callback did not run (slurmd's job prolog and epilog), the
 * option comes from spank_option_getopt. */
static bool job_wanted(spank_t sp, const char **argument)
{
    *argument = "";
    if (!asked.given) {
        char *given = NULL;
        if (spank_option_getopt(sp, &vigil_option, &given) == ESPANK_SUCCESS)
            option_seen(0, given, 1);
    }
    if (!asked.given)
        return settings.default_on;
    if (strcmp(asked.argument, "off") == 0)
        return false;
    *argument = asked.argument;
    return true;
}

int slurm_spank_init(spank_t sp, int argc, char **argv)
{
    spank_context_t context = spank_context();
    say_config_errors = context != S_CTX_LOCAL && context != S_CTX_ALLOCATOR;
    read_arguments(argc, argv);
    if (context == S_CTX_LOCAL || context == S_CTX_REMOTE || context == S_CTX_ALLOCATOR ||
        context == S_CTX_JOB_SCRIPT) {
        spank_err_t rc = spank_option_register(sp, &vigil_option);
        if (rc != ESPANK_SUCCESS)
            slurm_error("spank_vigil: cannot register --vigil: %s", spank_strerror(rc));
    }
    return ESPANK_SUCCESS;
}

/* The job's node list, from the job's environment (the steps') or our own
 * (the job prolog's). */
static void node_list(spank_t sp, char *out, size_t out_bytes)
{
    out[0] = '\0';
    if (spank_remote(sp) == 1 &&
        spank_getenv(sp, "SLURM_JOB_NODELIST", out, (int)out_bytes) == ESPANK_SUCCESS)
        return;
    /* slurmd gives its prolog SLURM_NODELIST, not SLURM_JOB_NODELIST. */
    const char *env = getenv("SLURM_JOB_NODELIST");
    if (env == NULL)
        env = getenv("SLURM_NODELIST");
    snprintf(out, out_bytes, "%s", env != NULL ? env : "");
}

/* The job's id and uid: spank's items, else the prolog's environment. */
static bool job_identity(spank_t sp, char *job_id, size_t job_id_bytes, uint32_t *uid)
{
    uint32_t id = 0;
    uid_t user = (uid_t)-1;
    job_id[0] = '\0';
    if (spank_get_item(sp, S_JOB_ID, &id) == ESPANK_SUCCESS && id != 0)
        snprintf(job_id, job_id_bytes, "%" PRIu32, id);
    else if (getenv("SLURM_JOB_ID") != NULL)
        snprintf(job_id, job_id_bytes, "%s", getenv("SLURM_JOB_ID"));
    if (spank_get_item(sp, S_JOB_UID, &user) == ESPANK_SUCCESS)
        *uid = (uint32_t)user;
    else if (getenv("SLURM_JOB_UID") != NULL)
        *uid = (uint32_t)strtoul(getenv("SLURM_JOB_UID"), NULL, 10);
    else
        *uid = UINT32_MAX;
    return job_id[0] != '\0';
}

/* Slurm's names for its special steps, as `scontrol` and sacct write them. */
static void step_name(uint32_t step, char *out, size_t out_bytes)
{
    if (step == SLURM_BATCH_SCRIPT)
        snprintf(out, out_bytes, "batch");
    else if (step == SLURM_EXTERN_CONT)
        snprintf(out, out_bytes, "extern");
    else if (step == SLURM_INTERACTIVE_STEP)
        snprintf(out, out_bytes, "interactive");
    else
        snprintf(out, out_bytes, "%" PRIu32, step);
}

/* Tells vigild that the job (step NULL) or one step begins or ends here;
 * a vigild that is away is logged, never the job's problem. */
static void tell_vigild(spank_t sp, bool begin, const char *step)
{
    char job_id[32], nodes[8192], user[256] = "";
    uint32_t uid = UINT32_MAX;
    if (!job_identity(sp, job_id, sizeof job_id, &uid)) {
        slurm_error("spank_vigil: no job id here: vigild not told of the job");
        return;
    }
    node_list(sp, nodes, sizeof nodes);
    /* Slurm's own name for the user first: a passwd lookup may go to the
     * network (LDAP) while a step waits. */
    if (spank_remote(sp) != 1 ||
        spank_getenv(sp, "SLURM_JOB_USER", user, (int)sizeof user) != ESPANK_SUCCESS) {
        const char *env = getenv("SLURM_JOB_USER");
        snprintf(user, sizeof user, "%s", env != NULL ? env : "");
    }
    if (user[0] == '\0' && uid != UINT32_MAX) {
        struct passwd entry, *found = NULL;
        char buffer[4096];
        if (getpwuid_r((uid_t)uid, &entry, buffer, sizeof buffer, &found) == 0 && found != NULL)
            snprintf(user, sizeof user, "%s", found->pw_name);
    }
    struct vigil_job_notice notice = {
        .begin = begin,
        .job_id = job_id,
        .step_id = step,
        .user = user,
        .uid = uid,
        .node_list = nodes,
    };
    char err[512];
    if (!vigil_job_notice_send(settings.socket[0] != '\0' ? settings.socket : NULL, &notice, err,
                               sizeof err))
        slurm_error("spank_vigil: job %s%s%s %s not told to vigild: %s", job_id,
                    step != NULL ? " step " : "", step != NULL ? step : "", begin ? "begin" : "end",
                    err);
}

/* The whole job's begin or end on this node, told by root. */
static int job_edge(spank_t sp, bool begin)
{
    const char *argument;
    if (job_wanted(sp, &argument))
        tell_vigild(sp, begin, NULL);
    return ESPANK_SUCCESS;
}

/* slurmd, before the job's first step on this node (as root). */
int slurm_spank_job_prolog(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return job_edge(sp, true);
}

/* slurmd, after the job's last step on this node (as root). */
int slurm_spank_job_epilog(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return job_edge(sp, false);
}

/* The step's id as a name, or false for the extern step (it runs no task
 * of the user's: nothing to monitor). */
static bool monitored_step(spank_t sp, char *name, size_t name_bytes)
{
    uint32_t step = 0;
    spank_err_t rc = spank_get_item(sp, S_JOB_STEPID, &step);
    if (rc != ESPANK_SUCCESS) {
        slurm_error("spank_vigil: no step id: %s", spank_strerror(rc));
        return false;
    }
    step_name(step, name, name_bytes);
    return step != SLURM_EXTERN_CONT;
}

/* slurmstepd, options processed, still root: the step begins. */
int slurm_spank_init_post_opt(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (spank_context() != S_CTX_REMOTE)
        return ESPANK_SUCCESS;
    const char *argument;
    char step[32];
    if (job_wanted(sp, &argument) && monitored_step(sp, step, sizeof step)) {
        tell_vigild(sp, true, step);
        step_announced = true;
    }
    return ESPANK_SUCCESS;
}

/* Whether LD_PRELOAD (spaces or colons between entries) already has `path`:
 * a step started from a monitored batch script inherits it. */
static bool preload_has(const char *list, const char *path)
{
    size_t n = strlen(path);
    for (const char *p = list; (p = strstr(p, path)) != NULL; p += n) {
        bool starts = p == list || p[-1] == ':' || p[-1] == ' ';
        bool ends = p[n] == '\0' || p[n] == ':' || p[n] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

static void set_job_env(spank_t sp, const char *name, const char *value, int overwrite)
{
    spank_err_t rc = spank_setenv(sp, name, value, overwrite);
    if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS)
        slurm_error("spank_vigil: cannot set %s for the job's tasks: %s", name, spank_strerror(rc));
}

/* slurmstepd, before the tasks are forked: their environment. */
int slurm_spank_user_init(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *report;
    if (!job_wanted(sp, &report))
        return ESPANK_SUCCESS;
    /* A library the loader cannot read would make every program of the job
     * print ld.so's complaint: say it once here instead. */
    if (access(settings.preload, R_OK) != 0) {
        slurm_error("spank_vigil: %s: %s; the job runs unmonitored", settings.preload,
                    strerror(errno));
        return ESPANK_SUCCESS;
    }
    char current[8192] = "";
    spank_err_t rc = spank_getenv(sp, "LD_PRELOAD", current, sizeof current);
    if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_NOEXIST) {
        slurm_error("spank_vigil: cannot read the job's LD_PRELOAD: %s; the job runs "
                    "unmonitored",
                    spank_strerror(rc));
        return ESPANK_SUCCESS;
    }
    if (!preload_has(current, settings.preload)) {
        /* First, so that our wrappers see the calls before any other
         * preloaded library's. */
        char value[sizeof current + PATH_MAX + 1];
        snprintf(value, sizeof value, "%s%s%s", settings.preload, current[0] != '\0' ? ":" : "",
                 current);
        set_job_env(sp, "LD_PRELOAD", value, 1);
    }
    /* The user's environment wins over the site's socket (the project's
     * order: command line, environment, config); the command line's report
     * path wins over the environment's. */
    if (settings.socket[0] != '\0')
        set_job_env(sp, "VIGIL_SOCKET", settings.socket, 0);
    if (report[0] != '\0')
        set_job_env(sp, "VIGIL_REPORT", report, 1);
    return ESPANK_SUCCESS;
}

/* slurmstepd, its tasks gone (root again): the step ends. */
int slurm_spank_exit(spank_t sp, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (spank_context() != S_CTX_REMOTE || !step_announced)
        return ESPANK_SUCCESS;
    char step[32];
    if (monitored_step(sp, step, sizeof step))
        tell_vigild(sp, false, step);
    step_announced = false;
    return ESPANK_SUCCESS;
}
