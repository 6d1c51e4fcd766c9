/* vigil — the report renderer's writing helpers (report/report_text.c), for
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
void vigil_report_put_clean_bytes(struct vigil_report_sink *s, const char *text, size_t length);
/* A table row's first cell (a file's path, a region's name): cleaned and
 * padded as above (`_bytes`: `length` bytes that need no NUL); one wider than `width` ends its line
 * and the row goes on under it, as df(1) does with a long device name, so that the columns stay
 * aligned and the name whole. */
void vigil_report_put_cell(struct vigil_report_sink *s, const char *text, int width);
void vigil_report_put_cell_bytes(struct vigil_report_sink *s, const char *text, size_t length,
                                 int width);
/* A name table of the report's X-macro lists (VIGIL_REPORT_RANK_METRICS…):
 * `static const char *const names[] = {LIST(VIGIL_REPORT_NAME_OF)};`, read
 * both ways: the name at `index` ("?" out of range), and the index of
 * `name` (`count` when it is none of them). */
#define VIGIL_REPORT_NAME_OF(suffix, name) name,
const char *vigil_report_name_at(const char *const *names, int count, int index);
int vigil_report_name_index(const char *const *names, int count, const char *name);
/* A JSON string in plain ASCII. */
void vigil_report_put_json_string(struct vigil_report_sink *s, const char *text);
void vigil_report_put_json_bytes(struct vigil_report_sink *s, const char *text, size_t length);

/* The files (report_files.c): the busiest in the text, every one in the
 * JSON's "files"; "files_total" and "timeline" after the JSON's other
 * members (nothing for a report from an older vigil, which had neither). */
void vigil_report_text_files(struct vigil_report_sink *s, const struct vigil_report *r);
void vigil_report_json_files(struct vigil_report_sink *s, const struct vigil_report *r);
void vigil_report_json_timeline(struct vigil_report_sink *s, const struct vigil_report *r);

/* A file's MPI parts (report_files_mpi.c): in the JSON, its "mpiio" and
 * "ranks" members (null when it has none), each written with a leading
 * comma; in the text, after the files, a table of the files MPI-IO used and
 * in a job's report one of how its ranks shared them; nothing when no file
 * has either. */
void vigil_report_json_file_mpi(struct vigil_report_sink *s, const struct vigil_report_file *f);
void vigil_report_text_files_mpi(struct vigil_report_sink *s, const struct vigil_report *r);

/* The findings (report_findings.c): a list after the regions in the text,
 * "findings" and "findings_thresholds" in the JSON, each member after a
 * comma; nothing when the report has none made (findings_thresholds NULL). */
void vigil_report_text_findings(struct vigil_report_sink *s, const struct vigil_report *r);
void vigil_report_json_findings(struct vigil_report_sink *s, const struct vigil_report *r);

/* The code regions' parts of the report (report_regions.c): a table after
 * the files in the text (and per-rank figures in a job's), and the
 * top-level "regions" and "region_notes" members in the JSON; nothing at
 * all when the process had no region. */
void vigil_report_text_regions(struct vigil_report_sink *s, const struct vigil_report *r);
void vigil_report_json_regions(struct vigil_report_sink *s, const struct vigil_report *r);

#endif
