/* vigil spool: what vigild's spool holds, and sending again what it set
 * aside.
 *
 *   vigil spool check [DIR] [--config FILE]
 *   vigil spool replay FILE [--socket PATH] [--config FILE]
 *   vigil spool resend [--socket PATH] [--config FILE]
 *
 * check reads the spool folder (DIR, else [uplink] spool_dir) and changes
 * nothing: each segment's batches, each damaged range (where, in bytes,
 * and what is wrong there, found as vigild finds it: daemon/spool_scan.c),
 * what a NAME.damaged file still holds that can be replayed, and the
 * refused batches waiting in refused/. It exits 1 when it found damage.
 * replay and resend ask the running vigild (root or vigild's own user;
 * the local protocol's SPOOL), which owns the spool: replay queues the
 * intact batches of FILE (a NAME.damaged) to be sent, resend the batches
 * vigil-txd refused, kept in refused/, once what made it refuse them is
 * fixed (`vigil node keys --forget`, say). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "spool_scan.h"
#include "uplink.h"
#include "vigil/config.h"
#include "vigil/local_protocol.h"
#include "vigil/schema.h"

#define ANSWER_TIMEOUT_S 120 /* a replay reads the whole file first */

/* ---- check --------------------------------------------------------------------------------- */

struct check_totals {
    uint64_t batches, damaged_ranges, damaged_bytes, replayable;
};

static gint compare_names(gconstpointer a, gconstpointer b)
{
    return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

/* The files of `dir` whose names end with one of `suffixes`, sorted. */
static GPtrArray *files_ending(const char *dir, const char *const *suffixes, GError **error)
{
    GDir *d = g_dir_open(dir, 0, error);
    if (d == NULL)
        return NULL;
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; (name = g_dir_read_name(d)) != NULL;)
        for (const char *const *s = suffixes; *s != NULL; s++)
            if (g_str_has_suffix(name, *s)) {
                g_ptr_array_add(names, g_strdup(name));
                break;
            }
    g_dir_close(d);
    g_ptr_array_sort(names, compare_names);
    return names;
}

static void check_file(const char *dir, const char *name, struct check_totals *t)
{
    char *path = g_build_filename(dir, name, NULL);
    gchar *contents;
    gsize size;
    GError *error = NULL;
    if (!g_file_get_contents(path, &contents, &size, &error)) {
        printf("%s: cannot be read: %s\n", path, error->message);
        g_error_free(error);
        g_free(path);
        t->damaged_ranges++;
        return;
    }
    GArray *pieces = vigild_spool_scan((const uint8_t *)contents, size);
    uint64_t batches = 0, first = 0, last = 0, damaged = 0;
    for (guint i = 0; i < pieces->len; i++) {
        const struct vigild_spool_piece *p = &g_array_index(pieces, struct vigild_spool_piece, i);
        if (p->damaged) {
            damaged += p->length_bytes;
            continue;
        }
        if (batches == 0 || p->sequence < first)
            first = p->sequence;
        last = MAX(last, p->sequence);
        batches++;
    }
    gboolean aside = g_str_has_suffix(name, ".damaged");
    printf("%s: %" G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT " intact batches", path,
           (guint64)size, batches);
    if (batches > 0)
        printf(" (sequences %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT ")", first, last);
    if (aside)
        printf("; %s\n",
               batches > 0 ? "replayable: `vigil spool replay` this file" : "nothing replayable");
    else
        printf("\n");
    for (guint i = 0; i < pieces->len; i++) {
        const struct vigild_spool_piece *p = &g_array_index(pieces, struct vigild_spool_piece, i);
        if (p->damaged)
            printf("  damaged: bytes %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                   " (%" G_GUINT64_FORMAT " bytes): %s\n",
                   p->offset_bytes, p->offset_bytes + p->length_bytes, p->length_bytes, p->why);
    }
    t->batches += aside ? 0 : batches;
    t->replayable += aside ? batches : 0;
    t->damaged_bytes += damaged;
    for (guint i = 0; i < pieces->len; i++)
        t->damaged_ranges += g_array_index(pieces, struct vigild_spool_piece, i).damaged;
    vigild_spool_scan_free(pieces);
    g_free(contents);
    g_free(path);
}

static int check(const char *dir)
{
    static const char *const segment_suffixes[] = {".spool", ".spool.damaged", NULL};
    static const char *const refused_suffixes[] = {".batch", NULL};
    GError *error = NULL;
    GPtrArray *names = files_ending(dir, segment_suffixes, &error);
    if (names == NULL) {
        fprintf(stderr, "vigil spool check: %s\n", error->message);
        g_error_free(error);
        return VIGIL_EXIT_FAILURE;
    }
    struct check_totals t = {0};
    for (guint i = 0; i < names->len; i++)
        check_file(dir, g_ptr_array_index(names, i), &t);
    char *refused_dir = g_build_filename(dir, "refused", NULL);
    GPtrArray *refused = files_ending(refused_dir, refused_suffixes, NULL);
    guint refused_count = refused != NULL ? refused->len : 0;
    printf("%s: %u segment and set-aside files, %" G_GUINT64_FORMAT
           " batches waiting in the segments, %" G_GUINT64_FORMAT
           " replayable in set-aside files, %" G_GUINT64_FORMAT
           " damaged ranges (%" G_GUINT64_FORMAT " bytes); %u refused batches in %s%s\n",
           dir, names->len, t.batches, t.replayable, t.damaged_ranges, t.damaged_bytes,
           refused_count, refused_dir,
           refused_count > 0 ? " (`vigil spool resend` sends them again)" : "");
    if (refused != NULL)
        g_ptr_array_free(refused, TRUE);
    g_free(refused_dir);
    g_ptr_array_free(names, TRUE);
    return t.damaged_ranges > 0 ? VIGIL_EXIT_FAILURE : VIGIL_EXIT_OK;
}

/* ---- replay, resend: asking vigild --------------------------------------------------------- */

/* Sends the request and reads the answer; FALSE with error set. */
static gboolean ask(const char *socket_path, const struct vigil_local_spool *request,
                    struct vigil_local_spool *answer, GError **error)
{
    int fd = vigil_cli_vigild_connect(socket_path, ANSWER_TIMEOUT_S,
                                      " (the spool is vigild's: it must run)", error);
    if (fd < 0)
        return FALSE;
    struct vigil_error err = {{0}};
    char *buffer = g_malloc(VIGIL_LOCAL_MAX_BYTES);
    enum vigil_local_type type;
    ssize_t length = -1;
    gboolean ok = FALSE;
    if (vigil_local_send(fd, VIGIL_LOCAL_SPOOL, request, sizeof *request, -1, &err))
        length = vigil_local_receive(fd, buffer, &type, NULL, &err);
    if (length < 0)
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "vigild on %s: %s", socket_path,
                    errno == EAGAIN ? "no answer in time" : err.message);
    else if (type == VIGIL_LOCAL_REFUSED)
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "vigild on %s refused: %.*s",
                    socket_path, (int)length, buffer);
    else if (type != VIGIL_LOCAL_SPOOL ||
             !vigil_local_decode_fixed(type, buffer, (size_t)length, answer, &err))
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                    "vigild on %s answered with a malformed message (%s)", socket_path,
                    err.message[0] != '\0' ? err.message : "not a spool answer");
    else
        ok = TRUE;
    close(fd);
    g_free(buffer);
    return ok;
}

static int ask_vigild(const char *what, const char *socket_option, const char *config_path,
                      const struct vigil_local_spool *request)
{
    GError *error = NULL;
    char *path = vigil_cli_socket_path(socket_option, config_path, &error);
    static struct vigil_local_spool answer;
    if (path == NULL || !ask(path, request, &answer, &error)) {
        fprintf(stderr, "vigil spool %s: %s\n", what, error->message);
        g_error_free(error);
        g_free(path);
        return VIGIL_EXIT_FAILURE;
    }
    printf("%" G_GUINT64_FORMAT " batches queued to be sent again, %" G_GUINT64_FORMAT
           " already waiting to be sent",
           answer.batches, answer.skipped);
    if (request->op == VIGIL_LOCAL_SPOOL_REPLAY)
        printf(", %" G_GUINT64_FORMAT " bytes of %s in no intact batch (it is now %s.replayed)",
               answer.unreadable_bytes, request->path, request->path);
    printf("\n");
    g_free(path);
    return VIGIL_EXIT_OK;
}

int vigil_cli_spool(int argc, char **argv)
{
    char *socket_option = NULL, *config_path = NULL;
    GOptionEntry entries[] = {
        {"socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_option,
         "replay, resend: the socket of vigild (default: $VIGIL_SOCKET, else [daemon] socket)",
         "PATH"},
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "The configuration whose [uplink] spool_dir (check) or [daemon] socket to use", "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "check [DIR] | replay FILE | resend",
        .summary = "check: what vigild's spool holds, its damaged ranges and what can be replayed "
                   "(changes nothing; exit 1 when damaged).\nreplay: asks vigild to send the "
                   "intact batches of FILE (a NAME.damaged the spool set aside).\nresend: asks "
                   "vigild to send again the batches vigil-txd refused (kept in refused/).",
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    const char *what = argc > 1 ? argv[1] : "";
    if (!vigil_cli_options_ok("spool", &help, entries, &argc, &argv))
        goto out;
    what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "check") == 0 && argc <= 3) {
        /* [uplink] as written: its key files are vigild's to read. */
        struct vigild_uplink_settings uplink = {0};
        if (argc == 2) {
            vigil_config *config = vigil_cli_warehouse_config(config_path, &error);
            gboolean filled =
                config != NULL && vigil_settings_fill(config, &vigild_uplink_keys, &uplink, &error);
            vigil_config_free(config);
            if (!filled) {
                fprintf(stderr, "vigil spool check: %s\n", error->message);
                status = VIGIL_EXIT_FAILURE;
                goto out;
            }
        }
        status = check(argc == 3 ? argv[2] : uplink.spool_dir);
        vigil_settings_clear(&vigild_uplink_keys, &uplink);
    } else if (strcmp(what, "replay") == 0 && argc == 3) {
        static struct vigil_local_spool request;
        memset(&request, 0, sizeof request);
        request.op = VIGIL_LOCAL_SPOOL_REPLAY;
        char *absolute = g_canonicalize_filename(argv[2], NULL);
        if (strlen(absolute) >= sizeof request.path) {
            fprintf(stderr, "vigil spool replay: %s: a path longer than %zu bytes\n", absolute,
                    sizeof request.path - 1);
            g_free(absolute);
            goto out;
        }
        g_strlcpy(request.path, absolute, sizeof request.path);
        g_free(absolute);
        status = ask_vigild(what, socket_option, config_path, &request);
    } else if (strcmp(what, "resend") == 0 && argc == 2) {
        static struct vigil_local_spool request;
        memset(&request, 0, sizeof request);
        request.op = VIGIL_LOCAL_SPOOL_RESEND;
        status = ask_vigild(what, socket_option, config_path, &request);
    } else {
        fprintf(stderr, "usage: vigil spool check [DIR] | replay FILE | resend [--socket PATH] "
                        "[--config FILE]\n");
    }
out:
    g_clear_error(&error);
    g_free(socket_option);
    g_free(config_path);
    return status;
}
