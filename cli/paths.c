/* vigil — where the parts that go with the `vigil` program are: the
 * preload library and the plugins, found next to the program itself, in
 * the build tree (build/cli/vigil beside build/instrument/ and
 * build/plugins/) or in its install prefix (bin/ beside LIBDIR/vigil/),
 * so that a moved prefix and an uninstalled build both work. */
#include "commands.h"
#include "vigil-build.h"
#include "vigil/plugin.h"

char *vigil_cli_plugin_dir(void)
{
    return vigil_plugin_default_directory();
}

char *vigil_cli_preload_library(GError **error)
{
    const char *from_env = g_getenv("VIGIL_PRELOAD_LIB");
    if (from_env != NULL && from_env[0] != '\0')
        return g_strdup(from_env);
    char *dir = vigil_program_directory();
    char *candidates[] = {
        g_build_filename(dir, "..", "instrument", "libvigil-preload.so", NULL),
        g_build_filename(dir, VIGIL_PRELOAD_FROM_BINDIR, NULL),
    };
    char *found = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(candidates); i++) {
        if (found == NULL && g_file_test(candidates[i], G_FILE_TEST_IS_REGULAR))
            found = g_canonicalize_filename(candidates[i], NULL);
    }
    if (found == NULL)
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                    "cannot find libvigil-preload.so (looked for %s and %s); set "
                    "VIGIL_PRELOAD_LIB to its path",
                    candidates[0], candidates[1]);
    for (size_t i = 0; i < G_N_ELEMENTS(candidates); i++)
        g_free(candidates[i]);
    g_free(dir);
    return found;
}
