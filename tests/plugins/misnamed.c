/* A plugin whose descriptor disagrees with its file name. */
#include "vigil/plugin.h"

static void *misnamed_create(const struct vigil_plugin_context *ctx, GError **error)
{
    (void)ctx;
    (void)error;
    return NULL;
}

static void misnamed_destroy(void *instance)
{
    (void)instance;
}

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_ADPI,
    .name = "something-else",
    .create = misnamed_create,
    .destroy = misnamed_destroy,
};
