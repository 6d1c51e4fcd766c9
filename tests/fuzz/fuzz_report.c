/* libFuzzer target for the report JSON reader (report/report_json.c), which
 * `vigil report` runs on what programs sent to vigild.
 *
 * Promises checked: a refusal says why; an accepted report renders as text
 * and as JSON, and that JSON is read back to the same figures: rendered
 * again it gives the same JSON and the same text, byte for byte (what lets
 * `vigil report` print a stored report as the console showed it). GLib's
 * criticals are fatal here: they are programming errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"
#include "fuzz_must.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy exactly as long as the input, so that ASan sees a read past it. */
    char *json = g_malloc(size > 0 ? size : 1);
    if (size > 0)
        memcpy(json, data, size);
    struct vigil_cli_report report;
    GError *error = NULL;
    if (!vigil_cli_report_parse(json, (gssize)size, &report, &error)) {
        must(error != NULL && error->message[0] != '\0');
        g_error_free(error);
        g_free(json);
        return 0;
    }
    char *text = vigil_cli_report_text(&report.r);
    char *again = vigil_cli_report_json(&report.r);
    struct vigil_cli_report back;
    if (!vigil_cli_report_parse(again, -1, &back, &error))
        abort(); /* its own JSON is refused */
    char *text_back = vigil_cli_report_text(&back.r);
    char *json_back = vigil_cli_report_json(&back.r);
    must(strcmp(again, json_back) == 0);
    must(strcmp(text, text_back) == 0);
    g_free(json_back);
    g_free(text_back);
    vigil_cli_report_clear(&back);
    g_free(again);
    g_free(text);
    vigil_cli_report_clear(&report);
    g_free(json);
    return 0;
}
