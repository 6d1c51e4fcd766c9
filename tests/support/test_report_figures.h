/* vigil — reports' figures for the tests: every kind of report the
 * preload library writes, filled in by hand with figures chosen to be
 * hard on both of the report's forms (decimals that round to a tie, values
 * past 2^53, bytes that are not UTF-8). Shared by tests/unit/
 * test_report_json.c and the report fuzzer's seeds. Each fills `r` whole;
 * what it points to is static. */
#ifndef VIGIL_TEST_REPORT_FIGURES_H
#define VIGIL_TEST_REPORT_FIGURES_H

#include "vigil/report.h"

/* dd under vigild, with its summary. */
void test_report_plain_run(struct vigil_report *r);
/* Bytes that are not UTF-8, control characters, quotes, characters outside
 * the BMP in the program, argv, the host and the paths. */
void test_report_odd_bytes(struct vigil_report *r);
/* An MPI job's joint report on rank 0: four ranks, one without energy. */
void test_report_mpi_joint(struct vigil_report *r);

/* A run with code regions: nested, with and without energy, one left open,
 * a name to escape, and every kind of note. */
void test_report_regions(struct vigil_report *r);

/* Every kind, with a name for messages. */
/* Every file with Darshan's counters, more than the text lists, and the
 * timeline. */
void test_report_files(struct vigil_report *r);

/* A file's counters of one layer with nothing counted yet: no offset and
 * no time (-1). Inline, for the tests that do not link the figures. */
static inline struct vigil_report_file_layer test_report_layer_none(void)
{
    return (struct vigil_report_file_layer){
        .first_open_s = -1,
        .last_close_s = -1,
        .first_io_s = -1,
        .last_io_s = -1,
        .mode = -1,
    };
}

enum { TEST_REPORT_FIGURE_SETS = 13 };
extern void (*const test_report_figure_sets[TEST_REPORT_FIGURE_SETS])(struct vigil_report *);
extern const char *const test_report_figure_set_names[TEST_REPORT_FIGURE_SETS];

#endif
