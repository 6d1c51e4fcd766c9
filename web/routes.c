/* vigil-web — which handler answers which path under /api/v1/. */
#include <string.h>

#include "api.h"

/* "#" stands for one segment (an id, checked by the handler). */
static const struct {
    const char *pattern;
    web_api_handler handler;
} routes[] = {
    {"me", web_api_me},
    {"runs", web_api_runs},
    {"runs/#", web_api_run},
    {"runs/#/series", web_api_run_series},
    {"runs/#/windows", web_api_run_windows},
    {"runs/#/heatmap", web_api_run_heatmap},
    {"runs/#/files", web_api_run_files},
    {"runs/#/ranks", web_api_run_ranks},
    {"windows/#/activities", web_api_window_activities},
    {"anomalies", web_api_anomalies},
    {"nodes", web_api_nodes},
    {"nodes/#", web_api_node},
    {"nodes/#/series", web_api_node_series},
    {"thresholds", web_api_thresholds},
    {"tune-trials", web_api_tune_trials},
    {"tune-trials/#", web_api_tune_trial},
};

web_api_handler web_api_route(char **segments)
{
    for (gsize i = 0; i < G_N_ELEMENTS(routes); i++) {
        char **pattern = g_strsplit(routes[i].pattern, "/", -1);
        gboolean match = TRUE;
        guint n = 0;
        for (; pattern[n] != NULL && match; n++)
            match = segments[n] != NULL &&
                    (strcmp(pattern[n], "#") == 0 ? segments[n][0] != '\0'
                                                  : strcmp(pattern[n], segments[n]) == 0);
        match = match && segments[n] == NULL;
        g_strfreev(pattern);
        if (match)
            return routes[i].handler;
    }
    return NULL;
}

gboolean web_api_me(struct web_request *req, GError **error)
{
    if (!web_params_done(req, error))
        return FALSE;
    JsonObject *o = json_object_new();
    if (req->viewer.user != NULL) {
        json_object_set_string_member(o, "user", req->viewer.user);
        json_object_set_int_member(o, "uid", req->viewer.uid);
    } else {
        json_object_set_null_member(o, "user");
        json_object_set_null_member(o, "uid");
    }
    json_object_set_boolean_member(o, "admin", req->viewer.admin);
    json_object_set_string_member(o, "auth",
                                  req->settings->auth == WEB_AUTH_NONE ? "none" : "remote-user");
    web_answer_json(req, json_node_init_object(json_node_alloc(), o));
    json_object_unref(o);
    return TRUE;
}
