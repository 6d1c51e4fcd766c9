/* fuzz-config-seeds DIR: writes configurations to DIR/seed-*.conf for
 * fuzz-config: every declared key at its default as vigil config check
 * writes it, plugin sections, a drop-in after a NUL byte, and files with
 * problems. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "vigil/config.h"
#include "vigil/schema.h"
#include "fuzz_seeds.h"

static void write_seed(const char *dir, const char *name, const char *text, size_t size)
{
    char *file = g_strconcat(name, ".conf", NULL);
    write_seed_file(dir, file, text, size);
    g_free(file);
}

int main(int argc, char **argv)
{
    const char *dir = seeds_dir(argc, argv);
    vigil_config *config = vigil_config_new();
    GError *error = NULL;
    if (!vigil_schema_declare(config, &error))
        g_error("%s", error->message);
    char *defaults = vigil_config_to_string(config);
    write_seed(dir, "defaults", defaults, strlen(defaults));
    g_free(defaults);
    vigil_config_free(config);

    static const char plugins[] = "[daemon]\ntick_ms = 250\nproviders = procstat;energy\n"
                                  "[adpi.drift]\nenabled = no\nwindow = 30\nthreshold = 0.25\n"
                                  "mode = p99\nmetrics = process.cpu_s;node.energy_j\n"
                                  "[provider.energy]\nenabled = on\n";
    write_seed(dir, "plugins", plugins, sizeof plugins - 1);
    /* A main file and, after the NUL, a drop-in that overrides it. */
    static const char drop_in[] = "[log]\nlevel = debug\n[capture]\nmode = all\n\0"
                                  "[log]\nlevel = warning\n[warehouse]\n"
                                  "conninfo = host=db password='s3cret'\n";
    write_seed(dir, "drop-in", drop_in, sizeof drop_in - 1);
    static const char problems[] = "[deamon]\ntick = 5\n[daemon]\ntick_ms = -1\nsocket\n"
                                   "[capture]\nmode = everything\npre_cycles = 1e99\n"
                                   "[log]\nlevel = \"info\"\\x\n[other.thing]\nk=v\n";
    write_seed(dir, "problems", problems, sizeof problems - 1);
    return 0;
}
