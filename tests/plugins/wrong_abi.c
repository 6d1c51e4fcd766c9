/* A plugin built against a future plugin ABI: the registry must refuse it
 * without calling anything in it. */
#include "vigil/plugin.h"

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION + 1000,
    .kind = VIGIL_PLUGIN_PROVIDER,
    .name = "wrong-abi",
};
