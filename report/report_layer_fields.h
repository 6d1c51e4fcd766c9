/* vigil — the members of a file's layer ("posix", "stdio") in the report's
 * JSON, in the order they are written: one table, which report_files.c
 * writes by and report_json.c reads back by, so that the two cannot drift
 * apart. */
#ifndef VIGIL_REPORT_LAYER_FIELDS_H
#define VIGIL_REPORT_LAYER_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include "vigil/report.h"

enum vigil_report_layer_kind {
    VIGIL_REPORT_LAYER_COUNT,     /* uint64_t */
    VIGIL_REPORT_LAYER_OFFSET,    /* int64_t: Darshan's MAX_BYTE (0 for none; -1 before issue 33) */
    VIGIL_REPORT_LAYER_INTEGER,   /* int64_t: the mode, -1 when not known */
    VIGIL_REPORT_LAYER_SIZE_HIST, /* uint64_t[VIGIL_REPORT_SIZE_BINS] */
    VIGIL_REPORT_LAYER_COMMON,    /* struct vigil_report_common[VIGIL_REPORT_COMMON] */
    VIGIL_REPORT_LAYER_SECONDS,   /* double, to VIGIL_REPORT_FIGURE_DECIMALS */
};

struct vigil_report_layer_field {
    enum vigil_report_layer_kind kind;
    const char *name;
    size_t offset;          /* in struct vigil_report_file_layer */
    size_t count_offset;    /* COMMON: of its int count */
    const char *value_name; /* COMMON: "size" or "stride" */
    /* Added with issue 33's counters: a report from before lacks it, and
     * reads back as 0 (-1 for an INTEGER, "not known"). */
    bool added;
};

extern const struct vigil_report_layer_field vigil_report_layer_fields[];
extern const size_t vigil_report_layer_field_count;

#endif
