/* vigil — the built-in parts' configuration keys, in one place. */
#include "vigil/log.h"
#include "vigil/schema.h"

gboolean vigil_schema_declare(vigil_config *config, GError **error)
{
    return vigil_config_declare(config, NULL, vigil_log_config_keys, vigil_log_config_key_count,
                                error) &&
           vigil_config_declare(config, NULL, vigil_preload_config_keys,
                                vigil_preload_config_key_count, error) &&
           vigil_config_declare(config, NULL, vigil_daemon_config_keys,
                                vigil_daemon_config_key_count, error) &&
           vigil_config_declare(config, NULL, vigil_capture_config_keys,
                                vigil_capture_config_key_count, error) &&
           vigil_config_declare(config, NULL, vigil_uplink_config_keys,
                                vigil_uplink_config_key_count, error) &&
           vigil_config_declare(config, NULL, vigil_warehouse_config_keys,
                                vigil_warehouse_config_key_count, error) &&
           vigil_config_declare(config, NULL, vigil_txd_config_keys, vigil_txd_config_key_count,
                                error) &&
           vigil_config_declare(config, NULL, vigil_web_config_keys, vigil_web_config_key_count,
                                error) &&
           vigil_config_declare(config, NULL, vigil_advise_config_keys,
                                vigil_advise_config_key_count, error) &&
           vigil_config_declare(config, NULL, vigil_metrics_config_keys,
                                vigil_metrics_config_key_count, error);
}
