/* vigil — the warehouse's migrations as built into the program: the text of
 * warehouse/migrations/NNNN_name.sql, embedded by warehouse/embed_migrations.py at build time
 * so that an installed program applies exactly what it was built with. */
#ifndef VIGIL_WAREHOUSE_MIGRATIONS_H
#define VIGIL_WAREHOUSE_MIGRATIONS_H

#include <stddef.h>

struct vigil_warehouse_migration {
    unsigned version;   /* NNNN: the schema version it brings the database to */
    const char *name;   /* "0001_warehouse" */
    const char *sha256; /* of the file's bytes, lowercase hex */
    const char *sql;
};

/* In version order, numbered 1, 2, 3… without gaps (the script checks). */
extern const struct vigil_warehouse_migration vigil_warehouse_migrations[];
extern const size_t vigil_warehouse_migration_count;

#endif
