/* fuzz-report-seeds DIR: writes reports in their JSON form, as the preload
 * library writes them, to DIR/seed-N.json for fuzz-report: every figure set
 * of the tests (tests/support/test_report_figures.c), a plain run, one
 * without vigild, an MPI job's with its ranks, odd bytes in strings… */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_json.h"
#include "test_report_figures.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < TEST_REPORT_FIGURE_SETS; i++) {
        static struct vigil_report r;
        test_report_figure_sets[i](&r);
        char *json = vigil_cli_report_json(&r);
        char *path = g_strdup_printf("%s/seed-%zu.json", argv[1], i);
        GError *error = NULL;
        if (!g_file_set_contents(path, json, -1, &error))
            g_error("%s", error->message);
        g_free(path);
        g_free(json);
    }
    return 0;
}
