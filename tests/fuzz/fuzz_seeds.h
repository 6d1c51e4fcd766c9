/* What the seed programs share: each runs as `PROGRAM DIR` and writes its
 * seed corpus there, DIR/seed-NAME a seed; any failure ends it, saying
 * why, with a status that fails the fuzz run. */
#ifndef VIGIL_FUZZ_SEEDS_H
#define VIGIL_FUZZ_SEEDS_H

#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

/* DIR from the command line; without it, the usage and status 2. */
static inline const char *seeds_dir(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        exit(2);
    }
    return argv[1];
}

/* Writes the `size` bytes at `data` to DIR/seed-NAME. */
static inline void write_seed_file(const char *dir, const char *name, const void *data, size_t size)
{
    char *path = g_strdup_printf("%s/seed-%s", dir, name);
    GError *error = NULL;
    if (!g_file_set_contents(path, data, (gssize)size, &error)) {
        fprintf(stderr, "writing %s: %s\n", path, error->message);
        exit(1);
    }
    g_free(path);
}

#endif
