/* vigil — code regions in libvigil-preload.so (regions.c): the API of
 * vigil/vigil.h and likwid's markers (wrap_likwid.c) end here. Private to
 * the library. */
#ifndef VIGIL_PRELOAD_REGIONS_H
#define VIGIL_PRELOAD_REGIONS_H

#include "preload.h"
#include "vigil/report.h"

/* A region begun or ended by the calling thread (see vigil/vigil.h). */
void preload_region_begin(const char *name) PRELOAD_HIDDEN;
void preload_region_end(const char *name) PRELOAD_HIDDEN;

/* At set-up, before any region call can count: which operations read and
 * write (the snapshot sums only those). */
void preload_regions_init(void) PRELOAD_HIDDEN;
/* In a forked child: the parent's figures are not the child's, and the
 * forking thread's open regions began in the parent (they end uncounted). */
void preload_regions_reset_after_fork(void) PRELOAD_HIDDEN;

/* The regions' figures now, into r->regions (static storage, names in the
 * names table) and r->region_notes. */
void preload_regions_report(struct vigil_report *r) PRELOAD_HIDDEN;

#endif
