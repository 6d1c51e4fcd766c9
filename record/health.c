/* vigil — names of health states and reasoner levels. */
#include <stddef.h>
#include <string.h>

#include "name_table.h"
#include "vigil/health.h"

static const char *const health_names[VIGIL_HEALTH_COUNT + 1] = {
    [VIGIL_HEALTH_ABNORMAL_GOOD] = "ABNORMAL_GOOD",
    [VIGIL_HEALTH_GOOD] = "GOOD",
    [VIGIL_HEALTH_OK] = "OK",
    [VIGIL_HEALTH_BAD] = "BAD",
    [VIGIL_HEALTH_ABNORMAL_BAD] = "ABNORMAL_BAD",
    [VIGIL_HEALTH_ABNORMAL_OTHER] = "ABNORMAL_OTHER",
};

static const char *const level_names[VIGIL_LEVEL_COUNT + 1] = {
    [VIGIL_LEVEL_PROCESS] = "process",
    [VIGIL_LEVEL_NODE] = "node",
    [VIGIL_LEVEL_SYSTEM] = "system",
};

const char *vigil_health_name(unsigned health)
{
    return health <= VIGIL_HEALTH_COUNT ? health_names[health] : NULL;
}

unsigned vigil_health_from_name(const char *name)
{
    return name_table_find(health_names, VIGIL_HEALTH_COUNT, name);
}

bool vigil_health_is_abnormal(unsigned health)
{
    return health == VIGIL_HEALTH_ABNORMAL_GOOD || health == VIGIL_HEALTH_ABNORMAL_BAD ||
           health == VIGIL_HEALTH_ABNORMAL_OTHER;
}

const char *vigil_level_name(unsigned level)
{
    return level <= VIGIL_LEVEL_COUNT ? level_names[level] : NULL;
}
