/* fuzz-report-seeds DIR: writes reports in their JSON form, as the preload
 * library writes them, to DIR/seed-N.json for fuzz-report: every figure set
 * of the tests (tests/support/test_report_figures.c), a plain run, one
 * without vigild, an MPI job's with its ranks, odd bytes in strings… */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_json.h"
#include "test_report_figures.h"
#include "fuzz_seeds.h"

int main(int argc, char **argv)
{
    const char *dir = seeds_dir(argc, argv);
    for (size_t i = 0; i < TEST_REPORT_FIGURE_SETS; i++) {
        static struct vigil_report r;
        test_report_figure_sets[i](&r);
        char *json = vigil_cli_report_json(&r);
        char *name = g_strdup_printf("%zu.json", i);
        write_seed_file(dir, name, json, strlen(json));
        g_free(name);
        g_free(json);
    }
    return 0;
}
