/* vigil — likwid's marker API: a program annotated for likwid
 * (LIKWID_MARKER_START("x") / LIKWID_MARKER_STOP("x"), compiled with
 * -DLIKWID_PERFMON and linked with -llikwid) gets the same regions in
 * vigil, unchanged.
 *
 * The wrappers record the region and forward to liblikwid's function, so
 * that likwid-perfctr -m still measures it. likwid's own work inside its
 * call (it reads counters, may write files) runs under the in-call guard:
 * it is not the program's I/O, and not in the region's figures: the region
 * begins after likwid's start and ends before likwid's stop. likwid.h is
 * not needed to build this: the two prototypes are likwid 5's. */
#include "regions.h"

PRELOAD_EXPORT int likwid_markerStartRegion(const char *regionTag);
PRELOAD_EXPORT int likwid_markerStopRegion(const char *regionTag);

PRELOAD_REAL_SLOT(likwid_markerStartRegion);
PRELOAD_REAL_SLOT(likwid_markerStopRegion);

/* The real function's result; -EFAULT (likwid's "not set up") when there is
 * none to call, which only a program defining the symbol in a library of
 * its own loaded before ours could bring about. */
static int forward(int (*real)(const char *), const char *tag)
{
    if (real == NULL)
        return -EFAULT;
    int outer = preload_thread.in_call;
    preload_thread.in_call = 1;
    int ret = real(tag);
    preload_thread.in_call = outer;
    return ret;
}

int likwid_markerStartRegion(const char *regionTag)
{
    int ret = forward(REAL(likwid_markerStartRegion), regionTag);
    preload_region_begin(regionTag);
    return ret;
}

int likwid_markerStopRegion(const char *regionTag)
{
    preload_region_end(regionTag);
    return forward(REAL(likwid_markerStopRegion), regionTag);
}
