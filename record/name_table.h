/* vigil — reverse lookup in the small tables that map stable ids to names
 * (layers, health states, plugin kinds, log levels). Private to the core. */
#ifndef VIGIL_NAME_TABLE_H
#define VIGIL_NAME_TABLE_H

#include <stddef.h>
#include <string.h>

/* `names` is indexed by id, entry 0 unused; returns the id of `name`, or 0. */
static inline unsigned name_table_find(const char *const *names, unsigned last_id, const char *name)
{
    for (unsigned id = 1; name != NULL && id <= last_id; id++)
        if (names[id] != NULL && strcmp(names[id], name) == 0)
            return id;
    return 0;
}

#endif
