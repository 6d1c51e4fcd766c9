/* A shared module that is not a vigil plugin: no descriptor symbol. */
#include <gmodule.h>

G_MODULE_EXPORT int not_a_vigil_plugin(void);

int not_a_vigil_plugin(void)
{
    return 42;
}
