/* vigil — the MPI parts of a report's files read back from its JSON: each
 * file's "mpiio" and "ranks" members (report/report_files_mpi.c writes them),
 * null or absent when the file has none (reports of an earlier vigil have
 * neither). As strict as the rest of report_json.c: a member missing or of
 * the wrong type is named. */
#include <json-glib/json-glib.h>
#include <math.h>

#include "report_json.h"

#define FILES_MPI_ERROR (g_quark_from_static_string("vigil-report-json"))

struct mpi_reader {
    GError **error;
    gboolean failed;
};

/* "report: files.3.mpiio.coll_reads: …", as report_json.c names members. */
__attribute__((format(printf, 4, 5))) static void fail(struct mpi_reader *rd, const char *where,
                                                       const char *name, const char *fmt, ...)
{
    if (rd->failed)
        return;
    rd->failed = TRUE;
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(rd->error, FILES_MPI_ERROR, 0, "report: %s.%s: %s", where, name, what);
    g_free(what);
}

static JsonNode *need(struct mpi_reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = json_object_get_member(o, name);
    if (node == NULL)
        fail(rd, where, name, "missing");
    return node;
}

static uint64_t count(struct mpi_reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = need(rd, o, where, name);
    if (node == NULL)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64 ||
        json_node_get_int(node) < 0) {
        fail(rd, where, name, "expected a count (an integer of 0 or more)");
        return 0;
    }
    return (uint64_t)json_node_get_int(node);
}

static int32_t rank_of(struct mpi_reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = need(rd, o, where, name);
    if (node == NULL)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64 ||
        json_node_get_int(node) < 0 || json_node_get_int(node) > INT32_MAX) {
        fail(rd, where, name, "expected a rank (an integer of 0 or more)");
        return 0;
    }
    return (int32_t)json_node_get_int(node);
}

/* A finite number of 0 or more. */
static double amount(struct mpi_reader *rd, JsonObject *o, const char *where, const char *name)
{
    JsonNode *node = need(rd, o, where, name);
    if (node == NULL)
        return 0;
    if (!JSON_NODE_HOLDS_VALUE(node) || (json_node_get_value_type(node) != G_TYPE_INT64 &&
                                         json_node_get_value_type(node) != G_TYPE_DOUBLE)) {
        fail(rd, where, name, "expected a number");
        return 0;
    }
    double value = json_node_get_double(node);
    if (!isfinite(value) || value < 0) {
        fail(rd, where, name, "expected a number of 0 or more");
        return 0;
    }
    return value;
}

/* The member as an object; NULL when it is null or absent. */
static JsonObject *optional_object(struct mpi_reader *rd, JsonObject *o, const char *where,
                                   const char *name)
{
    JsonNode *node = json_object_get_member(o, name);
    if (node == NULL || JSON_NODE_HOLDS_NULL(node))
        return NULL;
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        fail(rd, where, name, "expected an object or null");
        return NULL;
    }
    return json_node_get_object(node);
}

static void read_mpiio(struct mpi_reader *rd, JsonObject *m, const char *where,
                       struct vigil_report_file_mpiio *out)
{
    char *at = g_strdup_printf("%s.mpiio", where);
    *out = (struct vigil_report_file_mpiio){
        .indep_reads = count(rd, m, at, "indep_reads"),
        .indep_writes = count(rd, m, at, "indep_writes"),
        .coll_reads = count(rd, m, at, "coll_reads"),
        .coll_writes = count(rd, m, at, "coll_writes"),
        .split_reads = count(rd, m, at, "split_reads"),
        .split_writes = count(rd, m, at, "split_writes"),
        .nb_reads = count(rd, m, at, "nb_reads"),
        .nb_writes = count(rd, m, at, "nb_writes"),
        .read_bytes = count(rd, m, at, "read_bytes"),
        .written_bytes = count(rd, m, at, "written_bytes"),
        .read_time_s = amount(rd, m, at, "read_time_s"),
        .write_time_s = amount(rd, m, at, "write_time_s"),
        .meta_time_s = amount(rd, m, at, "meta_time_s"),
    };
    g_free(at);
}

static void read_ranks(struct mpi_reader *rd, JsonObject *k, const char *where,
                       struct vigil_report_file_ranks *out)
{
    char *at = g_strdup_printf("%s.ranks", where);
    JsonNode *shared = need(rd, k, at, "shared");
    if (shared != NULL &&
        (!JSON_NODE_HOLDS_VALUE(shared) || json_node_get_value_type(shared) != G_TYPE_BOOLEAN))
        fail(rd, at, "shared", "expected true or false");
    *out = (struct vigil_report_file_ranks){
        .count = rank_of(rd, k, at, "count"),
        .shared = shared != NULL && !rd->failed && json_node_get_boolean(shared),
        .fastest_rank = rank_of(rd, k, at, "fastest_rank"),
        .fastest_s = amount(rd, k, at, "fastest_s"),
        .fastest_bytes = count(rd, k, at, "fastest_bytes"),
        .slowest_rank = rank_of(rd, k, at, "slowest_rank"),
        .slowest_s = amount(rd, k, at, "slowest_s"),
        .slowest_bytes = count(rd, k, at, "slowest_bytes"),
        .time_variance_s2 = amount(rd, k, at, "time_variance_s2"),
        .bytes_variance = amount(rd, k, at, "bytes_variance"),
    };
    /* Added after the first of these reports: absent, they are unknown. */
    out->most_posix_rank = out->least_posix_rank = -1;
    if (json_object_has_member(k, "most_posix_rank")) {
        out->most_posix_rank = rank_of(rd, k, at, "most_posix_rank");
        out->most_posix_bytes = count(rd, k, at, "most_posix_bytes");
        out->least_posix_rank = rank_of(rd, k, at, "least_posix_rank");
        out->least_posix_bytes = count(rd, k, at, "least_posix_bytes");
    }
    if (!rd->failed && out->shared != (out->count > 1))
        fail(rd, at, "shared", "%s for %d ranks", out->shared ? "true" : "false", (int)out->count);
    g_free(at);
}

gboolean vigil_cli_report_read_file_mpi(JsonObject *file, const char *where,
                                        struct vigil_report_file *f, GError **error)
{
    struct mpi_reader rd = {.error = error};
    JsonObject *m = optional_object(&rd, file, where, "mpiio");
    f->has_mpiio = m != NULL;
    if (m != NULL)
        read_mpiio(&rd, m, where, &f->mpiio);
    JsonObject *k = optional_object(&rd, file, where, "ranks");
    f->has_ranks = k != NULL;
    if (k != NULL && !rd.failed)
        read_ranks(&rd, k, where, &f->ranks);
    return !rd.failed;
}
