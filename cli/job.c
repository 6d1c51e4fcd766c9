/* vigil job begin|end: tells the node's vigild that a scheduler job (or
 * one step of it) starts or ends here, for a Slurm prolog or epilog. With
 * no options it takes the job from Slurm's variables, so that a prolog can
 * call `vigil job begin` as it is. A vigild that is not there is an error
 * naming the socket (exit 1): the prolog scripts exit 0 whatever it says,
 * since a failing prolog drains the node. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "vigil/job_notice.h"

/* The option's value, else the first of the variables that is set. */
static const char *given_or_env(const char *option, const char *const *names)
{
    if (option != NULL)
        return option;
    for (; *names != NULL; names++) {
        const char *value = g_getenv(*names);
        if (value != NULL && value[0] != '\0')
            return value;
    }
    return NULL;
}

/* A uid as text, or NULL: VIGIL_LOCAL_JOB_UID_UNKNOWN. FALSE when it is not
 * one. */
static gboolean parse_uid(const char *text, uint32_t *uid)
{
    *uid = UINT32_MAX;
    if (text == NULL)
        return TRUE;
    guint64 value;
    if (!g_ascii_string_to_unsigned(text, 10, 0, UINT32_MAX - 1, &value, NULL))
        return FALSE;
    *uid = (uint32_t)value;
    return TRUE;
}

int vigil_cli_job(int argc, char **argv)
{
    char *job = NULL, *step = NULL, *user = NULL, *uid_text = NULL, *nodes = NULL;
    char *socket_option = NULL, *config_path = NULL;
    GOptionEntry entries[] = {
        {"job", 'j', 0, G_OPTION_ARG_STRING, &job, "The job's id (default: $SLURM_JOB_ID)", "ID"},
        {"step", 's', 0, G_OPTION_ARG_STRING, &step,
         "One step of the job (default: none, the whole job)", "STEP"},
        {"user", 'u', 0, G_OPTION_ARG_STRING, &user, "The job's user (default: $SLURM_JOB_USER)",
         "USER"},
        {"uid", 0, 0, G_OPTION_ARG_STRING, &uid_text, "The job's uid (default: $SLURM_JOB_UID)",
         "N"},
        {"nodes", 'n', 0, G_OPTION_ARG_STRING, &nodes,
         "The job's nodes (default: $SLURM_JOB_NODELIST, else $SLURM_NODELIST)", "LIST"},
        {"socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_option,
         "The socket of vigild (default: $VIGIL_SOCKET, else [daemon] socket)", "PATH"},
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "The configuration whose [daemon] socket to use", "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "begin|end",
        .summary = "Tells vigild that a scheduler job starts or ends on this node "
                   "(what Slurm's prolog and epilog call).",
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_OK;
    char *path = NULL;
    if (!vigil_cli_options_ok("job", &help, entries, &argc, &argv)) {
        status = VIGIL_EXIT_USAGE;
        goto out;
    }
    if (argc != 2 || (strcmp(argv[1], "begin") != 0 && strcmp(argv[1], "end") != 0)) {
        fprintf(stderr, "vigil job: say begin or end (vigil job begin|end [OPTION…])\n");
        status = VIGIL_EXIT_USAGE;
        goto out;
    }
    static const char *const job_vars[] = {"SLURM_JOB_ID", "SLURM_JOBID", NULL};
    static const char *const user_vars[] = {"SLURM_JOB_USER", NULL};
    static const char *const uid_vars[] = {"SLURM_JOB_UID", NULL};
    static const char *const node_vars[] = {"SLURM_JOB_NODELIST", "SLURM_NODELIST", NULL};
    static const char *const no_vars[] = {NULL};
    struct vigil_job_notice notice = {
        .begin = strcmp(argv[1], "begin") == 0,
        .job_id = given_or_env(job, job_vars),
        .step_id = given_or_env(step, no_vars),
        .user = given_or_env(user, user_vars),
        .node_list = given_or_env(nodes, node_vars),
    };
    const char *uid_given = given_or_env(uid_text, uid_vars);
    if (notice.job_id == NULL) {
        fprintf(stderr, "vigil job: no job id: give --job ID, or run it where SLURM_JOB_ID is "
                        "set (a prolog or epilog)\n");
        status = VIGIL_EXIT_USAGE;
        goto out;
    }
    if (!parse_uid(uid_given, &notice.uid)) {
        fprintf(stderr, "vigil job: the uid %s (%s) is not a number from 0 to %u\n", uid_given,
                uid_text != NULL ? "--uid" : "SLURM_JOB_UID", UINT32_MAX - 1);
        status = VIGIL_EXIT_USAGE;
        goto out;
    }
    path = vigil_cli_socket_path(socket_option, config_path, &error);
    if (path == NULL) {
        fprintf(stderr, "vigil job: %s\n", error->message);
        status = VIGIL_EXIT_FAILURE;
        goto out;
    }
    char problem[512];
    if (!vigil_job_notice_send(path, &notice, problem, sizeof problem)) {
        fprintf(stderr, "vigil job %s: %s\n", argv[1], problem);
        status = VIGIL_EXIT_FAILURE;
    }
out:
    g_clear_error(&error);
    g_free(path);
    g_free(job);
    g_free(step);
    g_free(user);
    g_free(uid_text);
    g_free(nodes);
    g_free(socket_option);
    g_free(config_path);
    return status;
}
