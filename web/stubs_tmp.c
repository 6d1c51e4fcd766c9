#include "api.h"
#define STUB(f)                                                                                    \
    gboolean f(struct web_request *req, GError **error)                                            \
    {                                                                                              \
        (void)req;                                                                                 \
        g_set_error(error, WEB_ERROR, WEB_ERROR_NOT_FOUND, "not yet");                             \
        return FALSE;                                                                              \
    }
STUB(web_api_run)
STUB(web_api_run_series) STUB(web_api_node_series) STUB(web_api_run_windows)
    STUB(web_api_window_activities) STUB(web_api_run_heatmap) STUB(web_api_anomalies)
        STUB(web_api_nodes) STUB(web_api_node) STUB(web_api_thresholds)
