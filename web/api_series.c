/* vigil-web — a run's or a node's statistics over time:
 *   GET /api/v1/runs/RUN_ID/series?metric=M&points=N[&from=&to=&per_node=&format=&min_max_lines=]
 *   GET /api/v1/nodes/NODE_ID/series?metric=M&points=N[&from=&to=&format=&min_max_lines=]
 *
 * Downsampled (a level's blocks in C, series_levels.c): the interval is cut into N buckets and
 * each gives the min, mean and max of the 1 s roll-ups in it, so a spike
 * one roll-up long survives any N, and the browser gets N points per line
 * however long the run. Many nodes become a median with a min/max band.
 *
 * Long intervals read a coarser level (migration 15: 5 s, 60 s slots, one
 * metric of one node a row): the coarsest whose slot is no longer than a
 * bucket, for the part of the interval it has built, and the 1 s roll-ups
 * for the rest (the edges not on a slot, the live tail), in one query.
 * level=auto|1|5|60 picks one (the levels are statistics_levels' rows). */
#include <math.h>
#include <string.h>

#include "api.h"
#include "db_pool.h"
#include "json_numbers.h"
#include "json_rows.h"
#include "series_levels.h"

struct series_part {
    const char *label;
    const char *name_like; /* SQL LIKE on metrics.name */
};

static const struct series_metric {
    const char *name;
    const char *unit;
    enum series_how how;
    struct series_part parts[2];
} series_metrics[] = {
    /* node.energy_j: vigild's one running sum of the node's energy, whatever
     * its source (one metric per source and label, so a run spanning two
     * sources shows both in "source"). */
    {"power", "W", SERIES_RATE, {{"power", "node.energy\\_j"}}},
    {"energy", "J", SERIES_RUNNING_SUM, {{"energy", "node.energy\\_j"}}},
    {"cpu", "%", SERIES_CPU_BUSY, {{"busy", "cpu.%\\_s"}}},
    {"memory", "bytes", SERIES_GAUGE, {{"used", "mem.used\\_bytes"}}},
    {"io_bytes",
     "B/s",
     SERIES_RATE,
     {{"read", "disk.%.read\\_bytes"}, {"write", "disk.%.write\\_bytes"}}},
    {"io_ops", "ops/s", SERIES_RATE, {{"read", "disk.%.reads"}, {"write", "disk.%.writes"}}},
    {"network", "B/s", SERIES_RATE, {{"rx", "net.%.rx\\_bytes"}, {"tx", "net.%.tx\\_bytes"}}},
};

/* Times in float8 (date_part), not numeric (extract): the series query
 * handles a hundred thousand roll-ups, and numeric arithmetic was most of
 * its time (bench/web). The bucket of a roll-up start `t`, with $4 and $5
 * the interval in µs and $6 the number of buckets: */
#define BUCKET_SQL(t)                                                                              \
    "least($6::int - 1, floor((date_part('epoch', " t ") - $4::float8 / 1e6::float8) * $6::int"    \
    " / (($5::float8 - $4::float8) / 1e6::float8)))::int"
#define SECONDS_SQL(interval) "nullif(date_part('epoch', " interval "), 0)"

/* Two steps, when a label sums several metrics (every disk, every CPU
 * state) or needs the roll-ups in order (a running sum): one value per
 * node, label and roll-up start (v, or lo/mid/hi for gauges), then per
 * bucket. */
static const char *const per_rollup_sql[] = {
    /* Parenthesised: one literal each, made of several. */
    [SERIES_RATE] = ("sum(st.delta) / " SECONDS_SQL("max(st.end_time - st.start_time)") " AS v"),
    [SERIES_GAUGE] = "sum(st.min) AS lo, sum(st.mean) AS mid, sum(st.max) AS hi",
    [SERIES_RUNNING_SUM] = "sum(sum(st.delta)) OVER w AS v",
    [SERIES_CPU_BUSY] = ("100 * (1 - sum(st.delta) FILTER (WHERE m.name LIKE '%.idle\\_s'"
                         " OR m.name LIKE '%.iowait\\_s') / nullif(sum(st.delta), 0)) AS v"),
};

/* $1 nodes, $2 labels, $3 patterns, $4 from (µs), $5 to (µs), $6 buckets.
 * The roll-ups are read from their arrays (migration 13), not through the
 * view statistics_rollups: m says where each wanted metric is in each
 * metric set (i), and st is that element of a node's window. The view
 * unnests all of a node's metrics (434 on a large node) to keep one. */
#define SERIES_FROM_SQL                                                                            \
    "WITH parts AS (SELECT * FROM unnest($2::text[], $3::text[]) AS p(label, pattern)),"           \
    " wanted AS (SELECT m.metric_id, m.name, parts.label FROM metrics m"                           \
    "        JOIN parts ON m.name LIKE parts.pattern),"                                            \
    " m AS MATERIALIZED (SELECT s.metric_set_id, w.metric_id, w.name, w.label, i"                  \
    "        FROM metric_sets s JOIN wanted w ON w.metric_id = ANY (s.metric_ids),"                \
    "        unnest(array_positions(s.metric_ids, w.metric_id)) AS i)"
#define SERIES_ROLLUPS_SQL                                                                         \
    " statistics_rollup_arrays a JOIN m USING (metric_set_id),"                                    \
    " LATERAL (SELECT a.node_id, a.start_time, a.end_time, a.min[m.i] AS min,"                     \
    "                 a.mean[m.i] AS mean, a.max[m.i] AS max, a.delta[m.i] AS delta) st"
#define SERIES_WHERE_SQL                                                                           \
    " WHERE a.node_id = ANY ($1::bigint[])"                                                        \
    "   AND a.start_time >= to_timestamp($4::float8 / 1e6::float8)"                                \
    "   AND a.start_time < to_timestamp($5::float8 / 1e6::float8)"

static char *series_sql(enum series_how how, gboolean one_metric_per_label)
{
    /* One step when each label is one metric: a rate or a gauge straight
     * into buckets (a third of the time of two steps). */
    if (one_metric_per_label && (how == SERIES_RATE || how == SERIES_GAUGE))
        return g_strdup(
            how == SERIES_RATE ? SERIES_FROM_SQL
                " SELECT st.node_id, m.label, " BUCKET_SQL(
                    "st.start_time") " AS bucket,"
                                     "        min(r.v), avg(r.v), max(r.v)"
                                     "   FROM" SERIES_ROLLUPS_SQL ","
                                     "        LATERAL (SELECT st.delta / " SECONDS_SQL(
                                         "st.end_time - st.start_time") " AS v) r" SERIES_WHERE_SQL
                                                                        " GROUP BY 1, 2, 3 ORDER "
                                                                        "BY 1, 2, 3"
                               : SERIES_FROM_SQL
                " SELECT st.node_id, m.label, " BUCKET_SQL(
                    "st.start_time") " AS bucket,"
                                     "        min(st.min), avg(st.mean), max(st.max)"
                                     "   FROM" SERIES_ROLLUPS_SQL SERIES_WHERE_SQL
                                     " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3");
    gboolean gauge = how == SERIES_GAUGE;
    return g_strdup_printf(
        SERIES_FROM_SQL ","
                        " per_rollup AS ("
                        "  SELECT st.node_id, m.label, st.start_time, %s"
                        "    FROM" SERIES_ROLLUPS_SQL SERIES_WHERE_SQL
                        "   GROUP BY st.node_id, m.label, st.start_time"
                        "  WINDOW w AS (PARTITION BY st.node_id, m.label ORDER BY st.start_time))"
                        "SELECT node_id, label, " BUCKET_SQL(
                            "start_time") " AS bucket, %s"
                                          "  FROM per_rollup GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        per_rollup_sql[how], gauge ? "min(lo), avg(mid), max(hi)" : "min(v), avg(v), max(v)");
}

/* The levels of statistics_levels: each one's slot and how far it is built. */
struct series_level {
    gint64 level_s;
    gint64 built_until_us; /* G_MININT64: nothing built */
};

/* The level asked for ("auto", NULL or a number) among `levels`: 1 (the
 * roll-ups), or a level; FALSE with a 400 naming `level` otherwise. */
static gboolean choose_level(struct web_request *req, const char *asked, const GArray *levels,
                             double bucket_s, gint64 *level_s, GError **error)
{
    *level_s = 1;
    if (asked == NULL || strcmp(asked, "auto") == 0) {
        for (guint i = 0; i < levels->len; i++) {
            const struct series_level *l = &g_array_index(levels, struct series_level, i);
            if ((double)l->level_s <= bucket_s && l->level_s > *level_s)
                *level_s = l->level_s;
        }
        return TRUE;
    }
    guint64 n = 0;
    gboolean number = g_ascii_string_to_unsigned(asked, 10, 1, G_MAXINT32, &n, NULL);
    for (guint i = 0; number && n > 1 && i < levels->len; i++)
        if (g_array_index(levels, struct series_level, i).level_s == (gint64)n) {
            *level_s = (gint64)n;
            return TRUE;
        }
    if (number && n == 1)
        return TRUE;
    GString *known = g_string_new("auto, 1");
    for (guint i = 0; i < levels->len; i++)
        g_string_append_printf(known, ", %" G_GINT64_FORMAT,
                               g_array_index(levels, struct series_level, i).level_s);
    web_bad_parameter(req, error, "level", "'%s' is not a level: one of %s (seconds)", asked,
                      known->str);
    g_string_free(known, TRUE);
    return FALSE;
}

/* Whether each label of the series is one metric name in the catalogue
 * (one disk, one interface; power, memory). */
static gboolean one_metric_per_label(struct web_request *req, const char *labels,
                                     const char *patterns, gboolean *one, GArray *levels,
                                     GError **error)
{
    const char *params[] = {labels, patterns};
    /* And the levels, in the same round trip (one row each). */
    PGresult *r = web_db_query(
        req,
        "SELECT (SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT m.name) AS n"
        "  FROM unnest($1::text[], $2::text[]) AS p(label, pattern)"
        "  JOIN metrics m ON m.name LIKE p.pattern GROUP BY p.label) c), l.level_s,"
        "  (extract(epoch FROM l.built_until) * 1e6)::bigint"
        "  FROM (SELECT 1) one LEFT JOIN statistics_levels l ON true ORDER BY l.level_s",
        2, params, error);
    if (r == NULL)
        return FALSE;
    *one = g_ascii_strtoll(PQgetvalue(r, 0, 0), NULL, 10) <= 1;
    for (int i = 0; i < PQntuples(r); i++) {
        if (PQgetisnull(r, i, 1))
            continue;
        struct series_level l = {
            .level_s = g_ascii_strtoll(PQgetvalue(r, i, 1), NULL, 10),
            .built_until_us =
                PQgetisnull(r, i, 2) ? G_MININT64 : g_ascii_strtoll(PQgetvalue(r, i, 2), NULL, 10),
        };
        g_array_append_val(levels, l);
    }
    PQclear(r);
    return TRUE;
}

/* A PostgreSQL array literal of the metric's labels or LIKE patterns:
 * each quoted, its backslashes and quotes escaped. */
static char *parts_array(const struct series_metric *sm, gboolean patterns)
{
    GString *a = g_string_new("{");
    for (guint p = 0; p < G_N_ELEMENTS(sm->parts) && sm->parts[p].label != NULL; p++) {
        const char *item = patterns ? sm->parts[p].name_like : sm->parts[p].label;
        g_string_append(a, p > 0 ? ",\"" : "\"");
        for (const char *c = item; *c != '\0'; c++) {
            if (*c == '\\' || *c == '"')
                g_string_append_c(a, '\\');
            g_string_append_c(a, *c);
        }
        g_string_append_c(a, '"');
    }
    g_string_append_c(a, '}');
    return g_string_free(a, FALSE);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* The nodes of the request, with their hostnames: the run's (its
 * processes the viewer may see), or one. */
static PGresult *query_nodes(struct web_request *req, gboolean of_run, const char *id,
                             GError **error)
{
    char uid_buf[24];
    const char *params[] = {id, web_viewer_uid_param(req, uid_buf)};
    return web_db_query(req,
                        of_run ? "SELECT DISTINCT p.node_id, n.hostname FROM processes p"
                                 "  JOIN nodes n USING (node_id)"
                                 " WHERE p.run_id = $1::bigint"
                                 "   AND ($2::bigint IS NULL OR p.uid = $2::bigint)"
                                 " ORDER BY n.hostname"
                               : "SELECT node_id, hostname FROM nodes WHERE node_id = $1::bigint",
                        of_run ? 2 : 1, params, error);
}

/* The default interval: the run's (to now while it runs), or the node's
 * last hour of roll-ups. */
static gboolean default_interval(struct web_request *req, gboolean of_run, const char *id,
                                 gint64 *from_us, gint64 *to_us, GError **error)
{
    char uid_buf[24];
    const char *params[] = {id, web_viewer_uid_param(req, uid_buf)};
    PGresult *r = web_db_query(
        req,
        of_run ? "SELECT (extract(epoch FROM min(start_time)) * 1e6)::bigint,"
                 "       (extract(epoch FROM CASE WHEN bool_or(end_time IS NULL) THEN now()"
                 "                            ELSE max(end_time) END) * 1e6)::bigint"
                 "  FROM processes WHERE run_id = $1::bigint"
                 "   AND ($2::bigint IS NULL OR uid = $2::bigint)"
               : "SELECT (extract(epoch FROM t) * 1e6)::bigint - 3600000000,"
                 "       (extract(epoch FROM t) * 1e6)::bigint + 1000000"
                 "  FROM (SELECT coalesce(max(start_time), now()) AS t FROM"
                 "         statistics_rollup_arrays WHERE node_id = $1::bigint) last",
        of_run ? 2 : 1, params, error);
    if (r == NULL)
        return FALSE;
    gboolean ok = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0) && !PQgetisnull(r, 0, 1);
    if (ok) {
        *from_us = g_ascii_strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        *to_us = g_ascii_strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    } else {
        g_set_error(error, WEB_ERROR, WEB_ERROR_NOT_FOUND, "%s %s has no processes", "run", id);
    }
    PQclear(r);
    return ok;
}

/* Where the figures come from: "powercap", "estimate"… and whether any
 * of them is an estimate. */
static gboolean describe_source(struct web_request *req, const struct series_metric *sm,
                                JsonObject *out, GError **error)
{
    char *array = parts_array(sm, TRUE);
    const char *params[] = {array};
    PGresult *r = web_db_query(req,
                               "SELECT string_agg(DISTINCT source, ', '),"
                               "       coalesce(bool_or(origin = 'estimated'), false)"
                               "  FROM metrics WHERE name LIKE ANY ($1::text[])",
                               1, params, error);
    g_free(array);
    if (r == NULL)
        return FALSE;
    if (PQgetisnull(r, 0, 0))
        json_object_set_null_member(out, "source");
    else
        json_object_set_string_member(out, "source", PQgetvalue(r, 0, 0));
    json_object_set_boolean_member(out, "estimated", PQgetvalue(r, 0, 1)[0] == 't');
    PQclear(r);
    return TRUE;
}

/* Per bucket over the nodes of one label: the median of their means,
 * the min of their mins and the max of their maxes. */
struct band {
    guint nodes;
    double *median, *lo, *hi;
};

static GBytes *series_csv(const struct series_metric *sm, const double *t, guint points,
                          GPtrArray *lines, gboolean band_only, const struct band *band,
                          guint n_parts, gboolean min_max)
{
    GString *csv = g_string_new(NULL);
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];
#define NUM(buf, v) (isnan(v) ? "" : g_ascii_formatd(buf, sizeof buf, "%.15g", v))
    if (!band_only) {
        g_string_append_printf(csv, "t,label,node_id,hostname,min_%s,mean_%s,max_%s\n", sm->unit,
                               sm->unit, sm->unit);
        for (guint i = 0; i < lines->len; i++) {
            const struct series_line *l = g_ptr_array_index(lines, i);
            for (guint k = 0; k < points; k++)
                g_string_append_printf(csv, "%.6f,%s,%" G_GINT64_FORMAT ",%s,%s,%s,%s\n", t[k],
                                       sm->parts[l->part].label, l->node_id, l->hostname,
                                       min_max ? NUM(a, l->lo[k]) : "", NUM(b, l->mid[k]),
                                       min_max ? NUM(c, l->hi[k]) : "");
        }
    } else {
        g_string_append_printf(csv, "t,label,nodes,median_%s,min_%s,max_%s\n", sm->unit, sm->unit,
                               sm->unit);
        for (guint p = 0; p < n_parts; p++) {
            const struct band *of = &band[p];
            for (guint k = 0; k < points; k++)
                g_string_append_printf(csv, "%.6f,%s,%u,%s,%s,%s\n", t[k], sm->parts[p].label,
                                       of->nodes, NUM(a, of->median[k]), NUM(b, of->lo[k]),
                                       NUM(c, of->hi[k]));
        }
    }
#undef NUM
    gsize n = csv->len;
    return g_bytes_new_take(g_string_free(csv, FALSE), n);
}

static void band_of(guint part, GPtrArray *lines, guint points, struct band *band)
{
    double *med = g_new(double, points), *lo = g_new(double, points), *hi = g_new(double, points);
    double *vals = g_new(double, lines->len);
    guint nodes = 0;
    for (guint i = 0; i < lines->len; i++)
        nodes += ((struct series_line *)g_ptr_array_index(lines, i))->part == part;
    for (guint k = 0; k < points; k++) {
        guint n = 0;
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
        for (guint i = 0; i < lines->len; i++) {
            const struct series_line *l = g_ptr_array_index(lines, i);
            if (l->part != part || isnan(l->mid[k]))
                continue;
            vals[n++] = l->mid[k];
            lo[k] = MIN(lo[k], l->lo[k]);
            hi[k] = MAX(hi[k], l->hi[k]);
        }
        if (n == 0) {
            med[k] = lo[k] = hi[k] = NAN;
            continue;
        }
        qsort(vals, n, sizeof *vals, compare_doubles);
        med[k] = n % 2 == 1 ? vals[n / 2] : (vals[n / 2 - 1] + vals[n / 2]) / 2;
    }
    g_free(vals);
    *band = (struct band){.nodes = nodes, .median = med, .lo = lo, .hi = hi};
}

/* A line's min or max: null where the request left them out
 * (min_max_lines). */
static void append_numbers_or_null(GString *out, const double *values, guint points)
{
    if (values != NULL)
        web_json_append_numbers(out, values, points);
    else
        g_string_append(out, "null");
}

/* The JSON answer: `head`'s members (json-glib's), then the arrays of
 * numbers, written here (web/json_numbers.h says why); the members in
 * the order json-glib wrote them before. */
static GBytes *series_json(const struct series_metric *sm, JsonObject *head, const double *t,
                           guint points, GPtrArray *lines, gboolean banded, const struct band *band,
                           guint n_parts, gboolean min_max)
{
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_set_object(node, head);
    char *text = json_to_string(node, FALSE);
    json_node_unref(node);
    GString *out = g_string_sized_new(64 + (gsize)points * 20 * (1 + 3 * lines->len));
    g_string_append_len(out, text, (gssize)strlen(text) - 1); /* without its closing brace */
    g_free(text);
    g_string_append(out, ",\"t\":");
    web_json_append_numbers(out, t, points);
    g_string_append(out, ",\"series\":[");
    for (guint i = 0; !banded && i < lines->len; i++) {
        const struct series_line *l = g_ptr_array_index(lines, i);
        g_string_append(out, i > 0 ? ",{\"label\":" : "{\"label\":");
        web_json_append_string(out, sm->parts[l->part].label);
        g_string_append_printf(out, ",\"node_id\":%" G_GINT64_FORMAT ",\"hostname\":", l->node_id);
        web_json_append_string(out, l->hostname);
        g_string_append(out, ",\"min\":");
        append_numbers_or_null(out, min_max ? l->lo : NULL, points);
        g_string_append(out, ",\"mean\":");
        web_json_append_numbers(out, l->mid, points);
        g_string_append(out, ",\"max\":");
        append_numbers_or_null(out, min_max ? l->hi : NULL, points);
        g_string_append_c(out, '}');
    }
    g_string_append(out, "],\"band\":");
    if (!banded) {
        g_string_append(out, "null,\"heat\":null}");
        gsize n = out->len;
        return g_bytes_new_take(g_string_free(out, FALSE), n);
    }
    for (guint p = 0; p < n_parts; p++) {
        g_string_append(out, p > 0 ? ",{\"label\":" : "[{\"label\":");
        web_json_append_string(out, sm->parts[p].label);
        g_string_append_printf(out, ",\"nodes\":%u,\"median\":", band[p].nodes);
        web_json_append_numbers(out, band[p].median, points);
        g_string_append(out, ",\"min\":");
        web_json_append_numbers(out, band[p].lo, points);
        g_string_append(out, ",\"max\":");
        web_json_append_numbers(out, band[p].hi, points);
        g_string_append_c(out, '}');
    }
    /* The time × node heat map beside the band: the first label's means. */
    g_string_append(out, "],\"heat\":{\"label\":");
    web_json_append_string(out, sm->parts[0].label);
    g_string_append(out, ",\"nodes\":[");
    gboolean first = TRUE;
    for (guint i = 0; i < lines->len; i++) {
        const struct series_line *l = g_ptr_array_index(lines, i);
        if (l->part != 0)
            continue;
        if (!first)
            g_string_append_c(out, ',');
        web_json_append_string(out, l->hostname);
        first = FALSE;
    }
    g_string_append(out, "],\"values\":[");
    first = TRUE;
    for (guint i = 0; i < lines->len; i++) {
        const struct series_line *l = g_ptr_array_index(lines, i);
        if (l->part != 0)
            continue;
        if (!first)
            g_string_append_c(out, ',');
        web_json_append_numbers(out, l->mid, points);
        first = FALSE;
    }
    g_string_append(out, "]}}");
    gsize n = out->len;
    return g_bytes_new_take(g_string_free(out, FALSE), n);
}

static void line_free(gpointer data)
{
    struct series_line *l = data;
    g_free(l->lo);
    g_free(l->mid);
    g_free(l->hi);
    g_free(l);
}

static gboolean series(struct web_request *req, gboolean of_run, GError **error)
{
    gint64 id = 0, points = 0, from_us = 0, to_us = 0, min_max_lines = 0;
    gboolean from_given = FALSE, to_given = FALSE;
    int metric = 0, per_node = 0, format = 0;
    const char *level_asked = NULL;
    static const char *const metric_names[] = {"power",    "energy", "cpu",     "memory",
                                               "io_bytes", "io_ops", "network", NULL};
    static const char *const per_node_choices[] = {"auto", "yes", "no", NULL};
    static const char *const formats[] = {"json", "csv", NULL};
    G_STATIC_ASSERT(G_N_ELEMENTS(metric_names) == G_N_ELEMENTS(series_metrics) + 1);
    if (!web_path_id(req, req->segments[1], of_run ? "run_id" : "node_id", &id, error) ||
        !web_param_choice(req, "metric", metric_names, -1, &metric, error) ||
        !web_param_int(req, "points", 600, 1, req->settings->points_max, &points, error) ||
        !web_param_time(req, "from", &from_us, &from_given, error) ||
        !web_param_time(req, "to", &to_us, &to_given, error) ||
        (of_run && !web_param_choice(req, "per_node", per_node_choices, 0, &per_node, error)) ||
        !web_param_choice(req, "format", formats, 0, &format, error) ||
        !web_param_int(req, "min_max_lines", G_MAXINT32, 0, G_MAXINT32, &min_max_lines, error) ||
        !web_param_text(req, "level", 16, &level_asked, error) || !web_params_done(req, error))
        return FALSE;
    if (metric < 0) {
        web_bad_parameter(req, error, "metric",
                          "missing: one of power, energy, cpu, memory, io_bytes, io_ops, network");
        return FALSE;
    }
    const struct series_metric *sm = &series_metrics[metric];
    char id_text[24];
    g_snprintf(id_text, sizeof id_text, "%" G_GINT64_FORMAT, id);
    if (of_run && !web_api_run_visible(req, id, id_text, error))
        return FALSE;
    PGresult *nodes = query_nodes(req, of_run, id_text, error);
    if (nodes == NULL)
        return FALSE;
    if (!of_run && PQntuples(nodes) == 0) {
        PQclear(nodes);
        g_set_error(error, WEB_ERROR, WEB_ERROR_NOT_FOUND, "node %s does not exist", id_text);
        return FALSE;
    }
    gint64 default_from = 0, default_to = 0;
    if ((!from_given || !to_given) &&
        !default_interval(req, of_run, id_text, &default_from, &default_to, error)) {
        PQclear(nodes);
        return FALSE;
    }
    if (!from_given)
        from_us = default_from;
    if (!to_given)
        to_us = default_to;
    if (to_us <= from_us) {
        PQclear(nodes);
        web_bad_parameter(req, error, to_given ? "to" : "from",
                          "the interval is empty: `to` must come after `from`");
        return FALSE;
    }

    /* The query's arrays, as PostgreSQL array literals of fixed text. */
    GString *node_ids = g_string_new("{");
    for (int i = 0; i < PQntuples(nodes); i++)
        g_string_append_printf(node_ids, "%s%s", i > 0 ? "," : "", PQgetvalue(nodes, i, 0));
    g_string_append_c(node_ids, '}');
    guint n_parts = sm->parts[1].label != NULL ? 2 : 1;
    char *labels = parts_array(sm, FALSE), *patterns = parts_array(sm, TRUE);
    char from_text[24], to_text[24], points_text[24];
    g_snprintf(from_text, sizeof from_text, "%" G_GINT64_FORMAT, from_us);
    g_snprintf(to_text, sizeof to_text, "%" G_GINT64_FORMAT, to_us);
    g_snprintf(points_text, sizeof points_text, "%" G_GINT64_FORMAT, points);
    /* One line per node and label, every bucket NAN until a row fills it. */
    guint n = (guint)points;
    GPtrArray *lines = g_ptr_array_new_with_free_func(line_free);
    /* Node id → its place in `nodes`: its lines are n_parts from there on. */
    GHashTable *node_index = g_hash_table_new(g_int64_hash, g_int64_equal);
    gint64 *node_keys = g_new(gint64, PQntuples(nodes));
    for (int i = 0; i < PQntuples(nodes); i++) {
        node_keys[i] = g_ascii_strtoll(PQgetvalue(nodes, i, 0), NULL, 10);
        g_hash_table_insert(node_index, &node_keys[i], GINT_TO_POINTER(i + 1));
        for (guint p = 0; p < n_parts; p++) {
            struct series_line *l = g_new0(struct series_line, 1);
            l->node_id = node_keys[i];
            l->hostname = PQgetvalue(nodes, i, 1);
            l->part = p;
            l->lo = g_new(double, n);
            l->mid = g_new(double, n);
            l->hi = g_new(double, n);
            for (guint k = 0; k < n; k++)
                l->lo[k] = l->mid[k] = l->hi[k] = NAN;
            g_ptr_array_add(lines, l);
        }
    }

    gboolean one = FALSE, filled = FALSE;
    PGresult *r = NULL;
    GArray *levels = g_array_new(FALSE, FALSE, sizeof(struct series_level));
    gint64 level_s = 1;
    if (one_metric_per_label(req, labels, patterns, &one, levels, error) &&
        choose_level(req, level_asked, levels, (double)(to_us - from_us) / 1e6 / (double)points,
                     &level_s, error)) {
        /* The level's part: its slots inside the interval, up to where it
         * is built; none, and it is level 1's query. */
        gint64 slot_us = level_s * G_GINT64_CONSTANT(1000000), served_from = 0, served_to = 0;
        for (guint i = 0; level_s > 1 && i < levels->len; i++) {
            const struct series_level *l = &g_array_index(levels, struct series_level, i);
            if (l->level_s != level_s || l->built_until_us == G_MININT64)
                continue;
            served_from = (from_us / slot_us + (from_us % slot_us > 0)) * slot_us;
            served_to =
                MIN(to_us / slot_us - (to_us % slot_us < 0), l->built_until_us / slot_us) * slot_us;
        }
        if (served_to <= served_from)
            level_s = 1;
        if (level_s > 1) {
            const char *part_labels[G_N_ELEMENTS(sm->parts)];
            for (guint p = 0; p < n_parts; p++)
                part_labels[p] = sm->parts[p].label;
            struct series_level_ask ask = {
                .how = sm->how,
                .node_ids = node_ids->str,
                .labels = labels,
                .patterns = patterns,
                .part_labels = part_labels,
                .n_parts = n_parts,
                .from_us = from_us,
                .to_us = to_us,
                .points = n,
                .level_s = level_s,
                .served_from_us = served_from,
                .served_to_us = served_to,
            };
            filled = web_series_level_fill(req, &ask, lines, node_index, error);
        } else {
            const char *params[] = {node_ids->str, labels,  patterns,
                                    from_text,     to_text, points_text};
            char *sql = series_sql(sm->how, one);
            r = web_db_query(req, sql, G_N_ELEMENTS(params), params, error);
            g_free(sql);
        }
    }
    g_array_unref(levels);
    g_string_free(node_ids, TRUE);
    g_free(labels);
    g_free(patterns);
    if (r == NULL && !filled) {
        g_ptr_array_unref(lines);
        g_hash_table_unref(node_index);
        g_free(node_keys);
        PQclear(nodes);
        return FALSE;
    }
    for (int row = 0; r != NULL && row < PQntuples(r); row++) {
        gint64 node = g_ascii_strtoll(PQgetvalue(r, row, 0), NULL, 10);
        const char *label = PQgetvalue(r, row, 1);
        gint64 bucket = g_ascii_strtoll(PQgetvalue(r, row, 2), NULL, 10);
        int place = GPOINTER_TO_INT(g_hash_table_lookup(node_index, &node)) - 1;
        if (bucket < 0 || bucket >= (gint64)n || place < 0)
            continue;
        for (guint p = 0; p < n_parts; p++) {
            if (strcmp(sm->parts[p].label, label) != 0)
                continue;
            struct series_line *l = g_ptr_array_index(lines, (guint)place * n_parts + p);
            l->lo[bucket] =
                PQgetisnull(r, row, 3) ? NAN : g_ascii_strtod(PQgetvalue(r, row, 3), NULL);
            l->mid[bucket] =
                PQgetisnull(r, row, 4) ? NAN : g_ascii_strtod(PQgetvalue(r, row, 4), NULL);
            l->hi[bucket] =
                PQgetisnull(r, row, 5) ? NAN : g_ascii_strtod(PQgetvalue(r, row, 5), NULL);
            break;
        }
    }
    if (r != NULL)
        PQclear(r);

    double bucket_s = (double)(to_us - from_us) / 1e6 / (double)n;
    double *t = g_new(double, n);
    for (guint k = 0; k < n; k++)
        t[k] = (double)from_us / 1e6 + bucket_s * k;
    gboolean banded =
        of_run && (per_node == 2 ||
                   (per_node == 0 && (guint)PQntuples(nodes) > req->settings->per_node_lines_max));
    struct band band[G_N_ELEMENTS(sm->parts)] = {{0}};
    for (guint p = 0; banded && p < n_parts; p++)
        band_of(p, lines, n, &band[p]);

    /* Each line's min and max only for at most min_max_lines lines: a page
     * drawing more lines than it draws envelopes for needs their means alone
     * (a third of the numbers). */
    gboolean min_max = banded || lines->len <= (guint)min_max_lines;
    gboolean ok = TRUE;
    if (format == 1) {
        char *filename =
            g_strdup_printf("%s-%s-%s.csv", of_run ? "run" : "node", id_text, sm->name);
        web_answer_bytes(req, series_csv(sm, t, n, lines, banded, band, n_parts, min_max),
                         "text/csv; charset=utf-8", filename);
        g_free(filename);
    } else {
        JsonObject *head = json_object_new();
        json_object_set_string_member(head, "metric", sm->name);
        json_object_set_string_member(head, "unit", sm->unit);
        ok = describe_source(req, sm, head, error);
        web_json_set_span(head, from_us, to_us);
        json_object_set_double_member(head, "bucket_s", bucket_s);
        /* The level read (1: the 1 s roll-ups alone). */
        json_object_set_int_member(head, "level_s", level_s);
        json_object_set_int_member(head, "points", n);
        if (ok)
            web_answer_bytes(req,
                             series_json(sm, head, t, n, lines, banded, band, n_parts, min_max),
                             "application/json; charset=utf-8", NULL);
        json_object_unref(head);
    }
    for (guint p = 0; p < n_parts; p++) {
        g_free(band[p].median);
        g_free(band[p].lo);
        g_free(band[p].hi);
    }
    g_free(t);
    g_ptr_array_unref(lines);
    g_hash_table_unref(node_index);
    g_free(node_keys);
    PQclear(nodes);
    return ok;
}

gboolean web_api_run_series(struct web_request *req, GError **error)
{
    return series(req, TRUE, error);
}

gboolean web_api_node_series(struct web_request *req, GError **error)
{
    return series(req, FALSE, error);
}
