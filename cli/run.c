/* vigil run: runs a program with libvigil-preload.so and exits with the
 * program's status.
 *
 *   vigil run [--report=FORMAT[:PATH]] [--config FILE] -- PROGRAM ARGS…
 *
 * The library reads no files of its own (it runs inside arbitrary programs,
 * without GLib): the [preload] section of the configuration and --report
 * become the environment variables it reads. The program and everything it
 * starts make one run in the warehouse: VIGIL_RUN_ID, set here unless the
 * environment gives a run already (the report's RUN line shows it). Like
 * env(1) and nice(1), a failure of vigil itself exits 125, a program that
 * cannot be run 126, one that cannot be found 127. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "cli_settings.h"
#include "commands.h"
#include "vigild_settings.h" /* [daemon] */
#include "vigil-build.h"
#include "vigil/clock.h"
#include "vigil/config.h"
#include "vigil/run_key.h"
#include "vigil/schema.h"

enum {
    EXIT_VIGIL_FAILED = 125,
    EXIT_CANNOT_RUN = 126,
    EXIT_NOT_FOUND = 127,
};

struct run_options {
    char *report;      /* FORMAT[:PATH] from the command line, or NULL */
    char *config_path; /* --config, or NULL for the default if it exists */
};

/* ---- the environment the library reads ------------------------------------- */

/* What the configuration could not give: one warning, then the defaults. */
static void warn_config(const char *problems)
{
    fprintf(stderr,
            "vigil run: warning: the configuration has problems; the program runs with the "
            "default for each setting named here (`vigil config check` lists them too):\n%s\n",
            problems);
}

/* VIGIL_EXCLUDE from the environment in the old form, ':' between
 * prefixes: still read so (instrument/files.c), but ';' is the rule now,
 * as in [preload] exclude. Said here, once, not by the library in every
 * process of the program. */
static void warn_old_exclude_form(void)
{
    const char *exclude = g_getenv("VIGIL_EXCLUDE");
    if (exclude != NULL && strchr(exclude, ':') != NULL && strchr(exclude, ';') == NULL)
        fprintf(stderr,
                "vigil run: warning: VIGIL_EXCLUDE=%s separates its prefixes with ':', which is "
                "deprecated: write ';' between them, as in [preload] exclude (a value with a ';' "
                "reads ':' as part of a path)\n",
                exclude);
}

/* The [preload] section, from --config, $VIGIL_CONFIG or the default file
 * when there is one. A broken configuration does not stop the program: one
 * typo of an admin's must not refuse every user's job. The values that
 * pass their checks are kept (vigil_config_load_keeping_valid), the others
 * keep their defaults, and a warning names each problem; `vigil config
 * check` still fails on them, for the admin. Only a --config FILE that
 * cannot be read at all stops us: that is the user's own command line,
 * like a bad --report. */
static gboolean apply_config(const char *config_path, GError **error)
{
    if (config_path != NULL && g_access(config_path, R_OK) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                    "--config %s: cannot read it: %s", config_path, g_strerror(errno));
        return FALSE;
    }
    char *path = vigil_cli_config_file(config_path);
    char *load_problems = NULL;
    /* A declaration that fails is a bug of ours, not the admin's. */
    vigil_config *config = vigil_cli_config_load(path, &load_problems, error);
    g_free(path);
    gboolean ok = config != NULL;
    GString *problems = g_string_new(load_problems);
    g_free(load_problems);
    struct vigil_preload_settings preload;
    struct vigild_daemon_settings daemon;
    /* Filled from defaults and whatever values were valid. */
    ok = ok && vigil_settings_fill(config, &vigil_preload_keys, &preload, error);
    if (ok && !vigil_settings_fill(config, &vigild_daemon_keys, &daemon, error)) {
        vigil_settings_clear(&vigil_preload_keys, &preload);
        ok = FALSE;
    }
    if (ok) {
        /* ';' between prefixes, as in the file; and after a lone prefix
         * that holds a ':', which the library would otherwise read as the
         * old ':'-separated form (instrument/files.c). */
        char *joined = g_strjoinv(";", preload.exclude);
        char *exclude = strchr(joined, ':') != NULL && strchr(joined, ';') == NULL
                            ? g_strconcat(joined, ";", NULL)
                            : g_strdup(joined);
        g_free(joined);
        GError *slots_error = NULL;
        /* Settings have one order: the command line (--report, applied
         * after this), then the environment, then the file, then the
         * default. So what the environment already says stays. */
        g_setenv("VIGIL_EXCLUDE", exclude, FALSE);
        if (vigil_preload_keys.check(&preload, vigil_preload_keys.section, config, &slots_error)) {
            char *text = g_strdup_printf("%u", preload.ring_slots);
            g_setenv("VIGIL_RING_SLOTS", text, FALSE);
            g_free(text);
        } else {
            g_string_append_printf(problems, "%s%s", problems->len > 0 ? "\n" : "",
                                   slots_error->message);
            g_error_free(slots_error);
        }
        g_setenv("VIGIL_REPORT", preload.report, FALSE);
        g_setenv("VIGIL_REPORT_FORMAT", preload.report_format, FALSE);
        /* The daemon to register with: the one the configuration names,
         * unless the environment already chose one. */
        g_setenv("VIGIL_SOCKET", daemon.socket, FALSE);
        g_free(exclude);
        vigil_settings_clear(&vigil_preload_keys, &preload);
        vigil_settings_clear(&vigild_daemon_keys, &daemon);
    }
    if (problems->len > 0)
        warn_config(problems->str);
    g_string_free(problems, TRUE);
    if (config != NULL)
        vigil_config_free(config);
    return ok;
}

/* The run the program belongs to (vigil/run_key.h). A launcher's job
 * (Slurm, Open MPI's PMIx) names it when there is one, so that the ranks of
 * a job, each started by its own `vigil run`, find the same run without
 * being told; else a fresh key, which the library passes on to every
 * process the program starts. */
static void choose_run_key(void)
{
    char key[VIGIL_RUN_KEY_MAX + 1];
    struct vigil_error problem;
    if (vigil_run_key_from_environment(key, &problem) != VIGIL_RUN_KEY_NONE &&
        problem.message[0] == '\0')
        return;
    if (problem.message[0] != '\0') {
        fprintf(stderr, "vigil run: %s: ignored\n", problem.message);
        g_unsetenv("VIGIL_RUN_ID");
        if (vigil_run_key_from_environment(key, &problem) != VIGIL_RUN_KEY_NONE)
            return;
    }
    vigil_run_key_fresh(key, g_get_host_name(), (int)getpid(), vigil_clock_realtime_ns());
    g_setenv("VIGIL_RUN_ID", key, TRUE);
}

/* --report=FORMAT[:PATH]: text or json, to stderr or PATH; or off. */
static gboolean apply_report_option(const char *report, GError **error)
{
    char **parts = g_strsplit(report, ":", 2);
    const char *format = parts[0], *path = parts[1];
    gboolean ok = TRUE;
    if (strcmp(format, "off") == 0 && path == NULL) {
        g_setenv("VIGIL_REPORT", "off", TRUE);
    } else if (strcmp(format, "text") == 0 || strcmp(format, "json") == 0) {
        g_setenv("VIGIL_REPORT_FORMAT", format, TRUE);
        g_setenv("VIGIL_REPORT", path && path[0] ? path : "stderr", TRUE);
    } else {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--report=%s: expected text, json or off, optionally followed by :PATH",
                    report);
        ok = FALSE;
    }
    g_strfreev(parts);
    return ok;
}

/* A report to a file in a folder that does not exist or cannot be written
 * would be lost at the program's exit, after all its work: refuse before
 * it starts when the user asked for that file (--report, VIGIL_REPORT).
 * One from the configuration is the admin's, and like every other problem
 * of the configuration it does not stop the program: a warning now, and at
 * exit the library prints the report on stderr, saying why. A folder with
 * %p in its name is known only then. */
static gboolean check_report_folder(const char *asked_by, GError **error)
{
    const char *target = g_getenv("VIGIL_REPORT");
    if (target == NULL || target[0] == '\0' || strcmp(target, "off") == 0 ||
        strcmp(target, "stderr") == 0)
        return TRUE;
    char *folder = g_path_get_dirname(target);
    gboolean ok = TRUE;
    if (strchr(folder, '%') == NULL && g_access(folder, W_OK | X_OK) != 0) {
        int problem = errno;
        if (asked_by != NULL) {
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(problem),
                        "%s: the report cannot be written to %s: its folder %s: %s", asked_by,
                        target, folder, g_strerror(problem));
            ok = FALSE;
        } else {
            fprintf(stderr,
                    "vigil run: warning: the configuration's [preload] report %s cannot be "
                    "written (its folder %s: %s): the report will be printed on stderr\n",
                    target, folder, g_strerror(problem));
        }
    }
    g_free(folder);
    return ok;
}

/* Our library first, so that it sees the calls before any other
 * interposer; what was there stays. */
static void add_to_preload(const char *library)
{
    const char *current = g_getenv("LD_PRELOAD");
    if (current != NULL && strstr(current, library) != NULL)
        return;
    char *value =
        current && current[0] ? g_strconcat(library, ":", current, NULL) : g_strdup(library);
    g_setenv("LD_PRELOAD", value, TRUE);
    g_free(value);
}

/* ---- running ------------------------------------------------------------------- */

static volatile sig_atomic_t child_pid;

/* A scheduler stopping the job signals this process: pass it on. */
static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static int run_program(char **argv)
{
    GError *error = NULL;
    GPid pid;
    /* GLib reports a missing program as a generic failure: look first, so
     * that "not found" gets its own status, as in a shell. */
    char *found = strchr(argv[0], '/') ? NULL : g_find_program_in_path(argv[0]);
    gboolean exists =
        found != NULL || (strchr(argv[0], '/') && g_file_test(argv[0], G_FILE_TEST_EXISTS));
    g_free(found);
    if (!exists) {
        fprintf(stderr, "vigil run: %s: command not found\n", argv[0]);
        return EXIT_NOT_FOUND;
    }
    /* Keep descriptors: MPI launchers and shells hand programs open ones. */
    GSpawnFlags flags = G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                        G_SPAWN_CHILD_INHERITS_STDIN | G_SPAWN_LEAVE_DESCRIPTORS_OPEN;
    if (!g_spawn_async(NULL, argv, NULL, flags, NULL, NULL, &pid, &error)) {
        fprintf(stderr, "vigil run: cannot run %s: %s\n", argv[0], error->message);
        int status = g_error_matches(error, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT) ? EXIT_NOT_FOUND
                                                                                : EXIT_CANNOT_RUN;
        g_error_free(error);
        return status;
    }
    child_pid = pid;
    /* The terminal sends ^C and ^\ to the whole process group, the program
     * included: it decides what they mean, and we report what it did. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    struct sigaction forward = {.sa_handler = forward_signal};
    int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < G_N_ELEMENTS(forwarded); i++)
        sigaction(forwarded[i], &forward, NULL);

    int wait_status;
    while (waitpid(pid, &wait_status, 0) < 0) {
        if (errno != EINTR) {
            perror("vigil run: waitpid");
            return EXIT_VIGIL_FAILED;
        }
    }
    if (WIFSIGNALED(wait_status))
        return 128 + WTERMSIG(wait_status);
    return WEXITSTATUS(wait_status);
}

int vigil_cli_run(int argc, char **argv)
{
    struct run_options options = {0};
    GOptionEntry entries[] = {
        {"report", 'r', 0, G_OPTION_ARG_STRING, &options.report,
         "The report: text or json, to stderr or to :PATH (%p is the pid), or off (nothing "
         "printed; vigild still gets the figures)",
         "FORMAT[:PATH]"},
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &options.config_path,
         "Configuration file ([preload] and [daemon] socket); default: $VIGIL_CONFIG, "
         "else " VIGIL_SYSCONF_DIR "/vigil.conf if it exists",
         "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "-- PROGRAM [ARGS…]",
        .summary = "Runs PROGRAM with vigil's I/O interposer and prints "
                   "its report at exit.\nExits with PROGRAM's status, or "
                   "128+N when signal N ended it.",
        /* Everything after "--" (or after the first non-option) is the program's. */
        .stop_at_program = TRUE,
    };
    GError *error = NULL;
    int status = EXIT_VIGIL_FAILED;
    char *library = NULL;

    if (!vigil_cli_options_ok("run", &help, entries, &argc, &argv))
        goto out;
    int first = 1; /* argv[0] is "run" */
    if (first < argc && strcmp(argv[first], "--") == 0)
        first++;
    if (first >= argc) {
        fprintf(stderr, "usage: vigil run [--report=FORMAT[:PATH]] [--config FILE] -- PROGRAM "
                        "[ARGS…]\n");
        status = VIGIL_EXIT_USAGE;
        goto out;
    }
    warn_old_exclude_form();
    /* Who asked for the report's file, for the error if it cannot be. */
    const char *report_asked_by = options.report != NULL     ? "--report"
                                  : g_getenv("VIGIL_REPORT") ? "VIGIL_REPORT"
                                                             : NULL;
    if (!apply_config(options.config_path, &error)) {
        fprintf(stderr, "vigil run: %s\n", error->message);
        goto out;
    }
    if (options.report != NULL && !apply_report_option(options.report, &error)) {
        fprintf(stderr, "vigil run: %s\n", error->message);
        goto out;
    }
    if (!check_report_folder(report_asked_by, &error)) {
        fprintf(stderr, "vigil run: %s\n", error->message);
        goto out;
    }
    library = vigil_cli_preload_library(&error);
    if (library == NULL) {
        fprintf(stderr, "vigil run: %s\n", error->message);
        goto out;
    }
    add_to_preload(library);
    choose_run_key();
    status = run_program(argv + first);

out:
    g_clear_error(&error);
    g_free(library);
    g_free(options.report);
    g_free(options.config_path);
    return status;
}
