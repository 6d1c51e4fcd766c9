/* vigil — the API for programs: code regions.
 *
 *     #include <vigil/vigil.h>
 *
 *     vigil_region_begin("solver");
 *     solve();
 *     vigil_region_end("solver");
 *
 * Compile and link with `pkg-config --cflags --libs vigil`. The library
 * this links (libvigil-region.so) does nothing: a program runs as before
 * without vigil, at the cost of a call to an empty function. Under `vigil
 * run` (or with libvigil-preload.so in LD_PRELOAD) the preloaded library's
 * functions of the same names take their place, and the end-of-run report
 * gives, for each region: how often it was entered, the I/O calls and
 * bytes, the wall and CPU time and the energy spent inside it. A region's
 * figures include those of the regions nested in it.
 *
 * Regions nest, and each thread has its own: begin and end a region on the
 * same thread. An end must name the innermost open region; one that does
 * not is counted and reported, never fatal. `name` is copied (the first 63
 * bytes); a process tracks at most 64 names, and calls with more are
 * counted as dropped. Safe to call from any thread; not from signal
 * handlers (such calls are dropped and counted). */
#ifndef VIGIL_VIGIL_H
#define VIGIL_VIGIL_H

#ifdef __cplusplus
extern "C" {
#endif

#define VIGIL_REGION_API_VERSION 1

void vigil_region_begin(const char *name);
void vigil_region_end(const char *name);

#ifdef __cplusplus
}
#endif

#endif
