/* vigil — libvigil-region.so: the region API (vigil/vigil.h) as empty
 * functions, for a program that runs without vigil.
 *
 * A program annotated with regions links this library, and nothing else
 * of vigil. Under `vigil run`, libvigil-preload.so comes first in the
 * lookup order (LD_PRELOAD) and its functions of the same names are the
 * ones called: these are never reached. The library has no dependency and
 * no state, so that linking it changes nothing else about a program. */
#include "vigil/vigil.h"

void vigil_region_begin(const char *name)
{
    (void)name;
}

void vigil_region_end(const char *name)
{
    (void)name;
}
