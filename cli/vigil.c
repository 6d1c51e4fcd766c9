/* vigil — the command-line tool: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "commands.h"
#include "vigil-build.h"
#include "vigil/log.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", vigil_cli_run,
     "run [--report=FORMAT[:PATH]] [--config FILE] -- PROGRAM [ARGS…]: run with the I/O "
     "interposer"},
    {"config", vigil_cli_config,
     "config check|example [--config FILE]: check and print the configuration, or print an "
     "example with every key"},
    {"status", vigil_cli_status,
     "status [--json] [--socket PATH] [--config FILE]: what the node's vigild sees now"},
    {"job", vigil_cli_job,
     "job begin|end [--job ID] [--step S] [--user U] [--uid N] [--nodes LIST] [--socket PATH]: "
     "tell vigild a scheduler job starts or ends on this node (Slurm's variables by default)"},
    {"keygen", vigil_cli_keygen,
     "keygen FILE: a CURVE key pair for vigild and vigil-txd (FILE and FILE.pub)"},
    {"runs", vigil_cli_runs,
     "runs [--limit N] [--job ID] [--user NAME|UID] [--since TIME|AGE] [--format text|json]: "
     "the stored runs, newest first"},
    {"report", vigil_cli_report,
     "report RUN [--format text|json] [--process PID[@HOST]], or report --job ID: a stored "
     "run's report, or a scheduler job's across its steps and nodes"},
    {"advise", vigil_cli_advise,
     "advise RUN [--against RUN2] [--format text|json]: the CPU frequency that would have used "
     "least energy, from two runs (a model estimate)"},
    {"export", vigil_cli_export,
     "export RUN [--what power|statistics|activities] [--format csv|json] [--node N]: "
     "a stored run's power profile, statistics or activities"},
    {"tune", vigil_cli_tune,
     "tune --replay FILE [--config CANDIDATE] [--truth TRUTH] [--scale-durations "
     "FACTOR[@CYCLE]] [--format text|json] [--store]: replay a recording of vigild's cycles "
     "([daemon] record) with its configuration and a candidate, compare what each flags and "
     "forwards (--scale-durations: as if the node had become slower or faster), and (--store) "
     "keep it in the warehouse"},
    {"spool", vigil_cli_spool,
     "spool check [DIR] | replay FILE | resend [--socket PATH] [--config FILE]: what vigild's "
     "spool holds and its damage (check, changes nothing), or have vigild send again what a "
     "damaged segment set aside (replay) or what vigil-txd refused (resend)"},
    {"node", vigil_cli_node,
     "node keys [--forget NODE | --set NODE --key KEY] [--format text|json] [--config FILE]: "
     "which CURVE key each node id belongs to in the warehouse and the batches refused for it; "
     "put a wrong claim right"},
    {"db", vigil_cli_db,
     "db migrate|version|maintain|prune [--dry-run] [--config FILE]: the warehouse's schema "
     "(bring it up to date, or show it) and its day partitions (make them ahead, drop the "
     "expired)"},
};

static void print_usage(FILE *out)
{
    fprintf(out, "usage: vigil [--version] COMMAND [ARGS…]\n\ncommands:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(out, "  %s\n", commands[i].summary);
    fprintf(out, "\n'vigil COMMAND --help' tells more about each.\n");
}

int main(int argc, char **argv)
{
    vigil_log_setup("vigil", VIGIL_LOG_MESSAGE);
    vigil_log_print_utf8();
    if (argc < 2) {
        print_usage(stderr);
        return VIGIL_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("vigil %s\n", VIGIL_VERSION);
        return VIGIL_EXIT_OK;
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        return VIGIL_EXIT_OK;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(name, commands[i].name) == 0) {
            /* What a subcommand's --help shows as its usage: "vigil run". */
            char *prgname = g_strconcat("vigil ", name, NULL);
            g_set_prgname(prgname);
            g_free(prgname);
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "vigil: unknown command '%s'\n\n", name);
    print_usage(stderr);
    return VIGIL_EXIT_USAGE;
}
