/* vigil-web — the handlers of /api/v1/ (docs/web-api.md), one file per
 * group: api_runs.c, api_run.c, api_series.c, api_windows.c,
 * api_anomalies.c, api_nodes.c, api_thresholds.c,
 * api_thresholds_trials.c. Each reads its
 * parameters, calls web_params_done, queries, and answers. */
#ifndef VIGIL_WEB_API_H
#define VIGIL_WEB_API_H

#include "request.h"

typedef gboolean (*web_api_handler)(struct web_request *req, GError **error);

/* The handler for `segments` (the path after /api/v1/), or NULL. */
web_api_handler web_api_route(char **segments);

gboolean web_api_me(struct web_request *req, GError **error);
gboolean web_api_runs(struct web_request *req, GError **error);
gboolean web_api_run(struct web_request *req, GError **error);
gboolean web_api_run_ranks(struct web_request *req, GError **error);
gboolean web_api_run_series(struct web_request *req, GError **error);
gboolean web_api_node_series(struct web_request *req, GError **error);
gboolean web_api_run_windows(struct web_request *req, GError **error);
gboolean web_api_window_activities(struct web_request *req, GError **error);
gboolean web_api_run_heatmap(struct web_request *req, GError **error);
gboolean web_api_run_files(struct web_request *req, GError **error); /* api_run_files.c */
gboolean web_api_anomalies(struct web_request *req, GError **error);
gboolean web_api_nodes(struct web_request *req, GError **error);
gboolean web_api_node(struct web_request *req, GError **error);
gboolean web_api_thresholds(struct web_request *req, GError **error);
/* `vigil tune --store`'s trials (api_thresholds_trials.c). */
gboolean web_api_tune_trials(struct web_request *req, GError **error);
gboolean web_api_tune_trial(struct web_request *req, GError **error);
/* Declares every ADPI's and reasoner's section in the config (a
 * vigil_config, with its vigil_plugin_registry), before serving. */
gboolean web_thresholds_prepare(void *config, void *registry, GError **error);

/* Shared by the handlers (api_runs.c): the run `run_id` if the viewer may
 * see it, as the RUN object of the API; 404 otherwise. */
JsonObject *web_api_run_row(struct web_request *req, gint64 run_id, GError **error);
/* RUN objects (api_runs.c). web_api_run_base_sql selects runs `r` with
 * their totals, $1 the viewer's uid (NULL for an admin); callers add WHERE
 * terms, ORDER BY and LIMIT, and web_api_run_sql wraps that (`inner`) to
 * add each row's anomalies and captures, ordered by `outer_order` on its
 * alias `b` (g_free it). web_api_runs_from_result makes the first `rows`
 * rows RUN objects. */
/* Whether the viewer may see run `run_id` (404 otherwise); its id as text
 * in id_text. Cheaper than web_api_run_row, for the run's sub-resources.
 * Of a run they may see, a non-admin sees only their own uid's processes:
 * every query of a run's processes filters by web_viewer_uid_param too. */
gboolean web_api_run_visible(struct web_request *req, gint64 run_id, char id_text[24],
                             GError **error);
extern const char web_api_run_base_sql[];
/* *mixed: the viewer is no admin and run `run_id` holds another uid's
 * process (stored before issue 30 kept users apart): figures the
 * warehouse sums over the whole run (its files, its energy across nodes)
 * would show theirs too. */
gboolean web_api_run_mixed(struct web_request *req, const char *run_id, gboolean *mixed,
                           GError **error);
/* The run's energy across its nodes, read once (api_run_energy.c): both
 * NULL when the run has no figure or is mixed. */
struct web_run_energy {
    PGresult *nodes; /* vigil_cli_run_energy_nodes_sql's rows: each node's, with the totals */
};
gboolean web_api_run_read_energy(struct web_request *req, const char *run_id,
                                 struct web_run_energy *out, GError **error);
void web_api_run_energy_clear(struct web_run_energy *energy);
/* As `vigil report RUN` does: the run's energy across its nodes into its
 * stored report when that has none (struct vigil_report, vigil/report.h). */
struct vigil_report;
void web_api_run_fill_job_energy(const struct web_run_energy *energy, struct vigil_report *report);
/* As "job_energy" of `out`, null when the run has none. */
void web_api_run_add_job_energy(const struct web_run_energy *energy, JsonObject *out);
char *web_api_run_sql(const char *inner, const char *outer_order);
JsonArray *web_api_runs_from_result(const PGresult *r, int rows);

#endif
