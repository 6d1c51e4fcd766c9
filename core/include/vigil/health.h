/* vigil — health states and reasoner levels, shared by the anomaly plugins,
 * the reasoners, the wire format and the warehouse. The values are stable. */
#ifndef VIGIL_HEALTH_H
#define VIGIL_HEALTH_H

#include <stdbool.h>

/* The SIOX health states, from best to worst with OTHER last. */
enum vigil_health {
    VIGIL_HEALTH_ABNORMAL_GOOD = 1,
    VIGIL_HEALTH_GOOD = 2,
    VIGIL_HEALTH_OK = 3,
    VIGIL_HEALTH_BAD = 4,
    VIGIL_HEALTH_ABNORMAL_BAD = 5,
    VIGIL_HEALTH_ABNORMAL_OTHER = 6,
};
#define VIGIL_HEALTH_COUNT 6

/* Where a reasoner sits in the tree. */
enum vigil_level {
    VIGIL_LEVEL_PROCESS = 1,
    VIGIL_LEVEL_NODE = 2,
    VIGIL_LEVEL_SYSTEM = 3,
};
#define VIGIL_LEVEL_COUNT 3

const char *vigil_health_name(unsigned health);    /* "ABNORMAL_BAD"; NULL if unknown */
unsigned vigil_health_from_name(const char *name); /* 0 if unknown */
bool vigil_health_is_abnormal(unsigned health);
const char *vigil_level_name(unsigned level); /* "process"; NULL if unknown */

#endif
