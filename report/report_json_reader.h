/* vigil — the strict member readers that read a report's JSON back
 * (report_json.c, report_json_regions.c, report_json_files_mpi.c): one
 * reader, so that every part names a member the same way and refuses the
 * same things.
 *
 * The first problem is kept, as "report: WHERE.NAME: WHAT" ("report:
 * files.0.mpiio.coll_reads: expected a count (an integer of 0 or more),
 * found a string"), and the reader is then failed: later reads return
 * their unknown value (0, NaN, "", NULL) and add nothing. A NULL object
 * (one that was itself missing or of the wrong type) reads as missing
 * without a second message. */
#ifndef VIGIL_REPORT_JSON_READER_H
#define VIGIL_REPORT_JSON_READER_H

#include <stdint.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "report_json.h"
#include "vigil/json_members.h"

struct report_reader {
    struct vigil_cli_report *out; /* whose chunk keeps the strings read */
    GError **error;
    gboolean failed;
};

/* "report: WHERE: WHAT", unless a problem came first. */
__attribute__((format(printf, 3, 4))) void report_fail(struct report_reader *rd, const char *where,
                                                       const char *fmt, ...);
/* "WHERE.NAME", or NAME at the top (WHERE ""). g_free it. */
char *report_path(const char *where, const char *name);
/* Fails with "WHERE.NAME: expected EXPECTED, found KIND". */
void report_wrong_type(struct report_reader *rd, const char *where, const char *name,
                       const char *expected, JsonNode *node);

/* The member NAME of `o`, which must be there (null allowed). */
JsonNode *report_member(struct report_reader *rd, JsonObject *o, const char *where,
                        const char *name);
gboolean report_is_null(JsonNode *node);

/* Members of one kind; each must be there. */
JsonObject *report_object_member(struct report_reader *rd, JsonObject *o, const char *where,
                                 const char *name);
/* An object, or NULL for null. */
JsonObject *report_object_or_null(struct report_reader *rd, JsonObject *o, const char *where,
                                  const char *name);
JsonArray *report_array_member(struct report_reader *rd, JsonObject *o, const char *where,
                               const char *name);
/* An element that must be an object; `where` names it. */
JsonObject *report_object_of(struct report_reader *rd, JsonNode *node, const char *where);

/* An integer of 0 or more. */
uint64_t report_count_of(struct report_reader *rd, JsonNode *node, const char *where,
                         const char *name);
uint64_t report_count_member(struct report_reader *rd, JsonObject *o, const char *where,
                             const char *name);
/* A count that is null when vigild did not give it: 0 then; `present`
 * (when not NULL) says whether it was given. */
uint64_t report_count_or_null(struct report_reader *rd, JsonObject *o, const char *where,
                              const char *name, gboolean *present);
/* An array of exactly `n` counts. */
void report_counts_member(struct report_reader *rd, JsonObject *o, const char *where,
                          const char *name, uint64_t *out, guint n);
int32_t report_int32_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name);
/* An MPI rank: 0 to INT32_MAX. */
int32_t report_rank_member(struct report_reader *rd, JsonObject *o, const char *where,
                           const char *name);
/* A signed integer (an offset, a stride). */
int64_t report_i64_member(struct report_reader *rd, JsonObject *o, const char *where,
                          const char *name);
/* A number; null for NaN when `nullable`. */
double report_number_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name, gboolean nullable);
/* A finite number of 0 or more (a time, a variance). */
double report_amount_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name);
gboolean report_bool_member(struct report_reader *rd, JsonObject *o, const char *where,
                            const char *name);
/* A string, kept in the report's chunk; "" for null when `nullable`. */
const char *report_string_of(struct report_reader *rd, JsonNode *node, const char *where,
                             const char *name, gboolean nullable);
const char *report_string_member(struct report_reader *rd, JsonObject *o, const char *where,
                                 const char *name, gboolean nullable);

/* The parts read apart: the "regions" and "region_notes" members of the
 * top (report_json_regions.c), both absent in a report without regions;
 * a file's "mpiio" and "ranks" (report_json_files_mpi.c), each null or
 * absent when it has none; `where` names the file. */
void report_read_regions(struct report_reader *rd, JsonObject *root);
/* "findings" and "findings_thresholds" (report_json_findings.c), both
 * absent in a report from a vigil that made no findings. */
void report_read_findings(struct report_reader *rd, JsonObject *root);
/* A layer's or MPI-IO's "common_sizes" / "common_strides" (`name`): at
 * most VIGIL_REPORT_COMMON objects of `value_name` ("size", never
 * negative, or "stride"), "count" and "exact" (absent before issue 33:
 * false); returns how many. */
int report_read_common(struct report_reader *rd, JsonObject *o, const char *where, const char *name,
                       const char *value_name, struct vigil_report_common *out);
void report_read_file_mpi(struct report_reader *rd, JsonObject *file, const char *where,
                          struct vigil_report_file *f);

#endif
