/* vigil — the report renderer's writing helpers (core/report_text.c), for
 * the other files that render parts of the report (report_regions.c).
 * Private to the core. */
#ifndef VIGIL_REPORT_PUT_H
#define VIGIL_REPORT_PUT_H

#include "vigil/report.h"

#define VIGIL_REPORT_FIGURE_DECIMALS 6 /* what the JSON gives a figure */

void vigil_report_put_text(struct vigil_report_sink *s, const char *text);
__attribute__((format(printf, 2, 3))) void vigil_report_put_printf(struct vigil_report_sink *s,
                                                                   const char *fmt, ...);
/* A string for a terminal, padded to `width` characters. */
void vigil_report_put_clean(struct vigil_report_sink *s, const char *text, int width);
/* A JSON string in plain ASCII. */
void vigil_report_put_json_string(struct vigil_report_sink *s, const char *text);

/* The code regions' parts of the report (report_regions.c): a table after
 * the files in the text (and per-rank figures in a job's), and the
 * top-level "regions" and "region_notes" members in the JSON; nothing at
 * all when the process had no region. */
void vigil_report_text_regions(struct vigil_report_sink *s, const struct vigil_report *r);
void vigil_report_json_regions(struct vigil_report_sink *s, const struct vigil_report *r);

#endif
