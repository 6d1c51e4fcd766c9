/* vigil — a report's JSON read back into its figures (struct vigil_report),
 * so that `vigil report` prints a stored report with the renderer that
 * printed it at the end of the run (report/report_text.c).
 *
 * The reading is strict: a member missing, of the wrong type, or naming an
 * operation or layer this vigil does not know is an error that names it
 * ("report: layers.posix.fsync.calls: expected a count, found a string").
 * A report from a newer vigil ("vigil_report" above this one's) is refused
 * rather than printed with figures left out. */
#ifndef VIGIL_CLI_REPORT_JSON_H
#define VIGIL_CLI_REPORT_JSON_H

#include <glib.h>
#include <json-glib/json-glib.h>

#include "vigil/report.h"

/* The figures and the memory their strings and arrays live in. */
struct vigil_cli_report {
    struct vigil_report r;
    GStringChunk *strings;
    const char **argv;
    struct vigil_report_link *rank_links;
    struct vigil_report_region *regions;
    struct vigil_report_file *files;
    struct vigil_report_finding *findings;
};

gboolean vigil_cli_report_parse(const char *json, gssize length, struct vigil_cli_report *out,
                                GError **error);
void vigil_cli_report_clear(struct vigil_cli_report *report);

/* The report rendered as text or JSON (as the preload library prints it). */
char *vigil_cli_report_text(const struct vigil_report *r);
char *vigil_cli_report_json(const struct vigil_report *r);

#endif
