/* vigil — the [warehouse] section: how vigil-txd and `vigil db` reach
 * PostgreSQL. */
#include "vigil/schema.h"

const struct vigil_config_key vigil_warehouse_config_keys[] = {
    {.section = "warehouse",
     .name = "conninfo",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the libpq connection string (\"host=db1 dbname=vigil user=vigil\" or a "
                    "postgresql:// URI); empty: libpq's PGHOST, PGSERVICE… variables. Keep a "
                    "password in ~/.pgpass, or make this file readable only by vigil",
     .redact_password = true},
    {.section = "warehouse",
     .name = "migrate",
     .type = VIGIL_CONFIG_BOOL,
     .default_value = "false",
     .description = "whether vigil-txd applies the schema migrations it was built with when it "
                    "starts; otherwise it refuses a database whose schema is older (run "
                    "`vigil db migrate`)"},
};
const size_t vigil_warehouse_config_key_count =
    sizeof vigil_warehouse_config_keys / sizeof vigil_warehouse_config_keys[0];
